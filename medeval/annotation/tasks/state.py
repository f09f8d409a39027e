"""What the task flow shares below the answer functions: the item view, an annotator's latest answers, parts,
progress. Real items (:mod:`medeval.annotation.tasks.answering`) and gold items
(:mod:`medeval.annotation.tasks.gold`) are both drawn and counted with these."""

from __future__ import annotations

import json
from dataclasses import dataclass

from medeval.annotation.answer_input import StaleAnswer  # noqa: F401 (one stale error for every family)
from medeval.annotation.tasks.registry import Block, Question, TaskType, get
from medeval.core import i18n
from medeval.core.errors import MedevalError

ANNOTATING_ROLES = ("annotator", "researcher", "admin")
SKIP = ""  # the question id of an item-level skip
FLAG = "#flag"  # the question id of a flag; its value is the annotator's note


@dataclass(frozen=True)
class ItemView:
    """What the annotator sees of one item: blocks of the open parts, questions with their answers so far."""

    item_id: int  # the id the screen's widgets carry (a gold item's: an id that gives nothing away)
    blocks: tuple[Block, ...]
    questions: tuple[Question, ...]  # of the open parts
    answers: dict  # question id -> value (the annotator's latest)
    open_part: int  # the highest open part
    parts: int  # the number of parts of this item
    pending: Question | None  # the next question without an answer (None: item complete)
    revisiting: bool  # the item was skipped before
    revision: int  # how many answers (and skips) the annotator has recorded on it: part of a client token
    flagged: bool = False  # the annotator has flagged it
    ref: str = ""  # opaque reference for ``tasks.answer``/``tasks.flag`` (a real or a gold item): never shown
    changeable: bool = True  # answers may be changed (not in a qualification round)
    key: str = ""  # what the screen's widgets carry (medeval.annotation.gold.screen_key): opaque, per annotator


def fold(rows) -> dict[int, dict]:
    """Rows of (item, row id, question, value, skipped), oldest first -> {item: {"answers": {question: value},
    "ids": {question: row id}, "skipped", "rows", "flagged"}} (an answer after a skip ends the skip)."""
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


EMPTY = {"answers": {}, "skipped": False, "ids": {}, "rows": 0, "flagged": False}


def latest(db, user_id: int, item_ids: list[int] | None = None, campaign_id: int | None = None) -> dict:
    """:func:`fold` of the annotator's answers to real items (some items, or a whole campaign)."""
    if campaign_id is not None:
        rows = db.conn.execute(
            "SELECT t.item_id, t.id, t.question, t.value, t.skipped FROM task_answers t JOIN task_assignments a ON "
            "a.item_id = t.item_id AND a.user_id = t.user_id WHERE a.campaign_id = ? AND t.user_id = ? ORDER BY t.id",
            (campaign_id, user_id)).fetchall()
    else:
        marks = ",".join("?" * len(item_ids))
        rows = db.conn.execute(f"SELECT item_id, id, question, value, skipped FROM task_answers WHERE user_id = ? "
                               f"AND item_id IN ({marks}) ORDER BY id", (user_id, *item_ids)).fetchall()
    return fold(rows)


def open_part(questions: list[Question], answers: dict) -> tuple[int, int]:
    """(the highest open part, the number of parts): a part opens once the earlier ones are answered."""
    parts = sorted({q.part for q in questions}) or [1]
    part = parts[0]
    for p in parts:
        part = p
        if any(q.id not in answers for q in questions if q.part == p):
            break
    return part, len(parts)


def view(t: TaskType, payload: dict, layout: dict, st: dict, *, item_id: int, ref: str,
         changeable: bool = True, key: str = "") -> ItemView:
    """The view of an item from its payload, the annotator's layout and :func:`fold`'s state of it."""
    qs = t.questions(payload, layout)
    part, parts = open_part(qs, st["answers"])
    visible_q = tuple(q for q in qs if q.part <= part)
    pending = next((q for q in visible_q if q.id not in st["answers"]), None)
    blocks = tuple(b for b in t.blocks(payload, layout) if b.part <= part)
    return ItemView(item_id, blocks, visible_q, {q.id: st["answers"][q.id] for q in visible_q if q.id in st["answers"]},
                    part, parts, pending, st["skipped"], st["rows"], st["flagged"], ref, changeable, key)


def complete(t: TaskType, payload: dict, layout: dict, answers: dict) -> bool:
    # only the questions' ids count here: their texts are left untranslated (the progress of a whole campaign runs
    # this for every item on every rerun, and looking up each text in the reader's language is most of its cost)
    with i18n.language(i18n.SOURCE):
        return all(q.id in answers for q in t.questions(payload, layout))


def progress(db, user_id: int, campaign_id: int) -> dict:
    """The annotator's real items: ``{"done", "total", "todo" (ids, in their order), "skipped" (ids)}``."""
    kind = db.conn.execute("SELECT kind FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()[0]
    t = get(kind)
    rows = db.conn.execute("SELECT a.item_id, ti.payload, a.layout, a.position FROM task_assignments a JOIN "
                           "task_items ti ON ti.id = a.item_id WHERE a.campaign_id = ? AND a.user_id = ? "
                           "ORDER BY a.position", (campaign_id, user_id)).fetchall()
    states = latest(db, user_id, campaign_id=campaign_id)
    done, todo, skipped = 0, [], []
    for iid, payload, layout, _pos in rows:
        st = states.get(iid, EMPTY)
        if complete(t, json.loads(payload), json.loads(layout), st["answers"]):
            done += 1
        elif st["skipped"]:
            skipped.append(iid)
        else:
            todo.append(iid)
    return {"done": done, "total": len(rows), "todo": todo, "skipped": skipped}
