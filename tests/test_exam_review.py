"""Settling ambiguous exam answers (CMB-Exam): the review list, decisions stored append-only with who decided,
roles and audit in the data layer, the figures with and without the settlements, the CLI and the Exam results
page."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from medeval.accounts import auth
from medeval.accounts.policy import local_actor
from medeval.annotation import exam_review as er
from medeval.core.errors import InputError, MedevalError, PermissionDenied
from medeval.store.db import connect
from tests.conftest import ROOT, invoke, write

DEMO = ROOT / "medeval" / "demo" / "data"
ANS, KEY = DEMO / "exam_demo_answers.jsonl", DEMO / "exam_demo_key.json"
PW = "correct horse battery"


@pytest.fixture
def users(db):
    return {r: auth.add_user(db, n, PW, r) for n, r in (("res", "researcher"), ("adm", "admin"), ("doc", "annotator"),
                                                        ("adj", "adjudicator"))}


def _files(tmp_path, responses, questions=None):
    qs = questions or [{"id": i, "answer": a, "exam_type": "医师考试", "exam_class": "执业医师",
                        "option": {k: f"选项{k}" for k in "ABCDE"}} for i, a in ((1, "A"), (2, "B"), (3, "C"))]
    key = write(tmp_path / "key.json", json.dumps(qs, ensure_ascii=False))
    ans = write(tmp_path / "a.jsonl", "\n".join(json.dumps(x, ensure_ascii=False) for x in responses) + "\n")
    return ans, key


def test_the_demo_exam_lists_its_two_ambiguous_answers(db, users):
    exam = er.load(ANS, KEY)
    items = er.review_list(db, exam, actor=users["researcher"])
    assert [(i.model, i.question, i.candidates, i.decision) for i in items] == [("DemoModel", "7", "BC", None),
                                                                                ("DemoModel", "8", "CD", None)]
    assert items[1].response == "答案為C或D，視情況而定。" and items[1].reason == "alternatives, not a choice (C or D)"
    assert items[0].valid == "ABCDE" and items[0].options["C"] == "100～120次/分"


def test_settle_applies_to_accuracy_settled_only_and_is_append_only(db, users):
    exam = er.load(ANS, KEY)
    (r,) = er.score(db, exam, actor=users["researcher"])
    before = r.to_dict()
    assert (before["accuracy_settled"], before["accuracy_ambiguous_wrong"], before["unsettled"]) == (5 / 8, 5 / 8, 2)

    first = er.settle(db, exam, "DemoModel", "7", "B", note="read as B", actor=users["researcher"])
    second = er.settle(db, exam, "DemoModel", "7", ["C"], note="the guideline says 100-120", actor=users["admin"])
    er.settle(db, exam, "DemoModel", "8", "none", actor=users["researcher"])
    (r,) = er.score(db, exam, actor=users["researcher"])
    d = r.to_dict()
    # 7 settled C (= key): right; 8 settled "no answer": wrong. Ambiguous-as-wrong is unchanged; CMB's too.
    assert (d["accuracy_settled"], d["accuracy_ambiguous_wrong"], d["accuracy_cmb_regex"]) == (6 / 8, 5 / 8, 3 / 8)
    assert (d["ambiguous"], d["unsettled"]) == (2, 0)
    assert [(a["id"], a["settled"], a["settled_by"]) for a in d["ambiguous_answers"]] == [("7", "C", "adm"),
                                                                                        ("8", "", "res")]
    hist = er.decisions(db, exam.exam, actor=users["admin"])
    assert [(h.question, h.letters, h.decided_by, h.supersedes) for h in hist] == [
        ("7", "B", "res", None), ("7", "C", "adm", first), ("8", "", "res", None)]
    assert hist[1].id == second and hist[1].note == "the guideline says 100-120" and hist[0].decided_at.endswith("Z")
    items = er.review_list(db, exam, actor=users["researcher"])
    assert [(i.question, i.decision.letters, i.decision.decided_by) for i in items] == [("7", "C", "adm"),
                                                                                       ("8", "", "res")]
    # audited, and the table refuses edits
    audit = [r for r in auth.audit_rows(db, actor=users["admin"]) if r["action"] == "exam.settle"]
    assert [(a["actor"], json.loads(a["detail"])["letters"]) for a in audit] == [("res", "B"), ("adm", "C"),
                                                                                ("res", "")]
    for sql in ("UPDATE exam_settlements SET letters = 'A'", "DELETE FROM exam_settlements"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.conn.execute(sql)


@pytest.mark.parametrize("role", ["annotator", "adjudicator"])
def test_only_researchers_and_admins_review(db, users, role):
    exam = er.load(ANS, KEY)
    for call in (lambda: er.review_list(db, exam, actor=users[role]),
                 lambda: er.settle(db, exam, "DemoModel", "7", "C", actor=users[role]),
                 lambda: er.score(db, exam, actor=users[role]),
                 lambda: er.decisions(db, exam.exam, actor=users[role])):
        with pytest.raises(PermissionDenied, match="researcher or admin"):
            call()
    assert db.conn.execute("SELECT count(*) FROM exam_settlements").fetchone()[0] == 0


@pytest.mark.parametrize("model,question,letters,error,message", [
    ("DemoModel", "7", "F", InputError, "F is not an option of question '7'"),
    ("DemoModel", "7", "x", InputError, "X is not an option"),
    ("DemoModel", "7", "", InputError, "no letters given"),
    ("DemoModel", "7", "CC", InputError, "repeat a letter"),
    ("DemoModel", "1", "A", MedevalError, "is not ambiguous (read as A)"),
    ("Other", "7", "C", MedevalError, "model 'Other' is not in the answers file; its models: 'DemoModel'"),
    ("DemoModel", "99", "C", MedevalError, "question '99' is not in the answer key"),
])
def test_bad_settlements_are_refused_with_a_reason(db, users, model, question, letters, error, message):
    exam = er.load(ANS, KEY)
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        er.settle(db, exam, model, question, letters, actor=users["researcher"])
    assert db.conn.execute("SELECT count(*) FROM exam_settlements").fetchone()[0] == 0


def test_letters_are_normalised_and_multi_answers_allowed(db, users, tmp_path):
    ans, key = _files(tmp_path, [{"id": 1, "response": "Both B and D are possible."}])
    exam = er.load(ans, key)
    er.settle(db, exam, "", "1", "d, b", actor=users["researcher"])
    assert er.decisions(db, exam.exam, actor=None)[0].letters == "BD"


def test_a_decision_is_for_the_response_read_and_the_key(db, users, tmp_path):
    ans, key = _files(tmp_path, [{"id": 1, "response": "A或B"}, {"id": 2, "response": "我不知道"}])
    exam = er.load(ans, key)
    er.settle(db, exam, "", "1", "A", actor=None)
    assert er.decisions(db, exam.exam, actor=None)[0].decided_by == "cli"
    assert er.score(db, exam, actor=None)[0].to_dict()["accuracy_settled"] == 1 / 3
    # another response to question 1 (a rerun of the model) is not settled by the earlier decision
    ans2 = write(tmp_path / "b.jsonl", json.dumps({"id": 1, "response": "A or B"}) + "\n")
    d = er.score(db, er.load(ans2, key), actor=None)[0].to_dict()
    assert (d["accuracy_settled"], d["unsettled"]) == (0.0, 1)
    # another key is another exam
    key2 = write(tmp_path / "key2.json", key.read_text(encoding="utf-8") + "\n")
    assert er.load(ans, key2).exam != exam.exam
    assert er.score(db, er.load(ans, key2), actor=None)[0].to_dict()["unsettled"] == 2


# ------------------------------------------------------------------ command line

def test_cli_list_settle_and_score_with_the_database(db_path, tmp_path):
    out = invoke("exam-review", "list", ANS, KEY, "--db", db_path).output
    assert "2 ambiguous answer(s), 2 unsettled" in out and "question 7 [unsettled]" in out
    assert "response: 答案為C或D，視情況而定。" in out
    out = invoke("exam-review", "settle", ANS, KEY, "--question", "7", "--model", "DemoModel", "--letters", "C",
                 "--note", "guideline", "--db", db_path).output
    assert "settled question 7 of model DemoModel: C (decision 1)" in out
    rows = [json.loads(x) for x in invoke("exam-review", "list", ANS, KEY, "--db", db_path, "--json").output.splitlines()]
    assert [(r["question"], r["settled"], r["decided_by"]) for r in rows] == [("7", "C", local_actor().username), ("8", None, None)]

    from medeval.cli import main

    res = CliRunner().invoke(main, ["exam-score", str(ANS), str(KEY), "--db", str(db_path)])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert (d["accuracy_settled"], d["accuracy_ambiguous_wrong"], d["unsettled"]) == (6 / 8, 5 / 8, 1)
    assert "DemoModel: 2 ambiguous answer(s), 1 unsettled" in res.stderr
    d = json.loads(invoke("exam-score", ANS, KEY).stdout)  # without --db: nothing settled
    assert (d["accuracy_settled"], d["unsettled"]) == (5 / 8, 2) and "accuracy_macro" in d["definitions"]


def test_cli_settle_error_is_one_clean_line(db_path):
    from medeval.cli import main

    res = CliRunner().invoke(main, ["exam-review", "settle", str(ANS), str(KEY), "-q", "7", "-m", "DemoModel",
                                    "-l", "F", "--db", str(db_path)])
    assert res.exit_code == 1 and res.output.startswith("Error: F is not an option of question '7'")
    assert "Traceback" not in res.output


# ------------------------------------------------------------------ the page

@pytest.mark.slow  # AppTest runs whole pages
def test_exam_page_shows_the_demo_and_settles_an_answer(db_path):
    from streamlit.testing.v1 import AppTest

    from webui.page import TEST_TOKEN_KEY

    with connect(db_path) as d:
        auth.add_user(d, "res", PW, "researcher")
        auth.add_user(d, "doc", PW, "annotator")
        token = auth.create_session(d, auth.authenticate(d, "res", PW))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    at.switch_page("app_pages/exam.py").run()
    assert not at.exception
    # each figure by its label, a percentage with one decimal
    assert [m.label for m in at.metric] == ["accuracy (settled)", "accuracy (ambiguous as wrong)",
                                            "accuracy (CMB's reading)", "macro accuracy (CMB)"]
    assert [m.value for m in at.metric] == ["62.5%", "62.5%", "37.5%", "70.8%"]
    texts = [t.value for t in at.text]
    assert "答案為C或D，視情況而定。" in texts  # the response, as plain text
    assert any(t.startswith("Model: DemoModel · question 8 · why ambiguous: alternatives") for t in texts)
    (ms,) = [m for m in at.multiselect if m.key.startswith("exam_letters_")][:1]
    ms.set_value(["C"])
    form_button = [b for b in at.button if b.label == "Settle"][0]
    form_button.click().run()
    assert not at.exception
    assert any("Settled question 7" in s.value for s in at.success)
    assert [m.value for m in at.metric][:2] == ["75.0%", "62.5%"]
    with connect(db_path) as d:
        assert [(h.question, h.letters, h.decided_by) for h in er.decisions(d, er.load(ANS, KEY).exam, actor=None)] == [
            ("7", "C", "res")]
    decided = [df.value for df in at.dataframe if "decided by" in df.value.columns][0]
    assert list(decided["decided by"]) == ["res"]
    texts = [t.value for t in at.text]
    assert not any(t.startswith("Model: DemoModel · question 7") for t in texts)  # settled: out of the default view
    at.radio(key="exam_show").set_value("All").run()
    assert any(t.startswith("Settled: C by res at ") for t in [t.value for t in at.text])


@pytest.mark.slow
def test_exam_page_is_not_for_annotators(db_path):
    from streamlit.testing.v1 import AppTest

    from webui.page import TEST_TOKEN_KEY

    with connect(db_path) as d:
        auth.add_user(d, "doc", PW, "annotator")
        token = auth.create_session(d, auth.authenticate(d, "doc", PW))
        doc = auth.get_user(d, "doc")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    with pytest.raises(ValueError, match="Could not find"):
        at.switch_page("app_pages/exam.py")
    page = AppTest.from_file(str(ROOT / "app_pages" / "exam.py"), default_timeout=30)
    page.session_state["user"] = doc
    page.run()
    assert any("This page is for the role researcher or admin" in e.value for e in page.error)
    assert not page.metric and not page.multiselect


def test_details_csv_lists_ambiguous_answers_with_reason_and_settled_letters(db_path, tmp_path):
    import csv
    import io

    invoke("exam-review", "settle", ANS, KEY, "-q", "8", "-m", "DemoModel", "-l", "none", "--db", db_path)
    invoke("exam-score", ANS, KEY, "--db", db_path, "--details", tmp_path / "d.csv")
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO((tmp_path / "d.csv").read_text(encoding="utf-8")))}
    assert {k: rows["7"][k] for k in ("status", "note", "candidates", "settled", "extracted", "cmb_regex",
                                      "correct_settled")} == {
        "status": "ambiguous", "note": "several options named, none stated as the choice (B, C)", "candidates": "BC",
        "settled": "", "extracted": "", "cmb_regex": "B", "correct_settled": "0"}
    assert (rows["8"]["settled"], rows["8"]["settled_by"], rows["8"]["cmb_regex"], rows["8"]["cmb_correct"]) == (
        "(no answer)", local_actor().username, "C", "1")
    assert (rows["1"]["status"], rows["1"]["extracted"], rows["1"]["cmb_regex"]) == ("answered", "A", "C")
