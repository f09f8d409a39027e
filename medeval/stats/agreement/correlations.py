"""Correlations of two score lists: Spearman, Pearson or Kendall with a p-value and a Fisher-z 95% CI.

One rule for every Spearman interval in medeval (the agreement statistics, the judge against the clinicians
overall, per criterion and over model rankings, clinicians against the machine): Fisher z with the
Bonett & Wright (2000) variance ``(1 + rho^2 / 2) / (n - 3)``. Its width grows with |rho|, as the sampling
spread of Spearman's rho does; the older constant 1.06 / (n - 3) (Fieller, Hartley & Pearson 1957) is too
narrow for the strong correlations these comparisons produce.

Two cases a small sample meets, said instead of printed as numbers:

* |r| = 1: atanh(±1) is infinite, so the Fisher-z interval does not exist; the CI is None with the reason in
  ``extra["ci_undefined_reason"]`` (never the degenerate [1, 1], which reads as certainty).
* Spearman's p for n <= :data:`EXACT_MAX_N`: scipy's t approximation gives p = 0 at rho = ±1 and is poor for
  a handful of pairs, so p is the exact permutation p-value: every one of the n! pairings of the two lists is
  equally likely under independence, p = the share whose |rho| is at least the observed |rho| (two-sided; ties
  keep their average ranks). Four models ranked identically: p = 2/24 (the identity and the reversal).
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Sequence

import numpy as np
# (scipy is imported where it is used: `python -m medeval` and the app's pages start without it)

from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.stats.agreement.ratings import Estimate

Z975 = 1.959963984540054
EXACT_MAX_N = 9
"""Up to this many pairs Spearman's p is exact (9! = 362,880 orderings, a few ms with the orderings cached)."""
SPEARMAN_CI = N_("Fisher z with the Bonett-Wright variance (1 + rho^2/2)/(n - 3)")
"""The Spearman interval's name, as the methods texts print it (English, marked: show ``_()`` of it)."""
CI_RULE = {"pearson": N_("Fisher z, variance 1/(n - 3)"), "spearman": SPEARMAN_CI,
           "kendall": N_("Fisher z, variance 0.437/(n - 4)")}
MIN_CI_N = {"pearson": 4, "spearman": 4, "kendall": 5}


def _se(method: str, n: int, r: float) -> float:
    if method == "spearman":
        return math.sqrt((1 + r * r / 2) / (n - 3))
    if method == "kendall":
        return math.sqrt(0.437 / (n - 4))
    return 1 / math.sqrt(n - 3)


def fisher_ci(r: float, n: int, method: str = "spearman") -> tuple[tuple[float, float] | None, str | None]:
    """The 95% CI of a correlation ``r`` over ``n`` pairs by Fisher z (:data:`CI_RULE`), or (None, why not).

    >>> ci, why = fisher_ci(1.0, 5)
    >>> ci is None and "|r| = 1" in why
    True
    """
    if method not in CI_RULE:
        raise MedevalError(f"method {method!r} must be spearman, pearson or kendall")
    if n < MIN_CI_N[method]:
        return None, _("no 95% CI with fewer than {k} pairs (the Fisher-z variance needs n > {m})").format(
            k=MIN_CI_N[method], m=MIN_CI_N[method] - 1)
    if abs(r) >= 1 - 1e-12:  # a perfect correlation computed as 0.9999999999999998 is still perfect
        return None, _("the 95% CI is undefined at |r| = 1: Fisher's z = atanh(r) is infinite there, so the interval "
                       "has no finite bounds (a perfect correlation in {n} pairs is not certainty)").format(n=n)
    z, se = math.atanh(r), _se(method, n, r)
    return (math.tanh(z - Z975 * se), math.tanh(z + Z975 * se)), None


@lru_cache(maxsize=None)
def _orderings(n: int) -> np.ndarray:
    """All n! orderings of range(n), one per row (cached: the same n recurs in a report)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def spearman_exact_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided exact permutation p-value of Spearman's rho (ties: average ranks), for n <= :data:`EXACT_MAX_N`.

    The share of the n! pairings of ``y`` with ``x`` whose |rho| reaches the observed |rho|; rho's denominator
    does not change under a permutation, so the numerators are compared.

    >>> spearman_exact_p([1, 2, 3, 4], [10, 20, 30, 40]) == 2 / 24
    True
    """
    from scipy import stats
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    if n != len(y) or n > EXACT_MAX_N:
        raise MedevalError(f"the exact permutation p-value is computed for 1 to {EXACT_MAX_N} pairs, not {n}")
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    observed = abs(float(rx @ ry))
    null = np.abs(ry[_orderings(n)] @ rx)
    # centred average ranks are multiples of 1/2: the numerators are exact in floating point; the slack only
    # guards against a last-bit difference in the summation order
    return float(np.count_nonzero(null >= observed - 1e-9)) / len(null)


def ci_undefined_reason(e: Estimate) -> str | None:
    """Why an estimate with a value has no CI (None: it has one, or the value itself is undefined)."""
    return e.extra.get("ci_undefined_reason") if e.value is not None and e.ci95 is None else None


def correlation(x: Sequence[float], y: Sequence[float], method: str = "spearman") -> Estimate:
    """Spearman, Pearson or Kendall correlation with a p-value and a Fisher-z 95% CI.

    Pairs with a NaN on either side are dropped. CI: :func:`fisher_ci` (Spearman: Bonett-Wright variance;
    undefined at |r| = 1, with the reason in ``extra["ci_undefined_reason"]``). p (``extra["p"]``, how in
    ``extra["p_method"]``): Spearman with n <= :data:`EXACT_MAX_N` exact by permutation
    (:func:`spearman_exact_p`), else scipy's (Spearman: t approximation; Pearson: the exact test under
    bivariate normality; Kendall: exact without ties for small n, else normal approximation).
    """
    from scipy import stats
    if method not in CI_RULE:
        raise MedevalError(f"method {method!r} must be spearman, pearson or kendall")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise MedevalError("x and y must have the same length")
    ok = ~(np.isnan(x) | np.isnan(y))
    n = int(ok.sum())
    dropped = len(x) - n
    missing = (_("pairwise deletion: {n} pairs with a missing value dropped").format(n=dropped) if dropped
               else _("no missing values"))
    desc = _("{method} correlation (scipy); 95% CI by {rule}").format(method=method, rule=_(CI_RULE[method]))
    base = dict(n_items=len(x), n_raters=2, n_pairable=n, missing=missing, method=desc)
    x, y = x[ok], y[ok]
    if n < 3:
        return Estimate(method, None, None, undefined_reason=_("fewer than 3 complete pairs"), **base)
    if np.all(x == x[0]) or np.all(y == y[0]):
        return Estimate(method, None, None, undefined_reason=_("one of the two variables is constant"), **base)
    fn = {"spearman": stats.spearmanr, "pearson": stats.pearsonr, "kendall": stats.kendalltau}[method]
    r = fn(x, y)
    rho, p = float(r.statistic), float(r.pvalue)
    p_method = "scipy"
    if method == "spearman" and n <= EXACT_MAX_N:
        p, p_method = spearman_exact_p(x, y), "exact permutation"
    ci, why = fisher_ci(rho, n, method)
    extra = {"p": p, "p_method": p_method, **({"ci_undefined_reason": why} if why else {})}
    return Estimate(method, rho, ci, undefined_reason=None, extra=extra, **base)
