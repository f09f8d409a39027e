"""The leaderboard: ranking, filters, version diff and figures, from build_report's numbers."""

import pytest

from medeval.reports import leaderboard as lb
from medeval.engine import thresholds as th
from medeval.store.db import connect
from medeval.core.errors import MedevalError
from medeval.engine.importer import import_files
from medeval.reports.tier_report import build_report, total_score
from medeval.engine.scoring import score_db


@pytest.fixture
def rep_db(db_path, small_files):
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        th.grade_db(db)
    return db_path


def test_rows_rank_by_total_score_and_match_the_report(rep_db):
    with connect(rep_db) as db:
        rep = build_report(db)
    board = lb.rows(rep, metric="bleu1")
    assert [r["rank"] for r in board] == list(range(1, len(board) + 1))
    assert all(a["total_score"] >= b["total_score"] for a, b in zip(board, board[1:]))
    by_model = {m["model"]: m["per_metric"]["bleu1"] for m in rep["models"]}
    for r in board:
        shares = tuple(r[k] for k in lb.TIER_KEYS)
        assert r["total_score"] == pytest.approx(total_score(shares)) == pytest.approx(by_model[r["model"]]["total_score"])
    assert board[0]["model"] == "ModelA"  # the good model of the fixture
    one = lb.rows(rep, aspect="Primary Symptoms")
    assert {r["model"] for r in one} == {"ModelA", "ModelB"}
    with pytest.raises(MedevalError, match="no graded responses for aspect"):
        lb.rows(rep, aspect="Nonexistent")
    with pytest.raises(MedevalError, match="choose averaged"):
        lb.rows(rep, metric="bleu")


def test_diff_between_versions_shows_the_moves(rep_db):
    with connect(rep_db) as db:
        strict = th.ThresholdSet(name="strict", cutoffs={k: (0.9, 0.99) for k in th.TABLE12.cutoffs})
        v = th.store(db, strict, created_by="test")
        th.grade_db(db, v)
        old, new = lb.rows(build_report(db, 1)), lb.rows(build_report(db, v))
    d = {r["model"]: r for r in lb.diff(old, new)}
    for r in new:
        before = next(o for o in old if o["model"] == r["model"])
        assert d[r["model"]]["total_change"] == pytest.approx(r["total_score"] - before["total_score"])
        assert d[r["model"]]["rank_change"] == before["rank"] - r["rank"]
    assert all(x["total_change"] <= 0 for x in d.values())  # stricter cut-offs never raise a score


def test_ttests_filter_and_mark_and_figures_have_one_trace_per_tier(rep_db):
    with connect(rep_db) as db:
        rep = build_report(db)
    tests = lb.ttests(rep, metric="rouge1")
    assert tests and all(t["metric"] == "rouge1" and t["mark"] == ("*" if t["significant"] else "") for t in tests)
    fig = lb.shares_figure(lb.rows(rep), "x")
    assert [t.name for t in fig.data] == list(lb.TIER_LABELS)
    heat = lb.aspect_heatmap(rep)
    assert len(heat.data[0].y) == 2 and len(heat.data[0].x) == len({a["aspect"] for a in rep["aspects"]})
