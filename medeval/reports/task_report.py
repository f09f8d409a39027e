"""The report of a task campaign (rubric rating, double-blind preference, AccR, or any registered type).

One self-contained HTML file (plotly.js inlined once; works offline), its PDF (headless Chromium),
the results as JSON and every table as CSV. Everything comes from
:func:`medeval.annotation.tasks.results`: the header (campaign, task type, k, items, progress, seed),
a methods paragraph filled with the campaign's numbers (:func:`methods_paragraph`), every
section's tables with a figure where the table suits one, the flags and the configuration. A statistic
that is undefined is shown as such, with its reason. Names and notes are plain text (escaped). With gold items
(results from :func:`build`, or passed through :func:`with_gold`), the methods paragraph says how they were used
and a "Gold items" table gives each annotator's accuracy (:mod:`medeval.reports.task_report_gold`; gold.csv).
"""

from __future__ import annotations

import inspect
import json
import re
import time
from pathlib import Path

import plotly.graph_objects as go

from medeval.reports import html_kit as kit
from medeval.reports.html_kit import chromium_path, print_pdf  # noqa: F401  (the pages ask the report module)

from medeval.annotation import tasks
from medeval.annotation.tasks import common
from medeval.annotation.tasks.rubric import RUBRIC_TITLES, RUBRICS
from medeval.reports.task_report_gold import gold_html, gold_methods, gold_rows, with_gold
from medeval.reports.task_report_judge import criterion_figure as judge_criterion_figure, judge_methods

N_BOOT = inspect.signature(common.continuous_agreement).parameters["n_boot"].default  # what the task types use


def build(db, campaign_id: int, *, actor=None) -> dict:
    """The report's data: :func:`medeval.annotation.tasks.results` with the gold part (``r["gold"]``)."""
    return with_gold(db, tasks.results(db, campaign_id, actor=actor))


# ---------------------------------------------------------------- the methods paragraph


def _table_rows(r: dict, table: str) -> list[dict]:
    return [row for sec in r["sections"] for row in sec["tables"].get(table, [])]


def _stat(row: dict | None, label: str, digits=3) -> str:
    """"label = 0.712 (95% CI ...)", or "label undefined (reason)"."""
    if row is None:
        return f"{label} undefined (no ratings)"
    if row.get("value") is None:
        return f"{label} undefined ({row.get('undefined_reason') or 'no value'})"
    return f"{label} = {kit.fmt(row['value'], digits)}{kit.ci_text(row.get('ci95'), digits)}"


def _common(r: dict, what: str) -> str:
    p, cfg = r["progress"], r["config"]
    n_ann = len(cfg.get("annotators") or p["annotators"])
    active = sum(1 for a in p["annotators"] if a.get("answers"))
    data = f" from the data set {cfg['dataset']}" if cfg.get("dataset") else ""
    return (f"{p['items']} {what}{data} were each assigned to k = {p['k']} of {n_ann} annotators, balanced and "
            f"in an order of each annotator's own, drawn from seed {cfg.get('seed', 0)} and stored with the "
            f"campaign. {active} annotators answered; {p['items_complete']} of {p['items']} items were complete by "
            f"all k. Only each annotator's latest answer counts; skipped items are missing data. ")


def _agreement_text(rows: list[dict], unit: str, seed) -> str:
    if not rows:
        return "Agreement is undefined: no item has answers from two annotators yet. "
    icc = [x for x in rows if str(x.get("statistic", "")).startswith("ICC")]
    how = ""
    if icc:
        how = ("ICC(2,1) and ICC(2,k) (two-way random effects, absolute agreement: every annotator rated every "
               f"{unit})" if "ICC(2" in icc[0]["statistic"] else
               f"ICC(1,1) and ICC(1,k) (one-way random effects: each {unit} rated by a different set of k "
               f"annotators, over the {unit}s with the usual number of ratings)") + (
               ", with exact 95% CIs from the F distribution (Shrout & Fleiss 1979; McGraw & Wong 1996), and ")
    alpha = next((x for x in rows if "alpha" in str(x.get("statistic", ""))), None)
    level = "interval" if alpha is None or "interval" in alpha["statistic"] else "nominal"
    return (f"Inter-rater agreement was estimated with {how}Krippendorff's alpha ({level}; every pairable rating "
            f"used, missing ratings allowed) with a 95% CI by percentile bootstrap over {unit}s ({N_BOOT} resamples, "
            f"seed {seed}); exact percent agreement is given for orientation. "
            + "; ".join(_stat(x, f"{x['statistic']} ({x['rated']})") for x in rows
                        if not str(x["statistic"]).startswith("Percent")) + ". ")


def _rubric_methods(r: dict) -> str:
    cfg = r["config"]
    crit = [c["name"] for c in cfg["criteria"]] if cfg.get("criteria") else [c.name for c in RUBRICS.get(
        cfg.get("rubric"), ())]
    rubric = ("a rubric of the researchers' own" if cfg.get("criteria") else
              RUBRIC_TITLES.get(cfg.get("rubric"), str(cfg.get("rubric"))).split(":")[0] + " rubric")
    judge = cfg.get("judge") if cfg.get("judge") not in (None, "(none)") else None
    per_model = _table_rows(r, "per model")
    n_ratings = sum(x.get("ratings") or 0 for x in per_model)
    text = (_common(r, "case questions") + f"Each item showed a question with its reference answer and every "
            f"model's response, as \"Response 1..n\" in an order drawn per annotator (models never named). "
            f"Annotators rated each response on the {rubric} ({', '.join(crit)}), each criterion on an anchored "
            f"1-5 scale. {n_ratings} ratings of {len(per_model)} models' responses were analysed. ")
    if per_model:
        text += "Mean rating over criteria per model: " + "; ".join(
            f"{x['model']} {kit.fmt(x.get('mean'), 2)}" for x in per_model) + ". "
    agree = next((sec["tables"]["agreement"] for sec in r["sections"] if "agreement" in sec["tables"]), [])
    text += _agreement_text([x for x in agree if x.get("rated") == "mean over criteria"] or agree,
                            "response", cfg.get("seed", 0))
    if judge:
        text += judge_methods(r, judge)
    return text


def _preference_methods(r: dict) -> str:
    cfg = r["config"]
    what = "two judges' assessments of the same responses" if cfg.get("compare") == "judges" else \
        "two models' answers to the same question"
    text = (_common(r, "pairwise comparisons") + f"Each comparison showed {what}, double-blind: the sources were "
            "hidden and which one appeared on the left (A) was randomised per annotator. On each criterion the "
            "annotator chose A, B or tie; a tie counts half to each side. Position bias was checked with an exact "
            "binomial test of the left side's share of decided choices against 1/2, and agreement with "
            f"Krippendorff's alpha (nominal, over the chosen source) with a percentile bootstrap CI ({N_BOOT} "
            f"resamples, seed {cfg.get('seed', 0)}). ")
    if not r["sections"]:
        return text + "No choices have been made yet, so every figure is undefined. "
    for sec in r["sections"]:
        n = sec["numbers"].get("n_choices", 0)
        checks = sec["tables"].get("checks", [])
        left = checks[0] if checks else None
        decided = left.get("n") if left else None
        shares = "; ".join(f"{x['source']} {kit.fmt(x.get('share'))} (annotators {kit.fmt(x.get('lowest annotator'))}"
                           f" to {kit.fmt(x.get('highest annotator'))})"
                           for x in sec["tables"].get("preference share", []))
        text += (f"{sec['title'].removeprefix('Preference: ')}: {n} choices"
                 + (f", {n - decided} ties" if isinstance(decided, int) else "") + f"; win shares {shares}; "
                 + (f"the left side's share of the {decided} decided choices {kit.fmt(left.get('value'))} (binomial "
                    f"p = {kit.fmt(left.get('p (binomial, vs 1/2)'))}); " if left and left.get("value") is not None
                    else f"position bias undefined ({(left or {}).get('undefined_reason') or 'no decided choice'}); ")
                 + _stat(checks[1] if len(checks) > 1 else None, "alpha") + ". ")
    return text


def _accr_methods(r: dict) -> str:
    cfg = r["config"]
    rows = _table_rows(r, "AccR")
    pool = ("items the model answered correctly (Factual Accuracy: correct for the factual and incorrect for the "
            "counterfactual claim)" if cfg.get("pool") == "correct items"
            else "every item whose two responses start with a verdict")
    text = (_common(r, "atomic knowledge items (a factual and a counterfactual claim, each with a model's answer)")
            + "Accuracy Reliability (AccR; SDAK §4.2.2) is computed per item (factual + counterfactual claim): an "
            "item is reliable when the reason of each of its two answers supports its verdict. Up to "
            f"{cfg.get('per_model')} items per model were sampled whole from {pool} with the stored seed (claims "
            "without their twin left out and counted); annotators saw both claims, the verdicts parsed from the "
            "answers and the answers, and said for each whether its reason supports its verdict (not whether the "
            "claim is true). AccR = reliable items / items, an item reliable by the majority of the annotators who "
            "checked it (ties left out), with a Wilson 95% CI; beside it, over ratings (each annotator's judgement "
            "of an item). ")
    text += ("; ".join(f"{x['model']}: AccR {kit.fmt(x.get('AccR (ratings)'))} over {x.get('ratings')} ratings, "
                       + (f"{kit.fmt(x.get('AccR (items, majority)'))} by majority over the "
                          f"{(x.get('items checked') or 0) - (x.get('items without a majority') or 0)} of "
                          f"{x.get('items checked')} items that have one (95% CI "
                          f"{kit.fmt((x.get('AccR 95% CI (Wilson)') or [None])[0])} to "
                          f"{kit.fmt((x.get('AccR 95% CI (Wilson)') or [None, None])[1])})"
                          if x.get("AccR (items, majority)") is not None
                          else f"undefined by majority (none of the {x.get('items checked')} items checked has one)")
                       + (f", {x['claims without a twin (left out)']} claims without a twin left out"
                          if x.get("claims without a twin (left out)") else "")
                       for x in rows) + ". "
             if rows else "No answers yet: AccR is undefined. ")
    return text + _agreement_text(_table_rows(r, "agreement"), "claim", cfg.get("seed", 0))


def methods_paragraph(r: dict) -> str:
    """A methods paragraph a paper could cite, filled with this campaign's numbers (any task type)."""
    kind = r["campaign"]["kind"]
    text = {"rubric": _rubric_methods, "preference": _preference_methods, "accr": _accr_methods}.get(kind)
    text = text(r) if text else _common(r, "items") + " ".join(f"{s['title']}: {s['text']}" for s in r["sections"]
                                                               if s["text"])
    return " ".join(x for x in (text.strip(), gold_methods(r)) if x)


# ---------------------------------------------------------------- figures


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
        fig.add_trace(go.Bar(x=models, y=[_num(r.get(c)) for r in rows], name=kit.short(c),
                             text=[kit.fmt(_num(r.get(c)), 2) if _num(r.get(c)) is not None else "" for r in rows]))
    fig.update_yaxes(range=[0, 5.2], title="mean rating (1-5)")
    return _bar_layout(fig, "Mean rating per model", barmode="group")


def agreement_figure(rows: list[dict]) -> go.Figure:
    """Agreement statistics with their 95% CIs (undefined ones drawn at 0, labelled undefined)."""
    labels = [f"{kit.short(r.get('rated', ''), 28)} · {kit.short(r.get('statistic', ''), 60)}" for r in rows]
    values = [_num(r.get("value")) for r in rows]
    fig = go.Figure(go.Bar(x=[v if v is not None else 0 for v in values], y=labels, orientation="h",
                           error_x=_err(values, [r.get("ci95") for r in rows]),
                           text=[kit.fmt(v) for v in values], textposition="auto", marker_color="#4c78a8"))
    for x in (0.667, 0.8):
        fig.add_vline(x=x, line_dash="dot", line_color="#999")
    fig.update_xaxes(range=[-1.05, 1.05])
    fig.update_yaxes(autorange="reversed")
    return _bar_layout(fig, "Agreement (95% CI where available)", height=140 + 26 * len(rows),
                       margin=dict(l=330, r=20, t=50, b=40))


def shares_figure(rows: list[dict], title: str) -> go.Figure:
    """Preference: each source's share of the choices (a tie counts half), bars from lowest to highest annotator."""
    values = [_num(r.get("share")) for r in rows]
    cis = [[r.get("lowest annotator"), r.get("highest annotator")] for r in rows]
    fig = go.Figure(go.Bar(x=[kit.short(r["source"]) for r in rows], y=values, error_y=_err(values, cis),
                           text=[kit.fmt(v, 2) for v in values], marker_color="#72b7b2"))
    fig.add_hline(y=0.5, line_dash="dot", line_color="#999")
    fig.update_yaxes(range=[0, 1], tickformat=".0%", title="share of choices (error bars: annotators' range)")
    return _bar_layout(fig, title)


def accr_figure(rows: list[dict]) -> go.Figure:
    """AccR per model (per item: factual + counterfactual claim), by majority over items and over ratings."""
    fig = go.Figure()
    models = [kit.short(r["model"]) for r in rows]
    for key, color in (("AccR (items, majority)", "#f58518"), ("AccR (ratings)", "#4c78a8")):
        vals = [_num(r.get(key)) for r in rows]
        fig.add_trace(go.Bar(x=models, y=vals, name=key, marker_color=color,
                             text=[kit.fmt(v, 2) if v is not None else "undefined" for v in vals]))
    fig.update_yaxes(range=[0, 1], tickformat=".0%", title="AccR")
    return _bar_layout(fig, "Accuracy Reliability per model (per item: factual + counterfactual claim)",
                       barmode="group")


def rankings_figure(rows: list[dict]) -> go.Figure:
    """Rubric with a judge: the judge's and the clinicians' mean score per model."""
    fig = go.Figure()
    models = [kit.short(r["model"]) for r in rows]
    for key, color in (("judge mean", "#9d755d"), ("clinicians mean", "#54a24b")):
        fig.add_trace(go.Bar(x=models, y=[_num(r.get(key)) for r in rows], name=key, marker_color=color))
    return _bar_layout(fig, "The judge and the clinicians: mean score per model", barmode="group")


def criterion_figure(rows: list[dict]) -> go.Figure:
    """The clinicians' mean rating of the judge's assessments per criterion."""
    fig = go.Figure(go.Bar(x=[kit.short(r["criterion"]) for r in rows], y=[_num(r.get("mean")) for r in rows],
                           text=[kit.fmt(_num(r.get("mean")), 2) for r in rows], marker_color="#b279a2"))
    fig.update_yaxes(range=[0, 5.2], title="mean rating (1-5)")
    return _bar_layout(fig, "The judge's assessments: mean rating per criterion")


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


def _when(v) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(v))
    return "" if v is None else str(v)


def config_rows(r: dict) -> list[dict]:
    return [{"setting": k, "value": json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v}
            for k, v in r["config"].items()]


def flag_rows(r: dict) -> list[dict]:
    return [{"item": f.get("item"), "source": f.get("source"), "annotator": f.get("annotator"),
             "note": f.get("note"), "at": _when(f.get("at"))} for f in r["flags"]]


def _header(r: dict, computed_at: str) -> str:
    c, p, cfg = r["campaign"], r["progress"], r["config"]
    n_answers = sum(a.get("answers", 0) for a in p["annotators"])
    data = f", data set {kit.esc(cfg['dataset'])}" if cfg.get("dataset") else ""
    return (f"<p>Campaign #{kit.esc(c['id'])} ({kit.esc(r['task'])}, task type {kit.esc(c['kind'])}, "
            f"{kit.esc(c['status'])}){data}. k = {kit.esc(p['k'])} annotators per item of "
            f"{len(cfg.get('annotators') or p['annotators'])}; {kit.esc(p['items'])} items, "
            f"{kit.esc(p['items_complete'])} done by all k; {n_answers} answers recorded; "
            f"seed {kit.esc(cfg.get('seed', '—'))}. Computed {kit.esc(computed_at)}.</p>")


def render_html(r: dict, *, computed_at: str | None = None) -> str:
    """One self-contained HTML page of a task campaign's results (plotly.js inlined in the first figure only)."""
    computed_at = computed_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    embed = kit.Figures()
    name = r["campaign"]["name"]
    parts = [f"<h1>Task report: {kit.esc(name)}</h1>", _header(r, computed_at),
             f'<h2>Methods</h2><p class="methods">{kit.esc(methods_paragraph(r))}</p>',
             "<h2>Progress</h2>",
             kit.table(r["progress"]["annotators"], [("annotator", "annotator"), ("assigned", "assigned"),
                                                     ("done", "done"), ("skipped", "skipped"),
                                                     ("flagged", "flagged"), ("answers", "answers")])]
    if not r["sections"]:
        parts.append("<p>No results yet: they appear as soon as annotators answer.</p>")
    for n, sec in enumerate(r["sections"], start=1):
        parts.append(f'<section class="results" id="section-{n}"><h2>{kit.esc(sec["title"])}</h2>')
        if sec.get("text"):
            parts.append(f"<p class='why'>{kit.esc(sec['text'])}</p>")
        figs = dict(section_figures(sec))
        for fname, fig in figs.items():
            if fname.startswith("own-"):
                parts.append(embed(fig, fname))
        for tname, rows in sec["tables"].items():
            if tname in figs:
                parts.append(embed(figs[tname], tname))
            if rows:
                parts.append(kit.table(rows, _columns(rows), caption=tname))
            else:
                parts.append(f"<p class='why'>{kit.esc(tname)}: nothing yet.</p>")
        parts.append("</section>")
    parts.append(gold_html(r))
    if r["flags"]:
        parts += [f"<h2>Flagged items ({len(r['flags'])})</h2>",
                  "<p class='why'>Notes the annotators left on items, as written.</p>",
                  kit.table(flag_rows(r))]
    parts += ["<h2>Configuration (reproducible from the seed)</h2>", kit.table(config_rows(r))]
    return kit.page(f"Task report: {name}", "\n".join(parts))


def _columns(rows: list[dict]) -> list[tuple[str, str]]:
    """Every column, ``ci95`` shown as "95% CI", the reason a value is undefined last."""
    cols = [(k, "95% CI" if k == "ci95" else ("undefined because" if k == "undefined_reason" else k))
            for k, _ in kit.columns_of(rows)]
    return [c for c in cols if c[0] != "undefined_reason"] + [c for c in cols if c[0] == "undefined_reason"]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "table"


def write_report(r: dict, out_dir: str | Path, *, pdf: bool = True) -> dict[str, Path]:
    """Write report.html, report.pdf (unless ``pdf=False``), results.json, a CSV per table and, with gold items,
    gold.csv into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "report.html", "json": out / "results.json"}
    paths["html"].write_text(render_html(r), encoding="utf-8")
    paths["json"].write_text(json.dumps(r, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    for n, sec in enumerate(r["sections"], start=1):
        for m, (tname, rows) in enumerate(sec["tables"].items(), start=1):
            key = f"section{n}_table{m}_csv"
            paths[key] = out / f"{n:02d}-{m}-{_slug(tname)}.csv"
            kit.write_csv(paths[key], rows)
    paths["progress_csv"] = out / "progress.csv"
    kit.write_csv(paths["progress_csv"], r["progress"]["annotators"])
    paths["flags_csv"] = out / "flags.csv"
    kit.write_csv(paths["flags_csv"], flag_rows(r), columns=["item", "source", "annotator", "note", "at"])
    if r.get("gold"):
        paths["gold_csv"] = out / "gold.csv"
        kit.write_csv(paths["gold_csv"], gold_rows(r))
    if pdf:
        paths["pdf"] = out / "report.pdf"
        print_pdf(paths["html"], paths["pdf"])
    return paths
