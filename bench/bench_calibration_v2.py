"""Simulation: the paper's calibration design vs calibration v2 (smooth estimator, adaptive design), issue 24.

A pool of scored items (``--pool``) is drawn from one of three score distributions; a simulated panel of 3
clinicians tiers every item (revealed only when a design asks for it). Each clinician's grade is
``round(f(score) + item noise + leniency_j + grade noise)`` clipped to 0..2, where the item noise (what the
metric misses) is shared by the panel, ``leniency_j`` is drawn once per panel, and, in one model, 5% of grades
are careless (a uniformly random tier). The consensus tier is the panel's median. Three generating models:

* ``logistic``: f linear (0.35 -> 0.5, 0.62 -> 1.5), logistic item and grade noise;
* ``linear ramps``: f linear, uniform item and grade noise (P(tier >= k | score) is made of straight ramps);
* ``uneven + 5% lapses``: f(s) = 2 s^1.8 (a shallow CW|PC boundary, a steep PC|BC one, each curve skewed),
  normal noise, 5% careless grades.

The truth is the panel's own Bayes boundary: the score where P(consensus tier >= k | score) = 0.5, computed by
quadrature over the item noise for the panel drawn (so each replication has its own truth).

Compared, by mean absolute cut-off error (the mean of the low and the high cut-off's |error|, averaged over
replications, with its standard error), at N items graded (each by the 3-clinician panel):

* ``paper``: interval sampling (N/10 items per 0.1-wide score interval; an interval with too few items gives
  what it has and the rest is spread over the others) + the accuracy-maximising search, N = 100, 300, 600, 1200;
* ``smooth/interval``: the same samples, the smooth estimator (:func:`medeval.calibration.smooth_cutoffs`) on every
  clinician's grade with its item (``--fit each``, the default) or on the consensus tier of each item (``--fit
  consensus``); since calibration v3 both are the same fit (it takes each item's lower median itself);
* ``smooth/adaptive``: :func:`medeval.calibration.propose_items` in rounds of ``--round`` items from nothing
  graded, the smooth estimator, N = 50, 100, 150, 200, 300.

The bar (issue 24): smooth/adaptive at 150 no worse than paper at 1200, in every model x distribution cell.

    nice .venv/bin/python bench/bench_calibration_v2.py            # full run (~10 min on 2 cores)
    .venv/bin/python bench/bench_calibration_v2.py --quick         # a smoke run (seconds)
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy import stats
from scipy.optimize import brentq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from medeval.calibration import propose_items, smooth_cutoffs  # noqa: E402
from medeval.calibration.estimators import accuracy_cutoffs  # noqa: E402

PAPER_N = (100, 300, 600, 1200)
ADAPTIVE_N = (50, 100, 150, 200, 300)
LENIENCY_SD = 0.15

DISTRIBUTIONS = {
    "beta(2,3)": lambda g, n: g.beta(2, 3, n),
    "uniform": lambda g, n: g.uniform(0, 1, n),
    "mixture": lambda g, n: np.where(g.random(n) < 0.55, g.beta(2, 9, n), g.beta(7, 3, n)),
}


def _linear(s):
    return 0.5 + (np.asarray(s) - 0.35) / 0.27


def _power(s):
    return 2 * np.asarray(s) ** 1.8


# model: (f, item noise, grade noise, lapse); noises as scipy distributions (sampled and integrated)
MODELS = {
    "logistic": (_linear, stats.logistic(scale=0.15), stats.logistic(scale=0.12), 0.0),
    "linear ramps": (_linear, stats.uniform(-0.45, 0.9), stats.uniform(-0.2, 0.4), 0.0),
    "uneven + 5% lapses": (_power, stats.norm(scale=0.2), stats.norm(scale=0.2), 0.05),
}


def panel_grades(model: str, scores: np.ndarray, leniency: np.ndarray, g) -> np.ndarray:
    """Every clinician's grade of every pool item: [items, clinicians]."""
    f, item, grade, lapse = MODELS[model]
    n = len(scores)
    base = f(scores) + item.rvs(size=n, random_state=g)
    x = base[:, None] + leniency[None, :] + grade.rvs(size=(n, len(leniency)), random_state=g)
    t = np.clip(np.rint(x), 0, 2).astype(int)
    careless = g.random(t.shape) < lapse
    t[careless] = g.integers(0, 3, int(careless.sum()))
    return t


def panel_tiers(model: str, scores: np.ndarray, leniency: np.ndarray, g) -> np.ndarray:
    """The panel's consensus tier (median of 3) of every pool item."""
    t = panel_grades(model, scores, leniency, g)
    return np.sort(t, axis=1)[:, len(leniency) // 2]


def true_cutoffs(model: str, leniency: np.ndarray) -> tuple[float, float]:
    """The scores where P(consensus tier >= k | score) = 0.5 for this panel (quadrature over the item noise)."""
    f, item, grade, lapse = MODELS[model]
    u = np.linspace(item.ppf(1e-7), item.ppf(1 - 1e-7), 4001)
    wu = item.pdf(u)
    wu = wu / wu.sum()

    def p_reach(s: float, k: int) -> float:
        # each clinician's P(grade >= k | s, u), careless grades included (2 of 3 tiers reach 1, 1 of 3 reaches 2)
        x = f(s) + u[:, None] + leniency[None, :]
        q = (1 - lapse) * grade.sf(k - 0.5 - x) + lapse * (3 - k) / 3
        q1, q2, q3 = q[:, 0], q[:, 1], q[:, 2]
        return float((q1 * q2 + q1 * q3 + q2 * q3 - 2 * q1 * q2 * q3) @ wu) - 0.5  # the median reaches k

    return tuple(float(brentq(p_reach, 0.0, 1.0, args=(k,), xtol=1e-7)) for k in (1, 2))


def interval_sample(scores: np.ndarray, n: int, g) -> np.ndarray:
    """n pool positions, as even as the pool allows over the ten 0.1-wide intervals (the paper's design)."""
    bins = np.minimum((scores * 10).astype(int), 9)
    members = [g.permutation(np.flatnonzero(bins == b)) for b in range(10)]
    take = np.zeros(10, dtype=int)
    left = n
    while left > 0:  # water-filling: an interval with too few items gives them all, the rest is shared
        open_ = [b for b in range(10) if take[b] < len(members[b])]
        if not open_:
            break
        share = max(left // len(open_), 1)
        for b in open_:
            add = min(share, len(members[b]) - take[b], left)
            take[b] += add
            left -= add
            if left == 0:
                break
    return np.concatenate([m[:k] for m, k in zip(members, take)])


def _error(est, truth) -> float:
    return (abs(est[0] - truth[0]) + abs(est[1] - truth[1])) / 2


def _smooth(scores, tiers, grades=None):
    """The smooth estimate, and whether it failed (crossed: the fitted values; not fitted: the range's middle).
    ``grades`` ([items, clinicians]): every clinician's grade, combined per item by the estimator itself."""
    if grades is not None:
        k = grades.shape[1]
        fit = smooth_cutoffs(np.repeat(scores, k), grades.ravel(), items=np.repeat(np.arange(len(scores)), k),
                             ci=False)
    else:
        fit = smooth_cutoffs(scores, tiers, ci=False)
    cuts = [b.cutoff if b.cutoff is not None else 0.5 for b in (fit.low, fit.high)]
    return cuts, fit.low.status != "ok" or fit.high.status != "ok"


def replicate(args) -> dict:
    model, dist, rep, pool_n, round_n, each = args
    g = np.random.default_rng([list(MODELS).index(model), list(DISTRIBUTIONS).index(dist), rep])
    scores = DISTRIBUTIONS[dist](g, pool_n)
    leniency = g.normal(0, LENIENCY_SD, 3)
    grades = panel_grades(model, scores, leniency, g)
    tiers = np.sort(grades, axis=1)[:, grades.shape[1] // 2]
    truth = true_cutoffs(model, leniency)
    out = {"model": model, "dist": dist, "truth": truth}
    for n in PAPER_N:
        pick = interval_sample(scores, n, np.random.default_rng([rep, n]))
        out[("paper", n)] = (_error(accuracy_cutoffs(scores[pick], tiers[pick]), truth), False)
        cuts, failed = _smooth(scores[pick], tiers[pick], grades[pick] if each else None)
        out[("smooth/interval", n)] = (_error(cuts, truth), failed)
    rng = np.random.default_rng([rep, 7])
    graded = np.zeros(0, dtype=int)
    for n in ADAPTIVE_N:
        while len(graded) < n:
            new = propose_items(scores, graded, tiers[graded], min(round_n, n - len(graded)), rng)
            graded = np.concatenate([graded, new])
        cuts, failed = _smooth(scores[graded], tiers[graded], grades[graded] if each else None)
        out[("smooth/adaptive", n)] = (_error(cuts, truth), failed)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=60, help="replications per model x distribution cell")
    ap.add_argument("--pool", type=int, default=20000, help="scored items in the pool")
    ap.add_argument("--round", type=int, default=20, help="items per adaptive round (default: the product's, --round-size 20)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="3 replications per cell: a smoke run of the script")
    ap.add_argument("--fit", choices=("each", "consensus"), default="each",
                    help="what the smooth estimator is given: each clinician's grade with its item (the product's, "
                         "default) or the consensus tier per item")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.pool = 3, 5000
    t0 = time.perf_counter()
    each = a.fit == "each"
    jobs = [(m, d, r, a.pool, a.round, each) for m in MODELS for d in DISTRIBUTIONS for r in range(a.reps)]
    if a.workers > 1:
        with ProcessPoolExecutor(a.workers) as ex:
            results = list(ex.map(replicate, jobs, chunksize=4))
    else:
        results = [replicate(j) for j in jobs]
    columns = [("paper", n) for n in PAPER_N] + [("smooth/interval", n) for n in PAPER_N] + \
              [("smooth/adaptive", n) for n in ADAPTIVE_N]
    print(f"{a.reps} replications per cell, pool {a.pool}, panel of 3, adaptive rounds of {a.round}, smooth fit on "
          f"{'each clinician' + chr(39) + 's grade' if each else 'the consensus tiers'}; "
          "mean absolute cut-off error (x 1000, ± its standard error); failures (a cut-off not fitted or crossed) "
          "in brackets")
    print("\n| model | distribution | true cut-offs (mean) | " + " | ".join(f"{d} {n}" for d, n in columns)
          + " | bar: adaptive 150 <= paper 1200 |")
    print("|" + "---|" * (len(columns) + 4))
    met = 0
    for m in MODELS:
        for d in DISTRIBUTIONS:
            rows = [r for r in results if r["model"] == m and r["dist"] == d]
            tl = np.mean([r["truth"][0] for r in rows])
            th = np.mean([r["truth"][1] for r in rows])
            cells, means = [], {}
            for col in columns:
                e = np.array([r[col][0] for r in rows])
                fails = sum(r[col][1] for r in rows)
                means[col] = (e.mean(), e.std(ddof=1) / np.sqrt(len(e)) if len(e) > 1 else float("nan"))
                cells.append(f"{1000 * e.mean():.1f} ± {1000 * means[col][1]:.1f}" + (f" [{fails}]" if fails else ""))
            ok = means[("smooth/adaptive", 150)][0] <= means[("paper", 1200)][0]
            met += ok
            print(f"| {m} | {d} | {tl:.3f}, {th:.3f} | " + " | ".join(cells) + f" | {'yes' if ok else 'NO'} |")
    print(f"\nbar met in {met}/{len(MODELS) * len(DISTRIBUTIONS)} cells · {time.perf_counter() - t0:.0f} s "
          f"with {a.workers} worker(s)")


if __name__ == "__main__":
    main()
