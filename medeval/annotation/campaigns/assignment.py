"""Creating a tier-grading campaign: the annotators, exactly-k balanced assignment, storing it all at once."""

from __future__ import annotations

import json
import time

import numpy as np
import sqlite_utils

from medeval.accounts.auth import User, audit, require_role
from medeval.annotation.campaigns.sampling import (
    BucketConfig,
    check_bucket_config,
    sample_buckets,
)
from medeval.core.errors import MedevalError
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
    """Active users a researcher may assign work to (username and role), annotators first."""
    if actor is not None:
        require_role(actor, "researcher", "admin")
    return [{"username": u, "role": r} for u, r in db.conn.execute(
        "SELECT username, role FROM users WHERE active = 1 ORDER BY role != 'annotator', username")]


def _active_users(db, annotators: list[str], k: int) -> list[tuple]:
    check_number(k, what="--k (annotators per item)", low=1, high=ANNOTATORS_MAX, integer=True)
    users = []
    for u in dict.fromkeys(annotators):
        row = db.conn.execute("SELECT id, username, role, active FROM users WHERE username = ?", (u,)).fetchone()
        if row is None or not row[3]:
            shown = u if len(u) <= NAME_MAX_CHARS else u[:NAME_MAX_CHARS] + "..."
            raise MedevalError(f"annotator {shown!r} is not an active user")
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
    name = check_name(name, what="campaign name")
    check_bucket_config(cfg)
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
    name = check_name(name, what="campaign name")
    n = check_number(n, what="--n (responses drawn)", low=1, high=COUNT_MAX, integer=True)
    seed = check_seed(seed, what="--seed")
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
