"""Adjudication: a senior clinician settles the items the annotators disagree on, with a reason.

* :func:`queue` -- the items of a tier-grading campaign whose annotators' latest tiers (skips left out)
  lie at least ``min_distance`` apart (1: any disagreement; 2: Completely Wrong vs Basically Correct),
  the widest first (range of tiers, then their standard deviation, then the item id). Each comes with
  the item as the annotators saw it (disease, aspect, reference, answer -- not the model: adjudication
  is blind like grading), every annotator's tier and flag note, and the current adjudication if any.
* :func:`adjudicate` -- record the final tier with a reason (plain text, required). Append-only like
  the grades: a second adjudication of the same item supersedes the first (both are kept; the
  database refuses UPDATE and DELETE), and every one is audited.
* :func:`consensus` -- one tier per graded item, by an explicit method:

  - ``median``: the lower median of the annotators' tiers (MedDisKEval; with an even number of
    annotators the lower of the two middle tiers, so a tie never invents a tier);
  - ``majority``: the most frequent tier; when two tiers are equally frequent, the lower median
    (the same rule as ``median``, so the result is always a tier someone gave);
  - ``adjudicated``: the latest adjudication's tier where the item has one, else the lower median.

Adjudication never changes the annotations: agreement statistics stay computed on the raw grades.
Who may adjudicate: the roles in :data:`medeval.accounts.auth.ADJUDICATING_ROLES` (adjudicator,
researcher, admin), checked here and not only by the page -- and never one of the item's own graders
(issue 23 §4): a researcher the item is assigned to (answered or not yet) cannot settle it, since the
adjudication would then weigh their own tier (or unblind their grading). :func:`queue` leaves such items
out unless asked for them (``include_own``; each row says ``yours``), :func:`adjudicate` refuses them.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, defaultdict

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import Graded, authorize
from medeval.annotation.campaigns.status import list_campaigns, require_grading, review_item
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import check_note
from medeval.store.db import transaction

METHODS = ("median", "majority", "adjudicated")
DISTANCES = (1, 2)


def lower_median(tiers) -> int:
    """The lower median of the tiers (the calibration's consensus since MedDisKEval)."""
    return int(statistics.median_low(list(tiers)))


def majority_tier(tiers) -> int | None:
    """The tier given more often than any other, or None when two tiers are equally frequent (no majority)."""
    counts = Counter(int(t) for t in tiers).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def majority(tiers) -> int:
    """The most frequent tier; a tie between tiers falls back to the lower median."""
    m = majority_tier(tiers)
    return lower_median(tiers) if m is None else m


def check_method(method: str) -> str:
    if method not in METHODS:
        raise MedevalError(_("consensus {method} is not one of {methods}: choose one of them").format(
            method=repr(method), methods=", ".join(METHODS)))
    return method


def _campaign(db, campaign_id: int) -> None:
    row = db.conn.execute("SELECT kind FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    require_grading(row[0], campaign_id)


def latest_grades(db: sqlite_utils.Database, campaign_id: int) -> dict[int, list[dict]]:
    """item id -> each annotator's latest answer that is a tier (skips left out), by annotator name."""
    out: dict[int, list[dict]] = defaultdict(list)
    for item, name, tier, flagged, note in db.conn.execute(
            "SELECT g.item_id, u.username, g.tier, g.flagged, g.note FROM latest_grade_annotations g "
            "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id "
            "WHERE ci.campaign_id = ? AND g.skipped = 0 ORDER BY g.item_id, u.username",
            (campaign_id,)):
        out[item].append({"annotator": name, "tier": int(tier), "flagged": bool(flagged),
                          "note": note if flagged and note else ""})
    return dict(out)


def current_adjudications(db: sqlite_utils.Database, campaign_id: int) -> dict[int, dict]:
    """item id -> its latest adjudication (tier, reason, who, when, how many before it)."""
    out = {}
    for aid, item, tier, reason, name, at, n in db.conn.execute(
            "SELECT a.id, a.item_id, a.tier, a.reason, u.username, a.created_at, (SELECT count(*) FROM "
            "adjudications a2 WHERE a2.item_id = a.item_id) FROM adjudications a JOIN users u ON u.id = a.user_id "
            "WHERE a.campaign_id = ? AND a.id = (SELECT max(id) FROM adjudications a3 WHERE a3.item_id = a.item_id)",
            (campaign_id,)):
        out[item] = {"id": aid, "tier": tier, "reason": reason, "by": name, "at": at, "versions": n}
    return out


def campaigns(db: sqlite_utils.Database, *, actor: User | None) -> list[dict]:
    """The tier-grading campaigns an adjudicator can choose from (the role is checked here)."""
    authorize(actor, "adjudication.read", db=db)
    return list_campaigns(db, actor=None)


def assigned_to(db: sqlite_utils.Database, campaign_id: int, user: User | None) -> set[int]:
    """The items of a campaign assigned to ``user`` (their graders may not adjudicate them); none for no user."""
    if user is None:
        return set()
    return {i for (i,) in db.conn.execute("SELECT item_id FROM assignments WHERE campaign_id = ? AND user_id = ?",
                                          (campaign_id, user.id))}


def queue(db: sqlite_utils.Database, campaign_id: int, *, min_distance: int = 2, actor: User | None,
          include_own: bool = False) -> list[dict]:
    """The items whose annotators disagree by at least ``min_distance`` tiers, the widest disagreement first.

    Items assigned to ``actor`` (they are one of its graders) are left out, unless ``include_own``; each row's
    ``yours`` says whether it is one (so a page can say how many it did not offer).
    """
    authorize(actor, "adjudication.read", db=db)
    if min_distance not in DISTANCES or isinstance(min_distance, bool):
        raise MedevalError(_("the minimum distance is 1 (any disagreement) or 2 (Completely Wrong vs Basically "
                             "Correct), not {value}").format(value=repr(min_distance)))
    _campaign(db, campaign_id)
    grades = latest_grades(db, campaign_id)
    adjudicated = current_adjudications(db, campaign_id)
    own = assigned_to(db, campaign_id, actor)
    rows = []
    for item, given in grades.items():
        tiers = [g["tier"] for g in given]
        if len(tiers) < 2 or max(tiers) - min(tiers) < min_distance or (item in own and not include_own):
            continue
        rows.append({"item": item, "yours": item in own, "range": max(tiers) - min(tiers),
                     "sd": float(statistics.pstdev(tiers)),
                     "annotators": given, "median": lower_median(tiers), "majority": majority_tier(tiers),
                     "adjudication": adjudicated.get(item)})
    rows.sort(key=lambda r: (-r["range"], -r["sd"], r["item"]))
    for r in rows:
        it = review_item(db, r["item"], actor=None)  # the role was checked above
        r.update({k: it[k] for k in ("disease", "aspect", "reference", "response")})
    return rows


def adjudicate(db: sqlite_utils.Database, actor: User, item_id: int, tier: int, reason: str, *,
               fully_shown: bool | None = None) -> int:
    """Record ``actor``'s final tier of an item with a reason; returns the adjudication's id.

    Append-only: an item adjudicated before gets a new row that supersedes the previous one. The same tier
    and reason as the item's current adjudication by the same person add nothing (a double click).
    ``fully_shown``: what the adjudicator's screen said -- the reference and the answer were whole on screen (or
    each long one scrolled to its end) -- recorded with it (None: not measured).
    """
    if fully_shown is not None and not isinstance(fully_shown, bool):
        raise MedevalError("fully_shown is True, False or None")  # (a caller's mistake, not a person's)
    authorize(actor, "adjudicate", db=db)
    if isinstance(tier, bool) or tier not in (0, 1, 2):
        raise MedevalError(_("the final tier is 0 (Completely Wrong), 1 (Partially Correct) or 2 (Basically "
                             "Correct)"))
    reason = check_note(reason, what=N_("the reason"))
    if not reason.strip():
        raise MedevalError(_("give a reason for the final tier (one line is enough): it is kept with the "
                             "adjudication"))
    with transaction(db):
        row = db.conn.execute("SELECT ci.campaign_id, c.kind FROM campaign_items ci JOIN campaigns c ON "
                              "c.id = ci.campaign_id WHERE ci.id = ?", (item_id,)).fetchone()
        if row is None:
            raise MedevalError(_("no campaign item {id}").format(id=item_id))
        require_grading(row[1], row[0])
        authorize(actor, "adjudicate", Graded(item_id, frozenset(u for (u,) in db.conn.execute(
            "SELECT user_id FROM assignments WHERE item_id = ?", (item_id,)))), db=db)  # not one of its graders
        prev = db.conn.execute("SELECT id, tier, reason, user_id FROM adjudications WHERE item_id = ? "
                               "ORDER BY id DESC LIMIT 1", (item_id,)).fetchone()
        if prev and (prev[1], prev[2], prev[3]) == (tier, reason, actor.id):
            return prev[0]
        cur = db.conn.execute(
            "INSERT INTO adjudications (campaign_id, item_id, user_id, tier, reason, supersedes, created_at, "
            "fully_shown) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (row[0], item_id, actor.id, tier, reason, prev[0] if prev else None, time.time(),
             None if fully_shown is None else int(fully_shown)))
        audit(db, actor.username, "adjudication.record", str(item_id),
              {"campaign": row[0], "tier": tier, "from": prev[1] if prev else None,
               "supersedes": prev[0] if prev else None})
        return cur.lastrowid


def consensus(db: sqlite_utils.Database, campaign_id: int, method: str = "median") -> dict[int, int]:
    """item id -> the consensus tier of every item with at least one tier, by ``method`` (see the module)."""
    check_method(method)
    _campaign(db, campaign_id)
    grades = latest_grades(db, campaign_id)
    adjudicated = current_adjudications(db, campaign_id) if method == "adjudicated" else {}
    out = {}
    for item, given in grades.items():
        tiers = [g["tier"] for g in given]
        if item in adjudicated:
            out[item] = int(adjudicated[item]["tier"])
        else:
            out[item] = majority(tiers) if method == "majority" else lower_median(tiers)
    return out


def summary(db: sqlite_utils.Database, campaign_id: int) -> dict:
    """How many items were adjudicated, and how often the final tier was the annotators' majority tier.

    ``sided_with_majority`` counts the adjudicated items whose final tier equals the majority tier, over the
    adjudicated items that have a majority (one tier given more often than any other; ties have none).
    """
    grades = latest_grades(db, campaign_id)
    adjudicated = current_adjudications(db, campaign_id)
    with_majority = sided = 0
    for item, a in adjudicated.items():
        m = majority_tier([g["tier"] for g in grades.get(item, [])])
        if m is not None:
            with_majority += 1
            sided += int(a["tier"] == m)
    return {"n_adjudicated": len(adjudicated), "n_with_majority": with_majority, "sided_with_majority": sided,
            "share_sided_with_majority": (sided / with_majority) if with_majority else None,
            "n_adjudications": db.conn.execute("SELECT count(*) FROM adjudications WHERE campaign_id = ?",
                                               (campaign_id,)).fetchone()[0]}
