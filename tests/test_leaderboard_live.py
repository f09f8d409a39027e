"""Issue 22's leftovers on the Leaderboard (issue 23): a page view writes nothing, and the scorers come from an index.

* A set that is not active is shown and compared with its tiers counted in memory
  (:func:`lb.live_tier_counts`): the same counts as grading it would store, exactly -- scores on a cut-off (ROUGE-1's
  0.7499999999999999 for 0.75), a response scored by two matching cosine scorers (counted once, by the scorer
  graded first), the numeric aspect's exact-match tiers spread over the report metrics -- and nothing is written.
* :func:`lb.scorers` seeks the (metric, scorer) index of m020 instead of scanning every score.
"""

from __future__ import annotations

import random

import pytest

from medeval.accounts import auth
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports import leaderboard as lb
from medeval.reports.tier_report import build_report, tier_counts
from medeval.store.db import connect
from tests.conftest import copy_db, db_dump

PW = "correct horse battery"
MODEL = "use-multilingual-v3@0.2.1"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """The small data set, lexical scores, and cosine scores from another model than Table 12's under two scorer ids
    (with and without the t2s suffix, on overlapping responses), some exactly on cut-offs; the active set v2 is Table
    12 adopted for that model, so v1 (Table 12) was never made active and has no grades."""
    from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, write

    folder = tmp_path_factory.mktemp("live")
    files = {"kb": write(folder / "kb.csv", KB_CSV), "responses": write(folder / "responses.csv", RESP_CSV),
             "models": write(folder / "models.csv", MODELS_CSV)}
    with connect(folder / "live.db") as db:
        import_files(db, **files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        ids = [r for (r,) in db.conn.execute("SELECT id FROM responses ORDER BY id")]
        rng = random.Random(7)
        on_cut = [0.7499999999999999, 0.75, 0.5, 0.35, 0.0, 1.0]  # on and a hair below Table 12 cut-offs
        with db.conn:
            for n, r in enumerate(ids):
                db.conn.execute("INSERT INTO scores VALUES (?, 'cosine', ?, ?)",
                                (r, MODEL, on_cut[n % len(on_cut)] if n % 2 else rng.random()))
                if n % 3:  # the same model after the traditional->simplified conversion, another score
                    db.conn.execute("INSERT INTO scores VALUES (?, 'cosine', ?, ?)", (r, MODEL + "+t2s", rng.random()))
            db.conn.execute("UPDATE scores SET score = 0.7499999999999999 WHERE metric = 'rouge1' AND response_id = ?",
                            (ids[0],))
        th.adopt(db, 1, MODEL, created_by="test", activate_it=True)
        strict = th.store(db, th.ThresholdSet(name="strict", cutoffs={k: (0.6, 0.9) for k in th.TABLE12.cutoffs},
                                              embedding_model=MODEL), created_by="test")
        auth.add_user(db, "res", PW, "researcher")
    return folder / "live.db", strict


@pytest.fixture
def live(template, db_path):
    path, strict = template
    copy_db(path, db_path)
    return db_path, strict


def test_live_counts_equal_the_stored_grades_exactly_and_write_nothing(live):
    path, strict = live
    for version in (1, 2, strict):
        with connect(path) as db:
            before = db_dump(path)
            counted = lb.live_tier_counts(db, version)
            assert db_dump(path) == before  # nothing written
            assert counted, f"v{version}: nothing counted"
            th.grade_db(db, version)
            assert counted == tier_counts(db, version), f"v{version}"
    with connect(path) as db:  # the two cosine scorers: one response, one tier
        assert sum(sum(c.values()) for k, c in lb.live_tier_counts(db, 2).items() if k[2] == "cosine") == \
            db.conn.execute("SELECT count(DISTINCT response_id) FROM scores WHERE metric = 'cosine'").fetchone()[0]


def test_a_never_active_set_is_shown_and_compared_without_a_write(live):
    path, strict = live
    with connect(path) as db:
        assert th.active(db).version == 2
        before = db_dump(path)
        live_rep = build_report(db, 1, counts=lb.version_counts(db, 1))
        cmp = lb.compare(db, 2, 1)
        cmp_strict = lb.compare(db, strict, 1, metric="rouge1")
        assert db_dump(path) == before
        assert not db.conn.execute("SELECT 1 FROM grades WHERE version IN (1, ?)", (strict,)).fetchone()
        assert cmp["metrics"] == ["bleu1", "rouge1"] and "moka-ai/m3e-base" in cmp["reasons"]["cosine"]
        assert cmp["rows"] and cmp_strict["rows"]
        # the same numbers as after grading the sets (the old way: a write on a page view)
        res = auth.get_user(db, "res")
        assert lb.grade_missing(db, 1, actor=res) > 0 and lb.grade_missing(db, strict, actor=res) > 0
        assert lb.compare(db, 2, 1) == cmp and lb.compare(db, strict, 1, metric="rouge1") == cmp_strict
        graded = build_report(db, 1)
    assert live_rep["models"] == graded["models"] and live_rep["aspects"] == graded["aspects"]
    # the notes on what is graded follow the counts, not the (absent) stored grades: no "run medeval grade"
    assert live_rep["scorers"] == graded["scorers"]
    assert live_rep["scorers"]["graded_metrics"] == ["bleu1", "rouge1"]
    assert any(m["averaged"] for m in graded["models"])  # (something to compare)


def test_compare_uses_the_counts_it_is_given(live):
    path, strict = live
    with connect(path) as db:
        fake = {k: {0: 1} for k in lb.live_tier_counts(db, 1)}  # every model Completely Wrong under "v1"
        cmp = lb.compare(db, 2, 1, counts={1: fake})
    assert cmp["rows"] and all(r["total_before"] == 0 for r in cmp["rows"])


def test_scorers_seek_the_index_and_list_each_once(live):
    path, _ = live
    with connect(path) as db:
        for metric in ("cosine", "bleu1", "exact_match", "no such metric"):
            want = [s for (s,) in db.conn.execute(
                "SELECT DISTINCT scorer FROM scores WHERE metric = ? ORDER BY 1", (metric,))]
            assert lb.scorers(db, metric) == want
        assert lb.scorers(db, "cosine") == [MODEL, MODEL + "+t2s"]
        for q, args in (("SELECT min(scorer) FROM scores WHERE metric = ?", ("cosine",)),
                        ("SELECT min(scorer) FROM scores WHERE metric = ? AND scorer > ?", ("cosine", MODEL))):
            plan = " ".join(r[-1] for r in db.conn.execute("EXPLAIN QUERY PLAN " + q, args))
            assert "scores_metric_scorer" in plan and "SCAN" not in plan, plan


@pytest.mark.slow  # AppTest runs whole pages
def test_the_leaderboard_page_shows_and_compares_v1_without_grading_it(live):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    path, strict = live
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    with connect(path) as db:
        audited = db.conn.execute("SELECT count(*) FROM audit_log WHERE action NOT LIKE 'login%' AND action NOT LIKE "
                                  "'session%'").fetchone()[0]
        at.session_state[TEST_TOKEN_KEY] = auth.create_session(db, auth.authenticate(db, "res", PW))
    at.run()
    at.switch_page("app_pages/leaderboard.py").run()
    assert not at.exception
    at.selectbox(key="lb_other").set_value(1).run()  # compare v2 (active) with v1 (never active)
    assert not at.exception
    assert any("Not compared on cosine" in c.value for c in at.caption)
    at.selectbox(key="lb_version").set_value(1).run()  # v1 itself on the board
    assert not at.exception and at.dataframe
    assert any("nothing is stored until it is made active" in i.value for i in at.info)
    warned = " ".join(w.value for w in at.warning)
    assert "no grades stored" not in warned and "BLEU-1 not graded" not in warned
    assert "cosine not graded" in warned  # the one true note: v1's cosine cut-offs are for another model
    with connect(path) as db:
        assert not db.conn.execute("SELECT 1 FROM grades WHERE version != 2").fetchone()
        assert db.conn.execute("SELECT count(*) FROM audit_log WHERE action NOT LIKE 'login%' AND action NOT LIKE "
                               "'session%'").fetchone()[0] == audited
