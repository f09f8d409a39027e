"""A task campaign's report as files: its data (:func:`build`: the results with the gold part), one self-contained
HTML page (:func:`render_html`: header, methods, progress, each section's figures and tables, gold items, flags,
configuration; plotly.js inlined once, works offline) and :func:`write_report` (report.html, report.pdf by headless
Chromium, results.json, a CSV per table, progress.csv, flags.csv and, with gold items, gold.csv).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from medeval.annotation import campaign_text, tasks
from medeval.reports import html_kit as kit
from medeval.reports.html_kit import print_pdf
from medeval.reports.task_report.figures import section_figures
from medeval.reports.task_report.gold import gold_html, gold_rows, with_gold
from medeval.reports.task_report.methods import methods_paragraph


def build(db, campaign_id: int, *, actor=None) -> dict:
    """The report's data: :func:`medeval.annotation.tasks.results` with the gold part (``r["gold"]``)."""
    return with_gold(db, tasks.results(db, campaign_id, actor=actor))


def _when(v) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(v))
    return "" if v is None else str(v)


def config_rows(r: dict) -> list[dict]:
    """The configuration as settings and values in words (the JSON keeps it as stored)."""
    return campaign_text.config_rows(r["config"])


def flag_rows(r: dict) -> list[dict]:
    return [{"item": f.get("item"), "source": f.get("source"), "annotator": f.get("annotator"),
             "note": f.get("note"), "at": _when(f.get("at"))} for f in r["flags"]]


def _header(r: dict, computed_at: str) -> str:
    c, p, cfg = r["campaign"], r["progress"], r["config"]
    n_answers = sum(a.get("answers", 0) for a in p["annotators"])
    data = f", data set {kit.esc(cfg['dataset'])}" if cfg.get("dataset") else ""
    return (f"<p>Campaign #{kit.esc(c['id'])} ({kit.esc(r['task'])}, "
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


HEADS = {"ci95": "95% CI", "undefined_reason": "undefined because", "n_items": "items", "n_raters": "raters"}
"""Column names of the results' tables as the report heads them (the CSVs keep the names, for programs)."""


def _columns(rows: list[dict]) -> list[tuple[str, str]]:
    """Every column by its head (:data:`HEADS`), the reason a value is undefined last."""
    cols = [(k, HEADS.get(k, k)) for k, _ in kit.columns_of(rows)]
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
