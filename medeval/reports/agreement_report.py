"""The agreement report of a campaign: Plotly figures, one self-contained HTML file, its PDF, CSV and JSON.

The HTML works offline: plotly.js's basic bundle is inlined once (1.2 MB: :mod:`medeval.reports.html_kit`) and
every figure refers to it. The PDF is that HTML printed by headless Chromium (Debian's
``chromium``; nothing is downloaded). Every number in the report comes from
:func:`medeval.reports.dashboard.campaign_agreement`, which is also written as JSON and CSV.
The page shell, tables, figure embedding and printing are shared with the other reports
(:mod:`medeval.reports.html_kit`); ``chromium_path`` and ``print_pdf`` stay importable from here.
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go

from medeval.annotation.campaign_text import kind_label
from medeval.annotation.gold.results import qualification_words
from medeval.calibration.validation import CONSENSUS_NAMES as VALIDATION_CONSENSUS_NAMES
from medeval.calibration.validation import CONSENSUS_NOTES, DISPLAY_COLUMNS
from medeval.calibration.validation import display_rows as machine_rows
from medeval.core.display import percent
from medeval.core import i18n
from medeval.core.i18n import N_, _
from medeval.engine.registry import label as metric_label
from medeval.reports import html_kit as kit
from medeval.reports.dashboard import consensus_key
from medeval.reports.html_kit import chromium_path, print_pdf  # noqa: F401  (imported from here by pages, tests)

TIER_NAMES = (N_("Completely Wrong"), N_("Partially Correct"), N_("Basically Correct"))  # shown with _()
_LAYOUT = kit.PLOT_LAYOUT
_plain = kit.plain  # a name as Plotly shows it literally
_fmt = kit.fmt
_table = kit.table
_cell = kit.cell
_write_csv = kit.write_csv


def _err(values, cis):
    plus = [(c[1] - v) if c and v is not None else 0 for v, c in zip(values, cis)]
    minus = [(v - c[0]) if c and v is not None else 0 for v, c in zip(values, cis)]
    return dict(type="data", symmetric=False, array=plus, arrayminus=minus)


def panel_figure(s: dict) -> go.Figure:
    """The panel statistics with their 95% CIs (reading lines at 0.667 and 0.800)."""
    names = [_plain(p["title"]) for p in s["panel"]]
    values = [p["estimate"]["value"] for p in s["panel"]]
    cis = [p["estimate"]["ci95"] for p in s["panel"]]
    fig = go.Figure(go.Bar(x=[v if v is not None else 0 for v in values], y=names, orientation="h",
                           error_x=_err(values, cis), text=[_fmt(v) for v in values], textposition="auto",
                           marker_color="#4c78a8"))
    for x, label in ((0.667, "0.667"), (0.8, "0.800")):
        fig.add_vline(x=x, line_dash="dot", line_color="#999", annotation_text=label)
    fig.update_layout(title=_("Agreement of the panel (95% CI where available)"), xaxis_range=[min([-0.1, *[
        (c[0] if c else 0) for c in cis]]), 1], **_LAYOUT)  # (a list: no statistic yet is no error)
    fig.update_yaxes(autorange="reversed")
    return fig


def annotator_figure(s: dict) -> go.Figure:
    """Each annotator's Spearman correlation with the median of the other annotators."""
    rows = s["annotators"]
    values = [r["spearman_vs_panel"] for r in rows]
    fig = go.Figure(go.Bar(x=[_plain(r["annotator"]) for r in rows], y=[v if v is not None else 0 for v in values],
                           error_y=_err(values, [r["spearman_ci95"] for r in rows]), text=[_fmt(v, 2) for v in values],
                           marker_color="#72b7b2"))
    fig.update_layout(title=_("Each annotator vs the rest of the panel (Spearman, 95% CI)"), yaxis_range=[-1, 1],
                      **_LAYOUT)
    return fig


def drift_figure(s: dict) -> go.Figure:
    """Agreement with the rest of the panel, block by block, in the order each annotator answered."""
    fig = go.Figure()
    for r in s["annotators"]:
        if r["drift"]:
            fig.add_trace(go.Scatter(x=[b["block"] for b in r["drift"]], y=[b["exact_agreement"] for b in r["drift"]],
                                     mode="lines+markers", name=_plain(r["annotator"]),
                                     customdata=[_plain(b["answers"]) for b in r["drift"]],
                                     hovertemplate=_("answers") + " %{customdata}: %{y:.1%}"
                                                   "<extra>%{fullData.name}</extra>"))
    fig.update_layout(title=_("Drift: same tier as the rest of the panel, per block of answers"), yaxis_range=[0, 1],
                      yaxis_tickformat=".0%", xaxis_title=_("block (in the order given)"), xaxis_dtick=1,
                      **_LAYOUT)
    return fig


def tier_figure(s: dict) -> go.Figure:
    """How often each annotator used each tier."""
    fig = go.Figure()
    names = sorted({d["annotator"] for d in s["tier_distribution"]})
    for t, color in zip(range(3), ("#e45756", "#f2cf5b", "#54a24b")):
        fig.add_trace(go.Bar(x=[_plain(n) for n in names], y=[next(d["count"] for d in s["tier_distribution"]
                                             if d["annotator"] == n and d["tier"] == t) for n in names],
                             name=_(TIER_NAMES[t]), marker_color=color))
    fig.update_layout(barmode="stack", title=_("Tiers given, per annotator"), **_LAYOUT)
    return fig


def disagreement_rows(s: dict) -> list[dict]:
    """The widest disagreements with each annotator's tier by name ("sim_clin_a: Basically Correct"), not by code."""
    return [{**r, "tiers": "; ".join(f"{who}: {_(TIER_NAMES[t])}" for who, t in r["tiers"].items())}
            for r in s["disagreements"]]


def headline_rows(s: dict) -> list[dict]:
    """The rows the figure shows: each metric and the average on the pooled text items (enumerated and
    declarative, or the one type present), and exact match on the numeric items -- never a metric's name on
    numeric items."""
    rows = s.get("machine", [])
    pooled = next((g for g in ("enumerated+declarative", "enumerated", "declarative")
                   if any(r["aspect_type"] == g for r in rows)), None)
    return [r for r in rows if (r["aspect_type"] == pooled and r["metric"] != "exact_match")
            or (r["metric"] == "exact_match" and r["aspect_type"] == "numeric")]


def machine_figure(s: dict) -> go.Figure | None:
    """Spearman of the clinicians' consensus tier with each metric's score and tier (labels carry the items and n)."""
    rows = headline_rows(s)
    if not rows:
        return None
    fig = go.Figure()
    for against, color in (("score", "#9d755d"), ("tier", "#4c78a8")):
        part = [r for r in rows if r["against"] == against]
        values = [r["spearman"] for r in part]
        fig.add_trace(go.Bar(x=[_plain(f"{metric_label(r['metric'])} ({r['aspect_type']})") for r in part],
                             y=[v if v is not None else 0 for v in values],
                             customdata=[r["n"] for r in part],
                             hovertemplate="%{x}: %{y:.3f}, n = %{customdata}<extra></extra>",
                             error_y=_err(values, [r["ci95"] for r in part]), name=_("vs raw score")
                             if against == "score" else _("vs automated tier"), marker_color=color,
                             text=[f"{_fmt(v, 2)} (n={r['n']})" for v, r in zip(values, part)]))
    fig.update_layout(barmode="group", title=_("Clinicians vs the machine (Spearman, 95% CI)"), yaxis_range=[-1, 1],
                      **_LAYOUT)
    return fig


def figures(s: dict) -> list[tuple[str, go.Figure]]:
    out = [("panel", panel_figure(s)), ("annotators", annotator_figure(s)), ("drift", drift_figure(s)),
           ("tiers", tier_figure(s))]
    m = machine_figure(s)
    if m is not None:
        out.append(("machine", m))
    return out


def panel_rows(s: dict) -> list[dict]:
    return [{"statistic": p["title"], "value": p["estimate"]["value"],
             "ci95_low": (p["estimate"]["ci95"] or [None, None])[0],
             "ci95_high": (p["estimate"]["ci95"] or [None, None])[1], "n_items": p["estimate"]["n_items"],
             "n_raters": p["estimate"]["n_raters"], "n_pairable": p["estimate"]["n_pairable"],
             "missing": p["estimate"]["missing"], "undefined_reason": p["estimate"]["undefined_reason"],
             "method": p["estimate"]["method"], "how_to_read": p["guide"]} for p in s["panel"]]


def annotator_rows(s: dict) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "drift"} for r in s["annotators"]]


def _as_percent(rows: list[dict], *keys: str) -> list[dict]:
    """The rows with the shares under ``keys`` written as percentages (the CSV keeps them as numbers)."""
    return [{k: percent(v) if k in keys and v is not None else v for k, v in r.items()} for r in rows]


def render_html(s: dict) -> str:
    """One self-contained HTML page: plotly.js inlined in the first figure only; its words in the current language
    (:func:`medeval.core.i18n.language`)."""
    c = s["campaign"]
    embed = kit.Figures()
    figs = {name: embed(fig, name) for name, fig in figures(s)}  # "panel" first: it comes first on the page
    esc = kit.esc

    def _statistic(p: dict) -> str:
        e = p["estimate"]
        value = (_("undefined ({reason})").format(reason=esc(e["undefined_reason"])) if e["value"] is None
                 else _fmt(e["value"]))
        ci = (" " + _("(95% CI {low} to {high})").format(low=_fmt(e["ci95"][0]), high=_fmt(e["ci95"][1]))
              if e["ci95"] else "")
        return (f"<li><b>{esc(p['title'])}</b>: {value}{ci}"
                f"<br><span class='why'>{esc(p['why'])} {esc(p['guide'])}</span></li>")

    stats = "".join(_statistic(p) for p in s["panel"])
    machine = ""
    if s.get("machine"):
        consensus = consensus_key(s.get("consensus"))
        machine = (f"<h2>{esc(_('Clinicians vs the machine'))}</h2><p>"
                   + esc(_("Consensus of the clinicians: {method} ({note}).").format(
                       method=_(CONSENSUS_NAMES.get(consensus, consensus)),
                       note=_(CONSENSUS_NOTE[consensus]) if consensus in CONSENSUS_NOTE else ""))
                   + "</p>" + machine_notes_html(s) + figs.get("machine", "")
                   + _table(rows := machine_rows(s["machine"]),
                            [(k, _(DISPLAY_COLUMNS[k]) if k in DISPLAY_COLUMNS else k) for k, _l in
                             kit.columns_of(rows)]))
    header = esc(_("Campaign #{id} ({kind}, {status}), k = {k} annotators per item, seed {seed}{under}. {items} "
                   "items, {graded} graded; {grades} grades and {skips} skips from {annotators} annotators. "
                   "Computed {at}.").format(
        id=c["id"], kind=kind_label(c["kind"]), status=_(STATUS_NAMES.get(c["status"], c["status"])), k=c["k"],
        seed=c["seed"], under=tiers_under(s), items=s["n_items"], graded=s["n_items_graded"], grades=s["n_grades"],
        skips=s["n_skips"], annotators=s["n_annotators"], at=s["computed_at"]))
    title = _("Agreement report: {name}").format(name=c["name"])
    body = f"""<h1>{esc(title)}</h1>
<p>{header}</p>
<h2>{esc(_("Methods"))}</h2><p class="methods">{esc(s['methods'])}</p>
<h2>{esc(_("The panel"))}</h2><ul>{stats}</ul>{figs['panel']}
{_table(panel_rows(s), [("statistic", _("statistic")), ("value", _("value")), ("ci95_low", _("CI low")),
                        ("ci95_high", _("CI high")), ("n_items", _("items")), ("n_pairable", _("pairable")),
                        ("missing", _("missing data")), ("method", _("method"))])}
<h2>{esc(_("Each annotator"))}</h2>{figs['annotators']}{figs['drift']}{figs['tiers']}
{_table(_as_percent(annotator_rows(s), "exact_agreement_vs_panel"),
        [("annotator", _("annotator")), ("assigned", _("assigned")), ("graded", _("graded")),
         ("skipped", _("skipped")), ("flagged", _("flagged")), ("spearman_vs_panel", _("Spearman vs panel")),
         ("spearman_ci95", _("95% CI")), ("exact_agreement_vs_panel", _("same tier as panel")),
         ("mean_difference_vs_panel", _("mean difference (+ = more lenient)")),
         ("median_seconds_per_item", _("median s / item"))])}
<h2>{esc(_("Widest disagreements"))}</h2>
{_table(disagreement_rows(s), [("item", _("item")), ("range", _("tier range")), ("sd", _("sd")),
                               ("tiers", _("tiers"))])}
{adjudication_html(s)}
{gold_html(s)}
{machine}"""
    return kit.page(title, body, figures=embed)


STATUS_NAMES = {"open": N_("open"), "closed": N_("closed")}
CONSENSUS_NAMES = VALIDATION_CONSENSUS_NAMES


def tiers_under(s: dict) -> str:
    """The threshold set whose tiers the report compares with the clinicians (the body's "Clinicians vs the
    machine"), for the header: the same set in both. (The campaign's own ``threshold_version``, the set active when
    it was created, is in the JSON; naming it here would put two sets in front of the reader as one.)"""
    mv = s.get("machine_version")
    return _("; automated tiers under threshold set v{version} ({name})").format(
        version=mv["version"], name=mv["name"]) if mv else ""


def machine_notes_html(s: dict) -> str:
    """Which threshold set gave the automated tiers, how the rows are defined, the overlap with calibration."""
    esc = kit.esc
    mv, ov = s.get("machine_version"), s.get("machine_overlap")
    out = "<p>"
    if mv and mv.get("source") == "validated":
        out += esc(_("Automated tiers under threshold set v{version} ({name}), the set this validation campaign "
                     "validates.").format(version=mv["version"], name=mv["name"])) + " "
    elif mv:
        out += esc(_("Automated tiers under threshold set v{version} ({name}).").format(
            version=mv["version"], name=mv["name"])) + " "
    out += esc(_("BLEU-1, ROUGE-1 and cosine rows cover the enumerated and declarative items only; the numeric "
                 "items (Severity Level) are graded by exact match and have their own exact match row; the average "
                 "row is the mean of the three metric tiers (MedDisKEval Table 2), and average/all adds the numeric "
                 "items with their exact-match tier. Every row shows its n.")) + "</p>"
    if ov:
        cls = "warn" if ov.get("shared_items") or ov.get("own_grades_calibrated") else "why"
        out += f"<p class='{cls}'><b>{esc(_('Overlap with calibration.'))}</b> {esc(ov['text'])}.</p>"
    return out


CONSENSUS_NOTE = CONSENSUS_NOTES  # shown with _()


def adjudication_html(s: dict) -> str:
    """How many items were adjudicated and how often the adjudicator chose the annotators' majority tier."""
    a = s.get("adjudication") or {}
    n = a.get("n_adjudicated", 0)
    head = f"<h2>{kit.esc(_('Adjudication'))}</h2>"
    if not n:
        return head + f"<p>{kit.esc(_('No item was adjudicated.'))}</p>"
    share = a.get("share_sided_with_majority")
    return head + "<p>" + kit.esc(_(
        "{n} items adjudicated ({all} adjudications in all, later ones superseding earlier ones). The adjudicated "
        "tier equalled the annotators' majority tier in {sided} of {with_majority} adjudicated items with a "
        "majority{share}. The statistics above use the raw annotations; adjudication does not change them.").format(
        n=n, all=a.get("n_adjudications", n), sided=a["sided_with_majority"], with_majority=a["n_with_majority"],
        share=f" ({percent(share)})" if share is not None else "")) + "</p>"


def gold_rows(s: dict) -> list[dict]:
    """One row per annotator: qualification, hidden gold answered/correct, accuracy overall and per block."""
    g = s.get("gold") or {}
    return [{"annotator": a["annotator"], "qualification": a["qualification"],
             "hidden_answered": a["hidden_answered"], "hidden_correct": a["hidden_correct"],
             "accuracy": a["accuracy"], "accuracy_by_block": [round(b["accuracy"], 3) for b in a["blocks"]],
             "flagged": a["flagged"]} for a in g.get("annotators", [])]


def gold_html(s: dict) -> str:
    g = s.get("gold")
    if not g:
        return ""
    return (f"<h2>{kit.esc(_('Gold items'))}</h2><p>" + kit.esc(_(
        "{n} gold items; accuracy over time in blocks of {block} hidden gold answers; flagged when the latest block "
        "is below {threshold}. Gold answers are kept apart from the grades and count in none of the statistics "
        "above.").format(n=g["gold_items"], block=g["block"], threshold=percent(g["threshold"]))) + "</p>"
            + _table([{**r, "qualification": qualification_words(r["qualification"])}  # (the CSV: as stored)
                      for r in _as_percent(gold_rows(s), "accuracy")],
                     [("annotator", _("annotator")), ("qualification", _("qualification")),
                      ("hidden_answered", _("hidden gold answered")), ("hidden_correct", _("correct")),
                      ("accuracy", _("accuracy")), ("accuracy_by_block", _("accuracy per block")),
                      ("flagged", _("flagged"))]))


def write_report(s: dict, out_dir: str | Path, *, pdf: bool = True, language: str | None = None) -> dict[str, Path]:
    """Write report.html, report.pdf, summary.json and one CSV per table into ``out_dir``, in ``language``
    (zh-CN or en; None: the current language). ``s`` should be computed in the same language (its statistics'
    names, notes and methods paragraph are words too): :func:`medeval.core.i18n.language` around both."""
    with i18n.language(language):
        return _write_report(s, out_dir, pdf=pdf)


def _write_report(s: dict, out_dir: str | Path, *, pdf: bool) -> dict[str, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "report.html", "json": out / "summary.json", "panel_csv": out / "panel.csv",
             "annotators_csv": out / "annotators.csv", "drift_csv": out / "drift.csv",
             "disagreements_csv": out / "disagreements.csv", "machine_csv": out / "machine.csv",
             "gold_csv": out / "gold.csv"}
    paths["html"].write_text(render_html(s), encoding="utf-8")
    paths["json"].write_text(json.dumps(s, ensure_ascii=False, indent=2), encoding="utf-8")
    _write_csv(paths["panel_csv"], panel_rows(s))
    _write_csv(paths["annotators_csv"], annotator_rows(s))
    _write_csv(paths["drift_csv"], [{"annotator": r["annotator"], **b} for r in s["annotators"] for b in r["drift"]])
    _write_csv(paths["disagreements_csv"], disagreement_rows(s))  # tiers by name
    _write_csv(paths["machine_csv"], s.get("machine", []))
    _write_csv(paths["gold_csv"], gold_rows(s))
    if pdf:
        paths["pdf"] = out / "report.pdf"
        print_pdf(paths["html"], paths["pdf"])
    return paths
