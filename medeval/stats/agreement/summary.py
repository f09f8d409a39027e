"""The ``agreement`` command: read a long-format ratings file, compute every statistic that fits the level,
render the result as JSON, CSV or Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medeval.core.errors import MedevalError
from medeval.stats.agreement.alpha import krippendorff_alpha
from medeval.stats.agreement.correlations import correlation
from medeval.stats.agreement.intraclass import icc
from medeval.stats.agreement.kappa import cohen_kappa, fleiss_kappa, percent_agreement
from medeval.stats.agreement.ratings import LEVELS, Estimate, RatingTable, check_bootstrap


def _brief(e: Estimate) -> dict:
    return {"value": e.value, "ci95": list(e.ci95) if e.ci95 else None, "undefined_reason": e.undefined_reason}


def read_long(path) -> list[tuple[str, str, str]]:
    """Rows ``(item, rater, value)`` of a long-format file with columns item, rater, value."""
    from medeval.core.errors import InputError
    from medeval.core.limits import read_table_limited
    from medeval.core.tables import cell, require_columns

    header, rows = read_table_limited(path)
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
    n_boot, rng = check_bootstrap(n_boot, rng)
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
                               "undefined_reason": sp.undefined_reason,
                               "ci_undefined_reason": sp.extra.get("ci_undefined_reason") if sp.value is not None
                               else None, "p_method": sp.extra.get("p_method"), "method": sp.method}
    return out


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def render_summary(s: dict, fmt: str) -> str:
    import io
    import json

    from medeval.core import csvsafe

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
        sp = s["spearman"]  # a defined rho without a CI (|rho| = 1, n <= 3) says why in the reason column
        rows.append(("spearman_rho", sp["rho"], sp["ci95"], sp["undefined_reason"] or sp.get("ci_undefined_reason")))
    if fmt == "csv":
        buf = io.StringIO()
        w = csvsafe.writer(buf, lineterminator="\n")
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
            ci_cell = f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else (f"undefined: {why}" if v is not None and why else "")
            out.append(f"| {name} | {val} | {ci_cell} |")
        return "\n".join(out) + "\n"
    raise MedevalError(f"unknown format {fmt!r}")
