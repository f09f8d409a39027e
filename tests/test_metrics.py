"""Metrics in three layers: hand-computed cases, edge cases, golden comparisons with rouge-score and nltk."""

import math
import random
import warnings

import pytest
from hypothesis import given, settings, strategies as st
from nltk.translate.bleu_score import sentence_bleu
from rouge_score import rouge_scorer

from medeval.core.errors import MedevalError
from medeval.engine.metrics import bleu1, exact_match, overlap_scores, rouge1
from medeval.engine.registry import get_metric, metrics_for
from medeval.engine.tokenize import Tokenizer, tokenize

ZH_REF, ZH_CAND = "咳嗽;打喷嚏;流鼻涕;发热", "主要症状为咳嗽、流涕和发烧"
EN_REF, EN_CAND = "cough, sneezing, runny nose and fever", "The main symptoms are cough, runny nose and a high fever."


def test_tokenizer_chinese_latin_numbers():
    assert tokenize("咳嗽;打喷嚏") == ["咳", "嗽", "打", "喷", "嚏"]
    assert tokenize("患者CRP升高, 白细胞10.5") == ["患", "者", "crp", "升", "高", "白", "细", "胞", "10.5"]
    assert tokenize("３９．５℃") == ["39.5", "°", "c"]  # NFKC: full-width digits, ℃ -> °c; ° is a token
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


MEDICAL_VOCAB = ["TNF-α", "β受体", "5μg", "5µg", "≥", "≤", "＜", ">", "±", "%", "℃", "°", "HbA1c", "6.5%", "90mmHg",
                 "Ⅱ级", "高血壓", "高血压", "γ-GT", "IL-6", "μmol/L", "10⁹/L", "Δ", "κ",
                 # polarity and direction markers, their variants, superscripts and list numbers (cjk-med-v3)
                 "(+)", "(-)", "(+++)", "（＋）", "（－）", "↑", "↓↓", "⬆", "≧", "⩽", "−2.5", "10¹²", "①", "ER-", "HER2+",
                 "Mg²⁺", "cm³", "+/-", " - "]


def _pairs(n, seed=7, medical=False):
    rng = random.Random(seed)
    vocab = list("咳嗽发热头痛腹泻呕吐胸闷气短乏力皮疹关节肿痛") + ["crp", "ct", "10.5", "mri", "ecg"]
    if medical:
        vocab += MEDICAL_VOCAB
    seps = ["", "、", "；", ",", " "]
    out = []
    for _ in range(n):
        a = "".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(0, 25)))
        b = "".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randint(0, 25)))
        out.append((a, b))
    return out


def test_equals_rouge_score_with_same_tokenizer():
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer())
    for ref, cand in _pairs(2000) + _pairs(2000, seed=8, medical=True) + [(ZH_REF, ZH_CAND), (EN_REF, EN_CAND)]:
        want = scorer.score(ref, cand)["rouge1"]  # score(target, prediction)
        got = rouge1(ref, cand)
        assert (got.precision, got.recall, got.fmeasure) == (want.precision, want.recall, want.fmeasure)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_equals_nltk_bleu1():
    for ref, cand in _pairs(2000) + _pairs(2000, seed=8, medical=True) + [(ZH_REF, ZH_CAND), (ZH_CAND, ZH_REF), (EN_REF, EN_CAND)]:
        r, c = Tokenizer().tokenize(ref), Tokenizer().tokenize(cand)  # what bleu1 uses (OpenCC t2s on by default)
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


# ---------------------------------------------------------------- precomputed reference profiles (score_db's form)

def test_reference_profile_gives_the_same_values_as_rouge_score_and_nltk():
    from medeval.engine.metrics import lexical_scores, ref_profile

    tokenize = Tokenizer().tokenize  # the scoring tokenizer: normalise, OpenCC t2s, then the cjk-med-v3 tokens
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer())
    pairs = _pairs(2000) + _pairs(1000, seed=9, medical=True) + [(ZH_REF, ZH_CAND), (ZH_CAND, ZH_REF), (EN_REF, EN_CAND),
                                                                  ("咳嗽", "咳咳咳咳")]
    profiles = {ref: ref_profile(tokenize(ref)) for ref, _ in pairs}
    for ref, cand in pairs:
        c = tokenize(cand)
        s, b = overlap_scores(profiles[ref], c)
        want = scorer.score(ref, cand)["rouge1"]
        assert (s.precision, s.recall, s.fmeasure) == (want.precision, want.recall, want.fmeasure)
        assert (s, b) == overlap_scores(tokenize(ref), c)  # bit for bit the token-list form
        assert lexical_scores(profiles[ref], c) == (s.fmeasure, b) == lexical_scores(tokenize(ref), c)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nltk warns on zero overlap
            assert b == pytest.approx(sentence_bleu([tokenize(ref)], c, weights=(1,)) if c else 0.0, abs=1e-12)


def test_reference_profile_is_not_used_up_by_scoring():
    from medeval.engine.metrics import lexical_scores, ref_profile

    p = ref_profile(tokenize("咳嗽咳嗽;发热"))
    got = [lexical_scores(p, tokenize(c)) for c in ("咳嗽咳嗽", "咳咳咳咳嗽", "发热", "咳嗽咳嗽")]
    # 4 of 6 reference tokens matched: P 1, R 2/3; the answer is shorter: BP exp(1 - 6/4)
    assert got[0] == got[3] == (2 * (2 / 3) / (1 + 2 / 3), math.exp(1 - 6 / 4))  # the same answer, the same score
    assert p.counts == {"咳": 2, "嗽": 2, "发": 1, "热": 1} and p.length == 6


# ---------------------------------------------------------------- the tokenizer's fast path

def _normalize_one_pass(text):
    """The normalisation as specified (module docstring): superscript runs, list numbers, NFKC of everything, the
    symbol folds, the spelling folds -- each step on the whole text, no gate, one round."""
    import unicodedata

    from medeval.engine.tokenize import _FOLD_TABLE, _LIST_BREAKS, _SEQ_RE, _SUPER_RUN_RE, _seq, _super_run

    t = _SUPER_RUN_RE.sub(_super_run, text).translate(_LIST_BREAKS)
    return _SEQ_RE.sub(_seq, unicodedata.normalize("NFKC", t).translate(_FOLD_TABLE))


def _tokenize_one_pass(text):
    """The tokenizer as specified: the normalisation above, lowercase, findall."""
    from medeval.engine.tokenize import _TOKEN_RE

    return _TOKEN_RE.findall(_normalize_one_pass(text).lower()) if text else []


def _scoring_one_pass(text):
    """The scoring tokenizer as specified: normalise, OpenCC t2s, normalise, tokens."""
    from medeval.core.chinese import to_simplified

    return _tokenize_one_pass(to_simplified(_normalize_one_pass(text)))


TRICKY = ["咳嗽；发热，头痛：（轻度）", "10．5×10⁹/L", "１０.５mg", "ＣＲＰ升高", "体温39.5℃", "Ａ\u0301ＢＣ",
          "；\u0301咳", "a；b", "豈更車", "Ⅱ度肿大", "ｍｇ／ｋｇ", "x²+y³", "10⁻³", "ﬁbrosis", "㎎", "", "；，：（）",
          "尿蛋白（＋＋）", "尿糖（－）", "血钾↓", "⬆", "≧6.5", "＞＝3", "HbA1c >= 6.5%", "+/−", "(+-)", "①咳嗽②发热", "❶",
          "PLT 100 x 10⁹/L", "cm^3", "Ｍｇ²⁺", "T值≦−2.5", "ER‑/PR‑", "＾"]


def test_fast_tokenizer_equals_the_one_pass_definition():
    for text in TRICKY + [a + b for a, _ in _pairs(300) for b in ("；", "，ＣＴ", "¹²")]:
        assert tokenize(text) == _tokenize_one_pass(text), text
    scoring = Tokenizer(t2s=True).tokenize  # its own fast path: no normalising and no OpenCC for most texts
    for text in TRICKY + ["高血壓（＋）", "血鉀↓≧3", "豈①", "體重>=70kg"] + [a for a, _ in _pairs(300, seed=4, medical=True)]:
        assert scoring(text) == _scoring_one_pass(text), text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="咳嗽豈壓ab1.９ＡＣ；，：（）、。 ⁹²⁻\u0301℃Ⅱﬁ㎎+-−－＋()↑⬇≧>=<x^①❶\n", max_size=25))
def test_fast_tokenizer_equals_the_one_pass_definition_property(text):
    assert tokenize(text) == _tokenize_one_pass(text)
    assert Tokenizer(t2s=True).tokenize(text) == _scoring_one_pass(text)


def test_fast_path_assumptions_hold():
    import unicodedata

    from medeval.engine.tokenize import _SUPER, WIDE_PUNCTUATION

    for wide, ascii_ in WIDE_PUNCTUATION:  # replacing them before NFKC cannot change NFKC's result
        assert unicodedata.normalize("NFKD", wide) == unicodedata.normalize("NFKC", wide) == ascii_
    assert not any(unicodedata.is_normalized("NFKC", ch) for ch in _SUPER)  # only NFKC-changed text has them
    from medeval.engine.tokenize import _has_before_nfkc, _has_special, FOLDS, LIST_NUMBERS, normalize

    for ch in LIST_NUMBERS + "".join(FOLDS) + "^":  # every other character the steps change is gated
        assert _has_special(ch) or _has_before_nfkc(ch), ch
    for ch in "".join(_SUPER) + LIST_NUMBERS:  # what steps 1 and 2 change sends the text through every step
        assert _has_before_nfkc(ch)
    for spelling in (">=", "<=", "+/-", "(+-)"):
        assert _has_special(spelling)
    for ch in FOLDS.values():  # what the folds write is final: NFKC-normal, not gated again
        assert unicodedata.is_normalized("NFKC", ch) and not _has_special(ch)
    assert len(LIST_NUMBERS) == 142 and "①" in LIST_NUMBERS and "❿" in LIST_NUMBERS and "Ⓐ" not in LIST_NUMBERS
    for text in TRICKY:  # one round reaches the fixed point: normalising again changes nothing
        assert normalize(normalize(text)) == normalize(text), text
