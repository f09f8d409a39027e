"""Active calibration sampling: grade next where a grade most narrows the cut-offs.

The paper (MedDisKEval §3.2.2) samples a fixed number of items per 0.1-wide score
interval. Most of those items lie far from either cut-off and barely move it. Here the
sample is drawn in rounds instead:

1. a small **seed round** per score interval (every region of the range is looked at once);
2. after each round, the cut-offs are calibrated on everything graded so far
   (:func:`medeval.calibration.cutoffs.calibrate`'s exhaustive search) and **bootstrapped over
   items**: each resample's optimal (low, high) pair is kept;
3. the next round draws items **in proportion to how much of the bootstrap distribution of
   either cut-off lies at their score** (a Gaussian kernel over the resampled cut-offs; the two
   cut-offs weigh the same), plus a share drawn uniformly over the score intervals still holding
   ungraded items (``explore``) so that a cut-off the seed round missed can still be found;
4. **stop** when both cut-offs' 95% bootstrap intervals are at most ``target_width`` wide,
   or when the budget of graded items is spent.

Everything is seeded; the functions are pure (numbers in, numbers out), so the same code runs
in a campaign's rounds and in ``bench/bench_active_sampling.py``'s simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medeval.calibration.cutoffs import _candidates, _optimise
from medeval.core.errors import MedevalError
from medeval.engine import thresholds as th
from medeval.engine.registry import METRICS, get_metric


@dataclass(frozen=True)
class CutoffSpread:
    """The cut-offs on the graded items and their bootstrap distribution."""

    cut_offs: tuple[float, float] | None
    lows: np.ndarray  # each resample's optimal low cut-off
    highs: np.ndarray
    n: int

    def ci95(self, which: str) -> tuple[float, float] | None:
        values = self.lows if which == "low" else self.highs
        if len(values) == 0:
            return None
        return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))

    def widths(self) -> tuple[float, float] | None:
        """The widths of the low and the high cut-off's 95% intervals (None before anything is learnt)."""
        lo, hi = self.ci95("low"), self.ci95("high")
        if lo is None or hi is None:
            return None
        return lo[1] - lo[0], hi[1] - hi[0]


def optimal_accuracy_cuts(scores: np.ndarray, tiers: np.ndarray, low: float, high: float) -> tuple[float, float]:
    """The accuracy-optimal cut-offs, exactly as ``cutoffs._optimise(..., "accuracy")`` picks them, in O(n log n).

    Accuracy separates: with ``i`` items below the low cut and ``j`` below the high one (sorted by score),
    the correct count is ``(P0[i] - P1[i]) + (P1[j] - P2[j] + N2)`` (``Pt[k]``: items of tier t among the
    first k). So for every high split the best low split is a running maximum, not a search over all pairs
    -- what lets the bootstrap of a round run hundreds of times on thousands of items. Ties are broken as
    the exhaustive search does: the widest middle tier, then the first pair in (low, high) order.
    """
    scores = th.canonical_array(scores)  # the comparison rule, as in cutoffs._optimise
    order = np.argsort(scores, kind="stable")
    s, t = scores[order], tiers[order]
    prefix = np.zeros((len(s) + 1, 3), dtype=np.int64)
    prefix[1:] = np.cumsum(np.eye(3, dtype=np.int64)[t], axis=0)
    idx, cuts = _candidates(s, low, high)
    f = prefix[idx, 0] - prefix[idx, 1]
    g = prefix[idx, 1] - prefix[idx, 2] + prefix[-1, 2]
    run = np.maximum.accumulate(f)
    # the first low split reaching the running maximum: the widest middle tier for each high split
    new_max = np.concatenate([[True], run[1:] > run[:-1]])
    first = np.maximum.accumulate(np.where(new_max, np.arange(len(f)), 0))
    value = run + g
    best = np.nonzero(value == value.max())[0]
    margin = cuts[best] - cuts[first[best]]
    wide = best[margin == margin.max()]
    a, b = first[wide], wide
    k = np.lexsort((b, a))[0]  # the first pair in (low, high) order
    return float(cuts[a[k]]), float(cuts[b[k]])


def _cuts(scores: np.ndarray, tiers: np.ndarray, low: float, high: float, criterion: str):
    if criterion == "accuracy":
        return optimal_accuracy_cuts(scores, tiers, low, high)
    r = _optimise(scores, tiers, low, high, criterion)
    return None if r is None else r["cut_offs"]


def spread(metric: str, scores, tiers, *, criterion: str = "kappa", n_boot: int = 200, rng=0) -> CutoffSpread:
    """Calibrate on (score, consensus tier) pairs and bootstrap the optimum ``n_boot`` times over items."""
    info = METRICS[get_metric(metric).name]
    scores = np.asarray(scores, dtype=float)
    tiers = np.asarray(tiers, dtype=int)
    if scores.shape != tiers.shape:
        raise MedevalError("scores and tiers differ in length")
    n = len(scores)
    empty = np.array([], dtype=float)
    if n < 3 or len(set(tiers.tolist())) < 2:
        return CutoffSpread(None, empty, empty, n)
    best = _cuts(scores, tiers, info.low, info.high, criterion)
    if best is None:
        return CutoffSpread(None, empty, empty, n)
    g = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    lows, highs = [], []
    for _ in range(n_boot):
        pick = g.integers(0, n, n)
        r = _cuts(scores[pick], tiers[pick], info.low, info.high, criterion)
        if r is not None:
            lows.append(r[0])
            highs.append(r[1])
    return CutoffSpread(best, np.array(lows), np.array(highs), n)


def interval_of(metric: str, scores: np.ndarray, width: float) -> np.ndarray:
    """Index of each score's ``width``-wide interval over the metric's range (the top end in the last one).

    A score on an interval's lower end belongs to it by the comparison rule (:mod:`medeval.engine.cutoff_rule`):
    0.3 is in [0.3, 0.4) although (0.3 - 0) / 0.1 is 2.9999999999999996 in floating point.
    """
    info = METRICS[get_metric(metric).name]
    n = int(round((info.high - info.low) / width))
    starts = [th.reach_bound(info.low + k * width) for k in range(1, n)]  # each interval's lower end, k >= 1
    return np.searchsorted(np.array(starts, dtype=float), np.asarray(scores, dtype=float), side="right")


def interval_sample(metric: str, scores, available: np.ndarray, *, per_interval: int, width: float = 0.1,
                    rng=0) -> np.ndarray:
    """Up to ``per_interval`` of the ``available`` pool positions from each score interval (the paper's design)."""
    g = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    scores = np.asarray(scores, dtype=float)
    bins = interval_of(metric, scores[available], width)
    picked = []
    for b in np.unique(bins):
        members = available[bins == b]
        take = min(per_interval, len(members))
        picked.extend(g.choice(members, size=take, replace=False).tolist())
    return np.array(sorted(picked), dtype=int)


def weights(scores: np.ndarray, s: CutoffSpread, *, bandwidth: float | None = None) -> np.ndarray:
    """How much of each cut-off's bootstrap distribution lies at each score (Gaussian kernel; sums to 1)."""
    scores = np.asarray(scores, dtype=float)
    total = np.zeros(len(scores))
    for values in (s.lows, s.highs):
        if len(values) == 0:
            continue
        # Silverman's rule, floored so that a resample distribution piled on one value still spreads a little
        h = bandwidth or max(1.06 * float(np.std(values)) * len(values) ** -0.2, 0.01)
        d = (scores[:, None] - values[None, :]) / h
        dens = np.exp(-0.5 * d * d).mean(axis=1)
        if dens.sum() > 0:
            total += dens / dens.sum()  # each cut-off weighs the same
    if total.sum() == 0:
        return np.full(len(scores), 1.0 / max(len(scores), 1))
    return total / total.sum()


def propose(metric: str, scores, graded: np.ndarray, s: CutoffSpread | None, *, m: int, width: float = 0.1,
            explore: float = 0.2, rng=0) -> np.ndarray:
    """Pool positions of the next ``m`` items to grade (none graded twice).

    ``scores`` are the whole pool's scores, ``graded`` the positions already in the campaign. Without a
    cut-off estimate yet (``s`` None or undefined) the round is an interval sample.
    """
    if m < 1:
        raise MedevalError("a round needs at least one item")
    if not 0 <= explore <= 1:
        raise MedevalError("explore is a share between 0 and 1")
    g = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    scores = np.asarray(scores, dtype=float)
    free = np.setdiff1d(np.arange(len(scores)), np.asarray(graded, dtype=int))
    if len(free) == 0:
        return np.array([], dtype=int)
    m = min(m, len(free))
    if s is None or s.cut_offs is None:
        n_bins = len(np.unique(interval_of(metric, scores[free], width)))
        out = interval_sample(metric, scores, free, per_interval=max(1, -(-m // n_bins)), width=width, rng=g)
        return out[:m] if len(out) > m else out
    n_explore = int(round(m * explore))
    w = weights(scores[free], s)
    targeted = g.choice(free, size=min(m - n_explore, int(np.count_nonzero(w))), replace=False, p=w) \
        if m - n_explore > 0 else np.array([], dtype=int)
    rest = np.setdiff1d(free, targeted)
    if n_explore and len(rest):
        bins = interval_of(metric, scores[rest], width)
        # uniform over the intervals that still hold ungraded items, then uniform within the interval
        p = 1.0 / np.bincount(bins)[bins]
        extra = g.choice(rest, size=min(n_explore, len(rest)), replace=False, p=p / p.sum())
        targeted = np.concatenate([targeted, extra])
    return np.sort(targeted.astype(int))


def should_stop(s: CutoffSpread | None, *, n_graded: int, budget: int, target_width: float) -> str | None:
    """Why to stop now ('target' or 'budget'), or None to grade another round."""
    if n_graded >= budget:
        return "budget"
    if s is not None and s.cut_offs is not None:
        w = s.widths()
        if w is not None and th.reaches(target_width, max(w)):  # a width on the target meets it
            return "target"
    return None
