"""The judge's part of a rubric campaign's methods paragraph (:mod:`medeval.reports.task_report`): how the
judge's scores were compared with the clinicians', overall (AutoMedEval §4.3) and per criterion (CMB-Clin §5.3),
with the figures.
"""

from __future__ import annotations

from medeval.annotation.tasks.rubric import JUDGE_RUBRIC
from medeval.reports import html_kit as kit


def _rows(r: dict, table: str) -> list[dict]:
    return [row for sec in r["sections"] for row in sec["tables"].get(table, [])]


def _stat(row: dict, label: str, digits=3) -> str:
    """"label = 0.712 (95% CI ...)", or "label undefined (reason)"."""
    if row.get("value") is None:
        return f"{label} undefined ({row.get('undefined_reason') or 'no value'})"
    return f"{label} = {kit.fmt(row['value'], digits)}{kit.ci_text(row.get('ci95'), digits)}"


def judge_methods(r: dict, judge: str) -> str:
    """The sentences on the judge: part 2, the overall comparison and, when the judge scored criteria, the
    per-criterion correlations (a criterion the clinicians do not rate: "no expert ratings")."""
    text = (f"In a second part, shown and accepted only after every response of the item was rated "
            f"(AutoMedEval App. D), annotators rated the judge {judge}'s assessment on "
            f"{', '.join(c.name for c in JUDGE_RUBRIC)}. The judge's score of each response was compared with "
            f"the clinicians' score (mean over criteria, then over clinicians): ")
    stats = _rows(r, "statistics")
    text += ("; ".join(_stat(x, x["statistic"]) + f" (n = {x.get('n')})" for x in stats) +
             " (Spearman and Pearson with Fisher-z CIs). " if stats else
             "undefined until responses have ratings on every criterion. ")
    crit: dict[str, list[dict]] = {}
    for x in _rows(r, "per criterion"):
        crit.setdefault(x["criterion"], []).append(x)
    if not crit:
        return text
    parts = []
    for c, xs in crit.items():
        if xs[0]["n"] == 0 and xs[0]["value"] is None:
            parts.append(f"{c}: {xs[0]['undefined_reason']}")
        else:
            parts.append(f"{c}: " + ", ".join(_stat(x, x["statistic"]) + f" (n = {x['n']})" for x in xs))
    return text + ("As CMB-Clin reports per perspective (App. E.3), the judge's score of a response on each "
                   "criterion it scored was correlated with the clinicians' on the same criterion (the mean over "
                   "the clinicians who rated it; criterion names matched case-insensitively), over the responses "
                   "both scored, and -- since the paper does not say whether its Pearson runs over responses or "
                   "models -- over the models' mean scores (n = models): " + "; ".join(parts) + " (Pearson with "
                   "a Fisher-z CI; Spearman with a Fisher-z CI using the Bonett-Wright variance). ")


def criterion_figure(rows: list[dict]):
    """Pearson and Spearman per criterion (the "per criterion" table) with their 95% CIs; a criterion without a
    value (no expert ratings, undefined) has no bar and says why on hover."""
    import plotly.graph_objects as go

    names = list(dict.fromkeys(r["criterion"] for r in rows))
    fig = go.Figure()
    for stat, color in (("Pearson", "#4c78a8"), ("Spearman", "#f58518"), ("Pearson (model means)", "#54a24b")):
        if not any(r["statistic"] == stat for r in rows):
            continue
        by = {r["criterion"]: r for r in rows if r["statistic"] == stat}
        vals = [by[c]["value"] if c in by else None for c in names]
        cis = [by[c].get("ci95") if c in by else None for c in names]
        plus = [c[1] - v if v is not None and c else 0 for v, c in zip(vals, cis)]
        minus = [v - c[0] if v is not None and c else 0 for v, c in zip(vals, cis)]
        fig.add_trace(go.Bar(x=[kit.short(c) for c in names], y=vals, name=stat, marker_color=color,
                             error_y=dict(type="data", symmetric=False, array=plus, arrayminus=minus),
                             text=[kit.fmt(v, 2) if v is not None else "undefined" for v in vals],
                             hovertext=[by[c].get("undefined_reason") or "" if c in by else "" for c in names]))
    fig.update_yaxes(range=[-1, 1], title="correlation with the clinicians")
    fig.update_layout(title=kit.short("The judge against the clinicians, per criterion", 90), barmode="group",
                      **kit.PLOT_LAYOUT)
    return fig
