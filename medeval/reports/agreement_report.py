"""The agreement report of a campaign: Plotly figures, one self-contained HTML file, its PDF, CSV and JSON.

The HTML works offline: plotly.js is inlined once (about 4.8 MB) and every other
figure refers to it. The PDF is that HTML printed by headless Chromium (Debian's
``chromium``; nothing is downloaded). Every number in the report comes from
:func:`medeval.reports.dashboard.campaign_agreement`, which is also written as JSON and CSV.
"""

from __future__ import annotations

import html
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import plotly.graph_objects as go

from medeval.core import csvsafe
from medeval.core.errors import MedevalError

TIER_NAMES = ("Completely Wrong", "Partially Correct", "Basically Correct")
_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=50), height=360,
               font=dict(family="Noto Sans, Noto Sans CJK SC, sans-serif", size=12))


def _plain(text) -> str:
    """A name as Plotly shows it literally (its labels, legends and hover text are mini-HTML): ``<>&`` escaped."""
    return html.escape(str(text), quote=False)


def _fmt(v, digits=3) -> str:
    return "undefined" if v is None else f"{v:.{digits}f}"


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
    fig.update_layout(title="Agreement of the panel (95% CI where available)", xaxis_range=[min(-0.1, *[
        (c[0] if c else 0) for c in cis]), 1], **_LAYOUT)
    fig.update_yaxes(autorange="reversed")
    return fig


def annotator_figure(s: dict) -> go.Figure:
    """Each annotator's Spearman correlation with the median of the other annotators."""
    rows = s["annotators"]
    values = [r["spearman_vs_panel"] for r in rows]
    fig = go.Figure(go.Bar(x=[_plain(r["annotator"]) for r in rows], y=[v if v is not None else 0 for v in values],
                           error_y=_err(values, [r["spearman_ci95"] for r in rows]), text=[_fmt(v, 2) for v in values],
                           marker_color="#72b7b2"))
    fig.update_layout(title="Each annotator vs the rest of the panel (Spearman, 95% CI)", yaxis_range=[-1, 1],
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
                                     hovertemplate="answers %{customdata}: %{y:.0%}<extra>%{fullData.name}</extra>"))
    fig.update_layout(title="Drift: same tier as the rest of the panel, per block of answers", yaxis_range=[0, 1],
                      yaxis_tickformat=".0%", xaxis_title="block (in the order given)", xaxis_dtick=1,
                      **_LAYOUT)
    return fig


def tier_figure(s: dict) -> go.Figure:
    """How often each annotator used each tier."""
    fig = go.Figure()
    names = sorted({d["annotator"] for d in s["tier_distribution"]})
    for t, color in zip(range(3), ("#e45756", "#f2cf5b", "#54a24b")):
        fig.add_trace(go.Bar(x=[_plain(n) for n in names], y=[next(d["count"] for d in s["tier_distribution"]
                                             if d["annotator"] == n and d["tier"] == t) for n in names],
                             name=TIER_NAMES[t], marker_color=color))
    fig.update_layout(barmode="stack", title="Tiers given, per annotator", **_LAYOUT)
    return fig


def machine_figure(s: dict) -> go.Figure | None:
    """Spearman of the clinicians' consensus tier with each metric's score and tier (all aspect types)."""
    rows = [r for r in s.get("machine", []) if r["aspect_type"] == "all"]
    if not rows:
        return None
    fig = go.Figure()
    for against, color in (("score", "#9d755d"), ("tier", "#4c78a8")):
        part = [r for r in rows if r["against"] == against]
        values = [r["spearman"] for r in part]
        fig.add_trace(go.Bar(x=[_plain(r["metric"]) for r in part], y=[v if v is not None else 0 for v in values],
                             error_y=_err(values, [r["ci95"] for r in part]), name=f"vs raw {against}"
                             if against == "score" else "vs automated tier", marker_color=color,
                             text=[_fmt(v, 2) for v in values]))
    fig.update_layout(barmode="group", title="Clinicians vs the machine (Spearman, 95% CI)", yaxis_range=[-1, 1],
                      **_LAYOUT)
    return fig


def figures(s: dict) -> list[tuple[str, go.Figure]]:
    out = [("panel", panel_figure(s)), ("annotators", annotator_figure(s)), ("drift", drift_figure(s)),
           ("tiers", tier_figure(s))]
    m = machine_figure(s)
    if m is not None:
        out.append(("machine", m))
    return out


def _table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(r.get(key)))}</td>" for key, _ in columns) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_cell(x) for x in v) + "]"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_cell(x)}" for k, x in v.items())
    return str(v)


def panel_rows(s: dict) -> list[dict]:
    return [{"statistic": p["title"], "value": p["estimate"]["value"],
             "ci95_low": (p["estimate"]["ci95"] or [None, None])[0],
             "ci95_high": (p["estimate"]["ci95"] or [None, None])[1], "n_items": p["estimate"]["n_items"],
             "n_raters": p["estimate"]["n_raters"], "n_pairable": p["estimate"]["n_pairable"],
             "missing": p["estimate"]["missing"], "undefined_reason": p["estimate"]["undefined_reason"],
             "method": p["estimate"]["method"], "how_to_read": p["guide"]} for p in s["panel"]]


def annotator_rows(s: dict) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "drift"} for r in s["annotators"]]


def render_html(s: dict) -> str:
    """One self-contained HTML page: plotly.js inlined in the first figure only."""
    c = s["campaign"]
    figs = {name: fig.to_html(full_html=False, include_plotlyjs=(i == 0),
                              config={"displayModeBar": False, "responsive": True})
            for i, (name, fig) in enumerate(figures(s))}
    stats = "".join(f"<li><b>{html.escape(p['title'])}</b>: "
                    + (f"undefined ({html.escape(p['estimate']['undefined_reason'])})"
                       if p["estimate"]["value"] is None else _fmt(p["estimate"]["value"]))
                    + (f" (95% CI {_fmt(p['estimate']['ci95'][0])} to {_fmt(p['estimate']['ci95'][1])})"
                       if p["estimate"]["ci95"] else "")
                    + f"<br><span class='why'>{html.escape(p['why'])} {html.escape(p['guide'])}</span></li>"
                    for p in s["panel"])
    machine = ""
    if s.get("machine"):
        machine = ("<h2>Clinicians vs the machine</h2>" + figs.get("machine", "")
                   + _table(s["machine"], [("metric", "metric"), ("aspect_type", "aspect type"),
                                           ("against", "against"), ("n", "n"), ("spearman", "Spearman"),
                                           ("ci95", "95% CI"), ("p", "p"), ("undefined_reason", "undefined")]))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Agreement report: {html.escape(c['name'])}</title>
<style>
 body{{font-family:"Noto Sans","Noto Sans CJK SC",system-ui,sans-serif;max-width:980px;margin:2rem auto;
      padding:0 1rem;color:#1f2430}}
 h1{{font-size:1.6rem}} h2{{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}}
 table{{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1rem}}
 td,th{{border:1px solid #ddd;padding:.25rem .45rem;text-align:left;vertical-align:top}}
 .why{{color:#555;font-size:.9rem}} .methods{{background:#f6f7f9;padding:.8rem 1rem;border-radius:6px}}
 @media print{{h2{{break-before:auto}} .plotly-graph-div{{break-inside:avoid}}}}
</style></head><body>
<h1>Agreement report: {html.escape(c['name'])}</h1>
<p>Campaign #{c['id']} ({html.escape(c['kind'])}, {html.escape(c['status'])}), k = {c['k']} annotators per item,
seed {c['seed']}, threshold set v{c['threshold_version']}. {s['n_items']} items, {s['n_items_graded']} graded;
{s['n_grades']} grades and {s['n_skips']} skips from {s['n_annotators']} annotators. Computed {s['computed_at']}.</p>
<h2>Methods</h2><p class="methods">{html.escape(s['methods'])}</p>
<h2>The panel</h2><ul>{stats}</ul>{figs['panel']}
{_table(panel_rows(s), [("statistic", "statistic"), ("value", "value"), ("ci95_low", "CI low"),
                        ("ci95_high", "CI high"), ("n_items", "items"), ("n_pairable", "pairable"),
                        ("missing", "missing data"), ("method", "method")])}
<h2>Each annotator</h2>{figs['annotators']}{figs['drift']}{figs['tiers']}
{_table(annotator_rows(s), [("annotator", "annotator"), ("assigned", "assigned"), ("graded", "graded"),
                            ("skipped", "skipped"), ("flagged", "flagged"),
                            ("spearman_vs_panel", "Spearman vs panel"), ("spearman_ci95", "95% CI"),
                            ("exact_agreement_vs_panel", "same tier as panel"),
                            ("mean_difference_vs_panel", "mean difference (+ = more lenient)"),
                            ("median_seconds_per_item", "median s / item")])}
<h2>Widest disagreements</h2>
{_table(s['disagreements'], [("item", "item"), ("range", "tier range"), ("sd", "sd"), ("tiers", "tiers")])}
{machine}
</body></html>
"""


def _write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        if not rows:
            f.write("")
            return
        w = csvsafe.dict_writer(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
                        for k, v in r.items()})


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def print_pdf(html_path: Path, pdf_path: Path, *, timeout: float = 120) -> None:
    """Print an HTML file to PDF with headless Chromium (Debian's ``chromium``)."""
    exe = chromium_path()
    if exe is None:
        raise MedevalError("the PDF needs Chromium: run `bash scripts/install-browser.sh` (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--run-all-compositor-stages-before-draw", "--virtual-time-budget=10000",
                            "--no-pdf-header-footer", f"--user-data-dir={profile}",
                            f"--print-to-pdf={pdf_path}", html_path.resolve().as_uri()],
                           capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if r.returncode != 0 or not pdf_path.exists() or pdf_path.stat().st_size == 0:
        raise MedevalError(f"Chromium could not print the PDF (exit {r.returncode}): {r.stderr.strip()[-300:]}")


def write_report(s: dict, out_dir: str | Path, *, pdf: bool = True) -> dict[str, Path]:
    """Write report.html, report.pdf, summary.json and one CSV per table into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "report.html", "json": out / "summary.json", "panel_csv": out / "panel.csv",
             "annotators_csv": out / "annotators.csv", "drift_csv": out / "drift.csv",
             "disagreements_csv": out / "disagreements.csv", "machine_csv": out / "machine.csv"}
    paths["html"].write_text(render_html(s), encoding="utf-8")
    paths["json"].write_text(json.dumps(s, ensure_ascii=False, indent=2), encoding="utf-8")
    _write_csv(paths["panel_csv"], panel_rows(s))
    _write_csv(paths["annotators_csv"], annotator_rows(s))
    _write_csv(paths["drift_csv"], [{"annotator": r["annotator"], **b} for r in s["annotators"] for b in r["drift"]])
    _write_csv(paths["disagreements_csv"], s["disagreements"])
    _write_csv(paths["machine_csv"], s.get("machine", []))
    if pdf:
        paths["pdf"] = out / "report.pdf"
        print_pdf(paths["html"], paths["pdf"])
    return paths
