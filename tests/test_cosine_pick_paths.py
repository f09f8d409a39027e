"""Every reader of raw cosine scores takes, per response, the one score the set's grading takes.

One small database holds cosine scores of one local model under several ids: most responses under
``st:m3e-base:aa+t2s`` only, one also under ``st:m3e-base:aa`` (scored without the traditional -> simplified
conversion) with a very different value, one also under a second fingerprint ``st:m3e-base:bb+t2s`` (a tie: the set
names neither), one under ``st:m3e-base:aa`` only, and one also under another model. The set records the
conversion, so grading (``th.grade_db``) takes the ``+t2s`` score of the response scored both ways and leaves the
tied response's cosine ungraded. Each path is checked against those stored grades: the calibration's rows, the
live tuning index, the report's t-test inputs, the bucket sampling pool and the demo clinicians' quality.
"""

from __future__ import annotations

import numpy as np
import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation.campaigns import sampling as smp
from medeval.calibration import cutoffs as cal
from medeval.calibration import tuning
from medeval.demo import clinicians as sc
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports import tier_report
from tests.conftest import write
from tests.test_validation import ANSWERS, KB, MODELS

PW = "correct horse battery"
ANNOTATORS = ("pa", "pb")
T2S, PLAIN, OTHER_PRINT = "st:m3e-base:aa+t2s", "st:m3e-base:aa", "st:m3e-base:bb+t2s"


def _types(db) -> dict[int, str]:
    return dict(db.conn.execute("SELECT r.id, k.aspect_type FROM responses r JOIN kb_entries k ON k.id = r.kb_id"))


def _rid(db, model, disease, aspect) -> int:
    return db.conn.execute("SELECT r.id FROM responses r JOIN models m ON m.id = r.model_id JOIN kb_entries k ON "
                           "k.id = r.kb_id WHERE m.name = ? AND k.disease = ? AND k.aspect = ?",
                           (model, disease, aspect)).fetchone()[0]


@pytest.fixture
def two_ways(db, tmp_path):
    """36 responses (27 text), BLEU-1/ROUGE-1/exact match scored, cosine inserted under the ids above; a set for
    ``other/m3e-base`` recording the conversion, stored and graded. Returns (db, version, special response ids)."""
    rows = "\n".join(f"{m},{d},{a},{t}" for m, answers in ANSWERS.items() for (d, a), t in answers.items())
    import_files(db, kb=write(tmp_path / "kb.csv", KB), models=write(tmp_path / "models.csv", MODELS),
                 responses=write(tmp_path / "responses.csv", "model,disease,aspect,response\n" + rows + "\n"))
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    (tok,) = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'bleu1'")}
    types = _types(db)
    text = sorted(r for r, t in types.items() if t != "numeric")
    rng = np.random.default_rng(3)
    cosine = {rid: round(float(rng.uniform(0.2, 0.9)), 4) for rid in text}
    special = {"both": _rid(db, "Poor", "感冒", "Primary Symptoms"),  # with and without +t2s
               "tie": _rid(db, "Poor", "肺炎", "Primary Symptoms"),  # two fingerprints, both +t2s
               "plain": _rid(db, "Half", "感冒", "Physical Examinations"),  # only without +t2s
               "elsewhere": _rid(db, "Good", "糖尿病", "Primary Symptoms")}  # also another model's score
    cosine[special["both"]] = 0.1  # tier 0 under any cosine cut-off of Table 12; the plain score 0.95 is tier 2
    rows = [(rid, T2S, s) for rid, s in cosine.items() if rid != special["plain"]]
    rows += [(special["both"], PLAIN, 0.95), (special["tie"], OTHER_PRINT, 0.85),
             (special["plain"], PLAIN, cosine[special["plain"]]), (special["elsewhere"], "BAAI/bge-m3", 0.01)]
    db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'cosine', ?, ?)", rows)
    db.conn.commit()
    ts = th.ThresholdSet(name="local model, converted", cutoffs=dict(th.TABLE12.cutoffs), tokenizer=tok,
                         embedding_model="other/m3e-base+t2s")
    assert th.cosine_pick(ts, [T2S, PLAIN]) == (T2S, [])
    assert th.cosine_pick(ts, [T2S, OTHER_PRINT]) == (None, [T2S, OTHER_PRINT])
    v = th.store(db, ts, created_by="test")
    th.activate(db, v)
    th.grade_db(db, v)
    for name in ANNOTATORS:
        auth.add_user(db, name, PW, "annotator")
    return db, v, special


def _graded(db, version) -> dict[int, tuple[str, float, int]]:
    """Response -> (scorer, score, tier) of its stored cosine grade under ``version``."""
    return {rid: (scorer, score, tier) for rid, scorer, score, tier in db.conn.execute(
        "SELECT g.response_id, g.scorer, s.score, g.tier FROM grades g JOIN scores s ON s.response_id = "
        "g.response_id AND s.metric = g.metric AND s.scorer = g.scorer WHERE g.version = ? AND g.metric = 'cosine'",
        (version,))}


def test_grading_takes_the_recorded_conversion_and_leaves_a_tie_out(two_ways):
    db, v, special = two_ways
    graded = _graded(db, v)
    assert graded[special["both"]] == (T2S, 0.1, 0)
    assert graded[special["plain"]][0] == PLAIN
    assert special["tie"] not in graded
    assert len(graded) == 26  # 27 text responses, less the tie


def test_calibration_rows_hold_the_picked_cosine_once_per_grade(two_ways):
    """``campaign_rows``: one cosine row per annotator's grade, with the score the set grades (the ``+t2s`` 0.1,
    never also 0.95); the tied response has no cosine row. Calibration no longer meets two cosine scores of one
    item ("one item has one score per metric")."""
    db, v, special = two_ways
    cid = cp.create_random_campaign(db, "cal", 36, list(ANNOTATORS), k=2, seed=5, actor=None)
    for name in ANNOTATORS:
        u = auth.get_user(db, name)
        while (item := cp.next_item(db, u, cid)) is not None:
            cp.submit_grade(db, u, item, tier=item % 3, client_token=f"{name}-{item}")
    rid_of = dict(db.conn.execute("SELECT id, response_id FROM campaign_items WHERE campaign_id = ?", (cid,)))
    assert set(rid_of.values()) == set(_types(db))  # every response is in the campaign
    rows = [r for r in cal.campaign_rows(db, cid, version=v) if r["metric"] == "cosine"]
    per_response: dict[int, list[float]] = {}
    for r in rows:
        per_response.setdefault(rid_of[int(r["item"])], []).append(r["score"])
    graded = _graded(db, v)
    ts = th.load(db, v)
    assert set(per_response) == set(graded)
    types = _types(db)
    for rid, scores in per_response.items():
        assert scores == [graded[rid][1]] * len(ANNOTATORS)  # once per annotator, the graded score
        assert ts.grade("cosine", types[rid], scores[0]) == graded[rid][2]
    assert per_response[special["both"]] == [0.1, 0.1]
    cal.calibrate_rows(cal.campaign_rows(db, cid, version=v), n_boot=0)  # raised "two different cosine scores"
    one = [r for r in cal.campaign_rows(db, cid, version=v, consensus="majority") if r["metric"] == "cosine"]
    assert sorted(rid_of[int(r["item"])] for r in one) == sorted(graded)  # one row per item


def test_tuning_counts_equal_the_stored_grades(two_ways):
    """The live tuning index counts each response once, by the picked score: its tier counts under the set's own
    cut-offs equal the stored grades', per model and aspect type."""
    db, v, special = two_ways
    index = tuning.ScoreIndex.load(db, v)
    ts = th.load(db, v)
    types = _types(db)
    model_of = dict(db.conn.execute("SELECT r.id, m.name FROM responses r JOIN models m ON m.id = r.model_id"))
    graded = _graded(db, v)
    for model in index.models:
        for atype in ("enumerated", "declarative"):
            want = np.zeros(3, dtype=np.int64)
            for rid, (_s, _score, tier) in graded.items():
                if model_of[rid] == model and types[rid] == atype:
                    want[tier] += 1
            got = index.counts("cosine", atype, *ts.cutoffs[("cosine", atype)], model=model)
            assert got.tolist() == want.tolist(), (model, atype)
    poor = index.arrays[("cosine", "enumerated", "Poor")]
    assert 0.1 in poor and 0.95 not in poor and 0.85 not in poor
    assert sum(len(a) for k, a in index.arrays.items() if k[0] == "cosine") == len(graded)


def test_ttest_inputs_are_the_graded_scores(two_ways):
    """The report's Welch t-tests (Poor, medical, against its backbone Good) read one cosine score per response:
    per aspect, the scores whose grades the report counts."""
    db, v, special = two_ways
    rep = tier_report.build_report(db, v)
    graded = _graded(db, v)
    key = dict(db.conn.execute("SELECT r.id, m.name || '|' || k.aspect FROM responses r JOIN models m ON "
                               "m.id = r.model_id JOIN kb_entries k ON k.id = r.kb_id"))
    by: dict[str, list[float]] = {}
    for rid, (_s, score, _t) in graded.items():
        by.setdefault(key[rid], []).append(score)
    rows = {r["aspect"]: r for r in rep["ttests"] if r["metric"] == "cosine"}
    assert rows
    for aspect, r in rows.items():
        a, b = by.get(f"Poor|{aspect}", []), by.get(f"Good|{aspect}", [])
        assert (r["n_medical"], r["n_backbone"]) == (len(a), len(b)), aspect
        assert r["mean_medical"] == pytest.approx(np.mean(a)) and r["mean_backbone"] == pytest.approx(np.mean(b))
    # Primary Symptoms: Poor's three responses, less the tie; the one scored both ways by its +t2s score
    ps = rows["Primary Symptoms"]
    assert ps["n_medical"] == 2 and ps["n_backbone"] == 3
    # the counts the report shows come from the same grades
    counts = tier_report.tier_counts(db, v)
    for aspect in rows:
        for model in ("Poor", "Good"):
            assert sum(counts.get((model, aspect, "cosine"), {}).values()) == len(by.get(f"{model}|{aspect}", []))


def test_sampling_pool_has_each_response_once_with_the_picked_score(two_ways):
    db, v, special = two_ways
    ts = th.load(db, v)
    graded = _graded(db, v)
    types = _types(db)
    for atype in ("enumerated", "declarative"):
        pool = smp.stratum_pool(db, ts, "cosine", atype)
        rids = [rid for rid, _ in pool]
        assert len(rids) == len(set(rids))
        assert dict(pool) == {rid: g[1] for rid, g in graded.items() if types[rid] == atype}
    pool = dict(smp.stratum_pool(db, ts, "cosine", "enumerated"))
    assert pool[special["both"]] == 0.1 and special["tie"] not in pool
    # the bucket sample draws from it: the tied response is never sampled for cosine
    chosen, report = smp.sample_buckets(db, cp.BucketConfig(metrics=("cosine",), aspect_types=("enumerated",),
                                                            width=0.1, per_interval=50, k=1, seed=1))
    assert special["tie"] not in chosen and special["both"] in chosen
    assert sum(r["available"] for r in report) == len(pool)


def test_demo_quality_uses_the_picked_cosine(two_ways):
    db, v, special = two_ways
    ts = th.load(db, v)
    types = _types(db)

    def expected(rid, cosine):
        pos = [sc.position(m, types[rid], s) for m, s in db.conn.execute(
            "SELECT metric, score FROM scores WHERE response_id = ? AND metric IN ('bleu1', 'rouge1')", (rid,))]
        if cosine is not None:
            pos.append(sc.position("cosine", types[rid], cosine))
        return float(np.mean(pos))

    assert sc.quality(db, special["both"], ts) == pytest.approx(expected(special["both"], 0.1))
    assert sc.quality(db, special["tie"], ts) == pytest.approx(expected(special["tie"], None))
    plain = _graded(db, v)[special["plain"]][1]
    assert sc.quality(db, special["plain"], ts) == pytest.approx(expected(special["plain"], plain))
