"""Calibration v3 against the paper's design, over the world and not only its centre (issue 35).

Fourteen generating models of a clinician panel, each a different hard case of the score-to-tier relation. A pool
of scored items (``--pool``) is drawn from the case's score distribution; each clinician's grade of an item is

    round(f(score) + item noise + leniency_j + grade noise), clipped to 0..2 (0..1 in the two-tier case),

where the item noise (what the metric misses) is shared by the panel, ``leniency_j`` is the clinician's own (drawn
once per panel, or fixed: a strict and a lenient clinician), and a share of grades are careless (a uniformly random
tier). The consensus tier is the panel's lower median (as the product's). **The truth** is the panel's consensus
boundary: the score where P(consensus tier >= k | score) = 0.5, computed by quadrature over the item noise for the
panel drawn; a boundary whose 0.5 point lies beyond the score range is the range's end (every score, or none,
reaches the tier), and the two-tier case has no PC|BC boundary (only CW|PC counts).

Compared by mean absolute cut-off error (the mean over the boundaries that exist; x 1000, ± its standard error
over the panels):

* ``paper N``: the paper's design -- interval sampling (N/10 items per 0.1-wide score interval, water-filled) and the
  accuracy-maximising search (:func:`medeval.calibration.estimators.accuracy_cutoffs`), N = 75, 150, 300 and 1,200;
* ``v3 N``: the product's calibration -- the adaptive design (:func:`medeval.calibration.propose_items`, rounds of
  ``--round``) and :func:`medeval.calibration.smooth_cutoffs` on every grade (``items=``: the lower median of each
  item's grades), N = 75, 150, 300; with the coverage of its 95% intervals (both boundaries, all panels) and their
  mean width.

The goal (issue 35): at 150 items the v3 error <= the paper@1200 error in every case where that is above 5 (x 1000),
and at 300 items in every case; no refusal where the search gives an answer (refusals are counted in brackets).

    nice .venv/bin/python bench/bench_calibration_v3.py                 # full run: 30 panels per case
    .venv/bin/python bench/bench_calibration_v3.py --quick              # a smoke run (2 panels per case)
    .venv/bin/python bench/bench_calibration_v3.py --cases "ties at 0;kinked"  # some cases only
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_calibration_v2 import interval_sample  # noqa: E402

from medeval.calibration import propose_items, smooth_cutoffs  # noqa: E402
from medeval.calibration.estimators import accuracy_cutoffs  # noqa: E402

PAPER_N = (75, 150, 300, 1200)
V3_N = (75, 150, 300)


def linear(a: float, b: float):
    """A clinician's latent grade rising straight through 0.5 at score a and 1.5 at score b."""
    return lambda s: 0.5 + (np.asarray(s, dtype=float) - a) / (b - a)


def kinked(a: float, b: float, steep: float = 8.0, shallow: float = 2.0):
    """Steep just below each of a and b, shallow just above (a demo-like clinician): a monotone polyline through
    (a, 0.5) and (b, 1.5)."""
    m = (1.0 - steep * b + shallow * a) / (shallow - steep)  # where the shallow run from a meets the steep one to b
    m = min(max(m, a), b)
    xs = np.array([-1.0, a, m, b, 2.0])
    ys = np.array([0.5 - steep * (a + 1.0), 0.5, 0.5 + shallow * (m - a), 1.5, 1.5 + shallow * (2.0 - b)])
    return lambda s: np.interp(np.asarray(s, dtype=float), xs, ys)


def power(s):
    return 2 * np.asarray(s, dtype=float) ** 1.8


def ties(at: float, share: float, rest):
    """A share of the scores exactly ``at`` (0 or 1: an answer that shares nothing, or the reference itself)."""
    return lambda g, n: np.where(g.random(n) < share, at, rest(g, n))


BETA23 = lambda g, n: g.beta(2, 3, n)  # noqa: E731
UNIFORM = lambda g, n: g.uniform(0, 1, n)  # noqa: E731
MIXTURE = lambda g, n: np.where(g.random(n) < 0.55, g.beta(2, 9, n), g.beta(7, 3, n))  # noqa: E731
LOGI = (stats.logistic(scale=0.15), stats.logistic(scale=0.12))
NORM = (stats.norm(scale=0.2), stats.norm(scale=0.2))


# case: f, (item noise, grade noise), lapse, leniency (sd of a random one per clinician, or fixed values),
# panel size, score distribution, top tier
CASES = {
    "centre, logistic": (linear(0.35, 0.62), LOGI, 0.0, 0.15, 3, BETA23, 2),
    "linear ramps": (linear(0.35, 0.62), (stats.uniform(-0.45, 0.9), stats.uniform(-0.2, 0.4)), 0.0, 0.15, 3,
                     UNIFORM, 2),
    "uneven + 5% lapses": (power, NORM, 0.05, 0.15, 3, MIXTURE, 2),
    "low end (0.05)": (linear(0.05, 0.45), LOGI, 0.0, 0.15, 3, BETA23, 2),
    "high end (0.95)": (linear(0.55, 0.95), LOGI, 0.0, 0.15, 3, lambda g, n: g.beta(3, 2, n), 2),
    "ties at 0": (linear(-0.02, 0.5), (stats.norm(scale=0.1), stats.norm(scale=0.1)), 0.0, 0.1, 3,
                  ties(0.0, 0.3, lambda g, n: g.beta(1.5, 3, n)), 2),
    "ties at 1": (linear(0.35, 0.97), (stats.norm(scale=0.1), stats.norm(scale=0.1)), 0.0, 0.1, 3,
                  ties(1.0, 0.2, lambda g, n: g.beta(3, 1.5, n)), 2),
    "step-like": (linear(0.3, 0.6), (stats.norm(scale=0.01), stats.norm(scale=0.02)), 0.0, 0.0, 3, UNIFORM, 2),
    "kinked": (kinked(0.25, 0.6), NORM, 0.0, 0.15, 3, UNIFORM, 2),
    "kinked, low end (0.06)": (kinked(0.06, 0.5), NORM, 0.0, 0.15, 3, BETA23, 2),
    "two tiers": (linear(0.4, 0.9), LOGI, 0.0, 0.15, 3, UNIFORM, 1),
    "strict + lenient, kinked": (kinked(0.25, 0.6), NORM, 0.0, (-0.35, 0.35), 2, UNIFORM, 2),
    "strict, middle, lenient, kinked": (kinked(0.25, 0.6), NORM, 0.0, (-0.35, 0.0, 0.35), 3, UNIFORM, 2),
    "5 clinicians, 10% lapses": (linear(0.35, 0.62), LOGI, 0.10, 0.2, 5, BETA23, 2),
}


def leniencies(case: str, g) -> np.ndarray:
    _, _, _, len_, size, _, _ = CASES[case]
    return np.asarray(len_, dtype=float) if isinstance(len_, tuple) else g.normal(0, len_, size)


def panel_grades(case: str, scores: np.ndarray, leniency: np.ndarray, g) -> np.ndarray:
    """Every clinician's grade of every pool item: [items, clinicians]."""
    f, (item, grade), lapse, _, _, _, top = CASES[case]
    n = len(scores)
    x = (f(scores) + item.rvs(size=n, random_state=g))[:, None] + leniency[None, :] + \
        grade.rvs(size=(n, len(leniency)), random_state=g)
    t = np.clip(np.rint(x), 0, top).astype(int)
    careless = g.random(t.shape) < lapse
    t[careless] = g.integers(0, top + 1, int(careless.sum()))
    return t


def lower_median(grades: np.ndarray) -> np.ndarray:
    return np.sort(grades, axis=1)[:, (grades.shape[1] - 1) // 2]


def true_cutoffs(case: str, leniency: np.ndarray) -> tuple[float, float | None]:
    """The scores where P(lower-median tier >= k | score) = 0.5 for this panel; the range's end when the 0.5 point
    lies beyond it; None for a boundary the case does not have."""
    f, (item, grade), lapse, _, _, _, top = CASES[case]
    u = np.linspace(item.ppf(1e-7), item.ppf(1 - 1e-7), 4001)
    wu = item.pdf(u)
    wu = wu / wu.sum()
    size = len(leniency)
    need = size - (size - 1) // 2  # the lower median reaches k when this many grades do

    def p_reach(s: float, k: int) -> float:
        x = f(s) + u[:, None] + leniency[None, :]
        q = (1 - lapse) * grade.sf(k - 0.5 - x) + lapse * (top + 1 - k) / (top + 1)
        dist = np.zeros((len(u), size + 1))  # P(j grades reach k), clinician by clinician
        dist[:, 0] = 1.0
        for j in range(size):
            dist[:, 1:] = dist[:, 1:] * (1 - q[:, j:j + 1]) + dist[:, :-1] * q[:, j:j + 1]
            dist[:, 0] *= 1 - q[:, j]
        return float(dist[:, need:].sum(axis=1) @ wu) - 0.5

    out = []
    for k in (1, 2):
        if k > top:
            out.append(None)
        elif p_reach(0.0, k) >= 0:
            out.append(0.0)
        elif p_reach(1.0, k) < 0:
            out.append(1.0)
        else:
            out.append(float(brentq(p_reach, 0.0, 1.0, args=(k,), xtol=1e-7)))
    return out[0], out[1]


def error(est, truth) -> float:
    errs = [abs(e - t) for e, t in zip(est, truth) if t is not None]
    return float(np.mean(errs))


def v3(scores, grades, truth):
    """The product's estimate on these items' grades: (error, refused, [covered per boundary], [widths], signed
    error per boundary (None where the case has no such boundary))."""
    size = grades.shape[1]
    fit = smooth_cutoffs(np.repeat(scores, size), grades.ravel(), items=np.repeat(np.arange(len(scores)), size),
                         ci=True)
    bs = (fit.low, fit.high)
    cuts = [b.cutoff if b.cutoff is not None else 0.5 for b in bs]
    refused = any(b.cutoff is None for b, t in zip(bs, truth) if t is not None)
    covered, widths = [], []
    for b, t in zip(bs, truth):
        if t is None or b.ci is None:
            continue
        covered.append(b.ci[0] - 1e-9 <= t <= b.ci[1] + 1e-9)
        widths.append(b.ci[1] - b.ci[0])
    signed = [None if t is None else c - t for c, t in zip(cuts, truth)]
    return error(cuts, truth), refused, covered, widths, signed


def panel(case: str, rep: int, pool_n: int):
    """One simulated panel of ``case``: the pool's scores, every clinician's grade, the consensus tiers, the truth."""
    g = np.random.default_rng([list(CASES).index(case), rep, 35])
    scores = CASES[case][5](g, pool_n)
    leniency = leniencies(case, g)
    grades = panel_grades(case, scores, leniency, g)
    return scores, grades, lower_median(grades), true_cutoffs(case, leniency)


def replicate(args) -> dict:
    case, rep, pool_n, round_n = args
    scores, grades, tiers, truth = panel(case, rep, pool_n)
    out = {"case": case, "truth": truth}
    for n in PAPER_N:
        pick = interval_sample(scores, n, np.random.default_rng([rep, n]))
        try:
            out[("paper", n)] = (error(accuracy_cutoffs(scores[pick], tiers[pick]), truth), False, [], [], [])
        except Exception:  # noqa: BLE001 -- a refusal is counted, not raised
            out[("paper", n)] = (error((0.5, 0.5), truth), True, [], [], [])
    rng = np.random.default_rng([rep, 7])
    graded = np.zeros(0, dtype=int)
    for n in V3_N:
        while len(graded) < n:
            new = propose_items(scores, graded, tiers[graded], min(round_n, n - len(graded)), rng)
            graded = np.concatenate([graded, new])
        out[("v3", n)] = v3(scores[graded], grades[graded], truth)
    return out


def stopping(args) -> dict:
    """One panel graded round by round (the adaptive design, the product's rounds) until both 95% intervals are at
    most ``width`` wide -- the product's stopping rule (``--target-width``) -- or ``budget`` items are graded."""
    case, rep, pool_n, round_n, width, budget = args
    scores, grades, tiers, truth = panel(case, rep, pool_n)
    rng = np.random.default_rng([rep, 7])
    graded = np.zeros(0, dtype=int)
    while len(graded) < budget:
        graded = np.concatenate([graded, propose_items(scores, graded, tiers[graded], round_n, rng)])
        err, _, covered, widths, _ = v3(scores[graded], grades[graded], truth)
        if len(widths) == sum(t is not None for t in truth) and max(widths) <= width:
            return {"case": case, "stopped": True, "n": len(graded), "error": err, "covered": covered}
    return {"case": case, "stopped": False, "n": len(graded), "error": err, "covered": covered}


def stopping_table(results, width: float, budget: int) -> list[str]:
    lines = [f"| case | stopped by width {width} within {budget} | items at the stop (median, range) | error at the "
             "stop x 1000 | 95% intervals covering the truth at the stop |", "|---|---|---|---|---|"]
    for case in CASES:
        rows = [r for r in results if r["case"] == case]
        if not rows:
            continue
        n = [r["n"] for r in rows if r["stopped"]]
        cov = [x for r in rows for x in r["covered"]]
        e = np.array([r["error"] for r in rows])
        lines.append(f"| {case} | {sum(r['stopped'] for r in rows)}/{len(rows)} | "
                     + (f"{int(np.median(n))} ({min(n)}-{max(n)})" if n else "–")
                     + f" | {1000 * e.mean():.1f} ± {1000 * e.std(ddof=1) / np.sqrt(len(e)):.1f} | "
                     f"{100 * np.mean(cov):.0f}% |")
    return lines


def table(results, columns) -> list[str]:
    lines = ["| case | truth (mean) | " + " | ".join(f"{d} {n}" for d, n in columns)
             + " | v3 95% coverage 75/150/300 | v3 mean width 150 | v3 bias 300 (low, high) | goal 150 | goal 300 |",
             "|" + "---|" * (len(columns) + 7)]
    met = [0, 0]
    for case in CASES:
        rows = [r for r in results if r["case"] == case]
        if not rows:
            continue
        lo = np.mean([r["truth"][0] for r in rows])
        hi = [r["truth"][1] for r in rows]
        truth = f"{lo:.3f}, " + (f"{np.mean(hi):.3f}" if hi[0] is not None else "–")
        means, cells = {}, []
        for col in columns:
            e = np.array([r[col][0] for r in rows])
            fails = sum(r[col][1] for r in rows)
            se = e.std(ddof=1) / np.sqrt(len(e)) if len(e) > 1 else float("nan")
            means[col] = (e.mean(), se)
            cells.append(f"{1000 * e.mean():.1f} ± {1000 * se:.1f}" + (f" [{fails}]" if fails else ""))
        cover = []
        for n in V3_N:
            c = [x for r in rows for x in r[("v3", n)][2]]
            cover.append(f"{100 * np.mean(c):.0f}%" if c else "–")
        w = [x for r in rows for x in r[("v3", 150)][3]]
        bias = [np.mean([r[("v3", 300)][4][k] for r in rows]) if rows[0][("v3", 300)][4][k] is not None else None
                for k in (0, 1)]
        paper = means[("paper", 1200)][0]
        ok150 = paper <= 0.005 or means[("v3", 150)][0] <= paper
        ok300 = means[("v3", 300)][0] <= paper
        met[0] += ok150
        met[1] += ok300
        lines.append(f"| {case} | {truth} | " + " | ".join(cells) + f" | {' / '.join(cover)} | "
                     f"{np.mean(w) if w else float('nan'):.3f} | "
                     + ", ".join("–" if b is None else f"{1000 * b:+.1f}" for b in bias)
                     + f" | {'yes' if ok150 else 'NO'} | "
                     f"{'yes' if ok300 else 'NO'} |")
    n_cases = len({r["case"] for r in results})
    lines.append(f"\ngoal at 150 met in {met[0]}/{n_cases} cases, at 300 in {met[1]}/{n_cases}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=30, help="panels per case")
    ap.add_argument("--pool", type=int, default=20000, help="scored items in the pool")
    ap.add_argument("--round", type=int, default=20, help="items per adaptive round (the product's --round-size)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cases", default="", help="case names separated by semicolons (default: all)")
    ap.add_argument("--quick", action="store_true", help="2 panels per case, a pool of 5,000: a smoke run")
    ap.add_argument("--stopping", type=float, default=None, metavar="WIDTH",
                    help="instead: grade round by round until both 95%% intervals are at most WIDTH wide (the "
                         "product's --target-width) or --budget items, and print where each case stops")
    ap.add_argument("--budget", type=int, default=600, help="the items a stratum may grade with --stopping")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.pool = 2, 5000
    cases = [c.strip() for c in a.cases.split(";") if c.strip()] or list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; the cases: {', '.join(CASES)}")
    t0 = time.perf_counter()
    if a.stopping is not None:
        jobs = [(c, r, a.pool, a.round, a.stopping, a.budget) for c in cases for r in range(a.reps)]
        with ProcessPoolExecutor(max(a.workers, 1)) as ex:
            results = list(ex.map(stopping, jobs, chunksize=1))
        print(f"{a.reps} panels per case, pool {a.pool}, adaptive rounds of {a.round}, stop when both 95% intervals "
              f"are at most {a.stopping} wide or {a.budget} items are graded\n")
        print("\n".join(stopping_table(results, a.stopping, a.budget)))
        print(f"{time.perf_counter() - t0:.0f} s with {a.workers} worker(s)")
        return
    jobs = [(c, r, a.pool, a.round) for c in cases for r in range(a.reps)]
    if a.workers > 1:
        with ProcessPoolExecutor(a.workers) as ex:
            results = list(ex.map(replicate, jobs, chunksize=2))
    else:
        results = [replicate(j) for j in jobs]
    columns = [("paper", n) for n in PAPER_N] + [("v3", n) for n in V3_N]
    print(f"{a.reps} panels per case, pool {a.pool}, adaptive rounds of {a.round}; mean absolute cut-off error "
          "x 1000 ± its standard error; refusals (a cut-off not given) in brackets\n")
    print("\n".join(table(results, columns)))
    print(f"{time.perf_counter() - t0:.0f} s with {a.workers} worker(s)")


if __name__ == "__main__":
    main()
