"""The smooth estimator's likelihood: the split logistic with lapses, its weak priors, the fit, the local refit
around the crossing, and the profile-likelihood interval (:mod:`medeval.calibration.smooth` says what they estimate).
Pure functions on arrays; scipy is imported where it is used (`python -m medeval` and the pages start without it).
"""

from __future__ import annotations

import numpy as np

LAPSE_MAX = 0.3
# weak priors: log width ~ N(log 0.05, 1.5^2); lapse ~ Beta(1, 20); skew ~ N(0, SKEW_SD^2)
_LOGW_MU, _LOGW_SD = np.log(0.05), 1.5
_LAPSE_B = 19.0
# the skew's prior is wide (bench_calibration_v3, 30 panels a case: N(0, 0.3^2) cut the straight ramps' error at 150
# items by a fifth, but its narrower intervals covered kinked curves' cut-offs in only 72-87% of panels)
_SKEW_SD = 1.0
_CHI2_95 = 3.841458820694124
# the local refit (bench_calibration_v3: a kinked curve's crossing 0.01 towards its shallow side without it): the
# kernel is LOCAL_K widths wide up to LOCAL_N items and narrows as n^(-1/5) beyond (local likelihood's rate, so the
# bias of a shape the curve cannot follow vanishes as grades accumulate), never below LOCAL_K_MIN widths
LOCAL_K = 3.0
LOCAL_N = 300
LOCAL_K_MIN = 1.0
LOCAL_ROUNDS = 2
LOCAL_MIN = 0.02


def _nll(theta, s, y, wt=None):
    """Negative log posterior (likelihood x weak priors) and its gradient; ``wt``: each item's weight (a local
    fit's kernel), 1 when None."""
    from scipy.special import expit
    c, logw, lapse, skew = theta
    d = s - c
    left = d < 0
    w = np.exp(logw + np.where(left, -skew / 2, skew / 2))  # the width below and above the cut-off
    z = d / w
    f = expit(z)
    p = np.clip(lapse / 2 + (1 - lapse) * f, 1e-12, 1 - 1e-12)
    ll = np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))
    g = (p - y) / (p * (1 - p))  # d(-ll)/dp
    if wt is not None:
        ll = np.sum(wt * (y * np.log(p) + (1 - y) * np.log1p(-p)))
        g = g * wt
    dz = g * (1 - lapse) * f * (1 - f)
    grad = np.empty_like(theta)
    grad[0] = -np.sum(dz / w)
    grad[1] = -np.sum(dz * z) + (logw - _LOGW_MU) / _LOGW_SD ** 2
    grad[2] = np.sum(g * (0.5 - f)) + _LAPSE_B / (1 - lapse)
    grad[3] = np.sum(dz * z * np.where(left, 0.5, -0.5)) + skew / _SKEW_SD ** 2
    value = (-ll + 0.5 * ((logw - _LOGW_MU) / _LOGW_SD) ** 2 - _LAPSE_B * np.log1p(-lapse)
             + 0.5 * (skew / _SKEW_SD) ** 2)
    return value, grad


def curve_at(x, c, logw, lapse, skew):
    """The fitted P(tier >= k | score) at scores ``x``."""
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


def _limits(lo: float, hi: float) -> tuple[float, float]:
    """Where the optimiser may put a crossing: one graded span beyond each end of the score range."""
    span = max(hi - lo, 0.05)
    return min(lo, 0.0) - span, max(hi, 1.0) + span


def _fit(s, y, lo, hi, *, fixed_c=None, start=None, wt=None):
    from scipy.optimize import minimize
    bounds = [_limits(lo, hi), (np.log(1e-4), np.log(2.0)), (0.0, LAPSE_MAX), (-3.0, 3.0)]
    if fixed_c is not None:
        bounds[0] = (fixed_c, fixed_c)
    if start is None:
        c0 = _split_start(s, y) if fixed_c is None else fixed_c
        starts = [np.array([c0, np.log(w0), 0.02, 0.0]) for w0 in (0.02, 0.1)]
    else:
        starts = [np.array(start, dtype=float)]
        if fixed_c is not None:
            starts[0][0] = fixed_c
    best = None
    for x0 in starts:
        r = minimize(_nll, x0, args=(s, y, wt), jac=True, method="L-BFGS-B", bounds=bounds)
        if best is None or r.fun < best.fun:
            best = r
    return best


def local_k(n: int) -> float:
    """The local refit's kernel in widths of the curve for ``n`` graded items."""
    return max(LOCAL_K_MIN, LOCAL_K * min(1.0, (n / LOCAL_N) ** -0.2))


def _kernel(s, theta) -> np.ndarray:
    """Each item's weight in the local fit: a Gaussian kernel around the crossing, :func:`local_k` widths wide on each
    side (the side's own width), never narrower than LOCAL_MIN."""
    c, logw, _, skew = theta
    d = s - c
    h = np.maximum(local_k(len(s)) * np.exp(logw + np.where(d < 0, -skew / 2, skew / 2)), LOCAL_MIN)
    return np.exp(-0.5 * (d / h) ** 2)


def _local_fit(s, y, lo, hi):
    """The global fit, then LOCAL_ROUNDS refits weighted by :func:`_kernel` around the last crossing: the
    crossing then follows the items near it, not a tail the split logistic cannot follow (a kink, a shoulder)."""
    mle = _fit(s, y, lo, hi)
    wt = None
    for _ in range(LOCAL_ROUNDS):
        wt = _kernel(s, mle.x)
        mle = _fit(s, y, lo, hi, start=mle.x, wt=wt)
    return mle, wt


def _profile_ci(s, y, lo, hi, mle, wt=None) -> tuple[float, float]:
    """Where twice the profile log-likelihood drop reaches the chi-square(1) 95% point, on each side.

    The signed root of the drop, r(c) = sqrt(2 (profile nll(c) - nll min)), is close to linear in c, so each
    end is found by the secant method on r(c) = 1.96 (to 0.01 of r, a half per cent of the interval), starting
    from the Wald end given by the optimiser's inverse Hessian: three or four profile fits a side, each started
    from the MLE. An end beyond the score range [0, 1] is the range's end.
    """
    c_hat, f_hat = float(mle.x[0]), float(mle.fun)
    limits = _limits(lo, hi)
    span = limits[1] - limits[0]
    z95 = float(np.sqrt(_CHI2_95))
    try:
        se = float(np.sqrt(max(mle.hess_inv.todense()[0, 0], 0.0)))
    except (AttributeError, ValueError):
        se = 0.0
    se = min(max(se, float(np.exp(mle.x[1])) * 0.1, 1e-3), span)

    def root(c):
        r = _fit(s, y, lo, hi, fixed_c=c, start=mle.x, wt=wt)
        return float(np.sqrt(max(2 * (r.fun - f_hat), 0.0)))

    ends = []
    for direction in (-1, 1):
        # beyond the range's end nothing changes what is graded: the search stops there
        limit = max(limits[0], 0.0) if direction < 0 else min(limits[1], 1.0)
        if direction * (limit - c_hat) <= 0:
            ends.append(float(limit))
            continue
        prev_c, prev_r = c_hat, 0.0
        c = c_hat + direction * z95 * se
        end = None
        for _ in range(12):
            c = min(max(c, min(limit, c_hat)), max(limit, c_hat))
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
    return float(np.clip(ends[0], 0.0, 1.0)), float(np.clip(ends[1], 0.0, 1.0))
