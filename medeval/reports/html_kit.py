"""What the offline reports share: the page shell and its print CSS, escaped tables, figures, CSV, the PDF.

Every report (agreement, task results, leaderboard) is one self-contained HTML file that works offline:
plotly.js is inlined once, before the first figure of the page (:class:`Figures`), and every figure uses it. It is
the smallest bundle that draws the reports' charts, plotly.js's "basic" one (bar, pie, scatter: 1.2 MB, where the
whole plotly.js is 4.8 MB; ``assets/README.md`` says where it comes from); a heat map is drawn with bars
(:func:`drawable`), and a page with a figure of another type (a task type's own) carries the whole plotly.js.
The PDF is that file printed by headless Chromium (Debian's ``chromium``; nothing is downloaded).

Everything that comes from a file, a form or a user -- campaign, model, aspect, annotator and rubric
names, notes -- is plain text: :func:`esc` in the HTML, :func:`plain` in a Plotly figure (whose labels,
legends and hover texts are Plotly's own mini-HTML), so ``<img src=x onerror=...>`` is shown as typed.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from medeval.core import csvsafe, display, i18n
from medeval.core.i18n import N_, _
from medeval.core.errors import MedevalError

FONTS = ('"Noto Sans","Noto Sans CJK SC","Source Han Sans SC","WenQuanYi Micro Hei","PingFang SC",'
         '"Microsoft YaHei",system-ui,sans-serif')
PLOT_FONT = dict(family="Noto Sans, Noto Sans CJK SC, Source Han Sans SC, WenQuanYi Micro Hei, sans-serif", size=12)
PLOT_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=50, b=50), height=360, font=PLOT_FONT)
PLOT_CONFIG = {"displayModeBar": False, "responsive": True}

CSS = f"""
 body{{font-family:{FONTS};max-width:980px;margin:2rem auto;padding:0 1rem;color:#1f2430;line-height:1.45}}
 h1{{font-size:1.6rem}} h2{{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}} h3{{font-size:1rem}}
 table{{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1rem;max-width:100%}}
 td,th{{border:1px solid #ddd;padding:.25rem .45rem;text-align:left;vertical-align:top;
        word-break:normal;overflow-wrap:break-word}}
 th{{background:#f6f7f9}} td.num{{white-space:nowrap}} td.long{{overflow-wrap:anywhere}}
 caption{{text-align:left;font-weight:600;padding:.2rem 0}}
 .why{{color:#555;font-size:.9rem}} .methods{{background:#f6f7f9;padding:.8rem 1rem;border-radius:6px}}
 .warn{{background:#fff4e5;padding:.6rem 1rem;border-left:4px solid #f0a020}}
 .figure{{margin:.5rem 0 1rem}}
 @page{{size:A4;margin:14mm}}
 @media print{{body{{max-width:none;margin:0}} h2{{break-after:avoid}} .plotly-graph-div,.figure{{break-inside:avoid}}
   thead{{display:table-header-group}} tr{{break-inside:avoid}}}}
"""


def esc(text) -> str:
    """Any value as HTML text (``<>&"'`` escaped)."""
    return html.escape(str(text))


def plain(text) -> str:
    """A name as Plotly shows it literally (its labels, legends and hover text are mini-HTML): ``<>&`` escaped."""
    return html.escape(str(text), quote=False)


def short(text, limit: int = 48) -> str:
    """A label for a figure axis or legend: :func:`plain`, cut to ``limit`` characters (the tables hold it whole)."""
    t = str(text)
    return plain(t if len(t) <= limit else t[: limit - 1] + "…")


def fmt(v, digits=3) -> str:
    """A number with ``digits`` decimals; ``None`` is "undefined"."""
    return "undefined" if v is None else f"{v:.{digits}f}"


def ci_text(ci, digits=3) -> str:
    """" (95% CI a to b)" or nothing."""
    return f" (95% CI {fmt(ci[0], digits)} to {fmt(ci[1], digits)})" if ci and None not in ci[:2] else ""


def cell(v) -> str:
    """A table cell as a reader reads it: floats with 3 decimals, a list as "a, b", yes/no for a truth value, a
    dash for nothing (``None``, NaN, an empty list): never a Python value."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if display.is_missing(v):
        return display.MISSING
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(cell(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{display.words(k)}: {cell(x)}" for k, x in v.items())
    return str(v)


def columns_of(rows: list[dict]) -> list[tuple[str, str]]:
    """Every key of the rows, in the order they first appear, as (key, label) pairs."""
    return [(k, k) for k in dict.fromkeys(k for r in rows for k in r)]


def table(rows: list[dict], columns: list[tuple[str, str]] | None = None, *, caption: str | None = None) -> str:
    """An HTML table of ``rows``; every header and cell escaped. ``columns``: (key, label); default every key. A
    column empty in every row says nothing and is left out."""
    columns = columns_of(rows) if columns is None else columns
    if rows:
        columns = [(k, label) for k, label in columns if not all(display.is_missing(r.get(k)) for r in rows)]
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    head = "".join(f"<th>{esc(label)}</th>" for _, label in columns)
    body = "".join("<tr>" + "".join(f"<td{_num_class(r.get(key))}>{esc(cell(r.get(key)))}</td>" for key, _ in columns)
                   + "</tr>" for r in rows)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_NUMBER_TEXT = re.compile(r"-?\d[\d.,]*%?")
# a run of letters with no place to break (no space, no CJK character): an id, a URL, a long compound
_LONG_TOKEN = re.compile(r"[^\s\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef]{25,}")


def _num_class(v) -> str:
    """Numbers (CIs, "23.6%") are not broken across lines. Text breaks between words (Chinese between characters,
    as it always may); only a cell with a token too long for a column (an id, a URL) breaks inside it."""
    nums = v if isinstance(v, (list, tuple)) else [v]
    ok = v is not None and nums and all(x is None or isinstance(x, (int, float))
                                        or (isinstance(x, str) and _NUMBER_TEXT.fullmatch(x)) for x in nums)
    if ok:
        return ' class="num"'
    return ' class="long"' if v is not None and _LONG_TOKEN.search(cell(v)) else ""


ASSETS = Path(__file__).with_name("assets")
BASIC_BUNDLE = ASSETS / "plotly-basic.min.js"  # plotly.js-basic-dist-min, the version plotly (Python) writes for
BASIC_TRACES = frozenset({"bar", "pie", "scatter"})  # the trace types it draws
# where the first figure's plotly.js goes: :func:`page` puts the bundle the page's figures need there (a comment
# no text of the page can hold: every text is escaped, ``<`` included)
_BUNDLE_SLOT = "<!--medeval:plotly.js-->"


def _bundle(full: bool) -> str:
    """plotly.js as the page's script: the basic bundle, or the whole plotly.js the plotly package carries (read
    from its file each time: a millisecond)."""
    if full:
        from plotly.offline import get_plotlyjs

        js = get_plotlyjs()
    else:
        js = BASIC_BUNDLE.read_text(encoding="utf-8")
    return f"<script>window.PlotlyConfig = {{MathJaxConfig: 'local'}};</script><script>{js}</script>"


def drawable(fig):
    """``fig`` as the basic bundle draws it: a figure that is one heat map (the leaderboard's models x aspects)
    becomes one bar per cell, coloured on the heat map's scale, with its colour bar, axes, ticks and hover text;
    any other figure is returned as it is."""
    import plotly.graph_objects as go

    if len(fig.data) != 1 or fig.data[0].type != "heatmap" or fig.data[0].z is None:
        return fig
    h = fig.data[0]
    z = [list(row) if isinstance(row, (list, tuple)) or hasattr(row, "tolist") else [row] for row in h.z]
    n_x = max((len(row) for row in z), default=0)
    xs = list(h.x) if h.x is not None else list(range(n_x))
    ys = list(h.y) if h.y is not None else list(range(len(z)))
    hover = h.hovertemplate or "%{y} · %{x}: %{z}<extra></extra>"  # the cell's x, y and value: its customdata
    for axis, n in (("x", 0), ("y", 1), ("z", 2)):
        hover = hover.replace("%{" + axis, f"%{{customdata[{n}]")
    out = go.Figure(layout=fig.layout)
    for i, row in enumerate(z):
        cells = [(j, v) for j, v in enumerate(row) if v is not None and v == v]  # (a missing cell stays empty)
        out.add_trace(go.Bar(
            x=[j for j, _v in cells], y=[1] * len(cells), base=i - 0.5, width=1, orientation="v",
            marker=dict(color=[v for _j, v in cells], coloraxis="coloraxis", line=dict(width=0)),
            customdata=[[xs[j] if j < len(xs) else j, ys[i] if i < len(ys) else i, v] for j, v in cells],
            hovertemplate=hover, name=str(ys[i]) if i < len(ys) else str(i), showlegend=False))
    out.update_layout(barmode="overlay", bargap=0, coloraxis=dict(
        colorscale=h.colorscale, cmin=h.zmin, cmax=h.zmax, colorbar=h.colorbar.to_plotly_json(),
        reversescale=h.reversescale, showscale=h.showscale))
    out.update_xaxes(tickmode="array", tickvals=list(range(n_x)), ticktext=[str(x) for x in xs],
                     range=[-0.5, n_x - 0.5], showgrid=False, zeroline=False)
    out.update_yaxes(tickmode="array", tickvals=list(range(len(z))), ticktext=[str(y) for y in ys],
                     range=[-0.5, len(z) - 0.5], showgrid=False, zeroline=False)
    return out


class Figures:
    """Embeds Plotly figures in document order; plotly.js goes inline before the first one only (offline, once),
    the basic bundle unless a figure has a trace type it lacks (:func:`page` puts it there)."""

    def __init__(self) -> None:
        self.count = 0
        self.full = False  # a figure needs the whole plotly.js

    def __call__(self, fig, name: str = "") -> str:
        fig = drawable(fig)
        self.full = self.full or not {t.type or "scatter" for t in fig.data} <= BASIC_TRACES
        out = fig.to_html(full_html=False, include_plotlyjs=False, config=PLOT_CONFIG)
        slot = _BUNDLE_SLOT if self.count == 0 else ""
        self.count += 1
        attr = f' data-figure="{esc(name)}"' if name else ""
        return f'{slot}<div class="figure"{attr}>{out}</div>'

    def script(self) -> str:
        """The page's plotly.js (``<script>`` elements), or nothing when no figure was embedded."""
        return _bundle(self.full) if self.count else ""


def figure_page(fig, title: str) -> str:
    """One figure as a whole offline page (the smallest bundle that draws it, as a report's figures): what a page's
    "chart (HTML, offline)" download gives."""
    figures = Figures()
    return page(title, figures(fig), figures=figures)


def page(title: str, body: str, *, css: str = "", figures: Figures | None = None) -> str:
    """The whole page: ``title`` is escaped here; ``body`` is HTML built with :func:`esc` and :func:`table`, its
    figures embedded by ``figures`` (which puts plotly.js before the first). Its ``lang`` is the current
    language's, so Chromium draws Chinese with the Simplified Chinese CJK font."""
    if figures is not None and figures.count:
        body = body.replace(_BUNDLE_SLOT, figures.script(), 1)
    return f"""<!doctype html>
<html lang="{i18n.current()}"><head><meta charset="utf-8">
<title>{esc(title)}</title>
<style>{CSS}{css}</style></head><body>
{body}
</body></html>
"""


# The reports' CSV columns as a reader of another language heads them (English keeps the identifiers, which
# researchers' scripts read); a column not listed keeps its name (a model's name, say).
CSV_HEADERS = {
    "statistic": N_("statistic"), "value": N_("value"), "ci95_low": N_("CI low"), "ci95_high": N_("CI high"),
    "n_items": N_("items"), "n_raters": N_("raters"), "n_pairable": N_("pairable"), "missing": N_("missing data"),
    "undefined_reason": N_("why undefined"), "method": N_("method"), "how_to_read": N_("how to read"),
    "annotator": N_("annotator"), "assigned": N_("assigned"), "answered": N_("answered"), "graded": N_("graded"),
    "skipped": N_("skipped"), "skip_rate": N_("skip rate"), "flagged": N_("flagged"), "n_shared": N_("shared items"),
    "spearman_vs_panel": N_("Spearman vs panel"), "spearman_ci95": N_("95% CI"),
    "ci_undefined_reason": N_("why no 95% CI"), "ci95_undefined_reason": N_("why no 95% CI"),
    "spearman_ci95_undefined_reason": N_("why no 95% CI"),
    "exact_agreement_vs_panel": N_("same tier as panel"),
    "mean_difference_vs_panel": N_("mean difference (+ = more lenient)"),
    "median_seconds_per_item": N_("median s / item"), "block": N_("block"), "answers": N_("answers"),
    "exact_agreement": N_("same tier"), "item": N_("item"), "range": N_("tier range"), "sd": N_("sd"),
    "tiers": N_("tiers"), "qualification": N_("qualification"), "hidden_answered": N_("hidden gold answered"),
    "hidden_correct": N_("correct"), "accuracy": N_("accuracy"), "accuracy_by_block": N_("accuracy per block"),
    "metric": N_("metric"), "aspect_type": N_("aspect type"), "against": N_("against"), "spearman": N_("Spearman"),
    "ci95": N_("95% CI"), "n": N_("n"), "rank": N_("rank"), "model": N_("model"), "backbone": N_("backbone"),
    "kind": N_("kind"), "level": N_("level"), "total_score": N_("total score"), "aspect": N_("aspect"),
    "section": N_("section"), "completely_wrong": N_("Completely Wrong"), "partially_correct": N_("Partially Correct"),
    "basically_correct": N_("Basically Correct"), "mean medical": N_("mean medical"),
    "mean backbone": N_("mean backbone"), "n medical": N_("n medical"), "n backbone": N_("n backbone"),
    "t": N_("t"), "df": N_("df"), "p": N_("p"), "p < 0.05": N_("p < 0.05"), "significant": N_("significant"),
    "medical": N_("medical"), "rank_before": N_("rank before"), "rank_change": N_("rank change"),
    "total_before": N_("total before"), "total_change": N_("total change"), "level_before": N_("level before"),
    # the task report's tables
    "rated": N_("rated"), "reading": N_("reading"), "mean": N_("mean"), "ratings": N_("ratings"),
    "criterion": N_("criterion"), "versus": N_("versus"), "judge win": N_("judge win"), "judge tie": N_("judge tie"),
    "clinicians win": N_("clinicians win"), "clinicians tie": N_("clinicians tie"), "cases": N_("cases"),
    "judge mean": N_("judge mean"), "judge rank": N_("judge rank"), "clinicians mean": N_("clinicians mean"),
    "clinicians rank": N_("clinicians rank"), "source": N_("source"), "share": N_("share"),
    "comparisons": N_("comparisons"), "lowest annotator": N_("lowest annotator"),
    "highest annotator": N_("highest annotator"), "sd across annotators": N_("sd across annotators"),
    "p (binomial, vs 1/2)": N_("p (binomial, vs 1/2)"), "strength": N_("strength"), "items": N_("items"),
    "items checked": N_("items checked"), "AccR (items, majority)": N_("AccR (items, majority)"),
    "AccR 95% CI (Wilson)": N_("AccR 95% CI (Wilson)"), "items without a majority": N_("items without a majority"),
    "AccR (ratings)": N_("AccR (ratings)"), "factual reasons supporting": N_("factual reasons supporting"),
    "counterfactual reasons supporting": N_("counterfactual reasons supporting"),
    "items in the pool": N_("items in the pool"),
    "claims without a twin (left out)": N_("claims without a twin (left out)"),
    "done": N_("done"), "not_fully_shown": N_("not fully shown"), "not_measured": N_("not measured"),
    "note": N_("note"), "at": N_("at"),
}


def csv_header(name: str) -> str:
    """A CSV column's head in the current language (the identifier itself in English)."""
    if i18n.current() == i18n.SOURCE or name not in CSV_HEADERS:
        return name
    return _(CSV_HEADERS[name])


def write_csv(path: Path, rows: list[dict], columns: list[str] | None = None) -> None:
    """Rows as CSV (cells a spreadsheet could run neutralised); lists and dicts as JSON; every key a column, headed
    as :func:`csv_header` says in the current language.

    ``columns`` come first (the header an empty file still gets); keys beyond them follow.
    """
    with path.open("w", newline="", encoding="utf-8") as f:
        names = list(dict.fromkeys([*(columns or []), *(k for r in rows for k in r)]))
        if not names:
            return
        w = csvsafe.dict_writer(f, fieldnames=names, restval="")
        w.writerow({n: csv_header(n) for n in names})  # (neutralised as every cell is)
        for r in rows:
            w.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
                        for k, v in r.items()})


def chromium_path() -> str | None:
    """The Chromium to print PDFs with, or None (``bash scripts/install-browser.sh`` installs it)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


# Chromium as a printer: no GPU, no extensions, no background requests, the GPU and network services in the
# browser's process (fewer processes to start: the PDF is most of a zip's time)
PRINT_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--in-process-gpu", "--disable-software-rasterizer",
               "--disable-dev-shm-usage", "--disable-extensions", "--disable-background-networking",
               "--disable-component-update", "--disable-breakpad", "--no-first-run",
               "--enable-features=NetworkServiceInProcess", "--run-all-compositor-stages-before-draw",
               "--virtual-time-budget=10000", "--no-pdf-header-footer")
_DEBIAN_CHROMIUM = Path("/usr/lib/chromium/chromium")  # what Debian's /usr/bin/chromium, a shell script, starts


def _executable(exe: str) -> str:
    """The browser itself: Debian's launcher script reads its settings files and runs a few commands first."""
    try:
        script = Path(exe).read_bytes()[:2] == b"#!"
    except OSError:
        script = False
    return str(_DEBIAN_CHROMIUM) if script and _DEBIAN_CHROMIUM.is_file() else exe


def print_pdf(html_path: Path, pdf_path: Path, *, timeout: float = 120) -> None:
    """Print an HTML file to PDF with headless Chromium (Debian's ``chromium``)."""
    exe = chromium_path()
    if exe is None:
        raise MedevalError("the PDF needs Chromium: run `bash scripts/install-browser.sh` (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        r = subprocess.run([_executable(exe), *PRINT_FLAGS, f"--user-data-dir={profile}",
                            f"--print-to-pdf={pdf_path}", Path(html_path).resolve().as_uri()],
                           capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if r.returncode != 0 or not Path(pdf_path).exists() or Path(pdf_path).stat().st_size == 0:
        raise MedevalError(f"Chromium could not print the PDF (exit {r.returncode}): {r.stderr.strip()[-300:]}")


def zip_report(write) -> bytes:
    """A zip of what ``write(folder)`` writes (a report's ``write_report``: HTML, PDF, JSON, CSVs), in memory.

    The pages' "Report (zip)" buttons call it on click; the folder is temporary.
    """
    import io
    import zipfile

    with tempfile.TemporaryDirectory() as tmp:
        paths = write(Path(tmp))
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for p in paths.values():
                z.write(p, Path(p).name)
        return buf.getvalue()
