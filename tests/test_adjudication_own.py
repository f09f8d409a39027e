"""Issue 23 §4: nobody adjudicates a disagreement they graded themselves.

A researcher who is one of an item's graders (the item is assigned to them) asked to settle it: the library
refuses with a clear message and stores nothing, the queue does not offer it, and the Adjudicate page leaves
it out and says how many it left out. Items the researcher does not grade stay theirs to settle.
"""

import pytest

from medeval.accounts import auth
from medeval.annotation import adjudication as adj
from medeval.annotation import campaigns as cp
from medeval.core.errors import MedevalError
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.store.db import connect
from tests.conftest import copy_db

PW = "correct horse battery"
GRADERS = ["res", "dr.li", "bb"]  # a researcher who grades, and two annotators (a reason in traditional Chinese)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """8 items, each graded by 2 of the 3 graders (0 by the first, 2 by the second: every item disagrees)."""
    from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, write

    folder = tmp_path_factory.mktemp("own")
    files = {"kb": write(folder / "kb.csv", KB_CSV), "responses": write(folder / "responses.csv", RESP_CSV),
             "models": write(folder / "models.csv", MODELS_CSV)}
    with connect(folder / "own.db") as db:
        import_files(db, **files)
        score_db(db, metrics=["bleu1", "exact_match"])
        auth.add_user(db, "res", PW, "researcher")
        auth.add_user(db, "dr.li", PW, "annotator")
        auth.add_user(db, "bb", PW, "annotator")
        auth.add_user(db, "senior", PW, "adjudicator")
        cid = cp.create_random_campaign(db, "round 1", 8, GRADERS, k=2, seed=3, actor=None)
        own = set()
        for item, in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ? ORDER BY id", (cid,)):
            graders = [u for (u,) in db.conn.execute(
                "SELECT u.username FROM assignments a JOIN users u ON u.id = a.user_id WHERE a.item_id = ? "
                "ORDER BY u.username", (item,))]
            for n, u in enumerate(graders):
                cp.submit_grade(db, auth.get_user(db, u), item, tier=2 * n, client_token=f"{u}-{item}")
            if "res" in graders:
                own.add(item)
    return folder / "own.db", cid, own


@pytest.fixture
def graded(template, db_path):
    path, cid, own = template
    copy_db(path, db_path)
    return db_path, cid, own


def _counts(db):
    return [db.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("adjudications", "audit_log")]


def test_a_grader_cannot_adjudicate_their_own_item_and_nothing_is_stored(graded):
    path, cid, own = graded
    assert 0 < len(own) < 8  # the seed gives the researcher some items and not others
    with connect(path) as db:
        res, senior = auth.get_user(db, "res"), auth.get_user(db, "senior")
        before = _counts(db)
        for item in sorted(own):
            with pytest.raises(MedevalError, match=r"one of item \d+'s graders.*nothing was saved"):
                adj.adjudicate(db, res, item, 1, "我覺得是部分正確：藥物對，劑量錯")
        assert _counts(db) == before
        mine = min(own)
        assert adj.adjudicate(db, senior, mine, 1, "the dose is wrong")  # someone who did not grade it: fine
        other = min(set(range(1, 10_000)) & set(adj.consensus(db, cid)) - own)
        assert adj.adjudicate(db, res, other, 0, "wrong drug")  # an item the researcher does not grade: fine
        # a later adjudication by the grader does not supersede the senior's either
        with pytest.raises(MedevalError, match="graders"):
            adj.adjudicate(db, res, mine, 2, "overrule")
        assert adj.current_adjudications(db, cid)[mine]["by"] == "senior"


def test_an_assigned_item_not_yet_graded_is_refused_too(graded):
    """Assigned but unanswered: adjudicating it would show the others' tiers before the researcher grades."""
    path, cid, own = graded
    with connect(path) as db:
        res = auth.get_user(db, "res")
        mine = min(own)
        # a fresh campaign where the researcher has not answered anything yet
        cid2 = cp.create_random_campaign(db, "round 2", 4, GRADERS, k=3, seed=1, actor=None)
        item = db.conn.execute("SELECT min(id) FROM campaign_items WHERE campaign_id = ?", (cid2,)).fetchone()[0]
        for u, tier in (("dr.li", 0), ("bb", 2)):
            cp.submit_grade(db, auth.get_user(db, u), item, tier=tier, client_token=f"r2-{u}")
        assert not adj.queue(db, cid2, min_distance=2, actor=res)
        assert [r["item"] for r in adj.queue(db, cid2, min_distance=2, actor=res, include_own=True)] == [item]
        with pytest.raises(MedevalError, match="graders"):
            adj.adjudicate(db, res, item, 1, "partly")
        assert mine not in adj.current_adjudications(db, cid)


def test_the_queue_leaves_out_the_actors_own_items(graded):
    path, cid, own = graded
    with connect(path) as db:
        res, senior = auth.get_user(db, "res"), auth.get_user(db, "senior")
        everything = adj.queue(db, cid, min_distance=2, actor=senior)
        assert len(everything) == 8 and not any(r["yours"] for r in everything)
        offered = adj.queue(db, cid, min_distance=2, actor=res)
        assert {r["item"] for r in offered} == {r["item"] for r in everything} - own
        marked = adj.queue(db, cid, min_distance=2, actor=res, include_own=True)
        assert {r["item"] for r in marked if r["yours"]} == own
        assert [r["item"] for r in marked] == [r["item"] for r in everything]  # same order, nothing else changes


@pytest.mark.slow  # AppTest runs whole pages
def test_the_page_does_not_offer_own_items_and_says_how_many_it_left_out(graded):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    path, cid, own = graded
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    with connect(path) as db:
        at.session_state[TEST_TOKEN_KEY] = auth.create_session(db, auth.authenticate(db, "res", PW))
    at.run()
    at.switch_page("app_pages/adjudicate.py").run()
    assert not at.exception
    options = set(at.selectbox(key="adj_item").options)
    assert len(options) == 8 - len(own) and not any(f"Item {i} " in o for i in own for o in options)
    n = len(own)
    note = f"{n} item{'s' if n != 1 else ''} of this queue left out: you are one of their graders"
    assert any(note in c.value for c in at.sidebar.caption)
