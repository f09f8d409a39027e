"""What researchers read of a task campaign: latest answers, flags, progress and the type's results."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation.tasks.state import FLAG
from medeval.annotation.tasks.state import complete as _complete
from medeval.annotation.tasks.state import latest as _latest
from medeval.annotation.tasks.campaigns import campaign
from medeval.annotation.tasks.registry import AnswerRow, get
from medeval.core import csvsafe
from medeval.core.i18n import _


def answers(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None = None) -> list[AnswerRow]:
    """The latest answer of every (item, annotator, question) of a campaign, in the order given (researcher data)."""
    authorize(actor, "campaign.read", db=db)
    rows = db.conn.execute(
        "SELECT t.item_id, u.username, t.question, t.value, t.created_at, t.guideline_version FROM task_answers t "
        "JOIN task_items ti "
        "ON ti.id = t.item_id JOIN users u ON u.id = t.user_id WHERE ti.campaign_id = ? AND t.skipped = 0 AND "
        "t.question != ? AND t.id = (SELECT max(id) FROM task_answers t2 WHERE t2.item_id = t.item_id AND "
        "t2.user_id = t.user_id AND t2.question = t.question) ORDER BY t.created_at, t.id",
        (campaign_id, FLAG)).fetchall()
    return [AnswerRow(*r) for r in rows]


ANSWERS_CSV_COLUMNS = ["item", "annotator", "question", "value", "at", "guideline_version"]


def iso_time(v) -> str:
    """A stored time (epoch seconds) as ISO 8601 with its time zone, ``2026-11-25T14:03:11+00:00``; text as it is."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return datetime.fromtimestamp(v, timezone.utc).isoformat(timespec="seconds")
    return "" if v is None else str(v)


def answers_csv(rows: list[AnswerRow]) -> str:
    """:func:`answers` as CSV text, times in ISO 8601 with time zone (cells a spreadsheet could run are neutralised)."""
    return csvsafe.csv_text([(a.item_id, a.annotator, a.question, a.value, iso_time(a.at), a.guideline_version)
                             for a in rows], header=ANSWERS_CSV_COLUMNS)


def flags(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> list[dict]:
    """Every flag of a campaign with its item's source and the note (researcher data), oldest first."""
    authorize(actor, "campaign.read", db=db)
    return [{"item": r[0], "source": r[1], "annotator": r[2], "note": r[3], "at": r[4]} for r in db.conn.execute(
        "SELECT t.item_id, ti.source, u.username, t.value, t.created_at FROM task_answers t JOIN task_items ti ON "
        "ti.id = t.item_id JOIN users u ON u.id = t.user_id WHERE ti.campaign_id = ? AND t.question = ? "
        "ORDER BY t.id", (campaign_id, FLAG))]


def _shown_counts(db, ids: list[int]) -> tuple[int, int]:
    """(given without the whole text on screen, not measured) among the answers ``ids`` (``answers.fully_shown``)."""
    partial = unmeasured = 0
    for n in range(0, len(ids), 500):  # (SQLite's limit on a statement's parameters)
        chunk = ids[n:n + 500]
        a, b = db.conn.execute(
            f"SELECT coalesce(sum(fully_shown = 0), 0), coalesce(sum(fully_shown IS NULL), 0) FROM answers WHERE "
            f"id IN ({','.join('?' * len(chunk))})", chunk).fetchone()
        partial, unmeasured = partial + a, unmeasured + b
    return partial, unmeasured


def campaign_progress(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> dict:
    """Per annotator: items assigned, complete, skipped; items complete by all k annotators. Each annotator's current
    answers are also counted by what their screen showed (``answers.fully_shown``): ``not_fully_shown`` -- given while
    a text the question rests on was not whole on screen nor read to its end -- and ``not_measured`` (NULL: a change
    made from the list below an item, the command line, an answer from before the measure existed); the campaign's
    totals under the same names."""
    authorize(actor, "campaign.read", db=db)
    c = campaign(db, campaign_id)
    t = get(c["kind"])
    rows = db.conn.execute(
        "SELECT a.item_id, a.user_id, u.username, ti.payload, a.layout FROM task_assignments a JOIN users u ON "
        "u.id = a.user_id JOIN task_items ti ON ti.id = a.item_id WHERE a.campaign_id = ?", (campaign_id,)).fetchall()
    per_user: dict[str, dict] = {}
    complete_by: dict[int, int] = {}
    latest_cache: dict[int, dict] = {}
    for iid, uid, name, payload, layout in rows:
        if uid not in latest_cache:
            latest_cache[uid] = _latest(db, uid, campaign_id=campaign_id)
        st = latest_cache[uid].get(iid, {"answers": {}, "skipped": False})
        u = per_user.setdefault(name, {"annotator": name, "assigned": 0, "done": 0, "skipped": 0, "flagged": 0,
                                       "answers": 0, "ids": []})
        u["assigned"] += 1
        u["answers"] += len(st["answers"])
        u["ids"] += [i for q, i in st.get("ids", {}).items() if q in st["answers"]]
        u["flagged"] += int(st.get("flagged", False))
        if _complete(t, json.loads(payload), json.loads(layout), st["answers"]):
            u["done"] += 1
            complete_by[iid] = complete_by.get(iid, 0) + 1
        elif st["skipped"]:
            u["skipped"] += 1
    for u in per_user.values():
        u["not_fully_shown"], u["not_measured"] = _shown_counts(db, u.pop("ids"))
    n_items = db.conn.execute("SELECT count(*) FROM task_items WHERE campaign_id = ?", (campaign_id,)).fetchone()[0]
    return {"campaign": campaign_id, "task": c["kind"], "k": c["config"]["k"], "items": n_items,
            "items_complete": sum(1 for n in complete_by.values() if n >= c["config"]["k"]),
            "not_fully_shown": sum(u["not_fully_shown"] for u in per_user.values()),
            "not_measured": sum(u["not_measured"] for u in per_user.values()),
            "annotators": sorted(per_user.values(), key=lambda r: r["annotator"])}


def results(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> dict:
    """The task type's results for a campaign (researcher data): progress and its sections."""
    authorize(actor, "campaign.read", db=db)
    c = campaign(db, campaign_id)
    t = get(c["kind"])
    items = {iid: json.loads(p) for iid, p in db.conn.execute(
        "SELECT id, payload FROM task_items WHERE campaign_id = ?", (campaign_id,))}
    layouts = {(iid, name): json.loads(lay) for iid, name, lay in db.conn.execute(
        "SELECT a.item_id, u.username, a.layout FROM task_assignments a JOIN users u ON u.id = a.user_id "
        "WHERE a.campaign_id = ?", (campaign_id,))}
    sections = t.results(c, items, layouts, answers(db, campaign_id))
    return {"campaign": {k: c[k] for k in ("id", "name", "kind", "status")}, "task": _(t.title),
            "config": c["config"], "progress": campaign_progress(db, campaign_id, actor=None),
            "sections": [s.to_dict() for s in sections], "flags": flags(db, campaign_id, actor=None)}
