"""The figures of a task campaign's report, chosen by a results table's name whatever the task type (per model,
agreement, preference share, AccR, model rankings, mean rating, the judge per criterion), and a section's own
figures; every label is imported text, shortened and escaped by Plotly as plain text. Titles, axes and legends are
in the current language (:func:`medeval.core.i18n.language`), the results' columns and statistics by
:func:`~medeval.reports.task_report.methods.head` and :func:`~medeval.reports.task_report.methods.term`.
"""

from __future__ import annotations

import plotly.graph_objects as go

from medeval.core.i18n import _
from medeval.reports import html_kit as kit
from medeval.reports.task_report.methods import fmt, head, term


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _err(values, cis, low=None, high=None):
    """Asymmetric error bars from CIs (or from per-row low/high values); missing ones are 0."""
    plus, minus = [], []
    for v, c in zip(values, cis):
        ok = v is not None and c and c[0] is not None and c[1] is not None
        plus.append(max(0.0, c[1] - v) if ok else 0)
        minus.append(max(0.0, v - c[0]) if ok else 0)
    return dict(type="data", symmetric=False, array=plus, arrayminus=minus)


def _bar_layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    fig.update_layout(title=kit.short(title, 90), **{**kit.PLOT_LAYOUT, **kw})
    return fig


def ratings_figure(rows: list[dict]) -> go.Figure:
    """Rubric: mean rating (1-5) per model, one bar per criterion and the mean over criteria."""
    crits = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in ("model", "ratings")]
    fig = go.Figure()
    models = [kit.short(r["model"]) for r in rows]
    for c in crits:
        fig.add_trace(go.Bar(x=models, y=[_num(r.get(c)) for r in rows], name=kit.short(head(c)),
                             text=[kit.fmt(_num(r.get(c)), 2) if _num(r.get(c)) is not None else "" for r in rows]))
    fig.update_yaxes(range=[0, 5.2], title=_("mean rating (1-5)"))
    return _bar_layout(fig, _("Mean rating per model"), barmode="group")


def agreement_figure(rows: list[dict]) -> go.Figure:
    """Agreement statistics with their 95% CIs (undefined ones drawn at 0, labelled undefined)."""
    labels = [f"{kit.short(term(r.get('rated', '')), 28)} · {kit.short(term(r.get('statistic', '')), 60)}"
              for r in rows]
    values = [_num(r.get("value")) for r in rows]
    fig = go.Figure(go.Bar(x=[v if v is not None else 0 for v in values], y=labels, orientation="h",
                           error_x=_err(values, [r.get("ci95") for r in rows]),
                           text=[fmt(v) for v in values], textposition="auto", marker_color="#4c78a8"))
    for x in (0.667, 0.8):
        fig.add_vline(x=x, line_dash="dot", line_color="#999")
    fig.update_xaxes(range=[-1.05, 1.05])
    fig.update_yaxes(autorange="reversed")
    return _bar_layout(fig, _("Agreement (95% CI where available)"), height=140 + 26 * len(rows),
                       margin=dict(l=330, r=20, t=50, b=40))


def shares_figure(rows: list[dict], title: str) -> go.Figure:
    """Preference: each source's share of the choices (a tie counts half), bars from lowest to highest annotator."""
    values = [_num(r.get("share")) for r in rows]
    cis = [[r.get("lowest annotator"), r.get("highest annotator")] for r in rows]
    fig = go.Figure(go.Bar(x=[kit.short(r["source"]) for r in rows], y=values, error_y=_err(values, cis),
                           text=[kit.fmt(v, 2) for v in values], marker_color="#72b7b2"))
    fig.add_hline(y=0.5, line_dash="dot", line_color="#999")
    fig.update_yaxes(range=[0, 1], tickformat=".0%", title=_("share of choices (error bars: annotators' range)"))
    return _bar_layout(fig, title)


def accr_figure(rows: list[dict]) -> go.Figure:
    """AccR per model (per item: factual + counterfactual claim), by majority over items and over ratings."""
    fig = go.Figure()
    models = [kit.short(r["model"]) for r in rows]
    for key, color in (("AccR (items, majority)", "#f58518"), ("AccR (ratings)", "#4c78a8")):
        vals = [_num(r.get(key)) for r in rows]
        fig.add_trace(go.Bar(x=models, y=vals, name=head(key), marker_color=color,
                             text=[fmt(v, 2) for v in vals]))
    fig.update_yaxes(range=[0, 1], tickformat=".0%", title="AccR")
    return _bar_layout(fig, _("Accuracy Reliability per model (per item: factual + counterfactual claim)"),
                       barmode="group")


def rankings_figure(rows: list[dict]) -> go.Figure:
    """Rubric with a judge: the judge's and the clinicians' mean score per model."""
    fig = go.Figure()
    models = [kit.short(r["model"]) for r in rows]
    for key, color in (("judge mean", "#9d755d"), ("clinicians mean", "#54a24b")):
        fig.add_trace(go.Bar(x=models, y=[_num(r.get(key)) for r in rows], name=head(key), marker_color=color))
    return _bar_layout(fig, _("The judge and the clinicians: mean score per model"), barmode="group")


def criterion_figure(rows: list[dict]) -> go.Figure:
    """The clinicians' mean rating of the judge's assessments per criterion."""
    fig = go.Figure(go.Bar(x=[kit.short(term(r["criterion"])) for r in rows], y=[_num(r.get("mean")) for r in rows],
                           text=[kit.fmt(_num(r.get("mean")), 2) for r in rows], marker_color="#b279a2"))
    fig.update_yaxes(range=[0, 5.2], title=_("mean rating (1-5)"))
    return _bar_layout(fig, _("The judge's assessments: mean rating per criterion"))


def judge_criterion_figure(rows: list[dict]) -> go.Figure:
    """Pearson and Spearman per criterion (the "per criterion" table) with their 95% CIs; a criterion without a
    value (no clinicians' ratings, undefined) has no bar and says why on hover."""
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
        fig.add_trace(go.Bar(x=[kit.short(term(c)) for c in names], y=vals, name=term(stat), marker_color=color,
                             error_y=dict(type="data", symmetric=False, array=plus, arrayminus=minus),
                             text=[fmt(v, 2) for v in vals],
                             hovertext=[kit.plain(term(by[c].get("undefined_reason")) or "") if c in by else ""
                                        for c in names]))
    fig.update_yaxes(range=[-1, 1], title=_("correlation with the clinicians"))
    fig.update_layout(title=kit.short(_("The judge against the clinicians, per criterion"), 90), barmode="group",
                      **kit.PLOT_LAYOUT)
    return fig


def _agreement_rows(rows):
    return [r for r in rows if "statistic" in r and "value" in r and "rated" in r]


def table_figure(name: str, rows: list[dict], section_title: str) -> go.Figure | None:
    """The figure that suits a results table, or None (keyed by the table's name, whatever the task type)."""
    if not rows:
        return None
    if name == "per model" and all("model" in r for r in rows):
        return ratings_figure(rows)
    if name == "agreement" and _agreement_rows(rows):
        return agreement_figure(_agreement_rows(rows))
    if name == "preference share" and all("share" in r for r in rows):
        return shares_figure(rows, section_title)
    if name == "AccR" and all("model" in r for r in rows):
        return accr_figure(rows)
    if name == "model rankings" and all("model" in r for r in rows):
        return rankings_figure(rows)
    if name == "mean rating" and all("criterion" in r for r in rows):
        return criterion_figure(rows)
    if name == "per criterion" and all("statistic" in r for r in rows):
        return judge_criterion_figure(rows)
    return None


def section_figures(sec: dict) -> list[tuple[str, go.Figure]]:
    """The figures of one section: its own (``figures``, Plotly dicts, if the type gives any) and the tables'."""
    out = []
    for n, f in enumerate(sec.get("figures") or []):
        spec = f.get("figure", f) if isinstance(f, dict) else f
        try:
            out.append((f"own-{n}", go.Figure(spec)))
        except (ValueError, TypeError):  # not a figure: the tables still say everything
            continue
    for name, rows in sec["tables"].items():
        fig = table_figure(name, rows, sec["title"])
        if fig is not None:
            out.append((name, fig))
    return out
