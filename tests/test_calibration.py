"""Calibrating tier cut-offs: exhaustive search checked against brute force with scikit-learn and scipy."""

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import accuracy_score, cohen_kappa_score

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.calibration.cutoffs import _candidates, calibrate, calibrate_rows, campaign_rows, consensus
from medeval.calibration.graded_file import read_graded
from medeval.store.db import connect
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.engine.thresholds import tier
from tests.conftest import ROOT, write


def _reference(crit, expert, auto):
    if crit == "kappa":
        return cohen_kappa_score(expert, auto, weights="quadratic", labels=[0, 1, 2])
    if crit == "accuracy":
        return accuracy_score(expert, auto)
    if len(set(auto)) < 2:
        return np.nan
    return spearmanr(expert, auto).statistic


@pytest.mark.parametrize("criterion", ["kappa", "accuracy", "spearman"])
def test_the_optimum_equals_brute_force_with_outside_implementations(criterion):
    rng = np.random.default_rng(11)
    for _ in range(25):
        n = int(rng.integers(4, 30))
        scores = np.round(rng.uniform(0, 1, n), 2)
        expert = np.clip((scores * 3).astype(int) + rng.choice([-1, 0, 0, 1], n), 0, 2)
        if len(set(expert.tolist())) < 2:
            continue
        c = calibrate("rouge1", "declarative", scores, expert, criterion=criterion, n_boot=0)
        _, cuts = _candidates(np.sort(scores), 0.0, 1.0)
        best = max(v for lo, hi in itertools.combinations_with_replacement(cuts, 2)
                   if not np.isnan(v := _reference(criterion, expert, [tier(x, lo, hi) for x in scores])))
        auto = [tier(x, *c.cut_offs) for x in scores]
        assert c.value == pytest.approx(best, abs=1e-12)
        assert _reference(criterion, expert, auto) == pytest.approx(c.value, abs=1e-12)  # the cut-offs give it
        confusion = np.zeros((3, 3), int)
        for e, a in zip(expert, auto):
            confusion[e, a] += 1
        assert c.confusion == confusion.tolist()


def test_noise_free_tiers_are_reproduced_exactly_with_cut_offs_between_the_neighbours():
    scores = np.array([0.02, 0.04, 0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 0.9, 1.0])
    expert = np.array([tier(s, 0.05, 0.55) for s in scores])  # Table 12, ROUGE-1 declarative
    c = calibrate("rouge1", "declarative", scores, expert, n_boot=100, rng=1)
    assert c.value == pytest.approx(1.0) and c.also["accuracy"] == 1.0
    assert c.cut_offs == (pytest.approx(0.07), pytest.approx(0.55))  # midpoints of 0.04|0.1 and 0.5|0.6
    b = c.bootstrap
    assert b["n_boot"] == 100 and b["value_ci95"][1] == pytest.approx(1.0)
    assert b["low_ci95"][0] >= 0.0 and b["high_ci95"][1] <= 1.0 and 0 <= b["stable_share"] <= 1


def test_hand_computed_small_case():
    # scores 0.1, 0.4, 0.6, 0.9 with expert tiers 0, 1, 1, 2: the obvious cuts, kappa 1
    c = calibrate("bleu1", "enumerated", [0.1, 0.4, 0.6, 0.9], [0, 1, 1, 2], n_boot=0)
    assert c.cut_offs == (pytest.approx(0.25), pytest.approx(0.75)) and c.value == pytest.approx(1.0)
    assert c.confusion == [[1, 0, 0], [0, 2, 0], [0, 0, 1]]
    # cosine ranges over [-1, 1]: an empty lowest tier puts the low cut at -1
    c = calibrate("cosine", "declarative", [0.2, 0.5, 0.7, 0.9], [1, 1, 2, 2], n_boot=0)
    assert c.cut_offs[0] == -1.0 and c.cut_offs[1] == pytest.approx(0.6)


def test_undefined_cases_say_why_and_bad_input_is_refused():
    assert "at least 3" in calibrate("rouge1", "declarative", [0.1, 0.2], [0, 1]).undefined_reason
    assert "only one tier" in calibrate("rouge1", "declarative", [0.1, 0.2, 0.3], [1, 1, 1]).undefined_reason
    with pytest.raises(MedevalError, match="must lie in"):
        calibrate("rouge1", "declarative", [0.1, 1.2, 0.3], [0, 1, 2])
    with pytest.raises(MedevalError, match="0, 1 or 2"):
        calibrate("rouge1", "declarative", [0.1, 0.2, 0.3], [0, 1, 3])
    with pytest.raises(MedevalError, match="criterion"):
        calibrate("rouge1", "declarative", [0.1, 0.2, 0.3], [0, 1, 2], criterion="f1")
    with pytest.raises(MedevalError, match="Did you mean rouge1"):
        calibrate("rouje1", "declarative", [0.1, 0.2, 0.3], [0, 1, 2])


def test_annotators_of_one_item_are_combined_into_the_lower_median():
    assert consensus([0, 1, 2]) == 1 and consensus([1, 2]) == 1 and consensus([2, 2, 0]) == 2
    rows = [{"metric": "rouge1", "aspect_type": "declarative", "score": s, "tier": t, "item": i}
            for i, s, ts in [("a", 0.1, [0, 0, 1]), ("b", 0.5, [1, 2]), ("c", 0.9, [2, 2, 2]), ("d", 0.3, [0])]
            for t in ts]
    (c,) = calibrate_rows(rows, n_boot=0)
    assert c.n == 4
    with pytest.raises(MedevalError, match="two different rouge1 scores"):
        calibrate_rows(rows + [{"metric": "rouge1", "aspect_type": "declarative", "score": 0.2, "tier": 0,
                                "item": "a"}])


def test_graded_file_errors_name_the_row_and_the_fix(tmp_path):
    good = write(tmp_path / "g.csv", "metric,aspect_type,score,tier\nrouge1,declarative,0.1,0\n")
    assert read_graded(good)[0]["score"] == 0.1
    for text, message in [("metric,score,tier\nrouge1,0.1,0\n", "aspect_type missing"),
                          ("metric,aspect_type,score,tier\nrouge1,declarative,high,0\n", "row 2: score 'high'"),
                          ("metric,aspect_type,score,tier\nrouge1,declarative,0.1,3\n", "row 2: tier '3'"),
                          ("metric,aspect_type,score,tier\n", "no rows")]:
        with pytest.raises(MedevalError, match=message):
            read_graded(write(tmp_path / "bad.csv", text))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "medeval", "calibrate", *args], cwd=ROOT, capture_output=True,
                          text=True)


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_calibrate_file(tmp_path):
    rows = ["metric,aspect_type,score,tier,item"]
    for i, s in enumerate([0.02, 0.04, 0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 0.9, 1.0]):
        rows.append(f"rouge1,declarative,{s},{tier(s, 0.05, 0.55)},{i}")
    f = write(tmp_path / "graded.csv", "\n".join(rows) + "\n")
    r = _cli(str(f), "--n-boot", "20")
    assert r.returncode == 0, r.stderr
    (out,) = json.loads(r.stdout)
    assert out["cut_offs"] == [pytest.approx(0.07), pytest.approx(0.55)] and out["criterion"] == "kappa"
    assert out["value"] == pytest.approx(1.0) and out["n"] == 10
    md = _cli(str(f), "--format", "md", "--criterion", "accuracy", "--n-boot", "0")
    assert "| rouge1 | declarative | 0.0700 | 0.5500 | accuracy | 1.0000 | 10 |" in md.stdout
    bad = _cli(str(tmp_path / "missing.csv"))
    assert bad.returncode == 1 and "file not found" in bad.stderr
    both = _cli(str(f), "--campaign", "1")
    assert both.returncode != 0 and "either a GRADED file or --campaign" in both.stderr


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_calibrate_from_a_campaign(db_path, small_files):
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        for u in ("aa", "bb"):
            auth.add_user(db, u, "correct horse battery", "annotator")
        cid = cp.create_random_campaign(db, "cal", 8, ["aa", "bb"], k=2, seed=0, actor=None)
        for u in ("aa", "bb"):
            user = auth.get_user(db, u)
            while (i := cp.next_item(db, user, cid)) is not None:
                score = db.conn.execute("SELECT s.score FROM scores s JOIN campaign_items ci ON ci.response_id = "
                                        "s.response_id WHERE ci.id = ? AND s.metric = 'rouge1'", (i,)).fetchone()
                t = 1 if score is None else tier(score[0], 0.05, 0.55)
                cp.submit_grade(db, user, i, tier=t, client_token=f"{u}{i}")
        rows = campaign_rows(db, cid)
    assert rows and {r["metric"] for r in rows} == {"bleu1", "rouge1"}
    assert all(r["aspect_type"] in ("enumerated", "declarative") for r in rows)  # numeric (exact match) left out
    r = _cli("--campaign", str(cid), "--db", str(db_path), "--n-boot", "0")
    assert r.returncode == 0, r.stderr
    results = {(x["metric"], x["aspect_type"]): x for x in json.loads(r.stdout)}
    assert ("rouge1", "declarative") in results
    empty = _cli("--campaign", "99", "--db", str(db_path))
    assert empty.returncode == 1 and "no campaign 99" in empty.stderr


def test_publishing_is_atomic_records_provenance_and_regrades(db_path, small_files, monkeypatch):
    from medeval.engine import thresholds as th
    from medeval.calibration.cutoffs import publish

    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        res = auth.add_user(db, "res", "correct horse battery", "researcher")
        doc = auth.add_user(db, "doc", "correct horse battery", "annotator")
        before = th.active(db).version
        c = calibrate("rouge1", "declarative", [0.1, 0.4, 0.6, 0.9], [0, 1, 1, 2], n_boot=0)
        undefined = calibrate("bleu1", "declarative", [0.1], [0], n_boot=0)
        with pytest.raises(PermissionDenied):
            publish(db, [c], name="x", actor=doc)
        with pytest.raises(MedevalError, match="nothing to publish"):
            publish(db, [undefined], name="x", actor=res)
        # a failure half-way (while regrading) leaves everything as it was
        grades_before = db.conn.execute("SELECT count(*) FROM grades").fetchone()[0]
        monkeypatch.setattr(th, "grade_db_in_tx", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("disk full")))
        with pytest.raises(RuntimeError):
            publish(db, [c], name="round 1", actor=res)
        assert th.active(db).version == before and len(th.list_sets(db)) == before
        assert db.conn.execute("SELECT count(*) FROM grades").fetchone()[0] == grades_before
        monkeypatch.undo()
        v = publish(db, [c, undefined], name="round 1", actor=res, source={"campaign": 7})
        ts = th.active(db)
        assert ts.version == v and ts.cutoffs[("rouge1", "declarative")] == (0.25, 0.75)
        assert ts.cutoffs[("bleu1", "declarative")] == th.TABLE12.cutoffs[("bleu1", "declarative")]  # kept
        p = ts.provenance
        assert p["calibrated"] and p["base_version"] == before and p["source"] == {"campaign": 7}
        assert p["strata"][0]["criterion"] == "kappa" and p["strata"][0]["n"] == 4 and ts.created_by == "res"
        # every score is graded under the new version, with its cut-offs
        for score, t in db.conn.execute(
                "SELECT s.score, g.tier FROM grades g JOIN scores s ON s.response_id = g.response_id AND "
                "s.metric = g.metric JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id "
                "WHERE g.version = ? AND g.metric = 'rouge1' AND k.aspect_type = 'declarative'", (v,)):
            assert t == tier(score, 0.25, 0.75)
        assert auth.audit_rows(db)[-1]["action"] == "thresholds.publish"
