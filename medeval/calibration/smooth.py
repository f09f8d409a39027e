"""The smooth cut-off estimator: a psychometric curve per boundary, its 0.5 crossing and a 95% interval.

For each boundary k (k = 1: CW|PC, k = 2: PC|BC) each graded item says whether its consensus tier reaches k.
Psychophysics fits such yes/no data with a psychometric function that allows for lapses (a careless grade far
from the threshold); here, per boundary,

    P(consensus tier >= k | score) = lapse / 2 + (1 - lapse) * logistic((score - cutoff) / width_side)

with ``cutoff`` the score where the curve crosses 0.5 (the lapse is symmetric, so the crossing is ``cutoff``
whatever the lapse); ``width_side`` > 0 (the curve only rises with the score) is the width below the cut-off or the
one above it -- a split logistic, ``width * exp(-/+ skew / 2)``, so a curve that rises slowly on one side and fast
on the other (a kink, uneven slopes) does not drag the crossing; and ``lapse`` in [0, 0.3]. The fit maximises
the likelihood with weak priors on the width, the skew and the lapse (which keep a small or perfectly separated
sample finite); the 95% interval is the profile-likelihood one (every other parameter re-fitted at each trial
cut-off; chi-square with 1 df), so it narrows as grades accumulate.

**Several clinicians.** With ``items`` (one id per grade) the grades of one item become its consensus tier, the
lower median (the calibration's consensus since MedDisKEval), and the curves are fitted to one tier per item: the
cut-offs are the panel's consensus boundaries, the same whether the panel is lenient, strict or mixed (a
per-clinician model targets the average clinician instead, which a strict and a lenient clinician pull away from
the consensus). Without ``items`` each tier is an item's (already a consensus, or one clinician's).

**The range's ends.** A curve that is already past 0.5 at the low end of the score range (or not yet at the high
end) puts its cut-off at that end, status ``ok`` and ``at_end`` saying so: every score (or none below the top)
reaches the tier, as the accuracy search's end cut-offs do. A crossing between the graded scores and the range's
end is kept; its interval says how far the grades bound it.

**Crossed fits.** When the CW|PC crossing lies above the PC|BC one (the partially correct band is narrower than
these grades resolve) both are fitted again with one shared cut-off (the one that maximises the two curves' joint
likelihood): no score range is graded partially correct, and ``reason`` says so.

**Undetermined.** A boundary on one side of which no item lies (a tier never used) has status ``one-sided``; the
other boundary is still fitted -- except when every item reaches the tier and several of them score 0: nothing lies
below 0, so the cut-off is 0 (``at_end`` low). Fewer than ``MIN_ITEMS`` items: ``too-few``.

Pure functions on arrays: no database, no Streamlit (the likelihood, its fit and the profile interval are in
:mod:`medeval.calibration.smooth_likelihood`). :func:`smooth_cutoffs` is the one entry point (the rounds,
Tune cut-offs, ``calibrate`` and a publication all call it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
# (scipy is imported where it is used: `python -m medeval` and the app's pages start without it)

from medeval.calibration.smooth_likelihood import _fit, _local_fit, _profile_ci, curve_at
from medeval.core.errors import MedevalError

METHOD = "smooth-logistic-lapse-v3"  # v3: consensus tiers, the range's ends, crossed fits joined
BOUNDARIES = ("CW|PC", "PC|BC")
MIN_ITEMS = 5  # graded items below which a boundary is not fitted
GRID_POINTS = 101
SAME_TOL = 1e-4  # two fitted cut-offs this close are one crossing (the optimiser's precision)


@dataclass(frozen=True)
class BoundaryFit:
    """One boundary's fit: ``CW|PC`` (tier >= 1) or ``PC|BC`` (tier >= 2)."""

    boundary: str
    cutoff: float | None  # where the fitted P(tier >= k | score) crosses 0.5 (see at_end); None unless fitted
    # 95% profile-likelihood interval, within the score range; an end the grades do not bound is the range's end
    # (so the interval is wide, never falsely narrow); None when not asked for or not fitted
    ci: tuple[float, float] | None
    status: str  # "ok", "too-few", "one-sided"
    n: int
    grid: tuple[float, ...]  # score grid over [lo, hi] of the graded scores
    curve: tuple[float, ...]  # fitted P(tier >= k | score) on the grid; () when not fitted
    reason: str = ""  # in words, when status is not "ok" or the cut-off is not a plain crossing
    width: float | None = None  # the logistic's scale (score units)
    lapse: float | None = None
    at_end: str = ""  # "low" / "high": the curve crosses 0.5 beyond the score range, the cut-off is its end
    all_reach: bool = False  # one-sided: every graded item reaches the tier (else none does)

    def undetermined(self) -> str:
        """Why the grades leave this boundary undetermined, as a code (``""`` when fitted): ``too-few``,
        ``none-reach`` (no graded item reaches the tier) or ``all-reach`` (every graded item does)."""
        if self.status == "one-sided":
            return "all-reach" if self.all_reach else "none-reach"
        return "" if self.status == "ok" else self.status


@dataclass(frozen=True)
class SmoothFit:
    low: BoundaryFit
    high: BoundaryFit
    method: str = METHOD
    n_items: int = 0
    grades_per_item: float = 1.0  # the mean number of grades behind an item's consensus tier (1: tiers as given)
    joined: bool = False  # the two crossings crossed and were fitted as one shared cut-off

    def cutoffs(self) -> tuple[float | None, float | None]:
        """The two cut-offs, each None when its boundary is undetermined (too few items, one-sided)."""
        return (self.low.cutoff if self.low.status == "ok" else None,
                self.high.cutoff if self.high.status == "ok" else None)

    def basis(self) -> str:
        """What the curves were fitted to, in words (a provenance and a report's methods record it)."""
        if self.grades_per_item > 1:
            return (f"the consensus tier of each of {self.n_items} items (the lower median of its grades, "
                    f"{self.grades_per_item:.1f} per item)")
        return f"one tier per item ({self.n_items} items)"


def check_inputs(scores, tiers, items=None):
    """Scores (floats in [0, 1]) and tiers (0/1/2) as arrays, and item codes 0..I-1 (or None)."""
    try:
        s = np.asarray(scores, dtype=float).ravel()
    except (TypeError, ValueError):
        raise MedevalError("scores must be numbers in [0, 1]") from None
    t_raw = np.asarray(tiers).ravel()
    if s.shape != t_raw.shape:
        raise MedevalError(f"scores and tiers differ in length ({len(s)} scores, {len(t_raw)} tiers)")
    if len(s) and not np.isfinite(s).all():
        raise MedevalError("scores must be numbers in [0, 1]; some are missing (NaN) or infinite")
    if len(s) and ((s < 0).any() or (s > 1).any()):
        raise MedevalError(f"scores must lie in [0, 1]; got {s.min():g} .. {s.max():g}")
    try:
        t = t_raw.astype(float)
    except (TypeError, ValueError):
        raise MedevalError("tiers must be 0, 1 or 2") from None
    if len(t) and not np.isin(t, (0, 1, 2)).all():
        raise MedevalError("tiers must be 0, 1 or 2 (completely wrong, partially correct, basically correct)")
    codes = None
    if items is not None:
        c = np.asarray(items).ravel()
        if c.shape != s.shape:
            raise MedevalError(f"items must name one item per grade ({len(c)} for {len(s)} grades)")
        _, codes = np.unique(c.astype(str), return_inverse=True)
    return s, t.astype(int), codes


def consensus_tiers(scores, tiers, codes):
    """One row per item: its score and the lower median of its grades' tiers. An item whose grades carry
    different scores is refused (a score is the item's, not the grade's)."""
    order = np.lexsort((tiers, codes))
    c, t, s = codes[order], tiers[order], scores[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    counts = np.diff(np.r_[starts, len(c)])
    lo_s = np.minimum.reduceat(s, starts)
    if (np.maximum.reduceat(s, starts) - lo_s > 1e-9).any():
        raise MedevalError("an item's grades carry different scores: give each item's score once per grade, "
                           "the same for all its grades")
    return lo_s, t[starts + (counts - 1) // 2], counts


def _grid(s) -> tuple[float, float, tuple[float, ...]]:
    lo = float(s.min()) if len(s) else 0.0
    hi = float(s.max()) if len(s) else 1.0
    return lo, hi, tuple(float(x) for x in np.linspace(lo, hi, GRID_POINTS))


def _undetermined(name: str, s, y) -> BoundaryFit | None:
    n = len(s)
    _, _, grid = _grid(s)
    if n < MIN_ITEMS:
        return BoundaryFit(name, None, None, "too-few", n, grid, (),
                           f"{n} graded items; at least {MIN_ITEMS} are needed to fit the {name} boundary")
    if y.min() == y.max() and y[0] and (s <= 0.0).sum() >= 2:
        # every graded item reaches the tier, several of them at the lowest score there is: the cut-off is 0 (a
        # curve with no item below it has no crossing to fit, but nothing lies below 0 either)
        return BoundaryFit(name, 0.0, (0.0, 0.0), "ok", n, grid, tuple(1.0 for _ in grid),
                           f"every graded item reaches the tier, {int((s <= 0.0).sum())} of them at score 0: the "
                           "cut-off is the low end of the score range (every score reaches the tier)", None, None,
                           "low")
    if y.min() == y.max():
        side = "at or above" if y[0] else "below"
        return BoundaryFit(name, None, None, "one-sided", n, grid, (),
                           f"every graded item is {side} the {name} boundary: it could be anywhere "
                           f"{'below' if y[0] else 'above'} these scores", all_reach=bool(y[0]))
    return None


def _boundary(name: str, s, y, mle, *, ci: bool, reason: str = "", wt=None) -> BoundaryFit:
    """A fitted boundary from its optimum: the crossing (the range's end when beyond it), interval, curve."""
    lo, hi, grid = _grid(s)
    c, logw, lapse, skew = (float(v) for v in mle.x)
    curve = tuple(float(v) for v in curve_at(np.asarray(grid), c, logw, lapse, skew))
    at_end = "low" if c < 0.0 else "high" if c > 1.0 else ""
    if at_end:
        reason = ((reason + "; ") if reason else "") + (
            f"the fitted curve crosses 0.5 at {c:.3f}, beyond the score range: the cut-off is its "
            f"{'low' if at_end == 'low' else 'high'} end ({'every' if at_end == 'low' else 'no'} score "
            f"{'reaches' if at_end == 'low' else 'below 1 reaches'} the tier)")
    interval = _profile_ci(s, y, lo, hi, mle, wt) if ci else None
    return BoundaryFit(name, float(np.clip(c, 0.0, 1.0)), interval, "ok", len(s), grid, curve, reason,
                       float(np.exp(logw)), lapse, at_end)


def fit_boundary(scores, tiers, k: int, *, ci: bool = True) -> BoundaryFit:
    """Fit P(tier >= k | score) for one boundary (k = 1 or 2) on already checked arrays, one tier per item."""
    name = BOUNDARIES[k - 1]
    s = scores
    y = (tiers >= k).astype(float)
    undetermined = _undetermined(name, s, y)
    if undetermined is not None:
        return undetermined
    lo, hi, _ = _grid(s)
    mle, wt = _local_fit(s, y, lo, hi)
    return _boundary(name, s, y, mle, ci=ci, wt=wt)


def _joined(s, t, low: BoundaryFit, high: BoundaryFit, ci: bool) -> tuple[BoundaryFit, BoundaryFit]:
    """Both boundaries refitted with one shared cut-off: the one that maximises their joint likelihood."""
    from scipy.optimize import minimize_scalar

    lo, hi, _ = _grid(s)
    ys = [(t >= 1).astype(float), (t >= 2).astype(float)]

    def joint(c):
        return sum(_fit(s, y, lo, hi, fixed_c=c).fun for y in ys)

    a, b = sorted((high.cutoff, low.cutoff))
    r = minimize_scalar(joint, bounds=(a, b), method="bounded", options={"xatol": 1e-5})
    c = float(r.x)
    why = (f"the CW|PC curve crosses 0.5 at {low.cutoff:.3f}, above the PC|BC one at {high.cutoff:.3f}: these "
           f"grades do not resolve a partially correct band, so both are fitted with one cut-off, {c:.3f}")
    out = []
    for name, y in zip(BOUNDARIES, ys):
        mle = _fit(s, y, lo, hi, fixed_c=c)
        b_ = _boundary(name, s, y, mle, ci=False, reason=why)
        interval = _profile_ci(s, y, lo, hi, _fit(s, y, lo, hi, start=mle.x)) if ci else None
        if interval is not None:  # the shared cut-off lies inside each boundary's own interval or at its edge
            interval = (min(interval[0], b_.cutoff), max(interval[1], b_.cutoff))
        out.append(BoundaryFit(**{**b_.__dict__, "ci": interval}))
    return out[0], out[1]


def smooth_cutoffs(scores, tiers, *, items=None, ci: bool = True) -> SmoothFit:
    """The smooth estimator: both boundaries' fits, their cut-offs, intervals and curves.

    ``scores`` in [0, 1] and ``tiers`` (0/1/2): one row per item, or with ``items`` (one id per grade) one row per
    grade, combined into each item's consensus tier (the lower median) first. ``ci``: compute the 95% profile
    intervals (a few more fits per boundary). ``fit.cutoffs()`` gives (low, high), each None when undetermined
    (its ``status`` and ``reason`` say why); bad input raises ``MedevalError`` saying what is wrong.

    >>> import numpy as np
    >>> s = np.linspace(0, 1, 41)
    >>> fit = smooth_cutoffs(s, np.where(s < 0.3, 0, np.where(s < 0.7, 1, 2)), ci=False)
    >>> [round(c, 1) for c in fit.cutoffs()]  # between the last item below and the first at or above each
    [0.3, 0.7]
    """
    s, t, codes = check_inputs(scores, tiers, items)
    per_item = 1.0
    if codes is not None and len(s):
        s, t, counts = consensus_tiers(s, t, codes)
        per_item = float(counts.mean())
    low, high = (fit_boundary(s, t, k, ci=ci) for k in (1, 2))
    joined = False
    if low.status == high.status == "ok" and low.cutoff > high.cutoff:
        if low.cutoff - high.cutoff <= SAME_TOL:  # one crossing, up to the optimiser's precision
            mid = (low.cutoff + high.cutoff) / 2
            why = (f"both curves cross 0.5 at {mid:.4f} (within {SAME_TOL:g}, the fit's precision): no score range "
                   "is graded partially correct")
            low, high = _with(low, cutoff=mid, reason=why), _with(high, cutoff=mid, reason=why)
        else:
            low, high = _joined(s, t, low, high, ci)
        joined = True
    return SmoothFit(low, high, METHOD, len(s), per_item, joined)


def _with(b: BoundaryFit, **changes) -> BoundaryFit:
    return BoundaryFit(**{**b.__dict__, **changes})
