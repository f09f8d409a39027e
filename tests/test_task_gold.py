"""Gold items in task campaigns (rubric, preference, AccR): marking with expected answers (by hand and from a CSV,
in the item's canonical layout), the qualification round with review and retry, hidden gold in the queue drawn
like real items, answers kept apart from the real ones, accuracy per annotator, and the refusals."""

import json

import pytest

from medeval.annotation import gold, tasks
from medeval.annotation.gold import gold_accuracy, methods_sentence, qualification
from medeval.core.errors import InputError, MedevalError, PermissionDenied
from tests.conftest import write
from tests.test_tasks import tdb, users  # noqa: F401 (the fixture)


def _pref(db, res, name="p", **cfg):
    """A preference campaign on 3 of the 9 model pairs (doc1, doc2; k=2): 6 pairs are left for gold."""
    return tasks.create_campaign(db, "preference", name, ["doc1", "doc2"], k=2, seed=3,
                                 config={"dataset": "clin", "compare": "answers", "max_items": 3, **cfg}, actor=res)


def _rubric(db, res):
    """A rubric campaign on 1 of the 3 questions with judge-x (part 2): 2 questions are left for gold."""
    return tasks.create_campaign(db, "rubric", "r", ["doc1", "doc2"], k=2, seed=1,
                                 config={"dataset": "clin", "judge": "judge-x", "max_items": 1}, actor=res)


def _a_text(view) -> str:
    return next(b.text for b in view.blocks if b.label == "A")


def _answer_item(db, user, cid, pick, *, token=""):
    """Answer every question of the item on screen with ``pick(view, question)``; returns the last feedback."""
    feedback = None
    while True:
        s = tasks.task_state(db, user, cid)
        v = s.item
        if v is None or v.pending is None:
            return feedback
        q = v.pending
        _id, fb = tasks.answer(db, user, cid, v.ref, q.id, pick(v, q), client_token=f"{token}{v.ref}:{v.revision}",
                               revision=v.revision)
        feedback = fb or feedback
        if tasks.task_state(db, user, cid).item is None or tasks.task_state(db, user, cid).item.ref != v.ref:
            return feedback


def test_candidates_are_the_campaigns_data_minus_its_real_items(tdb):
    res, = users(tdb, "res")
    cid = _pref(tdb, res)
    real = {r[0] for r in tdb.conn.execute("SELECT source FROM task_items WHERE campaign_id = ?", (cid,))}
    cands = gold.candidates(tdb, cid, actor=res)
    assert len(cands) == 6 and not {c.source for c in cands} & real
    assert gold.candidates(tdb, cid, contains="ALPHA|BETA", actor=res)  # case-insensitive
    qs = gold.gold_questions(tasks.get("preference"), cands[0].payload)
    assert [q.id for q in qs] == ["relevancy", "knowledge", "fluency"]
    with pytest.raises(PermissionDenied):
        gold.candidates(tdb, cid, actor=users(tdb, "doc1")[0])


def test_marking_checks_items_questions_and_answers(tdb):
    res, = users(tdb, "res")
    cid = _pref(tdb, res)
    real = tdb.conn.execute("SELECT source FROM task_items WHERE campaign_id = ?", (cid,)).fetchone()[0]
    src = gold.candidates(tdb, cid, actor=res)[0].source
    with pytest.raises(MedevalError, match="is a real item"):
        gold.mark_task_gold(tdb, cid, real, {"knowledge": "left"}, "why", actor=res)
    with pytest.raises(MedevalError, match="has no item"):
        gold.mark_task_gold(tdb, cid, "clin/nope", {"knowledge": "left"}, "why", actor=res)
    with pytest.raises(MedevalError, match="no question 'safety'"):
        gold.mark_task_gold(tdb, cid, src, {"safety": "left"}, "why", actor=res)
    with pytest.raises(MedevalError, match="'maybe' is not an answer"):
        gold.mark_task_gold(tdb, cid, src, {"knowledge": "maybe"}, "why", actor=res)
    with pytest.raises(MedevalError, match="at least one question"):
        gold.mark_task_gold(tdb, cid, src, {}, "why", actor=res)
    with pytest.raises(MedevalError, match="reason"):
        gold.mark_task_gold(tdb, cid, src, {"knowledge": "left"}, "  ", actor=res)
    assert tdb.conn.execute("SELECT count(*) FROM task_gold_items").fetchone()[0] == 0
    gid = gold.mark_task_gold(tdb, cid, src, {"knowledge": "T", "fluency": "A is better"}, "<b>why</b>", actor=res)
    g = gold.task_gold_item(tdb, gid)
    assert g.expected == {"knowledge": "tie", "fluency": "left"} and g.reason == "<b>why</b>"  # key, label -> value
    assert gold.describe(tasks.get("preference"), g.payload, g.expected) == [
        "A versus B · Knowledge Correctness: Tie (neither is better)",
        "A versus B · Fluency: A is better (the output on the left (A))"]
    with pytest.raises(MedevalError, match="already gold item"):
        gold.mark_task_gold(tdb, cid, src, {"knowledge": "left"}, "why", actor=res)
    gold.retire_task_gold(tdb, cid, gid, actor=res)
    assert gold.active_gold_ids(tdb, cid) == [] and gold.list_task_gold(tdb, cid, actor=res)[0].retired
    with pytest.raises(MedevalError, match="retired"):
        gold.mark_task_gold(tdb, cid, src, {"knowledge": "left"}, "why", actor=res)
    with pytest.raises(Exception, match="append-only"), tdb.conn:
        tdb.conn.execute("UPDATE task_gold_items SET reason = 'x'")
    with pytest.raises(MedevalError, match="is a task campaign: its gold items are task items"):  # (tier functions)
        gold.list_gold(tdb, cid, actor=res)


def test_csv_import_is_all_or_nothing(tdb, tmp_path):
    res, = users(tdb, "res")
    cid = _rubric(tdb, res)
    srcs = [c.source for c in gold.candidates(tdb, cid, actor=res)]
    assert len(srcs) == 2
    good = write(tmp_path / "g.csv", "source,question,expected,reason\n"
                 f"{srcs[0]},r1:relevancy,5,the reference says so\n{srcs[0]},judge:j_knowledge,2,\n"
                 f"{srcs[1]},r2:knowledge,1,wrong drug\n")
    bad_q = write(tmp_path / "b1.csv", "source,question,expected,reason\n"
                  f"{srcs[0]},r1:relevancy,5,ok\n{srcs[1]},r9:knowledge,1,x\n")
    bad_v = write(tmp_path / "b2.csv", "source,question,expected,reason\n"
                  f"{srcs[0]},r1:relevancy,6,ok\n")
    no_reason = write(tmp_path / "b3.csv", "source,question,expected,reason\n"
                      f"{srcs[0]},r1:relevancy,5,\n")
    two_reasons = write(tmp_path / "b4.csv", "source,question,expected,reason\n"
                        f"{srcs[0]},r1:relevancy,5,one\n{srcs[0]},r2:relevancy,5,two\n")
    dup = write(tmp_path / "b5.csv", "source,question,expected,reason\n"
                f"{srcs[0]},r1:relevancy,5,one\n{srcs[0]},r1:relevancy,4,one\n")
    cols = write(tmp_path / "b6.csv", "source,expected,reason\nx,5,y\n")
    latin = tmp_path / "b7.csv"
    latin.write_bytes("source,question,expected,reason\ncafé,r1:relevancy,5,x\n".encode("latin-1"))
    for path, msg in ((bad_q, "row 3.*no question 'r9:knowledge'"), (bad_v, "row 2.*'6' is not an answer"),
                      (no_reason, "no reason"), (two_reasons, "different reason"), (dup, "already on an earlier row"),
                      (cols, "question"), (latin, "UTF-8")):
        with pytest.raises(InputError, match=msg):
            gold.import_task_gold_csv(tdb, cid, path, actor=res)
        assert tdb.conn.execute("SELECT count(*) FROM task_gold_items").fetchone()[0] == 0
    assert gold.import_task_gold_csv(tdb, cid, good, actor=res) == 2
    items = gold.list_task_gold(tdb, cid, actor=res)
    assert items[0].expected == {"r1:relevancy": "5", "judge:j_knowledge": "2"} and items[0].reason == "the reference says so"
    with pytest.raises(InputError, match="already gold item"):
        gold.import_task_gold_csv(tdb, cid, good, actor=res)


def _set(db, cid, res, **values):
    return gold.set_settings(db, cid, values, actor=res)


def test_qualification_gates_real_items_then_review_and_retry(tdb):
    doc1, doc2, res = users(tdb, "doc1", "doc2", "res")
    cid = _pref(tdb, res)
    cands = gold.candidates(tdb, cid, actor=res)
    for c in cands[:3]:  # expected: A (the data's first output) is better on knowledge
        gold.mark_task_gold(tdb, cid, c.source, {"knowledge": "left"}, f"{c.payload['a']['source']} is right", actor=res)
    with pytest.raises(MedevalError, match="needs at least that many gold items"):
        _set(tdb, cid, res, qualification_required=True, qualification_items=4)
    _set(tdb, cid, res, qualification_required=True, qualification_items=2, pass_mark=1.0, retries=1)
    s = tasks.task_state(tdb, doc1, cid)
    assert s.phase == "qualification" and s.item is None and s.qualification.status == "not_started"
    real = tdb.conn.execute("SELECT item_id FROM task_assignments WHERE user_id = ? AND campaign_id = ?",
                            (doc1.id, cid)).fetchone()[0]
    with pytest.raises(gold.QualificationPending):  # the library refuses real answers until the round is passed
        tasks.submit_answer(tdb, doc1, real, "knowledge", "left", client_token="x")
    assert gold.start_attempt(tdb, doc1, cid, gold.TASK) == 1
    s = tasks.task_state(tdb, doc1, cid)
    assert s.item is not None and s.item.ref.startswith("q:") and not s.item.changeable and s.total == 2
    real_ids = {r[0] for r in tdb.conn.execute("SELECT item_id FROM task_assignments WHERE user_id = ?", (doc1.id,))}
    assert s.item.item_id not in real_ids  # drawn like a real item, with an id that is not one of theirs
    shown = " ".join(b.label + b.text for b in s.item.blocks)
    assert not any(m in shown for m in ("alpha", "beta", "gamma"))  # blind like a real item

    def wrong(view, q):  # the opposite of "A is better" whatever the side A is on
        payload = gold.task_gold_item(tdb, int(view.ref.split(":")[1])).payload
        return "right" if _a_text(view) == payload["a"]["text"] else "left"

    v = tasks.task_state(tdb, doc1, cid).item
    first = v.ref
    tasks.answer(tdb, doc1, cid, v.ref, v.pending.id, wrong(v, v.pending), client_token="w1", revision=v.revision)
    with pytest.raises(Exception, match="qualification question already has your answer"):
        tasks.answer(tdb, doc1, cid, v.ref, v.pending.id, "tie", client_token="change")  # no change in a round
    _answer_item(tdb, doc1, cid, wrong)
    with pytest.raises(Exception, match="no longer on your screen"):
        tasks.answer(tdb, doc1, cid, first, "relevancy", "tie", client_token="late")
    _answer_item(tdb, doc1, cid, wrong)
    q = gold.qualification_state(tdb, doc1, cid, gold.TASK)
    assert q.status == "failed_retry" and q.results[-1]["correct"] == 0
    rev = gold.review(tdb, doc1, cid, backend=gold.TASK)
    assert [r["correct"] for r in rev] == [False, False]
    first_ids = qualification._attempts(tdb, doc1.id, cid)[0][1]
    sides = [gold.layout_for(tdb, doc1, cid, g)["left"] for g in first_ids]
    # told in the annotator's own layout: where A (the expected better output) was on their right, it says "B"
    assert [r["expected"] for r in rev] == ["A is better" if s == "a" else "B is better" for s in sides]
    assert [r["answer"] for r in rev] == ["B is better" if s == "a" else "A is better" for s in sides]
    assert all("is right" in r["reason"] for r in rev)
    assert gold.start_attempt(tdb, doc1, cid, gold.TASK) == 2

    def right(view, q):
        payload = gold.task_gold_item(tdb, int(view.ref.split(":")[1])).payload
        return "left" if _a_text(view) == payload["a"]["text"] else "right"

    _answer_item(tdb, doc1, cid, right, token="2")
    _answer_item(tdb, doc1, cid, right, token="2")
    assert gold.qualification_state(tdb, doc1, cid, gold.TASK).status == "passed"
    s = tasks.task_state(tdb, doc1, cid)
    assert s.phase == "items" and s.item.ref.startswith("i:")
    # nothing of it reached the real answers or the results
    assert tdb.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0] == 0
    assert tasks.answers(tdb, cid, actor=res) == []
    acc = gold_accuracy(tdb, cid, actor=res, backend=gold.TASK)
    row = next(a for a in acc["annotators"] if a["annotator"] == "doc1")
    assert row["qualification"] == "passed" and [a["correct"] for a in row["attempts"]] == [0, 2]
    assert next(a for a in acc["annotators"] if a["annotator"] == "doc2")["qualification"] == "not_started"


def test_hidden_gold_in_the_queue_feedback_accuracy_and_tolerance(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = _rubric(tdb, res)
    cands = gold.candidates(tdb, cid, actor=res)
    t = tasks.get("rubric")
    for c in cands:  # expected: response 1 (in the data's order) scores 5 on knowledge
        gold.mark_task_gold(tdb, cid, c.source, {"r1:knowledge": "5"}, "the reference names it", actor=res)
    _set(tdb, cid, res, hidden_share=0.5, feedback=True, score_tolerance=1, alert_threshold=0.6)
    s = tasks.task_state(tdb, doc1, cid)
    assert s.total == 1 + 1  # 1 real item + round(0.5 * 1 / 0.5) = 1 hidden gold item
    seen_refs, feedback = [], []
    order_of = {}
    while (s := tasks.task_state(tdb, doc1, cid)).item is not None:
        v = s.item
        seen_refs.append(v.ref)
        q = v.pending
        value = "3"
        if v.ref.startswith("h:") and q.id.endswith(":knowledge"):
            g = gold.task_gold_item(tdb, int(v.ref[2:]))
            lay = gold.layout_for(tdb, doc1, cid, g.id)
            order_of[g.id] = lay["order"]
            value = "4" if t.canonical(g.payload, lay, q.id, "4")[0] == "r1:knowledge" else "2"
        _id, fb = tasks.answer(tdb, doc1, cid, v.ref, q.id, value, client_token=f"{v.ref}:{v.revision}",
                               revision=v.revision)
        if fb:
            feedback.append(fb)
    assert {r[0] for r in seen_refs} == {"i", "h"}  # the real item and the hidden gold item, nothing else
    shown_as = order_of[next(iter(order_of))].index(0) + 1  # where the data's first response was on screen
    assert feedback and feedback[0].startswith(f"Expected: Response {shown_as} · Knowledge Correctness: 5")
    assert "the reference names it" in feedback[0] and len(feedback) == 1  # once, when the item is done
    acc = gold_accuracy(tdb, cid, actor=res, backend=gold.TASK)
    row = next(a for a in acc["annotators"] if a["annotator"] == "doc1")
    assert row["hidden_answered"] == 1 and row["hidden_correct"] == 1  # 4 is within 1 of the expected 5
    _set(tdb, cid, res, score_tolerance=0)
    row = next(a for a in gold_accuracy(tdb, cid, actor=res, backend=gold.TASK)["annotators"]
               if a["annotator"] == "doc1")
    assert row["hidden_correct"] == 0 and row["flagged"]  # exact match required now: 4 != 5, below 0.6
    # the real answers hold the real item only; the results never see the gold answers
    assert {a.item_id for a in tasks.answers(tdb, cid, actor=res)} == {
        r[0] for r in tdb.conn.execute("SELECT id FROM task_items WHERE campaign_id = ?", (cid,))}
    assert "stored apart from the real answers" in methods_sentence(tdb, cid)
    assert "within 0 of" not in methods_sentence(tdb, cid)


def test_hidden_gold_answers_can_change_and_flags_go_with_the_gold_item(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    for c in gold.candidates(tdb, cid, actor=res)[:4]:
        gold.mark_task_gold(tdb, cid, c.source, {"fluency": "tie"}, "equally fluent", actor=res)
    _set(tdb, cid, res, hidden_share=0.5)
    refs = []
    while (s := tasks.task_state(tdb, doc1, cid)).item is not None:
        v = s.item
        refs.append(v.ref)
        if v.ref.startswith("h:") and v.revision == 0:
            tasks.flag(tdb, doc1, cid, v.ref, "the <b>reference</b> is outdated", client_token=f"{v.ref}:flag")
            v = tasks.task_state(tdb, doc1, cid).item
            assert v.flagged and v.revision == 1 and v.pending is not None  # a flag answers nothing
        tasks.answer(tdb, doc1, cid, v.ref, v.pending.id, "tie", client_token=f"{v.ref}:{v.revision}",
                     revision=v.revision)
    hidden = [r for r in dict.fromkeys(refs) if r.startswith("h:")]
    real = tdb.conn.execute("SELECT count(*) FROM task_assignments WHERE user_id = ? AND campaign_id = ?",
                            (doc1.id, cid)).fetchone()[0]
    assert real == 3 and len(hidden) == 3  # round(0.5 * 3 / (1 - 0.5)) = 3 of the 4 gold items
    gid = int(hidden[0][2:])
    rows = tdb.conn.execute("SELECT question, value FROM task_gold_answers WHERE gold_id = ? ORDER BY id",
                            (gid,)).fetchall()
    assert rows[0] == ("#flag", "the <b>reference</b> is outdated")
    n = tdb.conn.execute("SELECT count(*) FROM task_gold_answers").fetchone()[0]
    tasks.answer(tdb, doc1, cid, hidden[0], "fluency", "left", client_token="chg")  # a hidden answer may change
    last = tdb.conn.execute("SELECT value, supersedes FROM task_gold_answers ORDER BY id DESC LIMIT 1").fetchone()
    assert last[0] == "left" and last[1] is not None
    assert tdb.conn.execute("SELECT count(*) FROM task_gold_answers").fetchone()[0] == n + 1
    assert tasks.flags(tdb, cid, actor=res) == []  # (real items' flags only)


def test_answers_to_gold_items_are_refused_when_not_on_screen(tdb):
    doc1, doc2, res = users(tdb, "doc1", "doc2", "res")
    cid = _pref(tdb, res)
    gids = [gold.mark_task_gold(tdb, cid, c.source, {"knowledge": "left"}, "why", actor=res)
            for c in gold.candidates(tdb, cid, actor=res)[:2]]
    with pytest.raises(PermissionDenied, match="not assigned"):  # no hidden share: not in anyone's queue
        tasks.answer(tdb, doc1, cid, f"h:{gids[0]}", "knowledge", "left", client_token="a")
    with pytest.raises(Exception, match="no longer on your screen"):  # no attempt started
        tasks.answer(tdb, doc1, cid, f"q:{gids[0]}:1", "knowledge", "left", client_token="b")
    with pytest.raises(MedevalError, match="refers to no item"):
        tasks.answer(tdb, doc1, cid, "x:1", "knowledge", "left", client_token="c")
    other = _pref(tdb, res, name="p (2)")  # campaign names are unique (issue 22)
    with pytest.raises(PermissionDenied, match="not part of this campaign"):
        tasks.answer(tdb, doc1, other, f"h:{gids[0]}", "knowledge", "left", client_token="d")
    real = tdb.conn.execute("SELECT item_id FROM task_assignments WHERE user_id = ? AND campaign_id = ?",
                            (doc1.id, cid)).fetchone()[0]
    with pytest.raises(PermissionDenied, match="not part of this campaign"):
        tasks.answer(tdb, doc1, other, f"i:{real}", "knowledge", "left", client_token="e")
    with pytest.raises(PermissionDenied, match="not assigned"):  # a flag is refused the same way
        tasks.flag(tdb, doc1, cid, f"h:{gids[0]}", "a note", client_token="f")
    with pytest.raises(PermissionDenied):  # doc3 has no item of this campaign at all
        tasks.flag(tdb, users(tdb, "doc3")[0], cid, f"h:{gids[0]}", "a note", client_token="g")
    assert tdb.conn.execute("SELECT count(*) FROM task_gold_answers").fetchone()[0] == 0


def test_canonical_maps_each_layout_back(tdb):
    rub, pref = tasks.get("rubric"), tasks.get("preference")
    payload = {"responses": [{"model": "a"}, {"model": "b"}, {"model": "c"}]}
    assert rub.canonical(payload, {"order": [2, 0, 1]}, "r1:fluency", "4") == ("r3:fluency", "4")
    assert rub.canonical(payload, {"order": [2, 0, 1]}, "r2:fluency", "4") == ("r1:fluency", "4")
    assert rub.canonical(payload, {"order": [2, 0, 1]}, "judge:fluency", "2") == ("judge:fluency", "2")
    assert pref.canonical({}, {"left": "b"}, "knowledge", "left") == ("knowledge", "right")
    assert pref.canonical({}, {"left": "b"}, "knowledge", "tie") == ("knowledge", "tie")
    assert pref.canonical({}, {"left": "a"}, "knowledge", "left") == ("knowledge", "left")
    assert gold.matches(rub, payload, {"order": [1, 0, 2]}, {"r2:fluency": "4"}, {"r1:fluency": "5"}, 1)
    # on this screen Response 1 is the data's second response: a 5 for it says nothing of the first
    assert not gold.matches(rub, payload, {"order": [1, 0, 2]}, {"r1:fluency": "5"}, {"r1:fluency": "5"}, 1)
    assert not gold.matches(rub, payload, {"order": [0, 1, 2]}, {"r1:fluency": "3"}, {"r1:fluency": "5"}, 1)
    assert json.dumps(gold.parse_ref("q:3:2")) == '["qualification", 3, 2]'
