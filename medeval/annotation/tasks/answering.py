"""The answer flow of an annotator: the blind item view, next item, append-only answers, skips and flags."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit, require_role
from medeval.annotation import guidelines as gl
from medeval.annotation.tasks.campaigns import campaign
from medeval.annotation.tasks.registry import Block, Question, TaskType, get, is_task_kind
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.limits import NAME_MAX_CHARS, check_note, check_text
from medeval.store.db import transaction

ANNOTATING_ROLES = ("annotator", "researcher", "admin")
SKIP = ""  # the question id of an item-level skip
FLAG = "#flag"  # the question id of a flag; its value is the annotator's note


@dataclass(frozen=True)
class ItemView:
    """What the annotator sees of one item: blocks of the open parts, questions with their answers so far."""

    item_id: int
    blocks: tuple[Block, ...]
    questions: tuple[Question, ...]  # of the open parts
    answers: dict  # question id -> value (the annotator's latest)
    open_part: int  # the highest open part
    parts: int  # the number of parts of this item
    pending: Question | None  # the next question without an answer (None: item complete)
    revisiting: bool  # the item was skipped before
    revision: int  # how many answers (and skips) the annotator has recorded on it: part of a client token
    flagged: bool = False  # the annotator has flagged it


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


def _assignment(db, user: User, item_id: int) -> tuple[dict, dict, str, str, int]:
    row = db.conn.execute(
        "SELECT ti.payload, a.layout, c.kind, c.status, c.id FROM task_assignments a JOIN task_items ti ON "
        "ti.id = a.item_id JOIN campaigns c ON c.id = a.campaign_id WHERE a.item_id = ? AND a.user_id = ?",
        (item_id, user.id)).fetchone()
    if row is None:
        raise PermissionDenied("this item is not assigned to you")
    return json.loads(row[0]), json.loads(row[1]), row[2], row[3], row[4]


def _latest(db, user_id: int, item_ids: list[int] | None = None, campaign_id: int | None = None) -> dict:
    """{item_id: {"answers": {question: value}, "skip_after": bool}} from the annotator's rows."""
    if campaign_id is not None:
        rows = db.conn.execute(
            "SELECT t.item_id, t.id, t.question, t.value, t.skipped FROM task_answers t JOIN task_assignments a ON "
            "a.item_id = t.item_id AND a.user_id = t.user_id WHERE a.campaign_id = ? AND t.user_id = ? ORDER BY t.id",
            (campaign_id, user_id)).fetchall()
    else:
        marks = ",".join("?" * len(item_ids))
        rows = db.conn.execute(f"SELECT item_id, id, question, value, skipped FROM task_answers WHERE user_id = ? "
                               f"AND item_id IN ({marks}) ORDER BY id", (user_id, *item_ids)).fetchall()
    out: dict[int, dict] = {}
    for iid, _id, q, value, skipped in rows:
        st = out.setdefault(iid, {"answers": {}, "skipped": False, "ids": {}, "rows": 0, "flagged": False})
        st["rows"] += 1
        if q == FLAG:
            st["flagged"] = True
        elif skipped:
            st["skipped"] = True
        else:
            st["answers"][q] = value
            st["ids"][q] = _id
            st["skipped"] = False  # an answer after a skip: back in the normal flow
    return out


def _open_part(questions: list[Question], answers: dict) -> tuple[int, int]:
    parts = sorted({q.part for q in questions}) or [1]
    open_part = parts[0]
    for p in parts:
        open_part = p
        if any(q.id not in answers for q in questions if q.part == p):
            break
    return open_part, len(parts)


def item_view(db: sqlite_utils.Database, user: User, item_id: int) -> ItemView:
    """The blind view of one assigned item: what the open parts show, and the annotator's own answers."""
    require_role(user, *ANNOTATING_ROLES)
    payload, layout, kind, _status, _cid = _assignment(db, user, item_id)
    t = get(kind)
    st = _latest(db, user.id, [item_id]).get(item_id, {"answers": {}, "skipped": False, "rows": 0, "flagged": False})
    qs = t.questions(payload, layout)
    open_part, parts = _open_part(qs, st["answers"])
    visible_q = tuple(q for q in qs if q.part <= open_part)
    pending = next((q for q in visible_q if q.id not in st["answers"]), None)
    blocks = tuple(b for b in t.blocks(payload, layout) if b.part <= open_part)
    return ItemView(item_id, blocks, visible_q, {q.id: st["answers"][q.id] for q in visible_q
                                                 if q.id in st["answers"]},
                    open_part, parts, pending, st["skipped"], st["rows"], st["flagged"])


def _complete(t: TaskType, payload: dict, layout: dict, answers: dict) -> bool:
    return all(q.id in answers for q in t.questions(payload, layout))


def my_task_campaigns(db: sqlite_utils.Database, user: User) -> list[dict]:
    """Task campaigns with work assigned to ``user`` (open ones first), with their own progress."""
    require_role(user, *ANNOTATING_ROLES)
    out = []
    for cid, name, kind, status in db.conn.execute(
            "SELECT c.id, c.name, c.kind, c.status FROM campaigns c WHERE EXISTS (SELECT 1 FROM task_assignments a "
            "WHERE a.campaign_id = c.id AND a.user_id = ?) ORDER BY c.status = 'closed', c.id", (user.id,)):
        if not is_task_kind(kind):
            continue
        s = _progress(db, user, cid)
        out.append({"id": cid, "name": name, "task": get(kind).title, "kind": kind, "status": status,
                    "done": s["done"], "total": s["total"]})
    return out


def _progress(db, user: User, campaign_id: int) -> dict:
    kind = db.conn.execute("SELECT kind FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()[0]
    t = get(kind)
    rows = db.conn.execute("SELECT a.item_id, ti.payload, a.layout, a.position FROM task_assignments a JOIN "
                           "task_items ti ON ti.id = a.item_id WHERE a.campaign_id = ? AND a.user_id = ? "
                           "ORDER BY a.position", (campaign_id, user.id)).fetchall()
    latest = _latest(db, user.id, campaign_id=campaign_id)
    done, todo, skipped = 0, [], []
    for iid, payload, layout, _pos in rows:
        st = latest.get(iid, {"answers": {}, "skipped": False})
        if _complete(t, json.loads(payload), json.loads(layout), st["answers"]):
            done += 1
        elif st["skipped"]:
            skipped.append(iid)
        else:
            todo.append(iid)
    return {"done": done, "total": len(rows), "todo": todo, "skipped": skipped}


def task_state(db: sqlite_utils.Database, user: User, campaign_id: int, *, revisit_skipped: bool = False
               ) -> TaskState:
    """The item to show (the next unfinished one in the annotator's order; skipped ones at the end).

    Refused (:class:`medeval.annotation.guidelines.GuidelinesPending`) while the annotator has not
    acknowledged the campaign's current guidelines.
    """
    require_role(user, *ANNOTATING_ROLES)
    c = campaign(db, campaign_id)
    gl.require_acknowledged(db, user, campaign_id)
    p = _progress(db, user, campaign_id)
    if p["total"] == 0:
        raise PermissionDenied("no items of this campaign are assigned to you")
    queue = p["todo"] or (p["skipped"] if revisit_skipped else [])
    view = item_view(db, user, queue[0]) if queue else None
    t = get(c["kind"])
    return TaskState(campaign_id, c["name"], c["kind"], t.title, t.instructions, c["status"] == "open", view,
                     p["done"], p["total"], len(p["skipped"]),
                     min(p["done"] + len(p["skipped"]) + 1, p["total"]))


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


class StaleAnswer(MedevalError):
    """The answer was given on a screen that has changed since (another answer landed first): not saved."""


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
    require_role(user, *ANNOTATING_ROLES)
    with transaction(db):
        payload, layout, kind, status, cid = _assignment(db, user, item_id)
        guideline_version = gl.check_version(db, cid, guideline_version)
        if (dup := _already_saved(db, user, client_token, status)) is not None:
            return dup
        gl.require_acknowledged(db, user, cid)
        t = get(kind)
        st = _latest(db, user.id, [item_id]).get(item_id, {"answers": {}, "ids": {}, "rows": 0})
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
            open_part, _ = _open_part(list(qs.values()), st["answers"])
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
    require_role(user, *ANNOTATING_ROLES)
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
