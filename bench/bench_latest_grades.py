#!/usr/bin/env python
"""Benchmark of "the latest grade of each (item, annotator)" on 100,000 grades: the inline subquery against the view.

    .venv/bin/python bench/bench_latest_grades.py              # about 1 minute on 2 cores
    .venv/bin/python bench/bench_latest_grades.py --grades 20000

It writes a temporary database straight through the tables (no accounts' hashing, no scoring): 1,000 diseases x
30 models (30,000 responses), 30 annotators and one campaign of 30,000 items with k = 3 (90,000 first grades);
then the remaining grades (10,000 by default) change an earlier grade (a new row superseding it, as the Grade
page's "change" does), and a second, small campaign holds 3,000 more grades that the queries must leave out.
Then, for the Agreement dashboard's query (``medeval.reports.dashboard.answers``) and the adjudication queue's
(``adjudication.latest_grades``), it times the text written inline before migration m021 against the same query
over the view ``latest_grade_annotations`` (median of 5 runs after one warm-up), and the library's
``dashboard.answers`` as it is in the tree it runs in (run it before and after a change), checks that both give the same
rows, and prints each one's EXPLAIN QUERY PLAN: both must use the index of the newest id per (item, annotator) for
the "newest id" lookup, or the view would cost a scan per row: ``grade_annotations_item`` (item_id, user_id, id)
before migration m023, ``answers_item`` (item_id, user_id, family, gold, id) since (one table of answers).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.benchlib import log
from medeval.store.db import connect

RUNS = 5
LATEST_INLINE = ("(SELECT max(id) FROM grade_annotations g2 WHERE g2.item_id = g.item_id AND "
                 "g2.user_id = g.user_id)")
QUERIES = {
    "dashboard answers": (
        "SELECT g.item_id, u.username, g.tier, g.skipped, g.created_at FROM grade_annotations g "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ? "
        f"AND g.id = {LATEST_INLINE} ORDER BY g.created_at, g.id",
        "SELECT g.item_id, u.username, g.tier, g.skipped, g.created_at FROM latest_grade_annotations g "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ? "
        "ORDER BY g.created_at, g.id"),
    "adjudication latest_grades": (
        "SELECT g.item_id, u.username, g.tier, g.flagged, g.note FROM grade_annotations g "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id "
        f"WHERE ci.campaign_id = ? AND g.id = {LATEST_INLINE} AND g.skipped = 0 ORDER BY g.item_id, u.username",
        "SELECT g.item_id, u.username, g.tier, g.flagged, g.note FROM latest_grade_annotations g "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id "
        "WHERE ci.campaign_id = ? AND g.skipped = 0 ORDER BY g.item_id, u.username"),
}


def build(path: Path, n_grades: int, seed: int = 0) -> int:
    """The database described in the module's docstring; returns the big campaign's id."""
    rng = np.random.default_rng(seed)
    n_models, k, n_users = 30, 3, 30
    n_items = min(30_000, n_grades // k)
    small = 1_000
    n_diseases = -(-(n_items + small) // n_models)
    with connect(path) as db:
        c = db.conn
        c.execute("BEGIN")
        c.executemany("INSERT INTO users (id, username, password_hash, role, created_at) VALUES (?, ?, 'x', "
                      "'annotator', '2026-01-01')", [(u, f"doc{u:02d}") for u in range(1, n_users + 1)])
        c.executemany("INSERT INTO models (id, name) VALUES (?, ?)", [(m, f"m{m}") for m in range(1, n_models + 1)])
        c.executemany("INSERT INTO kb_entries (id, disease, aspect, aspect_type, reference, processed) VALUES "
                      "(?, ?, 'Symptoms', 'enumerated', 'r', 'r')", [(d, f"d{d}") for d in range(1, n_diseases + 1)])
        c.executemany("INSERT INTO responses (id, model_id, kb_id, raw, processed) VALUES (?, ?, ?, 'a', 'a')",
                      [(d * n_models + m + 1, m + 1, d + 1) for d in range(n_diseases) for m in range(n_models)])
        for cid, name in ((1, "big"), (2, "small")):
            c.execute("INSERT INTO campaigns (id, name, kind, config, report, created_by, created_at) VALUES "
                      "(?, ?, 'random', '{\"k\": 3}', '[]', 'bench', '2026-01-01')", (cid, name))
        items = [(i + 1, 1 if i < n_items else 2, i + 1, "[]") for i in range(n_items + small)]
        c.executemany("INSERT INTO campaign_items (id, campaign_id, response_id, strata) VALUES (?, ?, ?, ?)", items)
        assign, grades, pos = [], [], {}
        for item, cid, _, _ in items:
            for u in rng.choice(np.arange(1, n_users + 1), size=k, replace=False).tolist():
                pos[(cid, u)] = pos.get((cid, u), 0) + 1
                assign.append((item, u, cid, pos[(cid, u)]))
        c.executemany("INSERT INTO assignments (item_id, user_id, campaign_id, position) VALUES (?, ?, ?, ?)", assign)
        t0 = 1.7e9
        gid = 0
        for item, u, cid, _ in assign:
            gid += 1
            skipped = rng.random() < 0.03
            grades.append((gid, item, u, None if skipped else int(rng.integers(0, 3)), int(skipped), None,
                           t0 + gid * 20.0))
        big = [a for a in assign if a[2] == 1]
        for j in rng.choice(len(big), size=max(0, n_grades - len(big)), replace=True).tolist():
            gid += 1
            item, u, _, _ = big[j]
            grades.append((gid, item, u, int(rng.integers(0, 3)), 0, None, t0 + gid * 20.0))
        c.executemany("INSERT INTO grade_annotations (id, item_id, user_id, tier, skipped, supersedes, created_at, "
                      "client_token) VALUES (?, ?, ?, ?, ?, ?, ?, 't' || ?)", [(*g, g[0]) for g in grades])
        c.execute("COMMIT")
        c.execute("ANALYZE")
        n = c.execute("SELECT count(*) FROM grade_annotations g JOIN campaign_items ci ON ci.id = g.item_id "
                      "WHERE ci.campaign_id = 1").fetchone()[0]
        log(f"{n:,} grades in the big campaign ({n_items:,} items), "
            f"{c.execute('SELECT count(*) FROM grade_annotations').fetchone()[0]:,} in all")
    return 1


def timed(fn) -> tuple[float, float, float]:
    fn()
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grades", type=int, default=100_000, help="grades in the big campaign (default 100,000)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        cid = build(path, args.grades)
        with connect(path) as db:
            has_view = db.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'view' AND "
                                       "name = 'latest_grade_annotations'").fetchone()
            ok = True
            for name, (inline, view) in QUERIES.items():
                print(f"\n{name}")
                for label, q in (("inline subquery", inline), ("view", view)):
                    if label == "view" and not has_view:
                        print("  view: not in this schema (before migration m021)")
                        continue
                    rows = db.conn.execute(q, (cid,)).fetchall()
                    med, lo, hi = timed(lambda q=q: db.conn.execute(q, (cid,)).fetchall())
                    print(f"  {label}: {med * 1000:.1f} ms (min {lo * 1000:.1f}, max {hi * 1000:.1f}), "
                          f"{len(rows):,} rows")
                    for row in db.conn.execute("EXPLAIN QUERY PLAN " + q, (cid,)):
                        print(f"    plan: {row[3]}")
                    plan = " ".join(r[3] for r in db.conn.execute("EXPLAIN QUERY PLAN " + q, (cid,)))
                    ok &= "grade_annotations_item" in plan or "answers_item" in plan
                    if label == "inline subquery":
                        first = rows
                    elif rows != first:
                        print("  DIFFERENT ROWS from the inline subquery")
                        ok = False
            from medeval.reports import dashboard as dash

            med, lo, hi = timed(lambda: dash.answers(db, cid))
            print(f"\nmedeval.reports.dashboard.answers as the library has it now: {med * 1000:.1f} ms "
                  f"(min {lo * 1000:.1f}, max {hi * 1000:.1f})")
    print("\nok" if ok else "\nFAILED: a plan without the index, or different rows")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
