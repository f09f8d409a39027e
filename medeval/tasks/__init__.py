"""Annotation task types beyond tier grading: a registry, and the storage and flow they share.

A task type is one module in this package (``rubric``, ``pairwise``, ``accr``) that subclasses
:class:`TaskType` and registers itself. It declares

* its **settings** (what a researcher chooses when creating a campaign),
* how to **build items** from imported data (each item a JSON payload stored with the campaign,
  so later imports never change what was annotated),
* a per-annotator **layout** drawn from the campaign's stored seed (response order, left/right),
* the **screen**: the blocks of text an annotator sees and the questions they answer, each
  with its options and the key that gives each option; questions come in numbered **parts**,
  and a part is shown and accepted only once every question of the earlier parts has an
  answer (the two-part protocol of AutoMedEval: responses first, then the judge),
* its **results**: sections of tables and numbers, including the agreement statistics that fit
  its scale.

Everything else lives here, once for every type: campaigns with exactly ``k`` annotators per
item (balanced, seeded, stored up front), the blind view (sources and models never leave the
library for an annotator), append-only answers with history (a change supersedes, a
resubmission with the same client token is ignored), skipping, progress and results.
The one annotation page (``app_pages/annotate.py``) and the results page draw any registered
type from these declarations, so a new type touches no page.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import sqlite_utils

from ..auth import User, audit, require_role
from ..campaigns import _active_users, balanced_plan
from ..db import _run_script, migration, transaction
from ..errors import MedevalError, PermissionDenied

ANNOTATING_ROLES = ("annotator", "researcher", "admin")
SKIP = ""  # the question id of an item-level skip
FLAG = "#flag"  # the question id of a flag; its value is the annotator's note


@migration
def m008_tasks(db: sqlite_utils.Database) -> None:
    _run_script(db, """
    CREATE TABLE task_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        source TEXT NOT NULL,
        payload TEXT NOT NULL,
        UNIQUE (campaign_id, source)
    );
    CREATE TABLE task_assignments (
        item_id INTEGER NOT NULL REFERENCES task_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        position INTEGER NOT NULL,
        layout TEXT NOT NULL,
        PRIMARY KEY (item_id, user_id),
        UNIQUE (campaign_id, user_id, position)
    );
    CREATE TABLE task_answers (
        id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        question TEXT NOT NULL,
        value TEXT,
        skipped INTEGER NOT NULL DEFAULT 0,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES task_answers(id),
        created_at REAL NOT NULL,
        FOREIGN KEY (item_id, user_id) REFERENCES task_assignments(item_id, user_id),
        UNIQUE (user_id, client_token)
    );
    CREATE INDEX task_answers_item ON task_answers(item_id, user_id, id);
    CREATE TRIGGER task_answers_no_update BEFORE UPDATE ON task_answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
    CREATE TRIGGER task_answers_no_delete BEFORE DELETE ON task_answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END
    """)


# ------------------------------------------------------------------ declarations


@dataclass(frozen=True)
class Option:
    """One answer to a question: the stored value, its label, the key that gives it, what it means."""

    value: str
    label: str
    key: str
    meaning: str = ""


@dataclass(frozen=True)
class Question:
    id: str  # unique within the item, e.g. "r2:fluency"
    part: int  # 1, 2, ...: a part opens once every question of the earlier parts has an answer
    target: str  # what is being rated, as the annotator sees it ("Response 2", "The judge's assessment")
    criterion: str  # "Fluency"
    prompt: str  # the question in full
    options: tuple[Option, ...]

    def option(self, value: str) -> Option:
        for o in self.options:
            if o.value == value:
                return o
        raise MedevalError(f"{value!r} is not an answer to {self.criterion!r}; "
                           f"use one of {', '.join(o.value for o in self.options)}")


@dataclass(frozen=True)
class Block:
    """A block of the screen. ``text`` is untrusted (model output, references): shown as plain text only."""

    label: str
    text: str
    part: int = 1  # shown once this part is open
    target: str = ""  # the question target it belongs to ("Response 2", "A"), if any
    fold: bool = False  # context the annotator may open when needed (earlier questions of a case)


@dataclass(frozen=True)
class Setting:
    """A campaign setting a researcher chooses (the pages and the CLI build their inputs from these)."""

    name: str
    label: str
    kind: str  # "choice" | "multichoice" | "int" | "text" | "json" (free text the type parses)
    default: Any = None
    choices: tuple = ()
    help: str = ""


@dataclass(frozen=True)
class ItemSpec:
    source: str  # unique within the campaign: where the item comes from (dataset, case, question, ...)
    payload: dict


@dataclass
class Section:
    """A part of a campaign's results: a heading, an explanation, tables (lists of rows) and figures."""

    title: str
    text: str = ""
    tables: dict[str, list[dict]] = field(default_factory=dict)
    numbers: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AnswerRow:
    """The latest answer of one annotator to one question of one item (researcher data)."""

    item_id: int
    annotator: str
    question: str
    value: str
    at: float


class TaskType:
    """Base class of a task type; subclasses set the class attributes and override the methods."""

    name: str = ""
    title: str = ""
    description: str = ""  # for researchers: what the task measures
    instructions: str = ""  # for annotators: shown above every item

    def settings(self, db: sqlite_utils.Database) -> list[Setting]:
        return []

    def check_config(self, db: sqlite_utils.Database, config: dict) -> dict:
        """The settings filled in with defaults and validated; MedevalError says what to change."""
        out = {}
        for s in self.settings(db):
            v = config.get(s.name, s.default)
            if s.kind == "choice" and s.choices and v not in s.choices:
                raise MedevalError(f"{s.label}: {v!r} is not one of {', '.join(map(str, s.choices))}")
            if s.kind == "multichoice":
                v = list(v or [])
                bad = [x for x in v if s.choices and x not in s.choices]
                if bad:
                    raise MedevalError(f"{s.label}: {', '.join(map(str, bad))} not among "
                                       f"{', '.join(map(str, s.choices))}")
            if s.kind == "int":
                try:
                    v = int(v)
                except (TypeError, ValueError):
                    raise MedevalError(f"{s.label}: {v!r} is not a whole number") from None
            out[s.name] = v
        unknown = set(config) - {s.name for s in self.settings(db)}
        if unknown:
            raise MedevalError(f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(sorted(unknown))} for "
                               f"task type {self.name}; settings: {', '.join(s.name for s in self.settings(db))}")
        return out

    def build_items(self, db: sqlite_utils.Database, config: dict, rng: np.random.Generator) -> list[ItemSpec]:
        raise NotImplementedError

    def layout(self, payload: dict, rng: np.random.Generator) -> dict:
        """What differs per annotator (order of responses, left/right), drawn from the stored seed."""
        return {}

    def blocks(self, payload: dict, layout: dict) -> list[Block]:
        raise NotImplementedError

    def questions(self, payload: dict, layout: dict) -> list[Question]:
        raise NotImplementedError

    def results(self, campaign: dict, items: dict[int, dict], layouts: dict[tuple[int, str], dict],
                answers: list[AnswerRow]) -> list[Section]:
        raise NotImplementedError


REGISTRY: dict[str, TaskType] = {}


def register(cls: type[TaskType]) -> type[TaskType]:
    """Class decorator: make a task type available to campaigns, the pages and the CLI."""
    inst = cls()
    if not inst.name or inst.name in REGISTRY:
        raise MedevalError(f"task type name {inst.name!r} is empty or taken")
    REGISTRY[inst.name] = inst
    return cls


def get(name: str) -> TaskType:
    if name not in REGISTRY:
        raise MedevalError(f"unknown task type {name!r}; task types: {', '.join(REGISTRY)}")
    return REGISTRY[name]


def is_task_kind(kind: str) -> bool:
    return kind in REGISTRY


# ------------------------------------------------------------------ campaigns


def _users(db, annotators: list[str], k: int) -> list[tuple[int, str]]:
    """(id, username) of the chosen active annotators (the same checks as tier-grading campaigns)."""
    return [(u[0], u[1]) for u in _active_users(db, [a.strip() for a in annotators if a.strip()], k)]


def preview(db: sqlite_utils.Database, task: str, config: dict, *, seed: int = 0, actor: User | None) -> dict:
    """What a campaign would hold, without storing anything: item count and the first items' sources."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    t = get(task)
    cfg = t.check_config(db, config)
    items = t.build_items(db, cfg, np.random.default_rng([seed, 0]))
    return {"task": task, "items": len(items), "sources": [i.source for i in items[:20]], "config": cfg}


def create_campaign(db: sqlite_utils.Database, task: str, name: str, annotators: list[str], *, k: int,
                    seed: int = 0, config: dict | None = None, actor: User | None) -> int:
    """Build the items of a task campaign, assign each to exactly ``k`` annotators and store it all at once."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    t = get(task)
    if not name.strip():
        raise MedevalError("give the campaign a name")
    cfg = t.check_config(db, config or {})
    users = _users(db, annotators, k)
    items = t.build_items(db, cfg, np.random.default_rng([seed, 0]))
    if not items:
        raise MedevalError("no items: the chosen data has nothing this task can use (import data first)")
    if len({i.source for i in items}) != len(items):
        raise MedevalError("internal error: two items with the same source")
    rng = np.random.default_rng([seed, 1])
    plan = balanced_plan(len(items), [u[0] for u in users], k, rng)
    full = {"task": task, **cfg, "k": k, "seed": seed, "annotators": [u[1] for u in users]}
    with transaction(db):
        cid = db.conn.execute(
            "INSERT INTO campaigns (name, kind, config, report, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (name.strip(), task, json.dumps(full, ensure_ascii=False), json.dumps([]),
             actor.username if actor else "cli", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))).lastrowid
        per_user: dict[int, list[tuple[int, dict]]] = {u[0]: [] for u in users}
        for spec, uids in zip(items, plan):
            iid = db.conn.execute("INSERT INTO task_items (campaign_id, source, payload) VALUES (?, ?, ?)",
                                  (cid, spec.source, json.dumps(spec.payload, ensure_ascii=False))).lastrowid
            for uid in uids:
                per_user[uid].append((iid, spec.payload))
        for uid, got in per_user.items():
            order = rng.permutation(len(got)).tolist()  # each annotator in an order of their own
            rows = []
            for pos, j in enumerate(order):
                iid, payload = got[j]
                rows.append((iid, uid, cid, pos, json.dumps(t.layout(payload, rng))))
            db.conn.executemany("INSERT INTO task_assignments (item_id, user_id, campaign_id, position, layout) "
                                "VALUES (?, ?, ?, ?, ?)", rows)
        audit(db, actor.username if actor else "cli", "campaign.create", str(cid),
              {"name": name.strip(), "kind": task, "items": len(items), "k": k, "seed": seed})
    return cid


def campaign(db: sqlite_utils.Database, campaign_id: int) -> dict:
    row = db.conn.execute("SELECT id, name, kind, config, status, created_by, created_at FROM campaigns WHERE id = ?",
                          (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(f"no campaign {campaign_id}")
    if not is_task_kind(row[2]):
        raise MedevalError(f"campaign {campaign_id} is a {row[2]} campaign, not an annotation task")
    return {"id": row[0], "name": row[1], "kind": row[2], "config": json.loads(row[3]), "status": row[4],
            "created_by": row[5], "created_at": row[6]}


def task_campaigns(db: sqlite_utils.Database, *, actor: User | None) -> list[dict]:
    """Every task campaign with its type, item count and status (researcher data)."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    out = []
    for cid, name, kind, status in db.conn.execute("SELECT id, name, kind, status FROM campaigns ORDER BY id"):
        if is_task_kind(kind):
            n = db.conn.execute("SELECT count(*) FROM task_items WHERE campaign_id = ?", (cid,)).fetchone()[0]
            out.append({"id": cid, "name": name, "kind": kind, "task": get(kind).title, "items": n,
                        "status": status})
    return out


# ------------------------------------------------------------------ annotating


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
    """The item to show (the next unfinished one in the annotator's order; skipped ones at the end)."""
    require_role(user, *ANNOTATING_ROLES)
    c = campaign(db, campaign_id)
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
                  client_token: str, skipped: bool = False, revision: int | None = None) -> int:
    """Record one answer (or an item-level skip: ``skipped=True``, question ``""``); idempotent per token.

    A question of a later part is refused while an earlier part has unanswered questions; a change of an
    answer adds a row that supersedes the previous one (both are kept, the change is audited). With
    ``revision`` (the :attr:`ItemView.revision` the screen was drawn from), an answer given on a screen
    that another answer has changed since is refused with :class:`StaleAnswer`: a key press that arrives
    after the screen moved on must not land on the question that was there before.
    """
    require_role(user, *ANNOTATING_ROLES)
    with transaction(db):
        payload, layout, kind, status, _cid = _assignment(db, user, item_id)
        if (dup := _already_saved(db, user, client_token, status)) is not None:
            return dup
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
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (item_id, user.id, question, value, int(skipped), client_token, prev, time.time()))
        if prev is not None:
            audit(db, user.username, "annotation.change", f"task_item:{item_id}",
                  {"question": question, "from": st["answers"][question], "to": value})
        return cur.lastrowid


# ------------------------------------------------------------------ results


def answers(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None = None) -> list[AnswerRow]:
    """The latest answer of every (item, annotator, question) of a campaign, in the order given (researcher data)."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    rows = db.conn.execute(
        "SELECT t.item_id, u.username, t.question, t.value, t.created_at FROM task_answers t JOIN task_items ti "
        "ON ti.id = t.item_id JOIN users u ON u.id = t.user_id WHERE ti.campaign_id = ? AND t.skipped = 0 AND "
        "t.question != ? AND t.id = (SELECT max(id) FROM task_answers t2 WHERE t2.item_id = t.item_id AND "
        "t2.user_id = t.user_id AND t2.question = t.question) ORDER BY t.created_at, t.id",
        (campaign_id, FLAG)).fetchall()
    return [AnswerRow(*r) for r in rows]


def flag_item(db: sqlite_utils.Database, user: User, item_id: int, note: str, *, client_token: str) -> int:
    """Flag an assigned item with a note (a wrong reference, an unreadable answer...); idempotent per token.

    A flag does not answer anything and does not move the annotator on; researchers read the notes with
    :func:`flags`. The note is untrusted text like everything else the annotator writes.
    """
    require_role(user, *ANNOTATING_ROLES)
    note = (note or "").strip()
    if not note:
        raise MedevalError("write a short note saying what is wrong with this item")
    with transaction(db):
        _payload, _layout, _kind, status, _cid = _assignment(db, user, item_id)
        if (dup := _already_saved(db, user, client_token, status)) is not None:
            return dup
        return db.conn.execute(
            "INSERT INTO task_answers (item_id, user_id, question, value, skipped, client_token, created_at) "
            "VALUES (?, ?, ?, ?, 0, ?, ?)", (item_id, user.id, FLAG, note, client_token, time.time())).lastrowid


def flags(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> list[dict]:
    """Every flag of a campaign with its item's source and the note (researcher data), oldest first."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    return [{"item": r[0], "source": r[1], "annotator": r[2], "note": r[3], "at": r[4]} for r in db.conn.execute(
        "SELECT t.item_id, ti.source, u.username, t.value, t.created_at FROM task_answers t JOIN task_items ti ON "
        "ti.id = t.item_id JOIN users u ON u.id = t.user_id WHERE ti.campaign_id = ? AND t.question = ? "
        "ORDER BY t.id", (campaign_id, FLAG))]


def campaign_progress(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> dict:
    """Per annotator: items assigned, complete, skipped; items complete by all k annotators."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
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
                                       "answers": 0})
        u["assigned"] += 1
        u["answers"] += len(st["answers"])
        u["flagged"] += int(st.get("flagged", False))
        if _complete(t, json.loads(payload), json.loads(layout), st["answers"]):
            u["done"] += 1
            complete_by[iid] = complete_by.get(iid, 0) + 1
        elif st["skipped"]:
            u["skipped"] += 1
    n_items = db.conn.execute("SELECT count(*) FROM task_items WHERE campaign_id = ?", (campaign_id,)).fetchone()[0]
    return {"campaign": campaign_id, "task": c["kind"], "k": c["config"]["k"], "items": n_items,
            "items_complete": sum(1 for n in complete_by.values() if n >= c["config"]["k"]),
            "annotators": sorted(per_user.values(), key=lambda r: r["annotator"])}


def results(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> dict:
    """The task type's results for a campaign (researcher data): progress and its sections."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    c = campaign(db, campaign_id)
    t = get(c["kind"])
    items = {iid: json.loads(p) for iid, p in db.conn.execute(
        "SELECT id, payload FROM task_items WHERE campaign_id = ?", (campaign_id,))}
    layouts = {(iid, name): json.loads(lay) for iid, name, lay in db.conn.execute(
        "SELECT a.item_id, u.username, a.layout FROM task_assignments a JOIN users u ON u.id = a.user_id "
        "WHERE a.campaign_id = ?", (campaign_id,))}
    sections = t.results(c, items, layouts, answers(db, campaign_id))
    return {"campaign": {k: c[k] for k in ("id", "name", "kind", "status")}, "task": t.title,
            "config": c["config"], "progress": campaign_progress(db, campaign_id, actor=None),
            "sections": [s.to_dict() for s in sections], "flags": flags(db, campaign_id, actor=None)}


# the built-in task types, registered in the order the pages list them
from . import rubric  # noqa: E402,F401,I001
from . import pairwise  # noqa: E402,F401,I001
from . import accr  # noqa: E402,F401,I001
