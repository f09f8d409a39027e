"""Agreement on categories: Cohen's kappa (unweighted, linear, quadratic), Fleiss' kappa, percent agreement."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.stats.agreement.ratings import Estimate, RatingTable, _rng, _undefined, check_bootstrap

WEIGHT_WORDS = {None: N_("unweighted"), "linear": N_("linear weights"), "quadratic": N_("quadratic weights")}


def _categories(table: RatingTable, categories) -> np.ndarray:
    if table.labels is not None:
        return np.arange(len(table.labels), dtype=float)
    observed = np.unique(table.values[~np.isnan(table.values)])
    if categories is None:
        return observed
    declared = np.array([float(c) for c in categories])
    extra = np.setdiff1d(observed, declared)
    if len(extra):
        raise MedevalError(f"values {extra.tolist()} are not among the declared categories {list(categories)}")
    return declared


def _kappa_weights(K: int, weights) -> np.ndarray:
    i, j = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    if weights is None:
        return (i == j).astype(float)
    if K == 1:
        return np.ones((1, 1))
    if weights == "linear":
        return 1 - np.abs(i - j) / (K - 1)
    return 1 - (i - j) ** 2 / (K - 1) ** 2


def _kappa_from_codes(ia: np.ndarray, ib: np.ndarray, K: int, w: np.ndarray) -> float | None:
    """Kappa from category positions of the two raters (one bincount builds the K x K table)."""
    p = np.bincount(ia * K + ib, minlength=K * K).reshape(K, K) / len(ia)
    po = (w * p).sum()
    pe = (w * np.outer(p.sum(axis=1), p.sum(axis=0))).sum()
    if pe >= 1 - 1e-15:
        return None
    return float((po - pe) / (1 - pe))


def cohen_kappa(table: RatingTable, weights: str | None = None, categories: Sequence | None = None,
                n_boot: int = 1000, rng=None) -> Estimate:
    """Cohen's kappa for exactly two raters, unweighted or with linear/quadratic agreement weights.

    Weights depend on the position of each category in the declared ``categories``
    (a category nobody used still counts for the weights). Items missing either
    rating are left out.
    """
    n_boot, rng = check_bootstrap(n_boot, rng)
    if weights not in (None, "linear", "quadratic"):
        raise MedevalError(f"weights {weights!r} must be None, 'linear' or 'quadratic'")
    name = "cohen_kappa" + (f"_{weights}" if weights else "")
    if table.n_raters != 2:
        return _undefined(name, table, 0, "", _("Cohen's kappa needs exactly 2 raters, not {n}").format(n=table.n_raters))
    both = ~np.isnan(table.values).any(axis=1)
    a, b = table.values[both, 0], table.values[both, 1]
    n = int(both.sum())
    missing = (_("{n} items without both ratings left out").format(n=table.n_items - n) if n < table.n_items
               else _("no missing ratings"))
    method = _("Cohen's kappa ({weights}) over {k} categories; 95% CI: percentile bootstrap over items ({n_boot} "
               "resamples)").format(weights=_(WEIGHT_WORDS[weights]), k=len(_categories(table, categories)),
                                    n_boot=n_boot)
    if n == 0:
        return _undefined(name, table, 0, missing, _("no item rated by both raters"), method)
    cats = _categories(table, categories)
    pos = {float(c): i for i, c in enumerate(cats)}
    ia = np.array([pos[float(v)] for v in a])
    ib = np.array([pos[float(v)] for v in b])
    K, w = len(cats), _kappa_weights(len(cats), weights)
    value = _kappa_from_codes(ia, ib, K, w)
    if value is None:
        return _undefined(name, table, n, missing, _("chance agreement is 1 (both raters used a single category)"),
                          method)
    ci = None
    if n_boot and n >= 2:
        g = _rng(rng)
        boots = [v for v in (_kappa_from_codes(ia[s], ib[s], K, w)
                             for s in (g.integers(0, n, n) for _ in range(int(n_boot)))) if v is not None]
        if len(boots) >= max(10, n_boot // 2):
            ci = (float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)))
    return Estimate(name, value, ci, table.n_items, 2, n, missing, None, {"weights": weights or "none"}, method)


def fleiss_kappa(table: RatingTable, categories: Sequence | None = None) -> Estimate:
    """Fleiss' (1971) kappa for complete data (every item rated by every rater)."""
    name = "fleiss_kappa"
    method = _("Fleiss (1971) kappa from the items x categories count table")
    x = table.values
    if np.isnan(x).any():
        return _undefined(name, table, 0, _("not handled"), _("Fleiss' kappa needs complete data (every item "
                                                              "rated by every rater); use Krippendorff's alpha"), method)
    if table.n_raters < 2:
        return _undefined(name, table, 0, _("no missing ratings"), _("fewer than 2 raters"), method)
    cats = _categories(table, categories)
    idx = {float(c): i for i, c in enumerate(cats)}
    counts = np.zeros((table.n_items, len(cats)))
    for r in range(table.n_raters):
        np.add.at(counts, (np.arange(table.n_items), [idx[float(v)] for v in x[:, r]]), 1)
    m = table.n_raters
    p_i = ((counts ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_bar = p_i.mean()
    p_j = counts.sum(axis=0) / (table.n_items * m)
    pe = (p_j ** 2).sum()
    if pe >= 1 - 1e-15:
        return _undefined(name, table, table.n_items, _("no missing ratings"),
                          _("every rating is in one category: chance agreement is 1"), method)
    return Estimate(name, float((p_bar - pe) / (1 - pe)), None, table.n_items, m, table.n_items,
                    _("no missing ratings"), None, {"p_bar": float(p_bar), "p_e": float(pe)}, method)


def percent_agreement(table: RatingTable) -> Estimate:
    """Mean over pairable items of the share of rater pairs that agree exactly."""
    shares = []
    for row in table.values:
        v = row[~np.isnan(row)]
        m = len(v)
        if m < 2:
            continue
        _values, c = np.unique(v, return_counts=True)
        shares.append((c * (c - 1)).sum() / (m * (m - 1)))
    n_missing = int(np.isnan(table.values).sum())
    missing = (_("{n} missing ratings; pairs formed from the ratings present").format(n=n_missing) if n_missing
               else _("no missing ratings"))
    method = _("mean over items of the share of agreeing rater pairs")
    if not shares:
        return _undefined("percent_agreement", table, 0, missing, _("no item has 2 or more ratings"), method)
    return Estimate("percent_agreement", float(np.mean(shares)), None, table.n_items, table.n_raters, len(shares),
                    missing, None, {}, method)
