"""Intraclass correlation: the six Shrout & Fleiss ICC forms with F tests and exact F-based 95% CIs."""

from __future__ import annotations

import math

import numpy as np
# (scipy is imported where it is used: `python -m medeval` and the app's pages start without it)

from medeval.core.i18n import N_, _
from medeval.stats.agreement.ratings import Estimate, RatingTable, _undefined

ICC_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
ICC_DESCRIPTIONS = {  # English; an estimate carries _() of it
    "ICC1": N_("one-way random effects, single rater (Shrout & Fleiss ICC(1,1))"),
    "ICC2": N_("two-way random effects, absolute agreement, single rater (ICC(2,1) = McGraw & Wong ICC(A,1))"),
    "ICC3": N_("two-way mixed effects, consistency, single rater (ICC(3,1) = ICC(C,1))"),
    "ICC1k": N_("one-way random effects, mean of k raters (ICC(1,k))"),
    "ICC2k": N_("two-way random effects, absolute agreement, mean of k raters (ICC(2,k) = ICC(A,k))"),
    "ICC3k": N_("two-way mixed effects, consistency, mean of k raters (ICC(3,k) = ICC(C,k))"),
}


def icc(table: RatingTable) -> dict[str, Estimate]:
    """The six Shrout & Fleiss (1979) ICC forms with F, df, p and exact 95% CIs.

    Items with any missing rating are dropped (listwise deletion, reported in
    ``missing``). For "several doctors, a random sample of doctors, rate the same
    items" use ICC2 (ICC2k only if the mean of the k doctors is the score used).
    """
    from scipy import stats
    x = table.values
    keep = ~np.isnan(x).any(axis=1)
    dropped = int((~keep).sum())
    x = x[keep]
    n, k = x.shape
    missing = (_("listwise deletion: {n} of {items} items dropped for a missing rating").format(
                   n=dropped, items=table.n_items) if dropped else _("no missing ratings"))
    method = _("ANOVA mean squares; 95% CI from the F distribution (Shrout & Fleiss 1979; McGraw & Wong 1996)")
    reason = None
    if k < 2:
        reason = _("fewer than 2 raters")
    elif n < 2:
        reason = _("fewer than 2 items with a rating from every rater")
    if reason is None and np.all(x == x.flat[0]):
        reason = _("all ratings are identical (no variance)")
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
            reason = _("all items have the same mean rating (no between-item variance)")
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
            out[form] = _undefined(form, table, n, missing, _("the denominator of this form is 0 "
                                     "(rater variance cancels the between-item variance)"), method)
            continue
        value = num / den
        lo, hi = (float(c) for c in cis[form])
        extra_note = None
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            if abs(value - 1.0) < 1e-12:
                lo = hi = 1.0  # perfect agreement / consistency
            else:
                lo = hi = None
                extra_note = _("CI undefined: no residual variance")
        Fv, d1, d2 = F[form]
        p = float(stats.f.sf(Fv, d1, d2)) if math.isfinite(Fv) else 0.0
        extra = {"F": float(Fv) if math.isfinite(Fv) else None, "df1": float(d1), "df2": float(d2), "p": p,
                 "description": _(ICC_DESCRIPTIONS[form])}
        if extra_note:
            extra["note"] = extra_note
        out[form] = Estimate(form, float(value), None if lo is None else (lo, hi), table.n_items, table.n_raters,
                             n, missing, None, extra, method)
    return {f: out[f] for f in ICC_FORMS}
