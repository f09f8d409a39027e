"""Tiers and threshold sets: every boundary exactly, the SQL grading equals the pure function, JSON round trips."""

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from medeval.engine import thresholds as th
from medeval.core.errors import InputError, MedevalError
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db

CASES = [(m, t, lo, hi) for (m, t), (lo, hi) in th.TABLE12.cutoffs.items()]


@pytest.mark.parametrize("metric,atype,low,high", CASES)
def test_table12_every_boundary(metric, atype, low, high):
    # the comparison rule (medeval.engine.cutoff_rule): to 9 decimals, a score on a cut-off reaches it --
    # also a float one ulp below it (floating-point noise) -- and a score 1e-9 below does not
    ts = th.TABLE12
    on_low = 1 if low < high else 2
    assert ts.grade(metric, atype, low - 1e-9) == 0
    assert ts.grade(metric, atype, math.nextafter(low, -math.inf)) == on_low
    assert ts.grade(metric, atype, low) == on_low
    assert ts.grade(metric, atype, math.nextafter(low, math.inf)) == on_low
    assert ts.grade(metric, atype, high - 1e-9) == (1 if high - 1e-9 > low else 0)
    assert ts.grade(metric, atype, math.nextafter(high, -math.inf)) == 2
    assert ts.grade(metric, atype, high) == 2
    assert ts.grade(metric, atype, math.nextafter(high, math.inf)) == 2


def test_table12_values_from_the_paper():
    c = th.TABLE12.cutoffs
    assert c[("bleu1", "enumerated")] == (0.05, 0.25) and c[("bleu1", "declarative")] == (0.05, 0.45)
    assert c[("rouge1", "enumerated")] == (0.05, 0.75) and c[("rouge1", "declarative")] == (0.05, 0.55)
    assert c[("cosine", "enumerated")] == (0.35, 0.75) and c[("cosine", "declarative")] == (0.55, 0.65)
    # numeric: exact match 1 -> Basically Correct, 0 -> Completely Wrong
    assert th.TABLE12.grade("exact_match", "numeric", 1.0) == 2
    assert th.TABLE12.grade("exact_match", "numeric", 0.0) == 0


def test_paper_intervals_examples():
    # [0, 0.05) CW, [0.05, 0.25) PC, [0.25, 1] BC for BLEU-1 enumerated
    assert [th.tier(s, 0.05, 0.25) for s in (0.0, 0.049999, 0.05, 0.2499, 0.25, 1.0)] == [0, 0, 1, 1, 2, 2]
    # cosine may be negative
    assert th.tier(-1.0, 0.35, 0.75) == 0
    with pytest.raises(MedevalError):
        th.tier(float("nan"), 0.1, 0.2)


def test_new_database_ships_table12_as_version_1(db):
    sets = th.list_sets(db)
    assert [s.version for s in sets] == [1]
    assert sets[0].active and sets[0].cutoffs == th.TABLE12.cutoffs
    assert sets[0].embedding_model == th.PAPER_EMBEDDING_MODEL


def test_json_round_trip(db, tmp_path):
    ts = th.active(db)
    data = json.loads(ts.to_json())
    back = th.from_dict(data)
    assert back.cutoffs == ts.cutoffs and back.embedding_model == ts.embedding_model
    v = th.store(db, back, created_by="tester")
    assert v == 2 and th.load(db, 2).cutoffs == ts.cutoffs and th.load(db, 2).created_by == "tester"
    assert th.active(db).version == 1  # storing does not activate


@pytest.mark.parametrize("bad,msg", [
    ({"thresholds": []}, "non-empty"),
    ({"thresholds": [{"metric": "bleu1", "aspect_type": "enumerated", "low": 0.5, "high": 0.2}]}, "must be <="),
    ({"thresholds": [{"metric": "bleu1", "aspect_type": "numeric", "low": 0.1, "high": 0.2}]}, "does not apply"),
    ({"thresholds": [{"metric": "bleu2", "aspect_type": "enumerated", "low": 0.1, "high": 0.2}]}, "unknown metric"),
    ({"thresholds": [{"metric": "bleu1", "aspect_type": "enumerated", "low": 0.1}]}, "needs metric"),
    ({"thresholds": [{"metric": "rouge1", "aspect_type": "enumerated", "low": -0.1, "high": 0.2}]}, "must lie in"),
    ({"thresholds": [{"metric": "bleu1", "aspect_type": "enumerated", "low": 0.1, "high": 0.2}] * 2}, "twice"),
    ([1, 2], "JSON object"),
])
def test_invalid_threshold_files(bad, msg):
    with pytest.raises(InputError, match=msg):
        th.from_dict(bad, "t.json")


def _scored_db(db, small_files):
    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    return db


def test_sql_grading_equals_pure_function(db, small_files):
    _scored_db(db, small_files)
    v, n = th.grade_db(db)
    assert v == 1 and n == db.conn.execute("SELECT count(*) FROM scores").fetchone()[0]
    ts = th.load(db, 1)
    rows = db.conn.execute(
        "SELECT s.metric, k.aspect_type, s.score, g.tier FROM grades g JOIN scores s ON s.response_id = g.response_id "
        "AND s.metric = g.metric AND s.scorer = g.scorer JOIN responses r ON r.id = g.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE g.version = 1").fetchall()
    assert rows and all(ts.grade(m, t, s) == tier for m, t, s, tier in rows)
    assert th.grade_db(db) == (1, 0)  # idempotent


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=1, max_size=20),
       st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1))
def test_sql_case_matches_tier_on_arbitrary_scores(scores, a, b):
    import sqlite3

    low, high = min(a, b), max(a, b)
    conn = sqlite3.connect(":memory:")
    lo_b, hi_b = th.reach_bound(low), th.reach_bound(high)  # what grade_db_in_tx compares raw scores with
    for s in scores + [low, high, math.nextafter(low, -1), math.nextafter(high, -1), low - 5e-10, high - 5e-10]:
        got = conn.execute("SELECT CASE WHEN ? < ? THEN 0 WHEN ? < ? THEN 1 ELSE 2 END", (s, lo_b, s, hi_b)).fetchone()[0]
        assert got == th.tier(s, low, high)


def test_activate_regrades_and_every_grade_records_its_version(db, small_files):
    _scored_db(db, small_files)
    th.grade_db(db)
    strict = th.ThresholdSet(name="strict", cutoffs={**th.TABLE12.cutoffs, ("bleu1", "enumerated"): (0.9, 0.95)})
    v = th.store(db, strict, created_by="tester")
    added = th.activate(db, v)
    assert added > 0 and th.active(db).version == v
    versions = {r[0] for r in db.conn.execute("SELECT DISTINCT version FROM grades")}
    assert versions == {1, v}  # earlier grades stay, with their version
    th.activate(db, 1)
    assert th.active(db).version == 1
    assert db.conn.execute("SELECT count(*) FROM threshold_sets WHERE active = 1").fetchone()[0] == 1


def _watch_transactions(monkeypatch, db_path, module):
    """Record, at the start of each write transaction of ``module``, what another connection reads."""
    from medeval.store.db import connect

    seen, real = [], module.transaction

    def watched(d):
        with connect(db_path) as other:
            seen.append((th.active(other).version, other.conn.execute(
                "SELECT version, count(*) FROM grades GROUP BY version ORDER BY version").fetchall()))
        return real(d)

    monkeypatch.setattr(module, "transaction", watched)
    return seen


def test_activate_grades_in_short_transactions_and_flips_active_last(db, db_path, small_files, monkeypatch):
    """Issue 12: a regrade holds the write lock chunk by chunk; readers see the old version until the flip."""
    _scored_db(db, small_files)
    th.grade_db(db)
    v1_grades = db.conn.execute("SELECT count(*) FROM grades WHERE version = 1").fetchone()[0]
    v = th.store(db, th.ThresholdSet(name="strict", cutoffs={k: (0.9, 0.99) for k in th.TABLE12.cutoffs}),
                 created_by="tester")
    monkeypatch.setattr(th, "GRADE_CHUNK", 2)  # 8 responses: v marked as grading (m028), 4 chunks, then the flip
    seen = _watch_transactions(monkeypatch, db_path, th)
    added = th.activate(db, v)
    assert len(seen) == 6
    assert [active for active, _ in seen] == [1] * 6  # the old version stays active until the last transaction
    assert seen[0][1] == [(1, v1_grades)] and seen[-1][1] == [(1, v1_grades), (v, added)]
    assert th.active(db).version == v and added == v1_grades  # every score graded under the new version


def test_publish_grades_in_short_transactions_and_a_failure_removes_the_new_version(db, db_path, small_files,
                                                                                   monkeypatch):
    from medeval.calibration.cutoffs import publish_set

    _scored_db(db, small_files)
    th.grade_db(db)
    monkeypatch.setattr(th, "GRADE_CHUNK", 2)
    seen = _watch_transactions(monkeypatch, db_path, th)
    real = th.grade_db_in_tx
    monkeypatch.setattr(th, "grade_db_in_tx", lambda d, v, **k: real(d, v, **k) if k.get("after", 0) < 6 else 1 / 0)
    before = sorted(db.conn.execute("SELECT * FROM grades"))
    with pytest.raises(ZeroDivisionError):
        publish_set(db, {("rouge1", "declarative"): (0.2, 0.6)}, name="fails in its last chunk")
    assert len(seen) >= 4 and all(active == 1 for active, _ in seen)  # graded chunk by chunk, never activated
    assert th.active(db).version == 1 and len(th.list_sets(db)) == 1
    assert sorted(db.conn.execute("SELECT * FROM grades")) == before
    monkeypatch.setattr(th, "grade_db_in_tx", real)
    v = publish_set(db, {("rouge1", "declarative"): (0.2, 0.6)}, name="works")
    assert th.active(db).version == v == 2


def test_activate_unknown_version_changes_nothing(db):
    with pytest.raises(MedevalError, match="no threshold set version 9"):
        th.activate(db, 9)
    assert th.active(db).version == 1


def test_cosine_cut_offs_do_not_transfer_between_models(db, small_files):
    import_files(db, **small_files)
    rid = db.conn.execute("SELECT r.id FROM responses r JOIN kb_entries k ON k.id = r.kb_id "
                          "WHERE k.aspect_type = 'enumerated' LIMIT 1").fetchone()[0]
    db.conn.execute("INSERT INTO scores VALUES (?, 'cosine', 'some-other-model', 0.9)", (rid,))
    db.conn.execute("INSERT INTO scores VALUES (?, 'cosine', 'st:m3e-base:abc123', 0.9)", (rid,))
    th.grade_db(db)
    graded = db.conn.execute("SELECT scorer FROM grades WHERE metric = 'cosine'").fetchall()
    assert graded == [("st:m3e-base:abc123",)]  # only the model Table 12 was calibrated for
    v = th.adopt(db, 1, "some-other-model", created_by="tester", activate_it=True)
    ts = th.load(db, v)
    assert ts.provenance["calibrated"] is False and "provisional" in ts.name
    assert db.conn.execute("SELECT scorer FROM grades WHERE metric = 'cosine' AND version = ?", (v,)).fetchall() == [
        ("some-other-model",)]
