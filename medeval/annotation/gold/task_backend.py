"""The task family of the gold mechanism (:data:`TASK`): a task gold item has several questions, answered one by
one in parts like a real item, in a layout of the annotator's own (response order, sides), seeded and stored
with every answer; it is *done* when every question has an answer (or the item is skipped), and *as expected*
when every question its expected answers name was answered so (a 1-5 score within the campaign's
``score_tolerance``). Kept apart from :mod:`.backends` so that the tier flow imports nothing of
:mod:`medeval.annotation.tasks` (whose answering module imports this package).
"""

from __future__ import annotations

import json

import numpy as np

from medeval.annotation import item_rows
from medeval.annotation.answer_rows import TASK_FAMILY
from medeval.annotation.gold.backends import Backend
from medeval.annotation.gold.settings import _seed, get_settings
from medeval.annotation.gold.task_items import task_gold_item
from medeval.annotation.tasks import state
from medeval.annotation.tasks.registry import TaskType, get
from medeval.core.i18n import N_, _


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
    seed = _seed(db, "layout", campaign_id, user.id, gold_id).getrandbits(64)
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
        tol = get_settings(db, cid)["score_tolerance"]
        return "done", matches(t, payload, layout, st["answers"], expected, tol), rows[-1][6]
    if st["skipped"]:
        return "skipped", False, rows[-1][6]
    return "open", False, None


class TaskBackend(Backend):
    """The task family: a gold item is *done* when every question has an answer (or the item is skipped), *as
    expected* when every question its expected answers name was answered so (:func:`matches`)."""

    family = "task"
    tables = ("task_items", "task_assignments", "task_gold_items")
    answers = "task_gold_answers"
    action = "task.answer"
    stale = state.StaleAnswer
    in_order = True
    closed = N_("this campaign is closed: answers and flags can no longer be given or changed")

    def outcome(self, db, user_id, gold_id, mode, attempt):
        status, ok, _at = _status(db, user_id, gold_id, mode, attempt)
        return None if status == "open" else ok

    def real_counts(self, db, user_id, campaign_id):
        # a skipped item is passed too: counting complete items only would hold every hidden gold item back
        # behind the skipped ones, to appear after them -- which would tell it from a real item
        p = state.progress(db, user_id, campaign_id)
        return p["done"] + len(p["skipped"]), p["total"]

    def hidden_skipped(self, db, user_id, campaign_id):
        return [g for g in self.hidden_started(db, user_id, campaign_id)
                if _status(db, user_id, g, "hidden", None)[0] == "skipped"]

    def hidden_started(self, db, user_id, campaign_id):
        return [r[0] for r in db.conn.execute(
            "SELECT a.gold_id FROM task_gold_answers a JOIN task_gold_items g ON g.id = a.gold_id WHERE a.user_id = ? "
            "AND g.campaign_id = ? AND a.mode = 'hidden' AND a.question != ? GROUP BY a.gold_id ORDER BY min(a.id)",
            (user_id, campaign_id, state.FLAG))]

    def hidden_rows(self, db, user_id, campaign_id):
        out = []
        for g in self.hidden_started(db, user_id, campaign_id):
            if item_rows.gold_retired(db, TASK_FAMILY, campaign_id, g):
                continue
            status, ok, at = _status(db, user_id, g, "hidden", None)
            if status != "open":
                out.append((None if status == "skipped" else ok, at))
        return out

    def review_rows(self, db, user, campaign_id, n, gold_id, attempt):
        """One row per expected answer, in the annotator's own layout: the question, their answer, the expected
        one, whether it matches, the reason."""
        tol = get_settings(db, campaign_id)["score_tolerance"]
        t, payload, expected, _c = _kind_payload(db, gold_id)
        rows = _rows(db, user.id, gold_id, "qualification", attempt)
        layout = json.loads(rows[0][5])
        st = state.fold([r[:5] for r in rows])[gold_id]
        reason = task_gold_item(db, gold_id).reason
        out = []
        for q, want in on_screen(t, payload, layout, expected):
            mine = st["answers"].get(q.id)
            out.append({"item": n, "question": f"{q.target} · {q.criterion}",
                        "answer": q.option(mine).label if mine is not None else _("(skipped)"),
                        "expected": want.label,
                        "correct": matches(t, payload, layout, {q.id: mine} if mine is not None else {},
                                           dict([t.canonical(payload, layout, q.id, want.value)]), tol),
                        "reason": reason})
        return out


TASK = TaskBackend()
