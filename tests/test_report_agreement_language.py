"""The agreement report in its reader's language: HTML, CSV headers and the PDF in zh-CN (every character printed
with a font that has it: no boxes), English by default and unchanged."""

from __future__ import annotations

import csv
import html
import re
import subprocess
import sys

import pytest

from medeval.core import i18n
from medeval.reports import agreement_report as rep
from medeval.reports import dashboard as dash
from medeval.reports import html_kit as kit
from medeval.store.db import connect
from tests import pdf_support
from tests.conftest import ROOT
from tests.i18n_support import data_words, english_words
from tests.test_dashboard import graded  # noqa: F401 (fixture: 8 items graded by three annotators)


def _summary(graded, lang):  # noqa: F811
    with i18n.language(lang), connect(graded["path"]) as db:
        return dash.campaign_agreement(db, graded["campaign"], actor=None, n_boot=50, seed=3)


def _visible(page: str) -> str:
    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _has_chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def test_the_report_in_chinese_has_no_english_interface_words(graded, tmp_path):  # noqa: F811
    s = _summary(graded, "zh-CN")
    paths = rep.write_report(s, tmp_path / "zh", pdf=False, language="zh-CN")
    page = paths["html"].read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page
    assert _has_chinese(s["methods"]), s["methods"][:200]  # the methods paragraph exists in Chinese
    left = english_words([_visible(page)], data_words(graded["path"]) | {"vs", "sd", "CI", "k", "n", "v"})
    assert not left, sorted(left)
    with open(paths["annotators_csv"], encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert header[0] == "标注者" and all(_has_chinese(h) or h in ("n",) for h in header), [h for h in header if not _has_chinese(h)]


def test_english_stays_the_default_and_as_before(graded, tmp_path):  # noqa: F811
    s = _summary(graded, "en")
    paths = rep.write_report(s, tmp_path / "en", pdf=False)
    page = paths["html"].read_text(encoding="utf-8")
    assert '<html lang="en">' in page and "Agreement report: agree" in page and "<h2>Methods</h2>" in page
    assert not _has_chinese(_visible(page))
    with open(paths["annotators_csv"], encoding="utf-8") as f:
        assert next(csv.reader(f))[:3] == ["annotator", "assigned", "answered"]  # identifiers, as scripts read them


@pytest.mark.slow  # Chromium prints the PDF
def test_the_chinese_pdf_prints_every_character_with_a_font_that_has_it(graded, tmp_path):  # noqa: F811
    if kit.chromium_path() is None:
        pytest.skip("no Chromium (bash scripts/install-browser.sh)")
    s = _summary(graded, "zh-CN")
    paths = rep.write_report(s, tmp_path / "zh", pdf=True, language="zh-CN")
    text = pdf_support.text(paths["pdf"])
    assert "一致性报告" in text and _has_chinese(text)
    missing, families = pdf_support.uncovered(paths["pdf"], kit.FONTS)
    assert "Noto Sans CJK SC" in families and pdf_support.embedded_fonts(paths["pdf"])
    assert not missing, sorted(missing)
    # every character of the page's text is in the PDF (none dropped for want of a glyph) ...
    page = _visible(paths["html"].read_text(encoding="utf-8"))
    assert {c for c in page if not c.isspace()} <= set(text), sorted({c for c in page if not c.isspace()} - set(text))
    # ... and the check can fail: a character no font of the stack has is reported
    assert pdf_support.uncovered_chars("一致性 \U00013000", kit.FONTS)[0] == {"\U00013000"}
    subprocess.run(["pdftoppm", "-r", "50", "-png", "-f", "1", "-l", "1", str(paths["pdf"]), str(tmp_path / "p")],
                   check=True)  # a picture of the first page, in the test's folder, to look at


@pytest.mark.slow  # python -m medeval in a subprocess
def test_the_command_line_takes_the_language(graded, tmp_path):  # noqa: F811
    def run(*a):
        return subprocess.run([sys.executable, "-m", "medeval", "report-agreement", "--campaign",
                               str(graded["campaign"]), "--no-pdf", "--n-boot", "20", "--db", str(graded["path"]), *a],
                              cwd=ROOT, capture_output=True, text=True, encoding="utf-8")

    ok = run("--out", str(tmp_path / "zh"), "--language", "zh-cn")
    assert ok.returncode == 0, ok.stderr
    assert '<html lang="zh-CN">' in (tmp_path / "zh" / "report.html").read_text(encoding="utf-8")
    bad = run("--out", str(tmp_path / "fr"), "--language", "fr")
    assert bad.returncode == 2 and "en, zh-CN" in bad.stderr


@pytest.mark.slow  # AppTest runs the whole page
def test_the_agreement_page_makes_its_report_in_the_researchers_language(graded, monkeypatch):  # noqa: F811
    from medeval.accounts import auth
    from tests.test_leaderboard_report import deferred_downloads

    with connect(graded["path"]) as db:
        auth.set_language(db, "res", "zh-CN", actor=None)
    zh = lambda text: i18n.translate_in("zh-CN", text)  # noqa: E731
    dl = deferred_downloads("app_pages/dashboard.py", graded["path"], "res", monkeypatch)
    page = dl[zh("Report (HTML)")]()  # made on click, outside the page's run
    assert '<html lang="zh-CN">' in page and "一致性报告" in page
    with connect(graded["path"]) as db:
        auth.set_language(db, "res", "en", actor=None)
    dl = deferred_downloads("app_pages/dashboard.py", graded["path"], "res", monkeypatch)
    assert '<html lang="en">' in dl["Report (HTML)"]()
