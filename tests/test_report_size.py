"""The offline reports stay small and offline (issue 36 §4): every written report.html -- agreement, task results,
leaderboard, in English and in Chinese -- is at most 1.5 MB and refers to nothing on the network (no script, style,
link, image or frame from an http(s) address, no CDN); plotly.js is the vendored basic bundle, inlined once, of
the major version plotly (Python) writes figures for; the leaderboard's heat map is drawn with bars, as it was.

(Sizes, not times: ``bench/bench_reports.py`` measures the opening in Chromium and the zip.)
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs_version

from medeval.accounts.auth import get_user
from medeval.reports import agreement_report as rep
from medeval.reports import html_kit as kit
from medeval.reports import leaderboard as lb
from medeval.reports import leaderboard_report as lr
from medeval.reports import task_report as tr
from medeval.store.db import connect
from tests import test_dashboard, test_leaderboard_report, test_task_report
from tests.conftest import copy_db
from tests.test_dashboard import _summary
from tests.test_task_report import _rubric

# the fixtures of the reports' own tests: 8 items graded by 3 annotators; two models graded under v1 and v2 (one
# named like an HTML injection); cases with a judge and clinicians
graded = test_dashboard.graded
lb_db = test_leaderboard_report.lb_db
tdb = test_task_report.tdb

MAX_BYTES = 1_500_000  # 1.5 MB
LANGUAGES = ("en", "zh-CN")
BASIC = "plotly.js (basic - minified) v"
NETWORK = re.compile(r"^\s*(https?:)?//", re.I)  # an http(s) or protocol-relative address
CSS_NETWORK = re.compile(r"(url\(\s*['\"]?\s*(https?:)?//|@import)", re.I)
URL_ATTRS = {"src", "href", "srcset", "data", "action", "formaction", "poster", "background", "xlink:href"}


class _References(HTMLParser):
    """What a page would load: scripts with a src, every URL attribute, and the style sheets' text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.script_src: list[str] = []
        self.urls: list[tuple[str, str, str]] = []
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if tag == "script" and name == "src":
                self.script_src.append(value or "")
            if name in URL_ATTRS and value:
                for part in value.split(",") if name == "srcset" else [value]:
                    self.urls.append((tag, name, part))
            if name == "style" and value:
                self.css.append(value)
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.css.append(data)


def network_references(page: str) -> list[str]:
    """Every reference of ``page`` to the network (empty: the page works offline)."""
    found = _References()
    found.feed(page)
    out = [f"<script src={s!r}>" for s in found.script_src]  # a script from anywhere but the page itself
    out += [f"<{t} {a}={v!r}>" for t, a, v in found.urls if NETWORK.match(v)]
    out += [f"CSS {m.group(0)!r}" for css in found.css for m in CSS_NETWORK.finditer(css)]
    out += [f"<link> {m.group(0)!r}" for m in re.finditer(r"<link\b[^>]*>", page, re.I)
            if re.search(r"href\s*=\s*['\"]?\s*(https?:)?//", m.group(0), re.I)]
    return out


def check_written(path: Path) -> str:
    """The written report.html: at most 1.5 MB, nothing from the network, plotly.js's basic bundle inlined once."""
    size = path.stat().st_size
    assert size <= MAX_BYTES, f"{path} is {size / 1e6:.2f} MB (at most {MAX_BYTES / 1e6} MB)"
    page = path.read_text(encoding="utf-8")
    assert network_references(page) == [], network_references(page)
    figures = page.count('<div class="figure"')
    assert page.count(BASIC) == (1 if figures else 0)
    assert len(plotted(page)) == figures and "<!--medeval:plotly.js-->" not in page
    assert {t.get("type", "scatter") for data in plotted(page) for t in data} <= kit.BASIC_TRACES
    if figures:  # the bundle comes before the first figure, which draws with it
        assert page.index(BASIC) < page.index('<div class="figure"')
    return page


def plotted(page: str) -> list[list[dict]]:
    """The traces each figure of ``page`` draws (the data of each ``Plotly.newPlot``)."""
    out, decoder = [], json.JSONDecoder()
    for m in re.finditer(r'Plotly\.newPlot\(\s*"[^"]+",\s*', page):
        out.append(decoder.raw_decode(page, m.end())[0])
    return out


# ---------------------------------------------------------------- the check itself


def test_the_check_sees_every_kind_of_network_reference():
    assert network_references('<p>x</p><script>var u = "https://cdn.plot.ly/un/";</script>') == []  # a string
    for page in ('<script src="https://cdn.plot.ly/plotly-4.1.1.min.js"></script>',
                 "<script src='plotly.min.js'></script>",  # not inline: a file beside the report, which is missing
                 '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Noto">',
                 '<link rel=preconnect href=//cdn.example.org>', '<img src="http://x.org/a.png">',
                 '<iframe src="HTTPS://example.org"></iframe>',
                 '<style>body{background:url("https://x/y.png")}</style>',
                 "<style>@import 'https://x/y.css';</style>", '<div style="background:url(//x/y.png)"></div>',
                 '<img srcset="a.png 1x, https://x/b.png 2x">'):
        assert network_references(page), page


def test_a_report_over_the_limit_fails(tmp_path):
    big = tmp_path / "report.html"
    big.write_text("<!doctype html><p>" + "x" * MAX_BYTES + "</p>", encoding="utf-8")
    with pytest.raises(AssertionError, match="MB"):
        check_written(big)


# ---------------------------------------------------------------- every report, in both languages


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_agreement_report_is_small_and_offline(graded, tmp_path, language):
    paths = rep.write_report(_summary(graded), tmp_path / language, pdf=False, language=language)
    page = check_written(paths["html"])
    assert page.count('<div class="figure"') == len(rep.figures(_summary(graded))) >= 4


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_task_report_is_small_and_offline(tdb, tmp_path, language):
    cid, _r = _rubric(tdb)
    r = tr.build(tdb, cid, actor=get_user(tdb, "res"))
    paths = tr.write_report(r, tmp_path / language, pdf=False, language=language)
    page = check_written(paths["html"])
    assert page.count('<div class="figure"') == sum(len(tr.section_figures(s)) for s in r["sections"]) == 5


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_leaderboard_report_is_small_and_offline(lb_db, tmp_path, language):
    with connect(lb_db) as db:
        data = lr.build(db, 1, compare=2)
    paths = lr.write_report(data, tmp_path / language, pdf=False, language=language)
    page = check_written(paths["html"])
    types = {t.get("type") for data in plotted(page) for t in data}
    assert 'data-figure="aspects"' in page and types == {"bar"}  # the heat map drawn with bars too


def test_every_report_of_the_demo_is_small_and_offline(full_demo_template, tmp_path):
    """The reports the demo's pages offer (the agreement report of each graded campaign, each task campaign's,
    the active threshold set's leaderboard), in English and in Chinese."""
    from medeval.accounts.policy import local_actor
    from medeval.annotation import tasks
    from medeval.core import i18n
    from medeval.reports.dashboard import campaign_agreement

    demo = copy_db(full_demo_template, tmp_path / "demo.db")
    actor, written = local_actor(), []
    for language in LANGUAGES:
        with i18n.language(language), connect(demo) as db:
            graded_campaigns = [c for (c,) in db.conn.execute(
                "SELECT DISTINCT ci.campaign_id FROM grade_annotations g JOIN campaign_items ci ON ci.id = g.item_id")]
            reports = [(f"agreement-{c}", rep.write_report, campaign_agreement(db, c, actor=actor, n_boot=50))
                       for c in graded_campaigns]
            reports += [(f"task-{c['id']}", tr.write_report, tr.build(db, c["id"], actor=actor))
                        for c in tasks.task_campaigns(db, actor=actor)]
            reports.append(("leaderboard", lr.write_report, lr.build(db)))
        for name, write, data in reports:
            paths = write(data, tmp_path / language / name, pdf=False, language=language)
            written.append(check_written(paths["html"]))
    assert len(written) >= 2 * 5 and all('<div class="figure"' in page for page in written)


# ---------------------------------------------------------------- the bundle and the figures it draws


def test_the_vendored_bundle_is_plotly_basic_of_the_version_plotly_writes_for():
    head = kit.BASIC_BUNDLE.read_text(encoding="utf-8")[:400]
    version = re.search(r"plotly\.js \(basic - minified\) v(\d+)\.(\d+)\.(\d+)", head)
    assert version and "Licensed under the MIT license" in head  # its licence header, unchanged
    assert version.group(1) == get_plotlyjs_version().split(".")[0]  # the major version plotly (Python) writes for
    assert (kit.ASSETS / "plotly-basic.LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert f"{version.group(1)}.{version.group(2)}.{version.group(3)}" in (kit.ASSETS / "README.md").read_text()
    assert kit.BASIC_BUNDLE.stat().st_size < 1_300_000


def test_the_heat_map_is_drawn_with_bars_of_its_colours(lb_db):
    with connect(lb_db) as db:
        report = lr.build(db, 1)["report"]
    heat = lb.aspect_heatmap(report)  # what the app draws, with the whole plotly.js
    fig = kit.drawable(heat)
    assert heat.data[0].type == "heatmap" and {t.type for t in fig.data} == {"bar"}  # the basic bundle draws it
    z = heat.data[0].z
    cells = {(c[1], c[0]): c[2] for t in fig.data for c in t.customdata}  # (model, aspect) -> value
    assert cells == {(y, x): z[i][j] for i, y in enumerate(heat.data[0].y) for j, x in enumerate(heat.data[0].x)
                     if z[i][j] is not None}  # every cell once, none for B's missing aspect
    assert all(t.marker.coloraxis == "coloraxis" for t in fig.data)
    ca = fig.layout.coloraxis
    assert (ca.cmin, ca.cmax, ca.colorscale, ca.colorbar.title.text) == (
        0, 10, heat.data[0].colorscale, heat.data[0].colorbar.title.text)
    assert list(fig.layout.xaxis.ticktext) == list(heat.data[0].x) and fig.layout.xaxis.tickangle == 45
    assert list(fig.layout.yaxis.ticktext) == list(heat.data[0].y)  # the names escaped, as before
    assert fig.data[0].hovertemplate == "%{customdata[1]} · %{customdata[0]}: %{customdata[2]:.2f}<extra></extra>"
    assert fig.layout.title.text == heat.layout.title.text
    bar = go.Figure(go.Bar(x=[1], y=[2]))
    assert kit.drawable(bar) is bar  # any other figure as it is


def test_a_figure_the_basic_bundle_cannot_draw_gets_the_whole_plotly_js():
    """A task type's own figure of another trace type still draws: that page carries the whole plotly.js."""
    embed = kit.Figures()
    body = embed(go.Figure(go.Bar(x=[1], y=[2])), "a") + embed(go.Figure(go.Box(y=[1, 2, 3])), "b")
    page = kit.page("t", body, figures=embed)
    assert embed.full and page.count("plotly.js v") == 1 and BASIC not in page
    assert network_references(page) == []
    embed = kit.Figures()
    page = kit.page("t", embed(go.Figure(go.Scatter(x=[1], y=[2])), "a"), figures=embed)
    assert not embed.full and page.count(BASIC) == 1 and len(page.encode()) <= MAX_BYTES
    assert BASIC not in kit.page("t", "<p>no figures</p>", figures=kit.Figures())


def test_a_single_chart_page_is_offline_and_small():
    """The Leaderboard page's "Chart (HTML, offline)" download: one figure, the basic bundle, no network."""
    fig = go.Figure(go.Bar(x=["模型 A", "B"], y=[0.4, 0.6]))
    out = kit.figure_page(fig, "Tier shares <v3> & 份额")
    assert len(out.encode("utf-8")) <= 1_500_000
    assert "<title>Tier shares &lt;v3&gt; &amp; 份额</title>" in out
    assert "plotly.js (basic - minified) v" in out and network_references(out) == []
