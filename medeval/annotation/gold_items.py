"""Gold items of a tier-grading campaign: the settings, marking by hand, the CSV import, the list.

A gold item is a scored response whose expected tier a researcher has set, with the guideline's reason
(shown to an annotator who fails the qualification). It is never a real item of the same campaign, and
its answers live in ``gold_answers`` (see :mod:`medeval.annotation.gold`), so no agreement statistic or
calibration sees them. Gold items are append-only: "unmark" retires one (a row of ``gold_retired``).

The functions here that name responses and tiers are for tier-grading campaigns (bucket grading, random
validation, active calibration). Task campaigns (rubric, preference, AccR) take gold items too: their items and
expected answers live in :mod:`medeval.annotation.tasks.gold_items`; the settings below serve both families.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.core.errors import InputError, MedevalError
from medeval.core.limits import NOTE_MAX_CHARS, check_number, check_text
from medeval.store.db import transaction

GOLD_KINDS = ("bucket_grading", "random_validation", "active_calibration")
EDITING_ROLES = ("researcher", "admin")
CSV_COLUMNS = ("disease", "aspect", "model", "expected_tier", "reason")
GOLD_MAX = 500
# the tiers by number, by the short codes of the paper's Table 12 and by name
TIER_CODES = {"0": 0, "1": 1, "2": 2, "cw": 0, "pc": 1, "bc": 2, "completely wrong": 0, "partially correct": 1,
              "basically correct": 2}
TIER_NAMES = ("CW · Completely Wrong", "PC · Partially Correct", "BC · Basically Correct")
DEFAULTS = {"qualification_required": False, "qualification_items": 4, "pass_mark": 0.75, "retries": 1,
            "hidden_share": 0.0, "feedback": False, "alert_threshold": 0.7, "score_tolerance": 1}
SETTINGS_HELP = {
    "qualification_required": "annotators answer a qualification round of gold items before any real item",
    "qualification_items": "gold items per qualification attempt (1 to 50)",
    "pass_mark": "share of the qualification items answered as expected to pass (0.05 to 1)",
    "retries": "attempts allowed after a failed one (0 to 10)",
    "hidden_share": "share of gold items mixed into each annotator's queue, unmarked (0 to 0.5)",
    "feedback": "after a hidden gold item, tell the annotator the expected grade and its reason",
    "alert_threshold": "flag an annotator whose latest hidden-gold accuracy is below this (0 to 1)",
    "score_tolerance": "task campaigns: a 1-5 score this close to the expected one counts as expected (0 to 4)",
}


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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def gold_family(db: sqlite_utils.Database, campaign_id: int) -> tuple[str, str]:
    """("tier" | "task", status) of a campaign that can take gold items; a clear MedevalError otherwise."""
    row = db.conn.execute("SELECT kind, status, EXISTS (SELECT 1 FROM task_items t WHERE t.campaign_id = c.id) "
                          "FROM campaigns c WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(f"no campaign {campaign_id}; list them with `python -m medeval campaign list`")
    if row[0] in GOLD_KINDS:
        return "tier", row[1]
    if row[2]:
        return "task", row[1]
    raise MedevalError(f"campaign {campaign_id} ({row[0]}) takes no gold items")


def require_gold_campaign(db: sqlite_utils.Database, campaign_id: int, family: str = "tier") -> str:
    """The campaign's status, if it takes gold items of ``family`` ("tier", "task" or "any"); a clear
    MedevalError otherwise."""
    fam, status = gold_family(db, campaign_id)
    if family not in ("any", fam):
        if fam == "task":
            raise MedevalError(f"campaign {campaign_id} is a task campaign: its gold items are task items with "
                               "expected answers (`medeval gold candidates` / `gold add-task` / `gold import`)")
        raise MedevalError(f"campaign {campaign_id} is a tier-grading campaign: its gold items are responses with an "
                           "expected tier (`medeval gold add --response N --tier T`)")
    return status


# ---------------------------------------------------------------- settings


def _flag(value, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "on", "false", "no", "0", "off"):
        return value.strip().lower() in ("true", "yes", "1", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise MedevalError(f"{what} must be true or false; got {str(value)[:40]!r}")


def check_settings(values: dict) -> dict:
    """``values`` merged over :data:`DEFAULTS`, each checked (a bad one is a one-line MedevalError)."""
    if not isinstance(values, dict):
        raise MedevalError("the gold settings must be a mapping of name to value")
    unknown = sorted(set(values) - set(DEFAULTS))
    if unknown:
        raise MedevalError(f"unknown gold setting {unknown[0]!r}; the settings are {', '.join(DEFAULTS)}")
    s = {**DEFAULTS, **values}
    out = {"qualification_required": _flag(s["qualification_required"], "qualification_required"),
           "feedback": _flag(s["feedback"], "feedback")}
    for name, low, high, integer in (("qualification_items", 1, 50, True), ("pass_mark", 0.05, 1, False),
                                     ("score_tolerance", 0, 4, True),
                                     ("retries", 0, 10, True), ("hidden_share", 0, 0.5, False),
                                     ("alert_threshold", 0, 1, False)):
        v = s[name]
        if isinstance(v, bool):
            raise MedevalError(f"{name} must be a number ({SETTINGS_HELP[name]})")
        out[name] = check_number(v, what=f"{name} ({SETTINGS_HELP[name]})", low=low, high=high, integer=integer)
        out[name] = int(out[name]) if integer else float(out[name])
    return out


def get_settings(db: sqlite_utils.Database, campaign_id: int) -> dict:
    """The campaign's gold settings (the latest saved version over :data:`DEFAULTS`)."""
    row = db.conn.execute("SELECT settings FROM gold_settings WHERE campaign_id = ? ORDER BY version DESC LIMIT 1",
                          (campaign_id,)).fetchone()
    return {**DEFAULTS, **(json.loads(row[0]) if row else {})}


def set_settings(db: sqlite_utils.Database, campaign_id: int, values: dict, *, actor: User | None) -> dict:
    """Save the campaign's gold settings as a new version (validated, audited); returns them.

    ``values`` may name only some settings: the others keep their current values. A required qualification
    needs at least ``qualification_items`` gold items marked first.
    """
    authorize(actor, "gold.manage")
    require_gold_campaign(db, campaign_id, "any")
    with transaction(db):
        new = check_settings({**get_settings(db, campaign_id), **values})
        n = len(active_gold_ids(db, campaign_id))
        if new["qualification_required"] and n < new["qualification_items"]:
            raise MedevalError(f"a qualification of {new['qualification_items']} items needs at least that many gold "
                               f"items; campaign {campaign_id} has {n} -- mark more gold items first, or ask for fewer")
        last = db.conn.execute("SELECT max(version) FROM gold_settings WHERE campaign_id = ?",
                               (campaign_id,)).fetchone()[0] or 0
        who = actor.username if actor else "cli"
        db.conn.execute("INSERT INTO gold_settings (campaign_id, version, settings, created_by, created_at) "
                        "VALUES (?, ?, ?, ?, ?)", (campaign_id, last + 1, json.dumps(new), who, _now()))
        audit(db, who, "gold.settings", f"campaign:{campaign_id}", new)
    return new


# ---------------------------------------------------------------- the gold items


def active_gold_ids(db: sqlite_utils.Database, campaign_id: int) -> list[int]:
    """The ids of the campaign's gold items that are not retired (tier or task gold items, by the campaign)."""
    items, retired = ("gold_items", "gold_retired") if gold_family(db, campaign_id)[0] == "tier" else (
        "task_gold_items", "task_gold_retired")
    return [r[0] for r in db.conn.execute(
        f"SELECT g.id FROM {items} g WHERE g.campaign_id = ? AND NOT EXISTS (SELECT 1 FROM {retired} x "
        "WHERE x.gold_id = g.id) ORDER BY g.id", (campaign_id,))]


_GOLD_SQL = ("SELECT g.id, g.campaign_id, g.response_id, g.expected_tier, g.reason, k.disease, k.aspect, m.name, "
             "g.created_by, g.created_at, EXISTS (SELECT 1 FROM gold_retired x WHERE x.gold_id = g.id) "
             "FROM gold_items g JOIN responses r ON r.id = g.response_id JOIN kb_entries k ON k.id = r.kb_id "
             "JOIN models m ON m.id = r.model_id ")


def gold_item(db: sqlite_utils.Database, gold_id: int) -> GoldItem:
    r = db.conn.execute(_GOLD_SQL + "WHERE g.id = ?", (gold_id,)).fetchone()
    if r is None:
        raise MedevalError(f"no gold item {gold_id}")
    return GoldItem(*r[:10], bool(r[10]))


def list_gold(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None,
              include_retired: bool = True) -> list[GoldItem]:
    """The campaign's gold items, oldest first (researchers and admins)."""
    authorize(actor, "gold.manage")
    require_gold_campaign(db, campaign_id)
    rows = [GoldItem(*r[:10], bool(r[10])) for r in db.conn.execute(_GOLD_SQL + "WHERE g.campaign_id = ? "
                                                                     "ORDER BY g.id", (campaign_id,))]
    return [g for g in rows if include_retired or not g.retired]


def find_responses(db: sqlite_utils.Database, campaign_id: int, *, disease: str = "", aspect: str = "",
                   model: str = "", limit: int = 50, actor: User | None) -> list[dict]:
    """Scored responses matching the (partial, case-insensitive) disease, aspect and model, that may become gold
    (not a real item of the campaign, not gold already)."""
    authorize(actor, "gold.manage")
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
        return f"there is no response {response_id}"
    if not db.conn.execute("SELECT 1 FROM scores WHERE response_id = ?", (response_id,)).fetchone():
        return f"response {response_id} has no scores yet; only scored responses can be gold (run `medeval score`)"
    if db.conn.execute("SELECT 1 FROM campaign_items WHERE campaign_id = ? AND response_id = ?",
                       (campaign_id, response_id)).fetchone():
        return (f"response {response_id} is a real item of campaign {campaign_id}; a gold item must not also be "
                "graded as a real item -- choose another response")
    row = db.conn.execute("SELECT g.id, EXISTS (SELECT 1 FROM gold_retired x WHERE x.gold_id = g.id) FROM gold_items "
                          "g WHERE g.campaign_id = ? AND g.response_id = ?", (campaign_id, response_id)).fetchone()
    if row:
        return (f"response {response_id} is already gold item {row[0]} of campaign {campaign_id}"
                + (" (retired; gold items are never changed -- choose another response)" if row[1] else ""))
    return None


def _insert(db, campaign_id: int, response_id: int, tier: int, reason: str, who: str) -> int:
    cur = db.conn.execute("INSERT INTO gold_items (campaign_id, response_id, expected_tier, reason, created_by, "
                          "created_at) VALUES (?, ?, ?, ?, ?, ?)", (campaign_id, response_id, tier, reason, who, _now()))
    return cur.lastrowid


def _check_reason(reason, **where) -> str:
    return check_text(reason, what="the reason (the guideline's one-line why)", max_chars=NOTE_MAX_CHARS,
                      required=True, **where)


def mark_gold(db: sqlite_utils.Database, campaign_id: int, response_id: int, expected_tier, reason: str, *,
              actor: User | None) -> int:
    """Mark a scored response as a gold item of the campaign with its expected tier and reason; returns its id."""
    authorize(actor, "gold.manage")
    require_gold_campaign(db, campaign_id)
    tier = parse_tier(expected_tier)
    if tier is None:
        raise MedevalError(f"expected tier {str(expected_tier)[:20]!r} is not a tier: give 0/1/2 or CW/PC/BC")
    reason = _check_reason(reason)
    if isinstance(response_id, bool) or not isinstance(response_id, int):
        raise MedevalError(f"a response id is a whole number; got {str(response_id)[:20]!r}")
    with transaction(db):
        if why := _refusal(db, campaign_id, response_id):
            raise MedevalError(why)
        if len(active_gold_ids(db, campaign_id)) >= GOLD_MAX:
            raise MedevalError(f"campaign {campaign_id} has {GOLD_MAX} gold items, the limit; retire some first")
        who = actor.username if actor else "cli"
        gid = _insert(db, campaign_id, response_id, tier, reason, who)
        audit(db, who, "gold.mark", f"campaign:{campaign_id}", {"gold": gid, "response": response_id, "tier": tier})
    return gid


def unmark_gold(db: sqlite_utils.Database, campaign_id: int, gold_id: int, *, actor: User | None,
                family: str = "tier") -> None:
    """Retire a gold item: no longer handed out; its answers stay in the history, out of the accuracy figures.
    ``family``: "task" for a task campaign's gold item (:func:`medeval.annotation.tasks.gold_items.retire_task_gold`)."""
    authorize(actor, "gold.manage")
    require_gold_campaign(db, campaign_id, family)
    items, retired = ("gold_items", "gold_retired") if family == "tier" else ("task_gold_items", "task_gold_retired")
    with transaction(db):
        row = db.conn.execute(f"SELECT EXISTS (SELECT 1 FROM {retired} WHERE gold_id = g.id) FROM {items} g "
                              "WHERE g.id = ? AND g.campaign_id = ?", (gold_id, campaign_id)).fetchone()
        if row is None:
            raise MedevalError(f"campaign {campaign_id} has no gold item {gold_id}; see `medeval gold list`")
        if row[0]:
            return
        who = actor.username if actor else "cli"
        db.conn.execute(f"INSERT INTO {retired} (gold_id, retired_by, retired_at) VALUES (?, ?, ?)",
                        (gold_id, who, _now()))
        audit(db, who, "gold.retire", f"campaign:{campaign_id}", {"gold": gold_id})


def import_gold_csv(db: sqlite_utils.Database, campaign_id: int, path, *, actor: User | None) -> int:
    """Mark the gold items of a CSV (disease, aspect, model, expected_tier, reason); returns how many.

    All or nothing: a bad file or row (not UTF-8, a missing column, an unknown response, a duplicate, a real item
    of the campaign, a bad tier) is one clear error naming the row, and nothing is stored.
    """
    from medeval.core.limits import read_table_limited
    from medeval.core.tables import require_columns
    from medeval.engine.aspects import resolve_aspect

    authorize(actor, "gold.manage")
    require_gold_campaign(db, campaign_id)
    file = str(path)
    header, rows = read_table_limited(path)
    require_columns(path, header, list(CSV_COLUMNS))
    if not rows:
        raise InputError("the file has no rows", file=file, fix="add one row per gold item")
    if len(rows) > GOLD_MAX:
        raise InputError(f"{len(rows):,} rows; the limit is {GOLD_MAX} gold items", file=file)
    plan, seen = [], {}
    for n, row in rows:
        cells = {c: str(row.get(c) if row.get(c) is not None else "").strip() for c in CSV_COLUMNS}
        where = {"file": file, "row": n}
        for c in ("disease", "aspect", "model"):
            if not cells[c]:
                raise InputError(f"the {c} is empty", **where, fix="fill in disease, aspect and model")
        try:
            aspect = resolve_aspect(cells["aspect"]).name
        except MedevalError:
            aspect = cells["aspect"]
        r = db.conn.execute("SELECT r.id FROM responses r JOIN kb_entries k ON k.id = r.kb_id JOIN models m ON "
                            "m.id = r.model_id WHERE k.disease = ? AND k.aspect = ? AND m.name = ?",
                            (cells["disease"], aspect, cells["model"])).fetchone()
        label = f"{cells['disease'][:40]!r} / {cells['aspect'][:40]!r} / {cells['model'][:40]!r}"
        if r is None:
            raise InputError(f"no response of model {cells['model'][:40]!r} for {label}", **where,
                             fix="check the disease, aspect and model names against the imported data")
        if r[0] in seen:
            raise InputError(f"{label} is already on row {seen[r[0]]}", **where, fix="keep one row per response")
        seen[r[0]] = n
        tier = parse_tier(cells["expected_tier"])
        if tier is None:
            raise InputError(f"expected_tier {cells['expected_tier'][:20]!r} is not a tier", **where,
                             fix="give 0/1/2 or CW/PC/BC")
        reason = _check_reason(cells["reason"], **where)
        if why := _refusal(db, campaign_id, r[0]):
            raise InputError(why, **where)
        plan.append((r[0], tier, reason))
    who = actor.username if actor else "cli"
    with transaction(db):
        if len(active_gold_ids(db, campaign_id)) + len(plan) > GOLD_MAX:
            raise InputError(f"that would make more than {GOLD_MAX} gold items", file=file, fix="retire some first")
        for rid, tier, reason in plan:
            if why := _refusal(db, campaign_id, rid):  # (changed since the check above)
                raise InputError(why, file=file, row=seen[rid])
            _insert(db, campaign_id, rid, tier, reason, who)
        audit(db, who, "gold.import", f"campaign:{campaign_id}", {"file": file[-200:], "items": len(plan)})
    return len(plan)
