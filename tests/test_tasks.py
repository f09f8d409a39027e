"""Task types (rubric rating with the two-part judge protocol, double-blind preference, AccR): campaigns with
exactly k annotators, blind views, the order of parts enforced in the library, append-only answers, results
checked against hand-computed values and the statistics modules."""

import json
import sqlite3

import numpy as np
import pytest

from medeval.annotation import cases as cs
from medeval.stats import preference as pf
from medeval.annotation import tasks
from medeval.accounts.auth import add_user, get_user
from medeval.core.errors import MedevalError, PermissionDenied
from tests.conftest import write

CASES = [
    {"id": "c1", "title": "胸痛", "description": "男，58岁，胸痛2小时。",
     "QA_pairs": [{"question": "最可能的诊断？", "answer": "急性心肌梗死"},
                  {"question": "首选检查？", "answer": "心电图"}]},
    {"id": "c2", "title": "发热", "description": "女，25岁，发热咳嗽3天。",
     "QA_pairs": [{"question": "诊断？", "answer": "社区获得性肺炎"}]},
]
RESPONSES = [
    ("c1", 1, "alpha", "考虑急性心肌梗死。"), ("c1", 1, "beta", "可能是胃炎。"), ("c1", 1, "gamma", "心绞痛或心梗。"),
    ("c1", 2, "alpha", "立即做心电图。"), ("c1", 2, "beta", "做胃镜。"), ("c1", 2, "gamma", "心电图和肌钙蛋白。"),
    ("c2", 1, "alpha", "社区获得性肺炎。"), ("c2", 1, "beta", "感冒。"), ("c2", 1, "gamma", "<b>肺炎</b>"),
]
JUDGEMENTS = [
    ("c1", 1, "judge-x", "Doctor 1: 5 points. Doctor 2: 1 points. Doctor 3: 4 points.", ["alpha", "beta", "gamma"]),
    ("c1", 2, "judge-x", "Doctor 1: 4 points. Doctor 2: 2 points. Doctor 3: 5 points.", ["alpha", "beta", "gamma"]),
    ("c2", 1, "judge-x", "Doctor 1: 5 points. Doctor 2: 2 points. Doctor 3: 4 points.", ["alpha", "beta", "gamma"]),
    ("c1", 1, "judge-y", "Doctor 1: 4 points. Doctor 2: 3 points. Doctor 3: 4 points.", ["alpha", "beta", "gamma"]),
]


@pytest.fixture
def tdb(db, tmp_path):
    """A database with two cases (3 questions x 3 models), two judges and four users."""
    c = write(tmp_path / "cases.json", json.dumps(CASES, ensure_ascii=False))
    r = write(tmp_path / "resp.jsonl", "\n".join(json.dumps({"case": a, "question": b, "model": m, "response": t},
                                                            ensure_ascii=False) for a, b, m, t in RESPONSES))
    j = write(tmp_path / "judge.jsonl", "\n".join(json.dumps({"case": a, "question": b, "judge": jd, "rationale": t,
                                                              "models": ms}) for a, b, jd, t, ms in JUDGEMENTS))
    cs.import_cases(db, "clin", cases=c, responses=r, judgements=j)
    for name, role in (("doc1", "annotator"), ("doc2", "annotator"), ("doc3", "annotator"), ("res", "researcher")):
        add_user(db, name, "a-long-password", role)
    return db


def users(db, *names):
    return [get_user(db, n) for n in names]


def rated_response(db, items, a) -> str:
    """"item/model" of the response a rubric answer is about (question ids number responses as each annotator
    sees them; the annotator's stored layout maps the number back)."""
    from medeval.annotation.tasks.rubric import response_of

    lay = json.loads(db.conn.execute("SELECT a.layout FROM task_assignments a JOIN users u ON u.id = a.user_id "
                                     "WHERE a.item_id = ? AND u.username = ?", (a.item_id, a.annotator)).fetchone()[0])
    return f"{a.item_id}/{response_of(items[a.item_id], lay, a.question)['model']}"


def answer_all(db, user, cid, pick):
    """Answer every question of every item in order with ``pick(item_view, question)``."""
    while True:
        s = tasks.task_state(db, user, cid)
        if s.item is None:
            return
        q = s.item.pending
        tasks.submit_answer(db, user, s.item.item_id, q.id, pick(s.item, q),
                            client_token=f"{s.item.item_id}:{s.item.revision}:{q.id}")


def test_registry_has_the_three_types():
    assert {"rubric", "preference", "accr"} <= set(tasks.REGISTRY)
    with pytest.raises(MedevalError, match="unknown task type"):
        tasks.get("nope")


def test_rubric_campaign_assigns_exactly_k_and_is_reproducible(tdb):
    res, = users(tdb, "res")
    cid = tasks.create_campaign(tdb, "rubric", "r1", ["doc1", "doc2", "doc3"], k=2, seed=5,
                                config={"dataset": "clin", "judge": "judge-x"}, actor=res)
    n_items = tdb.conn.execute("SELECT count(*) FROM task_items WHERE campaign_id = ?", (cid,)).fetchone()[0]
    assert n_items == 3
    per_item = tdb.conn.execute("SELECT count(*) FROM task_assignments WHERE campaign_id = ? GROUP BY item_id",
                                (cid,)).fetchall()
    assert [n for (n,) in per_item] == [2, 2, 2]
    loads = sorted(n for (n,) in tdb.conn.execute(
        "SELECT count(*) FROM task_assignments WHERE campaign_id = ? GROUP BY user_id", (cid,)))
    assert loads == [2, 2, 2]
    cid2 = tasks.create_campaign(tdb, "rubric", "r2", ["doc1", "doc2", "doc3"], k=2, seed=5,
                                 config={"dataset": "clin", "judge": "judge-x"}, actor=res)
    q = ("SELECT ti.source, u.username, a.position, a.layout FROM task_assignments a JOIN task_items ti ON "
         "ti.id = a.item_id JOIN users u ON u.id = a.user_id WHERE a.campaign_id = ? ORDER BY 1, 2")
    assert tdb.conn.execute(q, (cid,)).fetchall() == tdb.conn.execute(q, (cid2,)).fetchall()


def test_rubric_blind_view_and_two_part_order(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1,
                                config={"dataset": "clin", "judge": "judge-x", "rubric": "automedeval"}, actor=res)
    s = tasks.task_state(tdb, doc1, cid)
    v = s.item
    shown = " ".join(b.label + b.text for b in v.blocks)
    for secret in ("alpha", "beta", "gamma", "judge-x", "Doctor 1: 5 points"):
        assert secret not in shown  # models, judge and the judge's text are hidden in part 1
    assert {b.label for b in v.blocks} >= {"Response 1", "Response 2", "Response 3", "Question", "Reference answer"}
    assert v.parts == 2 and v.open_part == 1
    assert len(v.questions) == 9 and all(q.part == 1 for q in v.questions)  # 3 responses x 3 criteria
    # part 2 is refused while part 1 is incomplete
    with pytest.raises(MedevalError, match="part 2 opens"):
        tasks.submit_answer(tdb, doc1, v.item_id, "judge:j_knowledge", "4", client_token="early")
    for n, q in enumerate(v.questions):
        tasks.submit_answer(tdb, doc1, v.item_id, q.id, str(1 + n % 5), client_token=f"t{n}")
        if n < 8:
            assert tasks.item_view(tdb, doc1, v.item_id).open_part == 1
    v2 = tasks.item_view(tdb, doc1, v.item_id)
    assert v2.open_part == 2 and v2.pending.id == "judge:j_knowledge"
    # one numbering on the screen (issue 32 §3): the judge's "Doctor n" read as the screen's "Response k"
    assessment = next(b.text for b in v2.blocks if b.label == "The judge's assessment")
    assert "Doctor" not in assessment and assessment.count("Response ") == 3 and "points" in assessment
    models = ["alpha", "beta", "gamma"]  # the judge numbers them in this order; the screen in the annotator's own
    order = json.loads(tdb.conn.execute("SELECT layout FROM task_assignments WHERE item_id = ? AND user_id = ?",
                                        (v.item_id, doc1.id)).fetchone()[0])["order"]
    shown = {models[j]: f"Response {n}" for n, j in enumerate(order, 1)}
    assert assessment.startswith(f"{shown['alpha']}: ") and not any("numbers the responses" in b.label
                                                                     for b in v2.blocks)
    tasks.submit_answer(tdb, doc1, v.item_id, "judge:j_knowledge", "4", client_token="p2")
    with pytest.raises(MedevalError, match="not an answer"):
        tasks.submit_answer(tdb, doc1, v.item_id, "judge:j_fluency", "6", client_token="bad")


def test_answers_are_append_only_idempotent_and_changes_supersede(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=res)
    v = tasks.task_state(tdb, doc1, cid).item
    q = v.pending
    a1 = tasks.submit_answer(tdb, doc1, v.item_id, q.id, "3", client_token="tok")
    assert tasks.submit_answer(tdb, doc1, v.item_id, q.id, "3", client_token="tok") == a1  # double press
    a2 = tasks.submit_answer(tdb, doc1, v.item_id, q.id, "5", client_token="tok2")
    rows = tdb.conn.execute("SELECT id, value, supersedes FROM task_answers ORDER BY id").fetchall()
    assert rows == [(a1, "3", None), (a2, "5", a1)]
    assert tasks.item_view(tdb, doc1, v.item_id).answers[q.id] == "5"
    assert tdb.conn.execute("SELECT count(*) FROM audit_log WHERE action = 'annotation.change'").fetchone()[0] == 1
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        tdb.conn.execute("UPDATE task_answers SET value = '1'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        tdb.conn.execute("DELETE FROM task_answers")


def test_only_assigned_items_and_closed_campaigns(tdb):
    doc1, doc2, res = users(tdb, "doc1", "doc2", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=res)
    v = tasks.task_state(tdb, doc1, cid).item
    with pytest.raises(PermissionDenied):
        tasks.item_view(tdb, doc2, v.item_id)
    with pytest.raises(PermissionDenied):
        tasks.submit_answer(tdb, doc2, v.item_id, v.pending.id, "3", client_token="x")
    with pytest.raises(PermissionDenied):
        tasks.results(tdb, cid, actor=doc1)  # annotators cannot read results
    with pytest.raises(PermissionDenied):
        tasks.answers(tdb, cid, actor=doc1)  # nor anyone's answers
    with pytest.raises(PermissionDenied):
        tasks.campaign_progress(tdb, cid, actor=doc1)
    with pytest.raises(PermissionDenied):
        tasks.create_campaign(tdb, "rubric", "x", ["doc1"], k=1, config={"dataset": "clin"}, actor=doc1)
    from medeval.annotation.campaigns import set_campaign_status
    set_campaign_status(tdb, cid, "closed", actor=res)
    with pytest.raises(MedevalError, match="closed"):
        tasks.submit_answer(tdb, doc1, v.item_id, v.pending.id, "3", client_token="y")


def test_skip_comes_back_at_the_end(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = tasks.create_campaign(tdb, "preference", "p", ["doc1"], k=1, seed=2,
                                config={"dataset": "clin", "compare": "answers"}, actor=res)
    s = tasks.task_state(tdb, doc1, cid)
    first = s.item.item_id
    tasks.submit_answer(tdb, doc1, first, "", None, client_token="skip1", skipped=True)
    s2 = tasks.task_state(tdb, doc1, cid)
    assert s2.item.item_id != first and s2.skipped == 1
    answer_all(tdb, doc1, cid, lambda v, q: "tie")
    s3 = tasks.task_state(tdb, doc1, cid)
    assert s3.item is None and s3.skipped == 1 and s3.done == s3.total - 1
    s4 = tasks.task_state(tdb, doc1, cid, revisit_skipped=True)
    assert s4.item.item_id == first and s4.item.revisiting


def test_bad_configs_say_what_to_do(tdb):
    res, = users(tdb, "res")
    with pytest.raises(MedevalError, match="not one of"):
        tasks.create_campaign(tdb, "rubric", "x", ["doc1"], k=1, config={"dataset": "nope"}, actor=res)
    with pytest.raises(MedevalError, match="unknown setting"):
        tasks.create_campaign(tdb, "rubric", "x", ["doc1"], k=1, config={"dataset": "clin", "colour": 1}, actor=res)
    with pytest.raises(MedevalError, match="needs at least 2"):
        tasks.create_campaign(tdb, "rubric", "x", ["doc1"], k=2, config={"dataset": "clin"}, actor=res)
    with pytest.raises(MedevalError, match="give the campaign a name"):
        tasks.create_campaign(tdb, "rubric", " ", ["doc1"], k=1, config={"dataset": "clin"}, actor=res)
    with pytest.raises(MedevalError, match="anchors"):
        tasks.create_campaign(tdb, "rubric", "x", ["doc1"], k=1, actor=res,
                              config={"dataset": "clin", "criteria": [{"key": "a", "name": "A", "question": "?",
                                                                       "anchors": ["1", "2"]}]})
    n = tdb.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0]
    assert n == 0  # nothing stored by a refused campaign


def test_custom_rubric_is_stored_with_the_campaign(tdb):
    doc1, res = users(tdb, "doc1", "res")
    crit = [{"key": "safety", "name": "Safety", "question": "Is it safe?",
             "anchors": ["unsafe", "risky", "mixed", "mostly safe", "safe"]}]
    cid = tasks.create_campaign(tdb, "rubric", "x", ["doc1"], k=1, config={"dataset": "clin", "criteria": crit},
                                actor=res)
    v = tasks.task_state(tdb, doc1, cid).item
    assert [q.criterion for q in v.questions] == ["Safety"] * 3
    assert v.pending.options[0].meaning == "unsafe" and v.pending.options[4].key == "5"


def test_rubric_results_judge_vs_clinicians(tdb):
    """Clinicians rate every response with its judge-x score (perfect agreement with the judge)."""
    d1, d2, res = users(tdb, "doc1", "doc2", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1", "doc2"], k=2, seed=3,
                                config={"dataset": "clin", "judge": "judge-x"}, actor=res)

    def pick(view, q):
        if q.part == 2:
            return "4"
        from medeval.annotation.tasks.rubric import response_of

        p = json.loads(tdb.conn.execute("SELECT payload FROM task_items WHERE id = ?", (view.item_id,)).fetchone()[0])
        lay = json.loads(tdb.conn.execute("SELECT layout FROM task_assignments WHERE item_id = ? AND user_id = "
                                          "(SELECT id FROM users WHERE username = ?)",
                                          (view.item_id, who[0])).fetchone()[0])
        return str(int(p["judge"]["scores"][response_of(p, lay, q.id)["model"]]))

    who = ["doc1"]
    answer_all(tdb, d1, cid, pick)
    who[0] = "doc2"
    answer_all(tdb, d2, cid, pick)
    r = tasks.results(tdb, cid, actor=res)
    sec = {s["title"]: s for s in r["sections"]}
    per_model = {row["model"]: row for row in sec["Ratings per model"]["tables"]["per model"]}
    # judge-x scores: alpha 5,4,5 -> 14/3; beta 1,2,2 -> 5/3; gamma 4,5,4 -> 13/3 (every criterion alike)
    assert per_model["alpha"]["mean"] == pytest.approx(14 / 3)
    assert per_model["beta"]["Fluency"] == pytest.approx(5 / 3)
    assert per_model["gamma"]["ratings"] == 3 * 3 * 2
    judge = sec["The judge against the clinicians"]
    assert judge["numbers"]["spearman"] == pytest.approx(1.0)
    assert judge["numbers"]["accuracy_2tuple"] == pytest.approx(1.0)
    assert judge["numbers"]["accuracy_triple"] == pytest.approx(1.0)
    assert judge["numbers"]["n_cases"] == 3
    agree = {(a["rated"], a["statistic"]): a for a in sec["Agreement among clinicians"]["tables"]["agreement"]}
    assert agree[("mean over criteria", "ICC(2,1)")]["value"] == pytest.approx(1.0)
    jr = {row["criterion"]: row for row in
          sec["The judge's assessments, as rated by the clinicians"]["tables"]["mean rating"]}
    assert jr["Reference Correctness"]["mean"] == 4.0 and jr["Fluency"]["ratings"] == 6


def test_rubric_agreement_matches_pingouin(tdb):
    pg = pytest.importorskip("pingouin")
    d1, d2, d3, res = users(tdb, "doc1", "doc2", "doc3", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1", "doc2", "doc3"], k=3, seed=4,
                                config={"dataset": "clin", "rubric": "cmb-clin"}, actor=res)
    rng = np.random.default_rng(0)
    for u in (d1, d2, d3):
        answer_all(tdb, u, cid, lambda v, q: str(int(rng.integers(1, 6))))
    rows = tasks.answers(tdb, cid)
    items = {iid: json.loads(p) for iid, p in tdb.conn.execute("SELECT id, payload FROM task_items")}
    long = [{"unit": rated_response(tdb, items, a), "rater": a.annotator, "v": float(a.value)}
            for a in rows if a.question.endswith(":completeness")]
    import pandas as pd
    ref = pg.intraclass_corr(pd.DataFrame(long), targets="unit", raters="rater", ratings="v").set_index("Type")
    r = tasks.results(tdb, cid, actor=res)
    agree = {(a["rated"], a["statistic"]): a for s in r["sections"] if s["title"] == "Agreement among clinicians"
             for a in s["tables"]["agreement"]}
    key = next(k for k in agree if k[0] == "Completeness" and "ICC(2,1)" in k[1])
    icc2 = ref.loc["ICC(A,1)" if "ICC(A,1)" in ref.index else "ICC2", "ICC"]  # pingouin's label changed in 0.7
    assert agree[key]["value"] == pytest.approx(icc2, abs=1e-9)
    assert len(items) == 3


def test_preference_sides_recorded_and_results_match_library(tdb):
    d1, d2, d3, res = users(tdb, "doc1", "doc2", "doc3", "res")
    cid = tasks.create_campaign(tdb, "preference", "p", ["doc1", "doc2", "doc3"], k=3, seed=9,
                                config={"dataset": "clin", "compare": "answers"}, actor=res)
    items = {iid: json.loads(p) for iid, p in tdb.conn.execute("SELECT id, payload FROM task_items")}
    assert len(items) == 9  # 3 questions x 3 pairs of models
    lays = [json.loads(x) for (x,) in tdb.conn.execute("SELECT layout FROM task_assignments")]
    assert {lay["left"] for lay in lays} == {"a", "b"}  # both sides occur
    v = tasks.task_state(tdb, d1, cid).item
    shown = " ".join(b.label + b.text for b in v.blocks)
    assert not any(m in shown for m in ("alpha", "beta", "gamma"))
    assert [q.options[0].key for q in v.questions] == ["left"] * 3
    assert [o.key for o in v.questions[0].options] == ["left", "t", "right"]

    def pick(view, q):  # always prefer the alphabetically first model: alpha > beta > gamma
        p = items[view.item_id]
        a_text = next(b.text for b in view.blocks if b.label == "A")
        left_is_a = a_text == p["a"]["text"]
        return "left" if left_is_a else "right"

    for u in (d1, d2, d3):
        answer_all(tdb, u, cid, pick)
    r = tasks.results(tdb, cid, actor=res)
    sec = next(s for s in r["sections"] if s["title"] == "Preference: Knowledge Correctness")
    shares = {row["source"]: row["share"] for row in sec["tables"]["preference share"]}
    assert shares == {"alpha": 1.0, "beta": 0.5, "gamma": 0.0}
    # the same numbers from medeval.stats.preference directly
    rows = []
    for a in tasks.answers(tdb, cid):
        if a.question == "knowledge":
            lay = json.loads(tdb.conn.execute("SELECT a.layout FROM task_assignments a JOIN users u ON u.id = "
                                              "a.user_id WHERE a.item_id = ? AND u.username = ?",
                                              (a.item_id, a.annotator)).fetchone()[0])
            p = items[a.item_id]
            left, right = (p["a"], p["b"]) if lay["left"] == "a" else (p["b"], p["a"])
            rows.append((a.item_id, a.annotator, left["source"], right["source"], a.value))
    direct = pf.summarise(rows)
    checks = {c["statistic"]: c for c in sec["tables"]["checks"]}
    left = checks["share of decided choices won by the left side"]
    assert left["value"] == direct["position_bias"]["left_share"]
    assert left["p (binomial, vs 1/2)"] == pytest.approx(direct["position_bias"]["p"])
    assert checks["Krippendorff's alpha (nominal, over the chosen source)"]["value"] == pytest.approx(1.0)
    bt = sec["tables"]["Bradley-Terry strengths"]
    assert bt[0]["source"] == "(undefined)"  # alpha never loses: the MLE diverges, said so


def test_preference_between_judges(tdb):
    d1, res = users(tdb, "doc1", "res")
    cid = tasks.create_campaign(tdb, "preference", "pj", ["doc1"], k=1, seed=0,
                                config={"dataset": "clin", "compare": "judges"}, actor=res)
    v = tasks.task_state(tdb, d1, cid).item
    assert [q.criterion for q in v.questions] == ["Knowledge Correctness", "Reference Correctness", "Fluency"]
    labels = [b.label for b in v.blocks]
    assert "Doctor 1 (a response both evaluations discuss)" in labels and "A" in labels and "B" in labels
    assert not any("judge-" in b.text or "judge-" in b.label for b in v.blocks)


FACT = [
    {"id": "1", "type": "Disease-Symptom", "label": "support", "claim": "流感可引起发热", "response": "正确。流感病毒感染常引起发热。", "model": "m1"},
    {"id": "1", "type": "Disease-Symptom", "label": "refute", "claim": "流感不会引起发热", "response": "错误。流感常有发热。", "model": "m1"},
    {"id": "2", "type": "Disease-Medicine", "label": "support", "claim": "奥司他韦可治疗流感", "response": "正确，它是抗病毒药。", "model": "m1"},
    {"id": "2", "type": "Disease-Medicine", "label": "refute", "claim": "青霉素可治疗流感", "response": "正确，抗生素有效。", "model": "m1"},
    {"id": "1", "type": "Disease-Symptom", "label": "support", "claim": "流感可引起发热", "response": "Correct. Fever is typical.", "model": "m2"},
    {"id": "1", "type": "Disease-Symptom", "label": "refute", "claim": "流感不会引起发热", "response": "Incorrect: fever is common.", "model": "m2"},
]


def _accr(tdb, tmp_path, rows=FACT, annotators=("doc1", "doc2"), **config):
    f = write(tmp_path / "fc.jsonl", "\n".join(json.dumps(x, ensure_ascii=False) for x in rows))
    cs.import_fact_claims(tdb, "fc", f)
    us = users(tdb, *annotators, "res")
    cid = tasks.create_campaign(tdb, "accr", "a", list(annotators), k=len(annotators), seed=0,
                                config={"dataset": "fc", **config}, actor=us[-1])
    items = {iid: json.loads(p) for iid, p in tdb.conn.execute(
        "SELECT id, payload FROM task_items WHERE campaign_id = ?", (cid,))}
    return cid, us, items


def test_accr_item_is_a_knowledge_item_with_both_claims(tdb, tmp_path):
    """SDAK §4.2.2: AccR is checked per atomic knowledge item -- its factual and counterfactual claim, each with
    the model's response -- sampled whole; by default among the items the model got right."""
    cid, (d1, d2, res), items = _accr(tdb, tmp_path)
    # item 2 of m1 is wrong (supports the counterfactual): m1's item 1 and m2's item 1, each with both claims
    srcs = sorted(tdb.conn.execute("SELECT source FROM task_items WHERE campaign_id = ?", (cid,)))
    assert [s for (s,) in srcs] == ["fc/m1/1", "fc/m2/1"]
    for p in items.values():
        assert (p["factual"]["claim"], p["counterfactual"]["claim"]) == ("流感可引起发热", "流感不会引起发热")
        assert (p["factual"]["verdict"], p["counterfactual"]["verdict"]) == ("support", "refute")
        assert p["pool"] == {"name": "correct items", "items_in_data": 2 if p["model"] == "m1" else 1,
                             "items_in_pool": 1, "claims_without_twin": 0}
    v = tasks.task_state(tdb, d1, cid).item
    assert [b.label for b in v.blocks] == [
        "Factual claim", "The model's verdict on the factual claim", "The model's answer (verdict and reason)",
        "Counterfactual claim", "The model's verdict on the counterfactual claim",
        "The model's answer (verdict and reason)"]
    # the screen asks a question after the one block of its target (the answer): one target block per claim
    assert [b.target for b in v.blocks] == ["", "", "Factual claim", "", "", "Counterfactual claim"]
    assert [q.id for q in v.questions] == ["factual", "counterfactual"] and {q.part for q in v.questions} == {1}
    assert [q.target for q in v.questions] == ["Factual claim", "Counterfactual claim"]
    assert [o.key for o in v.pending.options] == ["y", "n"]
    assert tasks.preview(tdb, "accr", {"dataset": "fc", "pool": "followed items"}, actor=res)["items"] == 3
    assert tasks.preview(tdb, "accr", {"dataset": "fc", "pool": "followed claims"}, actor=res)["items"] == 3  # old name
    assert tasks.preview(tdb, "accr", {"dataset": "fc", "pool": "followed items", "per_model": 1},
                         actor=res)["items"] == 2  # whole items per model, never single claims
    assert tasks.get("accr").check_config(tdb, {"dataset": "fc"})["per_model"] == 100  # as SDAK


def test_accr_is_reliable_items_over_items_with_both_reasons_supporting(tdb, tmp_path):
    cid, (d1, d2, res), items = _accr(tdb, tmp_path)

    def pick_d2(view, q):  # says no for m2's factual reason
        return "no" if (items[view.item_id]["model"], q.id) == ("m2", "factual") else "yes"

    answer_all(tdb, d1, cid, lambda v, q: "yes")
    answer_all(tdb, d2, cid, pick_d2)
    r = tasks.results(tdb, cid, actor=res)
    sec = r["sections"][0]
    assert "per item (factual + counterfactual claim)" in sec["text"]
    acc = {row["model"]: row for row in sec["tables"]["AccR"]}
    assert acc["m1"]["AccR (items, majority)"] == 1.0 and acc["m1"]["AccR (ratings)"] == 1.0
    assert acc["m1"]["AccR 95% CI (Wilson)"] == pytest.approx([0.2065, 1.0], abs=1e-4)  # Wilson, 1 of 1
    # m2: doc1 finds the item reliable, doc2 not (its factual reason fails): a tie, left out and counted
    assert acc["m2"]["AccR (items, majority)"] is None and acc["m2"]["items without a majority"] == 1
    assert acc["m2"]["AccR 95% CI (Wilson)"] is None
    assert acc["m2"]["AccR (ratings)"] == 0.5 and acc["m2"]["ratings"] == 2
    assert (acc["m2"]["factual reasons supporting"], acc["m2"]["counterfactual reasons supporting"]) == (0.5, 1.0)
    stats = {(a["rated"], a["statistic"]) for a in r["sections"][1]["tables"]["agreement"]}
    assert ("item reliable (both reasons support)", "Percent agreement (exact)") in stats


def test_accr_majority_of_three_and_wilson_ci(tdb, tmp_path):
    rows = []
    for i in range(1, 6):  # five right items of one model
        rows += [{"id": str(i), "type": "T", "label": "support", "claim": f"事实{i}", "response": "正确。理由。", "model": "m"},
                 {"id": str(i), "type": "T", "label": "refute", "claim": f"反事实{i}", "response": "錯誤。理由。",
                  "model": "m"}]
    cid, (d1, d2, d3, res), items = _accr(tdb, tmp_path, rows, annotators=("doc1", "doc2", "doc3"))
    src = {iid: p["item"] for iid, p in items.items()}
    answer_all(tdb, d1, cid, lambda v, q: "yes")
    answer_all(tdb, d2, cid, lambda v, q: "no" if src[v.item_id] in ("1", "2") and q.id == "counterfactual" else "yes")
    answer_all(tdb, d3, cid, lambda v, q: "no" if src[v.item_id] == "1" and q.id == "factual" else "yes")
    (row,) = tasks.results(tdb, cid, actor=res)["sections"][0]["tables"]["AccR"]
    # item 1: yes/no/no -> unreliable; item 2: yes/no/yes -> reliable; 3-5 reliable: 4 of 5
    assert (row["items"], row["items checked"], row["AccR (items, majority)"]) == (5, 5, 0.8)
    assert row["AccR (ratings)"] == pytest.approx(12 / 15)
    z, n, p = 1.959964, 5, 0.8  # Wilson score interval, written out
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** .5
    assert row["AccR 95% CI (Wilson)"] == pytest.approx([centre - half, centre + half], abs=1e-5)


def test_accr_claim_without_its_twin_is_left_out_and_counted(tdb, tmp_path):
    f = write(tmp_path / "fc.jsonl", "\n".join(json.dumps(x, ensure_ascii=False) for x in FACT))
    cs.import_fact_claims(tdb, "fc", f)
    # a lone factual claim (the import refuses one; a table written otherwise may hold it)
    tdb.conn.execute("INSERT INTO fact_claims (dataset, item_key, type, label, claim, model, response) VALUES "
                     "('fc', '9', 'T', 'support', '孤立的事实', 'm2', '正确。')")
    res, = users(tdb, "res")
    pv = tasks.preview(tdb, "accr", {"dataset": "fc", "pool": "followed items"}, actor=res)
    assert pv["items"] == 3 and not any(s.endswith("/9") for s in pv["sources"])
    cid = tasks.create_campaign(tdb, "accr", "t", ["res"], k=1, config={"dataset": "fc", "pool": "followed items"},
                                actor=res)
    pools = {json.loads(p)["model"]: json.loads(p)["pool"] for (p,) in tdb.conn.execute(
        "SELECT payload FROM task_items WHERE campaign_id = ?", (cid,))}
    assert pools["m2"]["claims_without_twin"] == 1 and pools["m1"]["claims_without_twin"] == 0
    rows = {r["model"]: r for r in tasks.results(tdb, cid, actor=res)["sections"][0]["tables"]["AccR"]}
    assert rows["m2"]["claims without a twin (left out)"] == 1


def test_accr_gold_item_expects_an_answer_per_claim(tdb, tmp_path):
    from medeval.annotation import gold

    cid, (d1, d2, res), items = _accr(tdb, tmp_path, per_model=1, pool="followed items")
    free = [s.source for s in gold.candidates(tdb, cid, actor=res)]
    real = {p for (p,) in tdb.conn.execute("SELECT source FROM task_items WHERE campaign_id = ?", (cid,))}
    assert free and not set(free) & real and all(s.count("/") == 2 for s in free)  # whole items
    with pytest.raises(MedevalError, match="no question 'supports'"):  # the single-claim question of old
        gold.mark_task_gold(tdb, cid, free[0], {"supports": "yes"}, "x", actor=res)
    gid = gold.mark_task_gold(tdb, cid, free[0], {"factual": "y", "counterfactual": "no"}, "both checked", actor=res)
    assert gold.task_gold_item(tdb, gid).expected == {"factual": "yes", "counterfactual": "no"}


def test_results_of_a_campaign_without_answers(tdb):
    res, = users(tdb, "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, config={"dataset": "clin", "judge": "judge-x"},
                                actor=res)
    r = tasks.results(tdb, cid, actor=res)
    assert r["progress"]["items_complete"] == 0
    per_model = r["sections"][0]["tables"]["per model"]
    assert per_model == []


def test_task_cli_create_list_results(tdb, db_path, tmp_path):
    from click.testing import CliRunner

    from medeval.cli import main
    from tests.conftest import invoke

    out = invoke("task", "create", "--db", db_path, "--type", "rubric", "--name", "cli round",
                 "--annotators", "doc1,doc2", "--k", "2", "--seed", "7", "--set", "dataset=clin",
                 "--set", "judge=judge-x", "--set", "max_items=2").output
    assert "2 items, 2 annotators each" in out
    listed = invoke("task", "list", "--db", db_path).output
    assert "cli round\trubric\t2 items\topen" in listed
    cid = int(listed.split("\t")[0])
    r = json.loads(invoke("task", "results", str(cid), "--db", db_path).output)
    assert r["campaign"]["name"] == "cli round" and r["progress"]["items"] == 2
    assert r["config"]["judge"] == "judge-x" and r["config"]["seed"] == 7
    md = invoke("task", "results", str(cid), "--db", db_path, "--format", "md").output
    assert md.startswith("# cli round")
    crit = write(tmp_path / "crit.json", json.dumps([{"key": "safe", "name": "Safety", "question": "Safe?",
                                                       "anchors": ["a", "b", "c", "d", "e"]}]))
    invoke("task", "create", "--db", db_path, "--type", "rubric", "--name", "custom", "--annotators", "doc1",
           "--k", "1", "--set", "dataset=clin", "--criteria", crit)
    # bad input: exit 1 with a message, nothing stored
    n = tdb.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0]
    res = CliRunner().invoke(main, ["task", "create", "--db", str(db_path), "--type", "rubric", "--name", "x",
                                    "--annotators", "doc1", "--k", "1", "--set", "dataset=nope"])
    assert res.exit_code == 1 and "not one of" in res.output
    res = CliRunner().invoke(main, ["task", "create", "--db", str(db_path), "--type", "nope", "--name", "x",
                                    "--annotators", "doc1", "--set", "dataset=clin"])
    assert res.exit_code == 1 and "unknown task type" in res.output
    assert tdb.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0] == n
    csv_out = invoke("task", "results", str(cid), "--db", db_path, "--format", "answers-csv").output
    assert csv_out.splitlines() == ["item,annotator,question,value,at,guideline_version"]


def test_grading_views_refuse_a_task_campaign(tdb):
    from medeval.annotation import campaigns as cp
    from medeval.reports import dashboard as dash

    res, = users(tdb, "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, config={"dataset": "clin"}, actor=res)
    for call in (lambda: cp.campaign_progress(tdb, cid, actor=res),
                 lambda: dash.campaign_agreement(tdb, cid, actor=res)):
        with pytest.raises(MedevalError, match="task results"):
            call()
    assert [c["id"] for c in cp.list_campaigns(tdb, actor=res)] == []
    assert [c["id"] for c in tasks.task_campaigns(tdb, actor=res)] == [cid]
    with pytest.raises(MedevalError, match="no campaign 999"):
        tasks.results(tdb, 999, actor=res)


def test_icc_with_k_of_n_annotators_is_one_way_and_matches_pingouin(tdb):
    """Each response rated by 2 of 3 clinicians: ICC(1,1) over rating slots (Shrout & Fleiss case 1)."""
    pg = pytest.importorskip("pingouin")
    import pandas as pd

    d1, d2, d3, res = users(tdb, "doc1", "doc2", "doc3", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1", "doc2", "doc3"], k=2, seed=11,
                                config={"dataset": "clin", "rubric": "cmb-clin"}, actor=res)
    rng = np.random.default_rng(5)
    for u in (d1, d2, d3):
        answer_all(tdb, u, cid, lambda v, q: str(int(rng.integers(1, 6))))
    items = {iid: json.loads(p) for iid, p in tdb.conn.execute("SELECT id, payload FROM task_items")}

    def unit(a):
        return rated_response(tdb, items, a)

    r = tasks.results(tdb, cid, actor=res)
    agree = {(a["rated"], a["statistic"]): a for s in r["sections"] if s["title"] == "Agreement among clinicians"
             for a in s["tables"]["agreement"]}
    assert not any("ICC(2" in k[1] for k in agree)  # the two-way model does not fit this design
    got = agree[("Fluency", "ICC(1,1), each item by different raters")]
    slots: dict = {}
    for a in tasks.answers(tdb, cid):
        if a.question.endswith(":fluency"):
            slots.setdefault(unit(a), []).append(float(a.value))
    long = pd.DataFrame([{"unit": u, "slot": j, "v": v} for u, vs in slots.items() for j, v in enumerate(vs)])
    ref = pg.intraclass_corr(long, targets="unit", raters="slot", ratings="v").set_index("Type")
    icc1 = ref.loc["ICC(1,1)" if "ICC(1,1)" in ref.index else "ICC1", "ICC"]
    assert got["value"] == pytest.approx(icc1, abs=1e-9)
    assert got["n_items"] == 9  # every response (3 questions x 3 models) has its 2 ratings
    alpha = agree[("Fluency", "Krippendorff's alpha (interval)")]
    import krippendorff
    units = sorted(slots)
    who = {}
    for a in tasks.answers(tdb, cid):
        if a.question.endswith(":fluency"):
            who[(unit(a), a.annotator)] = float(a.value)
    raters = sorted({w for _, w in who})
    data = [[who.get((u, w), np.nan) for u in units] for w in raters]
    assert alpha["value"] == pytest.approx(krippendorff.alpha(data, level_of_measurement="interval"), abs=1e-9)


def test_a_press_on_a_screen_that_has_moved_on_is_refused(tdb):
    """A key press that reaches the previous question's button (kept mounted during a rerun) must not change it."""
    doc1, res = users(tdb, "doc1", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=res)
    v = tasks.task_state(tdb, doc1, cid).item
    q1 = v.pending
    tasks.submit_answer(tdb, doc1, v.item_id, q1.id, "3", client_token="a", revision=v.revision)
    # the same press again (same token): saved once, silently
    assert tasks.submit_answer(tdb, doc1, v.item_id, q1.id, "3", client_token="a", revision=v.revision)
    # another key on the old screen (revision 0) would change q1: refused, nothing stored
    with pytest.raises(tasks.StaleAnswer):
        tasks.submit_answer(tdb, doc1, v.item_id, q1.id, "1", client_token="b", revision=v.revision)
    v2 = tasks.item_view(tdb, doc1, v.item_id)
    assert v2.answers == {q1.id: "3"} and v2.revision == 1
    tasks.submit_answer(tdb, doc1, v.item_id, v2.pending.id, "1", client_token="c", revision=v2.revision)
    assert tdb.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0] == 2


def test_the_position_moves_on_after_a_skip(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = tasks.create_campaign(tdb, "preference", "p", ["doc1"], k=1, config={"dataset": "clin", "compare": "answers"},
                                actor=res)
    s = tasks.task_state(tdb, doc1, cid)
    assert s.position == 1
    tasks.submit_answer(tdb, doc1, s.item.item_id, "", None, client_token="s", skipped=True)
    assert tasks.task_state(tdb, doc1, cid).position == 2


def test_flags_carry_a_note_and_change_no_answer(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=res)
    v = tasks.task_state(tdb, doc1, cid).item
    with pytest.raises(MedevalError, match="note"):
        tasks.flag_item(tdb, doc1, v.item_id, "  ", client_token="f0")
    f = tasks.flag_item(tdb, doc1, v.item_id, "参考答案过时 <b>x</b>", client_token="f1")
    assert tasks.flag_item(tdb, doc1, v.item_id, "参考答案过时 <b>x</b>", client_token="f1") == f  # double click
    v2 = tasks.item_view(tdb, doc1, v.item_id)
    assert v2.flagged and v2.answers == {} and v2.pending == v.pending  # nothing answered, same question
    assert tasks.task_state(tdb, doc1, cid).item.item_id == v.item_id  # the annotator is not moved on
    fl = tasks.flags(tdb, cid, actor=res)
    assert [(x["annotator"], x["note"]) for x in fl] == [("doc1", "参考答案过时 <b>x</b>")]
    assert fl[0]["source"].startswith("clin/")
    assert tasks.answers(tdb, cid) == []  # a flag is not an answer
    r = tasks.results(tdb, cid, actor=res)
    assert r["flags"] == fl and r["progress"]["annotators"][0]["flagged"] == 1
    with pytest.raises(PermissionDenied):
        tasks.flags(tdb, cid, actor=doc1)


def test_answers_csv_prefixes_usernames_a_spreadsheet_would_run(tdb, db_path):
    """Usernames may start with - or @: the answers CSV writes them as text (issue 12, OWASP CSV injection)."""
    import csv
    import io

    from click.testing import CliRunner

    from medeval.cli import main

    add_user(tdb, "-cmd", "a-long-password", "annotator")
    add_user(tdb, "@SUM", "a-long-password", "annotator")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["-cmd", "@SUM"], k=2, config={"dataset": "clin"}, actor=None)
    for name in ("-cmd", "@SUM"):
        u = get_user(tdb, name)
        s = tasks.task_state(tdb, u, cid)
        tasks.submit_answer(tdb, u, s.item.item_id, s.item.pending.id, "3", client_token=f"{name}:1")
    res = CliRunner().invoke(main, ["task", "results", str(cid), "--format", "answers-csv"],
                             env={"MEDEVAL_DB": str(db_path)}, catch_exceptions=False)
    got = list(csv.reader(io.StringIO(res.output)))
    assert got[0] == tasks.ANSWERS_CSV_COLUMNS and sorted(r[1] for r in got[1:]) == ["'-cmd", "'@SUM"]
    assert all(r[3] == "3" for r in got[1:])
