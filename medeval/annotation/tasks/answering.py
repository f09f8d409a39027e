"""The answer flow of an annotator: the blind item view, next item, append-only answers, skips and flags."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import gold
from medeval.annotation import guidelines as gl
from medeval.annotation.screen_keys import screen_key
from medeval.annotation.tasks import state
from medeval.annotation.tasks.campaigns import campaign
from medeval.annotation.tasks.registry import get, is_task_kind
from medeval.annotation.tasks.state import (  # noqa: F401 (re-exported: the package's names)
    ANNOTATING_ROLES,
    FLAG,
    SKIP,
    ItemView,
    StaleAnswer,
)
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.limits import NAME_MAX_CHARS, check_note, check_text
from medeval.store.db import transaction

@dataclass(frozen=True)
class TaskState:
    campaign_id: int
    campaign_name: str
    task: str
    title: str
    instructions: str
    open: bool
    item: ItemView | None  # None: nothing left
    done: int  # items complete
    total: int
    skipped: int  # items skipped and not complete
    position: int  # 1-based number of the item on screen (skipped items count as passed)
    phase: str = "items"  # "qualification": the qualification round (see ``qualification``); "items" otherwise
    qualification: gold.QualificationState | None = None


def _assignment(db, user: User, item_id: int) -> tuple[dict, dict, str, str, int]:
    row = db.conn.execute(
        "SELECT ti.payload, a.layout, c.kind, c.status, c.id FROM task_assignments a JOIN task_items ti ON "
        "ti.id = a.item_id JOIN campaigns c ON c.id = a.campaign_id WHERE a.item_id = ? AND a.user_id = ?",
        (item_id, user.id)).fetchone()
    if row is None:
        raise PermissionDenied("this item is not assigned to you")
    return json.loads(row[0]), json.loads(row[1]), row[2], row[3], row[4]


def item_view(db: sqlite_utils.Database, user: User, item_id: int) -> ItemView:
    """The blind view of one assigned item: what the open parts show, and the annotator's own answers."""
    authorize(user, "task.answer")
    payload, layout, kind, _status, _cid = _assignment(db, user, item_id)
    st = state.latest(db, user.id, [item_id]).get(item_id, state.EMPTY)
    return state.view(get(kind), payload, layout, st, item_id=item_id, ref=f"i:{item_id}",
                      key=screen_key(db, user, f"i:{item_id}", "task"))


def my_task_campaigns(db: sqlite_utils.Database, user: User) -> list[dict]:
    """Task campaigns with work assigned to ``user`` (open ones first), with their own progress (their hidden
    gold items counted with the real ones, as on their screen)."""
    authorize(user, "task.answer")
    out = []
    for cid, name, kind, status in db.conn.execute(
            "SELECT c.id, c.name, c.kind, c.status FROM campaigns c WHERE EXISTS (SELECT 1 FROM task_assignments a "
            "WHERE a.campaign_id = c.id AND a.user_id = ?) ORDER BY c.status = 'closed', c.id", (user.id,)):
        if not is_task_kind(kind):
            continue
        s = state.progress(db, user.id, cid)
        g_done, g_total = gold.hidden_counts(db, user, cid, gold.TASK)
        out.append({"id": cid, "name": name, "task": get(kind).title, "kind": kind, "status": status,
                    "done": s["done"] + g_done, "total": s["total"] + g_total})
    return out


def task_state(db: sqlite_utils.Database, user: User, campaign_id: int, *, revisit_skipped: bool = False
               ) -> TaskState:
    """The item to show (the next unfinished one in the annotator's order; skipped ones at the end).

    While a required qualification is not passed the state is its round (``phase`` "qualification": its next
    gold item, or none -- not started, or failed -- with ``qualification`` saying which). Otherwise a hidden
    gold item due at this point of the queue comes instead of the next real item (never when revisiting
    skipped items); ``done``/``total`` count hidden gold items with the real ones. Refused
    (:class:`medeval.annotation.guidelines.GuidelinesPending`) while the annotator has not acknowledged the
    campaign's current guidelines.
    """
    authorize(user, "task.answer")
    c = campaign(db, campaign_id)
    gl.require_acknowledged(db, user, campaign_id)
    p = state.progress(db, user.id, campaign_id)
    if p["total"] == 0:
        raise PermissionDenied("no items of this campaign are assigned to you")
    t = get(c["kind"])
    is_open = c["status"] == "open"
    head = (campaign_id, c["name"], c["kind"], t.title, t.instructions, is_open)
    q = gold.qualification_state(db, user, campaign_id, gold.TASK)
    if not q.cleared:
        view = (gold.gold_view(db, user, campaign_id, q.next_gold, "qualification", q.attempt)
                if q.next_gold is not None and is_open else None)
        return TaskState(*head, view, q.answered, q.items, 0, min(q.answered + 1, q.items), "qualification", q)
    due, g_done, g_total = gold.hidden_now(db, user, campaign_id, gold.TASK, real_counts=(p["done"], p["total"]))
    if not is_open or revisit_skipped:
        due = None
    if due is not None:
        view = gold.gold_view(db, user, campaign_id, due, "hidden", None)
    else:
        queue = p["todo"] or (p["skipped"] if revisit_skipped else [])
        view = item_view(db, user, queue[0]) if queue else None
    done, total = p["done"] + g_done, p["total"] + g_total
    return TaskState(*head, view, done, total, len(p["skipped"]), min(done + len(p["skipped"]) + 1, total),
                     "items", q)


def _already_saved(db, user: User, client_token: str, status: str) -> int | None:
    """The row a resubmission with this token saved before (so it is harmless), or None; refuses a closed campaign."""
    if not client_token:
        raise MedevalError("a client token is required (it makes a resubmission harmless)")
    check_text(client_token, what="the client token", max_chars=NAME_MAX_CHARS, allow_newlines=False)
    dup = db.conn.execute("SELECT id FROM task_answers WHERE user_id = ? AND client_token = ?",
                          (user.id, client_token)).fetchone()
    if dup:
        return dup[0]
    if status != "open":
        raise MedevalError("this campaign is closed: answers and flags can no longer be given or changed")
    return None


def submit_answer(db: sqlite_utils.Database, user: User, item_id: int, question: str, value: str | None, *,
                  client_token: str, skipped: bool = False, revision: int | None = None,
                  guideline_version: int | None = None) -> int:
    """Record one answer (or an item-level skip: ``skipped=True``, question ``""``); idempotent per token.

    A question of a later part is refused while an earlier part has unanswered questions; a change of an
    answer adds a row that supersedes the previous one (both are kept, the change is audited). With
    ``revision`` (the :attr:`ItemView.revision` the screen was drawn from), an answer given on a screen
    that another answer has changed since is refused with :class:`StaleAnswer`: a key press that arrives
    after the screen moved on must not land on the question that was there before. ``guideline_version``:
    the version of the campaign's guidelines on screen (recorded; must exist). Refused while the annotator
    has not acknowledged the current guidelines (:class:`medeval.annotation.guidelines.GuidelinesPending`).
    """
    authorize(user, "task.answer")
    with transaction(db):
        payload, layout, kind, status, cid = _assignment(db, user, item_id)
        guideline_version = gl.check_version(db, cid, guideline_version)
        if (dup := _already_saved(db, user, client_token, status)) is not None:
            return dup
        gl.require_acknowledged(db, user, cid)
        gold.require_qualified(db, user, cid, gold.TASK)
        t = get(kind)
        st = state.latest(db, user.id, [item_id]).get(item_id, state.EMPTY)
        if revision is not None and revision != st["rows"]:
            raise StaleAnswer("the screen changed before this answer arrived: nothing was saved from it")
        prev = None
        if skipped:
            question, value = SKIP, None
        else:
            qs = {q.id: q for q in t.questions(payload, layout)}
            if question not in qs:
                raise MedevalError(f"no question {question!r} in this item")
            q = qs[question]
            value = q.option(str(value)).value
            open_part, _ = state.open_part(list(qs.values()), st["answers"])
            if q.part > open_part:
                raise MedevalError(f"part {q.part} opens once every question of part {open_part} has an answer")
            prev = st["ids"].get(question)
            if prev is not None and st["answers"][question] == value:
                return prev  # the same answer again: nothing to record
        cur = db.conn.execute(
            "INSERT INTO task_answers (item_id, user_id, question, value, skipped, client_token, supersedes, "
            "created_at, guideline_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (item_id, user.id, question, value, int(skipped), client_token, prev, time.time(), guideline_version))
        if prev is not None:
            audit(db, user.username, "annotation.change", f"task_item:{item_id}",
                  {"question": question, "from": st["answers"][question], "to": value})
        return cur.lastrowid


def flag_item(db: sqlite_utils.Database, user: User, item_id: int, note: str, *, client_token: str) -> int:
    """Flag an assigned item with a note (a wrong reference, an unreadable answer...); idempotent per token.

    A flag does not answer anything and does not move the annotator on; researchers read the notes with
    :func:`flags`. The note is untrusted text like everything else the annotator writes.
    """
    authorize(user, "task.answer")
    note = check_note(note, what="the flag note").strip()
    if not note:
        raise MedevalError("write a short note saying what is wrong with this item")
    with transaction(db):
        _payload, _layout, _kind, status, cid = _assignment(db, user, item_id)
        if (dup := _already_saved(db, user, client_token, status)) is not None:
            return dup
        gl.require_acknowledged(db, user, cid)
        return db.conn.execute(
            "INSERT INTO task_answers (item_id, user_id, question, value, skipped, client_token, created_at) "
            "VALUES (?, ?, ?, ?, 0, ?, ?)", (item_id, user.id, FLAG, note, client_token, time.time())).lastrowid


def answer(db: sqlite_utils.Database, user: User, campaign_id: int, ref: str, question: str | None,
           value: str | None, *, client_token: str, skipped: bool = False, revision: int | None = None,
           guideline_version: int | None = None) -> tuple[int, str | None]:
    """Answer whatever :func:`task_state` put on screen, by its ``ref``; returns (row id, feedback or None).

    A real item's answer is :func:`submit_answer`; a gold item's goes to ``task_gold_answers``
    (:func:`medeval.annotation.tasks.gold.submit_gold_answer`), never to the real answers. ``feedback``: the
    expected answers and their reason once a hidden gold item is done, when the campaign enables it.
    """
    mode, ident, attempt = gold.parse_ref(ref)
    if mode == "real":
        if _assignment(db, user, ident)[4] != campaign_id:
            raise PermissionDenied("this item is not part of this campaign")
        return submit_answer(db, user, ident, question or "", value, client_token=client_token, skipped=skipped,
                             revision=revision, guideline_version=guideline_version), None
    return gold.submit_gold_answer(db, user, campaign_id, ident, mode, attempt=attempt, question=question or "",
                                    value=value, client_token=client_token, skipped=skipped, revision=revision,
                                    guideline_version=guideline_version)


def flag(db: sqlite_utils.Database, user: User, campaign_id: int, ref: str, note: str, *, client_token: str) -> int:
    """Flag whatever :func:`task_state` put on screen, by its ``ref`` (see :func:`flag_item`)."""
    mode, ident, attempt = gold.parse_ref(ref)
    if mode == "real":
        if _assignment(db, user, ident)[4] != campaign_id:
            raise PermissionDenied("this item is not part of this campaign")
        return flag_item(db, user, ident, note, client_token=client_token)
    return gold.submit_gold_answer(db, user, campaign_id, ident, mode, attempt=attempt, question="", value=None,
                                    client_token=client_token, note=note)[0]
