"""Active calibration campaigns in the database: seed round, next rounds, exactly k, round rows, stopping, roles, CLI."""

import json
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation.campaigns import assignment
from medeval.annotation.campaigns.sampling import ActiveConfig
from medeval.calibration import cutoffs as cal
from medeval.calibration import rounds
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.engine import thresholds as th
from medeval.store.db import connect
from tests.conftest import copy_db, db_dump, invoke

PW = "correct horse battery"
DOCS = [f"doc{i}" for i in range(5)]
TRUE = (0.3, 0.7)


@pytest.fixture(scope="module")
def pool_template(tmp_path_factory):
    """600 enumerated responses with a ROUGE-1 score each (uniform), a researcher and five annotators (built once
    per module: the accounts' argon2 hashes are slow on purpose)."""
    g = np.random.default_rng(0)
    scorer = None
    path = tmp_path_factory.mktemp("pool") / "pool.db"
    with connect(path) as db:
        scorer = th.active(db).scorer_for("rouge1")
        db.conn.executemany("INSERT INTO models (id, name) VALUES (?, ?)", [(m, f"M{m}") for m in range(1, 7)])
        db.conn.executemany("INSERT INTO kb_entries (id, disease, aspect, aspect_type, reference, processed) "
                            "VALUES (?, ?, 'Primary Symptoms', 'enumerated', 'ref', 'ref')",
                            [(k, f"d{k}") for k in range(1, 101)])
        rid = 0
        for m in range(1, 7):
            for k in range(1, 101):
                rid += 1
                db.conn.execute("INSERT INTO responses (id, model_id, kb_id, raw, processed) VALUES (?, ?, ?, 'a', 'a')",
                                (rid, m, k))
                db.conn.execute("INSERT INTO scores VALUES (?, 'rouge1', ?, ?)", (rid, scorer, float(g.uniform())))
        db.conn.commit()
        auth.add_user(db, "res", PW, "researcher")
        for d in DOCS:
            auth.add_user(db, d, PW, "annotator")
    return path


@pytest.fixture
def pool_db(db_path, pool_template):
    """A copy of the module's pool database at ``db_path`` (MEDEVAL_DB)."""
    copy_db(pool_template, db_path)
    return db_path


def _cfg(**kw):
    return ActiveConfig(**{"metrics": ("rouge1",), "aspect_types": ("enumerated",), "per_interval": 2,
                           "round_size": 20, "target_width": 0.05, "budget": 200, "explore": 0.2, "k": 3, "seed": 5,
                           **kw})


def _tier(score: float, rid: int, user: str, noise: float) -> int:
    g = np.random.default_rng([rid, zlib.crc32(user.encode())])
    pos = 0.5 * score / TRUE[0] if score < TRUE[0] else (
        0.5 + (score - TRUE[0]) / (TRUE[1] - TRUE[0]) if score < TRUE[1] else 1.5 + 0.5 * (score - TRUE[1]) / 0.3)
    return int(np.clip(np.rint(pos + g.normal(0, noise)), 0, 2))


def _grade_everything(db, cid, *, noise=0.3) -> int:
    """Every annotator answers every open item through submit_grade (simulated clinicians, true cut-offs TRUE)."""
    n = 0
    for d in DOCS:
        user = auth.get_user(db, d)
        while (item := cp.next_item(db, user, cid)) is not None:
            rid = db.conn.execute("SELECT response_id FROM campaign_items WHERE id = ?", (item,)).fetchone()[0]
            score = db.conn.execute("SELECT score FROM scores WHERE response_id = ?", (rid,)).fetchone()[0]
            cp.submit_grade(db, user, item, tier=_tier(score, rid, d, noise), client_token=f"t{cid}:{item}:{d}")
            n += 1
    return n


def _assign_counts(db, cid):
    return [n for (n,) in db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ? GROUP BY item_id",
                                          (cid,))]


def test_an_active_campaign_starts_with_a_seed_round_listed_as_tier_grading(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "active", _cfg(), DOCS, actor=res)
        kind, config = db.conn.execute("SELECT kind, config FROM campaigns WHERE id = ?", (cid,)).fetchone()
        assert kind == "active_calibration" and json.loads(config)["round_size"] == 20
        strata = [json.loads(s) for (s,) in db.conn.execute("SELECT strata FROM campaign_items WHERE campaign_id = ?",
                                                             (cid,))]
        assert len(strata) == 20 and all(s[0]["round"] == 1 and s[0]["metric"] == "rouge1" for s in strata)
        assert set(_assign_counts(db, cid)) == {3}
        assert [c["id"] for c in cp.list_campaigns(db, actor=res)] == [cid]
        cp.require_grading(kind, cid)  # grading, progress and calibration treat it as tier grading
        assert cp.campaign_progress(db, cid, actor=res)["items"] == 20
        st = rounds.round_status(db, cid, actor=res)
        assert st["round"] == 1 and not st["last_round_complete"] and st["missing"] == 60
        assert st["strata"][0]["cut_offs"] is None and st["strata"][0]["stop"] is None


def test_next_round_is_refused_until_the_round_is_answered_then_appends_exactly_k(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "active", _cfg(), DOCS, actor=res)
    before = db_dump(pool_db)
    with connect(pool_db) as db:
        with pytest.raises(MedevalError, match=r"round 1 of campaign \d+ is not fully answered yet \(60 of 60"):
            rounds.next_round(db, cid, actor=auth.get_user(db, "res"))
    assert db_dump(pool_db) == before  # nothing stored
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        assert _grade_everything(db, cid) == 60
        loads_before = dict(db.conn.execute("SELECT user_id, max(position) FROM assignments WHERE campaign_id = ? "
                                            "GROUP BY user_id", (cid,)).fetchall())
        out = rounds.next_round(db, cid, actor=res)
        assert out["round"] == 2 and out["items"] == 20
        new = db.conn.execute("SELECT id, strata FROM campaign_items WHERE campaign_id = ? ORDER BY id", (cid,)).fetchall()
        assert len(new) == 40 and all(json.loads(s)[0]["round"] == 2 for _, s in new[20:])
        assert set(_assign_counts(db, cid)) == {3}  # exactly k, old and new
        loads = [n for (n,) in db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ? GROUP BY user_id",
                                               (cid,))]
        assert sum(loads) == 120 and max(loads) - min(loads) <= 1  # balanced with what they already had
        # new items come after each annotator's earlier ones, so no one's order is reshuffled
        for uid, last in loads_before.items():
            firsts = db.conn.execute("SELECT min(a.position) FROM assignments a JOIN campaign_items ci ON ci.id = "
                                     "a.item_id WHERE a.user_id = ? AND ci.id > ?", (uid, new[19][0])).fetchone()[0]
            assert firsts is None or firsts > last
        rows = rounds.round_history(db, cid, actor=res)
        assert len(rows) == 1 and rows[0]["round"] == 2 and rows[0]["n_graded"] == 20 and rows[0]["items_added"] == 20
        assert rows[0]["low"] is not None and rows[0]["low_ci_lo"] <= rows[0]["low"] <= rows[0]["low_ci_hi"]
        # the second round is refused again until it is answered
        with pytest.raises(MedevalError, match="round 2 .* not fully answered"):
            rounds.next_round(db, cid, actor=res)
        # a response is never added twice to the campaign
        assert db.conn.execute("SELECT count(DISTINCT response_id) FROM campaign_items WHERE campaign_id = ?",
                               (cid,)).fetchone()[0] == 40


def test_rounds_narrow_the_intervals_and_calibration_works_unchanged(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "active", _cfg(round_size=40, budget=400), DOCS, actor=res)
        widths = []
        for _ in range(4):
            _grade_everything(db, cid, noise=0.2)
            st = rounds.round_status(db, cid, actor=res)
            widths.append(max(st["strata"][0]["widths"]))
            if st["strata"][0]["stop"]:
                break
            rounds.next_round(db, cid, actor=res)
        assert widths[-1] < widths[0]
        series = rounds.width_series(db, cid, actor=res)
        assert {r["cut_off"] for r in series} == {"low", "high"} and series[-1]["after_round"] == len(widths)
        [c] = cal.calibrate_rows(cal.campaign_rows(db, cid), n_boot=20)
        lo, hi = c.cut_offs
        assert abs(lo - TRUE[0]) < 0.1 and abs(hi - TRUE[1]) < 0.1


def test_a_stratum_stops_at_its_budget_and_at_the_target(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "budget", _cfg(budget=30, round_size=20), DOCS, actor=res)
        _grade_everything(db, cid)
        out = rounds.next_round(db, cid, actor=res)
        assert out["items"] == 10  # only what is left of the budget
        _grade_everything(db, cid)
        assert rounds.round_status(db, cid, actor=res)["strata"][0]["stop"] == "budget"
        before = db.conn.execute("SELECT count(*) FROM campaign_items").fetchone()[0]
        with pytest.raises(MedevalError, match="every stratum .* has stopped .*budget of items is spent"):
            rounds.next_round(db, cid, actor=res)
        assert db.conn.execute("SELECT count(*) FROM campaign_items").fetchone()[0] == before
        wide = assignment.create_active_campaign(db, "target", _cfg(target_width=1.0, seed=6), DOCS, actor=res)
        _grade_everything(db, wide, noise=0.0)
        assert rounds.round_status(db, wide, actor=res)["strata"][0]["stop"] == "target"
        with pytest.raises(MedevalError, match="within the target width"):
            rounds.next_round(db, wide, actor=res)


def test_a_round_never_draws_a_gold_item_of_the_campaign(pool_db):
    """Gold responses are checked against, never graded as real items: rounds leave them in the pool."""
    from medeval.annotation import gold

    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "active", _cfg(round_size=60, explore=0.0), DOCS, actor=res)
        in_campaign = {r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?",
                                                     (cid,))}
        # every free response near the middle of the range (where the cut-offs are) becomes gold
        near = [r for (r,) in db.conn.execute("SELECT response_id FROM scores WHERE score BETWEEN 0.25 AND 0.7 "
                                              "ORDER BY response_id") if r not in in_campaign]
        for rid in near:
            gold.mark_gold(db, cid, rid, 1, "checked by two seniors", actor=res)
        _grade_everything(db, cid)
        rounds.next_round(db, cid, actor=res)
        drawn = {r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?",
                                               (cid,))} - in_campaign
        assert len(drawn) == 60 and not drawn & set(near)


def test_roles_are_checked_in_the_library(pool_db):
    with connect(pool_db) as db:
        res, doc = auth.get_user(db, "res"), auth.get_user(db, "doc0")
        with pytest.raises(PermissionDenied):
            assignment.create_active_campaign(db, "x", _cfg(), DOCS, actor=doc)
        cid = assignment.create_active_campaign(db, "active", _cfg(), DOCS, actor=res)
        _grade_everything(db, cid)
        for call in (lambda: rounds.next_round(db, cid, actor=doc), lambda: rounds.round_status(db, cid, actor=doc),
                     lambda: rounds.round_history(db, cid, actor=doc),
                     lambda: assignment.add_items(db, cid, {1: [{"round": 9}]}, actor=doc)):
            with pytest.raises(PermissionDenied):
                call()


@pytest.mark.parametrize("bad, message", [
    ({"round_size": 0}, "--round-size"), ({"target_width": 0}, "--target-width"), ({"budget": -1}, "--budget"),
    ({"explore": 1.5}, "--explore"), ({"criterion": "magic"}, "criterion 'magic' is not one of"),
    ({"per_interval": 0}, "--per-interval"), ({"metrics": ("nope",)}, "nope"),
])
def test_bad_settings_are_refused_with_nothing_stored(pool_db, bad, message):
    before = db_dump(pool_db)
    with connect(pool_db) as db:
        with pytest.raises(MedevalError, match=message):
            assignment.create_active_campaign(db, "bad", _cfg(**bad), DOCS, actor=auth.get_user(db, "res"))
    assert db_dump(pool_db) == before


def test_rounds_apply_to_active_campaigns_only_and_items_are_added_once(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        bucket = cp.create_bucket_campaign(db, "paper", cp.BucketConfig(("rouge1",), ("enumerated",), 0.1, 1, 3, 1),
                                           DOCS, actor=res)
        with pytest.raises(MedevalError, match="not active calibration"):
            rounds.next_round(db, bucket, actor=res)
        with pytest.raises(MedevalError, match="active_calibration campaigns only"):
            assignment.add_items(db, bucket, {1: [{"round": 2}]}, actor=res)
        cid = assignment.create_active_campaign(db, "active", _cfg(), DOCS, actor=res)
        rid = db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?", (cid,)).fetchone()[0]
        with pytest.raises(MedevalError, match="already in campaign"):
            assignment.add_items(db, cid, {rid: [{"metric": "rouge1", "aspect_type": "enumerated", "round": 2}]},
                                 actor=res)


def test_cli_create_next_round_and_rounds(pool_db):
    out = invoke("campaign", "create", "--name", "cli active", "--annotators", ",".join(DOCS), "--metrics", "rouge1",
                 "--aspect-types", "enumerated", "--sampling", "active", "--round-size", "15", "--budget", "100").output
    assert "seed round of 20 items" in out  # 2 per interval by default for a seed round
    cid = int(out.split()[1].rstrip(":"))
    from medeval.cli import main

    res = CliRunner().invoke(main, ["campaign", "next-round", "--campaign", str(cid)])
    assert res.exit_code == 1 and res.output.startswith("Error: round 1 of campaign") and "Traceback" not in res.output
    bad = CliRunner().invoke(main, ["campaign", "create", "--name", "x", "--annotators", ",".join(DOCS),
                                    "--metrics", "rouge1", "--sampling", "active", "--explore", "2"])
    assert bad.exit_code == 1 and "--explore" in bad.output and bad.output.startswith("Error:")
    with connect(pool_db) as db:
        _grade_everything(db, cid)
    assert "round 2 adds 15 items" in invoke("campaign", "next-round", "--campaign", cid).output
    table = invoke("campaign", "rounds", "--campaign", cid).output
    assert "round\tstratum" in table and "\n2\trouge1/enumerated\t20\t" in table and "now (round 2, 45 answers missing" in table


@pytest.mark.slow  # AppTest runs the whole Tune cut-offs page
def test_tune_cut_offs_page_shows_the_intervals_and_draws_the_next_round(pool_db):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "active", _cfg(), DOCS, actor=res)
        _grade_everything(db, cid)
        token = auth.create_session(db, auth.authenticate(db, "res", PW))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    at.switch_page("app_pages/tuning.py").run()
    at.selectbox(key="tune_metric").set_value("rouge1").run()
    at.selectbox(key="tune_type").set_value("enumerated").run()
    assert not at.exception
    captions = "\n".join(c.value for c in at.caption)
    assert "each cut-off's 95% interval" in captions and "width" in captions
    assert "Active rounds" in [s.value for s in at.subheader]
    [table] = [d.value for d in at.dataframe if "graded" in d.value.columns]
    assert table["graded"].tolist() == [20] and table["status"].tolist() == ["narrowing"]
    at.button(key="next_round").click().run()
    assert not at.exception and any(s.value.replace("\\", "") == "Round 2 drawn: 20 items added."
                                      for s in at.success)
    with connect(pool_db) as db:
        assert db.conn.execute("SELECT count(*) FROM campaign_items WHERE campaign_id = ?", (cid,)).fetchone()[0] == 40
    at.button(key="next_round").click().run()  # round 2 is not answered yet: refused, said plainly
    assert any("round 2 of campaign" in e.value and "not fully answered" in e.value for e in at.error)


@pytest.mark.slow  # AppTest runs the whole New campaign page
def test_new_campaign_page_creates_an_active_campaign(pool_db):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    with connect(pool_db) as db:
        token = auth.create_session(db, auth.authenticate(db, "res", PW))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    at.switch_page("app_pages/new_campaign.py").run()
    at.text_input(key="new_name").input("active from the page").run()
    at.multiselect(key="new_metrics").set_value(["rouge1"]).run()
    at.multiselect(key="new_types").set_value(["enumerated"]).run()
    at.radio(key="new_sampling").set_value("active").run()
    at.number_input(key="new_round_size").set_value(15).run()
    at.button(key="create_campaign").click().run()
    assert not at.exception and at.success
    with connect(pool_db) as db:
        kind, config = db.conn.execute("SELECT kind, config FROM campaigns").fetchone()
        n = db.conn.execute("SELECT count(*) FROM campaign_items").fetchone()[0]
    assert kind == "active_calibration" and json.loads(config)["round_size"] == 15 and n == 20  # 2 per interval
