"""Gold items of task campaigns (rubric, preference, AccR): candidates, marking with expected answers, the CSV
import, the list (retiring: :func:`.items.retire_task_gold`).

A task gold item is an item the campaign's own settings could give (:meth:`TaskType.gold_pool`: the same data
set, rubric, judge and comparison, unsampled) that is not one of its real items, frozen with the expected answer
of some or all of its questions and the guideline's one-line reason. Expected answers are written in the item's
canonical layout (:meth:`TaskType.gold_layout`: responses in the data's order, numbered 1..n; A is the data's
first output) -- :func:`gold_questions` lists them. An annotator's answer counts as expected when every question
the gold item sets is answered as expected (a 1-5 score within the campaign's ``score_tolerance``).
Append-only like tier gold items: retiring adds a row of ``task_gold_retired``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import item_rows
from medeval.annotation.answer_rows import TASK_FAMILY
from medeval.annotation.gold.settings import GOLD_MAX, _check_reason, _now, active_gold_ids, require_gold_campaign
from medeval.annotation.tasks.campaigns import campaign
from medeval.annotation.tasks.registry import Block, ItemSpec, Question, TaskType, get
from medeval.core.errors import InputError, MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import NAME_MAX_CHARS, check_text
from medeval.store.db import transaction

TASK_CSV_COLUMNS = ("source", "question", "expected", "reason")
_NOT_SETTINGS = ("task", "k", "seed", "annotators")


@dataclass(frozen=True)
class TaskGoldItem:
    id: int
    campaign_id: int
    source: str
    payload: dict
    expected: dict  # canonical question id -> canonical value
    reason: str  # plain text
    created_by: str
    created_at: str
    retired: bool


def task_type(db: sqlite_utils.Database, campaign_id: int) -> tuple[dict, TaskType]:
    """(the task campaign, its type), refusing a campaign that takes no task gold items."""
    require_gold_campaign(db, campaign_id, "task")
    c = campaign(db, campaign_id)
    return c, get(c["kind"])


def gold_questions(t: TaskType, payload: dict) -> list[Question]:
    """The item's questions as expected answers name them (ids and values of the canonical layout)."""
    return t.questions(payload, t.gold_layout(payload))


def gold_blocks(t: TaskType, payload: dict) -> list[Block]:
    """Every block of the item in the canonical layout (the later parts too): what a researcher reads to decide."""
    return t.blocks(payload, t.gold_layout(payload))


def describe(t: TaskType, payload: dict, expected: dict) -> list[str]:
    """The expected answers as lines a person reads ("Response 1 · Fluency: 4 (...)"), in question order."""
    out = []
    for q in gold_questions(t, payload):
        if q.id in expected:
            o = q.option(expected[q.id])
            out.append(f"{q.target} · {q.criterion}: {o.label}" + (f" ({o.meaning})" if o.meaning and o.meaning
                                                                    != o.label else ""))
    return out


def check_expected(t: TaskType, payload: dict, expected) -> dict:
    """``expected`` ({question id: answer}; an answer by its value, label or key) checked against the item's
    questions -> {question id: value}; a clear MedevalError naming the question otherwise."""
    if not isinstance(expected, dict) or not expected:
        raise MedevalError(_("give the expected answer of at least one question of the item"))
    qs = {q.id: q for q in gold_questions(t, payload)}
    out = {}
    for qid, value in expected.items():
        if qid not in qs:
            raise MedevalError(_("the item has no question {question}; its questions: {questions}").format(
                question=repr(str(qid)[:60]), questions=", ".join(qs)))
        q, v = qs[qid], str(value).strip()
        match = [o for o in q.options if v in (o.value, o.label) or v.lower() == o.key.lower()]
        if not match:
            raise MedevalError(_("{value} is not an answer to {question}; use one of {options}").format(
                value=repr(v[:40]), question=f"{q.target} · {q.criterion}",
                options=", ".join(o.value for o in q.options)))
        out[qid] = match[0].value
    return out


def _settings_of(c: dict) -> dict:
    return {k: v for k, v in c["config"].items() if k not in _NOT_SETTINGS}


def _taken(db, campaign_id: int) -> tuple[set[str], dict[str, tuple[int, bool]]]:
    real, gold = set(), {}
    for source, is_gold, gid, retired in db.conn.execute(
            "SELECT source, gold, id, retired_at IS NOT NULL FROM items WHERE family = 'task' AND campaign_id = ?",
            (campaign_id,)):
        if is_gold:
            gold[source] = (gid, bool(retired))
        else:
            real.add(source)
    return real, gold


def candidates(db: sqlite_utils.Database, campaign_id: int, *, contains: str = "", limit: int = 50,
               actor: User | None) -> list[ItemSpec]:
    """Items that may become gold items of the campaign (from its data, not a real item, not gold already),
    whose source contains ``contains`` (case-insensitive), at most ``limit``."""
    authorize(actor, "gold.manage", db=db)
    c, t = task_type(db, campaign_id)
    contains = check_text(contains or "", what=N_("the search text"), max_chars=NAME_MAX_CHARS, allow_newlines=False)
    real, gold = _taken(db, campaign_id)
    out = []
    for spec in t.gold_pool(db, _settings_of(c)):
        if spec.source not in real and spec.source not in gold and contains.lower() in spec.source.lower():
            out.append(spec)
            if len(out) >= limit:
                break
    return out


def _refusal(source: str, campaign_id: int, real: set[str], gold: dict, pool: dict) -> str | None:
    if source in real:
        return _("{source} is a real item of campaign {id}; a gold item must not also be answered as a real item -- "
                 "choose another (`medeval gold candidates`)").format(source=repr(source[:80]), id=campaign_id)
    if source in gold:
        gid, retired = gold[source]
        if retired:
            return _("{source} is already gold item {gid} of campaign {id} (retired; gold items are never changed -- "
                     "choose another)").format(source=repr(source[:80]), gid=gid, id=campaign_id)
        return _("{source} is already gold item {gid} of campaign {id}").format(source=repr(source[:80]), gid=gid,
                                                                               id=campaign_id)
    if source not in pool:
        return _("campaign {id}'s data has no item {source}; list the items that can be gold with `medeval gold "
                 "candidates`").format(id=campaign_id, source=repr(source[:80]))
    return None


def _insert(db, campaign_id: int, spec: ItemSpec, expected: dict, reason: str, who: str) -> int:
    return item_rows.add(db, TASK_FAMILY, campaign_id, gold=True, source=spec.source,
                         payload=json.dumps(spec.payload, ensure_ascii=False),
                         expected=json.dumps(expected, ensure_ascii=False), reason=reason, created_by=who,
                         created_at=_now())


def mark_task_gold(db: sqlite_utils.Database, campaign_id: int, source: str, expected: dict, reason: str, *,
                   actor: User | None) -> int:
    """Mark the item ``source`` of the campaign's data as a gold item with its expected answers; returns its id."""
    authorize(actor, "gold.manage", db=db)
    c, t = task_type(db, campaign_id)
    source = check_text(source, what=N_("the item's source"), max_chars=NAME_MAX_CHARS * 4, allow_newlines=False)
    reason = _check_reason(reason)
    pool = {s.source: s for s in t.gold_pool(db, _settings_of(c))}  # (outside the write transaction)
    with transaction(db):
        real, gold = _taken(db, campaign_id)
        if why := _refusal(source, campaign_id, real, gold, pool):
            raise MedevalError(why)
        exp = check_expected(t, pool[source].payload, expected)
        if len(active_gold_ids(db, campaign_id)) >= GOLD_MAX:
            raise MedevalError(_("campaign {id} has {max} gold items, the limit; retire some first").format(
                id=campaign_id, max=GOLD_MAX))
        who = actor.username if actor else "cli"
        gid = _insert(db, campaign_id, pool[source], exp, reason, who)
        audit(db, who, "gold.mark", f"campaign:{campaign_id}", {"gold": gid, "source": source, "expected": exp})
    return gid


_SQL = ("SELECT id, campaign_id, source, payload, expected, reason, created_by, created_at, retired_at IS NOT NULL "
        "FROM items WHERE family = 'task' AND gold = 1 ")


def _item(r) -> TaskGoldItem:
    return TaskGoldItem(r[0], r[1], r[2], json.loads(r[3]), json.loads(r[4]), r[5], r[6], r[7], bool(r[8]))


def task_gold_item(db: sqlite_utils.Database, gold_id: int) -> TaskGoldItem:
    r = db.conn.execute(_SQL + "AND id = ?", (gold_id,)).fetchone()
    if r is None:
        raise MedevalError(_("no task gold item {id}").format(id=gold_id))
    return _item(r)


def list_task_gold(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None,
                   include_retired: bool = True) -> list[TaskGoldItem]:
    """The campaign's task gold items, oldest first (researchers and admins)."""
    authorize(actor, "gold.manage", db=db)
    task_type(db, campaign_id)
    rows = [_item(r) for r in db.conn.execute(_SQL + "AND campaign_id = ? ORDER BY id", (campaign_id,))]
    return [g for g in rows if include_retired or not g.retired]


def import_task_gold_csv(db: sqlite_utils.Database, campaign_id: int, path, *, actor: User | None) -> int:
    """Mark the gold items of a CSV with one row per expected answer (source, question, expected, reason);
    returns how many items.

    Rows of the same source make one gold item; its reason is given on at least one of them (rows that give
    it must agree). All or nothing: a bad file or row (not UTF-8, a missing column, an unknown item or
    question, an answer that is not an option, a real item, a gold item already) is one clear error naming
    the row, and nothing is stored.
    """
    from medeval.core.limits import read_table_limited
    from medeval.core.tables import require_columns

    authorize(actor, "gold.manage", db=db)
    c, t = task_type(db, campaign_id)
    file = str(path)
    header, rows = read_table_limited(path)
    require_columns(path, header, list(TASK_CSV_COLUMNS))
    if not rows:
        raise InputError(_("the file has no rows"), file=file, fix=_("add one row per expected answer"))
    pool = {s.source: s for s in t.gold_pool(db, _settings_of(c))}
    real, gold = _taken(db, campaign_id)
    plan: dict[str, dict] = {}
    for n, row in rows:
        cells = {k: str(row.get(k) if row.get(k) is not None else "").strip() for k in TASK_CSV_COLUMNS}
        where = {"file": file, "row": n}
        if not cells["source"] or not cells["question"] or not cells["expected"]:
            raise InputError(_("source, question and expected must all be filled in"), **where)
        src = cells["source"]
        if why := _refusal(src, campaign_id, real, gold, pool):
            raise InputError(why, **where)
        p = plan.setdefault(src, {"expected": {}, "reason": "", "row": n})
        if cells["question"] in p["expected"]:
            raise InputError(_("question {question} of {source} is already on an earlier row").format(
                question=repr(cells["question"][:60]), source=repr(src[:60])), **where,
                fix=_("keep one row per question of an item"))
        try:
            p["expected"].update(check_expected(t, pool[src].payload, {cells["question"]: cells["expected"]}))
        except MedevalError as e:
            raise InputError(str(e), **where) from None
        if cells["reason"]:
            reason = _check_reason(cells["reason"], **where)
            if p["reason"] and reason != p["reason"]:
                raise InputError(_("a different reason for {source} than on row {row}").format(
                    source=repr(src[:60]), row=p["row"]), **where,
                    fix=_("give an item's reason once, or the same on each of its rows"))
            p["reason"] = reason
    for src, p in plan.items():
        if not p["reason"]:
            raise InputError(_("no reason for {source}").format(source=repr(src[:60])), file=file, row=p["row"],
                             fix=_("give the guideline's one-line why on one of the item's rows"))
    who = actor.username if actor else "cli"
    with transaction(db):
        if len(active_gold_ids(db, campaign_id)) + len(plan) > GOLD_MAX:
            raise InputError(_("that would make more than {max} gold items").format(max=GOLD_MAX), file=file,
                             fix=_("retire some first"))
        real, gold = _taken(db, campaign_id)  # (changed since the checks above?)
        for src, p in plan.items():
            if why := _refusal(src, campaign_id, real, gold, pool):
                raise InputError(why, file=file, row=p["row"])
            _insert(db, campaign_id, pool[src], p["expected"], p["reason"], who)
        audit(db, who, "gold.import", f"campaign:{campaign_id}", {"file": file[-200:], "items": len(plan)})
    return len(plan)
