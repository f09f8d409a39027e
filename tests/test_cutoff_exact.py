"""Scores and totals exactly on a cut-off (issue 21 §1): one rule everywhere, a value on a cut-off reaches it.

The cases are real reference/candidate texts whose ROUGE-1 F1 or BLEU-1 is *mathematically* a Table 12 cut-off
(checked here with exact fractions from the token counts, independently of medeval's arithmetic); ROUGE-1 F1,
computed as 2PR/(P+R) -- as rouge-score does, and medeval stores rouge-score's value -- lands a hair below
(0.7499999999999999 for P = 3/5, R = 1). Each must get the upper tier through every path that compares a score
with a cut-off: ``thresholds.tier``, the SQL of ``grade_db`` on a real database, the calibration search and its
bootstrap, the tuning workspace's live counts, the active-sampling intervals and stopping rule. Level bands are
checked with tier counts whose float total used to be 3.4999999999999996, 2.9999999999999996, 1.9999999999999998.
"""

from __future__ import annotations

import math
import random
import sqlite3
from collections import Counter
from fractions import Fraction

import numpy as np
import opencc
import pytest
from hypothesis import given, settings, strategies as st
from rouge_score import rouge_scorer

from medeval.calibration import active, cutoffs as cal, tuning
from medeval.core.errors import MedevalError
from medeval.engine import thresholds as th
from medeval.engine import totals
from medeval.engine.importer import import_files
from medeval.engine.metrics import bleu1, rouge1
from medeval.engine.scoring import score_db
from medeval.engine.tokenize import Tokenizer, scoring_tokenizer

TABLE12 = th.TABLE12.cutoffs
S2T = opencc.OpenCC("s2t")

# ---------------------------------------------------------------- building texts with exact token counts

# (findings and drugs only: a hedge such as 也许 or "maybe" is no entity, and the list splitter drops it)
ZH_TERMS = ["咳嗽", "发热", "头痛", "乏力", "恶心", "呕吐", "腹泻", "胸闷", "气短", "皮疹", "咽痛", "流涕", "鼻塞", "盗汗",
            "消瘦", "黄疸", "水肿", "心悸", "眩晕", "失眠", "便秘", "尿频", "咯血", "抽搐", "昏迷", "关节僵硬", "肌肉酸",
            "阿司匹林", "布洛芬", "青霉素", "二甲双胍", "胰岛素", "嗜睡", "鼻衄", "咯痰", "晕厥", "耳鸣", "视物模糊", "口渴",
            "多饮", "烦躁", "焦虑", "贫血", "紫癜", "瘙痒", "腰背", "体重下降", "食欲差", "畏寒", "寒战", "淋巴结", "肿大",
            "甲状腺", "肝脾", "骨折", "外伤", "血栓", "栓塞", "卒中", "偏瘫", "失语", "吞咽困难", "声嘶", "喘息", "哮鸣音",
            "痒", "麻", "胀", "冷", "痰", "渴", "闷", "喘", "疹", "瘀", "疣", "癣", "疥", "痔", "疝", "痫"]
EN_TERMS = ["fever", "cough", "headache", "fatigue", "nausea", "vomiting", "diarrhea", "dyspnea", "rash", "myalgia",
            "arthralgia", "rhinorrhea", "chills", "sweats", "jaundice", "edema", "palpitations", "dizziness",
            "insomnia", "constipation", "hematuria", "hemoptysis", "seizures", "syncope", "tinnitus", "pruritus",
            "anemia", "aspirin", "ibuprofen", "penicillin", "metformin", "insulin", "amoxicillin", "prednisone",
            "sneezing", "bloating", "cramps", "wheezing", "hoarseness", "dysphagia", "weakness", "anorexia", "pallor",
            "lymphadenopathy", "splenomegaly", "hepatomegaly", "ascites", "cyanosis", "tachycardia", "bradycardia",
            "hypertension", "hypotension", "confusion", "delirium", "tremor", "ataxia", "aphasia", "ptosis"]


def _pick(k: int, pool: list[str], used: set[str], rng: random.Random, tok) -> list[str]:
    """Terms from ``pool`` with exactly ``k`` tokens in all, none sharing a token with ``used`` (then used)."""
    terms = pool[:]
    rng.shuffle(terms)
    out, n = [], 0
    for t in terms:
        toks = tok(t)
        if n + len(toks) > k or set(toks) & used or len(set(toks)) != len(toks):
            continue
        out.append(t)
        used.update(toks)
        n += len(toks)
        if n == k:
            return out
    raise AssertionError(f"the term pool cannot give {k} distinct tokens")


def make_pair(overlap: int, n_ref: int, n_cand: int, style: str, seed: int) -> tuple[str, str]:
    """(reference, candidate): ``overlap`` shared tokens, ``n_ref`` / ``n_cand`` tokens in all, no repeats."""
    rng, tok, used = random.Random(seed), scoring_tokenizer(), set()
    pool = EN_TERMS if style == "en" else ZH_TERMS
    shared = _pick(overlap, pool, used, rng, tok)
    ref_only = _pick(n_ref - overlap, pool, used, rng, tok) if n_ref > overlap else []
    cand_only = _pick(n_cand - overlap, pool, used, rng, tok) if n_cand > overlap else []
    ref, cand = shared + ref_only, shared + cand_only
    rng.shuffle(ref)
    rng.shuffle(cand)
    if style == "en":
        return "; ".join(ref), ", ".join(t.capitalize() if i == 0 else t for i, t in enumerate(cand))
    cand_text = "、".join(cand)
    if style == "zh-traditional":  # the model answers in traditional Chinese; OpenCC t2s makes the tokens match
        cand_text = S2T.convert(cand_text)
    return "；".join(ref), cand_text


def exact_rouge1(ref: str, cand: str) -> Fraction:
    """ROUGE-1 F1 from the token counts, in exact arithmetic: 2·overlap / (|ref| + |cand|)."""
    r, c = scoring_tokenizer()(ref), scoring_tokenizer()(cand)
    overlap = sum((Counter(r) & Counter(c)).values())
    return Fraction(2 * overlap, len(r) + len(c))


def exact_bleu1(ref: str, cand: str) -> Fraction | None:
    """BLEU-1 in exact arithmetic when it is rational (no brevity penalty: |cand| >= |ref|), else None."""
    r, c = scoring_tokenizer()(ref), scoring_tokenizer()(cand)
    if len(c) < len(r):
        return None
    return Fraction(sum((Counter(r) & Counter(c)).values()), len(c))


def _counts_for(cut: float, limit: int = 40, below: bool = True) -> list[tuple[int, int, int]]:
    """Every (overlap, |ref|, |cand|) up to ``limit`` tokens whose F1 is exactly ``cut`` and, computed as
    2PR/(P+R), lands below it (``below``) or on it."""
    out = []
    for n_ref in range(1, limit + 1):
        for n_cand in range(1, limit + 1):
            for o in range(1, min(n_ref, n_cand) + 1):
                if Fraction(2 * o, n_ref + n_cand) != Fraction(str(cut)):
                    continue
                p, r = o / n_cand, o / n_ref
                if (2 * p * r / (p + r) < cut) == below:
                    out.append((o, n_ref, n_cand))
    return out


STYLES = ("zh", "en", "zh-traditional")
ROUGE_CUTS = sorted({c for (m, _), pair in TABLE12.items() if m == "rouge1" for c in pair})  # 0.05, 0.55, 0.75
BLEU_CUTS = sorted({c for (m, _), pair in TABLE12.items() if m == "bleu1" for c in pair})  # 0.05, 0.25, 0.45


def _rouge_cases() -> list[tuple[float, str, str, str]]:
    cases = []
    for cut in ROUGE_CUTS:
        for i, (o, nr, nc) in enumerate(sorted(_counts_for(cut), key=lambda t: t[1] + t[2])[:4]):
            style = STYLES[i % 3]
            ref, cand = make_pair(o, nr, nc, style, seed=i)
            cases.append((cut, style, ref, cand))
    return cases


def _bleu_cases() -> list[tuple[float, str, str, str]]:
    cases = []
    for cut in BLEU_CUTS:
        f = Fraction(str(cut))
        for i, (o, nc) in enumerate([(f.numerator * k, f.denominator * k) for k in (1, 2)]):
            for j, nr in enumerate(sorted({max(o, 1), nc})):  # brevity penalty 1: |cand| >= |ref|
                style = STYLES[(i + j) % 3]
                ref, cand = make_pair(o, nr, nc, style, seed=10 * i + j)
                cases.append((cut, style, ref, cand))
    return cases


ROUGE_CASES = _rouge_cases()
BLEU_CASES = _bleu_cases()


def test_the_cases_are_what_they_claim():
    # the search finds the example and cases for every ROUGE-1 cut-off of Table 12
    assert (3, 3, 5) in _counts_for(0.75)  # P = 3/5, R = 1
    assert {c for c, *_ in ROUGE_CASES} == {0.05, 0.55, 0.75} and len(ROUGE_CASES) == 12
    assert {c for c, *_ in BLEU_CASES} == {0.05, 0.25, 0.45} and len(BLEU_CASES) >= 9
    for cut, style, ref, cand in ROUGE_CASES:
        assert exact_rouge1(ref, cand) == Fraction(str(cut)), (ref, cand)
        assert rouge1(ref, cand).fmeasure < cut  # the floating-point value lands below the cut-off
    for cut, style, ref, cand in BLEU_CASES:
        assert exact_bleu1(ref, cand) == Fraction(str(cut)), (ref, cand)
    trad = [cand for _, style, _, cand in ROUGE_CASES if style == "zh-traditional"]
    assert trad and all(S2T.convert(c) == c for c in trad) and any(c != opencc.OpenCC("t2s").convert(c) for c in trad)


@pytest.mark.parametrize("cut,style,ref,cand", ROUGE_CASES, ids=[f"{c}-{s}-{i}" for i, (c, s, *_) in enumerate(ROUGE_CASES)])
def test_rouge1_on_a_cut_off_is_stored_as_rouge_score_and_graded_upper(cut, style, ref, cand):
    want = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer()).score(ref, cand)["rouge1"].fmeasure
    got = rouge1(ref, cand).fmeasure
    assert got == want and got < cut  # the stored value is rouge-score's, unrounded
    for atype in ("enumerated", "declarative"):
        low, high = TABLE12[("rouge1", atype)]
        if cut in (low, high):
            assert th.TABLE12.grade("rouge1", atype, got) == (1 if cut == low else 2)
            assert th.tier(got, low, high) == th.tier(cut, low, high)
            assert th.tier(cut - 1e-9, low, high) == th.tier(cut, low, high) - 1  # a real difference still counts


@pytest.mark.parametrize("cut,style,ref,cand", BLEU_CASES, ids=[f"{c}-{s}-{i}" for i, (c, s, *_) in enumerate(BLEU_CASES)])
def test_bleu1_on_a_cut_off_reaches_it(cut, style, ref, cand):
    # BLEU-1 without brevity penalty is one correctly rounded division: it lands on the cut-off's float itself
    got = bleu1(ref, cand)
    assert got == cut
    for atype in ("enumerated", "declarative"):
        low, high = TABLE12[("bleu1", atype)]
        if cut in (low, high):
            assert th.TABLE12.grade("bleu1", atype, got) == (1 if cut == low else 2)


@pytest.mark.parametrize("cut", sorted({c for pair in TABLE12.values() for c in pair}))
def test_every_table12_cut_off_with_float_noise_either_side(cut):
    for (metric, atype), (low, high) in TABLE12.items():
        if cut not in (low, high):
            continue
        upper = 2 if cut == high else 1
        for noisy in (cut, math.nextafter(cut, -2), math.nextafter(math.nextafter(cut, -2), -2), cut - 4e-16,
                      cut + 4e-16, cut - 4.9e-10):
            assert th.TABLE12.grade(metric, atype, noisy) == upper, (metric, atype, noisy)
        assert th.TABLE12.grade(metric, atype, cut - 6e-10) == (upper - 1 if low < high else 0)


def test_cosine_cut_offs_from_float64_vectors():
    # integer vectors with integer norms: the cosine is exactly the cut-off; normalised float64 vectors'
    # dot product lands within an ulp or two of it (the real backends return float32: see cutoff_rule)
    vectors = {0.35: ((0, 0, 1, 0, 0), (1, 18, 7, 5, 1)), 0.55: ((0, 0, 1, 0, 0), (15, 7, 11, 2, 1)),
               0.65: ((0, 0, 1, 0, 0), (15, 2, 13, 1, 1)), 0.75: ((0, 0, 1, 0, 0), (2, 1, 3, 1, 1))}
    for cut, (a, b) in vectors.items():
        a, b = np.array(a, dtype=float), np.array(b, dtype=float)
        assert Fraction(int(a @ b)) / Fraction(int(round(math.sqrt(a @ a))) * int(round(math.sqrt(b @ b)))) \
            == Fraction(str(cut))
        score = float((a / np.linalg.norm(a)) @ (b / np.linalg.norm(b)))
        assert abs(score - cut) < 1e-15
        for (metric, atype), (low, high) in TABLE12.items():
            if metric == "cosine" and cut in (low, high):
                assert th.TABLE12.grade("cosine", atype, score) == (2 if cut == high else 1)


# ---------------------------------------------------------------- the same through the database

def _case_files(tmp_path, cases):
    kb = ["disease,aspect,reference"]
    resp = ["model,disease,aspect,response"]
    for i, (aspect, ref, cand) in enumerate(cases):
        kb.append(f'病例{i},{aspect},"{ref}"')
        resp.append(f'ModelX,病例{i},{aspect},"{cand}"')
    (tmp_path / "kb.csv").write_text("\n".join(kb) + "\n", encoding="utf-8")
    (tmp_path / "r.csv").write_text("\n".join(resp) + "\n", encoding="utf-8")
    (tmp_path / "m.csv").write_text("model,backbone,kind\nModelX,,general\n", encoding="utf-8")
    return {"kb": tmp_path / "kb.csv", "responses": tmp_path / "r.csv", "models": tmp_path / "m.csv"}


def test_grade_db_puts_scores_on_a_cut_off_in_the_upper_tier(db, tmp_path):
    cases = []
    for cut, style, ref, cand in ROUGE_CASES + BLEU_CASES:
        for aspect in ("Primary Symptoms", "Physical Examinations"):  # enumerated, declarative
            cases.append((aspect, ref, cand))
    import_files(db, **_case_files(tmp_path, cases))
    score_db(db, metrics=["bleu1", "rouge1"])
    th.grade_db(db)
    rows = db.conn.execute(
        "SELECT k.aspect_type, k.reference, r.processed, s.metric, s.score, g.tier FROM scores s "
        "JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id JOIN grades g ON "
        "g.response_id = s.response_id AND g.metric = s.metric AND g.version = 1").fetchall()
    assert len(rows) == 2 * len(cases)
    on_cut = 0
    for atype, ref, processed, metric, score, tier_ in rows:
        exact = exact_rouge1(ref, processed) if metric == "rouge1" else exact_bleu1(ref, processed)
        if metric == "rouge1":
            want = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer()).score(ref, processed)["rouge1"]
            assert score == want.fmeasure  # stored unrounded, identical to rouge-score
        low, high = TABLE12[(metric, atype)]
        assert tier_ == th.tier(score, low, high)  # SQL == Python
        if exact is not None:  # the mathematical tier: where the exact fraction falls in Table 12's intervals
            assert tier_ == (0 if exact < Fraction(str(low)) else 1 if exact < Fraction(str(high)) else 2)
            on_cut += exact in (Fraction(str(low)), Fraction(str(high)))
    assert on_cut >= len(ROUGE_CASES)  # at least the designed cases sit exactly on a cut-off
    from medeval.reports.tier_report import build_report

    notes = " ".join(build_report(db, 1)["notes"])
    assert "after rounding both to 9 decimals" in notes and "exactly on a cut-off reaches it" in notes
    assert "≥ 3.5 → 1, ≥ 3.0 → 2, ≥ 2.0 → 3, else 4" in notes and "medeval's own level bands" in notes

    # the tuning workspace counts the same tiers as the grades, under Table 12 and under cut-offs on the scores
    index = tuning.ScoreIndex.load(db, 1)
    for (metric, atype), (low, high) in TABLE12.items():
        if metric not in ("bleu1", "rouge1"):
            continue
        graded = Counter(t for a, _, _, m, _, t in rows if m == metric and a == atype)
        assert index.counts(metric, atype, low, high).tolist() == [graded[0], graded[1], graded[2]]
        scores = np.array([s for a, _, _, m, s, _ in rows if m == metric and a == atype])
        assert tuning.regrade(scores, low, high).tolist() == [th.tier(s, low, high) for s in scores]


def test_interval_sampling_puts_a_score_on_an_interval_end_in_the_interval_it_starts(db, tmp_path):
    # the paper's calibration design samples per 0.1 score interval: ROUGE-1 F1s of exactly 0.2, 0.4 and 0.8
    # that land a hair below belong to [0.2, 0.3), [0.4, 0.5) and [0.8, 0.9)
    from medeval.annotation.campaigns.sampling import BucketConfig, sample_buckets

    cases = []
    for k, style in ((2, "zh"), (4, "en"), (8, "zh-traditional")):
        o, nr, nc = _counts_for(k / 10, limit=20)[0]
        ref, cand = make_pair(o, nr, nc, style, k)
        assert rouge1(ref, cand).fmeasure < k / 10
        cases.append(("Primary Symptoms", ref, cand))
    import_files(db, **_case_files(tmp_path, cases))
    score_db(db, metrics=["rouge1"])
    chosen, report = sample_buckets(db, BucketConfig(metrics=("rouge1",), aspect_types=("enumerated",),
                                                     per_interval=5, k=1))
    got = sorted(tuple(st_["interval"]) for strata in chosen.values() for st_ in strata)
    assert got == [(0.2, 0.3), (0.4, 0.5), (0.8, 0.9)]
    assert sum(r["available"] for r in report) == 3


def test_sql_compares_with_reach_bound_because_sqlite_round_is_not_pythons():
    conn = sqlite3.connect(":memory:")
    rng = random.Random(5)
    near_half = [math.nextafter((k + 0.5) / 1e9, rng.choice([-1.0, 2.0])) for k in
                 (rng.randrange(10 ** 9) for _ in range(3000))]
    disagree = [x for x in near_half if conn.execute("SELECT ROUND(?, 9)", (x,)).fetchone()[0] != round(x, 9)]
    for x in near_half:
        cut = round(x, 9)
        for c in (cut, math.nextafter(cut, 2.0), cut + 1e-9):
            sql = conn.execute("SELECT ? >= ?", (x, th.reach_bound(c))).fetchone()[0]
            assert bool(sql) == th.reaches(x, c), (x, c)
    if not disagree:
        pytest.skip(f"SQLite {sqlite3.sqlite_version}'s ROUND agrees with Python's round on these values")
    assert disagree  # why grade_db_in_tx does not use ROUND(s.score, 9)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-1, max_value=1, allow_nan=False), st.floats(min_value=-1, max_value=1, allow_nan=False),
       st.integers(min_value=-3, max_value=3))
def test_reach_bound_is_the_rule(score, cut, ulps):
    for _ in range(abs(ulps)):  # scores a few ulps around the cut-off and around the half-way point
        score = math.nextafter(score, math.copysign(2.0, ulps))
    for x in (score, cut, th.reach_bound(cut), math.nextafter(th.reach_bound(cut), -2.0)):
        assert (x >= th.reach_bound(cut)) == th.reaches(x, cut) == (round(x, 9) >= round(cut, 9))
    assert th.reaches(th.reach_bound(cut), cut) and not th.reaches(math.nextafter(th.reach_bound(cut), -2.0), cut)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-1, max_value=1, allow_nan=False), min_size=1, max_size=40))
def test_canonical_array_is_pythons_round(values):
    values = values + [round(v, 9) + 5e-10 for v in values] + [(round(v * 1e9) + 0.5) / 1e9 for v in values]
    assert th.canonical_array(values).tolist() == [round(v, 9) for v in values]


# ---------------------------------------------------------------- the calibration search and its bootstrap

def _confusion(scores, tiers, low, high) -> list[list[int]]:
    out = [[0] * 3 for _ in range(3)]
    for s, t in zip(scores, tiers):
        out[t][th.tier(s, low, high)] += 1
    return out


def test_calibration_cannot_split_equal_scores_and_grades_as_it_reports():
    # the same ROUGE-1 value 0.75 reached two ways: 0.7499999999999999 (P = 3/5, R = 1) and 0.75 (6 of 8 / 8)
    on_cut = [rouge1(ref, cand).fmeasure for c, _, ref, cand in ROUGE_CASES if c == 0.75]
    exact = rouge1(*make_pair(6, 8, 8, "zh", 1)).fmeasure
    assert exact == 0.75 and all(s < 0.75 for s in on_cut)
    # the experts happen to tier the float-low ones 1 and the exact one 2: no cut-off may separate them
    scores = np.array(on_cut + [exact, 0.5, 0.4, 0.9, 1.0, 0.02, 0.03])
    tiers = np.array([1] * len(on_cut) + [2, 1, 1, 2, 2, 0, 0])
    for criterion in cal.CRITERIA:
        c = cal.calibrate("rouge1", "enumerated", scores, tiers, criterion=criterion, n_boot=30, rng=1)
        low, high = c.cut_offs
        assert c.confusion == _confusion(scores, tiers, low, high), criterion
        assert len({th.tier(s, low, high) for s in on_cut + [exact]}) == 1  # one score under the rule
        assert low == th.canonical(low) and high == th.canonical(high)
    # Table 12's cut-offs tier every on-cut item as the experts would by the paper's intervals
    tiers_by_paper = np.array([2] * (len(on_cut) + 1) + [1, 1, 2, 2, 0, 0])
    ag = tuning.against_experts(scores, tiers_by_paper, 0.05, 0.75)
    assert ag.accuracy == 1.0 and ag.confusion == _confusion(scores, tiers_by_paper, 0.05, 0.75)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.05, 0.25, 0.45, 0.55, 0.75, 0.3, 0.6, 0.1, 0.9]),
                          st.integers(min_value=-2, max_value=2), st.integers(min_value=0, max_value=2)),
                min_size=4, max_size=30))
def test_search_and_its_fast_accuracy_path_grade_as_they_report(items):
    scores = []
    for base, ulps, _ in items:  # scores on (or float-noise around) the cut-offs
        for _ in range(abs(ulps)):
            base = math.nextafter(base, math.copysign(2.0, ulps))
        scores.append(base)
    scores, tiers = np.array(scores), np.array([t for *_, t in items])
    if len(set(tiers.tolist())) < 2:
        return
    c = cal.calibrate("rouge1", "enumerated", scores, tiers, criterion="accuracy", n_boot=0)
    assert c.confusion == _confusion(scores, tiers, *c.cut_offs)
    assert active.optimal_accuracy_cuts(scores, tiers, 0.0, 1.0) == c.cut_offs
    lo, hi = c.cut_offs
    g = tuning.regrade(scores, lo, hi)
    assert sum(int(t == a) for t, a in zip(tiers, g)) / len(tiers) == pytest.approx(c.value)


def test_bootstrap_stability_counts_a_distance_on_the_tolerance():
    # resamples move the high cut-off between 0.625 and 0.675: 0.05 apart, 0.050000000000000044 in floating point
    scores = np.array([0.02] * 6 + [0.6] * 6 + [0.65] * 5 + [0.7] * 6)
    tiers = np.array([0] * 6 + [1] * 9 + [2] * 8)
    c = cal.calibrate("rouge1", "enumerated", scores, tiers, criterion="accuracy", n_boot=200, rng=0,
                      tolerance=0.05)
    assert c.cut_offs == (0.31, 0.675) and c.bootstrap["high_ci95"] == [0.625, 0.675]
    assert 0.675 - 0.625 > 0.05 and th.reaches(0.05, 0.675 - 0.625)
    assert c.bootstrap["stable_share"] == 1.0  # a resample 0.05 away is within the tolerance


def test_active_sampling_intervals_and_stopping_rule_use_the_rule():
    # ROUGE-1 F1s of exactly 0.2 and 0.4 that land below: they belong to [0.2, 0.3) and [0.4, 0.5)
    for k, style in ((2, "zh"), (4, "en"), (8, "zh-traditional")):
        o, nr, nc = _counts_for(k / 10, limit=20)[0]
        ref, cand = make_pair(o, nr, nc, style, k)
        score = rouge1(ref, cand).fmeasure
        assert exact_rouge1(ref, cand) == Fraction(k, 10) and score < k / 10
        assert active.interval_of("rouge1", np.array([score]), 0.1).tolist() == [k]
    assert active.interval_of("cosine", np.array([0.3, 0.29999999999999993, -1.0, 1.0]), 0.1).tolist() == [13, 13, 0, 19]
    # a 95% interval exactly the target wide (0.75 - 0.7 = 0.050000000000000044 in floating point) meets it
    lows = np.array([0.7] * 3 + [0.72] * 75 + [0.75] * 3)  # 81 values: the 2.5% / 97.5% percentiles are 0.7 / 0.75
    s = active.CutoffSpread((0.72, 0.8), lows, np.full(81, 0.8), 81)
    assert s.ci95("low") == (0.7, 0.75)
    assert active.should_stop(s, n_graded=81, budget=500, target_width=0.05) == "target"
    assert active.should_stop(s, n_graded=81, budget=500, target_width=0.0499) is None


# ---------------------------------------------------------------- totals and level bands

def _naive_total(counts: list[tuple[int, int, int]]) -> float:
    """The float arithmetic of the old summarise: float shares, averaged, then 0·CW + 5·PC + 10·BC."""
    shares = [tuple(c / sum(m) for c in m) for m in counts]
    avg = [sum(s[k] for s in shares) / len(shares) for k in range(3)]
    return 0 * avg[0] + 5 * avg[1] + 10 * avg[2]


def _float_low_totals(target: Fraction, n_max: int = 8, limit: int = 6) -> list[list[tuple[int, int, int]]]:
    """Tier counts of two or three metrics whose exact total is ``target`` and whose float total lands below."""
    triples = [(a, b, n - a - b) for n in range(1, n_max + 1) for a in range(n + 1) for b in range(n + 1 - a)]
    found = []
    for k in (2, 3):
        for combo in __import__("itertools").combinations_with_replacement(triples, k):
            exact = sum(Fraction(5 * m[1] + 10 * m[2], sum(m)) for m in combo) / k
            if exact == target and _naive_total(list(combo)) < float(target):
                found.append(list(combo))
                if len(found) >= limit:
                    return found
    return found


@pytest.mark.parametrize("bound,level", [(Fraction(7, 2), 1), (Fraction(3), 2), (Fraction(2), 3)])
def test_level_bands_with_totals_exactly_on_a_bound(bound, level):
    combos = _float_low_totals(bound)
    assert len(combos) >= 3
    for combo in combos:
        by_metric = {m: {0: c[0], 1: c[1], 2: c[2]} for m, c in zip(("bleu1", "rouge1", "cosine"), combo)}
        s = totals.summarise(by_metric)["averaged"]
        assert _naive_total(combo) < float(bound)  # what the float arithmetic gave
        assert s["total_score"] == float(bound) and s["level"] == level, combo
        assert totals.level(_naive_total(combo)) == level  # and a float total a hair low still reaches it
        assert math.isclose(s["completely_wrong"] + s["partially_correct"] + s["basically_correct"], 1.0)
    assert totals.level(float(bound) - 1e-9) == level + 1  # a real difference still counts


def test_the_tuning_leaderboard_levels_a_total_on_a_bound():
    combo = _float_low_totals(Fraction(7, 2))[0]
    arrays = {}
    for metric, (cw, pc, bc) in zip(("bleu1", "rouge1", "cosine"), combo):  # scores on Table 12's enumerated cuts
        low, high = TABLE12[(metric, "enumerated")]
        arrays[(metric, "enumerated", "M")] = np.sort(np.array([low - 0.01] * cw + [low] * pc + [high] * bc))
    index = tuning.ScoreIndex(1, arrays, ["M"], {}, sum(map(sum, combo)))
    row = tuning.leaderboard(index, dict(TABLE12))[0]
    assert row["averaged"]["total_score"] == 3.5 and row["averaged"]["level"] == 1


def test_default_bands_reproduce_table4_and_sit_in_its_gaps():
    assert totals.level_bands() == totals.DEFAULT_LEVEL_BANDS == (3.5, 3.0, 2.0)
    assert totals.table4_gaps() == [(3.14, 4.0), (2.75, 3.0), (1.84, 2.2)]
    for (lo, hi), b in zip(totals.table4_gaps(), totals.DEFAULT_LEVEL_BANDS):
        assert lo < b <= hi
    assert [totals.level(t) for _, t, _ in totals.TABLE4] == [lvl for *_, lvl in totals.TABLE4]
    # Table 4's totals follow from its shares: 0·CW + 5·PC + 10·BC (GPT-3.5 27.7 % / 26.1 % -> 4.00)
    assert round(totals.total_score((0.461, 0.277, 0.261)), 2) == 4.00
    assert totals.reproduces_table4()
    assert totals.reproduces_table4((3.2, 2.9, 1.9))  # any bounds in the gaps would do as well
    assert not totals.reproduces_table4((3.0, 2.5, 2.0))  # Vicuna-7B (3.14) would rise to level 1
    assert "reproduce its grouping" in totals.levels_source_text()
    assert "do not reproduce" in totals.levels_source_text((3.0, 2.5, 2.0))


def test_level_bands_are_a_setting(monkeypatch):
    monkeypatch.setenv("MEDEVAL_LEVEL_BANDS", "4, 2.5")
    assert totals.level_bands() == (4.0, 2.5)
    assert [totals.level(t) for t in (4.0, 3.9999999999999996, 2.5, 2.4999999999999996, 2.49)] == [1, 1, 2, 2, 3]
    assert totals.levels_text() == "≥ 4.0 → 1, ≥ 2.5 → 2, else 3"
    s = totals.summarise({"bleu1": {1: 1, 2: 1}})["averaged"]
    assert s["total_score"] == 7.5 and s["level"] == 1
    for bad in ("3.0,3.5,2.0", "3.5,3.5", "high,low", "11,2", "-1", "", "3.5,,2"):
        monkeypatch.setenv("MEDEVAL_LEVEL_BANDS", bad)
        if bad == "":
            assert totals.level_bands() == (3.5, 3.0, 2.0)  # empty: the default
            continue
        with pytest.raises(MedevalError, match="MEDEVAL_LEVEL_BANDS must be decreasing total scores"):
            totals.level_bands()


def test_reports_say_what_the_bands_and_the_rule_are():
    from medeval.reports import leaderboard_report as lr

    text = lr._levels_text()
    assert "≥ 3.5 → 1, ≥ 3.0 → 2, ≥ 2.0 → 3, else 4" in text and "medeval's own level bands" in text
    assert "MEDEVAL_LEVEL_BANDS" in text and "without stating cut-offs" in text and "(3.14, 4.00]" in text
    data = {"report": {"models": [], "ttests": [], "aspects": [], "coverage": {}},
            "threshold_set": {"version": 1, "name": "T12", "tokenizer": "tok", "embedding_model": "m3e",
                              "provenance": {}}}
    para = lr.methods_paragraph(data)
    assert "after rounding both to 9 decimals" in para and "exactly on a cut-off reaches it" in para
    assert "medeval's own level bands" in para and "computed exactly from the tier counts" in para
