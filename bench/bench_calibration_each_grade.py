#!/usr/bin/env python
"""Side experiment of issue 24: the smooth estimator fed each clinician's grade instead of the consensus tier.

The same simulated panels, pools and truth as ``bench_calibration_v2.py`` (3 clinicians, three generating models x
three score distributions, the truth each panel's own consensus boundary), and the same adaptive design
(:func:`medeval.calibration.propose_items` on the consensus tiers, rounds of 20, checkpoints at 50, 100 and 150
items). At 150 items the cut-offs are estimated three ways from the same graded items:

* ``consensus``: :func:`medeval.calibration.fit_cutoffs` on one consensus tier (the panel's median) per item --
  what the product does today;
* ``per-clinician``: ``fit_cutoffs(..., clinicians=)`` on the 3 grades of every item, an offset per clinician
  (shrunk towards 0: the cut-off of the average clinician);
* ``pooled``: ``fit_cutoffs`` on the 3 grades of every item as one set, no offsets.

Printed: mean absolute cut-off error x 1000 ± its standard error per cell, beside the paper's design at 1,200 items
(interval sampling + the accuracy search, as in ``bench_calibration_v2.py``).

    nice .venv/bin/python bench/bench_calibration_each_grade.py            # 100 panels per cell: ~7 min on 2 cores
    .venv/bin/python bench/bench_calibration_each_grade.py --reps 5        # a smoke run
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_calibration_v2 as base  # noqa: E402
from medeval.calibration import fit_cutoffs, propose_items  # noqa: E402
from medeval.calibration.estimators import accuracy_cutoffs  # noqa: E402

CHECKPOINTS = (50, 100, 150)
ROUND = 20


def _cuts(fit) -> list[float]:
    return [b.cutoff if b.cutoff is not None else 0.5 for b in (fit.low, fit.high)]


def replicate(args) -> tuple[float, float, float, float]:
    model, dist, rep, pool_n = args
    g = np.random.default_rng([list(base.MODELS).index(model), list(base.DISTRIBUTIONS).index(dist), rep])
    scores = base.DISTRIBUTIONS[dist](g, pool_n)
    leniency = g.normal(0, base.LENIENCY_SD, 3)
    grades = base.panel_grades(model, scores, leniency, g)
    tiers = np.sort(grades, axis=1)[:, 1]
    truth = base.true_cutoffs(model, leniency)
    pick = base.interval_sample(scores, 1200, np.random.default_rng([rep, 1200]))
    paper = base._error(accuracy_cutoffs(scores[pick], tiers[pick]), truth)
    rng = np.random.default_rng([rep, 7])
    graded = np.zeros(0, dtype=int)
    for n in CHECKPOINTS:
        while len(graded) < n:
            graded = np.concatenate([graded, propose_items(scores, graded, tiers[graded],
                                                           min(ROUND, n - len(graded)), rng)])
    each_s = np.repeat(scores[graded], 3)
    each_t = grades[graded].ravel()
    who = np.tile([0, 1, 2], len(graded))
    return (paper,
            base._error(_cuts(fit_cutoffs(scores[graded], tiers[graded], ci=False)), truth),
            base._error(_cuts(fit_cutoffs(each_s, each_t, clinicians=who, ci=False)), truth),
            base._error(_cuts(fit_cutoffs(each_s, each_t, ci=False)), truth))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100, help="panels per model x distribution cell")
    ap.add_argument("--pool", type=int, default=20000)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    t0 = time.perf_counter()
    print(f"{a.reps} panels per cell, pool {a.pool}, adaptive rounds of {ROUND}, 150 items; mean absolute cut-off "
          "error x 1000 ± its standard error\n")
    print("| model | distribution | paper 1200 | consensus 150 | per-clinician 150 | pooled grades 150 |")
    print("|---|---|---|---|---|---|")
    for model in base.MODELS:
        for dist in base.DISTRIBUTIONS:
            jobs = [(model, dist, r, a.pool) for r in range(a.reps)]
            with ProcessPoolExecutor(a.workers) as ex:
                e = np.array(list(ex.map(replicate, jobs, chunksize=4))) * 1000
            se = e.std(axis=0, ddof=1) / np.sqrt(len(e)) if len(e) > 1 else np.full(4, np.nan)
            print(f"| {model} | {dist} | " + " | ".join(f"{m:.1f} ± {s:.1f}" for m, s in zip(e.mean(axis=0), se))
                  + " |", flush=True)
    print(f"\n{time.perf_counter() - t0:.0f} s with {a.workers} worker(s)")


if __name__ == "__main__":
    main()
