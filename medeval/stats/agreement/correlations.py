"""Correlations of two score lists: Spearman, Pearson or Kendall with a p-value and a Fisher-z 95% CI."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats

from medeval.core.errors import MedevalError
from medeval.core.i18n import _
from medeval.stats.agreement.ratings import Estimate

_SE = {"pearson": lambda n: 1 / math.sqrt(n - 3), "spearman": lambda n: math.sqrt(1.06 / (n - 3)),
       "kendall": lambda n: math.sqrt(0.437 / (n - 4))}


def correlation(x: Sequence[float], y: Sequence[float], method: str = "spearman") -> Estimate:
    """Spearman, Pearson or Kendall correlation with p-value (scipy) and a Fisher-z 95% CI.

    Pairs with a NaN on either side are dropped. CI standard errors: Pearson
    1/sqrt(n-3); Spearman sqrt(1.06/(n-3)) (Fieller, Hartley & Pearson 1957);
    Kendall sqrt(0.437/(n-4)).
    """
    if method not in _SE:
        raise MedevalError(f"method {method!r} must be spearman, pearson or kendall")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise MedevalError("x and y must have the same length")
    ok = ~(np.isnan(x) | np.isnan(y))
    n = int(ok.sum())
    dropped = len(x) - n
    missing = (_("pairwise deletion: {n} pairs with a missing value dropped").format(n=dropped) if dropped
               else _("no missing values"))
    desc = _("{method} correlation (scipy); 95% CI by Fisher z").format(method=method)
    base = dict(n_items=len(x), n_raters=2, n_pairable=n, missing=missing, method=desc)
    x, y = x[ok], y[ok]
    if n < 3:
        return Estimate(method, None, None, undefined_reason=_("fewer than 3 complete pairs"), **base)
    if np.all(x == x[0]) or np.all(y == y[0]):
        return Estimate(method, None, None, undefined_reason=_("one of the two variables is constant"), **base)
    fn = {"spearman": stats.spearmanr, "pearson": stats.pearsonr, "kendall": stats.kendalltau}[method]
    r = fn(x, y)
    rho, p = float(r.statistic), float(r.pvalue)
    ci = None
    if n > (4 if method == "kendall" else 3) and abs(rho) < 1:
        z, se = math.atanh(rho), _SE[method](n)
        ci = (math.tanh(z - 1.959963984540054 * se), math.tanh(z + 1.959963984540054 * se))
    elif abs(rho) == 1:
        ci = (rho, rho)
    return Estimate(method, rho, ci, undefined_reason=None, extra={"p": p}, **base)
