"""Agreement statistics: ICC, Krippendorff's alpha, Cohen's and Fleiss' kappa, percent agreement, correlations.

Written from the definitions (no pingouin/krippendorff at run time; the tests
compare with both and with published worked examples). Conventions:

* A :class:`RatingTable` is items x raters (rows = items) with NaN for a
  missing rating. Build it with :meth:`RatingTable.from_long` from
  ``(item, rater, value)`` rows: a rater rating an item twice is an error,
  never silently averaged (pingouin's pivot averages duplicates).
* Every function returns an :class:`Estimate` carrying n items, n raters,
  n pairable items, how missing data was handled, and -- where the statistic
  is undefined (one rater, constant values, nothing pairable) -- ``value=None``
  with ``undefined_reason``; never a silent NaN, 0 or 1.
* CIs are 95%: exact F-based for ICC (Shrout & Fleiss / McGraw & Wong, as psych
  and pingouin, unrounded), percentile bootstrap over items for alpha and kappa
  (seedable ``rng``), Fisher z for correlations.

How to read them: ICC -- Koo & Li (2016): < .5 poor, .5-.75 moderate, .75-.9
good, > .9 excellent, read against the CI. Alpha -- Krippendorff: >= .800
reliable, .667-.800 tentative conclusions only. Kappa and alpha suffer from the
prevalence paradox (one category dominating): look at percent agreement too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
from scipy import stats

from .errors import MedevalError

LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Estimate:
    name: str
    value: float | None
    ci95: tuple[float, float] | None
    n_items: int
    n_raters: int
    n_pairable: int
    missing: str
    undefined_reason: str | None = None
    extra: dict = field(default_factory=dict)
    method: str = ""

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict:
        return {"name": self.name, "value": self.value, "ci95": list(self.ci95) if self.ci95 else None,
                "n_items": self.n_items, "n_raters": self.n_raters, "n_pairable": self.n_pairable,
                "missing": self.missing, "undefined_reason": self.undefined_reason, "method": self.method,
                **({"extra": self.extra} if self.extra else {})}


def _f(x) -> float:
    return float(x)


# ---------------------------------------------------------------- input


class RatingTable:
    """Ratings as an items x raters float matrix, NaN = missing."""

    def __init__(self, values: np.ndarray, items: Sequence | None = None, raters: Sequence | None = None,
                 labels: Sequence | None = None):
        values = np.asarray(values, dtype=float)
        if values.ndim != 2:
            raise MedevalError("ratings must be a 2-D items x raters table")
        self.values = values
        self.items = list(items) if items is not None else list(range(values.shape[0]))
        self.raters = list(raters) if raters is not None else list(range(values.shape[1]))
        self.labels = list(labels) if labels is not None else None  # category labels when values are codes

    @classmethod
    def from_matrix(cls, matrix, items=None, raters=None) -> "RatingTable":
        m = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
        return cls(m, items, raters)

    @classmethod
    def from_long(cls, rows: Iterable[tuple], categories: Sequence | None = None) -> "RatingTable":
        """From ``(item, rater, value)`` rows; a blank/None value is missing.

        With ``categories`` (an ordered category set), values may be labels; they are
        stored as their position in ``categories`` and the labels kept in ``.labels``.
        """
        cells: dict[tuple, object] = {}
        items: dict = {}
        raters: dict = {}
        for row in rows:
            item, rater, value = row
            key = (item, rater)
            if key in cells:
                raise MedevalError(f"rater {rater!r} rated item {item!r} twice; keep one rating per item and rater")
            items.setdefault(item, len(items))
            raters.setdefault(rater, len(raters))
            cells[key] = value
        if not cells:
            raise MedevalError("no ratings")
        cat_index = None
        if categories is not None:
            cat_index = {}
            for i, c in enumerate(categories):
                cat_index[str(c).strip()] = i
                try:
                    cat_index.setdefault(_num_key(float(c)), i)
                except (TypeError, ValueError):
                    pass
        m = np.full((len(items), len(raters)), np.nan)
        for (item, rater), value in cells.items():
            if value is None or (isinstance(value, str) and not value.strip()) or (
                    isinstance(value, float) and math.isnan(value)):
                continue
            if cat_index is not None:
                key = str(value).strip()
                idx = cat_index.get(key)
                if idx is None:
                    try:
                        idx = cat_index.get(_num_key(float(key)))
                    except ValueError:
                        idx = None
                if idx is None:
                    raise MedevalError(f"value {value!r} (item {item!r}, rater {rater!r}) is not one of the "
                                       f"declared categories {list(categories)}")
                m[items[item], raters[rater]] = idx
                continue
            try:
                m[items[item], raters[rater]] = float(value)
            except (TypeError, ValueError):
                raise MedevalError(f"value {value!r} (item {item!r}, rater {rater!r}) is not a number; "
                                   f"declare the categories to use labels") from None
        if cat_index is not None:
            return cls(m, list(items), list(raters), labels=list(categories))
        return cls(m, list(items), list(raters))

    @property
    def n_items(self) -> int:
        return self.values.shape[0]

    @property
    def n_raters(self) -> int:
        return self.values.shape[1]

    def category_values(self) -> np.ndarray | None:
        """Numeric values of the categories when the table holds codes of numeric labels."""
        if self.labels is None:
            return None
        try:
            return np.array([float(x) for x in self.labels])
        except (TypeError, ValueError):
            return None


def _num_key(x: float) -> str:
    return f"num:{x!r}"


def _undefined(name, t: RatingTable, n_pairable, missing, reason, method="") -> Estimate:
    return Estimate(name, None, None, t.n_items, t.n_raters, n_pairable, missing, reason, {}, method)


# ---------------------------------------------------------------- ICC

ICC_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
ICC_DESCRIPTIONS = {
    "ICC1": "one-way random effects, single rater (Shrout & Fleiss ICC(1,1))",
    "ICC2": "two-way random effects, absolute agreement, single rater (ICC(2,1) = McGraw & Wong ICC(A,1))",
    "ICC3": "two-way mixed effects, consistency, single rater (ICC(3,1) = ICC(C,1))",
    "ICC1k": "one-way random effects, mean of k raters (ICC(1,k))",
    "ICC2k": "two-way random effects, absolute agreement, mean of k raters (ICC(2,k) = ICC(A,k))",
    "ICC3k": "two-way mixed effects, consistency, mean of k raters (ICC(3,k) = ICC(C,k))",
}


def icc(table: RatingTable) -> dict[str, Estimate]:
    """The six Shrout & Fleiss (1979) ICC forms with F, df, p and exact 95% CIs.

    Items with any missing rating are dropped (listwise deletion, reported in
    ``missing``). For "several doctors, a random sample of doctors, rate the same
    items" use ICC2 (ICC2k only if the mean of the k doctors is the score used).
    """
    x = table.values
    keep = ~np.isnan(x).any(axis=1)
    dropped = int((~keep).sum())
    x = x[keep]
    n, k = x.shape
    missing = (f"listwise deletion: {dropped} of {table.n_items} items dropped for a missing rating"
               if dropped else "no missing ratings")
    method = "ANOVA mean squares; 95% CI from the F distribution (Shrout & Fleiss 1979; McGraw & Wong 1996)"
    reason = None
    if k < 2:
        reason = "fewer than 2 raters"
    elif n < 2:
        reason = "fewer than 2 items with a rating from every rater"
    if reason is None and np.all(x == x.flat[0]):
        reason = "all ratings are identical (no variance)"
    if reason is None:
        x = x - x.mean()  # centred: sums of squares keep their digits whatever the offset
        ss_total = (x ** 2).sum()
        ss_rows = k * (x.mean(axis=1) ** 2).sum()
        ss_cols = n * (x.mean(axis=0) ** 2).sum()
        ss_err = max(ss_total - ss_rows - ss_cols, 0.0)
        df1, df_w, df_e = n - 1, n * (k - 1), (n - 1) * (k - 1)
        tol = 1e-10 * ss_total  # mean squares below this are rounding noise: exactly 0
        msr, msc = ss_rows / df1, ss_cols / (k - 1)
        mse = ss_err / df_e
        msw = (ss_cols + ss_err) / df_w
        msr, msc, mse, msw = (0.0 if v * max(df1, 1) <= tol else v for v in (msr, msc, mse, msw))
        if msr == 0:
            reason = "all items have the same mean rating (no between-item variance)"
    if reason is not None:
        return {f: _undefined(f, table, n, missing, reason, method) for f in ICC_FORMS}

    q = 0.975
    values = {
        "ICC1": (msr - msw, msr + (k - 1) * msw),
        "ICC1k": (msr - msw, msr),
        "ICC3": (msr - mse, msr + (k - 1) * mse),
        "ICC3k": (msr - mse, msr),
        "ICC2": (msr - mse, msr + (k - 1) * mse + k * (msc - mse) / n),
        "ICC2k": (msr - mse, msr + (msc - mse) / n),
    }
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f1 = msr / msw if msw else np.inf
        f3 = msr / mse if mse else np.inf
        f1l, f1u = f1 / stats.f.ppf(q, df1, df_w), f1 * stats.f.ppf(q, df_w, df1)
        f3l, f3u = f3 / stats.f.ppf(q, df1, df_e), f3 * stats.f.ppf(q, df_e, df1)
        cis = {"ICC1": ((f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)),
               "ICC1k": (1 - 1 / f1l, 1 - 1 / f1u),
               "ICC3": ((f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)),
               "ICC3k": (1 - 1 / f3l, 1 - 1 / f3u)}
        num, den = values["ICC2"]
        icc2 = num / den if den > tol / max(n * k, 1) else np.nan
        fj = msc / mse if mse else np.inf
        vn = df_e * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        vd = df1 * k ** 2 * icc2 ** 2 * fj ** 2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
        v = vn / vd
        f2u, f2l = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
        l2 = n * (msr - f2u * mse) / (f2u * (k * msc + (k * n - k - n) * mse) + n * msr)
        u2 = n * (f2l * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f2l * msr)
        cis["ICC2"] = (l2, u2)
        cis["ICC2k"] = (l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1)))
    F = {"ICC1": (f1, df1, df_w), "ICC1k": (f1, df1, df_w)}
    for form in ("ICC2", "ICC3", "ICC2k", "ICC3k"):
        F[form] = (f3, df1, df_e)
    out = {}
    for form in ICC_FORMS:
        num, den = values[form]
        if den <= tol / max(n * k, 1):
            out[form] = _undefined(form, table, n, missing, "the denominator of this form is 0 "
                                   "(rater variance cancels the between-item variance)", method)
            continue
        value = num / den
        lo, hi = (float(c) for c in cis[form])
        extra_note = None
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            if abs(value - 1.0) < 1e-12:
                lo = hi = 1.0  # perfect agreement / consistency
            else:
                lo = hi = None
                extra_note = "CI undefined: no residual variance"
        Fv, d1, d2 = F[form]
        p = float(stats.f.sf(Fv, d1, d2)) if math.isfinite(Fv) else 0.0
        extra = {"F": float(Fv) if math.isfinite(Fv) else None, "df1": float(d1), "df2": float(d2), "p": p,
                 "description": ICC_DESCRIPTIONS[form]}
        if extra_note:
            extra["note"] = extra_note
        out[form] = Estimate(form, float(value), None if lo is None else (lo, hi), table.n_items, table.n_raters,
                             n, missing, None, extra, method)
    return {f: out[f] for f in ICC_FORMS}


# ---------------------------------------------------------------- Krippendorff's alpha


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


def _rng(rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def krippendorff_alpha(table: RatingTable, level: str = "nominal", categories: Sequence | None = None,
                       n_boot: int = 1000, rng=None) -> Estimate:
    """Krippendorff's alpha at a level of measurement, with missing values and a bootstrap CI over items.

    ``categories``: the ordered value domain (needed for labels; for ordinal data
    only the order matters). Interval data use the closed form
    1 - (n-1) sum_u[m_u SS_u/(m_u-1)] / (n SS_total) over pairable values, so
    continuous scores cost O(values), not O(values^2).
    """
    if level not in LEVELS:
        raise MedevalError(f"level {level!r} is not one of {', '.join(LEVELS)}")
    x, m_u = _pairable(table.values)
    n_pairable = int(len(m_u))
    n_values = int(m_u.sum())
    n_missing = int(np.isnan(table.values).sum())
    missing = (f"{n_missing} missing ratings; items with fewer than 2 ratings are not pairable and are left out "
               f"({table.n_items - n_pairable} items)" if n_missing else "no missing ratings")
    method = (f"Krippendorff's alpha, {level} metric, coincidence matrix over {n_values} pairable values; "
              f"95% CI: percentile bootstrap over items ({n_boot} resamples)" if n_boot else
              f"Krippendorff's alpha, {level} metric; no CI requested")
    name = "krippendorff_alpha"
    if table.n_raters < 2:
        return _undefined(name, table, n_pairable, missing, "fewer than 2 raters", method)
    if n_pairable == 0:
        return _undefined(name, table, 0, missing, "no item has 2 or more ratings (nothing pairable)", method)

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
                              f"{V} distinct values: too many for the {level} coincidence matrix; "
                              f"use the interval level for continuous scores", method)
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
                          "all pairable values are identical: expected disagreement is 0", method)
    ci = None
    if n_boot:
        g = _rng(rng)
        boots = []
        for _ in range(int(n_boot)):
            w = np.bincount(g.integers(0, n_pairable, n_pairable), minlength=n_pairable).astype(float)
            b = compute(w)
            if b is not None:
                boots.append(b)
        if len(boots) >= max(10, n_boot // 2):
            ci = (float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)))
    return Estimate(name, value, ci, table.n_items, table.n_raters, n_pairable, missing, None,
                    {"level": level, "n_values": n_values}, method)


# ---------------------------------------------------------------- kappas and percent agreement


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
    if weights not in (None, "linear", "quadratic"):
        raise MedevalError(f"weights {weights!r} must be None, 'linear' or 'quadratic'")
    name = "cohen_kappa" + (f"_{weights}" if weights else "")
    if table.n_raters != 2:
        return _undefined(name, table, 0, "", f"Cohen's kappa needs exactly 2 raters, not {table.n_raters}")
    both = ~np.isnan(table.values).any(axis=1)
    a, b = table.values[both, 0], table.values[both, 1]
    n = int(both.sum())
    missing = (f"{table.n_items - n} items without both ratings left out" if n < table.n_items
               else "no missing ratings")
    method = (f"Cohen's kappa ({weights or 'unweighted'}) over {len(_categories(table, categories))} categories; "
              f"95% CI: percentile bootstrap over items ({n_boot} resamples)")
    if n == 0:
        return _undefined(name, table, 0, missing, "no item rated by both raters", method)
    cats = _categories(table, categories)
    pos = {float(c): i for i, c in enumerate(cats)}
    ia = np.array([pos[float(v)] for v in a])
    ib = np.array([pos[float(v)] for v in b])
    K, w = len(cats), _kappa_weights(len(cats), weights)
    value = _kappa_from_codes(ia, ib, K, w)
    if value is None:
        return _undefined(name, table, n, missing, "chance agreement is 1 (both raters used a single category)",
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
    method = "Fleiss (1971) kappa from the items x categories count table"
    x = table.values
    if np.isnan(x).any():
        return _undefined(name, table, 0, "not handled", "Fleiss' kappa needs complete data (every item rated by "
                                                         "every rater); use Krippendorff's alpha", method)
    if table.n_raters < 2:
        return _undefined(name, table, 0, "no missing ratings", "fewer than 2 raters", method)
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
        return _undefined(name, table, table.n_items, "no missing ratings",
                          "every rating is in one category: chance agreement is 1", method)
    return Estimate(name, float((p_bar - pe) / (1 - pe)), None, table.n_items, m, table.n_items,
                    "no missing ratings", None, {"p_bar": float(p_bar), "p_e": float(pe)}, method)


def percent_agreement(table: RatingTable) -> Estimate:
    """Mean over pairable items of the share of rater pairs that agree exactly."""
    shares = []
    for row in table.values:
        v = row[~np.isnan(row)]
        m = len(v)
        if m < 2:
            continue
        _, c = np.unique(v, return_counts=True)
        shares.append((c * (c - 1)).sum() / (m * (m - 1)))
    n_missing = int(np.isnan(table.values).sum())
    missing = f"{n_missing} missing ratings; pairs formed from the ratings present" if n_missing else "no missing ratings"
    method = "mean over items of the share of agreeing rater pairs"
    if not shares:
        return _undefined("percent_agreement", table, 0, missing, "no item has 2 or more ratings", method)
    return Estimate("percent_agreement", float(np.mean(shares)), None, table.n_items, table.n_raters, len(shares),
                    missing, None, {}, method)


# ---------------------------------------------------------------- correlations

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
    missing = f"pairwise deletion: {dropped} pairs with a missing value dropped" if dropped else "no missing values"
    desc = f"{method} correlation (scipy); 95% CI by Fisher z"
    base = dict(n_items=len(x), n_raters=2, n_pairable=n, missing=missing, method=desc)
    x, y = x[ok], y[ok]
    if n < 3:
        return Estimate(method, None, None, undefined_reason="fewer than 3 complete pairs", **base)
    if np.all(x == x[0]) or np.all(y == y[0]):
        return Estimate(method, None, None, undefined_reason="one of the two variables is constant", **base)
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


# ---------------------------------------------------------------- summary (CLI and reports)


def _brief(e: Estimate) -> dict:
    return {"value": e.value, "ci95": list(e.ci95) if e.ci95 else None, "undefined_reason": e.undefined_reason}


def read_long(path) -> list[tuple[str, str, str]]:
    """Rows ``(item, rater, value)`` of a long-format file with columns item, rater, value."""
    from .io import cell, read_table, require_columns

    from .errors import InputError

    header, rows = read_table(path)
    require_columns(path, header, ["item", "rater", "value"])
    out, seen = [], {}
    for line, r in rows:
        item, rater = cell(r, "item"), cell(r, "rater")
        if not item or not rater:
            raise InputError("item or rater is empty", file=str(path), row=line,
                             fix="every row names the item and the rater (a blank value means missing)")
        if (item, rater) in seen:
            raise InputError(f"rater {rater!r} rated item {item!r} twice (also on row {seen[(item, rater)]})",
                             file=str(path), row=line,
                             fix="keep one rating per item and rater; ratings are never averaged silently")
        seen[(item, rater)] = line
        out.append((item, rater, cell(r, "value")))
    return out


def summarise(rows: Sequence[tuple], level: str, categories: Sequence | None = None, n_boot: int = 1000,
              rng=0) -> dict:
    """Every statistic that fits ``level`` for long-format ratings, as plain data (the CLI's JSON)."""
    if level not in LEVELS:
        raise MedevalError(f"level {level!r} is not one of {', '.join(LEVELS)}")
    values = [v for _, _, v in rows if v is not None and str(v).strip()]
    numeric = True
    for v in values:
        try:
            float(v)
        except (TypeError, ValueError):
            numeric = False
            break
    if not numeric and categories is None:
        if level != "nominal":
            bad = next(v for v in values if not _is_number(v))
            raise MedevalError(f"value {bad!r} is not a number: {level} data must be numeric (or give "
                               f"--categories in order, e.g. --categories low,mid,high, for ordinal labels)")
        categories = sorted({str(v).strip() for v in values})
    table = RatingTable.from_long(rows, categories=categories if not numeric else None)
    numeric_table = table.labels is None or table.category_values() is not None
    alpha = krippendorff_alpha(table, level, categories=categories if numeric else None, n_boot=n_boot, rng=rng)
    pa = percent_agreement(table)
    out: dict = {
        "n_items": table.n_items, "n_raters": table.n_raters, "n_ratings": int((~np.isnan(table.values)).sum()),
        "n_pairable_items": alpha.n_pairable, "level": level,
        "categories": list(categories) if categories is not None else None,
        "missing": alpha.missing,
        "percent_agreement": pa.value,
        "krippendorff_alpha": {**_brief(alpha), "method": alpha.method},
    }
    if numeric_table and level in ("ordinal", "interval", "ratio"):
        t = table if table.labels is None else RatingTable(
            np.where(np.isnan(table.values), np.nan,
                     table.category_values()[np.nan_to_num(table.values).astype(int)]), table.items, table.raters)
        forms = icc(t)
        out["icc"] = {k: {**_brief(e), **({"F": e.extra["F"], "df1": e.extra["df1"], "df2": e.extra["df2"],
                                           "p": e.extra["p"]} if e.value is not None else {})}
                      for k, e in forms.items()}
        out["icc_missing"] = next(iter(forms.values())).missing
    if level in ("nominal", "ordinal"):
        fk = fleiss_kappa(table, categories if numeric else None)
        out["fleiss_kappa"] = _brief(fk)
    if table.n_raters == 2:
        cats = categories if numeric else None
        out["cohen_kappa"] = {w or "unweighted": _brief(cohen_kappa(table, w, cats, n_boot=n_boot, rng=rng))
                              for w in (None, "linear", "quadratic")}
        if numeric_table:
            sp = correlation(table.values[:, 0], table.values[:, 1], "spearman")
            out["spearman"] = {"rho": sp.value, "p": sp.extra.get("p"), "ci95": list(sp.ci95) if sp.ci95 else None,
                               "undefined_reason": sp.undefined_reason}
    return out


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def render_summary(s: dict, fmt: str) -> str:
    import csv
    import io
    import json

    if fmt == "json":
        return json.dumps(s, ensure_ascii=False, indent=2) + "\n"
    rows = [("percent_agreement", s["percent_agreement"], None, None)]
    a = s["krippendorff_alpha"]
    rows.append((f"krippendorff_alpha_{s['level']}", a["value"], a["ci95"], a["undefined_reason"]))
    for k, v in (s.get("icc") or {}).items():
        rows.append((k, v["value"], v["ci95"], v["undefined_reason"]))
    if "fleiss_kappa" in s:
        rows.append(("fleiss_kappa", s["fleiss_kappa"]["value"], s["fleiss_kappa"]["ci95"],
                     s["fleiss_kappa"]["undefined_reason"]))
    for k, v in (s.get("cohen_kappa") or {}).items():
        rows.append((f"cohen_kappa_{k}", v["value"], v["ci95"], v["undefined_reason"]))
    if "spearman" in s:
        rows.append(("spearman_rho", s["spearman"]["rho"], s["spearman"]["ci95"], s["spearman"]["undefined_reason"]))
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["statistic", "value", "ci95_low", "ci95_high", "undefined_reason", "n_items", "n_raters"])
        for name, v, ci, why in rows:
            w.writerow([name, "" if v is None else repr(v), ci[0] if ci else "", ci[1] if ci else "", why or "",
                        s["n_items"], s["n_raters"]])
        return buf.getvalue()
    if fmt == "md":
        out = [f"{s['n_items']} items, {s['n_raters']} raters, {s['n_pairable_items']} pairable items; "
               f"level {s['level']}; missing data: {s['missing']}.", "",
               "| statistic | value | 95% CI |", "|---|---|---|"]
        for name, v, ci, why in rows:
            val = f"undefined: {why}" if v is None else f"{v:.4f}"
            out.append(f"| {name} | {val} | {f'[{ci[0]:.4f}, {ci[1]:.4f}]' if ci else ''} |")
        return "\n".join(out) + "\n"
    raise MedevalError(f"unknown format {fmt!r}")
