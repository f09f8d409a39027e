"""The task report in its reader's language: the HTML of each task type (rubric with a judge, preference with gold
items, AccR) in zh-CN without English interface words and with a Chinese methods paragraph, the PDF in zh-CN with
every character printed by a font that has it, ``task report --language``; English stays the default and as before
(tests/test_task_report.py)."""

from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner

from medeval.accounts.auth import get_user
from medeval.annotation import tasks
from medeval.cli import main
from medeval.core import i18n
from medeval.reports import html_kit as kit
from medeval.reports import task_report as tr
from tests import pdf_support
from tests.i18n_support import english_words
from tests.test_task_report import _pref_with_gold, _rubric, tdb  # noqa: F401 (tdb: the fixture)
from tests.test_tasks import answer_all

# Words a Chinese report keeps: abbreviations, symbols and names of the statistics (ICC(2,k), k, n, p, the paper's
# Accuracy_2-tuple and Accuracy_triple) and the authors cited (Shrout & Fleiss, McGraw & Wong, Koo & Li, Fisher-z,
# Bonett-Wright, Bradley-Terry, App.)
KEPT = {"CI", "k", "n", "p", "F", "Accuracy", "tuple", "triple", "Shrout", "Fleiss", "McGraw", "Wong", "Koo", "Li",
        "Fisher-z", "Bonett", "Wright", "App", "Krippendorff's", "Bradley-Terry"}
# the fixture's data: models (one named like an HTML injection), users, data sets, the judge
DATA = {"alpha", "gamma", "m1", "img", "src", "x", "onerror", "alert", "doc", "clin", "fc", "judge-x"}
# Left in English by another helper's file, not the report's: a choice setting's value in the Configuration table (only
# there) is shown as stored (medeval/annotation/campaign_text.py config_rows: compare "answers", pool "correct items",
# rubric "automedeval")
OTHERS = {"answers", "correct", "items", "automedeval"}


def _visible(page: str) -> str:
    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _figure_texts(r: dict) -> list[str]:
    """What the report's figures say: titles, axes, legends, bar and hover texts, category labels."""
    out = []
    for sec in r["sections"]:
        for _name, fig in tr.section_figures(sec):
            lay = fig.layout
            out += [lay.title.text or "", lay.xaxis.title.text or "", lay.yaxis.title.text or ""]
            for t in fig.data:
                out.append(t.name or "")
                for attr in ("text", "hovertext", "x", "y"):
                    v = getattr(t, attr, None)
                    out += [x for x in ([v] if isinstance(v, str) else list(v or ())) if isinstance(x, str)]
    return [html.unescape(t) for t in out]


def _has_chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def _accr(db):
    d1, d2, res = (get_user(db, n) for n in ("doc1", "doc2", "res"))
    cid = tasks.create_campaign(db, "accr", "accr", ["doc1", "doc2"], k=2, seed=0, config={"dataset": "fc"},
                                actor=res)
    answer_all(db, d1, cid, lambda v, q: "yes")
    answer_all(db, d2, cid, lambda v, q: "no")
    return cid


def _campaigns(db) -> dict[str, int]:
    """One campaign of each task type with answers: rubric with judge-x, preference with gold items, AccR."""
    return {"rubric": _rubric(db)[0], "preference": _pref_with_gold(db, gold=True), "accr": _accr(db)}


def _build(db, cid, lang):
    with i18n.language(lang):
        return tr.build(db, cid, actor=get_user(db, "res"))


def test_each_task_report_in_chinese_has_no_english_interface_words(tdb, tmp_path):  # noqa: F811
    allowed = KEPT | DATA | OTHERS
    for kind, cid in _campaigns(tdb).items():
        r = _build(tdb, cid, "zh-CN")
        paths = tr.write_report(r, tmp_path / kind, pdf=False, language="zh-CN")
        page = paths["html"].read_text(encoding="utf-8")
        assert '<html lang="zh-CN">' in page, kind
        with i18n.language("zh-CN"):
            methods = tr.methods_paragraph(r)
            figures = _figure_texts(r)
        assert _has_chinese(methods) and html.escape(methods) in page, kind  # the methods paragraph, in Chinese
        assert "<h2>方法</h2>" in page and "<h2>进度</h2>" in page
        body, _sep, config = _visible(page).replace(r["campaign"]["name"], " ").partition("配置（可由随机种子复现）")
        left = english_words([body], KEPT | DATA) | english_words([config], allowed)
        assert not left, (kind, sorted(left))
        assert figures and not english_words(figures, allowed), (kind, sorted(english_words(figures, allowed)))
        if kind == "preference":
            assert "<h2>金标准条目</h2>" in page and "<td>是</td>" in page  # flagged: yes
        # the same results written in English, by default: the report as before (tests/test_task_report.py)
        en = tr.write_report(_build(tdb, cid, "en"), tmp_path / f"{kind}-en", pdf=False)["html"].read_text(
            encoding="utf-8")
        assert '<html lang="en">' in en and "<h2>Methods</h2>" in en and not _has_chinese(_visible(en)), kind


def test_the_chinese_methods_paragraph_keeps_the_numbers(tdb):  # noqa: F811
    cid, _r = _rubric(tdb)
    zh, en = _build(tdb, cid, "zh-CN"), _build(tdb, cid, "en")
    with i18n.language("zh-CN"):
        text = tr.methods_paragraph(zh)
    assert "个病例问题" in text and "k = 2" in text and "随机种子 11" in text and "judge-x" in text
    per_model = next(s for s in en["sections"] if s["title"] == "Ratings per model")["tables"]["per model"]
    for row in per_model:
        assert f"{row['model']} {row['mean']:.2f}" in text
    assert "相关性、知识准确性、流畅性" in text  # the rubric's criteria in Chinese, listed with 、
    assert "Krippendorff α（等距）（各标准的平均） = " in text
    english = tr.methods_paragraph(en)  # the default language: English, and the numbers are the same
    assert english.startswith("3 case questions from the data set clin") and not _has_chinese(english)


def test_what_is_undefined_is_said_in_chinese_too(tdb, tmp_path):  # noqa: F811
    res, d1 = get_user(tdb, "res"), get_user(tdb, "doc1")
    empty = tasks.create_campaign(tdb, "preference", "nobody yet", ["doc1"], k=1, seed=1,
                                  config={"dataset": "clin", "compare": "answers"}, actor=res)
    rubric = tasks.create_campaign(tdb, "rubric", "not rated yet", ["doc1"], k=1, seed=1,
                                   config={"dataset": "clin", "judge": "judge-x"}, actor=res)
    one = tasks.create_campaign(tdb, "accr", "one clinician", ["doc1"], k=1, seed=1, config={"dataset": "fc"},
                                actor=res)
    answer_all(tdb, d1, one, lambda v, q: "yes")
    expected = {empty: ("尚无结果", "尚无任何选择，因此所有数值都无法计算"),
                rubric: ("暂无数据", "一致性无法计算"),
                one: ("无法计算的原因", "Krippendorff α（名义）（理由支持判断） 无法计算（")}
    for cid, (on_page, in_methods) in expected.items():
        r = _build(tdb, cid, "zh-CN")
        with i18n.language("zh-CN"):
            page, methods = tr.render_html(r), tr.methods_paragraph(r)
        assert on_page in page and in_methods in methods, (cid, methods)
        left = english_words([_visible(page).replace(r["campaign"]["name"], " ")], KEPT | DATA | OTHERS)
        assert not left, (cid, sorted(left))


def test_the_command_line_takes_the_language(tdb, db_path, tmp_path):  # noqa: F811
    cid, _r = _rubric(tdb)

    def run(*args):
        return CliRunner().invoke(main, ["task", "report", "--db", str(db_path), "--campaign", str(cid), "--no-pdf",
                                         *args])

    ok = run("--out", str(tmp_path / "zh"), "--language", "zh-cn")
    assert ok.exit_code == 0, ok.output
    page = (tmp_path / "zh" / "report.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page and "<h2>方法</h2>" in page and "临床医生间的一致性" in page
    assert (tmp_path / "zh" / "progress.csv").read_text(encoding="utf-8").startswith("标注者,")
    en = run("--out", str(tmp_path / "en"))  # English by default
    assert en.exit_code == 0 and '<html lang="en">' in (tmp_path / "en" / "report.html").read_text(encoding="utf-8")
    assert (tmp_path / "en" / "progress.csv").read_text(encoding="utf-8").startswith("annotator,")
    bad = run("--out", str(tmp_path / "fr"), "--language", "fr")
    assert bad.exit_code == 2 and "en, zh-CN" in bad.output and not (tmp_path / "fr").exists()


@pytest.mark.slow  # python -m medeval in a subprocess
def test_python_m_medeval_task_report_in_chinese(tdb, db_path, tmp_path):  # noqa: F811
    from tests.conftest import run_cli

    cid, _r = _rubric(tdb)
    ok = run_cli("task", "report", "--db", db_path, "--campaign", cid, "--out", tmp_path / "zh", "--no-pdf",
                 "--language", "zh-CN")
    assert ok.returncode == 0, ok.stderr
    assert '<html lang="zh-CN">' in (tmp_path / "zh" / "report.html").read_text(encoding="utf-8")
    bad = run_cli("task", "report", "--db", db_path, "--campaign", cid, "--out", tmp_path / "fr", "--no-pdf",
                  "--language", "fr")
    assert bad.returncode == 2 and "en, zh-CN" in bad.stderr


@pytest.mark.slow  # Chromium prints the PDF
def test_the_chinese_pdf_prints_every_character_with_a_font_that_has_it(tdb, tmp_path):  # noqa: F811
    if kit.chromium_path() is None:
        pytest.skip("no Chromium (bash scripts/install-browser.sh)")
    cid, _r = _rubric(tdb)
    paths = tr.write_report(_build(tdb, cid, "zh-CN"), tmp_path / "zh", pdf=True, language="zh-CN")
    text = pdf_support.text(paths["pdf"])
    assert "任务报告" in text and "临床医生间的一致性" in text
    missing, families = pdf_support.uncovered(paths["pdf"], kit.FONTS)
    assert "Noto Sans CJK SC" in families and pdf_support.embedded_fonts(paths["pdf"])
    assert not missing, sorted(missing)


@pytest.mark.slow  # AppTest runs the whole page
def test_the_task_results_page_makes_the_report_in_the_researchers_language(tdb, db_path, monkeypatch):  # noqa: F811
    import io
    import zipfile

    from medeval.accounts.policy import local_actor
    from medeval.accounts import auth
    from tests.test_leaderboard_report import deferred_downloads

    cid, _r = _rubric(tdb)
    auth.set_language(tdb, "res", "zh-CN", actor=local_actor())
    dl = deferred_downloads("app_pages/task_results.py", db_path, "res", monkeypatch,
                            choose=[("task_results_campaign", cid)])
    page = dl[i18n.translate_in("zh-CN", "Report (HTML)")]()  # made on click, outside the page's run
    assert '<html lang="zh-CN">' in page and "<h2>方法</h2>" in page and "临床医生间的一致性" in page
    z = zipfile.ZipFile(io.BytesIO(dl[i18n.translate_in("zh-CN", "Report (zip: HTML, PDF, …)")]()))
    assert '<html lang="zh-CN">' in z.read("report.html").decode("utf-8")
    assert z.read("progress.csv").decode("utf-8").startswith("标注者,")
    results = json.loads(dl[i18n.translate_in("zh-CN", "Results (JSON)")]())  # a data file: English
    assert results["sections"][0]["title"] == "Ratings per model"
