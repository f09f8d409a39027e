"""Krippendorff's alpha at any level of measurement, with missing ratings and a bootstrap CI over items."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.stats.agreement.ratings import LEVELS, Estimate, RatingTable, _rng, _undefined, check_bootstrap

# the level's distance metric in words (the method's text names it: "ordinal metric")
LEVEL_METRICS = {"nominal": N_("nominal metric"), "ordinal": N_("ordinal metric"), "interval": N_("interval metric"),
                 "ratio": N_("ratio metric")}


def _pairable(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = (~np.isnan(x)).sum(axis=1)
    return x[m >= 2], m[m >= 2]


def _delta(level: str, values: np.ndarray, n_c: np.ndarray) -> np.ndarray:
    c, k = np.meshgrid(values, values, indexing="ij")
    if level == "nominal":
        return (c != k).astype(float)
    if level == "interval":
        return (c - k) ** 2
    if level == "ratio":
        s = c + k
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.where(s == 0, 0.0, ((c - k) / np.where(s == 0, 1, s)) ** 2)
        return d
    # ordinal: (sum of n_g from c to k - (n_c + n_k)/2)^2, ranks by position in the ordered domain
    cum = np.concatenate([[0.0], np.cumsum(n_c)])
    V = len(values)
    i, j = np.meshgrid(np.arange(V), np.arange(V), indexing="ij")
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    between = cum[hi + 1] - cum[lo]
    return (between - (n_c[i] + n_c[j]) / 2) ** 2


def _alpha_from_coincidence(o: np.ndarray, level: str, values: np.ndarray) -> float | None:
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return None
    d = _delta(level, values, n_c)
    do = (o * d).sum()
    de = (np.outer(n_c, n_c) * d).sum()
    if de == 0:
        return None
    return float(1 - (n - 1) * do / de)


def _interval_closed_form(sum_u, sumsq_u, m_u, ss_u, w=None) -> float | None:
    if w is None:
        w = np.ones_like(m_u, dtype=float)
    n = (w * m_u).sum()
    if n <= 1:
        return None
    within = (w * m_u * ss_u / (m_u - 1)).sum()
    total_sum, total_sq = (w * sum_u).sum(), (w * sumsq_u).sum()
    ss_total = total_sq - total_sum ** 2 / n
    if total_sq == 0 or ss_total <= 1e-12 * total_sq:
        return None
    return float(1 - (n - 1) * within / (n * ss_total))


def krippendorff_alpha(table: RatingTable, level: str = "nominal", categories: Sequence | None = None,
                       n_boot: int = 1000, rng=None) -> Estimate:
    """Krippendorff's alpha at a level of measurement, with missing values and a bootstrap CI over items.

    ``categories``: the ordered value domain (needed for labels; for ordinal data
    only the order matters). Interval data use the closed form
    1 - (n-1) sum_u[m_u SS_u/(m_u-1)] / (n SS_total) over pairable values, so
    continuous scores cost O(values), not O(values^2).
    """
    n_boot, rng = check_bootstrap(n_boot, rng)
    if level not in LEVELS:
        raise MedevalError(f"level {level!r} is not one of {', '.join(LEVELS)}")
    x, m_u = _pairable(table.values)
    n_pairable = int(len(m_u))
    n_values = int(m_u.sum())
    n_missing = int(np.isnan(table.values).sum())
    missing = (_("{n} missing ratings; items with fewer than 2 ratings are not pairable and are left out ({left} "
                 "items)").format(n=n_missing, left=table.n_items - n_pairable) if n_missing
               else _("no missing ratings"))
    method = (_("Krippendorff's alpha, {distance}, coincidence matrix over {n} pairable values; 95% CI: percentile "
                "bootstrap over items ({n_boot} resamples)").format(distance=_(LEVEL_METRICS[level]), n=n_values,
                                                                    n_boot=n_boot) if n_boot else
              _("Krippendorff's alpha, {distance}; no CI requested").format(distance=_(LEVEL_METRICS[level])))
    name = "krippendorff_alpha"
    if table.n_raters < 2:
        return _undefined(name, table, n_pairable, missing, _("fewer than 2 raters"), method)
    if n_pairable == 0:
        return _undefined(name, table, 0, missing, _("no item has 2 or more ratings (nothing pairable)"), method)

    cat_vals = table.category_values() if table.labels is not None else None
    if level == "interval" and (table.labels is None or cat_vals is not None):
        vals = x if cat_vals is None else np.where(np.isnan(x), np.nan, cat_vals[np.nan_to_num(x, nan=0).astype(int)])
        vals = vals - np.nanmean(vals)  # centred: alpha is shift invariant, the sums keep their digits
        mu = m_u.astype(float)
        sum_u = np.nansum(vals, axis=1)
        sumsq_u = np.nansum(vals ** 2, axis=1)
        ss_u = np.nansum((vals - (sum_u / mu)[:, None]) ** 2, axis=1)  # two-pass within-unit SS

        def compute(w=None):
            return _interval_closed_form(sum_u, sumsq_u, mu, ss_u, w)
    else:
        # domain: declared categories (codes 0..V-1) or the observed values, sorted
        if table.labels is not None:
            domain_codes = np.arange(len(table.labels), dtype=float)
            if level in ("interval", "ratio"):
                if cat_vals is None:
                    raise MedevalError(f"{level} alpha needs numeric categories, not {table.labels}")
                domain_values = cat_vals
            else:
                domain_values = domain_codes
        else:
            domain_codes = np.unique(x[~np.isnan(x)])
            domain_values = domain_codes
            if categories is not None:
                declared = np.array([float(c) for c in categories])
                extra = np.setdiff1d(domain_codes, declared)
                if len(extra):
                    raise MedevalError(f"values {extra.tolist()} are not among the declared categories")
                domain_codes = domain_values = declared
        V = len(domain_codes)
        if V > 400:
            return _undefined(name, table, n_pairable, missing,
                              _("{n} distinct values: too many for the {level} coincidence matrix; use the "
                                "interval level for continuous scores").format(n=V, level=level),
                              method)
        index = {float(v): i for i, v in enumerate(domain_codes)}
        counts = np.zeros((len(x), V))
        rows, cols = np.nonzero(~np.isnan(x))
        np.add.at(counts, (rows, [index[float(v)] for v in x[rows, cols]]), 1)
        # per-unit coincidences: (c c^T - diag(c)) / (m_u - 1), flattened
        per_unit = (counts[:, :, None] * counts[:, None, :])
        idx = np.arange(V)
        per_unit[:, idx, idx] -= counts
        per_unit /= (m_u - 1)[:, None, None]
        flat = per_unit.reshape(len(x), V * V)

        def compute(w=None):
            o = (flat.sum(axis=0) if w is None else w @ flat).reshape(V, V)
            return _alpha_from_coincidence(o, level, np.asarray(domain_values, dtype=float))

    value = compute()
    if value is None:
        return _undefined(name, table, n_pairable, missing,
                          _("all pairable values are identical: expected disagreement is 0"), method)
    ci = None
    if n_boot:
        g = _rng(rng)
        boots = []
        for _i in range(int(n_boot)):
            w = np.bincount(g.integers(0, n_pairable, n_pairable), minlength=n_pairable).astype(float)
            b = compute(w)
            if b is not None:
                boots.append(b)
        if len(boots) >= max(10, n_boot // 2):
            ci = (float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)))
    return Estimate(name, value, ci, table.n_items, table.n_raters, n_pairable, missing, None,
                    {"level": level, "n_values": n_values}, method)
