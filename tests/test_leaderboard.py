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


@pytest.fixture
def v1_never_active(db_path, small_files):
    """Lexical scores and cosine scores from another embedding model than Table 12's; the active set v2 is Table 12
    adopted for that model, so v1 (Table 12) has no grades at all -- the demo's situation."""
    from medeval.accounts import auth

    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        db.conn.execute("INSERT INTO scores (response_id, metric, scorer, score) SELECT response_id, 'cosine', "
                        "'use-multilingual-v3@0.2.1', score FROM scores WHERE metric = 'bleu1'")
        db.conn.commit()
        th.adopt(db, 1, "use-multilingual-v3@0.2.1", created_by="test", activate_it=True)
        auth.add_user(db, "res", "correct horse battery", "researcher")
        auth.add_user(db, "doc", "correct horse battery", "annotator")
    return db_path


def test_compare_with_a_set_never_made_active_grades_it_and_says_why_a_metric_is_left_out(v1_never_active):
    from medeval.accounts import auth
    from medeval.core.errors import PermissionDenied

    with connect(v1_never_active) as db:
        res, doc = auth.get_user(db, "res"), auth.get_user(db, "doc")
        assert th.active(db).version == 2
        assert not db.conn.execute("SELECT 1 FROM grades WHERE version = 1").fetchone()
        with pytest.raises(PermissionDenied):
            lb.grade_missing(db, 1, actor=doc)
        assert lb.grade_missing(db, 1, actor=res) > 0
        assert lb.grade_missing(db, 1, actor=res) == 0  # graded once
        assert not db.conn.execute("SELECT 1 FROM grades WHERE version = 1 AND metric = 'cosine'").fetchone()

        avg = lb.compare(db, 2, 1)
        assert avg["metrics"] == ["bleu1", "rouge1"]
        why = avg["reasons"]["cosine"]
        assert "v1's cosine cut-offs are for moka-ai/m3e-base" in why and "use-multilingual-v3@0.2.1" in why
        assert avg["rows"] and all(r[k] is not None for r in avg["rows"] for k in r)
        # v2 is v1 with the same lexical cut-offs: nothing moves on the metrics both grade
        assert all(r["total_change"] == pytest.approx(0) and r["rank_change"] == 0 for r in avg["rows"])
        # averaged over BLEU-1 and ROUGE-1 only, on both sides: the mean of the two metrics' totals
        per = {m["model"]: m["per_metric"] for m in build_report(db, 2)["models"]}
        for r in avg["rows"]:
            assert r["total_score"] == pytest.approx((per[r["model"]]["bleu1"]["total_score"]
                                                      + per[r["model"]]["rouge1"]["total_score"]) / 2)
        one = lb.compare(db, 2, 1, metric="bleu1", aspect="Primary Symptoms")
        assert one["reasons"] == {} and one["metrics"] == ["bleu1"]
        before = {r["model"]: r for r in lb.rows(build_report(db, 1), metric="bleu1", aspect="Primary Symptoms")}
        assert {r["model"]: r["total_before"] for r in one["rows"]} == {m: r["total_score"] for m, r in before.items()}
        cos = lb.compare(db, 2, 1, metric="cosine")
        assert cos["rows"] == [] and cos["metrics"] == [] and set(cos["reasons"]) == {"cosine"}
        # a set for another tokenizer: the lexical metrics are left out with the tokenizers named
        v = th.store(db, th.ThresholdSet(name="other tok", cutoffs=dict(th.TABLE12.cutoffs), tokenizer="tok-x",
                                         embedding_model="use-multilingual-v3@0.2.1"), created_by="test")
        lb.grade_missing(db, v, actor=res)
        other = lb.compare(db, 2, v)
        assert other["metrics"] == ["cosine"] and "the tokenizer tok-x" in other["reasons"]["bleu1"]
