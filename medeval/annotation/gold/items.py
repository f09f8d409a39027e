"""Gold items of a tier-grading campaign (responses with an expected tier): the list, finding candidates,
marking by hand, the CSV import -- and retiring a gold item of either family.

A gold item is a scored response whose expected tier a researcher has set, with the guideline's reason
(shown to an annotator who fails the qualification). It is never a real item of the same campaign, and
its answers live in ``gold_answers``, so no agreement statistic or calibration sees them. Gold items are
append-only: "unmark" retires one (a row of ``gold_retired``, or ``task_gold_retired`` for a task campaign's
item). Task campaigns' gold items (items with expected answers) are in :mod:`.task_items`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import item_rows
from medeval.annotation.answer_rows import TIER_FAMILY
from medeval.annotation.gold.settings import (
    GOLD_MAX,
    TIER_CODES,
    _check_reason,
    _now,
    active_gold_ids,
    require_gold_campaign,
)
from medeval.core.errors import InputError, MedevalError
from medeval.core.i18n import _
from medeval.store.db import transaction

TIER_CSV_COLUMNS = ("disease", "aspect", "model", "expected_tier", "reason")


@dataclass(frozen=True)
class GoldItem:
    id: int
    campaign_id: int
    response_id: int
    expected_tier: int
    reason: str  # plain text
    disease: str
    aspect: str
    model: str
    created_by: str
    created_at: str
    retired: bool


_GOLD_SQL = ("SELECT g.id, g.campaign_id, g.response_id, g.expected, g.reason, k.disease, k.aspect, m.name, "
             "g.created_by, g.created_at, g.retired_at IS NOT NULL "
             "FROM items g JOIN responses r ON r.id = g.response_id JOIN kb_entries k ON k.id = r.kb_id "
             "JOIN models m ON m.id = r.model_id WHERE g.family = 'tier' AND g.gold = 1 ")


def gold_item(db: sqlite_utils.Database, gold_id: int) -> GoldItem:
    r = db.conn.execute(_GOLD_SQL + "AND g.id = ?", (gold_id,)).fetchone()
    if r is None:
        raise MedevalError(_("no gold item {id}").format(id=gold_id))
    return GoldItem(*r[:10], bool(r[10]))


def list_gold(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None,
              include_retired: bool = True) -> list[GoldItem]:
    """The campaign's gold items, oldest first (researchers and admins)."""
    authorize(actor, "gold.manage", db=db)
    require_gold_campaign(db, campaign_id)
    rows = [GoldItem(*r[:10], bool(r[10])) for r in db.conn.execute(_GOLD_SQL + "AND g.campaign_id = ? "
                                                                     "ORDER BY g.id", (campaign_id,))]
    return [g for g in rows if include_retired or not g.retired]


def find_responses(db: sqlite_utils.Database, campaign_id: int, *, disease: str = "", aspect: str = "",
                   model: str = "", limit: int = 50, actor: User | None) -> list[dict]:
    """Scored responses matching the (partial, case-insensitive) disease, aspect and model, that may become gold
    (not a real item of the campaign, not gold already)."""
    authorize(actor, "gold.manage", db=db)
    require_gold_campaign(db, campaign_id)
    rows = db.conn.execute(
        "SELECT r.id, k.disease, k.aspect, m.name, r.raw FROM responses r JOIN kb_entries k ON k.id = r.kb_id "
        "JOIN models m ON m.id = r.model_id WHERE EXISTS (SELECT 1 FROM scores s WHERE s.response_id = r.id) "
        "AND instr(lower(k.disease), lower(?)) AND instr(lower(k.aspect), lower(?)) AND instr(lower(m.name), lower(?)) "
        "AND NOT EXISTS (SELECT 1 FROM campaign_items ci WHERE ci.campaign_id = ? AND ci.response_id = r.id) "
        "AND NOT EXISTS (SELECT 1 FROM gold_items g WHERE g.campaign_id = ? AND g.response_id = r.id) "
        "ORDER BY k.disease, k.aspect, m.name LIMIT ?",
        (disease or "", aspect or "", model or "", campaign_id, campaign_id, int(limit))).fetchall()
    return [{"response_id": r[0], "disease": r[1], "aspect": r[2], "model": r[3], "response": r[4]} for r in rows]


def parse_tier(value) -> int | None:
    """0/1/2, CW/PC/BC or the tier's name -> 0..2; None when it is none of those."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in (0, 1, 2) else None
    return TIER_CODES.get(str(value).strip().lower())


def _refusal(db, campaign_id: int, response_id: int) -> str | None:
    """Why ``response_id`` cannot become a gold item of the campaign (None: it can)."""
    if not db.conn.execute("SELECT 1 FROM responses WHERE id = ?", (response_id,)).fetchone():
        return _("there is no response {id}").format(id=response_id)
    if not db.conn.execute("SELECT 1 FROM scores WHERE response_id = ?", (response_id,)).fetchone():
        return _("response {id} has no scores yet; only scored responses can be gold (run `medeval score`)").format(
            id=response_id)
    if db.conn.execute("SELECT 1 FROM campaign_items WHERE campaign_id = ? AND response_id = ?",
                       (campaign_id, response_id)).fetchone():
        return _("response {id} is a real item of campaign {cid}; a gold item must not also be graded as a real "
                 "item -- choose another response").format(id=response_id, cid=campaign_id)
    row = db.conn.execute("SELECT g.id, EXISTS (SELECT 1 FROM gold_retired x WHERE x.gold_id = g.id) FROM gold_items "
                          "g WHERE g.campaign_id = ? AND g.response_id = ?", (campaign_id, response_id)).fetchone()
    if row:
        if row[1]:
            return _("response {id} is already gold item {gid} of campaign {cid} (retired; gold items are never "
                     "changed -- choose another response)").format(id=response_id, gid=row[0], cid=campaign_id)
        return _("response {id} is already gold item {gid} of campaign {cid}").format(
            id=response_id, gid=row[0], cid=campaign_id)
    return None


def _insert(db, campaign_id: int, response_id: int, tier: int, reason: str, who: str) -> int:
    return item_rows.add(db, TIER_FAMILY, campaign_id, gold=True, response_id=response_id, expected=tier,
                         reason=reason, created_by=who, created_at=_now())


def mark_gold(db: sqlite_utils.Database, campaign_id: int, response_id: int, expected_tier, reason: str, *,
              actor: User | None) -> int:
    """Mark a scored response as a gold item of the campaign with its expected tier and reason; returns its id."""
    authorize(actor, "gold.manage", db=db)
    require_gold_campaign(db, campaign_id)
    tier = parse_tier(expected_tier)
    if tier is None:
        raise MedevalError(_("expected tier {value} is not a tier: give 0/1/2 or CW/PC/BC").format(
            value=repr(str(expected_tier)[:20])))
    reason = _check_reason(reason)
    if isinstance(response_id, bool) or not isinstance(response_id, int):
        raise MedevalError(_("a response id is a whole number; got {value}").format(value=repr(str(response_id)[:20])))
    with transaction(db):
        if why := _refusal(db, campaign_id, response_id):
            raise MedevalError(why)
        if len(active_gold_ids(db, campaign_id)) >= GOLD_MAX:
            raise MedevalError(_("campaign {id} has {max} gold items, the limit; retire some first").format(
                id=campaign_id, max=GOLD_MAX))
        who = actor.username if actor else "cli"
        gid = _insert(db, campaign_id, response_id, tier, reason, who)
        audit(db, who, "gold.mark", f"campaign:{campaign_id}", {"gold": gid, "response": response_id, "tier": tier})
    return gid


def unmark_gold(db: sqlite_utils.Database, campaign_id: int, gold_id: int, *, actor: User | None,
                family: str = "tier") -> None:
    """Retire a gold item of either family: no longer handed out; its answers stay in the history, out of the
    accuracy figures. ``family``: "task" for a task campaign's gold item (:func:`retire_task_gold`)."""
    authorize(actor, "gold.manage", db=db)
    require_gold_campaign(db, campaign_id, family)
    with transaction(db):
        retired = item_rows.gold_retired(db, family, campaign_id, gold_id)
        if retired is None:
            raise MedevalError(_("campaign {id} has no gold item {gid}; see `medeval gold list`").format(
                id=campaign_id, gid=gold_id))
        if retired:
            return
        who = actor.username if actor else "cli"
        item_rows.retire(db, family, gold_id, retired_by=who, retired_at=_now())
        audit(db, who, "gold.retire", f"campaign:{campaign_id}", {"gold": gold_id})


def retire_task_gold(db: sqlite_utils.Database, campaign_id: int, gold_id: int, *, actor: User | None) -> None:
    """Retire a task gold item: no longer handed out; its answers stay, out of the accuracy figures."""
    unmark_gold(db, campaign_id, gold_id, actor=actor, family="task")


def import_gold_csv(db: sqlite_utils.Database, campaign_id: int, path, *, actor: User | None) -> int:
    """Mark the gold items of a CSV (disease, aspect, model, expected_tier, reason); returns how many.

    All or nothing: a bad file or row (not UTF-8, a missing column, an unknown response, a duplicate, a real item
    of the campaign, a bad tier) is one clear error naming the row, and nothing is stored.
    """
    from medeval.core.limits import read_table_limited
    from medeval.core.tables import require_columns
    from medeval.engine.aspects import resolve_aspect

    authorize(actor, "gold.manage", db=db)
    require_gold_campaign(db, campaign_id)
    file = str(path)
    header, rows = read_table_limited(path)
    require_columns(path, header, list(TIER_CSV_COLUMNS))
    if not rows:
        raise InputError(_("the file has no rows"), file=file, fix=_("add one row per gold item"))
    if len(rows) > GOLD_MAX:
        raise InputError(_("{n} rows; the limit is {max} gold items").format(n=f"{len(rows):,}", max=GOLD_MAX),
                         file=file)
    plan, seen = [], {}
    for n, row in rows:
        cells = {c: str(row.get(c) if row.get(c) is not None else "").strip() for c in TIER_CSV_COLUMNS}
        where = {"file": file, "row": n}
        for c in ("disease", "aspect", "model"):
            if not cells[c]:
                raise InputError(_("the {column} is empty").format(column=c), **where,
                                 fix=_("fill in disease, aspect and model"))
        try:
            aspect = resolve_aspect(cells["aspect"]).name
        except MedevalError:
            aspect = cells["aspect"]
        r = db.conn.execute("SELECT r.id FROM responses r JOIN kb_entries k ON k.id = r.kb_id JOIN models m ON "
                            "m.id = r.model_id WHERE k.disease = ? AND k.aspect = ? AND m.name = ?",
                            (cells["disease"], aspect, cells["model"])).fetchone()
        label = f"{cells['disease'][:40]!r} / {cells['aspect'][:40]!r} / {cells['model'][:40]!r}"
        if r is None:
            raise InputError(_("no response of model {model} for {label}").format(
                model=repr(cells["model"][:40]), label=label), **where,
                fix=_("check the disease, aspect and model names against the imported data"))
        if r[0] in seen:
            raise InputError(_("{label} is already on row {row}").format(label=label, row=seen[r[0]]), **where,
                             fix=_("keep one row per response"))
        seen[r[0]] = n
        tier = parse_tier(cells["expected_tier"])
        if tier is None:
            raise InputError(_("expected_tier {value} is not a tier").format(value=repr(cells["expected_tier"][:20])),
                             **where, fix=_("give 0/1/2 or CW/PC/BC"))
        reason = _check_reason(cells["reason"], **where)
        if why := _refusal(db, campaign_id, r[0]):
            raise InputError(why, **where)
        plan.append((r[0], tier, reason))
    who = actor.username if actor else "cli"
    with transaction(db):
        if len(active_gold_ids(db, campaign_id)) + len(plan) > GOLD_MAX:
            raise InputError(_("that would make more than {max} gold items").format(max=GOLD_MAX), file=file,
                             fix=_("retire some first"))
        for rid, tier, reason in plan:
            if why := _refusal(db, campaign_id, rid):  # (changed since the check above)
                raise InputError(why, file=file, row=seen[rid])
            _insert(db, campaign_id, rid, tier, reason, who)
        audit(db, who, "gold.import", f"campaign:{campaign_id}", {"file": file[-200:], "items": len(plan)})
    return len(plan)
