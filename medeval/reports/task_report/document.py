"""A task campaign's report as files: its data (:func:`build`: the results with the gold part), one self-contained
HTML page (:func:`render_html`: header, methods, progress, each section's figures and tables, gold items, flags,
configuration; plotly.js inlined once, works offline) and :func:`write_report` (report.html, report.pdf by headless
Chromium, results.json, a CSV per table, progress.csv, flags.csv and, with gold items, gold.csv).

The words are in the current language (:func:`medeval.core.i18n.language`; ``write_report(..., language=...)``), the
results' own words (sections' titles and texts, the task type's name, the gold items' sentence) as they were built:
build and write in the same language, as ``medeval task report --language`` and the Task results page do.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from medeval.annotation import campaign_text, tasks
from medeval.core import i18n
from medeval.core.i18n import N_, _
from medeval.reports import html_kit as kit
from medeval.reports.html_kit import print_pdf
from medeval.reports.task_report.figures import section_figures
from medeval.reports.task_report.gold import gold_html, gold_rows, with_gold
from medeval.reports.task_report.methods import HEADS, head, methods_paragraph, term  # noqa: F401 (HEADS: was here)


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


STATUS_NAMES = {"open": N_("open"), "closed": N_("closed")}
"""A campaign's status as stored, in words (shown with ``_()``)."""


def _header(r: dict, computed_at: str) -> str:
    c, p, cfg = r["campaign"], r["progress"], r["config"]
    numbers = dict(id=c["id"], task=r["task"], status=_(STATUS_NAMES[c["status"]]) if c["status"] in STATUS_NAMES
                   else c["status"], dataset=cfg.get("dataset"), k=p["k"],
                   annotators=len(cfg.get("annotators") or p["annotators"]), items=p["items"],
                   complete=p["items_complete"], answers=sum(a.get("answers", 0) for a in p["annotators"]),
                   seed=cfg.get("seed", "—"), at=computed_at)
    text = (_("Campaign #{id} ({task}, {status}), data set {dataset}. k = {k} annotators per item of {annotators}; "
              "{items} items, {complete} done by all k; {answers} answers recorded; seed {seed}. Computed {at}.")
            if cfg.get("dataset") else
            _("Campaign #{id} ({task}, {status}). k = {k} annotators per item of {annotators}; {items} items, "
              "{complete} done by all k; {answers} answers recorded; seed {seed}. Computed {at}."))
    return f"<p>{kit.esc(text.format(**numbers))}</p>"


def _shown(rows: list[dict]) -> list[dict]:
    """A results table's rows as the report shows them: the statistics' names, what was rated and why a value is
    undefined in the reader's language (:func:`term`), a truth value as yes or no (the CSVs keep them as stored)."""
    def cell(k, v):
        if isinstance(v, bool):
            return _("yes") if v else _("no")
        return term(v) if k in TERM_COLUMNS else v
    return [{k: cell(k, v) for k, v in row.items()} for row in rows]


TERM_COLUMNS = ("statistic", "rated", "criterion", "undefined_reason")
"""The columns whose cells are words of the task types (:func:`medeval.reports.task_report.methods.term`)."""


def _table(rows: list[dict], keys: list[str] | None = None, *, caption: str | None = None) -> str:
    """An HTML table of ``rows``, every column headed in the current language (:func:`head`)."""
    cols = [(k, head(k)) for k in keys] if keys is not None else _columns(rows)
    return kit.table(_shown(rows), cols, caption=caption)


def render_html(r: dict, *, computed_at: str | None = None) -> str:
    """One self-contained HTML page of a task campaign's results (plotly.js inlined in the first figure only), its
    words in the current language (:func:`medeval.core.i18n.language`)."""
    computed_at = computed_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    embed = kit.Figures()
    esc = kit.esc
    title = _("Task report: {name}").format(name=r["campaign"]["name"])
    parts = [f"<h1>{esc(title)}</h1>", _header(r, computed_at),
             f'<h2>{esc(_("Methods"))}</h2><p class="methods">{esc(methods_paragraph(r))}</p>',
             f"<h2>{esc(_('Progress'))}</h2>",
             _table(r["progress"]["annotators"], ["annotator", "assigned", "done", "skipped", "flagged", "answers"])]
    if not r["sections"]:
        parts.append(f"<p>{esc(_('No results yet: they appear as soon as annotators answer.'))}</p>")
    for n, sec in enumerate(r["sections"], start=1):
        parts.append(f'<section class="results" id="section-{n}"><h2>{esc(sec["title"])}</h2>')
        if sec.get("text"):
            parts.append(f"<p class='why'>{esc(sec['text'])}</p>")
        figs = dict(section_figures(sec))
        for fname, fig in figs.items():
            if fname.startswith("own-"):
                parts.append(embed(fig, fname))
        for tname, rows in sec["tables"].items():
            if tname in figs:
                parts.append(embed(figs[tname], tname))
            if rows:
                parts.append(_table(rows, caption=_(tname)))  # (the tables' names: English, marked by the task type)
            else:
                parts.append(f"<p class='why'>{esc(_('{table}: nothing yet.').format(table=_(tname)))}</p>")
        parts.append("</section>")
    parts.append(gold_html(r))
    if r["flags"]:
        parts += [f"<h2>{esc(_('Flagged items ({n})').format(n=len(r['flags'])))}</h2>",
                  f"<p class='why'>{esc(_('Notes the annotators left on items, as written.'))}</p>",
                  _table(flag_rows(r), ["item", "source", "annotator", "note", "at"])]
    parts += [f"<h2>{esc(_('Configuration (reproducible from the seed)'))}</h2>",
              _table(config_rows(r), ["setting", "value"])]
    return kit.page(title, "\n".join(parts), figures=embed)


def _columns(rows: list[dict]) -> list[tuple[str, str]]:
    """Every column by its head (:func:`head`, :data:`HEADS`), the reason a value is undefined last."""
    cols = [(k, head(k)) for k, _label in kit.columns_of(rows)]
    return [c for c in cols if c[0] != "undefined_reason"] + [c for c in cols if c[0] == "undefined_reason"]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "table"


def write_report(r: dict, out_dir: str | Path, *, pdf: bool = True, language: str | None = None) -> dict[str, Path]:
    """Write report.html, report.pdf (unless ``pdf=False``), results.json, a CSV per table and, with gold items,
    gold.csv into ``out_dir``, in ``language`` (zh-CN or en; None: the current language). ``r`` should be built in
    the same language (its sections' titles and texts are words too): :func:`medeval.core.i18n.language` around both,
    as ``medeval task report`` does."""
    with i18n.language(language):
        return _write_report(r, out_dir, pdf=pdf)


def _write_report(r: dict, out_dir: str | Path, *, pdf: bool) -> dict[str, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "report.html", "json": out / "results.json"}
    paths["html"].write_text(render_html(r), encoding="utf-8")
    paths["json"].write_text(json.dumps(r, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    for n, sec in enumerate(r["sections"], start=1):
        for m, (tname, rows) in enumerate(sec["tables"].items(), start=1):
            key = f"section{n}_table{m}_csv"
            paths[key] = out / f"{n:02d}-{m}-{_slug(tname)}.csv"  # (named by the table's English name: ASCII)
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
