"""The judge-vs-clinicians summary rendered as JSON, one tidy CSV table, or Markdown for a report."""

from __future__ import annotations

from medeval.core.errors import MedevalError
from medeval.stats.agreement.correlations import EXACT_MAX_N
from medeval.stats.judge.measures import SOURCES


def _num(v, digits: int = 4) -> str:
    if v is None:
        return ""
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _csv_rows(s: dict) -> list[list]:
    rows = []
    for key in ("spearman", "pearson"):
        e = s[key]
        ci = e["ci95"] or [None, None]
        rows.append([key, "", "", "", e["value"], ci[0], ci[1], e["p"], e["n"], e["undefined_reason"],
                     e.get("ci_undefined_reason")])
    a2, a3 = s["accuracy_2tuple"], s["accuracy_triple"]
    rows.append(["accuracy_2tuple", "", "", "", a2["value"], None, None, None, a2["n_pairs"], a2["undefined_reason"],
                 None])
    rows.append(["accuracy_triple", "", "", "", a3["value"], None, None, None, a3["n_cases"], a3["undefined_reason"],
                 None])
    e = s["ranking"]["spearman"]
    ci = e["ci95"] or [None, None]
    rows.append(["ranking_spearman", "", "", "", e["value"], ci[0], ci[1], e["p"], e["n"], e["undefined_reason"],
                 e.get("ci_undefined_reason")])
    for src in SOURCES:
        for a, cells in s["win_rate"][src].items():
            for b, c in cells.items():
                for stat in ("win", "tie", "loss"):
                    rows.append([f"{stat}_rate", src, a, b, c[stat], None, None, None, c["n_cases"],
                                 c.get("undefined_reason"), None])
    for c in s.get("criteria", []):
        for key in ("pearson", "spearman", "pearson_model_means"):
            e = c.get(key) or {"value": None, "ci95": None, "p": None, "undefined_reason": c["status"]}
            ci = e["ci95"] or [None, None]
            n = c["n_models"] if key == "pearson_model_means" else c["n"]
            rows.append([f"{key}_criterion", "", c["criterion"], "", e["value"], ci[0], ci[1], e["p"], n,
                         e["undefined_reason"], e.get("ci_undefined_reason")])
    for src in SOURCES:
        for m in s["ranking"][src]:
            rows.append(["mean_score", src, m["model"], "", m["mean"], None, None, None, m["n_responses"], None, None])
            rows.append(["rank", src, m["model"], "", m["rank"], None, None, None, m["n_responses"], None, None])
    return rows


METHODS_NOTE = (f"95% CIs by Fisher z: Pearson with variance 1/(n - 3), Spearman with the Bonett-Wright variance "
                f"(1 + rho^2/2)/(n - 3); no CI for n <= 3 or |r| = 1. Spearman's p is the exact permutation p-value "
                f"for n <= {EXACT_MAX_N} (all n! orderings), scipy's t approximation above.")
"""How the Markdown report's intervals and p-values were computed (one Spearman interval everywhere)."""


def _ci_cell(ci, why) -> str:
    """A 95% CI as a report cell: the interval, or why a defined value has none (e.g. |r| = 1)."""
    if ci:
        return f"[{ci[0]:.4f}, {ci[1]:.4f}]"
    return f"undefined: {why}" if why else ""


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def render(s: dict, fmt: str) -> str:
    """The summary as ``json``, ``csv`` (one tidy table) or ``md`` (for a report)."""
    import io
    import json

    from medeval.core import csvsafe

    if fmt == "json":
        return json.dumps(s, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csvsafe.writer(buf, lineterminator="\n")
        w.writerow(["statistic", "source", "model_a", "model_b", "value", "ci95_low", "ci95_high", "p", "n",
                    "undefined_reason", "ci95_undefined_reason"])
        for row in _csv_rows(s):
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
        return buf.getvalue()
    if fmt != "md":
        raise MedevalError(f"unknown format {fmt!r} (json, csv or md)")
    raters = (f"{s['n_raters']} raters (clinicians' score = mean over raters)" if s["n_raters"] is not None
              else "human_score as given (no rater column)")
    out = [f"{s['n_cases']} cases, {s['n_responses']} responses, {s['n_models']} models; {raters}.", ""]
    out += [f"> warning: {w}" for w in s["warnings"]] + ([""] if s["warnings"] else [])
    out += ["| statistic | value | 95% CI | n |", "|---|---|---|---|"]

    def line(name, value, ci, n, why, pct=False, ci_why=None):
        val = f"undefined: {why}" if value is None else (_pct(value) if pct else f"{value:.4f}")
        out.append(f"| {name} | {val} | {_ci_cell(ci, ci_why)} | {n} |")

    for key, label in (("spearman", "Spearman (responses)"), ("pearson", "Pearson (responses)")):
        e = s[key]
        line(label, e["value"], e["ci95"], e["n"], e["undefined_reason"], ci_why=e.get("ci_undefined_reason"))
    a2, a3 = s["accuracy_2tuple"], s["accuracy_triple"]
    line("Accuracy_2-tuple", a2["value"], None, f"{a2['n_pairs']} pairs", a2["undefined_reason"], pct=True)
    line("Accuracy_triple", a3["value"], None, f"{a3['n_cases']} cases", a3["undefined_reason"], pct=True)
    e = s["ranking"]["spearman"]
    line("Spearman (model rankings)", e["value"], e["ci95"], f"{e['n']} models", e["undefined_reason"],
         ci_why=e.get("ci_undefined_reason"))
    out += ["", METHODS_NOTE]
    if s.get("criteria"):
        out += ["", "Per criterion (CMB-Clin §5.3), the judge's score against the clinicians' mean, over the "
                "responses both scored:", "", "| criterion | Pearson | 95% CI | Spearman | 95% CI | n | Pearson (model means) | 95% CI | models |",
                "|---|---|---|---|---|---|---|---|---|"]
        for c in s["criteria"]:
            cells = []
            for key in ("pearson", "spearman", "pearson_model_means"):
                if key == "pearson_model_means":
                    cells.append(str(c["n"]))
                e = c[key]
                if e is None:
                    cells += [c["status"], ""]
                elif e["value"] is None:
                    cells += [f"undefined: {e['undefined_reason']}", ""]
                else:
                    cells += [f"{e['value']:.4f}", _ci_cell(e["ci95"], e.get("ci_undefined_reason"))]
            out.append(f"| {c['criterion']} | " + " | ".join(cells) + f" | {c.get('n_models') or ''} |")
    models = s["win_rate"]["models"]
    if len(models) >= 2:
        out += ["", "Win rate of the row model over the column model, judge | clinicians (ties in brackets):", "",
                "| | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
        for a in models:
            cells = []
            for b in models:
                if a == b:
                    cells.append("")
                    continue
                j, c = s["win_rate"]["judge"][a][b], s["win_rate"]["clinicians"][a][b]
                cells.append("-" if not j["n_cases"] else
                             f"{_pct(j['win'])} ({_pct(j['tie'])}) \\| {_pct(c['win'])} ({_pct(c['tie'])})")
            out.append(f"| {a} | " + " | ".join(cells) + " |")
    if models:
        by = {src: {m["model"]: m for m in s["ranking"][src]} for src in SOURCES}
        out += ["", "| model | judge mean | judge rank | clinicians mean | clinicians rank | responses |",
                "|---|---|---|---|---|---|"]
        for m in s["ranking"]["judge"]:
            j, c = by["judge"][m["model"]], by["clinicians"][m["model"]]
            out.append(f"| {m['model']} | {j['mean']:.3f} | {j['rank']:g} | {c['mean']:.3f} | {c['rank']:g} | "
                       f"{j['n_responses']} |")
    return "\n".join(out) + "\n"
