"""Clinical cases, responses, judges' assessments and fact-check claims (medeval.annotation.cases, medeval.cli.cases):
reading the files, parsing scores from rationales, all-or-nothing import, read helpers, CLI.

The real CMB-Clin copy is read from ../shared/data (never copied into the project)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from medeval.accounts.auth import PermissionDenied, User
from medeval.annotation.cases import (DEFAULT_FACT_MODEL, datasets, fact_claim_pairs, import_cases, import_fact_claims, parse_judge_scores, questions, read_cases, read_judgements, read_responses)
from medeval.core.errors import InputError, MedevalError
from tests.conftest import SHARED, db_dump, invoke, run_cli, write

CMB = SHARED / "data" / "cmb-clin-qa.json"
needs_cmb = pytest.mark.skipif(not CMB.exists(), reason="../shared/data/cmb-clin-qa.json is not available")


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def jsonl_text(rows: list[dict]) -> str:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"


# ------------------------------------------------------------------ small hand-made files

CASES_JSON = [
    {"id": "c1", "title": "案例分析-急性阑尾炎", "description": "患者，男，25岁，转移性右下腹痛12小时。",
     "QA_pairs": [{"question": "该患者的诊断是什么？", "answer": "急性阑尾炎。"},
                  {"question": "治疗原则是什么？", "answer": "尽早行阑尾切除术。"}]},
    {"id": "c2", "title": "Case - type 2 diabetes", "description": "A 54-year-old woman with polyuria.",
     "QA_pairs": [{"question": "What is the most likely diagnosis?", "answer": "Type 2 diabetes mellitus."}]},
]

RESPONSES = [
    {"case": "c1", "question": 1, "model": "ModelA", "response": "考虑急性阑尾炎。"},
    {"case": "c1", "question": 1, "model": "ModelB", "response": "可能是胃肠炎。"},
    {"case": "c1", "question": 2, "model": "ModelA", "response": "手术切除阑尾。"},
    {"case": "c1", "question": 2, "model": "ModelB", "response": ""},  # a model may answer nothing
    {"case": "c2", "question": 1, "model": "ModelA", "response": "Type 2 diabetes."},
    {"case": "c2", "question": 1, "model": "ModelB", "response": "Diabetes insipidus."},
]

RATIONALE_ZH = ("医生1的回答与参考答案一致，明确给出急性阑尾炎的诊断；医生2误诊为胃肠炎。\n"
                "评分：医生1：5分；医生2：2分。")
RATIONALE_EN = ("Doctor 1 said the dose is 5 mg, which is irrelevant; Doctor 2 gives the correct diagnosis.\n"
                "Score: Doctor 1: 2 points, Doctor 2: 5 points.")

JUDGEMENTS = [
    # scores read from the rationale, in the order the judge saw the responses
    {"case": "c1", "question": 1, "judge": "gpt-4", "rationale": RATIONALE_ZH, "models": "ModelA,ModelB", "scores": ""},
    # the judge saw ModelB first: "Doctor 1" is ModelB
    {"case": "c2", "question": 1, "judge": "gpt-4", "rationale": RATIONALE_EN, "models": '["ModelB", "ModelA"]',
     "scores": ""},
    # explicit scores
    {"case": "c1", "question": 2, "judge": "AutoMedEval", "rationale": "ModelA is complete; ModelB is empty.",
     "models": "", "scores": '{"ModelA": 4.5, "ModelB": 1}'},
]


@pytest.fixture
def files(tmp_path):
    return {
        "cases": write(tmp_path / "cases.json", json.dumps(CASES_JSON, ensure_ascii=False)),
        "responses": write(tmp_path / "responses.csv", csv_text(RESPONSES)),
        "judgements": write(tmp_path / "judgements.csv", csv_text(JUDGEMENTS)),
    }


def full_import(db, files, dataset="demo", **kw):
    return import_cases(db, dataset, cases=files["cases"], responses=files["responses"],
                        judgements=files["judgements"], **kw)


# ------------------------------------------------------------------ parse_judge_scores

SCORE_TEXTS = [
    ("Doctor 1: 5 points. Doctor 2: 4 points.", {1: 5.0, 2: 4.0}),
    ("Doctor 1 gets 4 points, Doctor 2 gets 2 points.", {1: 4.0, 2: 2.0}),
    ("医生1：5分", {1: 5.0}),
    # a correction that names its response replaces that response's score (the shared 4 stays Doctor 1's)
    ("医生1和医生2均为4分。修正：医生2：3分", {1: 4.0, 2: 3.0}),
    ("医生1得分：4分，医生2得分：3分", {1: 4.0, 2: 3.0}),
    ("Response 1: 3/5\nResponse 2: 4/5", {1: 3.0, 2: 4.0}),
    ("Assistant 1: 3.5\nAssistant 2: 4", {1: 3.5, 2: 4.0}),
    ("**Doctor 1**: 4 points\n**Doctor 2**: 3 points", {1: 4.0, 2: 3.0}),
    ("Score: Doctor 1: 5 points; Doctor 2: 3 points", {1: 5.0, 2: 3.0}),
    # full-width colons and digits
    ("医生１：５分；医生２：３分。", {1: 5.0, 2: 3.0}),
    ("Ｄｏｃｔｏｒ １：４ points", {1: 4.0}),
    # a rationale that quotes numbers before the score line
    ("Doctor 1 said the dose is 5 mg twice daily, Doctor 2 recommended 10 mg. Doctor 1 was right.\n"
     "Final scores -- Doctor 1: 4 points, Doctor 2: 2 points.", {1: 4.0, 2: 2.0}),
    ("医生1建议口服阿莫西林500mg，每日3次；医生2未给出剂量。\n医生1：4分，医生2：3分", {1: 4.0, 2: 3.0}),
    ("医生1认为患者45岁以上需要筛查。医生1的得分为4分，医生2的得分为3分。", {1: 4.0, 2: 3.0}),
    ("医生2得分：3分；医生1得分：5分", {1: 5.0, 2: 3.0}),
    ("医生一：五分，医生二：三分", {1: 5.0, 2: 3.0}),
    ("Doctor 1's score: 4. Doctor 2 scores 3 and is less complete.", {1: 4.0, 2: 3.0}),
    ("Response 1 (score: 4) is accurate; Response 2 (score: 2) misses the diagnosis.", {1: 4.0, 2: 2.0}),
    ("Doctor 1: **4** points; Doctor 2: **3** points", {1: 4.0, 2: 3.0}),
    ("Doctor #1: 3 out of 5, Doctor #2: 5 out of 5", {1: 3.0, 2: 5.0}),
    ("回答1：4.5分。回答2：3分。", {1: 4.5, 2: 3.0}),
    ("the same score twice is fine: Doctor 1: 4 points ... in summary Doctor 1: 4 points", {1: 4.0}),
    ("医生1打4分，医生2可得3分", {1: 4.0, 2: 3.0}),
    ("Doctor 1 - 4 points; Doctor 2 = 3", {1: 4.0, 2: 3.0}),
    # measurements, ages and durations are not scores
    ("Doctor 1 is a 45-year-old man's physician", {}),
    ("Doctor 2 is 45-year-old", {}),
    ("Doctor 1: 5 mg is the right dose", {}),
    ("医生1：5分钟内给药", {}),
    ("Doctor 1: 45 years old patient", {}),
    ("Doctor 1 at 1.5", {}),
    ("", {}),
]


@pytest.mark.parametrize("text,want", SCORE_TEXTS)
def test_parse_judge_scores(text, want):
    assert parse_judge_scores(text) == want


@pytest.mark.parametrize("text", [
    "Doctor 1: 5 points. After reconsidering, Doctor 1: 3 points.",
    "医生1：5分……综上，医生1得分：4分",
    # a score line and the final summary disagree
    "Doctor 1:\nAccurate diagnosis, clear plan.\nScore: 4\n\nScores: Doctor 1: 3 points",
    "医生1：\n诊断正确，方案合理。\n得分：4分\n综上，医生1得分：5分",
    # a shared score and a later one of its own
    "Doctor 1 and Doctor 2 both get 4 points. On reflection, Doctor 1: 5 points.",
])
def test_parse_judge_scores_conflict(text):
    with pytest.raises(InputError, match="two different scores") as e:
        parse_judge_scores(text)
    assert "scores" in e.value.fix


# numbered lists after a label are not scores; a stop after a score is
LIST_TEXTS = [
    ("Doctor 1: 1. Accurate diagnosis of community-acquired pneumonia. 2. Appropriate antibiotic choice. "
     "3. No follow-up advice.\nDoctor 2: 1. Misses the diagnosis. 2. No dose given.", {}),
    ("Doctor 1:\n1. Accurate diagnosis\n2. Clear plan", {}),
    ("医生1：1、诊断准确；2、用药合理；3、缺少随访建议。\n医生2：1、遗漏诊断。", {}),
    ("Doctor 1: 1) accurate diagnosis 2) clear plan", {}),
    ("Doctor 1 (1) accurate diagnosis (2) good plan", {}),
    ("Doctor 1: 3. Dose 4. Follow-up", {}),  # a list continued: the next item follows
    ("Doctor 2: 1. Completely wrong diagnosis.", {}),  # "1." then text reads as a list (say "1 point")
    # a score then the end of the line or text, or the next label
    ("Doctor 1: 4.", {1: 4.0}),
    ("Doctor 1: 4. Doctor 2: 3.", {1: 4.0, 2: 3.0}),
    ("Doctor 1: **4**. **Doctor 2**: **3**.", {1: 4.0, 2: 3.0}),
    ("Doctor 1: 4.\nThe answer is accurate.\nDoctor 2: 2.\nIt misses the dose.", {1: 4.0, 2: 2.0}),
    ("医生1：4、医生2：3", {1: 4.0, 2: 3.0}),
    ("Doctor 1 (1). Doctor 2 (3).", {1: 1.0, 2: 3.0}),
    # a number other than 1 with text after it and no next item is a score
    ("Doctor 1: 4. The answer is accurate and complete.", {1: 4.0}),
    # a unit makes it a score whatever follows
    ("Doctor 1: 1 point. Completely wrong diagnosis.", {1: 1.0}),
    ("医生1：1分。诊断错误。医生2：4分。", {1: 1.0, 2: 4.0}),
    ("Doctor 1: 4/5. Accurate.", {1: 4.0}),
    ("Response 1 (score: 4) is accurate; Response 2 (score: 1) misses the diagnosis.", {1: 4.0, 2: 1.0}),
    ("Doctor 1 (score 1) misses the diagnosis", {1: 1.0}),
]


@pytest.mark.parametrize("text,want", LIST_TEXTS)
def test_parse_judge_scores_list_items(text, want):
    assert parse_judge_scores(text) == want


EN_SECTIONS = ("Doctor 1:\n1. Accurate diagnosis of community-acquired pneumonia.\n2. Amoxicillin 500 mg three times "
               "daily is appropriate.\nScore: 4\n\nDoctor 2:\n1. Misses the diagnosis.\n2. No dose given.\nScore: 2")
ZH_SECTIONS = ("医生1：\n1、诊断准确；2、阿莫西林500mg，每日3次，用药合理。\n得分：4分\n\n"
               "医生2：\n分析：遗漏诊断，未给出剂量。\n评分：3")

# a score line after its label's section
SECTION_TEXTS = [
    (EN_SECTIONS, {1: 4.0, 2: 2.0}),
    (EN_SECTIONS + "\n\nScores: Doctor 1: 4 points; Doctor 2: 2 points", {1: 4.0, 2: 2.0}),
    (ZH_SECTIONS, {1: 4.0, 2: 3.0}),
    (ZH_SECTIONS + "\n综上，医生1：4分，医生2：3分。", {1: 4.0, 2: 3.0}),
    ("**Doctor 1**\nThe diagnosis is correct.\n**Score:** 4/5\n\n**Doctor 2**\nIncomplete.\n**Score:** 3/5",
     {1: 4.0, 2: 3.0}),
    ("### Response 1\nGood differential.\nRating: 4\n### Response 2\nPoor.\nRating: 2", {1: 4.0, 2: 2.0}),
    ("Doctor 1:\n- Accurate diagnosis\n- Clear plan\n**Final score: 4**\n\nDoctor 2:\n- Misses the dose\n"
     "**Final score: 3**", {1: 4.0, 2: 3.0}),
    ("Doctor 1's answer is accurate. Score: 4. Doctor 2's answer misses the dose. Score: 2.", {1: 4.0, 2: 2.0}),
    ("医生1的回答：诊断准确。得分：4分。医生2的回答：遗漏剂量，得分：3分。", {1: 4.0, 2: 3.0}),
    # prose mentioning both before the sections: each score line goes to its section's heading
    ("Doctor 1 gives the dose; Doctor 2 does not.\n\nDoctor 1:\nCorrect dose.\nScore: 4\n"
     "Doctor 2:\nNo dose.\nScore: 2", {1: 4.0, 2: 2.0}),
    # the section may mention its own label again, and measurements are still not scores
    ("Doctor 1:\nDoctor 1 recommends 2 tablets.\nScore: 4", {1: 4.0}),
    ("Response 1:\nA 3 times higher risk is noted.\nRating: 4", {1: 4.0}),
    # ambiguous: another label between, no label at all, or the score line names labels itself
    ("Doctor 1:\nUnlike Doctor 2, it gives the dose.\nScore: 4", {}),
    ("Doctor 2 is better than Doctor 1. Score: 4", {}),
    ("Score: 4\nDoctor 1: accurate.", {}),
    ("Doctor 1:\nGood.\nDoctor 2:\nPoor.\nScore: 4 (Doctor 1), 3 (Doctor 2)", {}),
    ("医生1：\n比医生2更全面。\n得分：4分", {}),
    # a score line after a score is not read again
    ("Doctor 1: 4 points\nReason: accurate.\nScore: 5", {1: 4.0}),
]


@pytest.mark.parametrize("text,want", SECTION_TEXTS)
def test_parse_judge_scores_score_lines(text, want):
    assert parse_judge_scores(text) == want


# several labels sharing one score
SHARED_TEXTS = [
    ("Doctor 1 and Doctor 2 both get 4 points", {1: 4.0, 2: 4.0}),
    ("Doctors 1 and 2 each receive 3 points.", {1: 3.0, 2: 3.0}),
    ("Doctor 1 and 2 are both rated 4.", {1: 4.0, 2: 4.0}),
    ("Both Doctor 1 and Doctor 2 get 4 points, Doctor 3 gets 2 points.", {1: 4.0, 2: 4.0, 3: 2.0}),
    ("Doctor 1's and Doctor 2's scores are both 4.", {1: 4.0, 2: 4.0}),
    ("Doctor 1 & Doctor 2: 3/5 each", {1: 3.0, 2: 3.0}),
    ("医生1和医生2均为4分", {1: 4.0, 2: 4.0}),
    ("医生1、医生2均得4分，医生3得2分", {1: 4.0, 2: 4.0, 3: 2.0}),
    ("医生1和医生2的得分均为4分。", {1: 4.0, 2: 4.0}),
    ("医生1与医生2都是4分。", {1: 4.0, 2: 4.0}),
    # respectively: not shared, and not the first score for the last label either
    ("Doctor 1 and Doctor 2 get 4 and 3 points respectively.", {}),
    ("Doctor 1 and Doctor 2 score 4 and 3", {}),
    ("医生1和医生2分别得4分和3分", {}),
    # a bare number after a comma is not a label; joined labels with no score are nothing
    ("Doctor 1 and Doctor 2 both prescribe 5 mg", {}),
    ("Scores: 4 (Doctor 1), 3 (Doctor 2)", {}),
]


@pytest.mark.parametrize("text,want", SHARED_TEXTS)
def test_parse_judge_scores_shared(text, want):
    assert parse_judge_scores(text) == want


def test_parse_judge_scores_long_label_chain():
    # a long run of joined labels with no score must not backtrack without end
    assert parse_judge_scores("Doctor 1" + " and Doctor 2" * 3000 + " both agree") == {}
    assert parse_judge_scores("Doctor 1: 1. x 2. y, Doctor 2 and Doctor 3 and 4 mg; " * 2000 + "\nScore: 4") == {}


# ------------------------------------------------------------------ read_cases


@needs_cmb
def test_read_cmb_clin_as_published():
    cases = read_cases(CMB)
    assert len(cases) == 74 and sum(len(c.questions) for c in cases) == 208
    first = cases[0]
    assert first.key == "0" and first.title == "案例分析-腹外疝"
    assert first.description.startswith("现病史") and "3小时前解大便后出现右下腹疼痛" in first.description
    assert [q.position for q in first.questions] == [1, 2, 3]
    assert first.pairs[0][0] == "简述该病人的诊断及诊断依据。"
    assert first.pairs[0][1].startswith("诊断：嵌顿性腹股沟斜疝合并肠梗阻。")
    assert [c.key for c in cases] == [str(i) for i in range(74)]


def test_read_flat_csv_positions_and_blank_titles(tmp_path):
    p = write(tmp_path / "flat.csv",
              "case,title,description,position,question,reference\n"
              "k1,Title one,Desc one,2,Second?,Ref 2\n"
              "k1,,,1,First?,Ref 1\n"
              "k2,Title two,,,Only?,Ref only\n")
    c1, c2 = read_cases(p)
    assert (c1.key, c1.title, c1.description) == ("k1", "Title one", "Desc one")
    assert c1.pairs == [("First?", "Ref 1"), ("Second?", "Ref 2")]
    assert [q.row for q in c1.questions] == [3, 2]
    assert (c2.key, c2.title, c2.description, c2.pairs) == ("k2", "Title two", "", [("Only?", "Ref only")])


def test_read_flat_jsonl_and_tsv_file_order(tmp_path):
    rows = [{"case": 7, "question": "Q a", "reference": "R a"}, {"case": 8, "question": "Q x", "reference": "R x"},
            {"case": 7, "question": "Q b", "reference": "R b"}]
    (a, b) = read_cases(write(tmp_path / "f.jsonl", jsonl_text(rows)))
    assert (a.key, a.pairs, b.key) == ("7", [("Q a", "R a"), ("Q b", "R b")], "8")
    t = read_cases(write(tmp_path / "f.tsv", "case\tquestion\treference\n7\tQ a\tR a\n7\tQ b\tR b\n"))
    assert [q.position for q in t[0].questions] == [1, 2]


def test_read_solution_variant_and_equal_duplicates(tmp_path):
    data = [{"id": "a", "title": "t", "description": "d",
             "QA_pairs": [{"question": "q1", "solution": "s1"}, {"question": "q2", "answer": "s2", "solution": "s2"}]}]
    (c,) = read_cases(write(tmp_path / "s.json", json.dumps(data)))
    assert c.pairs == [("q1", "s1"), ("q2", "s2")]


def _nested(pairs, **extra):
    return json.dumps([{"id": "a", "title": "t", "description": "d", "QA_pairs": pairs, **extra}])


CASE_ERRORS = [
    ("bad.json", _nested([{"question": "q", "answer": "x", "solution": "y"}]), 1, "different texts"),
    ("bad.json", _nested([{"question": "q"}]), 1, "no reference answer"),
    ("bad.json", _nested([{"question": "", "answer": "x"}]), 1, "question is empty"),
    ("bad.json", _nested([{"answer": "x"}]), 1, "question is missing"),
    ("bad.json", _nested([{"question": "q", "answer": "  "}]), 1, "reference answer is empty"),
    ("bad.json", _nested([]), 1, "has no questions"),
    ("bad.json", _nested(["q"]), 1, "not an object"),
    ("bad.json", _nested({"question": "q"}), 1, "not a list"),
    ("bad.json", json.dumps([{"id": "a", "QA_pairs": [{"question": "q", "answer": "x"}]},
                             {"id": "a", "QA_pairs": [{"question": "q", "answer": "x"}]}]), 2, "duplicate case id"),
    ("bad.json", json.dumps([{"title": "no id", "QA_pairs": [{"question": "q", "answer": "x"}]}]), 1,
     "case id is missing"),
    ("bad.csv", "case,question\nk,q\n", None, "'reference' is missing"),
    ("bad.csv", "case,question,reference\nk,,r\n", 2, "question \\(case 'k'\\) is empty"),
    ("bad.csv", "case,question,reference\nk,q,\n", 2, "reference \\(case 'k'\\) is empty"),
    ("bad.csv", "case,question,reference\n,q,r\n", 2, "the case is empty"),
    ("bad.csv", "case,position,question,reference\nk,1,q,r\nk,1,q2,r2\n", 3, "question 1 twice"),
    ("bad.csv", "case,position,question,reference\nk,1,q,r\nk,,q2,r2\n", 3, "some rows give a position"),
    ("bad.csv", "case,position,question,reference\nk,first,q,r\n", 2, "whole number"),
    ("bad.csv", "case,position,question,reference\nk,0,q,r\n", 2, "whole number"),
    ("bad.csv", "case,title,question,reference\nk,T1,q,r\nk,T2,q2,r2\n", 3, "another title on row 2"),
    ("bad.json", '[{"id": "a", ', None, "invalid JSON"),
    ("empty.csv", "", None, "empty"),
]


@pytest.mark.parametrize("name,text,row,msg", CASE_ERRORS)
def test_read_cases_errors(tmp_path, name, text, row, msg):
    p = write(tmp_path / name, text)
    with pytest.raises(InputError, match=msg) as e:
        read_cases(p)
    assert e.value.file == str(p) and e.value.row == row and e.value.fix


def test_read_cases_not_utf8(tmp_path):
    p = write(tmp_path / "gbk.csv", "case,question,reference\n病例,问题,参考\n", encoding="gb18030")
    with pytest.raises(InputError, match="not UTF-8"):
        read_cases(p)


# ------------------------------------------------------------------ read_responses / read_judgements


def test_read_responses(files):
    rows = read_responses(files["responses"])
    assert [(r.case, r.position, r.model) for r in rows[:2]] == [("c1", 1, "ModelA"), ("c1", 1, "ModelB")]
    assert rows[3].response == "" and rows[3].row == 5


@pytest.mark.parametrize("text,row,msg", [
    ("case,question,model\nc1,1,m\n", None, "'response' is missing"),
    ("case,question,model,response\nc1,1,m,a\nc1,1,m,b\n", 3, "duplicate response of m"),
    ("case,question,model,response\nc1,first,m,a\n", 2, "question must be a whole number"),
    ("case,question,model,response\nc1,1,,a\n", 2, "the model is empty"),
    ("case,question,model,response\n,1,m,a\n", 2, "the case is empty"),
])
def test_read_responses_errors(tmp_path, text, row, msg):
    p = write(tmp_path / "r.csv", text)
    with pytest.raises(InputError, match=msg) as e:
        read_responses(p)
    assert e.value.file == str(p) and e.value.row == row


def test_read_responses_json_null_is_an_error(tmp_path):
    p = write(tmp_path / "r.jsonl", jsonl_text([{"case": "c1", "question": 1, "model": "m", "response": None}]))
    with pytest.raises(InputError, match="null") as e:
        read_responses(p)
    assert e.value.row == 1 and '""' in e.value.fix


def test_read_judgements_orders_and_scores(files):
    j1, j2, j3 = read_judgements(files["judgements"])
    assert (j1.models, j1.scores) == (("ModelA", "ModelB"), {"ModelA": 5.0, "ModelB": 2.0})
    assert (j2.models, j2.scores) == (("ModelB", "ModelA"), {"ModelB": 2.0, "ModelA": 5.0})
    assert (j3.models, j3.scores) == (("ModelA", "ModelB"), {"ModelA": 4.5, "ModelB": 1.0})


def test_read_judgements_jsonl_native_types(tmp_path):
    p = write(tmp_path / "j.jsonl", jsonl_text([
        {"case": "c1", "question": 1, "judge": "J", "rationale": "Response 1: 4/5, Response 2: 3/5",
         "models": ["b", "a"]},
        {"case": "c1", "question": 2, "judge": "J", "rationale": "ok", "scores": {"a": 3, "b": "4.5"},
         "models": ["b", "a"]},
    ]))
    j1, j2 = read_judgements(p)
    assert j1.scores == {"b": 4.0, "a": 3.0}
    assert j2.models == ("b", "a") and j2.scores == {"b": 4.5, "a": 3.0}


def _jrow(**kw):
    base = {"case": "c1", "question": 1, "judge": "gpt-4", "rationale": "医生1：5分，医生2：4分", "models": "A,B",
            "scores": ""}
    return {**base, **kw}


JUDGE_ERRORS = [
    ([_jrow(rationale="医生1：5分。")], "gives 1 score\\(s\\) for 2 models .*found 1: 5.*response 2 = B"),
    ([_jrow(rationale="The diagnosis is right.")], "gives 0 score"),
    ([_jrow(rationale="医生1：5分，医生2：4分，医生3：3分")], "scores response 3 but models lists only 2"),
    ([_jrow(rationale="Doctor 1: 5 points. Doctor 2: 4 points. On reflection Doctor 1: 3 points.")],
     "two different scores"),
    ([_jrow(models="", scores='{"A": "five"}')], "not a number"),
    ([_jrow(models="", scores='{"A": NaN}')], "not a number"),
    ([_jrow(models="", scores="{A: 5}")], "scores is not valid JSON"),
    ([_jrow(models="", scores="[5, 4]")], "non-empty JSON object"),
    ([_jrow(models="A,C", scores='{"A": 5, "B": 4}')], "name different models"),
    ([_jrow(models="A,A")], "appears twice in models"),
    ([_jrow(models="", scores="")], "neither scores nor models"),
    ([_jrow(rationale="")], "rationale is empty"),
    ([_jrow(judge="")], "judge is empty"),
    ([_jrow(), _jrow()], "duplicate assessment by gpt-4"),
]


@pytest.mark.parametrize("rows,msg", JUDGE_ERRORS)
def test_read_judgements_errors(tmp_path, rows, msg):
    p = write(tmp_path / "j.csv", csv_text(rows))
    with pytest.raises(InputError, match=msg) as e:
        read_judgements(p)
    assert e.value.file == str(p) and e.value.row == len(rows) + 1 and e.value.fix


def test_read_judgements_needs_scores_or_models(tmp_path):
    p = write(tmp_path / "j.csv", "case,question,judge,rationale\nc1,1,J,fine\n")
    with pytest.raises(InputError, match="neither 'scores' nor 'models'"):
        read_judgements(p)


# ------------------------------------------------------------------ import_cases


def test_import_everything_and_read_back(db, files):
    s = full_import(db, files)
    assert s == {"dataset": "demo", "cases_added": 2, "cases_present": 0, "questions_added": 3,
                 "questions_present": 0, "responses_added": 6, "responses_present": 0, "judgements_added": 3,
                 "judgements_present": 0}
    qs = questions(db, "demo")
    assert [(q["case_key"], q["position"]) for q in qs] == [("c1", 1), ("c1", 2), ("c2", 1)]
    q1 = qs[0]
    assert q1["title"] == "案例分析-急性阑尾炎" and q1["description"] == "患者，男，25岁，转移性右下腹痛12小时。"
    assert (q1["question"], q1["reference"]) == ("该患者的诊断是什么？", "急性阑尾炎。")
    assert q1["responses"] == [{"model": "ModelA", "response": "考虑急性阑尾炎。"},
                               {"model": "ModelB", "response": "可能是胃肠炎。"}]
    assert q1["judgements"] == [{"judge": "gpt-4", "rationale": RATIONALE_ZH, "models": ["ModelA", "ModelB"],
                                 "scores": {"ModelA": 5.0, "ModelB": 2.0}}]
    assert qs[1]["responses"][1] == {"model": "ModelB", "response": ""}
    assert qs[1]["judgements"][0]["scores"] == {"ModelA": 4.5, "ModelB": 1.0}
    j = qs[2]["judgements"][0]
    assert j["models"] == ["ModelB", "ModelA"] and j["scores"] == {"ModelB": 2.0, "ModelA": 5.0}
    assert db.conn.execute("SELECT models FROM judge_assessments a JOIN case_questions q ON q.id = a.question_id "
                           "JOIN cases c ON c.id = q.case_id WHERE c.case_key = 'c2'").fetchone()[0] \
        == '["ModelB", "ModelA"]'
    assert datasets(db) == [{"dataset": "demo", "cases": 2, "questions": 3, "responses": 6, "models": 2, "judges": 2,
                             "judgements": 3, "fact_items": 0, "fact_claims": 0}]
    assert questions(db, "other") == []


def test_reimport_changes_nothing(db, db_path, files):
    full_import(db, files)
    before = db_dump(db_path)
    s = full_import(db, files)
    assert s == {"dataset": "demo", "cases_added": 0, "cases_present": 2, "questions_added": 0,
                 "questions_present": 3, "responses_added": 0, "responses_present": 6, "judgements_added": 0,
                 "judgements_present": 3}
    assert db_dump(db_path) == before


def test_import_in_steps_and_datasets_side_by_side(db, files):
    assert import_cases(db, "demo", cases=files["cases"])["questions_added"] == 3
    assert import_cases(db, "demo", responses=files["responses"])["responses_added"] == 6
    assert import_cases(db, " demo ", judgements=files["judgements"])["judgements_added"] == 3
    import_cases(db, "copy", cases=files["cases"])
    assert [(d["dataset"], d["cases"], d["responses"]) for d in datasets(db)] == [("copy", 2, 0), ("demo", 2, 6)]


def test_new_questions_may_be_added_to_a_stored_case(db, tmp_path):
    import_cases(db, "d", cases=write(tmp_path / "a.csv", "case,question,reference\nk,q1,r1\n"))
    s = import_cases(db, "d", cases=write(tmp_path / "b.csv",
                                          "case,position,question,reference\nk,1,q1,r1\nk,2,q2,r2\n"))
    assert (s["cases_present"], s["questions_present"], s["questions_added"]) == (1, 1, 1)
    assert [q["question"] for q in questions(db, "d")] == ["q1", "q2"]


@needs_cmb
def test_cmb_clin_imports_whole_and_again(db, db_path, tmp_path):
    s = import_cases(db, "cmb-clin", cases=CMB)
    assert (s["cases_added"], s["questions_added"]) == (74, 208)
    qs = questions(db, "cmb-clin")
    assert len(qs) == 208 and len({q["case_key"] for q in qs}) == 74
    assert qs[0]["title"] == "案例分析-腹外疝" and qs[0]["reference"].startswith("诊断：嵌顿性腹股沟斜疝合并肠梗阻")
    before = db_dump(db_path)
    again = import_cases(db, "cmb-clin", cases=CMB)
    assert (again["cases_added"], again["cases_present"], again["questions_added"], again["questions_present"]) \
        == (0, 74, 0, 208)
    # the README / HuggingFace variant names the reference "solution": the same data
    data = json.loads(CMB.read_text(encoding="utf-8"))
    for case in data:
        for qa in case["QA_pairs"]:
            qa["solution"] = qa.pop("answer")
    sol = write(tmp_path / "cmb-solution.json", json.dumps(data, ensure_ascii=False))
    s2 = import_cases(db, "cmb-clin", cases=sol)
    assert (s2["cases_added"], s2["questions_added"], s2["questions_present"]) == (0, 0, 208)
    assert db_dump(db_path) == before
    # and into a second dataset it imports the same texts
    import_cases(db, "cmb-sol", cases=sol)
    strip = [{k: v for k, v in q.items() if k not in ("question_id", "case_id")} for q in questions(db, "cmb-clin")]
    assert strip == [{k: v for k, v in q.items() if k not in ("question_id", "case_id")}
                     for q in questions(db, "cmb-sol")]
    # responses and a judgement against the real cases
    resp = write(tmp_path / "r.csv", csv_text([
        {"case": "0", "question": 1, "model": "echo", "response": data[0]["QA_pairs"][0]["solution"]},
        {"case": "0", "question": 1, "model": "blank", "response": "不知道"}]))
    judg = write(tmp_path / "j.csv", csv_text([
        {"case": "0", "question": 1, "judge": "gpt-4", "models": "echo,blank",
         "rationale": "医生1的诊断与参考答案完全一致（嵌顿性腹股沟斜疝合并肠梗阻），诊断依据齐全；"
                      "医生2未作回答。\n医生1：5分\n医生2：1分"}]))
    s3 = import_cases(db, "cmb-clin", responses=resp, judgements=judg)
    assert (s3["responses_added"], s3["judgements_added"]) == (2, 1)
    assert questions(db, "cmb-clin")[0]["judgements"][0]["scores"] == {"echo": 5.0, "blank": 1.0}


# -- every failed import leaves the database exactly as it was


def _fails(db, db_path, msg, **kw):
    before = db_dump(db_path)
    with pytest.raises(MedevalError, match=msg) as e:
        import_cases(db, kw.pop("dataset", "demo"), **kw)
    assert db_dump(db_path) == before
    assert not db.conn.in_transaction
    return e.value


def test_import_errors_leave_the_database_unchanged(db, db_path, files, tmp_path):
    base = import_cases(db, "demo", cases=files["cases"], responses=files["responses"])
    assert base["responses_added"] == 6
    w = lambda name, rows: write(tmp_path / name, csv_text(rows))  # noqa: E731

    e = _fails(db, db_path, "case 'c11' is not in dataset 'demo'",
               responses=w("r1.csv", [{"case": "c11", "question": 1, "model": "ModelA", "response": "x"}]))
    assert e.row == 2 and e.fix.startswith("did you mean 'c1'?")
    e = _fails(db, db_path, "case 'c1' has 2 question\\(s\\); there is no question 3",
               responses=w("r2.csv", [{"case": "c1", "question": 3, "model": "ModelA", "response": "x"}]))
    assert e.row == 2
    e = _fails(db, db_path, "already stored with different text; stored text is never overwritten",
               responses=w("r3.csv", [{"case": "c2", "question": 1, "model": "ModelA", "response": "T2DM"}]))
    assert "new model name" in e.fix
    e = _fails(db, db_path, "modela on case 'c1', question 1, but that model has no response",
               judgements=w("j1.csv", [{"case": "c1", "question": 1, "judge": "J", "rationale": "ok",
                                        "scores": '{"ModelB": 4, "modela": 3}'}]))
    assert "responses from: ModelA, ModelB" in str(e) and e.fix.startswith("did you mean 'ModelA'?")
    _fails(db, db_path, "case 'c1' is not in dataset 'other'", dataset="other",
           responses=w("r4.csv", [{"case": "c1", "question": 1, "model": "ModelA", "response": "x"}]))
    # a changed case: title, question, reference
    changed = json.loads(json.dumps(CASES_JSON))
    changed[0]["title"] = "案例分析-阑尾炎"
    e = _fails(db, db_path, "case 'c1' is already stored in dataset 'demo' with a different title",
               cases=write(tmp_path / "c1.json", json.dumps(changed, ensure_ascii=False)))
    assert e.row == 1
    changed = json.loads(json.dumps(CASES_JSON))
    changed[1]["QA_pairs"][0]["answer"] = "Type 1 diabetes."
    e = _fails(db, db_path, "case 'c2', question 1 is already stored with a different reference",
               cases=write(tmp_path / "c2.json", json.dumps(changed, ensure_ascii=False)))
    assert e.row == 2
    # a gap in the numbering of a stored case
    _fails(db, db_path, "case 'c2' would have questions 1, 3, without question 2",
           cases=write(tmp_path / "gap.csv", "case,title,description,position,question,reference\n"
                                             "c2,,,3,Next?,Ref\n"))
    # all or nothing: valid new cases + a bad response in the same call store nothing
    new_case = write(tmp_path / "new.csv", "case,question,reference\nc9,q,r\n")
    _fails(db, db_path, "no question 2", cases=new_case,
           responses=w("r5.csv", [{"case": "c9", "question": 1, "model": "M", "response": "a"},
                                  {"case": "c9", "question": 2, "model": "M", "response": "b"}]))
    # a bad judgements file stops the whole call before anything is written
    _fails(db, db_path, "gives 1 score", cases=new_case,
           judgements=w("j2.csv", [{"case": "c9", "question": 1, "judge": "J", "rationale": "Doctor 1: 3 points",
                                    "models": "M,N"}]))
    _fails(db, db_path, "dataset name is empty", dataset="  ", cases=new_case)
    _fails(db, db_path, "nothing to import")
    _fails(db, db_path, "file not found", cases=tmp_path / "missing.json")


def test_changed_judgement_is_refused(db, db_path, files, tmp_path):
    full_import(db, files)
    rows = [dict(r) for r in JUDGEMENTS]
    rows[2]["scores"] = '{"ModelA": 4, "ModelB": 1}'
    _fails(db, db_path, "AutoMedEval's assessment of case 'c1', question 2 is already stored with different",
           judgements=write(tmp_path / "j.csv", csv_text(rows)))


def test_responses_and_judgements_for_cases_of_the_same_call(db, tmp_path):
    s = import_cases(
        db, "d", cases=write(tmp_path / "c.csv", "case,question,reference\nk,Q,R\n"),
        responses=write(tmp_path / "r.csv", "case,question,model,response\nk,1,m1,a\nk,1,m2,b\n"),
        judgements=write(tmp_path / "j.csv",
                         'case,question,judge,rationale,models\nk,1,J,"Assistant 1: 2, Assistant 2: 3","m2,m1"\n'))
    assert (s["cases_added"], s["responses_added"], s["judgements_added"]) == (1, 2, 1)
    assert questions(db, "d")[0]["judgements"][0]["scores"] == {"m2": 2.0, "m1": 3.0}


def _account(db, username: str, role: str) -> User:
    """A real account: the library reads a person's role from the database it acts on."""
    from medeval.accounts import auth
    from medeval.accounts.policy import local_actor

    return auth.add_user(db, username, "a long enough password", role, actor=local_actor())


def test_actor_roles_and_audit(db, files):
    annotator = _account(db, "ann", "annotator")
    with pytest.raises(PermissionDenied):
        full_import(db, files, actor=annotator)
    assert datasets(db) == []
    researcher = _account(db, "rita", "researcher")
    full_import(db, files, actor=researcher)
    actor, action, target, detail = db.conn.execute(
        "SELECT actor, action, target, detail FROM audit_log WHERE action = 'cases.import'").fetchone()
    detail = json.loads(detail)
    assert (actor, target, detail["cases_added"], detail["judgements_added"]) == ("rita", "demo", 2, 3)
    assert detail["files"]["cases"] == str(files["cases"])
    # without an actor (CLI, scripts) nothing is audited
    import_cases(db, "demo2", cases=files["cases"])
    assert db.conn.execute("SELECT count(*) FROM audit_log WHERE action = 'cases.import'").fetchone()[0] == 1


# ------------------------------------------------------------------ fact-check claims


def fc_line(id, label, claim, response, type="Disease-Symptom", **extra):
    return {"id": id, "type": type, "label": label, "claim": claim, "response": response, **extra}


FC = [
    fc_line(1, "support", "流感可引起发热", "正确。流感常见发热。", model="m1"),
    fc_line(1, "refute", "流感不会引起发热", "错误。", model="m1"),
    fc_line(2, "support", "布洛芬可用于退热", "正确", type="Disease-Medicine", model="m1"),
    fc_line(2, "refute", "布洛芬不能退热", "正确", type="Disease-Medicine", model="m1"),
    fc_line(1, "support", "流感可引起发热", "对", model="m2"),
    fc_line(1, "refute", "流感不会引起发热", "对", model="m2"),
]


def test_import_fact_claims(db, db_path, tmp_path):
    p = write(tmp_path / "fc.jsonl", jsonl_text(FC))
    s = import_fact_claims(db, "sdak", p)
    assert s == {"dataset": "sdak", "models": ["m1", "m2"], "items_added": 3, "items_present": 0,
                 "claims_added": 6, "claims_present": 0}
    pairs = fact_claim_pairs(db, "sdak")
    assert pairs[0] == {"model": "m1", "item_key": "1", "type": "Disease-Symptom",
                        "factual_claim": "流感可引起发热", "factual_response": "正确。流感常见发热。",
                        "counterfactual_claim": "流感不会引起发热", "counterfactual_response": "错误。"}
    assert [(r["model"], r["item_key"], r["type"]) for r in pairs] == [
        ("m1", "1", "Disease-Symptom"), ("m1", "2", "Disease-Medicine"), ("m2", "1", "Disease-Symptom")]
    before = db_dump(db_path)
    again = import_fact_claims(db, "sdak", p)
    assert (again["items_added"], again["items_present"], again["claims_present"]) == (0, 3, 6)
    assert db_dump(db_path) == before
    assert datasets(db) == [{"dataset": "sdak", "cases": 0, "questions": 0, "responses": 0, "models": 2, "judges": 0,
                             "judgements": 0, "fact_items": 3, "fact_claims": 6}]
    # a changed response is refused, nothing written
    changed = [dict(r) for r in FC]
    changed[3]["response"] = "错误"
    bad = write(tmp_path / "fc2.jsonl", jsonl_text(changed))
    with pytest.raises(InputError, match="'refute' claim of item '2' \\(model 'm1'\\) is already stored .* "
                                         "different response") as e:
        import_fact_claims(db, "sdak", bad)
    assert e.value.row == 4
    assert db_dump(db_path) == before
    # invalid file (an item without its counterfactual claim): read_factcheck's error, nothing written
    with pytest.raises(InputError, match="has only a 'support' claim"):
        import_fact_claims(db, "sdak", write(tmp_path / "fc3.jsonl", jsonl_text(FC[:1])))
    assert db_dump(db_path) == before


def test_fact_claims_without_model_column_and_roles(db, tmp_path):
    rows = [{k: v for k, v in r.items() if k != "model"} for r in FC[:4]]
    p = write(tmp_path / "fc.jsonl", jsonl_text(rows))
    with pytest.raises(PermissionDenied):
        import_fact_claims(db, "sdak", p, actor=_account(db, "ann", "annotator"))
    s = import_fact_claims(db, "sdak", p, actor=_account(db, "root", "admin"))
    assert s["models"] == [DEFAULT_FACT_MODEL] == ["default"] and s["claims_added"] == 4
    assert {r["model"] for r in fact_claim_pairs(db, "sdak")} == {"default"}
    assert db.conn.execute("SELECT actor, target FROM audit_log WHERE action = 'factcheck.import'").fetchone() \
        == ("root", "sdak")
    assert fact_claim_pairs(db, "nope") == []


# ------------------------------------------------------------------ CLI


def test_cli_import_and_datasets(db_path, files, tmp_path):
    out = invoke("import-cases", "--dataset", "demo", "--cases", files["cases"], "--responses", files["responses"],
                 "--judgements", files["judgements"], "--db", db_path).output
    assert "cases: 2 added, 0 already present" in out and "judgements: 3 added" in out
    out = invoke("import-cases", "--dataset", "demo", "--cases", files["cases"], "--db", db_path).output
    assert "cases: 0 added, 2 already present" in out and "nothing changed" in out
    fc = write(tmp_path / "fc.jsonl", jsonl_text(FC))
    out = invoke("import-factcheck", "--dataset", "sdak", fc, "--db", db_path).output
    assert "items: 3 added" in out and "claims: 6 added" in out and "models: m1, m2" in out
    rows = json.loads(invoke("datasets", "--db", db_path).output)
    assert [(r["dataset"], r["questions"], r["judgements"], r["fact_items"]) for r in rows] == [
        ("demo", 3, 3, 0), ("sdak", 0, 0, 3)]
    md = invoke("datasets", "--format", "md", "--db", db_path).output
    assert "| demo | 2 | 3 | 6 | 2 | 2 | 3 | 0 | 0 |" in md and "| sdak | 0 | 0 | 0 | 2 | 0 | 0 | 3 | 6 |" in md


def test_cli_bad_input_exit_1_and_unchanged(db_path, files, tmp_path):
    from medeval.cli import main

    invoke("import-cases", "--dataset", "demo", "--cases", files["cases"], "--db", db_path)
    before = db_dump(db_path)
    bad = write(tmp_path / "r.csv", "case,question,model,response\nc1,1,M,a\nc1,1,M,b\n")
    res = CliRunner().invoke(main, ["import-cases", "--dataset", "demo", "--responses", str(bad), "--db", str(db_path)])
    assert res.exit_code == 1
    assert f"{bad}, row 3: duplicate response of M to case 'c1', question 1" in res.output
    assert db_dump(db_path) == before
    res = CliRunner().invoke(main, ["datasets", "--format", "md", "--db", str(tmp_path / "empty.db")])
    assert res.exit_code == 0 and "No datasets yet" in res.output


@pytest.mark.slow
def test_cli_subprocess_utf8(db_path, files):
    r = run_cli("import-cases", "--dataset", "演示", "--cases", files["cases"], "--db", db_path)
    assert r.returncode == 0 and "dataset 演示" in r.stdout
    r = run_cli("import-cases", "--dataset", "演示", "--responses", files["cases"], "--db", db_path)
    assert r.returncode == 1 and "'case', 'question', 'model', 'response' are missing" in r.stderr
