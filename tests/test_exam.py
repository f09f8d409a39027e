"""Exam accuracy (CMB-Exam, seed 001 §4.1): answer extraction, CMB's own regex as the baseline, scoring per
category and subcategory, key/answer validation, CLI. Expected letters are written by hand."""

from __future__ import annotations

import csv
import io
import itertools
import json

import pytest

from medeval.core.errors import InputError
from medeval.stats.exam import (cmb_match_choice, extract_answer, macro_mean, questions_from_rows, read_answers, read_key, score_answers, score_files)
from tests.conftest import ROOT, invoke, run_cli, write

TB = {"A": "小叶型肺炎", "B": "浸润性肺结核", "C": "继发性肺结核", "D": "原发性肺结核", "E": "粟粒型肺结核"}
EN = {"A": "Pneumonia", "B": "Bacterial infection", "C": "Viral infection", "D": "Vitamin D deficiency",
      "E": "Iron deficiency anaemia"}
ABCDE = "ABCDE"

# (model output, options, expected letters) -- "" = no answer
OUTPUTS = [
    # the CMB counterexample and its relatives: letters inside abbreviations and terms are not options
    ("根据CT和ECG结果，选D", ABCDE, "D"),
    ("B超提示胆囊结石，答案为C", ABCDE, "C"),
    ("C反应蛋白升高，提示细菌感染，故选E", ABCDE, "E"),
    ("维生素D缺乏，选B", ABCDE, "B"),
    ("COPD患者急性加重，首选A", ABCDE, "A"),
    ("DNA病毒……答案是E", ABCDE, "E"),
    ("HBeAg阳性提示病毒复制活跃，选B", ABCDE, "B"),
    ("CD4细胞减少，选A", ABCDE, "A"),
    ("D-二聚体升高，选A", ABCDE, "A"),
    ("ACE抑制剂可致干咳，故选B", ABCDE, "B"),
    ("ECG", ABCDE, ""),
    ("CT", ABCDE, ""),
    ("答案：AB型血", ABCDE, ""),
    # explicit answers, Chinese
    ("答案：D", ABCDE, "D"),
    ("答案：E。", ABCDE, "E"),
    ("选D", ABCDE, "D"),
    ("正确答案是 B、D", ABCDE, "BD"),
    ("答案：ABD", ABCDE, "ABD"),
    ("答案是B和D", ABCDE, "BD"),
    ("【答案】C", ABCDE, "C"),
    ("**答案：C**", ABCDE, "C"),
    ("答案：(C)", ABCDE, "C"),
    ("答案：（C）", ABCDE, "C"),
    ("答案：Ｃ", ABCDE, "C"),                       # full-width letter
    ("答案为：C。解析：A项错误，B项描述的是……", ABCDE, "C"),
    ("我选B", ABCDE, "B"),
    ("应选B", ABCDE, "B"),
    ("答案应该是B", ABCDE, "B"),
    ("综上，答案是A……不对，最终答案是C", ABCDE, "C"),  # the last answer of a chain of thought
    ("答案：B\n解析：选A的理由不充分。", ABCDE, "B"),   # "答案" beats a later bare "选A"
    ("答案：ACE", ABCDE, "ACE"),
    ("答案是B或C", ABCDE, ""),                         # alternatives: ambiguous, never cut to the first letter
    ("答案：b", ABCDE, "B"),
    ("答案：B，A项错误，C项错误。", ABCDE, "B"),        # a comma ends the answer when a new clause follows
    ("答案：B\nA项错误", ABCDE, "B"),
    ("答案：C；A、B、D、E均不正确", ABCDE, "C"),
    ("正确答案：D（原发性肺结核）", TB, "D"),
    ("答案：D\n\n解释：A. 小叶型肺炎……B. 浸润性肺结核……", TB, "D"),
    ("患儿低热、肺门淋巴结肿大。A项多有高热；B、C多见于成人；E为血行播散。因此答案为D。", TB, "D"),
    ("最可能的诊断是原发性肺结核（D）。", TB, "D"),
    # ruled-out letters
    ("不选A，选C", ABCDE, "C"),
    ("排除A、B，选C", ABCDE, "C"),
    ("A是错误的，B是正确的", ABCDE, "B"),
    ("答案不是A，而是C", ABCDE, "C"),
    ("不是A也不是B，是C", ABCDE, "C"),
    ("A、B均错误，C正确", ABCDE, "C"),
    ("A项错误；B项错误；C项正确；D项错误。", ABCDE, "C"),
    ("A项正确，B项正确，C项错误，D项正确。", ABCDE, "ABD"),
    # the response starts with the answer
    ("B", ABCDE, "B"),
    ("B. 急性阑尾炎", ABCDE, "B"),
    ("B 浸润性肺结核", TB, "B"),
    ("(B)", ABCDE, "B"),
    ("B项", ABCDE, "B"),
    ("D选项正确", ABCDE, "D"),
    ("选项D", ABCDE, "D"),
    ("ABD", ABCDE, "ABD"),
    ("A,B,D", ABCDE, "ABD"),
    ("A、B、D正确，C错误，不选C", ABCDE, "ABD"),
    ("B、C、D", ABCDE, "BCD"),
    ("A和C", ABCDE, "AC"),
    ("BCDE", ABCDE, "BCDE"),
    ("BE", ABCDE, "BE"),
    ("b.", ABCDE, "B"),
    # option text, no letter
    ("考虑原发性肺结核", TB, "D"),                     # not C: "继发性肺结核" is not in the text
    ("粟粒型肺结核。", TB, "E"),
    ("不是原发性肺结核，是继发性肺结核", TB, "C"),
    ("肺结核", TB, ""),                                # the shared part of several options
    ("我不知道", ABCDE, ""),
    ("", ABCDE, ""),
    # English
    ("The answer is (B)", ABCDE, "B"),
    ("The answer is: A", ABCDE, "A"),
    ("The correct answers are B and D.", ABCDE, "BD"),
    ("The correct answer is B, D and E.", ABCDE, "BDE"),
    ("the answer is b", ABCDE, "B"),
    ("answer: (c)", ABCDE, "C"),
    ("Answer: d.", ABCDE, "D"),
    ("I would choose C because the fever pattern fits.", ABCDE, "C"),
    ("The best option is D.", ABCDE, "D"),
    ("Option C is correct.", ABCDE, "C"),
    ("A. Pneumonia", EN, "A"),
    ("A patient with fever and cough ... I think D.", ABCDE, "D"),   # the article "A" is not an option
    ("A 45-year-old man ... so C.", ABCDE, "C"),
    ("A bacterial infection", ABCDE, ""),
    ("The answer is a bacterial infection.", EN, "B"),  # the article "a" is not A; the option text decides
    ("Vitamin D deficiency.", EN, "D"),                  # via the text, not the D of "Vitamin D"
    ("Vitamin D deficiency is possible, but the answer is B", EN, "B"),
    ("Hepatitis B is the cause. Answer: (a)", ABCDE, "A"),
    ("I would not choose A; the answer is C.", ABCDE, "C"),
    ("Both A and C are possible.", ABCDE, ""),          # two letters, nothing to decide between them
]


@pytest.mark.parametrize("text,options,expected", OUTPUTS)
def test_extraction_of_real_looking_outputs(text, options, expected):
    assert extract_answer(text, options).letters == expected


AMB = None  # the reading is ambiguous: no letters, a reason, the candidates -- for a person to settle

# (response, our reading -- letters or AMB, CMB's reading for a single-choice question). The third column is what
# CMB's own extraction gives on the same input: ``match_choice`` of FreedomIntelligence/CMB src/utils.py searches
# r"(答案|正确选项)(?:是|：|为|应该是|应该为)(.*?)(。|\.|$)" and keeps the A-G letters of the match, else every A-G
# capital of the text; ``extract_ans`` keeps only the first for a single-choice question. (Worked by hand, e.g.
# "Final answer: C" has no Chinese phrase, so its capitals "FC" give "F"; "答案是A吗？不，应该是C。" gives "AC",
# then "A".)
HARD = [
    ("我认为A和B都有可能，但更倾向于B。", "B", 'A'),
    ("答案是A吗？不，应该是C。", "C", 'A'),
    ("排除A、B、C后，只剩D。", "D", 'A'),
    ("首选D，备选B。", "D", 'D'),
    ("本題選D", "D", 'D'),
    ("答案為B", "B", 'B'),
    ("答案：BD", "BD", 'B'),
    ("选项C正确", "C", 'C'),
    ("The answer is (B)", "B", 'B'),
    ("Final answer: C", "C", 'F'),
    ("正确答案是 A 和 C", "AC", 'A'),
    ("维生素D", AMB, 'D'),
    # traditional Chinese
    ("正確答案是B。", "B", 'B'),
    ("綜上所述，應選E。", "E", 'E'),
    ("我認為A和B都有可能，但更傾向於B。", "B", 'A'),
    ("首選C，備選A。", "C", 'C'),
    ("排除A、B後，只剩C。", "C", 'A'),
    ("答案：A、C、D（多選）", "ACD", 'A'),
    ("本題答案為C或D，需結合臨床。", AMB, 'C'),
    ("維生素D缺乏，故選A", "A", 'D'),
    ("心電圖示ST段抬高，選B", "B", 'B'),
    # hedges: equal candidates, alternatives
    ("A和B都有可能。", AMB, 'A'),
    ("我认为B和C都有可能，需结合指南判断。", AMB, 'B'),
    ("答案是B或C", AMB, 'B'),
    ("可能是A，也可能是D。", AMB, 'A'),
    ("A or B, depending on the guideline.", AMB, 'A'),
    ("Both A and C are possible.", AMB, 'B'),
    ("It could be B or D.", AMB, 'B'),
    ("B和D均有可能", AMB, 'B'),
    ("I am torn between B and C.", AMB, 'B'),
    ("A和B都有可能，但我更倾向于A。", "A", 'A'),
    ("Both B and D are plausible, but I lean towards D.", "D", 'B'),
    # self-corrections
    ("答案是A。等等，答案是B。", "B", 'A'),
    ("综上，答案是A……不对，最终答案是C", "C", 'A'),
    ("初步判断选B，但重新考虑后，答案应为D。", "D", 'B'),
    ("The answer is A. Wait, actually the answer is C.", "C", 'A'),
    ("Is it A? No, it is C.", "C", 'A'),
    ("最终答案：A。最终答案：B。", AMB, 'A'),
    ("Final answer: B ... Final answer: D", AMB, 'F'),
    ("最终答案：A。不对，最终答案：B。", "B", 'A'),
    # eliminated options
    ("A项错误，B项错误，C项错误，故选D。", "D", 'A'),
    ("排除A和C，答案是B。", "B", 'B'),
    ("Eliminating A, B and C leaves D.", "D", 'E'),
    ("不选A，选C", "C", 'A'),
    ("A、B、E均不正确，C、D正确。", "CD", 'A'),
    ("Option A is wrong; option B is incorrect; the answer is E.", "E", 'A'),
    # multi-answer
    ("正确答案是A、B、D", "ABD", 'A'),
    ("答案：ACE", "ACE", 'A'),
    ("The correct answers are A, C and E.", "ACE", 'A'),
    ("A、B、D正确，C错误", "ABD", 'A'),
    ("答案是B和D", "BD", 'B'),
    ("选ABD", "ABD", 'A'),
    # letters that are not answers
    ("维生素D缺乏可致佝偻病，选A", "A", 'D'),
    ("根据CT和ECG结果，选D", "D", 'C'),
    ("B超提示胆囊结石，答案为C", "C", 'C'),
    ("Vitamin D deficiency is not the cause; the answer is B.", "B", 'D'),
    ("Hepatitis B serology is negative, so choose E.", "E", 'B'),
    ("HbA1c ≥ 6.5% supports diabetes; answer: C", "C", 'A'),
    ("TNF-α升高，β受体阻滞剂禁用，故选A", "A", 'F'),
    ("血钾3.0 mmol/L，选B", "B", 'B'),
    # no option at all
    ("我不知道", AMB, ''),
    ("需要更多信息才能判断。", AMB, ''),
    ("I cannot answer this question.", AMB, ''),
    # plain answers
    ("D", "D", 'D'),
    ("(C)", "C", 'C'),
    ("B. 3分钟", "B", 'B'),
    ("答案：Ｅ", "E", ''),
    ("**答案：B**", "B", 'B'),
    ("I would choose A.", "A", 'A'),
    ("The best option is D.", "D", 'D'),
    # more stated preferences, colons after option letters, questions that are not answers
    ('选项A：错误；选项B：错误；选项C：正确；选项D：错误。', 'C', 'A'),
    ('I think the answer is B or C, but more likely C.', 'C', 'B'),
    ('A和B都有可能，但更可能是B。', 'B', 'A'),
    ('I would prefer B over C.', 'B', 'B'),
    ('为什么不选A？因为A是错误的。答案：C', 'C', 'C'),
    ('Could it be A? Possibly, but the answer is D.', 'D', 'C'),
    ('青霉素是首选药物。答案：C', 'C', 'C'),
]



@pytest.mark.parametrize("text,expected,cmb", HARD)
def test_final_choice_hedges_corrections_eliminations_and_cmbs_reading(text, expected, cmb):
    e = extract_answer(text, ABCDE)
    if expected is AMB:
        assert (e.status, e.letters, e.method) == ("ambiguous", "", "ambiguous") and e.note, e
    else:
        assert (e.status, e.letters) == ("answered", expected), e
    assert cmb_match_choice(text, multi=False) == cmb


def test_hard_table_is_large_and_varied():
    assert len(HARD) >= 60
    traditional = [t for t, _, _ in HARD if any(c in t for c in "為選認傾後題應綜確電維結臨")]
    english = [t for t, _, _ in HARD if t.isascii()]
    ambiguous = [t for t, e, _ in HARD if e is AMB]
    assert len(traditional) >= 8 and len(english) >= 12 and len(ambiguous) >= 15
    # CMB's regex reads a wrong or guessed letter on many of them; ours never guesses
    assert sum(cmb != e for _, e, cmb in HARD) >= 30


@pytest.mark.parametrize("text,reason,candidates", [
    ("Both A and C are possible.", "several options named, none stated as the choice (A, C)", "AC"),
    ("答案是B或C", "alternatives, not a choice (B or C)", "BC"),
    ("最终答案：A。最终答案：B。", "contradictory final answers (A; B) with no correction between them", "AB"),
    ("我不知道", "no option letter or option text found", ""),
    ("原发性肺结核或继发性肺结核", "the texts of several options (C, D)", "CD"),
])
def test_ambiguous_readings_give_the_reason_and_the_candidates(text, reason, candidates):
    e = extract_answer(text, TB if "肺结核" in text else ABCDE)
    assert (e.status, e.note, e.candidates, e.letters) == ("ambiguous", reason, candidates, "")


def test_there_are_many_exam_outputs_in_both_languages():
    zh = [t for t, _, _ in OUTPUTS if any("\u4e00" <= c <= "\u9fff" for c in t)]
    en = [t for t, _, _ in OUTPUTS if t and t not in zh]
    assert len(zh) >= 30 and len(en) >= 30


def test_cmb_regex_reads_the_c_of_ct_and_we_do_not():
    # CMB §4.1 / FreedomIntelligence/CMB src/utils.py: no "答案是" -> every capital A-G; single choice -> the first
    assert cmb_match_choice("根据CT和ECG结果，选D", multi=False) == "C"
    assert cmb_match_choice("根据CT和ECG结果，选D", multi=True) == "CECGD"
    assert extract_answer("根据CT和ECG结果，选D", ABCDE).letters == "D"


@pytest.mark.parametrize("text,multi,expected", [
    ("答案是B，因为……", False, "B"),            # the phrase, letters up to the full stop
    ("答案：A、B、D。解析：C……", True, "ABD"),
    ("正确选项为C。", False, "C"),
    ("答案是 b", False, ""),                     # lower case is never read
    ("不选A，选C", False, "A"),                 # negation is not understood
    ("ABD", False, "A"),                         # single choice: cut to the first letter
    ("The answer is (B)", False, "B"),           # English: the T of "The" is not A-G; B is
])
def test_cmb_baseline_is_reproduced(text, multi, expected):
    assert cmb_match_choice(text, multi) == expected


@pytest.mark.parametrize("letters", ["".join(c) for n in range(1, 6) for c in itertools.combinations(ABCDE, n)])
def test_every_option_set_in_every_common_format(letters):
    forms = [letters, ",".join(letters), "、".join(letters), f"答案：{letters}", f"正确答案是{'、'.join(letters)}。",
             f"The answer is {', '.join(letters)}.", f"故选{letters}"]
    if len(letters) > 1:
        forms.append(f"The answers are {', '.join(letters[:-1])} and {letters[-1]}.")
    for f in forms:
        assert extract_answer(f, ABCDE).letters == letters, f


def test_extraction_says_how_and_why_not():
    assert extract_answer("答案：D", ABCDE).method == "answer_phrase"
    assert extract_answer("B. 急性阑尾炎", ABCDE).method == "leading"
    assert extract_answer("A项错误，C项正确", ABCDE).method == "statement"
    assert extract_answer("考虑原发性肺结核", TB).method == "option_text"
    e = extract_answer("Both A and C are possible.", ABCDE)
    assert e.method == e.status == "ambiguous" and "A, C" in e.note
    assert extract_answer("", ABCDE).note == "empty response" and extract_answer("", ABCDE).status == "none"


def test_letters_outside_the_options_are_not_read():
    assert extract_answer("答案：F", ABCDE).letters == ""
    assert extract_answer("答案：F", "ABCDEF").letters == "F"
    assert extract_answer("答案：F").letters == "F"  # without options: A-G, as CMB


# ------------------------------------------------------------------ scoring

def q(id, answer, cat=None, sub=None, **kw):
    d = {"id": id, "answer": answer, "option": {k: f"选项{k}" for k in ABCDE}}
    if cat:
        d["exam_type"] = cat
    if sub:
        d["exam_class"] = sub
    d.update(kw)
    return d


def key_of(*qs):
    return questions_from_rows(list(enumerate(qs, start=1)))


def test_exact_set_match_and_unanswered_questions():
    key = key_of(q(1, "A"), q(2, "BD"), q(3, "BD"), q(4, "BD"), q(5, "C"), q(6, "E"))
    res = score_answers(key, {"1": (1, "答案：A"), "2": (2, "答案：BD"), "3": (3, "答案：B"),   # subset: wrong
                              "4": (4, "答案：BDE"), "5": (5, "答案是B或C")})               # superset, hedge: wrong
    d = res.to_dict()
    assert (d["n"], d["correct"], d["unanswered"], d["ambiguous"]) == (6, 2, 1, 1)
    assert d["accuracy_settled"] == d["accuracy_ambiguous_wrong"] == 2 / 6
    assert d["extraction"]["answer_phrase"] == 4 and d["extraction"]["ambiguous"] == 1
    assert d["extraction"]["unanswered"] == 1
    assert d["ambiguous_answers"] == [{"id": "5", "reason": "alternatives, not a choice (B or C)", "candidates": "BC",
                                       "settled": None, "settled_by": None}]


def test_settled_and_ambiguous_wrong_accuracies():
    from medeval.stats.exam import response_sha

    key = key_of(q(1, "A"), q(2, "B"), q(3, "C"), q(4, "D"))
    resp = {"1": (1, "答案：A"), "2": (2, "答案是B或C"), "3": (3, "Both A and C are possible."), "4": (4, "我不知道")}
    # 2 settled as B (right), 3 settled as A (wrong), 4 left unsettled
    settled = {"2": ("B", "ada", response_sha(resp["2"][1])), "3": ("A", "bob", response_sha(resp["3"][1]))}
    d = score_answers(key, resp, settlements=settled).to_dict()
    assert (d["n"], d["ambiguous"], d["unsettled"]) == (4, 3, 1)
    assert d["accuracy_settled"] == 2 / 4 and d["accuracy_ambiguous_wrong"] == 1 / 4
    assert [(a["id"], a["settled"], a["settled_by"]) for a in d["ambiguous_answers"]] == [
        ("2", "B", "ada"), ("3", "A", "bob"), ("4", None, None)]
    # a settlement is for the response a person read: another response to the same question is not settled
    other = dict(resp, **{"2": (2, "答案是B或D")})
    assert score_answers(key, other, settlements=settled).to_dict()["accuracy_settled"] == 1 / 4
    # nor is an answered reading overridden by a settlement
    d = score_answers(key, resp, settlements={"1": ("B", "ada", response_sha("答案：A"))}).to_dict()
    assert d["correct"] == 1 and d["ambiguous_answers"][0]["settled"] is None
    assert set(d["definitions"]) >= {"accuracy_settled", "accuracy_ambiguous_wrong", "accuracy_cmb_regex",
                                     "accuracy_macro"}


def test_accuracy_per_category_and_subcategory_micro_and_macro():
    # 医师: 执业 3 questions (2 right), 住院 1 (1 right) -> micro 3/4, macro (2/3 + 1)/2 = 5/6
    # 护理: 护士 2 (0 right)                             -> micro 0, macro 0
    # overall micro 3/6; macro (CMB score.py + Table 6 "Average") = mean of category macros (5/6 + 0)/2 = 5/12
    key = key_of(q(1, "A", "医师", "执业"), q(2, "B", "医师", "执业"), q(3, "C", "医师", "执业"),
                 q(4, "D", "医师", "住院"), q(5, "E", "护理", "护士"), q(6, "A", "护理", "护士"))
    res = score_answers(key, {"1": (1, "A"), "2": (2, "B"), "3": (3, "D"), "4": (4, "D"), "5": (5, "A"),
                              "6": (6, "B")})
    d = res.to_dict()
    assert d["accuracy_settled"] == 0.5 and d["accuracy_macro"] == pytest.approx(5 / 12)
    doc = d["categories"]["医师"]
    assert (doc["n"], doc["correct"], doc["accuracy_settled"]) == (4, 3, 0.75)
    assert doc["accuracy_macro"] == pytest.approx(5 / 6)
    g = {"ambiguous": 0, "unsettled": 0}
    assert doc["subcategories"] == {
        "住院": {"n": 1, "correct": 1, "accuracy_settled": 1.0, "accuracy_ambiguous_wrong": 1.0, **g},
        "执业": {"n": 3, "correct": 2, "accuracy_settled": 2 / 3, "accuracy_ambiguous_wrong": 2 / 3, **g}}
    assert d["categories"]["护理"]["accuracy_settled"] == 0.0


def _cmb_score_py(rows):
    """CMB's score.py (FreedomIntelligence/CMB), restated: per exam_type, the mean of its exam_classes'
    accuracies; the overall "Average" (Table 6) is the mean of those."""
    stats: dict = {}
    for exam_type, exam_class, right in rows:
        s = stats.setdefault(exam_type, {}).setdefault(exam_class, [0, 0])
        s[0] += right
        s[1] += 1
    per_cat = {t: sum(c / n for c, n in cls.values()) / len(cls) for t, cls in stats.items()}
    return per_cat, sum(per_cat.values()) / len(per_cat)


def test_macro_is_cmbs_mean_of_subcategory_means():
    # P: p1 1 question right (1.0), p2 3 questions none right (0.0) -> question-level 1/4, CMB (1 + 0)/2 = 0.5
    # Q: q1 1 question right (1.0)
    # overall: mean of question-level category accuracies (1/4 + 1)/2 = 0.625 (medeval before issue 21);
    #          CMB: mean of the subcategory means (0.5 + 1)/2 = 0.75
    key = key_of(q(1, "A", "P", "p1"), q(2, "A", "P", "p2"), q(3, "A", "P", "p2"), q(4, "A", "P", "p2"),
                 q(5, "A", "Q", "q1"))
    resp = {"1": (1, "A"), "2": (2, "B"), "3": (3, "B"), "4": (4, "B"), "5": (5, "A")}
    d = score_answers(key, resp).to_dict()
    assert d["accuracy_macro"] == 0.75
    assert macro_mean(c["accuracy_settled"] for c in d["categories"].values()) == 0.625  # the old convention
    per_cat, overall = _cmb_score_py([("P", "p1", 1), ("P", "p2", 0), ("P", "p2", 0), ("P", "p2", 0),
                                      ("Q", "q1", 1)])
    assert overall == d["accuracy_macro"]
    assert {c: v["accuracy_macro"] for c, v in d["categories"].items()} == per_cat
    assert "mean of its subcategories' accuracies" in d["definitions"]["accuracy_macro"]


def test_a_category_with_and_without_subcategories_is_refused():
    from medeval.core.errors import MedevalError

    key = key_of(q(1, "A", "P", "p1"), q(2, "A", "P"))
    with pytest.raises(MedevalError, match="some questions have a subcategory and some do not"):
        score_answers(key, {"1": (1, "A")}).to_dict()


def test_cmb_field_names_and_generic_names_give_the_same_result():
    cmb = key_of(q(1, "A", "医师考试", "执业医师", exam_subject="外科"), q(2, "B", "护理考试", "护士"))
    generic = key_of({"id": 1, "answer": "A", "category": "医师考试", "subcategory": "执业医师", "subject": "外科"},
                     {"id": 2, "answer": "B", "category": "护理考试", "subcategory": "护士"})
    resp = {"1": (1, "A"), "2": (2, "C")}
    a, b = score_answers(cmb, resp).to_dict(), score_answers(generic, resp).to_dict()
    assert a["categories"] == b["categories"] and cmb["1"].subject == generic["1"].subject == "外科"


@pytest.mark.parametrize("values,expected", [
    ([59.90, 69.31, 52.19, 61.50, 59.69, 54.19], 59.46),   # CMB Table 6, GPT-4: "Average"
    ([78.55, 83.56, 79.78, 77.92, 68.26, 58.19], 74.38),   # CMB Table 6, Qwen-72B-Chat
    ([42.25, 46.88, 38.44, 38.83, 40.75, 31.44], 39.76),   # CMB Table 7, DISC-MedLLM-13B
])
def test_overall_average_is_the_mean_of_the_category_accuracies_as_in_cmb_table_6(values, expected):
    assert round(macro_mean(values), 2) == expected


def test_demo_files_score_as_computed_by_hand():
    # exam_demo_answers.jsonl vs exam_demo_key.json: 1 "根据CT和ECG…选A" right (CMB: C); 2 "正确答案是 A、B、D"
    # right (CMB too); 3 "心电图。" right by option text (CMB: nothing); 4 "B. 3分钟" wrong (key C); 5 "答案：A"
    # right; 6 "A、B、D正确，C错误，不选C" right (CMB: ABDCC); 7 "我认为B和C都有可能…" ambiguous (CMB: B, wrong);
    # 8 "答案為C或D，視情況而定。" ambiguous (CMB: no "答案为" in traditional script, so every capital, C: right).
    (r,) = score_files(DEMO / "exam_demo_answers.jsonl", DEMO / "exam_demo_key.json")
    d = r.to_dict()
    assert (d["model"], d["n"], d["correct"], d["ambiguous"], d["unsettled"]) == ("DemoModel", 8, 5, 2, 2)
    assert d["accuracy_settled"] == d["accuracy_ambiguous_wrong"] == 5 / 8
    assert d["cmb_regex"]["correct"] == 3 and d["accuracy_cmb_regex"] == 3 / 8
    nurse = d["categories"]["护理考试"]
    assert (nurse["subcategories"]["护士"]["n"], nurse["subcategories"]["护士"]["correct"]) == (3, 1)
    # CMB: 医师 (执业 2/2 + 住院 1/2)/2 = 0.75; 护理 (护士 1/3 + 护师 1/1)/2 = 2/3; overall (0.75 + 2/3)/2
    assert nurse["accuracy_macro"] == pytest.approx(2 / 3) and d["categories"]["医师考试"]["accuracy_macro"] == 0.75
    assert d["accuracy_macro"] == pytest.approx((0.75 + 2 / 3) / 2)
    assert [(a["id"], a["candidates"]) for a in d["ambiguous_answers"]] == [("7", "BC"), ("8", "CD")]
    assert (d["question_types"]["多项选择题"]["n"], d["question_types"]["多项选择题"]["correct"]) == (2, 2)


def test_key_without_options_like_cmbs_answer_file(tmp_path):
    key = write(tmp_path / "key.json", json.dumps([
        {"id": 1, "exam_type": "医师考试", "exam_class": "规培结业", "exam_subject": "临床病理科",
         "question_type": "单项选择题", "answer": "D"},
        {"id": 5, "exam_type": "医师考试", "exam_class": "规培结业", "exam_subject": "眼科",
         "question_type": "多项选择题", "answer": "ABCDE"}], ensure_ascii=False))
    ans = write(tmp_path / "a.jsonl", '{"id": "1", "response": "根据CT和ECG结果，选D"}\n{"id": 5, "response": "ABCDE"}\n')
    (r,) = score_files(ans, key)
    d = r.to_dict()
    assert d["correct"] == 2 and d["cmb_regex"]["correct"] == 1


def test_several_models(tmp_path):
    key = write(tmp_path / "key.json", json.dumps([q(1, "A"), q(2, "B")]))
    ans = write(tmp_path / "a.jsonl", "\n".join(json.dumps(x) for x in [
        {"id": 1, "model": "m1", "response": "A"}, {"id": 2, "model": "m1", "response": "B"},
        {"id": 1, "model": "m2", "response": "C"}]) + "\n")
    res = {r.model: r.to_dict() for r in score_files(ans, key)}
    assert res["m1"]["accuracy_settled"] == 1.0
    assert (res["m2"]["correct"], res["m2"]["unanswered"]) == (0, 1)


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize("items,message,row", [
    ([q(1, "A"), q(1, "B")], "id '1' appears twice (also entry 1)", 2),
    ([q(1, "F")], "answer 'F' has F, not among the options A, B, C, D, E", 1),
    ([q(1, "AA")], "repeats a letter", 1),
    ([q(1, "1")], "is not a set of option letters", 1),
    ([q(1, "A"), {"id": 2, "option": {"A": "x"}}], "the question has no 'answer'", 2),
    ([q(1, "")], "answer is missing or empty", 1),
    ([q(1, "A", option=["x", "y"])], "'option' must be an object", 1),
    ([q(1, "A", option={"AB": "x"})], "option key 'AB' is not a single letter", 1),
    ([q(1, "A", exam_type="医师考试", category="护理考试")], "'exam_type' is '医师考试' but 'category' is '护理考试'", 1),
    ([q(1, "A", exam_class="")], "'exam_class' is empty", 1),
])
def test_invalid_keys_fail_with_entry_and_reason(tmp_path, items, message, row):
    p = write(tmp_path / "key.json", json.dumps(items, ensure_ascii=False))
    with pytest.raises(InputError) as e:
        read_key(p)
    assert message in str(e.value) and e.value.row == row and e.value.file == str(p)


def test_key_answers_are_normalised():
    key = key_of(q(1, "d, b"), q(2, "B、D"))
    assert key["1"].answer == key["2"].answer == "BD"


@pytest.mark.parametrize("lines,message,row", [
    (['{"id": 9, "response": "A"}'], "id '9' is not in the answer key", 1),
    (['{"id": 1, "response": "A"}', '{"id": 1, "response": "B"}'], "id '1' is answered twice (also line 1)", 2),
    (['{"id": 1}'], "column 'response' is missing", None),
    (['{"id": 1, "response": "A"}', '{"id": 2}'], "field 'response' is missing on this line", 2),
    (['{"id": 1, "response": null}'], "field 'response' is null", 1),
    (['{"id": 1, "model": "m", "response": "A"}', '{"id": 2, "response": "A"}'], "field 'model' is missing", 2),
    (['{"id": 1, "response": "A"', ], "invalid JSON", 1),
])
def test_invalid_answers_fail_with_line_and_reason(tmp_path, lines, message, row):
    key = write(tmp_path / "key.json", json.dumps([q(1, "A"), q(2, "B"), q("10", "C")]))
    p = write(tmp_path / "a.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(InputError) as e:
        read_answers(p, read_key(key))
    assert message in str(e.value) and e.value.row == row


def test_unknown_answer_id_suggests_a_close_one(tmp_path):
    key = write(tmp_path / "key.json", json.dumps([q("q-001", "A")]))
    p = write(tmp_path / "a.jsonl", '{"id": "q-01", "response": "A"}\n')
    with pytest.raises(InputError, match="did you mean 'q-001'"):
        read_answers(p, read_key(key))


# ------------------------------------------------------------------ command line

DEMO = ROOT / "medeval" / "demo" / "data"


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_exam_score_formats_and_details(tmp_path):
    key = write(tmp_path / "key.json", json.dumps(
        {"questions": [q(1, "A", "医师考试", "执业医师"), q(2, "BD", "医师考试", "住院医师"), q(3, "C", "护理考试", "护士")]},
        ensure_ascii=False))
    ans = write(tmp_path / "a.jsonl", "\n".join(json.dumps(x, ensure_ascii=False) for x in [
        {"id": 1, "response": "根据CT和ECG结果，选A"}, {"id": 2, "response": "正确答案是 B、D"},
        {"id": 3, "response": "不选C，选E"}]) + "\n")
    out = run_cli("exam-score", ans, key, "--details", tmp_path / "d.csv")  # end to end, in a subprocess
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert (d["n"], d["correct"]) == (3, 2)
    assert d["categories"]["医师考试"]["accuracy_settled"] == 1.0
    assert d["categories"]["护理考试"]["accuracy_settled"] == 0.0
    assert d["accuracy_macro"] == 0.5
    rows = list(csv.DictReader(io.StringIO((tmp_path / "d.csv").read_text(encoding="utf-8"))))
    assert [(r["id"], r["extracted"], r["cmb_regex"], r["correct_settled"]) for r in rows] == [
        ("1", "A", "C", "1"), ("2", "BD", "BD", "1"), ("3", "E", "C", "0")]

    rows = list(csv.DictReader(io.StringIO(invoke("exam-score", ans, key, "--format", "csv").stdout)))
    assert [(r["level"], r["group"], r["subgroup"], r["correct"]) for r in rows] == [
        ("overall", "", "", "2"), ("category", "医师考试", "", "2"), ("subcategory", "医师考试", "住院医师", "1"),
        ("subcategory", "医师考试", "执业医师", "1"), ("category", "护理考试", "", "0"),
        ("subcategory", "护理考试", "护士", "0")]  # groups sorted by code point
    assert rows[0]["accuracy_cmb_regex"] == repr(2 / 3)
    # CMB's regex credits question 3: the model wrote "不选C，选E" and CMB reads the first capital, C (= the key)
    md = invoke("exam-score", ans, key, "--format", "md").stdout
    assert "3 questions; accuracy_settled 66.7% (2 correct), accuracy_ambiguous_wrong 66.7%" in md  # one decimal
    assert "| subcategory | 医师考试 | 住院医师 | 1 | 1 | 100.0% | 100.0% | 0 | 0 |  |" in md
    assert "**accuracy_macro**: CMB's convention" in md


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_exam_score_error_is_one_clean_line(tmp_path):
    key = write(tmp_path / "key.json", json.dumps([q(1, "A"), q(1, "B")]))
    ans = write(tmp_path / "a.jsonl", '{"id": 1, "response": "A"}\n')
    out = run_cli("exam-score", ans, key)
    assert out.returncode == 1
    assert out.stderr.startswith("Error: ") and "appears twice" in out.stderr and "Traceback" not in out.stderr


def test_csv_exports_prefix_model_names_a_spreadsheet_would_run(tmp_path):
    """OWASP CSV injection (issue 12): a model named like a formula is written as text in both CSVs."""
    from medeval.stats.exam import details_csv, render

    evil = '=HYPERLINK("http://x","y")'
    key = write(tmp_path / "key.json", json.dumps([{"id": "q1", "answer": "A"}]))
    ans = write(tmp_path / "a.jsonl", json.dumps({"id": "q1", "response": "A", "model": evil}))
    res = score_files(ans, key)
    assert {r[0] for r in list(csv.reader(io.StringIO(render(res, "csv"))))[1:]} == {"'" + evil}
    assert list(csv.reader(io.StringIO(details_csv(res))))[1][0] == "'" + evil
