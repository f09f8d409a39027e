"""Simulation: interval sampling (the paper's 10 per 0.1 interval) vs active calibration sampling.

Seeded simulated clinicians with KNOWN true cut-offs grade the items each strategy asks for;
both strategies run in rounds until both cut-offs' 95% bootstrap intervals are at most
``--target`` wide (or the budget is spent). Printed per score distribution: the grades
needed (items x k), how often the target was reached, and the error of the final cut-offs
against the true ones (mean of |low - true low| and |high - true high|).

The clinicians (``simulate_tiers``): an item's score sits at a continuous tier position
(true low cut-off -> 0.5, true high -> 1.5, linear in between and out to the range's ends),
plus what the metric misses (item noise, shared by the k clinicians), each clinician's
leniency (drawn once per run) and per-grade noise; rounded and clipped to 0..2; the
consensus is the lower median (as in the app).

    .venv/bin/python bench/bench_active_sampling.py            # full: 3 distributions x 12 runs
    .venv/bin/python bench/bench_active_sampling.py --quick    # a smoke run (seconds)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from medeval.calibration import active  # noqa: E402

METRIC = "rouge1"
TRUE = (0.34, 0.61)
DISTRIBUTIONS = {
    "uniform": lambda g, n: g.uniform(0, 1, n),
    "skewed low (beta 2,5)": lambda g, n: g.beta(2, 5, n),
    "bimodal": lambda g, n: np.where(g.random(n) < 0.55, g.beta(2, 9, n), g.beta(7, 3, n)),
}


def position(scores: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return np.where(scores < lo, 0.5 * scores / lo,
                    np.where(scores < hi, 0.5 + (scores - lo) / (hi - lo), 1.5 + 0.5 * (scores - hi) / (1 - hi)))


def simulate_tiers(scores: np.ndarray, item_noise: np.ndarray, bias: np.ndarray, g, *, grade_sd: float) -> np.ndarray:
    """Consensus tier (lower median of k clinicians) of each item."""
    base = position(scores, *TRUE) + item_noise
    grades = base[:, None] + bias[None, :] + g.normal(0, grade_sd, (len(scores), len(bias)))
    tiers = np.clip(np.rint(grades), 0, 2).astype(int)
    return np.sort(tiers, axis=1)[:, (len(bias) - 1) // 2]


def run(strategy: str, scores: np.ndarray, truth_tiers: np.ndarray, *, seed: int, target: float, budget: int,
        n_boot: int, round_items: int, criterion: str) -> dict:
    g = np.random.default_rng(seed)
    graded = np.array([], dtype=int)
    s = None
    rounds = 0
    history = []  # (items, widest interval, error) after each round
    while True:
        if strategy == "interval":  # the paper's design, repeated: 10 more per 0.1 interval each round
            free = np.setdiff1d(np.arange(len(scores)), graded)
            new = active.interval_sample(METRIC, scores, free, per_interval=10, rng=g)
        else:  # a seed round of 2 per interval, then targeted rounds
            new = active.propose(METRIC, scores, graded, s, m=20 if s is None else round_items, rng=g)
        if len(new) == 0:
            break
        graded = np.concatenate([graded, new])
        rounds += 1
        s = active.spread(METRIC, scores[graded], truth_tiers[graded], criterion=criterion, n_boot=n_boot, rng=g)
        if s.cut_offs is not None:
            history.append((len(graded), max(s.widths()), _error(s.cut_offs)))
        if active.should_stop(s, n_graded=len(graded), budget=budget, target_width=target):
            break
    w = s.widths() if s else None
    err = _error(s.cut_offs) if s and s.cut_offs else float("nan")
    return {"items": len(graded), "rounds": rounds, "reached": bool(w and max(w) <= target), "error": err,
            "width": max(w) if w else float("nan"), "history": history}


def _error(cut_offs) -> float:
    return (abs(cut_offs[0] - TRUE[0]) + abs(cut_offs[1] - TRUE[1])) / 2


def at_budget(history: list, items: int) -> tuple[float, float]:
    """Widest interval and error after the last round that fits in ``items`` graded items."""
    done = [h for h in history if h[0] <= items]
    return (done[-1][1], done[-1][2]) if done else (float("nan"), float("nan"))


def to_reach(history: list, width: float) -> float:
    """Items graded when the widest interval first got to ``width`` (nan: never within the budget)."""
    return next((h[0] for h in history if h[1] <= width), float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--pool", type=int, default=4000, help="scored items to sample from")
    ap.add_argument("--k", type=int, default=3, help="clinicians per item")
    ap.add_argument("--target", type=float, default=0.05, help="95%% interval width to reach (both cut-offs)")
    ap.add_argument("--budget", type=int, default=1000, help="items at most (x k grades)")
    ap.add_argument("--n-boot", type=int, default=100)
    ap.add_argument("--round", type=int, default=30, help="items per active round")
    ap.add_argument("--item-sd", type=float, default=0.25, help="what the metric misses (tier units)")
    ap.add_argument("--grade-sd", type=float, default=0.3, help="per-grade noise (tier units)")
    ap.add_argument("--criterion", default="kappa", choices=("kappa", "accuracy", "spearman"))
    ap.add_argument("--quick", action="store_true", help="2 runs, small budget: a smoke test of the script")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.budget, a.n_boot = 2, 300, 30
    print(f"true cut-offs {TRUE}, k = {a.k}, target 95% interval width {a.target}, budget {a.budget} items, "
          f"{a.runs} runs per distribution, criterion {a.criterion}, bootstrap {a.n_boot}, item sd {a.item_sd}, grade sd {a.grade_sd}")
    print(f"{'distribution':<22} {'strategy':<9} {'grades (median)':>15} {'reached':>8} {'error (median)':>14} "
          f"{'widest CI (median)':>18}")
    t0 = time.perf_counter()
    ratios = []
    later = []
    for name, draw in DISTRIBUTIONS.items():
        res = {"interval": [], "active": []}
        for r in range(a.runs):
            g = np.random.default_rng(1000 + r)
            scores = draw(g, a.pool)
            item_noise = g.normal(0, a.item_sd, a.pool)
            bias = g.normal(0, 0.15, a.k)
            tiers = simulate_tiers(scores, item_noise, bias, g, grade_sd=a.grade_sd)
            for strategy in res:
                res[strategy].append(run(strategy, scores, tiers, seed=r, target=a.target, budget=a.budget,
                                         n_boot=a.n_boot, round_items=a.round, criterion=a.criterion))
        for strategy, rows in res.items():
            grades = statistics.median(x["items"] for x in rows) * a.k
            print(f"{name:<22} {strategy:<9} {grades:>15.0f} {sum(x['reached'] for x in rows):>5}/{len(rows):<2} "
                  f"{statistics.median(x['error'] for x in rows):>14.3f} "
                  f"{statistics.median(x['width'] for x in rows):>18.3f}")
        ratios.append(statistics.median(x["items"] for x in res["active"])
                      / statistics.median(x["items"] for x in res["interval"]))
        for strategy, rows in res.items():
            cells = []
            for b in (300, 600, 900):
                w, e = zip(*(at_budget(x["history"], b) for x in rows))
                cells.append(f"{b}: CI {np.nanmedian(w):.3f} err {np.nanmedian(e):.3f}")
            reach = [to_reach(x["history"], 0.1) for x in rows]
            got = [r for r in reach if r == r]
            cells.append(f"to width 0.1: {statistics.median(got) * a.k:.0f} grades ({len(got)}/{len(rows)})"
                         if got else "to width 0.1: not reached")
            later.append(f"{name:<22} {strategy:<9} " + " · ".join(cells))
    print("\nAt equal budgets (items graded; median widest 95% interval and error), and grades to a 0.1 width:")
    print("\n".join(later))
    print(f"active / interval grades (median over distributions): {statistics.median(ratios):.2f} "
          f"(goal <= 0.5 at the same accuracy) · {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
