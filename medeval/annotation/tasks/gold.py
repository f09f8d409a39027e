"""Gold items in task campaigns: the qualification round, hidden gold in the queue, gold answers.

The flow is the tier-grading one (:mod:`medeval.annotation.gold`: attempts, pass mark, retries, the seeded
hidden plan, accuracy over time), run through :data:`TASK`, the task family's :class:`Backend`. What differs:
a task gold item has several questions, answered one by one in parts like a real item; it is *done* when every
question has an answer (or the item is skipped), and *as expected* when every question its expected answers
name was answered as expected (a 1-5 score within the campaign's ``score_tolerance``). Each annotator sees a
gold item in a layout of their own (response order, sides), seeded and stored with every answer, and drawn
exactly like a real item (its widgets keyed by :func:`medeval.annotation.screen_keys.screen_key`, like a real
item's). Qualification answers cannot be changed; hidden ones can, like real answers. Answers go to ``task_gold_answers`` only.
"""

from __future__ import annotations

import json

import numpy as np
import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation import gold as gd
from medeval.annotation import gold_items as gi
from medeval.annotation import guidelines as gl
from medeval.annotation.answer_input import check_time
from medeval.annotation.screen_keys import screen_key
from medeval.annotation.tasks import gold_items as tg
from medeval.annotation.tasks import state
from medeval.annotation.tasks.registry import TaskType, get
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.limits import NAME_MAX_CHARS, check_note, check_text
from medeval.store.db import transaction


def _rows(db, user_id: int, gold_id: int, mode: str, attempt: int | None) -> list[tuple]:
    return db.conn.execute("SELECT gold_id, id, question, value, skipped, layout, created_at FROM task_gold_answers "
                           "WHERE user_id = ? AND gold_id = ? AND mode = ? AND attempt IS ? ORDER BY id",
                           (user_id, gold_id, mode, attempt)).fetchall()


def _kind_payload(db, gold_id: int) -> tuple[TaskType, dict, dict, int]:
    kind, payload, expected, cid = db.conn.execute(
        "SELECT c.kind, g.payload, g.expected, g.campaign_id FROM task_gold_items g JOIN campaigns c ON "
        "c.id = g.campaign_id WHERE g.id = ?", (gold_id,)).fetchone()
    return get(kind), json.loads(payload), json.loads(expected), cid


def layout_for(db, user: User, campaign_id: int, gold_id: int) -> dict:
    """The annotator's layout of a gold item: the one stored with their answers, else drawn from the seed."""
    row = db.conn.execute("SELECT layout FROM task_gold_answers WHERE user_id = ? AND gold_id = ? ORDER BY id LIMIT 1",
                          (user.id, gold_id)).fetchone()
    if row:
        return json.loads(row[0])
    t, payload, _e, _c = _kind_payload(db, gold_id)
    seed = gd._seed(db, "layout", campaign_id, user.id, gold_id).getrandbits(64)
    return t.layout(payload, np.random.default_rng(seed))


def matches(t: TaskType, payload: dict, layout: dict, answers: dict, expected: dict, tolerance: int) -> bool:
    """Whether ``answers`` (question id -> value under ``layout``) give every expected answer (canonical ids)."""
    given = dict(t.canonical(payload, layout, q, v) for q, v in answers.items())
    for q, want in expected.items():
        got = given.get(q)
        if got is None:
            return False
        if got != want and not (got.isdigit() and want.isdigit() and abs(int(got) - int(want)) <= tolerance):
            return False
    return True


def on_screen(t: TaskType, payload: dict, layout: dict, expected: dict) -> list[tuple]:
    """The expected answers as the annotator saw the item: (their question, the option they should have chosen),
    in screen order -- e.g. "B is better" where A was on their right, "Response 2" for the data's first response."""
    out = []
    for q in t.questions(payload, layout):
        for o in q.options:
            cq, cv = t.canonical(payload, layout, q.id, o.value)
            if expected.get(cq) == cv:
                out.append((q, o))
                break
    return out


def describe_on_screen(t: TaskType, payload: dict, layout: dict, expected: dict) -> list[str]:
    """:func:`on_screen` as lines a person reads ("A versus B · Knowledge Correctness: B is better")."""
    return [f"{q.target} · {q.criterion}: {o.label}" + (f" ({o.meaning})" if o.meaning and o.meaning != o.label else "")
            for q, o in on_screen(t, payload, layout, expected)]


def _status(db, user_id: int, gold_id: int, mode: str, attempt: int | None) -> tuple[str, bool, float | None]:
    """("open" | "skipped" | "done", answered as expected, when it was done) of one gold item for one annotator."""
    rows = _rows(db, user_id, gold_id, mode, attempt)
    if not rows:
        return "open", False, None
    t, payload, expected, cid = _kind_payload(db, gold_id)
    layout = json.loads(rows[0][5])
    st = state.fold([r[:5] for r in rows])[gold_id]
    if state.complete(t, payload, layout, st["answers"]):
        tol = gi.get_settings(db, cid)["score_tolerance"]
        return "done", matches(t, payload, layout, st["answers"], expected, tol), rows[-1][6]
    if st["skipped"]:
        return "skipped", False, rows[-1][6]
    return "open", False, None


class TaskBackend(gd.Backend):
    family = "task"
    tables = ("task_items", "task_assignments", "task_gold_items")

    def outcome(self, db, user_id, gold_id, mode, attempt):
        status, ok, _at = _status(db, user_id, gold_id, mode, attempt)
        return None if status == "open" else ok

    def real_counts(self, db, user_id, campaign_id):
        p = state.progress(db, user_id, campaign_id)
        return p["done"], p["total"]

    def hidden_started(self, db, user_id, campaign_id):
        return [r[0] for r in db.conn.execute(
            "SELECT a.gold_id FROM task_gold_answers a JOIN task_gold_items g ON g.id = a.gold_id WHERE a.user_id = ? "
            "AND g.campaign_id = ? AND a.mode = 'hidden' AND a.question != ? GROUP BY a.gold_id ORDER BY min(a.id)",
            (user_id, campaign_id, state.FLAG))]

    def hidden_rows(self, db, user_id, campaign_id):
        out = []
        for g in self.hidden_started(db, user_id, campaign_id):
            if db.conn.execute("SELECT 1 FROM task_gold_retired WHERE gold_id = ?", (g,)).fetchone():
                continue
            status, ok, at = _status(db, user_id, g, "hidden", None)
            if status != "open":
                out.append((None if status == "skipped" else ok, at))
        return out


TASK = TaskBackend()


def gold_view(db: sqlite_utils.Database, user: User, campaign_id: int, gold_id: int, mode: str,
              attempt: int | None) -> state.ItemView:
    """A gold item drawn exactly like a real one (its widgets' key: :func:`medeval.annotation.screen_keys.screen_key`)."""
    t, payload, _e, _c = _kind_payload(db, gold_id)
    layout = layout_for(db, user, campaign_id, gold_id)
    st = state.fold([r[:5] for r in _rows(db, user.id, gold_id, mode, attempt)]).get(gold_id, state.EMPTY)
    ref = f"q:{gold_id}:{attempt}" if mode == "qualification" else f"h:{gold_id}"
    return state.view(t, payload, layout, st, item_id=gd.display_id(db, user, campaign_id, gold_id, TASK), ref=ref,
                      changeable=mode == "hidden", key=screen_key(db, user, ref, "task"))


parse_ref = gd.parse_ref  # (the references are the same for tier and task items)


def _check_turn(db, user: User, campaign_id: int, gold_id: int, mode: str, attempt: int | None) -> None:
    """Refuse an answer to a gold item that is not ``user``'s to answer now (in this mode and attempt)."""
    if mode == "qualification":
        q = gd.qualification_state(db, user, campaign_id, TASK)
        if q.status != "in_progress" or q.attempt != attempt or q.next_gold != gold_id:
            raise state.StaleAnswer("this qualification item is no longer on your screen: nothing was saved")
    else:
        gd.require_qualified(db, user, campaign_id, TASK)
        if gold_id not in gd.hidden_plan(db, user, campaign_id, TASK)[0]:
            raise PermissionDenied("this item is not assigned to you")


def submit_gold_answer(db: sqlite_utils.Database, user: User, campaign_id: int, gold_id: int, mode: str, *,
                       attempt: int | None, question: str, value: str | None, client_token: str,
                       skipped: bool = False, revision: int | None = None, guideline_version: int | None = None,
                       note: str | None = None, at: float | None = None) -> tuple[int, str | None]:
    """Record one answer (a skip, or with ``note`` a flag) to a gold item; returns (row id, feedback or None).

    The rules of a real answer (idempotent per token, parts in order, ``revision`` refuses an answer from a
    screen that has changed, guidelines acknowledged), plus: the item must be the annotator's to answer now;
    a qualification answer cannot be changed. ``feedback`` (the expected answers and the reason) comes back
    when a hidden gold item is done for the first time and the campaign enables it.
    """
    authorize(user, "task.answer")
    if mode not in ("qualification", "hidden"):
        raise MedevalError(f"unknown gold mode {str(mode)[:20]!r}")
    if not client_token:
        raise MedevalError("a client token is required (it makes a resubmission harmless)")
    check_text(client_token, what="the client token", max_chars=NAME_MAX_CHARS, allow_newlines=False)
    if note is not None:
        note = check_note(note, what="the flag note").strip()
        if not note:
            raise MedevalError("write a short note saying what is wrong with this item")
    at = check_time(at)
    token = f"{mode}:{gold_id}:{attempt or 0}|{client_token}"
    with transaction(db):
        if gi.require_gold_campaign(db, campaign_id, "task") != "open":
            raise MedevalError("this campaign is closed: answers and flags can no longer be given or changed")
        if not db.conn.execute("SELECT 1 FROM task_gold_items WHERE id = ? AND campaign_id = ?",
                               (gold_id, campaign_id)).fetchone():
            raise PermissionDenied("this item is not part of this campaign")
        guideline_version = gl.check_version(db, campaign_id, guideline_version)
        dup = db.conn.execute("SELECT id FROM task_gold_answers WHERE user_id = ? AND client_token = ?",
                              (user.id, token)).fetchone()
        if dup:
            return dup[0], None
        gl.require_acknowledged(db, user, campaign_id)
        rows = _rows(db, user.id, gold_id, mode, attempt)
        st = state.fold([r[:5] for r in rows]).get(gold_id, state.EMPTY)
        if revision is not None and revision != st["rows"]:
            raise state.StaleAnswer("the screen changed before this answer arrived: nothing was saved from it")
        t, payload, expected, _cid = _kind_payload(db, gold_id)
        layout = json.loads(rows[0][5]) if rows else layout_for(db, user, campaign_id, gold_id)
        was_done = state.complete(t, payload, layout, st["answers"])
        _check_turn(db, user, campaign_id, gold_id, mode, attempt)  # (a flag too: only the item on screen)
        prev = None
        if note is not None:
            question, value = state.FLAG, note
        elif skipped:
            question, value = state.SKIP, None
        else:
            qs = {q.id: q for q in t.questions(payload, layout)}
            if question not in qs:
                raise MedevalError(f"no question {str(question)[:60]!r} in this item")
            value = qs[question].option(str(value)).value
            part, _n = state.open_part(list(qs.values()), st["answers"])
            if qs[question].part > part:
                raise MedevalError(f"part {qs[question].part} opens once every question of part {part} has an answer")
            prev = st["ids"].get(question)
            if prev is not None and mode == "qualification":
                raise state.StaleAnswer("this qualification question already has your answer: nothing was saved")
            if prev is not None and st["answers"][question] == value:
                return prev, None
        cur = db.conn.execute(
            "INSERT INTO task_gold_answers (gold_id, user_id, question, value, skipped, mode, attempt, layout, "
            "client_token, supersedes, guideline_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (gold_id, user.id, question, value, int(skipped and note is None), mode, attempt, json.dumps(layout),
             token, prev, guideline_version, at))
        feedback = None
        if mode == "hidden" and not was_done and gi.get_settings(db, campaign_id)["feedback"]:
            answers = {**st["answers"], **({question: value} if not skipped and note is None else {})}
            if state.complete(t, payload, layout, answers):
                g = tg.task_gold_item(db, gold_id)
                feedback = ("Expected: " + "; ".join(describe_on_screen(t, payload, layout, expected))
                            + f". Why: {g.reason}")
    return cur.lastrowid, feedback


def review(db: sqlite_utils.Database, user: User, campaign_id: int, attempt: int | None = None) -> list[dict]:
    """One row per expected answer of the items of ``user``'s latest (or given) completed attempt: the item,
    the question, their answer, the expected one, whether it matches, the reason -- shown after a failed attempt."""
    authorize(user, "task.answer")
    att = {a: ids for a, ids, _p in gd._attempts(db, user.id, campaign_id)}
    if not att:
        return []
    attempt = max(att) if attempt is None else attempt
    if attempt not in att:
        raise MedevalError(f"you have no qualification attempt {attempt} in this campaign")
    tol = gi.get_settings(db, campaign_id)["score_tolerance"]
    out = []
    for n, g in enumerate(att[attempt], start=1):
        status, _ok, _at = _status(db, user.id, g, "qualification", attempt)
        if status == "open":
            raise MedevalError("finish the attempt first: the expected answers are shown after its last item")
        t, payload, expected, _c = _kind_payload(db, g)
        rows = _rows(db, user.id, g, "qualification", attempt)
        layout = json.loads(rows[0][5])
        st = state.fold([r[:5] for r in rows])[g]
        reason = tg.task_gold_item(db, g).reason
        for q, want in on_screen(t, payload, layout, expected):  # in the annotator's own layout
            mine = st["answers"].get(q.id)
            out.append({"item": n, "question": f"{q.target} · {q.criterion}",
                        "answer": q.option(mine).label if mine is not None else "(skipped)",
                        "expected": want.label,
                        "correct": matches(t, payload, layout, {q.id: mine} if mine is not None else {},
                                           dict([t.canonical(payload, layout, q.id, want.value)]), tol),
                        "reason": reason})
    return out
