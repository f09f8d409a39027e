"""Grading: the blind item an annotator sees, their next item and progress, the append-only grade flow."""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit, require_role
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.limits import NAME_MAX_CHARS, check_note, check_number, check_text
from medeval.engine import thresholds as th
from medeval.engine.aspects import BY_NAME
from medeval.store.db import transaction

# What an annotator sees while grading: the key to press, the tier it records, and what it means
# (MedDisKEval's three tiers, METHOD.md section 1). The definitions are the guide clinicians grade by.
TIER_GUIDE: tuple[tuple[str, int, str, str], ...] = (
    ("1", 0, th.TIERS[0], "The answer is wrong, irrelevant or empty: it gets none of the reference's key "
                          "points right, or contradicts it."),
    ("2", 1, th.TIERS[1], "Some of the reference's key points are right, but important ones are missing, "
                          "wrong or mixed with errors."),
    ("3", 2, th.TIERS[2], "The answer conveys the reference's key points; wording, order and harmless extra "
                          "detail may differ."),
)


def tier_label(tier: int | None, skipped: bool = False) -> str:
    """``"2 · Partially Correct"`` for tier 1 (the key the annotator pressed and the tier's name)."""
    if skipped or tier is None:
        return "Skipped"
    key, _, name, _ = TIER_GUIDE[tier]
    return f"{key} · {name}"


@dataclass(frozen=True)
class BlindItem:
    """What an annotator may see: never the score, the model or anyone else's grade."""

    item_id: int
    disease: str
    aspect: str
    aspect_zh: str
    definition: str
    reference: str
    response: str  # untrusted text: show as plain text only


def _assigned(db, user: User, item_id: int) -> str:
    """The status of the item's campaign, if the item is assigned to ``user``; PermissionDenied otherwise."""
    row = db.conn.execute("SELECT c.status FROM assignments a JOIN campaigns c ON c.id = a.campaign_id "
                          "WHERE a.item_id = ? AND a.user_id = ?", (item_id, user.id)).fetchone()
    if not row:
        raise PermissionDenied("this item is not assigned to you")
    return row[0]


def blind_item(db: sqlite_utils.Database, user: User, item_id: int) -> BlindItem:
    require_role(user, "annotator", "researcher", "admin")
    _assigned(db, user, item_id)
    d, a, ref, raw = db.conn.execute(
        "SELECT k.disease, k.aspect, k.reference, r.raw FROM campaign_items ci JOIN responses r ON r.id = ci.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE ci.id = ?", (item_id,)).fetchone()
    asp = BY_NAME.get(a)
    return BlindItem(item_id, d, a, asp.name_zh if asp else a, asp.definition if asp else "", ref, raw)


def _current(db, user_id: int, item_id: int):
    return db.conn.execute("SELECT id, tier, skipped, flagged, note FROM grade_annotations WHERE item_id = ? AND "
                           "user_id = ? ORDER BY id DESC LIMIT 1", (item_id, user_id)).fetchone()


def next_item(db: sqlite_utils.Database, user: User, campaign_id: int, *, skipped: bool = False) -> int | None:
    """The annotator's next item without a grade or skip, in their own order; None when done.

    With ``skipped=True``: the next item whose latest answer is a skip (to go back to them at the end).
    """
    require_role(user, "annotator", "researcher", "admin")
    if skipped:
        row = db.conn.execute(
            "SELECT a.item_id FROM assignments a JOIN grade_annotations g ON g.item_id = a.item_id AND g.user_id = "
            "a.user_id WHERE a.campaign_id = ? AND a.user_id = ? AND g.skipped = 1 AND g.id = (SELECT max(id) FROM "
            "grade_annotations g2 WHERE g2.item_id = a.item_id AND g2.user_id = a.user_id) ORDER BY a.position "
            "LIMIT 1", (campaign_id, user.id)).fetchone()
    else:
        row = db.conn.execute(
            "SELECT a.item_id FROM assignments a WHERE a.campaign_id = ? AND a.user_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM grade_annotations g WHERE g.item_id = a.item_id AND g.user_id = a.user_id) "
            "ORDER BY a.position LIMIT 1", (campaign_id, user.id)).fetchone()
    return row[0] if row else None


def progress(db: sqlite_utils.Database, user: User, campaign_id: int) -> tuple[int, int]:
    """(items done, items assigned) for this annotator."""
    total = db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ? AND user_id = ?",
                            (campaign_id, user.id)).fetchone()[0]
    done = db.conn.execute("SELECT count(DISTINCT g.item_id) FROM grade_annotations g JOIN assignments a ON "
                           "a.item_id = g.item_id AND a.user_id = g.user_id WHERE a.campaign_id = ? AND g.user_id = ?",
                           (campaign_id, user.id)).fetchone()[0]
    return done, total


class StaleGrade(MedevalError):
    """The grade was given on a screen that has changed since (the item got another answer first): not saved."""


_ANY = object()


def submit_grade(db: sqlite_utils.Database, user: User, item_id: int, *, tier: int | None, client_token: str,
                 skipped: bool = False, flagged: bool = False, note: str | None = None,
                 expected_prior: int | None | object = _ANY, at: float | None = None) -> int:
    """Record a grade (0/1/2), a skip or a flag; idempotent per client token. Returns the annotation id.

    A second grade of the same item supersedes the first (both are kept). With ``expected_prior`` (the
    annotation the screen showed for this item, None for a new item) a grade given on a screen that has
    changed since raises :class:`StaleGrade`: a key typed ahead of the next item must not regrade the last.
    ``at``: when the grade was given (seconds since the epoch; default now) -- for grades recorded after the
    fact, e.g. the demo's simulated grading sessions.
    """
    require_role(user, "annotator", "researcher", "admin")
    if at is None:
        at = time.time()
    else:
        what = "the grade's time (at, seconds since the epoch)"
        if isinstance(at, str):  # a number only: check_number would parse text
            raise MedevalError(f"{what} must be a number in [0, inf); got {at[:60]!r} -- give a number of seconds")
        at = float(check_number(at, what=what, low=0))
    if not skipped and tier not in (0, 1, 2):
        raise MedevalError("a grade is 0 (completely wrong), 1 (partially correct) or 2 (basically correct)")
    if not client_token:
        raise MedevalError("a client token is required (it makes a resubmission harmless)")
    check_text(client_token, what="the client token", max_chars=NAME_MAX_CHARS, allow_newlines=False)
    if note is not None:
        note = check_note(note, what="the flag note")
    with transaction(db):
        status = _assigned(db, user, item_id)
        dup = db.conn.execute("SELECT id FROM grade_annotations WHERE user_id = ? AND client_token = ?",
                              (user.id, client_token)).fetchone()
        if dup:
            return dup[0]
        if status != "open":
            raise MedevalError("this campaign is closed: grades can no longer be given or changed")
        prev = _current(db, user.id, item_id)
        if expected_prior is not _ANY and (prev[0] if prev else None) != expected_prior:
            raise StaleGrade("the screen changed before this grade arrived: nothing was saved from it")
        cur = db.conn.execute(
            "INSERT INTO grade_annotations (item_id, user_id, tier, skipped, flagged, note, client_token, supersedes, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (item_id, user.id, None if skipped else tier, int(skipped), int(flagged), note, client_token,
             prev[0] if prev else None, at))
        if prev:
            audit(db, user.username, "annotation.change", str(item_id),
                  {"from": "skipped" if prev[2] else prev[1], "to": "skipped" if skipped else tier,
                   "flagged": bool(flagged)})
        return cur.lastrowid


@dataclass(frozen=True)
class GivenGrade:
    """One of the annotator's own latest answers (for "change a recent grade")."""

    item_id: int
    annotation_id: int
    tier: int | None
    skipped: bool
    flagged: bool
    note: str | None
    disease: str
    aspect: str
    at: float


@dataclass(frozen=True)
class GradingState:
    """Everything the grading screen shows, read in one go."""

    campaign_id: int
    campaign_name: str
    open: bool
    item: BlindItem | None  # None: nothing left (see ``skipped``)
    prior: int | None  # latest annotation of ``item`` by this user (a skipped item being revisited)
    done: int  # items with an answer (grade or skip)
    total: int
    skipped: int
    recent: tuple[GivenGrade, ...]

    @property
    def position(self) -> int:
        """1-based number of the item on screen ("14 of 60")."""
        return min(self.done + (1 if self.item is not None and self.prior is None else 0), self.total) or 1


def recent_grades(db: sqlite_utils.Database, user: User, campaign_id: int, *, limit: int = 5) -> list[GivenGrade]:
    """The annotator's latest answer on each of their ``limit`` most recently answered items, newest first."""
    require_role(user, "annotator", "researcher", "admin")
    rows = db.conn.execute(
        "SELECT g.item_id, g.id, g.tier, g.skipped, g.flagged, g.note, k.disease, k.aspect, g.created_at "
        "FROM grade_annotations g JOIN assignments a ON a.item_id = g.item_id AND a.user_id = g.user_id "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN responses r ON r.id = ci.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE a.campaign_id = ? AND g.user_id = ? AND g.id = "
        "(SELECT max(id) FROM grade_annotations g2 WHERE g2.item_id = g.item_id AND g2.user_id = g.user_id) "
        "ORDER BY g.id DESC LIMIT ?", (campaign_id, user.id, limit)).fetchall()
    return [GivenGrade(r[0], r[1], r[2], bool(r[3]), bool(r[4]), r[5], r[6], r[7], r[8]) for r in rows]


def my_campaigns(db: sqlite_utils.Database, user: User) -> list[dict]:
    """Campaigns with work assigned to ``user`` (open ones first), with their own progress."""
    require_role(user, "annotator", "researcher", "admin")
    out = []
    for cid, name, status in db.conn.execute(
            "SELECT c.id, c.name, c.status FROM campaigns c WHERE EXISTS (SELECT 1 FROM assignments a WHERE "
            "a.campaign_id = c.id AND a.user_id = ?) ORDER BY c.status = 'closed', c.id", (user.id,)):
        done, total = progress(db, user, cid)
        out.append({"id": cid, "name": name, "status": status, "done": done, "total": total})
    return out


def grading_state(db: sqlite_utils.Database, user: User, campaign_id: int, *, revisit_skipped: bool = False,
                  recent: int = 5) -> GradingState:
    """The item to show next (or a skipped one to revisit), progress and recent answers, for one annotator."""
    require_role(user, "annotator", "researcher", "admin")
    row = db.conn.execute("SELECT name, status FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(f"no campaign {campaign_id}")
    done, total = progress(db, user, campaign_id)
    if total == 0:
        raise PermissionDenied("no items of this campaign are assigned to you")
    skipped = db.conn.execute(
        "SELECT count(*) FROM grade_annotations g JOIN assignments a ON a.item_id = g.item_id AND a.user_id = "
        "g.user_id WHERE a.campaign_id = ? AND g.user_id = ? AND g.skipped = 1 AND g.id = (SELECT max(id) FROM "
        "grade_annotations g2 WHERE g2.item_id = g.item_id AND g2.user_id = g.user_id)",
        (campaign_id, user.id)).fetchone()[0]
    iid = next_item(db, user, campaign_id, skipped=revisit_skipped)
    item = blind_item(db, user, iid) if iid is not None else None
    prior = _current(db, user.id, iid)[0] if revisit_skipped and iid is not None else None
    return GradingState(campaign_id, row[0], row[1] == "open", item, prior, done, total, skipped,
                        tuple(recent_grades(db, user, campaign_id, limit=recent)))
