"""Researchers' side of tier-grading campaigns: open/closed status, listing, progress, review of items."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.core import csvsafe
from medeval.core.errors import MedevalError
from medeval.core.i18n import _

if TYPE_CHECKING:  # the parameters' type only: listing campaigns needs no sqlite-utils
    import sqlite_utils


def item_count(db: sqlite_utils.Database, campaign_id: int) -> int:
    """How many items the campaign holds (0 for an unknown campaign)."""
    return db.conn.execute("SELECT count(*) FROM campaign_items WHERE campaign_id = ?", (campaign_id,)).fetchone()[0]


def grades_signature(db: sqlite_utils.Database, campaign_id: int) -> tuple[int, int | None, int]:
    """``(grades, newest grade id, items)`` of a campaign: changes when a grade or an item is added (grades are
    append-only), so it keys a cache of figures computed from the campaign's grades."""
    return tuple(db.conn.execute(
        "SELECT count(*), max(g.id), (SELECT count(*) FROM campaign_items WHERE campaign_id = ?) FROM "
        "grade_annotations g JOIN campaign_items ci ON ci.id = g.item_id WHERE ci.campaign_id = ?",
        (campaign_id, campaign_id)).fetchone())


def set_campaign_status(db: sqlite_utils.Database, campaign_id: int, status: str, *, actor: User | None) -> None:
    """Close a campaign (no more grades or changes) or open it again; audited."""
    authorize(actor, "campaign.manage", db=db)
    if status not in ("open", "closed"):
        raise MedevalError(_("a campaign is 'open' or 'closed', not {status}").format(status=repr(status)))
    from medeval.store.db import transaction  # here, the one write: reading campaigns loads no sqlite-utils

    with transaction(db):
        row = db.conn.execute("SELECT status FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
        if row is None:
            raise MedevalError(_("no campaign {id}").format(id=campaign_id))
        if row[0] == status:
            return
        db.conn.execute("UPDATE campaigns SET status = ? WHERE id = ?", (status, campaign_id))
        audit(db, actor.username if actor else "cli", f"campaign.{'close' if status == 'closed' else 'reopen'}",
              str(campaign_id), {"from": row[0], "to": status})


def review_item(db: sqlite_utils.Database, item_id: int, *, actor: User | None) -> dict:
    """An item with its model, answer and flag notes -- researcher data (never shown to annotators)."""
    authorize(actor, "campaign.read", db=db)
    row = db.conn.execute(
        "SELECT ci.campaign_id, k.disease, k.aspect, k.reference, r.raw, m.name FROM campaign_items ci "
        "JOIN responses r ON r.id = ci.response_id JOIN kb_entries k ON k.id = r.kb_id "
        "JOIN models m ON m.id = r.model_id WHERE ci.id = ?", (item_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign item {id}").format(id=item_id))
    notes = [n for (n,) in db.conn.execute(
        "SELECT note FROM grade_annotations WHERE item_id = ? AND flagged = 1 ORDER BY id", (item_id,))]
    return {"item": item_id, "campaign": row[0], "disease": row[1], "aspect": row[2], "reference": row[3],
            "response": row[4], "model": row[5], "notes": notes}


def current_grades(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> list[dict]:
    """The latest grade of every (item, annotator) of a campaign -- researcher data."""
    authorize(actor, "campaign.read", db=db)
    q = ("SELECT ci.id, ci.response_id, u.username, g.tier, g.skipped, g.flagged, g.guideline_version "
         "FROM latest_grade_annotations g "
         "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ?")
    from medeval.engine.thresholds import TIERS

    out = []
    for item, rid, who, tier, skipped, flagged, gv in db.conn.execute(q, (campaign_id,)):
        out.append({"item": item, "response_id": rid, "annotator": who, "tier": tier,
                    "tier_name": "" if tier is None else TIERS[tier], "skipped": skipped, "flagged": flagged,
                    "guideline_version": gv})
    return out


# tier: the numeric code for analysis (0 = Completely Wrong, 1 = Partially Correct, 2 = Basically Correct; empty when
# skipped), tier_name beside it in words (README "Tier codes"); guideline_version: the campaign guidelines on screen
# when the grade was given (medeval.annotation.guidelines)
GRADES_CSV_COLUMNS = ["item", "response_id", "annotator", "tier", "tier_name", "skipped", "flagged",
                      "guideline_version"]


def grades_csv(grades: list[dict]) -> str:
    """:func:`current_grades` rows as CSV text (cells a spreadsheet could run are neutralised)."""
    return csvsafe.csv_text(grades, header=GRADES_CSV_COLUMNS)


# tier grading (active_calibration: medeval.calibration.rounds); other kinds are medeval.annotation.tasks types
GRADING_KINDS = ("bucket_grading", "random_validation", "active_calibration")


def require_grading(kind: str, campaign_id: int) -> None:
    """Refuse a task campaign where a tier-grading one is needed, saying where to look instead."""
    if kind not in GRADING_KINDS:
        raise MedevalError(_("campaign {id} is a {kind} task campaign, not tier grading: see "
                             "`medeval task results {id}` or the Task results page").format(id=campaign_id, kind=kind))


def list_campaigns(db: sqlite_utils.Database, *, actor: User | None) -> list[dict]:
    """The tier-grading campaigns (task campaigns: ``medeval.annotation.tasks.task_campaigns``)."""
    authorize(actor, "campaign.read", db=db)
    out = []
    marks = ",".join("?" * len(GRADING_KINDS))
    for cid, name, kind, cfg, by, at, status in db.conn.execute(
            "SELECT id, name, kind, config, created_by, created_at, status FROM campaigns "
            f"WHERE kind IN ({marks}) ORDER BY id", GRADING_KINDS):
        n = item_count(db, cid)
        out.append({"id": cid, "name": name, "kind": kind, "items": n, "created_by": by, "created_at": at,
                    "status": status, "config": json.loads(cfg)})
    return out


def campaign_progress(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> dict:
    """Progress per annotator (done / assigned, skipped, flagged) and per bucket (items with all k grades).

    Each annotator's current grades are also counted by what their screen showed (``answers.fully_shown``):
    ``not_fully_shown`` -- given while a text of the item was not whole on screen nor read to its end -- and
    ``not_measured`` -- given where nothing measured it (the command line, a change from the list of one's
    answers, a flag, an answer from before the measure existed); the campaign's totals are ``not_fully_shown`` and
    ``not_measured`` too."""
    authorize(actor, "campaign.read", db=db)
    row = db.conn.execute("SELECT config, report, kind FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    require_grading(row[2], campaign_id)
    cfg, report = json.loads(row[0]), json.loads(row[1])
    annotators = []
    for uid, name, assigned in db.conn.execute(
            "SELECT u.id, u.username, count(*) FROM assignments a JOIN users u ON u.id = a.user_id "
            "WHERE a.campaign_id = ? GROUP BY u.id ORDER BY u.username", (campaign_id,)):
        done, skipped, flagged, partial, unmeasured = db.conn.execute(
            "SELECT count(*), coalesce(sum(l.skipped), 0), coalesce(sum(l.flagged), 0), "
            "coalesce(sum(l.skipped = 0 AND x.fully_shown = 0), 0), "
            "coalesce(sum(l.skipped = 0 AND x.fully_shown IS NULL), 0) FROM latest_grade_annotations l "
            "JOIN answers x ON x.id = l.id "
            "JOIN assignments a ON a.item_id = l.item_id AND a.user_id = l.user_id "
            "WHERE a.campaign_id = ? AND l.user_id = ?", (campaign_id, uid)).fetchone()
        annotators.append({"annotator": name, "assigned": assigned, "done": done, "skipped": skipped,
                           "flagged": flagged, "not_fully_shown": partial, "not_measured": unmeasured})
    graded = dict(db.conn.execute(
        "SELECT ci.id, count(*) FROM latest_grade_annotations l JOIN campaign_items ci ON ci.id = l.item_id "
        "WHERE ci.campaign_id = ? AND l.skipped = 0 GROUP BY ci.id", (campaign_id,)).fetchall())
    buckets: dict[tuple, dict] = {}
    for iid, strata in db.conn.execute("SELECT id, strata FROM campaign_items WHERE campaign_id = ?", (campaign_id,)):
        for s in json.loads(strata):
            if "metric" not in s:  # random sample: one bucket
                s = {"metric": "random", "aspect_type": "all", "interval": [0, 0]}
            key = (s["metric"], s["aspect_type"], tuple(s["interval"]))
            b = buckets.setdefault(key, {"metric": key[0], "aspect_type": key[1], "interval": list(key[2]),
                                         "items": 0, "complete": 0})
            b["items"] += 1
            b["complete"] += int(graded.get(iid, 0) >= cfg["k"])
    n_items = item_count(db, campaign_id)
    return {"campaign": campaign_id, "k": cfg["k"], "annotators": annotators, "items": n_items,
            "items_complete": sum(1 for n in graded.values() if n >= cfg["k"]),
            "buckets": sorted(buckets.values(), key=lambda b: (b["metric"], b["aspect_type"], b["interval"])),
            "short_intervals": [r for r in report if r["short"]],
            "not_fully_shown": sum(a["not_fully_shown"] for a in annotators),
            "not_measured": sum(a["not_measured"] for a in annotators)}
