#!/usr/bin/env python
"""Benchmark of the agreement dashboard's recomputation: 5 annotators x 2,000 items.

    .venv/bin/python bench/bench_dashboard.py            # about 40 s on 2 cores (the demo build is most of it)
    .venv/bin/python bench/bench_dashboard.py --json bench/out/dashboard.json

The product promise measured: "everything recomputes in under a second for 5
annotators x 2,000 items". It builds the demo database (2,880 scored responses) in a
temporary folder, adds 5 annotators, draws a 2,000-item random campaign with k = 5,
and stores one grade per (item, annotator) through the real table (tiers from a true
tier per item plus annotator noise, 3% skips, answers 20-60 s apart). Then it times:

1. ``campaign_agreement`` as the dashboard calls it: panel statistics (ordinal alpha
   with a 1000-resample bootstrap CI, pairwise weighted kappas, Fleiss, percent),
   per-annotator agreement with the rest of the panel, time per item, drift, skips,
   widest disagreements, and clinicians vs the machine (Spearman per metric and type);
2. the same without the machine comparison, and with ``n_boot=0``;
3. building the five Plotly figures and the offline HTML report from the result.

Every figure is the median of 5 timed runs after one warm-up call (min-max in the note).
"""

from __future__ import annotations

import time

_T_PROCESS = time.perf_counter()

import argparse
import platform
import statistics
import tempfile
from pathlib import Path

import numpy as np

from bench.benchlib import finish, loadavg, log, table_lines  # noqa: E402
from medeval.accounts import auth  # noqa: E402
from medeval.annotation import campaigns as cp  # noqa: E402
from medeval.demo.build import build_demo  # noqa: E402
from medeval.reports import agreement_report as rep  # noqa: E402
from medeval.reports import dashboard as dash  # noqa: E402
from medeval.store.db import connect  # noqa: E402

RUNS = 5


def timed(fn, runs=RUNS):
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times), min(times), max(times)


def build(path: Path, n_items: int, n_raters: int, seed: int) -> int:
    with connect(path) as db:
        build_demo(db, path.parent / "files", accounts=False)
        names = [f"rater{i}" for i in range(n_raters)]
        for name in names:
            auth.add_user(db, name, "benchmark password", "annotator")
        cid = cp.create_random_campaign(db, "bench", n_items, names, k=n_raters, seed=seed, actor=None)
        rng = np.random.default_rng(seed)
        items = [i for (i,) in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ?", (cid,))]
        truth = rng.integers(0, 3, len(items))
        rows = []
        for name in names:
            uid = auth.get_user(db, name).id
            t = 1_700_000_000.0
            for item, tr in zip(items, truth):
                t += float(rng.uniform(20, 60))
                if rng.random() < 0.03:
                    rows.append((item, uid, None, 1, f"{name}-{item}", t))
                else:
                    tier = int(np.clip(tr + rng.choice([-1, 0, 0, 0, 1]), 0, 2))
                    rows.append((item, uid, tier, 0, f"{name}-{item}", t))
        db.conn.execute("BEGIN IMMEDIATE")
        db.conn.executemany("INSERT INTO grade_annotations (item_id, user_id, tier, skipped, client_token, "
                            "created_at) VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.conn.commit()
    return cid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--raters", type=int, default=5)
    ap.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = ap.parse_args()
    res = {"machine": platform.platform(), "python": platform.python_version(), "cpus": __import__("os").cpu_count(),
           "loadavg_start": loadavg(), "items": args.items, "raters": args.raters}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        log(f"building the demo database and a {args.items}-item campaign graded by {args.raters} annotators")
        t = time.perf_counter()
        cid = build(path, args.items, args.raters, seed=0)
        res["build_seconds"] = time.perf_counter() - t
        rows = [(f"dashboard recompute, {args.raters} annotators x {args.items} items", "", "")]
        with connect(path) as db:
            n = db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0]
            log(f"{n} answers stored; timing")
            s, med, lo, hi = timed(lambda: dash.campaign_agreement(db, cid, actor=None, n_boot=1000))
            res["full"] = med
            rows.append(("campaign_agreement (everything, 1000 bootstrap)", f"{med * 1000:.0f} ms",
                         f"min-max {lo * 1000:.0f}-{hi * 1000:.0f} ms; alpha {s['panel'][0]['estimate']['value']:.3f}"))
            _, med, lo, hi = timed(lambda: dash.campaign_agreement(db, cid, actor=None, n_boot=1000,
                                                                   include_machine=False))
            res["without_machine"] = med
            rows.append(("  without clinicians-vs-machine", f"{med * 1000:.0f} ms",
                         f"min-max {lo * 1000:.0f}-{hi * 1000:.0f} ms"))
            _, med, lo, hi = timed(lambda: dash.campaign_agreement(db, cid, actor=None, n_boot=0))
            res["no_bootstrap"] = med
            rows.append(("  without the bootstrap CI", f"{med * 1000:.0f} ms", f"min-max {lo * 1000:.0f}-{hi * 1000:.0f} ms"))
        _, med, lo, hi = timed(lambda: rep.figures(s))
        res["figures"] = med
        rows.append(("five Plotly figures", f"{med * 1000:.0f} ms", f"min-max {lo * 1000:.0f}-{hi * 1000:.0f} ms"))
        _, med, lo, hi = timed(lambda: rep.render_html(s), runs=3)
        res["html"] = med
        rows.append(("offline HTML report (plotly.js inlined)", f"{med * 1000:.0f} ms",
                     f"min-max {lo * 1000:.0f}-{hi * 1000:.0f} ms"))
    text = "\n".join([f"machine: {res['machine']}, {res['cpus']} CPUs, load {res['loadavg_start']}",
                      *table_lines(rows)])
    finish(res, text, time.perf_counter() - _T_PROCESS, args.json)


if __name__ == "__main__":
    main()
