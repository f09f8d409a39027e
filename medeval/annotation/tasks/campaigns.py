"""Task campaigns: preview, creation with exactly-k assignment (stored up front), lookup and listing."""

from __future__ import annotations

import json
import time

import numpy as np
import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import item_rows
from medeval.annotation.answer_rows import TASK_FAMILY
from medeval.annotation.campaigns.assignment import _active_users, balanced_plan, check_unique_name
from medeval.annotation.tasks.registry import get, is_task_kind
from medeval.core.errors import MedevalError
from medeval.core.i18n import _
from medeval.core.limits import check_name, check_seed
from medeval.store.db import transaction


def _users(db, annotators: list[str], k: int) -> list[tuple[int, str]]:
    """(id, username) of the chosen active annotators (the same checks as tier-grading campaigns)."""
    return [(u[0], u[1]) for u in _active_users(db, [a.strip() for a in annotators if a.strip()], k)]


def preview(db: sqlite_utils.Database, task: str, config: dict, *, seed: int = 0, actor: User | None) -> dict:
    """What a campaign would hold, without storing anything: item count and the first items' sources."""
    authorize(actor, "campaign.create", db=db)
    t = get(task)
    seed = check_seed(seed, what="--seed")
    cfg = t.check_config(db, config)
    items = t.build_items(db, cfg, np.random.default_rng([seed, 0]))
    return {"task": task, "items": len(items), "sources": [i.source for i in items[:20]], "config": cfg}


def create_campaign(db: sqlite_utils.Database, task: str, name: str, annotators: list[str], *, k: int,
                    seed: int = 0, config: dict | None = None, actor: User | None) -> int:
    """Build the items of a task campaign, assign each to exactly ``k`` annotators and store it all at once."""
    authorize(actor, "campaign.create", db=db)
    t = get(task)
    if not (name or "").strip():
        raise MedevalError(_("give the campaign a name"))
    name = check_unique_name(db, check_name(name, what="campaign name"))
    seed = check_seed(seed, what="--seed")
    cfg = t.check_config(db, config or {})
    users = _users(db, annotators, k)
    items = t.build_items(db, cfg, np.random.default_rng([seed, 0]))
    if not items:
        raise MedevalError(_("no items: the chosen data has nothing this task can use (import data first)"))
    if len({i.source for i in items}) != len(items):
        raise MedevalError("internal error: two items with the same source")
    rng = np.random.default_rng([seed, 1])
    plan = balanced_plan(len(items), [u[0] for u in users], k, rng)
    full = {"task": task, **cfg, "k": k, "seed": seed, "annotators": [u[1] for u in users]}
    with transaction(db):
        name = check_unique_name(db, name)
        cid = db.conn.execute(
            "INSERT INTO campaigns (name, kind, config, report, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (name.strip(), task, json.dumps(full, ensure_ascii=False), json.dumps([]),
             actor.username if actor else "cli", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))).lastrowid
        per_user: dict[int, list[tuple[int, dict]]] = {u[0]: [] for u in users}
        for spec, uids in zip(items, plan):
            iid = item_rows.add(db, TASK_FAMILY, cid, source=spec.source,
                                payload=json.dumps(spec.payload, ensure_ascii=False))
            for uid in uids:
                per_user[uid].append((iid, spec.payload))
        for uid, got in per_user.items():
            order = rng.permutation(len(got)).tolist()  # each annotator in an order of their own
            rows = []
            for pos, j in enumerate(order):
                iid, payload = got[j]
                rows.append((iid, uid, cid, pos, json.dumps(t.layout(payload, rng))))
            db.conn.executemany("INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, "
                                "layout) VALUES ('task', ?, ?, ?, ?, ?)", rows)
        audit(db, actor.username if actor else "cli", "campaign.create", str(cid),
              {"name": name.strip(), "kind": task, "items": len(items), "k": k, "seed": seed})
    return cid


def campaign(db: sqlite_utils.Database, campaign_id: int) -> dict:
    row = db.conn.execute("SELECT id, name, kind, config, status, created_by, created_at FROM campaigns WHERE id = ?",
                          (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    if not is_task_kind(row[2]):
        raise MedevalError(_("campaign {id} is a {kind} campaign, not an annotation task").format(id=campaign_id,
                                                                                                  kind=row[2]))
    return {"id": row[0], "name": row[1], "kind": row[2], "config": json.loads(row[3]), "status": row[4],
            "created_by": row[5], "created_at": row[6]}


def item_count(db: sqlite_utils.Database, campaign_id: int) -> int:
    """How many items the task campaign holds (0 for an unknown campaign)."""
    return db.conn.execute("SELECT count(*) FROM task_items WHERE campaign_id = ?", (campaign_id,)).fetchone()[0]


def task_campaigns(db: sqlite_utils.Database, *, actor: User | None) -> list[dict]:
    """Every task campaign with its type, item count and status (researcher data)."""
    authorize(actor, "campaign.read", db=db)
    out = []
    for cid, name, kind, status in db.conn.execute("SELECT id, name, kind, status FROM campaigns ORDER BY id"):
        if is_task_kind(kind):
            n = item_count(db, cid)
            out.append({"id": cid, "name": name, "kind": kind, "task": _(get(kind).title), "items": n,
                        "status": status})
    return out
