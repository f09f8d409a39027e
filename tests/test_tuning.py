"""Live tuning: the score index and leaderboard agree with grading in SQL and build_report; drafts are private."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

from medeval.accounts import auth
from medeval.engine import thresholds as th
from medeval.calibration import tuning
from medeval.store.db import connect
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.reports.tier_report import build_report

from tests.conftest import copy_db

PW = "correct horse battery"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_leaderboard_equals_grading_in_sql_and_the_report(demo_template, tmp_path, seed):
    path = copy_db(demo_template, tmp_path / "copy.db")
    rng = np.random.default_rng(seed)
    with connect(path) as db:
        base = th.active(db)
        cut = {}
        for (m, t), _ in base.cutoffs.items():
            if m == "exact_match":
                cut[(m, t)] = (1.0, 1.0)
                continue
            lo, hi = sorted(rng.uniform(-1 if m == "cosine" else 0, 1, 2).round(3))
            cut[(m, t)] = (float(lo), float(hi))
        index = tuning.ScoreIndex.load(db)
        live = {r["model"]: r for r in tuning.leaderboard(index, cut)}
        v = th.store(db, th.ThresholdSet(name="random", cutoffs=cut, tokenizer=base.tokenizer,
                                         embedding_model=base.embedding_model), created_by="test", activate=True)
        th.grade_db(db, v)
        rep = build_report(db, v)
        for m in rep["models"]:
            assert live[m["model"]]["averaged"]["total_score"] == pytest.approx(m["averaged"]["total_score"], abs=1e-12)
            for metric, value in m["per_metric"].items():
                if value:
                    assert live[m["model"]]["per_metric"][metric]["basically_correct"] == pytest.approx(
                        value["basically_correct"], abs=1e-12)
        # tier counts by binary search equal counting the stored grades
        for (metric, atype), (lo, hi) in cut.items():
            if metric == "exact_match":
                continue
            sql = dict(db.conn.execute(
                "SELECT g.tier, count(*) FROM grades g JOIN responses r ON r.id = g.response_id JOIN kb_entries k "
                "ON k.id = r.kb_id WHERE g.version = ? AND g.metric = ? AND k.aspect_type = ? GROUP BY g.tier",
                (v, metric, atype)).fetchall())
            assert index.counts(metric, atype, lo, hi).tolist() == [sql.get(t, 0) for t in range(3)]


def test_regrade_follows_the_tier_rule_at_the_boundaries():
    scores = np.array([0.0, 0.0499, 0.05, 0.2499, 0.25, 1.0])
    assert tuning.regrade(scores, 0.05, 0.25).tolist() == [th.tier(s, 0.05, 0.25) for s in scores] == [0, 0, 1, 1, 2, 2]


def test_against_experts_matches_scikit_learn():
    rng = np.random.default_rng(4)
    scores = rng.uniform(0, 1, 60).round(2)
    experts = np.clip((scores * 3).astype(int) + rng.choice([-1, 0, 1], 60), 0, 2)
    a = tuning.against_experts(scores, experts, 0.3, 0.7)
    auto = [th.tier(s, 0.3, 0.7) for s in scores]
    assert a.kappa == pytest.approx(cohen_kappa_score(experts, auto, weights="quadratic"), abs=1e-12)
    assert a.accuracy == pytest.approx(accuracy_score(experts, auto))
    assert sum(map(sum, a.confusion)) == 60
    assert tuning.against_experts([], [], 0.3, 0.7).kappa is None


def test_drafts_are_private_validated_and_discarded(db):
    res = auth.add_user(db, "res", PW, "researcher")
    res2 = auth.add_user(db, "res2", PW, "researcher")
    doc = auth.add_user(db, "doc", PW, "annotator")
    tuning.save_draft(db, res, "bleu1", "enumerated", 0.1, 0.3)
    assert tuning.draft(db, res)[("bleu1", "enumerated")] == (0.1, 0.3)
    assert tuning.draft(db, res2) == th.active(db).cutoffs
    with pytest.raises(MedevalError, match="must not exceed"):
        tuning.save_draft(db, res, "bleu1", "enumerated", 0.5, 0.3)
    with pytest.raises(MedevalError, match="no cut-offs for bleu1 / numeric"):
        tuning.save_draft(db, res, "bleu1", "numeric", 0.1, 0.3)
    with pytest.raises(PermissionDenied):
        tuning.save_draft(db, doc, "bleu1", "enumerated", 0.1, 0.3)
    tuning.discard_draft(db, res)
    assert tuning.draft(db, res) == th.active(db).cutoffs


def test_a_handle_the_researcher_did_not_move_keeps_its_exact_value():
    # the browser snaps both handles to the 0.005 grid when one moves: 0.066894637 arrives as 0.065
    before = (0.066894637, 0.466063349)
    assert tuning.settle_handles(before, (0.065, 0.5), low=0.0) == (0.066894637, 0.5)  # upper moved only
    assert tuning.settle_handles(before, (0.07, 0.465), low=0.0) == (0.07, 0.466063349)  # lower moved only
    assert tuning.settle_handles(before, (0.1, 0.6), low=0.0) == (0.1, 0.6)  # both moved (set programmatically)
    # the upper handle pulled down onto the lower one stops on it, the lower one stays put
    assert tuning.settle_handles(before, (0.065, 0.065), low=0.0) == (0.066894637, 0.066894637)
    assert tuning.settle_handles(before, (0.465, 0.465), low=0.0) == (0.465, 0.466063349)  # lower up to the upper
    # measured in Chromium: the upper handle not moved arrives snapped to a grid anchored on the lower one
    assert tuning.settle_handles((0.066894637, 0.56), (0.07, 0.5619), low=0.0) == (0.07, 0.56)
    assert tuning.settle_handles((0.066894637, 0.47), (0.065, 0.56), low=0.0) == (0.066894637, 0.56)
    # cosine's grid starts at -1
    assert tuning.settle_handles((0.230435632, 0.748388082), (0.23, 0.8), low=-1.0) == (0.230435632, 0.8)
    # on-grid values: any change is a move
    assert tuning.settle_handles((0.05, 0.25), (0.05, 0.3), low=0.0) == (0.05, 0.3)
