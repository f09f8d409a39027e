"""Metrics in three layers: hand-computed cases, edge cases, golden comparisons with rouge-score and nltk."""

import math
import random

import pytest
from hypothesis import given, settings, strategies as st
from nltk.translate.bleu_score import sentence_bleu
from rouge_score import rouge_scorer

from medeval.core.errors import MedevalError
from medeval.engine.metrics import bleu1, exact_match, get_metric, metrics_for, overlap_scores, rouge1
from medeval.engine.tokenize import Tokenizer, tokenize

ZH_REF, ZH_CAND = "咳嗽;打喷嚏;流鼻涕;发热", "主要症状为咳嗽、流涕和发烧"
EN_REF, EN_CAND = "cough, sneezing, runny nose and fever", "The main symptoms are cough, runny nose and a high fever."


def test_tokenizer_chinese_latin_numbers():
    assert tokenize("咳嗽;打喷嚏") == ["咳", "嗽", "打", "喷", "嚏"]
    assert tokenize("患者CRP升高, 白细胞10.5") == ["患", "者", "crp", "升", "高", "白", "细", "胞", "10.5"]
    assert tokenize("３９．５℃") == ["39.5", "c"]  # NFKC: full-width digits, ℃ -> °c
    assert tokenize("") == [] and tokenize("；、。") == []


def test_rouge_score_default_tokenizer_silently_zero_but_ours_is_not():
    default = rouge_scorer.RougeScorer(["rouge1"]).score(ZH_REF, ZH_CAND)["rouge1"]
    assert default.fmeasure == 0.0
    assert rouge1(ZH_REF, ZH_CAND).fmeasure > 0.4


def test_hand_computed_chinese():
    # candidate tokens: 主要症状为咳嗽流涕和发烧 = 12; reference: 咳嗽打喷嚏流鼻涕发热 = 10; overlap 咳 嗽 流 涕 发 = 5
    s = rouge1(ZH_REF, ZH_CAND)
    assert s.precision == 5 / 12 and s.recall == 5 / 10
    assert s.fmeasure == pytest.approx(2 * (5 / 12) * 0.5 / (5 / 12 + 0.5), abs=1e-15)
    assert bleu1(ZH_REF, ZH_CAND) == 5 / 12  # candidate longer: no brevity penalty
    # swapped: the candidate (10 tokens) is shorter than the reference (12): BP = exp(1 - 12/10)
    assert bleu1(ZH_CAND, ZH_REF) == pytest.approx(0.5 * math.exp(1 - 12 / 10), abs=1e-15)


def test_hand_computed_english():
    s = rouge1(EN_REF, EN_CAND)
    # ref: cough sneezing runny nose and fever (6); cand: the main symptoms are cough runny nose and a high fever (11)
    assert (s.precision, s.recall) == (5 / 11, 5 / 6)
    assert bleu1(EN_REF, EN_CAND) == pytest.approx(5 / 11, abs=1e-15)


def test_clipping_of_repeated_tokens():
    # candidate repeats 咳 four times; only one is in the reference
    assert bleu1("咳嗽", "咳咳咳咳") == pytest.approx(1 / 4, abs=1e-15)
    assert rouge1("咳嗽", "咳咳咳咳").recall == 1 / 2


@pytest.mark.parametrize("ref,cand", [("咳嗽", ""), ("", "咳嗽"), ("", ""), ("咳嗽", "骨折"), ("；", "。")])
def test_edge_cases_defined_zero(ref, cand):
    s = rouge1(ref, cand)
    assert (s.precision, s.recall, s.fmeasure) == (0.0, 0.0, 0.0)
    assert bleu1(ref, cand) == 0.0


def test_identical_texts_score_one():
    assert rouge1(ZH_REF, ZH_REF).fmeasure == 1.0
    assert bleu1(ZH_REF, ZH_REF) == 1.0


def _pairs(n, seed=7):
    rng = random.Random(seed)
    vocab = list("咳嗽发热头痛腹泻呕吐胸闷气短乏力皮疹关节肿痛") + ["crp", "ct", "10.5", "mri", "ecg"]
    seps = ["", "、", "；", ",", " "]
    out = []
    for _ in range(n):
        a = "".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(0, 25)))
        b = "".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(0, 25)))
        out.append((a, b))
    return out


def test_equals_rouge_score_with_same_tokenizer():
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer())
    for ref, cand in _pairs(2000) + [(ZH_REF, ZH_CAND), (EN_REF, EN_CAND)]:
        want = scorer.score(ref, cand)["rouge1"]  # score(target, prediction)
        got = rouge1(ref, cand)
        assert (got.precision, got.recall, got.fmeasure) == (want.precision, want.recall, want.fmeasure)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_equals_nltk_bleu1():
    for ref, cand in _pairs(2000) + [(ZH_REF, ZH_CAND), (ZH_CAND, ZH_REF), (EN_REF, EN_CAND)]:
        r, c = tokenize(ref), tokenize(cand)
        want = sentence_bleu([r], c, weights=(1,)) if c else 0.0
        assert bleu1(ref, cand) == pytest.approx(want, abs=1e-12), (ref, cand)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="咳嗽发热头痛ab 1.;、", max_size=30), st.text(alphabet="咳嗽发热头痛ab 1.;、", max_size=30))
def test_properties(ref, cand):
    s, b = overlap_scores(tokenize(ref), tokenize(cand))
    assert 0.0 <= s.precision <= 1.0 and 0.0 <= s.recall <= 1.0 and 0.0 <= s.fmeasure <= 1.0
    assert 0.0 <= b <= s.precision + 1e-12  # brevity penalty never raises BLEU above precision
    swapped = rouge1(cand, ref)
    assert swapped.fmeasure == pytest.approx(s.fmeasure) and swapped.precision == s.recall


def test_exact_match():
    assert exact_match("2", "危重等级为2级") == 1.0
    assert exact_match("2", "属于二级") == 1.0
    assert exact_match("2", "3级") == 0.0
    assert exact_match("2", "无法判断") == 0.0
    assert exact_match(3, "３") == 1.0


def test_registry_and_did_you_mean():
    assert get_metric("ROUGE-1").name == "rouge1" and get_metric("bleu").name == "bleu1"
    assert metrics_for("numeric") == ["exact_match"]
    assert set(metrics_for("enumerated")) == {"bleu1", "rouge1", "cosine"}
    with pytest.raises(MedevalError, match="Did you mean"):
        get_metric("cosin")
