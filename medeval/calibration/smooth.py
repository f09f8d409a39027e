"""Smooth cut-off estimator: a psychometric curve per boundary, its 0.5 crossing and a 95% interval.

For each boundary k (k = 1: CW|PC, k = 2: PC|BC) the graded items say whether their tier reaches k.
Psychophysics fits such yes/no data with a psychometric function that allows for lapses (a careless
grade far from the threshold); here, per boundary,

    P(tier >= k | score) = lapse / 2 + (1 - lapse) * logistic((score - cutoff - offset_j) / width_side)

with ``cutoff`` the score where the curve crosses 0.5 (the lapse is symmetric, so the crossing is
``cutoff`` whatever the lapse); ``width_side`` > 0 (the curve only rises with the score) is the width below
the cut-off or the one above it -- a split logistic, ``width * exp(-/+ skew / 2)``, so a curve that rises
slowly on one side and fast on the other (a linear ramp with a kink, uneven slopes) does not drag the
crossing; ``lapse`` in [0, 0.3]; and, when the grades come from several clinicians, one offset per clinician
(shrunk towards 0, so ``cutoff`` is the average clinician's). The fit maximises the likelihood with weak
priors on the width, the skew (N(0, 0.3²): symmetric unless the grades say otherwise) and the lapse (which keep
a small or perfectly separated sample finite); the 95% interval is the profile-likelihood one (every other
parameter re-fitted at each trial cut-off; chi-square with 1 df).

The two boundaries are fitted independently. When the fitted low cut-off lies above the high one the
pair is reported as ``crossed`` -- never swapped -- so the caller sees that the middle tier is narrower
than these grades resolve (two cut-offs within ``SAME_TOL`` of each other are one crossing: the optimiser
stops at that precision; both get their midpoint and the reason says so).

Pure functions on arrays: no database, no Streamlit. ``smooth_cutoffs`` is the short form (raises
``MedevalError`` when the grades do not determine both cut-offs), ``fit_cutoffs`` the full one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
# (scipy is imported where it is used: `python -m medeval` and the app's pages start without it)

from medeval.core.errors import MedevalError

METHOD = "smooth-logistic-lapse-v1"
BOUNDARIES = ("CW|PC", "PC|BC")
MIN_ITEMS = 5  # graded items (or grades) below which a boundary is not fitted
GRID_POINTS = 101
LAPSE_MAX = 0.3
# weak priors: log width ~ N(log 0.05, 1.5^2); lapse ~ Beta(1, 20); skew ~ N(0, 0.3^2); clinician offsets ~ N(0, 0.1^2)
_LOGW_MU, _LOGW_SD = np.log(0.05), 1.5
_LAPSE_B = 19.0
_OFFSET_SD = 0.1
_SKEW_SD = 0.3
_CHI2_95 = 3.841458820694124
SAME_TOL = 1e-4  # two fitted cut-offs this close are one crossing (the optimiser's precision)


@dataclass(frozen=True)
class BoundaryFit:
    """One boundary's fit: ``CW|PC`` (tier >= 1) or ``PC|BC`` (tier >= 2)."""

    boundary: str
    cutoff: float | None  # where the fitted P(tier >= k | score) crosses 0.5; None when it does not (see status)
    # 95% profile-likelihood interval; an end the grades do not bound is put one score range beyond the graded
    # scores (so the interval is wide, never falsely narrow); None when not asked for or not fitted
    ci: tuple[float, float] | None
    status: str  # "ok", "too-few", "one-sided", "no-crossing", "crossed"
    n: int
    grid: tuple[float, ...]  # score grid over [lo, hi] of the graded scores
    curve: tuple[float, ...]  # fitted P(tier >= k | score) on the grid (the average clinician); () when not fitted
    reason: str = ""  # in words, when status is not "ok"
    width: float | None = None  # the logistic's scale (score units)
    lapse: float | None = None


@dataclass(frozen=True)
class SmoothFit:
    low: BoundaryFit
    high: BoundaryFit
    method: str = METHOD

    def cutoffs(self) -> tuple[float | None, float | None]:
        """The two cut-offs, each None unless its status is ``ok`` (crossed cut-offs are not returned)."""
        return (self.low.cutoff if self.low.status == "ok" else None,
                self.high.cutoff if self.high.status == "ok" else None)


def check_inputs(scores, tiers, clinicians=None):
    """Scores (floats in [0, 1]) and tiers (0/1/2) as arrays, and clinician codes 0..J-1 (or None)."""
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
    if clinicians is not None:
        c = np.asarray(clinicians).ravel()
        if c.shape != s.shape:
            raise MedevalError(f"clinicians must name one clinician per grade ({len(c)} for {len(s)} grades)")
        _, codes = np.unique(c.astype(str), return_inverse=True)
    return s, t.astype(int), codes


def _unpack(theta, n_cl):
    c, logw, lapse, skew = theta[0], theta[1], theta[2], theta[3]
    off = theta[4:] if n_cl > 1 else np.zeros(max(n_cl, 1))
    return c, logw, lapse, skew, off


def _nll(theta, s, y, codes, n_cl):
    """Negative log posterior (likelihood x weak priors) and its gradient."""
    from scipy.special import expit
    c, logw, lapse, skew, off = _unpack(theta, n_cl)
    shift = off[codes] if n_cl > 1 else 0.0
    d = s - c - shift
    left = d < 0
    w = np.exp(logw + np.where(left, -skew / 2, skew / 2))  # the width below and above the cut-off
    z = d / w
    f = expit(z)
    p = np.clip(lapse / 2 + (1 - lapse) * f, 1e-12, 1 - 1e-12)
    ll = np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))
    g = (p - y) / (p * (1 - p))  # d(-ll)/dp
    dz = g * (1 - lapse) * f * (1 - f)
    grad = np.empty_like(theta)
    grad[0] = -np.sum(dz / w)
    grad[1] = -np.sum(dz * z) + (logw - _LOGW_MU) / _LOGW_SD ** 2
    grad[2] = np.sum(g * (0.5 - f)) + _LAPSE_B / (1 - lapse)
    grad[3] = np.sum(dz * z * np.where(left, 0.5, -0.5)) + skew / _SKEW_SD ** 2
    value = (-ll + 0.5 * ((logw - _LOGW_MU) / _LOGW_SD) ** 2 - _LAPSE_B * np.log1p(-lapse)
             + 0.5 * (skew / _SKEW_SD) ** 2)
    if n_cl > 1:
        grad[4:] = -np.bincount(codes, weights=dz / w, minlength=n_cl) + off / _OFFSET_SD ** 2
        value += 0.5 * np.sum((off / _OFFSET_SD) ** 2)
    return value, grad


def curve_at(x, c, logw, lapse, skew):
    """The fitted P(tier >= k | score) at scores ``x`` (the average clinician)."""
    from scipy.special import expit
    d = np.asarray(x, dtype=float) - c
    w = np.exp(logw + np.where(d < 0, -skew / 2, skew / 2))
    return lapse / 2 + (1 - lapse) * expit(d / w)


def _split_start(s, y) -> float:
    """The single split of the sorted scores that classifies most items: a start for the cut-off."""
    order = np.argsort(s, kind="stable")
    ys = y[order]
    correct = np.concatenate([[0], np.cumsum(1 - ys)]) + np.concatenate([np.cumsum(ys[::-1])[::-1], [0]])
    best = np.flatnonzero(correct == correct.max())
    k = best[len(best) // 2]
    ss = s[order]
    if k == 0:
        return float(ss[0])
    if k == len(ss):
        return float(ss[-1])
    return float((ss[k - 1] + ss[k]) / 2)


def _fit(s, y, codes, n_cl, lo, hi, *, fixed_c=None, start=None):
    from scipy.optimize import minimize
    span = max(hi - lo, 1e-3)
    bounds = [(lo - span, hi + span), (np.log(1e-4), np.log(2.0)), (0.0, LAPSE_MAX), (-3.0, 3.0)]
    bounds += [(-0.5, 0.5)] * (n_cl if n_cl > 1 else 0)
    if fixed_c is not None:
        bounds[0] = (fixed_c, fixed_c)
    if start is None:
        c0 = _split_start(s, y) if fixed_c is None else fixed_c
        starts = [np.array([c0, np.log(w0), 0.02, 0.0] + [0.0] * (n_cl if n_cl > 1 else 0)) for w0 in (0.02, 0.1)]
    else:
        starts = [np.array(start, dtype=float)]
        if fixed_c is not None:
            starts[0][0] = fixed_c
    best = None
    for x0 in starts:
        r = minimize(_nll, x0, args=(s, y, codes, n_cl), jac=True, method="L-BFGS-B", bounds=bounds)
        if best is None or r.fun < best.fun:
            best = r
    return best


def _profile_ci(s, y, codes, n_cl, lo, hi, mle) -> tuple[float, float] | None:
    """Where twice the profile log-likelihood drop reaches the chi-square(1) 95% point, on each side.

    The signed root of the drop, r(c) = sqrt(2 (profile nll(c) - nll min)), is close to linear in c, so each
    end is found by the secant method on r(c) = 1.96 (to 0.01 of r, a half per cent of the interval), starting
    from the Wald end given by the optimiser's inverse Hessian: three or four profile fits a side, each started
    from the MLE.
    """
    c_hat, f_hat = float(mle.x[0]), float(mle.fun)
    span = max(hi - lo, 1e-3)
    limits = (lo - span, hi + span)
    z95 = float(np.sqrt(_CHI2_95))
    try:
        se = float(np.sqrt(max(mle.hess_inv.todense()[0, 0], 0.0)))
    except (AttributeError, ValueError):
        se = 0.0
    se = min(max(se, float(np.exp(mle.x[1])) * 0.1, 1e-3), span)

    def root(c):
        r = _fit(s, y, codes, n_cl, lo, hi, fixed_c=c, start=mle.x)
        return float(np.sqrt(max(2 * (r.fun - f_hat), 0.0)))

    ends = []
    for direction in (-1, 1):
        limit = limits[0] if direction < 0 else limits[1]
        prev_c, prev_r = c_hat, 0.0
        c = c_hat + direction * z95 * se
        end = None
        for _ in range(12):
            c = min(max(c, limits[0]), limits[1])
            r = root(c)
            if abs(r - z95) < 0.01:
                end = c
                break
            if c == limit and r < z95:  # the grades do not bound the cut-off on this side
                end = limit
                break
            slope = (r - prev_r) / (c - prev_c) if c != prev_c else 0.0
            nxt = c + (z95 - r) / slope if slope * direction > 0 else c + direction * abs(c - c_hat)
            if direction * (nxt - c_hat) <= 0:  # keep to this side of the estimate
                nxt = (c + c_hat) / 2
            prev_c, prev_r, c = c, r, nxt
        ends.append(float(c if end is None else end))
    return ends[0], ends[1]


def fit_boundary(scores, tiers, k: int, *, clinicians=None, ci: bool = True, lo=None, hi=None) -> BoundaryFit:
    """Fit P(tier >= k | score) for one boundary (k = 1 or 2) on already checked arrays."""
    name = BOUNDARIES[k - 1]
    s, t, codes = scores, tiers, clinicians
    n = len(s)
    lo = float(s.min()) if lo is None and n else (0.0 if lo is None else lo)
    hi = float(s.max()) if hi is None and n else (1.0 if hi is None else hi)
    grid = tuple(float(x) for x in np.linspace(lo, hi, GRID_POINTS))
    if n < MIN_ITEMS:
        return BoundaryFit(name, None, None, "too-few", n, grid, (),
                           f"{n} graded; at least {MIN_ITEMS} are needed to fit the {name} boundary")
    y = (t >= k).astype(float)
    if y.min() == y.max():
        side = "at or above" if y[0] else "below"
        return BoundaryFit(name, None, None, "one-sided", n, grid, (),
                           f"every graded item is {side} the {name} boundary: it could be anywhere "
                           f"{'below' if y[0] else 'above'} these scores")
    n_cl = int(codes.max()) + 1 if codes is not None else 1
    codes_ = codes if codes is not None else np.zeros(n, dtype=int)
    mle = _fit(s, y, codes_, n_cl, lo, hi)
    c, logw, lapse = float(mle.x[0]), float(mle.x[1]), float(mle.x[2])
    w = float(np.exp(logw))
    g = np.asarray(grid)
    curve = tuple(float(v) for v in curve_at(g, c, logw, lapse, float(mle.x[3])))
    if not lo <= c <= hi:
        return BoundaryFit(name, None, None, "no-crossing", n, grid, curve,
                           f"the fitted curve crosses 0.5 at {c:.3f}, outside the graded scores "
                           f"[{lo:.3f}, {hi:.3f}]: grade items beyond them", w, lapse)
    interval = _profile_ci(s, y, codes_, n_cl, lo, hi, mle) if ci else None
    return BoundaryFit(name, c, interval, "ok", n, grid, curve, "", w, lapse)


def fit_cutoffs(scores, tiers, *, clinicians=None, ci: bool = True, rng=0) -> SmoothFit:
    """Both boundaries' smooth fits. ``scores``/``tiers``: one consensus tier per item, or, with ``clinicians``
    (one id per grade), one row per grade (then each clinician gets an offset). ``rng`` is accepted for a
    stable signature; the fit and its profile interval are deterministic."""
    s, t, codes = check_inputs(scores, tiers, clinicians)
    fits = [fit_boundary(s, t, k, clinicians=codes, ci=ci) for k in (1, 2)]
    low, high = fits
    if low.status == high.status == "ok" and 0 < low.cutoff - high.cutoff <= SAME_TOL:
        # the same crossing, up to the optimiser's precision (both boundaries fitted to nearly the same grades):
        # one cut-off, no partially correct tier -- said in the reason, not swapped
        mid = (low.cutoff + high.cutoff) / 2
        why = (f"both curves cross 0.5 at {mid:.4f} (within {SAME_TOL:g}, the fit's precision): no score range "
               "is graded partially correct")
        low, high = _with(low, cutoff=mid, reason=why), _with(high, cutoff=mid, reason=why)
    if low.status == high.status == "ok" and low.cutoff > high.cutoff:
        why = (f"the fitted CW|PC cut-off {low.cutoff:.3f} lies above the PC|BC one {high.cutoff:.3f}: "
               "these grades do not resolve the partially correct tier; grade more items between them")
        low = _with(low, status="crossed", reason=why)
        high = _with(high, status="crossed", reason=why)
    return SmoothFit(low, high, METHOD)


def _with(b: BoundaryFit, **changes) -> BoundaryFit:
    return BoundaryFit(**{**b.__dict__, **changes})


def smooth_cutoffs(scores, tiers) -> tuple[float, float]:
    """(low, high) cut-offs from scores in [0, 1] and one consensus tier (0/1/2) per item.

    Raises ``MedevalError`` saying why when the grades do not determine both (too few, one-sided, crossed).
    """
    fit = fit_cutoffs(scores, tiers, ci=False)
    bad = [b for b in (fit.low, fit.high) if b.status != "ok"]
    if bad:
        raise MedevalError("; ".join(f"{b.boundary}: {b.status} ({b.reason})" for b in bad))
    return float(fit.low.cutoff), float(fit.high.cutoff)
