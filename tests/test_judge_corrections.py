"""Judge rationales that correct a score, and rationales that state the judge's scale.

A judge that writes a score and then changes it ("医生1：4分，改为5分", "Doctor 1: 4 -> 5", "更正：医生1应为5分",
"revised to 5") means the corrected score; a reader takes it when the correction says which response and which score,
and otherwise cannot say what the judge meant (the import is refused with what is ambiguous; a ``scores`` column is
then the way to give the scores). "满分10分", "10分制", "(out of 10)", "on a scale of 1-10" state the scale: the
number is no score. Every expectation below is what a reader of the rationale would record, decided by hand.
"""

from __future__ import annotations

import opencc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medeval.annotation.cases.judge_scores import read_judge_scores
from medeval.annotation.cases.judgements import read_judgements
from medeval.core.errors import InputError

WHICH = "does not say which response"
MANY = "more than one value"

# (rationale, number of responses, expected {position: score}, or the refusal's words)
CORRECTIONS = [
    # ---- an explicit change right after the score it replaces
    ("医生1的回答较全面，给4分，改为5分。医生2的回答遗漏了剂量，给3分。", 2, {1: 5.0, 2: 3.0}),
    ("医生1：4分，修正为5分；医生2：3分", 2, {1: 5.0, 2: 3.0}),
    ("医生1得分4分（复核后调整为4.5分），医生2得分3分", 2, {1: 4.5, 2: 3.0}),
    ("医生1：4分，更正为3分，因为未提及禁忌证。\n医生2：2分", 2, {1: 3.0, 2: 2.0}),
    ("医生1的回答较全面，给4分，考虑到遗漏了阿司匹林剂量，下调为3分。医生2的回答给2分。", 2, {1: 3.0, 2: 2.0}),
    ("第一个回答4分，后改为5分；第二个回答3分。", 2, {1: 5.0, 2: 3.0}),
    ("回答一：三分，改为四分；回答二：两分。", 2, {1: 4.0, 2: 2.0}),
    ("医生1：4分，改为5分。不，还是改回4分。医生2：3分。", 2, {1: 4.0, 2: 3.0}),
    ("Doctor 1: 4 points, revised to 5 after checking the guideline. Doctor 2: 3 points.", 2, {1: 5.0, 2: 3.0}),
    ("Model A: 7/10, adjusted to 8/10 after considering the safety advice. Model B: 6/10.", 2, {1: 8.0, 2: 6.0}),
    ("Response 1 gets a 3. Hmm, that's too harsh given it names the right drug -- changing it to 4. Response 2 gets 2.",
     2, {1: 4.0, 2: 2.0}),
    # ---- a weaker word right after the score, or with a unit
    ("医生1：4分→5分\n医生2：3分", 2, {1: 5.0, 2: 3.0}),
    ("医生1：4分，应为4.5分（遗漏了随访建议）。医生2：3分。", 2, {1: 4.5, 2: 3.0}),
    ("Doctor 1: 4 → 5 (I missed that it covers the ECG). Doctor 2: 3.", 2, {1: 5.0, 2: 3.0}),
    ("Response A: 3, actually 4 — it does cover dosing. Response B: 2.", 2, {1: 4.0, 2: 2.0}),
    ("I'd give Doctor 1 a 4 — scratch that, make that a 5. Doctor 2 gets 3.", 2, {1: 5.0, 2: 3.0}),
    ("Assistant 1: 8/10 → 9/10 after rereading; Assistant 2: 6/10.", 2, {1: 9.0, 2: 6.0}),
    ("医生1：~~4分~~ 5分\n医生2：3分", 2, {1: 5.0, 2: 3.0}),
    ("**医生1**：4分（更正：5分）\n**医生2**：3分", 2, {1: 5.0, 2: 3.0}),
    # ---- the correction names its response
    ("医生1：4分。更正：医生1应为5分。医生2：3分。", 2, {1: 5.0, 2: 3.0}),
    ("Doctor 1: 4/5. Doctor 2: 3/5.\n\nCorrection: Doctor 2 should get 4/5 — it does mention the troponin.", 2,
     {1: 4.0, 2: 4.0}),
    ("| 医生 | 得分 |\n|---|---|\n| 医生1 | 4 |\n| 医生2 | 3 |\n\n修正：医生2改为4分。", 2, {1: 4.0, 2: 4.0}),
    ("I would rate Response 1 a 4. On reflection, I'd revise Response 1 to a 5. Response 2: 3.", 2, {1: 5.0, 2: 3.0}),
    ("Doctor 1: 4. Actually, Doctor 1 deserves 5 — it covers contraindications. Doctor 2: 3.", 2, {1: 5.0, 2: 3.0}),
    ("Doctor 1: 4 points. Doctor 2: 3 points. After rereading, I revised Doctor 2's score to 4 points.", 2,
     {1: 4.0, 2: 4.0}),
    ("医生1：4分，医生2：3分\n\n修正：医生1改为5分", 2, {1: 5.0, 2: 3.0}),
    # ---- a score line per response, corrected
    ("**Doctor 1**\nGood.\n**Score:** 4, revised to 5\n\n**Doctor 2**\nWeak.\n**Score:** 3", 2, {1: 5.0, 2: 3.0}),
    ("### 医生1\n诊断正确。\n得分：4分→5分\n### 医生2\n遗漏剂量。\n得分：3分", 2, {1: 5.0, 2: 3.0}),
    ("医生1：\n诊断正确。\n评分：4（修正为5）\n医生2：\n评分：3", 2, {1: 5.0, 2: 3.0}),
    ("医生1的回答较全面，给4分，改打5分。医生2给3分。", 2, {1: 5.0, 2: 3.0}),
    # ---- a table cell the judge corrected
    ("| 医生 | 得分 |\n|---|---|\n| 医生1 | 4→5 |\n| 医生2 | 3 |", 2, {1: 5.0, 2: 3.0}),
    ("| 医生 | 得分 |\n|---|---|\n| 医生1 | ~~4~~ 5 |\n| 医生2 | 3 |", 2, {1: 5.0, 2: 3.0}),
    ("| | Doctor 1 | Doctor 2 |\n|---|---|---|\n| Score | 4/5 -> 5/5 | 3/5 |", 2, {1: 5.0, 2: 3.0}),
    ("医生1：4分。医生2：3分。医生1的回答其实遗漏了剂量，修正为3分。", 2, {1: 3.0, 2: 3.0}),
    # ---- traditional characters
    ("醫生1：4分，修正為5分；醫生2：3分", 2, {1: 5.0, 2: 3.0}),
    ("醫生1的回答給4分，考慮到遺漏了阿司匹林劑量，下調為3分。醫生2的回答給2分。", 2, {1: 3.0, 2: 2.0}),
    ("醫生1：8/10 → 9/10；醫生2：6/10", 2, {1: 9.0, 2: 6.0}),
    ("醫生1：5分。醫生2：3分。更正：醫生2應為4分。", 2, {1: 5.0, 2: 4.0}),
    # ---- numbers that are no correction
    ("Doctor 1: 4 points; the dose should be 5. Doctor 2: 3 points.", 2, {1: 4.0, 2: 3.0}),
    ("医生1：4分，建议将阿司匹林剂量调整为100mg。医生2：3分。", 2, {1: 4.0, 2: 3.0}),
    ("Doctor 1: 4. Doctor 1 suggests changing to 2 tablets a day. Doctor 2: 3.", 2, {1: 4.0, 2: 3.0}),
    ("医生1：诊断应为急性心梗，给4分。医生2：3分。", 2, {1: 4.0, 2: 3.0}),
    ("The score should be 4 points for Doctor 1 and 3 points for Doctor 2.", 2, {1: 4.0, 2: 3.0}),
    ("Doctor 1's dose should be 5 mg rather than 10 mg. Doctor 1: 3 points; Doctor 2: 4 points.", 2, {1: 3.0, 2: 4.0}),
    ("医生1将诊断修正为NSTEMI，给4分；医生2：3分", 2, {1: 4.0, 2: 3.0}),
    ("Response A actually addresses the question better. Response A: 4. Response B: 2.", 2, {1: 4.0, 2: 2.0}),
    # ---- refused: which response, or which score, the correction does not say
    ("医生1：4分，医生2：3分。修正为5分。", 2, WHICH),
    ("医生1和医生2均为4分，修正为5分。", 2, WHICH),
    ("Doctor 1: 4 points. Doctor 2: 3 points. Actually, 5.", 2, WHICH),
    ("Both get 4 points. Revised to 5.", 2, WHICH),
    ("医生1：4分，改为4或5分。医生2：3分。", 2, MANY),
    ("Doctor 1: 4. Doctor 2: 3. Correction: revised to 4-5.", 2, MANY),
    ("医生1：4分，调整为4~5分；医生2：3分", 2, MANY),
    # a "correction" before the score it would correct corrects nothing: the two scores conflict
    ("更正：医生2应为4分。医生1：5分。医生2：3分。", 2, "two different scores"),
]


@pytest.mark.parametrize("text,n,want", CORRECTIONS)
def test_a_corrected_score_is_the_one_read_or_the_import_is_refused(text, n, want):
    if isinstance(want, str):
        with pytest.raises(InputError, match=want) as e:
            read_judge_scores(text, n)
        assert "scores' column" in e.value.fix  # the way out is said
    else:
        r = read_judge_scores(text, n)
        assert r.scores == want, (text, r)


def test_the_correction_is_recorded():
    r = read_judge_scores("医生1：4分，修正为5分；医生2：3分", 2)
    assert r.scores == {1: 5.0, 2: 3.0}
    assert len(r.corrections) == 1 and r.corrections[0].startswith("response 1: 4 -> 5")
    assert read_judge_scores("医生1：4分；医生2：3分", 2).corrections == ()


def test_a_repetition_after_a_correction_must_agree_with_it():
    assert read_judge_scores("医生1：4分，改为5分。医生2：3分。总结：医生1：5分，医生2：3分", 2).scores == {1: 5.0, 2: 3.0}
    with pytest.raises(InputError, match="two different scores"):
        read_judge_scores("医生1：4分，改为5分。医生2：3分。总结：医生1：4分，医生2：3分", 2)


# (rationale, number of responses, expected scores, expected scale)
SCALES = [
    ("医生1得分4分（满分10分），医生2得分6分（满分10分）", 2, {1: 4.0, 2: 6.0}, 10.0),
    ("满分10分。医生1：8分；医生2：6分。", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("医生1（满分10分）：8分，医生2（满分10分）：6分", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("医生1得分（满分10分）：8分；医生2得分（满分10分）：6分", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("评分采用10分制。医生1：8分，医生2：6分。", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("十分制下，医生1得8分，医生2得6分", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("百分制：医生1 85分，医生2 70分", 2, {1: 85.0, 2: 70.0}, 100.0),
    ("总评（满分10分）：医生1 8分，医生2 6分", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("医生1的回答非常完整，满分10分中给9分；医生2给6分", 2, {1: 9.0, 2: 6.0}, 10.0),
    ("醫生1得分4分（滿分10分），醫生2得分6分（滿分10分）", 2, {1: 4.0, 2: 6.0}, 10.0),
    ("滿分5分。醫生1：4分，醫生2：3分。", 2, {1: 4.0, 2: 3.0}, 5.0),
    ("Scores are out of 10. Doctor 1: 8, Doctor 2: 6.", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("Doctor 1: 8 (out of 10); Doctor 2: 6 (out of 10)", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("On a scale of 1 to 10: Doctor 1 gets 8, Doctor 2 gets 6.", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("Using a 5-point scale, Response A: 4, Response B: 3.", 2, {1: 4.0, 2: 3.0}, 5.0),
    ("Doctor 1: 8/10, Doctor 2: 6/10 (scores out of 10).", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("| 医生 | 得分 |\n|---|---|\n| 医生1 | 8 |\n| 医生2 | 6 |\n\n（满分10分）", 2, {1: 8.0, 2: 6.0}, 10.0),
    ("医生1：满分10分", 1, {}, 10.0),   # the scale alone: no score is given
    ("Doctor 1: 4 points", 1, {1: 4.0}, None),
]


@pytest.mark.parametrize("text,n,want,scale", SCALES)
def test_the_scale_is_recorded_and_never_read_as_a_score(text, n, want, scale):
    r = read_judge_scores(text, n)
    assert (r.scores, r.scale) == (want, scale), (text, r)


@pytest.mark.parametrize("text,message", [
    ("医生1：4分（满分5分）；医生2：8/10", "mixes score scales"),
    ("满分10分。Doctor 1: 4/5, Doctor 2: 3/5", "mixes score scales"),
    ("医生1：12分（满分10分），医生2：6分", "above its scale"),
])
def test_scales_that_disagree_are_refused(text, message):
    with pytest.raises(InputError, match=message):
        read_judge_scores(text, 2)


def test_the_tables_are_varied():
    everything = [t for t, *_ in CORRECTIONS] + [t for t, *_ in SCALES]
    trad = [t for t in everything if any(ch in t for ch in "醫給為調滿應劑")]
    en = [t for t in everything if not any("\u4e00" <= ch <= "\u9fff" for ch in t)]
    assert len(everything) >= 50 and len(trad) >= 6 and len(en) >= 15
    assert any("|" in t for t in everything)


def test_the_import_refuses_an_ambiguous_correction_and_a_scores_column_overrides_it(tmp_path):
    f = tmp_path / "j.csv"
    f.write_text('case,question,judge,rationale,models\n'
                 'c1,1,gpt-4,"医生1：4分，医生2：3分。修正为5分。","a,b"\n', encoding="utf-8")
    with pytest.raises(InputError, match=WHICH):
        read_judgements(f)
    g = tmp_path / "k.csv"
    g.write_text('case,question,judge,rationale,models,scores\n'
                 'c1,1,gpt-4,"医生1：4分，医生2：3分。修正为5分。","a,b","{""a"": 4, ""b"": 5}"\n', encoding="utf-8")
    assert read_judgements(g)[0].scores == {"a": 4.0, "b": 5.0}
    h = tmp_path / "h.csv"
    h.write_text('case,question,judge,rationale,models\n'
                 'c1,1,gpt-4,"医生1：4分，修正为5分；医生2：3分","a,b"\n', encoding="utf-8")
    assert read_judgements(h)[0].scores == {"a": 5.0, "b": 3.0}


# ------------------------------------------------------------------ metamorphic: appending a correction

_S2T = opencc.OpenCC("s2t")
_LABELS = {"zh": "医生{}：{}分", "en": "Doctor {}: {} points", "en_slash": "Response {}: {}/5"}
# right after the corrected score
_AFTER = ["，改为{v}分", "，修正为{v}分", " → {v}分", "，应为{v}分", ", revised to {v}", " (adjusted to {v} points)",
          ", actually {v}", "（更正：{v}分）", ", changed to {v}/5"]
# at the end, naming the response
_NAMED = ["\n更正：医生{i}应为{v}分。", "\n修正：医生{i}改为{v}分", "\nCorrection: Doctor {i} should get {v}.",
          " On reflection I revised Doctor {i}'s score to {v} points."]
# at the end, naming none
_BARE = ["。修正为{v}分。", ". Revised to {v}.", "\n\n调整为{v}分"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_appending_a_correction_reads_the_new_score_or_refuses(scores, data):
    """A correction right after a score, or one naming its response, is read; one naming none after several
    responses' scores is refused."""
    n = len(scores)
    style = data.draw(st.sampled_from(sorted(_LABELS)))
    i = data.draw(st.integers(1, n))
    v = data.draw(st.sampled_from([x for x in (1, 2, 3, 4, 5) if x != scores[i - 1]]))
    parts = [_LABELS[style].format(k + 1, sc) for k, sc in enumerate(scores)]
    sep = "；" if style == "zh" else ". "
    base = sep.join(parts)
    assert read_judge_scores(base, n).scores == {k + 1: float(sc) for k, sc in enumerate(scores)}
    where = data.draw(st.sampled_from(["after", "named", "bare"]))
    if where == "after":
        parts[i - 1] += data.draw(st.sampled_from(_AFTER)).format(v=v)
        text = sep.join(parts)
    elif where == "named":
        text = base + data.draw(st.sampled_from(_NAMED)).format(i=i, v=v)
    else:
        text = base + data.draw(st.sampled_from(_BARE)).format(v=v)
    if data.draw(st.booleans()):
        text = _S2T.convert(text)
    if where == "bare" and n > 1:
        # which response's score is corrected is not said: refused, never the first score silently
        with pytest.raises(InputError, match=WHICH):
            read_judge_scores(text, n)
        return
    want = {k + 1: float(sc) for k, sc in enumerate(scores)}
    want[i] = float(v)
    assert read_judge_scores(text, n).scores == want, text
