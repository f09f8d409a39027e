"""Creating a tier-grading campaign: the annotators, exactly-k balanced assignment, storing it all at once."""

from __future__ import annotations

import json
import time

import numpy as np
import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import item_rows
from medeval.annotation.answer_rows import TIER_FAMILY
from medeval.annotation.campaigns.sampling import (
    ActiveConfig,
    BucketConfig,
    check_active_config,
    check_bucket_config,
    sample_buckets,
    validation_pool,
)
from medeval.core.errors import MedevalError
from medeval.core.i18n import _
from medeval.core.limits import (
    ANNOTATORS_MAX,
    COUNT_MAX,
    NAME_MAX_CHARS,
    check_name,
    check_number,
    check_seed,
)
from medeval.engine import thresholds as th
from medeval.store.db import transaction


def annotator_choices(db: sqlite_utils.Database, *, actor: User | None) -> list[dict]:
    """Active users a researcher may assign work to (username and role), annotators first.

    Adjudicators are not among them: they settle the panel's disagreements and do not grade.
    """
    authorize(actor, "campaign.create", db=db)
    return [{"username": u, "role": r} for u, r in db.conn.execute(
        "SELECT username, role FROM users WHERE active = 1 AND role != 'adjudicator' "
        "ORDER BY role != 'annotator', username")]


def _active_users(db, annotators: list[str], k: int) -> list[tuple]:
    check_number(k, what="--k (annotators per item)", low=1, high=ANNOTATORS_MAX, integer=True)
    users = []
    for u in dict.fromkeys(annotators):
        row = db.conn.execute("SELECT id, username, role, active FROM users WHERE username = ?", (u,)).fetchone()
        if row is None or not row[3]:
            shown = u if len(u) <= NAME_MAX_CHARS else u[:NAME_MAX_CHARS] + "..."
            raise MedevalError(_("annotator {name} is not an active user").format(name=repr(shown)))
        if row[2] == "adjudicator":
            raise MedevalError(_("{name} is an adjudicator: adjudicators settle disagreements and do not grade; "
                                 "choose annotators (or researchers)").format(name=repr(row[1])))
        users.append(row)
    if k < 1 or k > len(users):
        raise MedevalError(_("k = {k} annotators per item needs at least {k} annotators; {n} chosen").format(
            k=k, n=len(users)))
    return users


def check_unique_name(db: sqlite_utils.Database, name: str) -> str:
    """``name`` stripped, refused when a campaign (tier or task) already has it, case and outer spaces aside."""
    name = (name or "").strip()
    row = next(((i, n) for i, n in db.conn.execute("SELECT id, name FROM campaigns ORDER BY id")
                if n.strip().casefold() == name.casefold()), None)
    if row is not None:
        raise MedevalError(_("a campaign named {name} already exists (#{id}): choose another name").format(
            name=repr(row[1]), id=row[0]))
    return name


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
        name = check_unique_name(db, name)
        cur = db.conn.execute(
            "INSERT INTO campaigns (name, kind, config, report, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (name, kind, json.dumps(config), json.dumps(report), actor.username if actor else "cli",
             time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        cid = cur.lastrowid
        for rid, uids in plan:
            iid = item_rows.add(db, TIER_FAMILY, cid, response_id=rid, strata=json.dumps(chosen[rid]))
            for uid in uids:
                per_user[uid].append(iid)
        for uid, iids in per_user.items():
            order = rng.permutation(len(iids)).tolist()  # randomised per annotator
            db.conn.executemany("INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position) "
                                "VALUES ('tier', ?, ?, ?, ?)",
                                [(iids[j], uid, cid, pos) for pos, j in enumerate(order)])
        audit(db, actor.username if actor else "cli", "campaign.create", str(cid),
              {"name": name, "kind": kind, "items": len(plan), "k": k, "seed": seed})
    return cid


def create_bucket_campaign(db: sqlite_utils.Database, name: str, cfg: BucketConfig, annotators: list[str], *,
                           actor: User | None) -> int:
    """Sample per score interval, assign each item to exactly k annotators, store in one transaction."""
    authorize(actor, "campaign.create", db=db)
    name = check_unique_name(db, check_name(name, what="campaign name"))
    check_bucket_config(cfg)
    users = _active_users(db, annotators, cfg.k)
    chosen, report = sample_buckets(db, cfg)
    if not chosen:
        raise MedevalError(_("no scored responses fall in the chosen metrics and aspect types: run `medeval score`"))
    return _store_campaign(db, name, "bucket_grading", dict(cfg.__dict__), report, chosen, users, cfg.k, cfg.seed,
                           actor)


def create_random_campaign(db: sqlite_utils.Database, name: str, n: int, annotators: list[str], *, k: int = 3,
                           seed: int = 0, aspect_types: tuple[str, ...] = ("enumerated", "declarative", "numeric"),
                           actor: User | None, version: int | None = None, allow_overlap: bool = False,
                           exclude_responses=()) -> int:
    """A simple random sample of ``n`` scored responses (the paper's 150-item validation set), graded blind.

    The sample validates threshold set ``version`` (default: the active one). By default it leaves out every
    response that is an item of a campaign whose grades calibrated that set
    (:func:`medeval.annotation.campaigns.sampling.calibration_campaigns`): grades that set the cut-offs must not
    "validate" them. ``allow_overlap=True`` keeps them in the pool; ``exclude_responses`` leaves out more
    (e.g. the items a calibration campaign is about to draw). The campaign records the validated version, the
    calibration campaigns, whether overlap was allowed and how many responses were excluded.
    """
    authorize(actor, "campaign.create", db=db)
    name = check_unique_name(db, check_name(name, what="campaign name"))
    n = check_number(n, what="--n (responses drawn)", low=1, high=COUNT_MAX, integer=True)
    seed = check_seed(seed, what="--seed")
    if not isinstance(allow_overlap, bool):
        raise MedevalError(_("allow_overlap must be true or false, not {value}").format(value=repr(allow_overlap)))
    users = _active_users(db, annotators, k)
    if not isinstance(aspect_types, (tuple, list)) or not aspect_types:
        raise MedevalError(_("choose at least one aspect type"))
    src = validation_pool(db, version=version, allow_overlap=allow_overlap, aspect_types=tuple(aspect_types),
                          exclude_responses=exclude_responses)
    pool, calibrating = src["pool"], src["calibration_campaigns"]
    if len(pool) < n:
        types = ", ".join(aspect_types)
        if src["left_out"]:
            raise MedevalError(_("only {n} scored responses of types {types} can be drawn ({left} left out as items "
                                 "of the campaigns that calibrated threshold set v{version}: {campaigns}; "
                                 "--allow-overlap keeps them); asked for {asked}").format(
                n=len(pool), types=types, left=src["left_out"], version=src["version"],
                campaigns=", ".join(f"#{c}" for c in calibrating) or _("none"), asked=n))
        raise MedevalError(_("only {n} scored responses of types {types} can be drawn; asked for {asked}").format(
            n=len(pool), types=types, asked=n))
    rng = np.random.default_rng(seed)
    picked = sorted(rng.choice(len(pool), size=n, replace=False).tolist())
    chosen = {pool[j]: [{"sample": "random"}] for j in picked}
    report = [{"sample": "random", "available": len(pool), "sampled": n, "short": False,
               "excluded": src["left_out"]}]
    config = {"n": n, "aspect_types": list(aspect_types), "validates_version": src["version"],
              "calibration_campaigns": calibrating, "allow_overlap": allow_overlap,
              "excluded_responses": src["left_out"]}
    return _store_campaign(db, name, "random_validation", config, report, chosen, users, k, seed, actor)


ACTIVE_KIND = "active_calibration"


def create_active_campaign(db: sqlite_utils.Database, name: str, cfg: ActiveConfig, annotators: list[str], *,
                           actor: User | None) -> int:
    """An active calibration campaign: its seed round (an interval sample, round 1) assigned and stored at once.

    Later rounds are drawn by :func:`medeval.calibration.rounds.next_round` and appended with :func:`add_items`.
    """
    authorize(actor, "campaign.create", db=db)
    name = check_unique_name(db, check_name(name, what="campaign name"))
    check_active_config(cfg)
    users = _active_users(db, annotators, cfg.k)
    chosen, report = sample_buckets(db, cfg.seed_config())
    if not chosen:
        raise MedevalError(_("no scored responses fall in the chosen metrics and aspect types: run `medeval score`"))
    chosen = {rid: [{**s, "round": 1} for s in strata] for rid, strata in chosen.items()}
    return _store_campaign(db, name, ACTIVE_KIND, {**cfg.__dict__, "metrics": list(cfg.metrics),
                                                   "aspect_types": list(cfg.aspect_types)},
                           report, chosen, users, cfg.k, cfg.seed, actor)


def add_items(db: sqlite_utils.Database, campaign_id: int, chosen: dict[int, list[dict]], *, actor: User | None,
              extra=None) -> list[int]:
    """Append ``chosen`` responses (id -> strata, each carrying its ``round``) to an active campaign.

    Each new item goes to exactly k of the campaign's annotators, the least loaded first (counting what they
    already have), at the end of each annotator's own order (shuffled, seeded by the campaign's seed and round).
    One short transaction; ``extra(db)``, if given, runs inside it (e.g. recording the round). Returns the new
    item ids. A response already in the campaign is refused: an item is graded once per campaign.
    """
    authorize(actor, "campaign.manage", db=db)
    if not chosen:
        raise MedevalError(_("no items to add"))
    rounds = {s.get("round") for strata in chosen.values() for s in strata}
    if len(rounds) != 1 or not isinstance(next(iter(rounds)), int):
        raise MedevalError(_("every added item's strata must carry the same round number"))
    with transaction(db):
        row = db.conn.execute("SELECT kind, config, status FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
        if row is None:
            raise MedevalError(_("no campaign {id}").format(id=campaign_id))
        if row[0] != ACTIVE_KIND:
            raise MedevalError(_("campaign {id} is a {kind} campaign: items are added to {active} campaigns only, "
                                 "round by round").format(id=campaign_id, kind=row[0], active=ACTIVE_KIND))
        if row[2] != "open":
            raise MedevalError(_("campaign {id} is closed: reopen it to add a round").format(id=campaign_id))
        cfg = json.loads(row[1])
        k = int(cfg["k"])
        marks = ",".join("?" * len(cfg["annotators"]))
        users = db.conn.execute(f"SELECT id FROM users WHERE active = 1 AND username IN ({marks}) ORDER BY username",
                                cfg["annotators"]).fetchall()
        if len(users) < k:
            raise MedevalError(_("only {n} of the campaign's annotators are active; each item needs k = {k}").format(
                n=len(users), k=k))
        present = {r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?",
                                                  (campaign_id,))}
        if present & set(chosen):
            raise MedevalError(_("response {response} is already in campaign {id}").format(
                response=min(present & set(chosen)), id=campaign_id))
        load = dict(db.conn.execute("SELECT user_id, count(*) FROM assignments WHERE campaign_id = ? GROUP BY user_id",
                                    (campaign_id,)).fetchall())
        last = dict(db.conn.execute("SELECT user_id, max(position) FROM assignments WHERE campaign_id = ? "
                                    "GROUP BY user_id", (campaign_id,)).fetchall())
        rng = np.random.default_rng([int(cfg["seed"]), 1, next(iter(rounds))])
        loads = {uid: load.get(uid, 0) for (uid,) in users}
        per_user: dict[int, list[int]] = {uid: [] for uid in loads}
        new = []
        for rid in sorted(chosen):
            order = sorted(loads, key=lambda uid: (loads[uid], rng.random()))[:k]
            iid = item_rows.add(db, TIER_FAMILY, campaign_id, response_id=rid, strata=json.dumps(chosen[rid]))
            new.append(iid)
            for uid in order:
                loads[uid] += 1
                per_user[uid].append(iid)
        for uid, iids in per_user.items():
            start = last.get(uid, -1) + 1
            perm = rng.permutation(len(iids)).tolist()
            db.conn.executemany("INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position) "
                                "VALUES ('tier', ?, ?, ?, ?)",
                                [(iids[j], uid, campaign_id, start + pos) for pos, j in enumerate(perm)])
        if extra is not None:
            extra(db)
        audit(db, actor.username if actor else "cli", "campaign.add_items", str(campaign_id),
              {"items": len(new), "round": next(iter(rounds))})
    return new
