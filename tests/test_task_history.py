"""An annotator's history on Rate & compare: the last answer undone (Z), the list of their answers in a task
campaign (with a snippet, filterable by answered / skipped / flagged), and any item reopened to answer anew --
append-only as every change, hidden gold items listed exactly like real ones."""

import pytest

from medeval.annotation import gold, tasks
from medeval.annotation.campaigns import set_campaign_status
from medeval.core.errors import MedevalError, PermissionDenied
from tests.test_tasks import tdb, users  # noqa: F401 (the fixture)


def _pref(db, res, annotators=("doc1",)):
    return tasks.create_campaign(db, "preference", "p", list(annotators), k=len(annotators), seed=2,
                                 config={"dataset": "clin", "compare": "answers", "max_items": 4}, actor=res)


def _answer(db, user, cid, value="tie"):
    """Answer the question on screen; returns (the view it was on, the question)."""
    v = tasks.task_state(db, user, cid).item
    q = v.pending
    tasks.answer(db, user, cid, v.ref, q.id, value, client_token=f"{v.ref}:{v.revision}", revision=v.revision)
    return v, q


def test_nothing_answered_has_no_history(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    assert tasks.my_answers(tdb, doc1, cid) == [] and tasks.last_answer(tdb, doc1, cid) is None


def test_the_last_answer_comes_back_with_its_question_and_a_new_answer_supersedes_it(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    _answer(tdb, doc1, cid, "left")
    v, q = _answer(tdb, doc1, cid, "right")
    last = tasks.last_answer(tdb, doc1, cid)
    assert last.ref == v.ref and last.question == q.id and last.status == "answered" and not last.complete
    label = q.option("right").label
    assert last.last == f"{q.target} · {q.criterion} → {label}"
    s = tasks.task_state(tdb, doc1, cid, reopen=last.ref)
    assert s.reopened == last and s.item.ref == v.ref and s.item.pending.id == q.id  # the undone question again
    assert s.item.answers[q.id] == "right"  # what it was, for the screen to say
    before = tdb.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0]
    tasks.answer(tdb, doc1, cid, s.item.ref, q.id, "tie", client_token="again", revision=s.item.revision)
    rows = tdb.conn.execute("SELECT value, supersedes FROM task_answers ORDER BY id DESC LIMIT 2").fetchall()
    assert rows[0][0] == "tie" and rows[0][1] is not None  # a new row that supersedes ...
    assert tdb.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0] == before + 1  # ... nothing rewritten
    after = tasks.task_state(tdb, doc1, cid)  # without reopen: the queue goes on where it was
    assert after.item.ref == v.ref and after.item.pending.id != q.id and after.reopened is None


def test_a_skip_undone_shows_the_item_at_its_first_open_question(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    v = tasks.task_state(tdb, doc1, cid).item
    tasks.answer(tdb, doc1, cid, v.ref, None, None, skipped=True, client_token="skip", revision=v.revision)
    last = tasks.last_answer(tdb, doc1, cid)
    assert last.ref == v.ref and last.question is None and last.last == "skipped" and last.status == "skipped"
    s = tasks.task_state(tdb, doc1, cid, reopen=last.ref)
    assert s.item.ref == v.ref and s.item.pending.id == v.pending.id


def test_the_list_holds_every_item_touched_newest_first_with_a_snippet_and_filters(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    first = tasks.task_state(tdb, doc1, cid).item
    while (s := tasks.task_state(tdb, doc1, cid)).item is not None and s.item.ref == first.ref:
        _answer(tdb, doc1, cid)  # the whole first item
    second = tasks.task_state(tdb, doc1, cid).item
    tasks.answer(tdb, doc1, cid, second.ref, None, None, skipped=True, client_token="s", revision=second.revision)
    third = tasks.task_state(tdb, doc1, cid).item
    tasks.flag(tdb, doc1, cid, third.ref, "reference outdated", client_token="f")
    mine = tasks.my_answers(tdb, doc1, cid)
    assert [g.ref for g in mine] == [third.ref, second.ref, first.ref]
    assert [g.status for g in mine] == ["flagged", "skipped", "answered"]
    assert mine[2].complete and not mine[1].complete
    assert mine[0].last == "not answered yet"  # a flag answers nothing
    text = next(b.text for b in first.blocks if b.text)
    assert mine[2].snippet == " ".join(text.split())[:60].rstrip() + ("…" if len(" ".join(text.split())) > 60 else "")
    assert "\n" not in mine[2].snippet and len(mine[2].snippet) <= 61
    assert [g.ref for g in tasks.my_answers(tdb, doc1, cid, status="skipped")] == [second.ref]
    assert [g.ref for g in tasks.my_answers(tdb, doc1, cid, status="answered")] == [first.ref]
    assert tasks.last_answer(tdb, doc1, cid).ref == second.ref  # a flag is not an answer to undo
    with pytest.raises(MedevalError, match="answered, skipped or flagged"):
        tasks.my_answers(tdb, doc1, cid, status="done")


def test_reopen_is_refused_for_items_not_answered_closed_campaigns_and_others(tdb):
    doc1, doc2, res = users(tdb, "doc1", "doc2", "res")
    cid = _pref(tdb, res, annotators=("doc1", "doc2"))
    v, _q = _answer(tdb, doc1, cid)
    untouched = tasks.task_state(tdb, doc2, cid).item.ref
    with pytest.raises(MedevalError, match="no answer of yours"):
        tasks.task_state(tdb, doc2, cid, reopen=v.ref)  # doc1's answer, not doc2's
    with pytest.raises(MedevalError, match="no answer of yours"):
        tasks.task_state(tdb, doc1, cid, reopen=untouched if untouched != v.ref else "i:999999")
    with pytest.raises(MedevalError):
        tasks.task_state(tdb, doc1, cid, reopen="q:1:1")  # a qualification item never reopens
    with pytest.raises(PermissionDenied):
        tasks.my_answers(tdb, _adjudicator(tdb), cid)  # (the role answers no tasks)
    set_campaign_status(tdb, cid, "closed", actor=res)
    with pytest.raises(MedevalError, match="closed"):
        tasks.task_state(tdb, doc1, cid, reopen=v.ref)
    assert [g.ref for g in tasks.my_answers(tdb, doc1, cid)] == [v.ref]  # still listed, to read


def _adjudicator(db):
    from medeval.accounts import auth

    auth.add_user(db, "adj", "adjudicator-pass", "adjudicator")
    return auth.authenticate(db, "adj", "adjudicator-pass")


def test_hidden_gold_items_are_listed_and_reopened_like_real_ones(tdb):
    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    for c in gold.candidates(tdb, cid, actor=res)[:4]:
        gold.mark_task_gold(tdb, cid, c.source, {"fluency": "tie"}, "equally fluent", actor=res)
    gold.set_settings(tdb, cid, {"hidden_share": 0.5}, actor=res)
    seen = []
    while (s := tasks.task_state(tdb, doc1, cid)).item is not None:
        seen.append(s.item.ref)
        _answer(tdb, doc1, cid)
    hidden = [r for r in dict.fromkeys(seen) if r.startswith("h:")]
    assert hidden
    mine = tasks.my_answers(tdb, doc1, cid)
    assert {g.ref for g in mine} == set(seen) and all(g.complete and g.status == "answered" for g in mine)
    g = next(g for g in mine if g.ref == hidden[0])
    s = tasks.task_state(tdb, doc1, cid, reopen=g.ref)
    assert s.item.ref == g.ref and s.item.pending.id == g.question
    tasks.answer(tdb, doc1, cid, g.ref, g.question, "left", client_token="chg", revision=s.item.revision)
    assert tdb.conn.execute("SELECT value FROM task_gold_answers ORDER BY id DESC LIMIT 1").fetchone()[0] == "left"
    assert tasks.last_answer(tdb, doc1, cid).ref == g.ref


def test_task_results_count_answers_given_without_the_whole_text_on_screen(tdb):
    from medeval.annotation import answers

    doc1, res = users(tdb, "doc1", "res")
    cid = _pref(tdb, res)
    said = []
    for shown in (False, True, None, False):  # what the screen said with each press (None: not measured)
        v = tasks.task_state(tdb, doc1, cid).item
        answers.submit(tdb, doc1, cid, v.ref, answers.Answer.questions({v.pending.id: "tie"}, fully_shown=shown),
                       client_token=f"{v.ref}:{v.revision}", expected=v.revision)
        said.append((v.ref, v.pending.id))
    p = tasks.campaign_progress(tdb, cid, actor=res)
    row = next(a for a in p["annotators"] if a["annotator"] == "doc1")
    assert (row["not_fully_shown"], row["not_measured"]) == (2, 1) == (p["not_fully_shown"], p["not_measured"])
    ref, question = said[0]  # a change from the list below the item supersedes: only the latest answer counts
    v = tasks.task_state(tdb, doc1, cid, reopen=ref).item
    tasks.answer(tdb, doc1, cid, ref, question, "left", client_token="chg", revision=v.revision)
    p = tasks.campaign_progress(tdb, cid, actor=res)
    assert (p["not_fully_shown"], p["not_measured"]) == (1, 2)
