"""Gold items' common ground: which campaigns take them (a tier or a task family), the campaign's gold
settings (qualification, hidden share, feedback, alert threshold, score tolerance), the active gold items, and
the seed every per-annotator draw (qualification items, hidden plan, display ids, task layouts) starts from.

The settings serve both families; a gold item's answers never reach the real answers' tables.
"""

from __future__ import annotations

import hashlib
import json
import random
import time

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import item_rows
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import NOTE_MAX_CHARS, check_number, check_text
from medeval.store.db import transaction

GOLD_KINDS = ("bucket_grading", "random_validation", "active_calibration")
EDITING_ROLES = ("researcher", "admin")
GOLD_MAX = 500
# the tiers by number, by the short codes of the paper's Table 12 and by name
TIER_CODES = {"0": 0, "1": 1, "2": 2, "cw": 0, "pc": 1, "bc": 2, "completely wrong": 0, "partially correct": 1,
              "basically correct": 2}
# (English, marked N_(): a page shows them with _())
TIER_NAMES = (N_("CW · Completely Wrong"), N_("PC · Partially Correct"), N_("BC · Basically Correct"))
DEFAULTS = {"qualification_required": False, "qualification_items": 4, "pass_mark": 0.75, "retries": 1,
            "hidden_share": 0.0, "feedback": False, "alert_threshold": 0.7, "score_tolerance": 1}
SETTINGS_HELP = {  # (English, marked N_(): a page shows them with _())
    "qualification_required": N_("annotators answer a qualification round of gold items before any real item"),
    "qualification_items": N_("gold items per qualification attempt (1 to 50)"),
    "pass_mark": N_("share of the qualification items answered as expected to pass (0.05 to 1)"),
    "retries": N_("attempts allowed after a failed one (0 to 10)"),
    "hidden_share": N_("share of gold items mixed into each annotator's queue, unmarked (0 to 0.5)"),
    "feedback": N_("after a hidden gold item, tell the annotator the expected grade and its reason"),
    "alert_threshold": N_("flag an annotator whose latest hidden-gold accuracy is below this (0 to 1)"),
    "score_tolerance": N_("task campaigns: a 1-5 score this close to the expected one counts as expected (0 to 4)"),
}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def gold_family(db: sqlite_utils.Database, campaign_id: int) -> tuple[str, str]:
    """("tier" | "task", status) of a campaign that can take gold items; a clear MedevalError otherwise."""
    row = db.conn.execute("SELECT kind, status, EXISTS (SELECT 1 FROM task_items t WHERE t.campaign_id = c.id) "
                          "FROM campaigns c WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}; list them with `python -m medeval campaign list`").format(
            id=campaign_id))
    if row[0] in GOLD_KINDS:
        return "tier", row[1]
    if row[2]:
        return "task", row[1]
    raise MedevalError(_("campaign {id} ({kind}) takes no gold items").format(id=campaign_id, kind=row[0]))


def require_gold_campaign(db: sqlite_utils.Database, campaign_id: int, family: str = "tier") -> str:
    """The campaign's status, if it takes gold items of ``family`` ("tier", "task" or "any"); a clear
    MedevalError otherwise."""
    fam, status = gold_family(db, campaign_id)
    if family not in ("any", fam):
        if fam == "task":
            raise MedevalError(_("campaign {id} is a task campaign: its gold items are task items with expected "
                                 "answers (`medeval gold candidates` / `gold add-task` / `gold import`)").format(
                id=campaign_id))
        raise MedevalError(_("campaign {id} is a tier-grading campaign: its gold items are responses with an "
                             "expected tier (`medeval gold add --response N --tier T`)").format(id=campaign_id))
    return status


# ---------------------------------------------------------------- settings


def _flag(value, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "on", "false", "no", "0", "off"):
        return value.strip().lower() in ("true", "yes", "1", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise MedevalError(_("{what} must be true or false; got {value}").format(what=what, value=repr(str(value)[:40])))


def check_settings(values: dict) -> dict:
    """``values`` merged over :data:`DEFAULTS`, each checked (a bad one is a one-line MedevalError)."""
    if not isinstance(values, dict):
        raise MedevalError(_("the gold settings must be a mapping of name to value"))
    unknown = sorted(set(values) - set(DEFAULTS))
    if unknown:
        raise MedevalError(_("unknown gold setting {name}; the settings are {names}").format(
            name=repr(unknown[0]), names=", ".join(DEFAULTS)))
    s = {**DEFAULTS, **values}
    out = {"qualification_required": _flag(s["qualification_required"], "qualification_required"),
           "feedback": _flag(s["feedback"], "feedback")}
    for name, low, high, integer in (("qualification_items", 1, 50, True), ("pass_mark", 0.05, 1, False),
                                     ("score_tolerance", 0, 4, True),
                                     ("retries", 0, 10, True), ("hidden_share", 0, 0.5, False),
                                     ("alert_threshold", 0, 1, False)):
        v = s[name]
        if isinstance(v, bool):
            raise MedevalError(_("{name} must be a number ({help})").format(name=name, help=_(SETTINGS_HELP[name])))
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
    authorize(actor, "gold.manage", db=db)
    require_gold_campaign(db, campaign_id, "any")
    with transaction(db):
        new = check_settings({**get_settings(db, campaign_id), **values})
        n = len(active_gold_ids(db, campaign_id))
        if new["qualification_required"] and n < new["qualification_items"]:
            raise MedevalError(_("a qualification of {items} items needs at least that many gold items; campaign {id} "
                                 "has {n} -- mark more gold items first, or ask for fewer").format(
                items=new["qualification_items"], id=campaign_id, n=n))
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
    return item_rows.active_gold_ids(db, gold_family(db, campaign_id)[0], campaign_id)


def _check_reason(reason, **where) -> str:
    return check_text(reason, what=N_("the reason (the guideline's one-line why)"), max_chars=NOTE_MAX_CHARS,
                      required=True, **where)


def _seed(db, *key) -> random.Random:
    row = db.conn.execute("SELECT secret FROM app_secret WHERE id = 1").fetchone()
    text = "|".join(map(str, key)) + "|" + (row[0] if row else "")
    return random.Random(hashlib.sha256(text.encode()).hexdigest())
