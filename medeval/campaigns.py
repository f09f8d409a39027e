"""Bucket-grading campaigns: interval sampling, assignment to exactly k annotators, blind items, grades.

Follows MedDisKEval section 3.2.2 ("How thresholds are calibrated"): pool all
models' scores per (metric, aspect type), split the score range into intervals
(default width 0.1) and sample a fixed number per interval (default 10).
Sampling is reproducible from the stored seed; intervals with fewer responses
than asked for are reported, not silently skipped.

Assignment is decided when the campaign is created: every item goes to exactly
``k`` of the chosen annotators (balanced, seeded), each annotator in an order of
their own. "Never more than k" and "never the same item twice" are therefore
properties of the stored assignment (a primary key), not of timing, however
many annotators submit at once.

Grades are append-only: a change adds a row that supersedes the previous one;
a resubmission with the same client token adds nothing.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from . import thresholds as th
from .aspects import BY_NAME
from .auth import User, audit, require_role
from .db import _run_script, migration, transaction
from .errors import MedevalError, PermissionDenied
from .metrics import METRICS, get_metric


@migration
def m004_campaigns(db: sqlite_utils.Database) -> None:
    _run_script(db, """
    CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        config TEXT NOT NULL,
        report TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','closed'))
    );
    CREATE TABLE campaign_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        response_id INTEGER NOT NULL REFERENCES responses(id),
        strata TEXT NOT NULL,
        UNIQUE (campaign_id, response_id)
    );
    CREATE TABLE assignments (
        item_id INTEGER NOT NULL REFERENCES campaign_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        position INTEGER NOT NULL,
        PRIMARY KEY (item_id, user_id),
        UNIQUE (campaign_id, user_id, position)
    );
    CREATE TABLE grade_annotations (
        id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        tier INTEGER CHECK (tier IN (0, 1, 2)),
        skipped INTEGER NOT NULL DEFAULT 0,
        flagged INTEGER NOT NULL DEFAULT 0,
        note TEXT,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES grade_annotations(id),
        created_at REAL NOT NULL,
        FOREIGN KEY (item_id, user_id) REFERENCES assignments(item_id, user_id),
        UNIQUE (user_id, client_token)
    );
    CREATE INDEX grade_annotations_item ON grade_annotations(item_id, user_id, id);
    CREATE TRIGGER grade_annotations_no_update BEFORE UPDATE ON grade_annotations
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
    CREATE TRIGGER grade_annotations_no_delete BEFORE DELETE ON grade_annotations
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END
    """)


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
class BucketConfig:
    metrics: tuple[str, ...] = ("bleu1", "rouge1", "cosine")
    aspect_types: tuple[str, ...] = ("enumerated", "declarative")
    width: float = 0.1
    per_interval: int = 10
    k: int = 3
    seed: int = 0


def intervals(metric: str, width: float) -> list[tuple[float, float]]:
    """Half-open intervals [lo, hi) over the metric's range; the last one includes its upper end."""
    info = METRICS[metric]
    n = int(round((info.high - info.low) / width))
    if n < 1 or not math.isclose(n * width, info.high - info.low, rel_tol=1e-9):
        raise MedevalError(f"interval width {width} does not divide the {metric} range [{info.low}, {info.high}]")
    return [(round(info.low + i * width, 10), round(info.low + (i + 1) * width, 10)) for i in range(n)]


def sample_buckets(db: sqlite_utils.Database, cfg: BucketConfig) -> tuple[dict[int, list[dict]], list[dict]]:
    """Sampled response ids with their strata, and a report row per (metric, type, interval).

    Candidates are ordered by response id, so the same seed and data give the same sample.
    """
    ts = th.active(db)
    rng = np.random.default_rng(cfg.seed)
    chosen: dict[int, list[dict]] = {}
    report = []
    for metric in cfg.metrics:
        get_metric(metric)
        for atype in cfg.aspect_types:
            if atype not in METRICS[metric].aspect_types:
                continue
            rows = db.conn.execute(
                "SELECT s.response_id, s.score, s.scorer FROM scores s JOIN responses r ON r.id = s.response_id "
                "JOIN kb_entries k ON k.id = r.kb_id WHERE s.metric = ? AND k.aspect_type = ? ORDER BY s.response_id",
                (metric, atype)).fetchall()
            if metric == "cosine":
                rows = [r for r in rows if th.embedding_matches(ts.embedding_model, r[2])]
            else:
                rows = [r for r in rows if r[2] == ts.scorer_for(metric)]
            ivs = intervals(metric, cfg.width)
            for i, (lo, hi) in enumerate(ivs):
                last = i == len(ivs) - 1
                pool = [rid for rid, s, _ in rows if lo <= s < hi or (last and s == hi)]
                take = min(cfg.per_interval, len(pool))
                picked = sorted(rng.choice(len(pool), size=take, replace=False).tolist()) if take else []
                for j in picked:
                    chosen.setdefault(pool[j], []).append({"metric": metric, "aspect_type": atype,
                                                           "interval": [lo, hi]})
                report.append({"metric": metric, "aspect_type": atype, "interval": [lo, hi], "available": len(pool),
                               "sampled": take, "short": take < cfg.per_interval})
    return chosen, report


def annotator_choices(db: sqlite_utils.Database, *, actor: User | None) -> list[dict]:
    """Active users a researcher may assign work to (username and role), annotators first."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    return [{"username": u, "role": r} for u, r in db.conn.execute(
        "SELECT username, role FROM users WHERE active = 1 ORDER BY role != 'annotator', username")]


def _active_users(db, annotators: list[str], k: int) -> list[tuple]:
    users = []
    for u in dict.fromkeys(annotators):
        row = db.conn.execute("SELECT id, username, role, active FROM users WHERE username = ?", (u,)).fetchone()
        if row is None or not row[3]:
            raise MedevalError(f"annotator {u!r} is not an active user")
        users.append(row)
    if k < 1 or k > len(users):
        raise MedevalError(f"k = {k} annotators per item needs at least {k} annotators; {len(users)} chosen")
    return users


def balanced_plan(n_items: int, user_ids: list[int], k: int, rng: np.random.Generator) -> list[list[int]]:
    """For each item, the k least-loaded annotators (ties broken at random): balanced and reproducible."""
    load = {uid: 0 for uid in user_ids}
    plan = []
    for _ in range(n_items):
        order = sorted(load, key=lambda uid: (load[uid], rng.random()))
        plan.append(order[:k])
        for uid in order[:k]:
            load[uid] += 1
    return plan


def _store_campaign(db, name: str, kind: str, config: dict, report: list, chosen: dict[int, list[dict]],
                    users: list[tuple], k: int, seed: int, actor: User | None) -> int:
    """Assign every chosen response to exactly k annotators (balanced, seeded) and store it all at once."""
    rng = np.random.default_rng([seed, 1])
    per_user: dict[int, list[int]] = {u[0]: [] for u in users}
    rids = sorted(chosen)
    plan = list(zip(rids, balanced_plan(len(rids), [u[0] for u in users], k, rng)))
    config = {**config, "k": k, "seed": seed, "annotators": [u[1] for u in users],
              "threshold_version": th.active(db).version}
    with transaction(db):
        cur = db.conn.execute(
            "INSERT INTO campaigns (name, kind, config, report, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (name, kind, json.dumps(config), json.dumps(report), actor.username if actor else "cli",
             time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        cid = cur.lastrowid
        for rid, uids in plan:
            iid = db.conn.execute("INSERT INTO campaign_items (campaign_id, response_id, strata) VALUES (?, ?, ?)",
                                  (cid, rid, json.dumps(chosen[rid]))).lastrowid
            for uid in uids:
                per_user[uid].append(iid)
        for uid, iids in per_user.items():
            order = rng.permutation(len(iids)).tolist()  # randomised per annotator
            db.conn.executemany("INSERT INTO assignments (item_id, user_id, campaign_id, position) VALUES (?, ?, ?, ?)",
                                [(iids[j], uid, cid, pos) for pos, j in enumerate(order)])
        audit(db, actor.username if actor else "cli", "campaign.create", str(cid),
              {"name": name, "kind": kind, "items": len(plan), "k": k, "seed": seed})
    return cid


def create_bucket_campaign(db: sqlite_utils.Database, name: str, cfg: BucketConfig, annotators: list[str], *,
                           actor: User | None) -> int:
    """Sample per score interval, assign each item to exactly k annotators, store in one transaction."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    users = _active_users(db, annotators, cfg.k)
    chosen, report = sample_buckets(db, cfg)
    if not chosen:
        raise MedevalError("no scored responses fall in the chosen metrics and aspect types: run `medeval score`")
    return _store_campaign(db, name, "bucket_grading", dict(cfg.__dict__), report, chosen, users, cfg.k, cfg.seed,
                           actor)


def create_random_campaign(db: sqlite_utils.Database, name: str, n: int, annotators: list[str], *, k: int = 3,
                           seed: int = 0, aspect_types: tuple[str, ...] = ("enumerated", "declarative", "numeric"),
                           actor: User | None) -> int:
    """A simple random sample of ``n`` scored responses (the paper's 150-item validation set), graded blind."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    users = _active_users(db, annotators, k)
    marks = ",".join("?" * len(aspect_types))
    pool = [r for (r,) in db.conn.execute(
        f"SELECT r.id FROM responses r JOIN kb_entries k ON k.id = r.kb_id WHERE k.aspect_type IN ({marks}) "
        f"AND EXISTS (SELECT 1 FROM scores s WHERE s.response_id = r.id) ORDER BY r.id", aspect_types)]
    if len(pool) < n:
        raise MedevalError(f"only {len(pool)} scored responses of types {', '.join(aspect_types)}; asked for {n}")
    rng = np.random.default_rng(seed)
    picked = sorted(rng.choice(len(pool), size=n, replace=False).tolist())
    chosen = {pool[j]: [{"sample": "random"}] for j in picked}
    report = [{"sample": "random", "available": len(pool), "sampled": n, "short": False}]
    return _store_campaign(db, name, "random_validation", {"n": n, "aspect_types": list(aspect_types)}, report,
                           chosen, users, k, seed, actor)


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
                 expected_prior: int | None | object = _ANY) -> int:
    """Record a grade (0/1/2), a skip or a flag; idempotent per client token. Returns the annotation id.

    A second grade of the same item supersedes the first (both are kept). With ``expected_prior`` (the
    annotation the screen showed for this item, None for a new item) a grade given on a screen that has
    changed since raises :class:`StaleGrade`: a key typed ahead of the next item must not regrade the last.
    """
    require_role(user, "annotator", "researcher", "admin")
    if not skipped and tier not in (0, 1, 2):
        raise MedevalError("a grade is 0 (completely wrong), 1 (partially correct) or 2 (basically correct)")
    if not client_token:
        raise MedevalError("a client token is required (it makes a resubmission harmless)")
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
             prev[0] if prev else None, time.time()))
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


def set_campaign_status(db: sqlite_utils.Database, campaign_id: int, status: str, *, actor: User | None) -> None:
    """Close a campaign (no more grades or changes) or open it again; audited."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    if status not in ("open", "closed"):
        raise MedevalError(f"a campaign is 'open' or 'closed', not {status!r}")
    with transaction(db):
        row = db.conn.execute("SELECT status FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
        if row is None:
            raise MedevalError(f"no campaign {campaign_id}")
        if row[0] == status:
            return
        db.conn.execute("UPDATE campaigns SET status = ? WHERE id = ?", (status, campaign_id))
        audit(db, actor.username if actor else "cli", f"campaign.{'close' if status == 'closed' else 'reopen'}",
              str(campaign_id), {"from": row[0], "to": status})


def review_item(db: sqlite_utils.Database, item_id: int, *, actor: User | None) -> dict:
    """An item with its model, answer and flag notes -- researcher data (never shown to annotators)."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    row = db.conn.execute(
        "SELECT ci.campaign_id, k.disease, k.aspect, k.reference, r.raw, m.name FROM campaign_items ci "
        "JOIN responses r ON r.id = ci.response_id JOIN kb_entries k ON k.id = r.kb_id "
        "JOIN models m ON m.id = r.model_id WHERE ci.id = ?", (item_id,)).fetchone()
    if row is None:
        raise MedevalError(f"no campaign item {item_id}")
    notes = [n for (n,) in db.conn.execute(
        "SELECT note FROM grade_annotations WHERE item_id = ? AND flagged = 1 ORDER BY id", (item_id,))]
    return {"item": item_id, "campaign": row[0], "disease": row[1], "aspect": row[2], "reference": row[3],
            "response": row[4], "model": row[5], "notes": notes}


def current_grades(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> list[dict]:
    """The latest grade of every (item, annotator) of a campaign -- researcher data."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    q = ("SELECT ci.id, ci.response_id, u.username, g.tier, g.skipped, g.flagged FROM grade_annotations g "
         "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ? "
         "AND g.id = (SELECT max(id) FROM grade_annotations g2 WHERE g2.item_id = g.item_id AND g2.user_id = g.user_id)")
    return [dict(zip(("item", "response_id", "annotator", "tier", "skipped", "flagged"), r))
            for r in db.conn.execute(q, (campaign_id,))]


GRADING_KINDS = ("bucket_grading", "random_validation")  # tier grading; other kinds are medeval.tasks types


def require_grading(kind: str, campaign_id: int) -> None:
    """Refuse a task campaign where a tier-grading one is needed, saying where to look instead."""
    if kind not in GRADING_KINDS:
        raise MedevalError(f"campaign {campaign_id} is a {kind} task campaign, not tier grading: see "
                           f"`medeval task results {campaign_id}` or the Task results page")


def list_campaigns(db: sqlite_utils.Database, *, actor: User | None) -> list[dict]:
    """The tier-grading campaigns (task campaigns: ``medeval.tasks.task_campaigns``)."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    out = []
    marks = ",".join("?" * len(GRADING_KINDS))
    for cid, name, kind, cfg, by, at, status in db.conn.execute(
            "SELECT id, name, kind, config, created_by, created_at, status FROM campaigns "
            f"WHERE kind IN ({marks}) ORDER BY id", GRADING_KINDS):
        n = db.conn.execute("SELECT count(*) FROM campaign_items WHERE campaign_id = ?", (cid,)).fetchone()[0]
        out.append({"id": cid, "name": name, "kind": kind, "items": n, "created_by": by, "created_at": at,
                    "status": status, "config": json.loads(cfg)})
    return out


def campaign_progress(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> dict:
    """Progress per annotator (done / assigned, skipped, flagged) and per bucket (items with all k grades)."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    row = db.conn.execute("SELECT config, report, kind FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(f"no campaign {campaign_id}")
    require_grading(row[2], campaign_id)
    cfg, report = json.loads(row[0]), json.loads(row[1])
    latest = ("SELECT g.item_id, g.user_id, g.tier, g.skipped, g.flagged FROM grade_annotations g WHERE g.id = "
              "(SELECT max(id) FROM grade_annotations g2 WHERE g2.item_id = g.item_id AND g2.user_id = g.user_id)")
    annotators = []
    for uid, name, assigned in db.conn.execute(
            "SELECT u.id, u.username, count(*) FROM assignments a JOIN users u ON u.id = a.user_id "
            "WHERE a.campaign_id = ? GROUP BY u.id ORDER BY u.username", (campaign_id,)):
        done, skipped, flagged = db.conn.execute(
            f"SELECT count(*), coalesce(sum(l.skipped), 0), coalesce(sum(l.flagged), 0) FROM ({latest}) l "
            f"JOIN assignments a ON a.item_id = l.item_id AND a.user_id = l.user_id "
            f"WHERE a.campaign_id = ? AND l.user_id = ?", (campaign_id, uid)).fetchone()
        annotators.append({"annotator": name, "assigned": assigned, "done": done, "skipped": skipped,
                           "flagged": flagged})
    graded = dict(db.conn.execute(
        f"SELECT ci.id, count(*) FROM ({latest}) l JOIN campaign_items ci ON ci.id = l.item_id "
        f"WHERE ci.campaign_id = ? AND l.skipped = 0 GROUP BY ci.id", (campaign_id,)).fetchall())
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
    n_items = db.conn.execute("SELECT count(*) FROM campaign_items WHERE campaign_id = ?", (campaign_id,)).fetchone()[0]
    return {"campaign": campaign_id, "k": cfg["k"], "annotators": annotators, "items": n_items,
            "items_complete": sum(1 for n in graded.values() if n >= cfg["k"]),
            "buckets": sorted(buckets.values(), key=lambda b: (b["metric"], b["aspect_type"], b["interval"])),
            "short_intervals": [r for r in report if r["short"]]}
