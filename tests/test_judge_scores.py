"""Reading per-response scores out of judges' rationales: a table of realistic rationales (simplified and
traditional Chinese, English; prose, score lines, tables, shared scores) with the scores each one gives."""

from __future__ import annotations

import time

import pytest

from medeval.annotation.cases.judge_scores import parse_judge_scores, read_judge_scores
from medeval.core.errors import InputError

# (rationale, number of responses the judge saw, expected {position: score})
RATIONALES = [
    # a score given in words, after the response is named
    ("医生1的回答较全面，给5分", 2, {1: 5.0}),
    ("对于医生2的回答，我给4分", 2, {2: 4.0}),
    ("医生1的回答较全面，覆盖了诊断依据和治疗方案，给5分；医生2的回答遗漏了阿司匹林的剂量，给3分。", 2, {1: 5.0, 2: 3.0}),
    ("医生1的回答……综合考虑，我给它打4分。医生2的回答存在明显错误，给2分。", 2, {1: 4.0, 2: 2.0}),
    ("医生1：诊断正确，依据充分，可给予5分。\n医生2：未提及心电图，给3分。", 2, {1: 5.0, 2: 3.0}),
    ("Doctor 1's answer is thorough; I'd give it 5. Doctor 2's answer misses the troponin; I'd give it 3.", 2,
     {1: 5.0, 2: 3.0}),
    ("Response B deserves a 3/5", 2, {2: 3.0}),
    ("Response A: 4/5 -- correct diagnosis. Response B deserves a 3/5 because it omits the dose.", 2,
     {1: 4.0, 2: 3.0}),
    ("Assistant A correctly identifies STEMI. I would rate it 5.\nAssistant B hedges between angina and MI; "
     "I would rate it 3.", 2, {1: 5.0, 2: 3.0}),
    ("I give 4 points to Doctor 1 and 2 points to Doctor 2.", 2, {1: 4.0, 2: 2.0}),
    ("I'd give Doctor 1 a 4 and Doctor 2 a 2.", 2, {1: 4.0, 2: 2.0}),
    # clauses: the score given in words belongs to its clause's response
    ("医生1的回答较好，给4分，医生2的回答较差，给2分", 2, {1: 4.0, 2: 2.0}),
    ("Assistant 1's response deserves an 8 out of 10, while Assistant 2's deserves 6 out of 10.", 2,
     {1: 8.0, 2: 6.0}),
    ("Response 1 is fine, I would give it a 4, but Response 2 is wrong, I would give it a 1.", 2, {1: 4.0, 2: 1.0}),
    ("医生1：诊断正确。医生2：遗漏了剂量，给3分", 2, {2: 3.0}),
    ("医生1给予阿司匹林300mg，给药5天，给5分", 2, {1: 5.0}),
    ("Doctor 2 would give it 2 weeks of antibiotics; I'd rate it 3.", 2, {2: 3.0}),
    # labelled scores, several languages and numerals
    ("回答一：4分；回答二：3分", 2, {1: 4.0, 2: 3.0}),
    ("助手1得分：4", 1, {1: 4.0}),
    ("助手1得分：4；助手2得分：2", 2, {1: 4.0, 2: 2.0}),
    ("医生一：五分，医生二：三分", 2, {1: 5.0, 2: 3.0}),
    ("第一个回答4分，第二个回答3分", 2, {1: 4.0, 2: 3.0}),
    ("第1位医生：4分；第2位医生：2分", 2, {1: 4.0, 2: 2.0}),
    ("The first response scores 4, the second response scores 2.", 2, {1: 4.0, 2: 2.0}),
    ("Model A: 8/10. Model B: 6/10.", 2, {1: 8.0, 2: 6.0}),
    ("Doctor 1: 7 out of 10; Doctor 2: 9 out of 10", 2, {1: 7.0, 2: 9.0}),
    ("医生1：8/10分，医生2：6/10分", 2, {1: 8.0, 2: 6.0}),
    ("模型1评分为4.5分，模型2评分为3分", 2, {1: 4.5, 2: 3.0}),
    ("回答A：4分，回答B：3分", 2, {1: 4.0, 2: 3.0}),
    ("Doctor 1 (4/5) vs Doctor 2 (3/5)", 2, {1: 4.0, 2: 3.0}),
    ("医生1得分4分（满分10分），医生2得分6分（满分10分）", 2, {1: 4.0, 2: 6.0}),
    ("**Evaluation**\n\n1. **Doctor 1**: Correct diagnosis (STEMI). Score: 5/5\n2. **Doctor 2**: Misses the ECG "
     "findings. Score: 3/5", 2, {1: 5.0, 2: 3.0}),
    ("综合来看，医生1更优。\n\n医生1：5分\n医生2：3分\n医生3：2分", 3, {1: 5.0, 2: 3.0, 3: 2.0}),
    ("Assistant 1 provides accurate information (e.g. HbA1c ≥ 6.5%, fasting glucose ≥ 7.0 mmol/L). Assistant 2 is "
     "vague.\n\nAssistant 1: 9/10\nAssistant 2: 5/10", 2, {1: 9.0, 2: 5.0}),
    ("I would give Response A a 4 and Response B a 2.", 2, {1: 4.0, 2: 2.0}),
    # traditional Chinese (OpenCC t2s)
    ("醫生1：診斷正確，給予5分。醫生2：未提及心電圖，給予3分。醫生3：誤診，給予1分。", 3, {1: 5.0, 2: 3.0, 3: 1.0}),
    ("醫生1的回答較全面，給5分", 2, {1: 5.0}),
    ("醫生1的回答較全面，給5分；醫生2的回答遺漏了劑量，給3分。", 2, {1: 5.0, 2: 3.0}),
    ("醫生一：五分；醫生二：兩分", 2, {1: 5.0, 2: 2.0}),
    ("對於醫生2的回覆，我給4分", 2, {2: 4.0}),
    ("回覆1得分：4分\n回覆2得分：3分", 2, {1: 4.0, 2: 3.0}),
    # a score line per response
    ("医生1：\n诊断为急性前壁心肌梗死，依据充分。\n得分：5分\n\n医生2：\n仅诊断为心绞痛。\n得分：2分", 2, {1: 5.0, 2: 2.0}),
    ("### Response 1\nAccurate and complete; mentions aspirin 300 mg.\n**Score:** 5/5\n\n### Response 2\n"
     "Misses the ECG.\n**Score:** 3/5", 2, {1: 5.0, 2: 3.0}),
    ("【回答1】诊断正确。\n评分：4\n【回答2】诊断错误。\n评分：1", 2, {1: 4.0, 2: 1.0}),
    # tables
    ("| 医生 | 得分 |\n|---|---|\n| 医生1 | 4 |\n| 医生2 | 3 |", 2, {1: 4.0, 2: 3.0}),
    ("| Response | Score |\n|---|---|\n| Response 1 | 4/5 |\n| Response 2 | 2/5 |", 2, {1: 4.0, 2: 2.0}),
    ("| 回答 | 流畅性 | 相关性 | 完整性 | 专业性 | 总分 |\n|---|---|---|---|---|---|\n"
     "| 回答1 | 5 | 5 | 4 | 4 | 4.5 |\n| 回答2 | 4 | 3 | 2 | 3 | 3 |", 2, {1: 4.5, 2: 3.0}),
    ("| | Doctor 1 | Doctor 2 | Doctor 3 |\n|---|---|---|---|\n| Accuracy | 5 | 3 | 2 |\n"
     "| Overall | 5 | 3 | 1 |", 3, {1: 5.0, 2: 3.0, 3: 1.0}),
    ("| 醫生 | 評分 |\n|---|---|\n| 醫生1 | 五分 |\n| 醫生2 | 三分 |", 2, {1: 5.0, 2: 3.0}),
    # one score shared
    ("Both get 4.", 2, {1: 4.0, 2: 4.0}),
    ("Both responses are accurate and concise; both get 4 points.", 2, {1: 4.0, 2: 4.0}),
    ("两位医生均为4分", 2, {1: 4.0, 2: 4.0}),
    ("两个回答都是4分。", 2, {1: 4.0, 2: 4.0}),
    ("三位醫生均得3分", 3, {1: 3.0, 2: 3.0, 3: 3.0}),
    ("All three answers score 3/5.", 3, {1: 3.0, 2: 3.0, 3: 3.0}),
    ("医生1和医生2均为4分，医生3得2分", 3, {1: 4.0, 2: 4.0, 3: 2.0}),
    # hedges, self-corrections that agree, measurements among the scores
    ("Doctor 1 recommends aspirin 300 mg and a β-blocker; troponin ≥ 0.04 μg/L supports MI. Score: 5.\n"
     "Doctor 2 suggests 5 mg of morphine only. Score: 2.", 2, {1: 5.0, 2: 2.0}),
    ("医生1建议阿司匹林300mg嚼服，HbA1c≥6.5%的判断正确，给5分。医生2仅建议观察24小时，给2分。", 2, {1: 5.0, 2: 2.0}),
    ("医生1的回答十分全面，给5分", 1, {1: 5.0}),  # 十分 is "very", not 10 points
    ("Doctor 1: probably a 4, maybe 4.5 -- final: Doctor 1: 4 points", 1, {1: 4.0}),
    # not determined: nothing is assigned
    ("医生1的回答较好，医生2较差，给4分", 2, {}),
    ("Both get 4.", 3, {}),  # "both" of three responses: which two?
    ("两位医生均为4分", 3, {}),
    ("I'd give 4 points overall.", 2, {}),
    ("Doctor 1 is better than Doctor 2. I'd give it 5.", 2, {}),
    ("医生2的回答不如医生1全面，给3分", 2, {}),
    ("医生1诊断正确。医生2遗漏了剂量，给3分", 2, {}),  # which of the two? neither heads a section
    ("Doctor 1 and Doctor 2 get 4 and 3 points respectively.", 2, {}),
    ("| | 流畅性 | 完整性 |\n|---|---|---|\n| 医生1 | 5 | 4 |\n| 医生2 | 4 | 2 |", 2, {}),  # which column?
    ("Scores: 4 (Doctor 1), 3 (Doctor 2)", 2, {}),
    ("Doctor 1 prescribes 5 mg; Doctor 2 gives 10 mg.", 2, {}),
    ("The model answers a question about 5 drugs.", 2, {}),
]


@pytest.mark.parametrize("text,n,want", RATIONALES)
def test_rationale_scores(text, n, want):
    assert parse_judge_scores(text, n_responses=n) == want


@pytest.mark.parametrize("text,n,snippet", [
    ("医生1的回答较好，医生2较差，给4分", 2, "给4分"),
    ("Both get 4.", 3, "Both get 4"),
    ("I'd give 4 points overall.", 2, "give 4 points"),
    ("| | 流畅性 | 完整性 |\n|---|---|---|\n| 医生1 | 5 | 4 |\n| 医生2 | 4 | 2 |", 2, "医生1"),
])
def test_unassigned_scores_are_reported(text, n, snippet):
    r = read_judge_scores(text, n)
    assert r.scores == {}
    assert any(snippet in u for u in r.unassigned), r.unassigned


def test_scale_is_reported_and_mixed_scales_refused():
    assert read_judge_scores("Doctor 1: 8/10, Doctor 2: 6/10").scale == 10.0
    assert read_judge_scores("Doctor 1: 4 points").scale is None
    with pytest.raises(InputError, match="mixes score scales"):
        parse_judge_scores("Doctor 1: 4/5, Doctor 2: 8/10")


def test_both_without_the_number_of_responses_is_unassigned():
    assert parse_judge_scores("Both get 4.") == {}
    assert read_judge_scores("Both get 4.").unassigned == ("Both get 4",)


@pytest.mark.parametrize("text", [
    "醫生1：5分。綜上，醫生1得分：4分",
    "医生1的回答较全面，给5分。再看医生1的回答，我给3分",
    "Both get 4. On reflection Doctor 1: 5 points.",
])
def test_conflicts_raise(text):
    with pytest.raises(InputError, match="two different scores"):
        parse_judge_scores(text, n_responses=2)


@pytest.mark.parametrize("text", [
    "Doctor 1" + " and Doctor 2" * 3000 + " both agree",
    "医生1的回答较好，" * 5000 + "给4分",
    "| 医生1 | 4 |\n" * 3000,
    "Response A and " * 3000 + "both get 4",
    "I'd give it " * 3000 + "x",
    "给" * 20000 + "4分",
])
def test_long_inputs_stay_fast(text):
    t = time.perf_counter()
    read_judge_scores(text, 2)
    assert time.perf_counter() - t < 5.0


@pytest.mark.parametrize("text", [
    "给4分 " * 20000,
    "Score: 4, " * 20000,
    "Doctor 1 and Doctor 2 both get 4 and " * 5000,
])
def test_many_scores_in_one_sentence_stay_fast(text):
    t = time.perf_counter()
    try:
        read_judge_scores(text, 2)
    except InputError:
        pass
    assert time.perf_counter() - t < 5.0
