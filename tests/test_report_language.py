"""The leaderboard report in its reader's language: ``write_report(..., language=)`` and ``report-leaderboard
--language``; the HTML, its figures, the methods paragraph, the notes and the CSV headers in zh-CN; English by default
and unchanged (tests/test_leaderboard_report.py holds the English report's contents)."""

from __future__ import annotations

import csv
import html
import json
import re

import pytest
from click.testing import CliRunner

from medeval.cli import main
from medeval.core import i18n
from medeval.engine import thresholds as th
from medeval.engine.scoring import severity_ranges_text
from medeval.reports import html_kit as kit
from medeval.reports import leaderboard as lb
from medeval.reports import leaderboard_report as lr
from medeval.reports import scorer_notes
from medeval.store.db import connect
from tests.conftest import invoke
from tests.i18n_support import data_words, english_words
from tests.test_leaderboard_report import lb_db, strings  # noqa: F401  (fixture: two models graded under v1 and v2)

# names and abbreviations a Chinese report keeps: the test's own, beside tests.i18n_support.KEPT
KEPT_HERE = {"Welch", "v", "n", "t", "p"}
NUMBER_CELLS = {"n", "t", "p", "p < 0.05"}  # CSV heads that are symbols in every language


def _visible(page: str) -> str:
    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _has_chinese(text: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", text))


def _outside_text(db_path) -> list[str]:
    """Sentences the report quotes from modules that are not the report's own, in the current language: the
    tokenizer's description (``medeval.engine.tokenize.describe``) and the Severity Level ranges note
    (``medeval.engine.scoring.severity_ranges_text``). Left out of the check while they are English only."""
    with connect(db_path) as db:
        tokenizers = [s for (s,) in db.conn.execute(
            "SELECT DISTINCT scorer FROM scores WHERE metric IN ('bleu1', 'rouge1')")]
        return [severity_ranges_text(db).strip()] + [scorer_notes.tokenizer_text(t).rstrip(". ") for t in tokenizers]


def _build(db_path, lang: str, version: int, compare: int | None) -> dict:
    with i18n.language(lang), connect(db_path) as db:
        return lr.build(db, version, compare=compare)


def _header(path) -> list[str]:
    with open(path, encoding="utf-8", newline="") as f:
        return next(csv.reader(f))


@pytest.mark.parametrize("version,compare", [(2, 1), (1, 2)])
def test_the_leaderboard_report_in_chinese_has_no_english_interface_words(lb_db, tmp_path, version,  # noqa: F811
                                                                          compare):
    data = _build(lb_db, "zh-CN", version, compare)
    paths = lr.write_report(data, tmp_path / "zh", pdf=False, language="zh-CN")
    page = paths["html"].read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page
    assert "排行榜报告" in page and "<h2>方法</h2>" in page and "阈值集" in page
    with i18n.language("zh-CN"):
        methods = lr.methods_paragraph(data)
        outside = _outside_text(lb_db)
    assert _has_chinese(methods) and "完全错误（CW）" in methods and "知识库" in methods, methods[:200]
    assert html.escape(methods) in page
    text = _visible(page)
    for quoted in outside:  # (their words belong to other modules; see _outside_text)
        text = text.replace(quoted, " ")
    left = english_words([text], data_words(lb_db) | KEPT_HERE)
    assert not left, sorted(left)
    # the notes and the t-tests' reasons are built in the reader's language (build() ran under zh-CN)
    assert all(_has_chinese(n) for n in data["report"]["notes"])
    assert any(t.get("undefined_reason") == "有一方的得分少于 2 个" for t in data["report"]["ttests"])
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["report"]["notes"] == data["report"]["notes"]


def test_the_figures_name_the_tiers_in_the_readers_language(lb_db):  # noqa: F811
    data = _build(lb_db, "zh-CN", 2, 1)
    with i18n.language("zh-CN"):
        figs = dict(lr.figures(data))
    shares = figs["shares-averaged"]
    assert [t.name for t in shares.data] == ["完全错误", "部分正确", "基本正确"]
    assert shares.layout.title.text == "等级占比（指标：各指标平均；阈值集 v2）"
    assert figs["aspects"].layout.title.text.startswith("各方面总分")
    texts = [t for fig in figs.values() for t in strings(fig.to_dict())]
    assert not any(w in t for t in texts for w in ("Completely Wrong", "Tier shares", "Total score", "total"))
    # the same figures in English, as before
    en = dict(lr.figures(_build(lb_db, "en", 2, 1)))
    assert [t.name for t in en["shares-averaged"].data] == list(lb.TIER_LABELS)
    assert en["aspects"].layout.title.text == "Total score per aspect (0-10)"


def test_the_csv_headers_are_chinese_where_listed_and_the_identifiers_in_english(lb_db, tmp_path):  # noqa: F811
    zh = lr.write_report(_build(lb_db, "zh-CN", 2, 1), tmp_path / "zh", pdf=False, language="zh-CN")
    en = lr.write_report(_build(lb_db, "en", 2, 1), tmp_path / "en", pdf=False)
    assert set(zh) == set(en)
    for name in (n for n in en if n.endswith("_csv")):
        keys, heads = _header(en[name]), _header(zh[name])
        assert len(keys) == len(heads), name
        with i18n.language("zh-CN"):
            assert heads == [kit.csv_header(k) for k in keys], name
        for key, head in zip(keys, heads):
            if key in kit.CSV_HEADERS and key not in NUMBER_CELLS:
                assert _has_chinese(head), (name, key, head)
    assert _header(zh["leaderboard_averaged_csv"])[:4] == ["模型", "类型", "基座模型", "完全错误"]
    assert _header(en["leaderboard_averaged_csv"])[:4] == ["model", "kind", "backbone", "completely_wrong"]
    # the cells stay as stored (identifiers and numbers), whatever the language of the heads
    with open(zh["report_csv"], encoding="utf-8") as f, open(en["report_csv"], encoding="utf-8") as g:
        assert f.read().splitlines()[1:] == g.read().splitlines()[1:]


def test_english_stays_the_default_and_as_before(lb_db, tmp_path):  # noqa: F811
    data = _build(lb_db, "en", 2, 1)
    paths = lr.write_report(data, tmp_path / "en", pdf=False)
    page = paths["html"].read_text(encoding="utf-8")
    assert '<html lang="en">' in page and "<h2>Methods</h2>" in page
    assert "Leaderboard report: threshold set v2 (strict)" in page and "Compared with threshold set v1" in page
    assert lr.methods_paragraph(data).startswith("16 graded responses of 2 models were scored against")
    assert "calibrated by clinicians in campaign #7 (calibration), 30 items graded by 3 annotators" in page
    assert not _has_chinese(lr.methods_paragraph(data))
    for word in ("排行榜", "阈值", "完全错误", "方法"):
        assert word not in page
    assert data["report"]["notes"][0].startswith("Severity Level is scored by exact match")


def test_the_language_is_the_callers_unless_named(lb_db, tmp_path):  # noqa: F811
    data = _build(lb_db, "zh-CN", 2, None)
    with i18n.language("zh-CN"):  # None: the current language (the web app: the researcher's)
        page = lr.write_report(data, tmp_path / "a", pdf=False)["html"].read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page
    with i18n.language("zh-CN"):  # named: that language, whatever the current one
        page = lr.write_report(data, tmp_path / "b", pdf=False, language="en")["html"].read_text(encoding="utf-8")
    assert '<html lang="en">' in page and "<h2>Methods</h2>" in page
    with pytest.raises(ValueError, match="en"):
        lr.write_report(data, tmp_path / "c", pdf=False, language="fr")


def test_the_words_the_leaderboard_page_shares_follow_the_language(lb_db):  # noqa: F811
    with connect(lb_db) as db:
        other = th.store(db, th.ThresholdSet(name="other tokenizer", cutoffs=dict(th.TABLE12.cutoffs),
                                             tokenizer="word-v9"), created_by="test")
        ts = th.load(db, other)
        with i18n.language("zh-CN"):
            names = lb.diff_names(2, 1)
            why = lb.why_not_graded(db, ts, "bleu1")
            cosine = lb.why_not_graded(db, ts, "cosine")
            with pytest.raises(Exception, match="指标"):
                lb.rows({"models": [], "aspects": []}, metric="nope")
        en_why = lb.why_not_graded(db, ts, "bleu1")
    assert names["rank"] == "v2 排名" and names["total_before"] == "v1 总分" and names["rank_change"] == "排名变化"
    assert why.startswith(f"v{other} 的BLEU-1阈值是针对 分词器 word-v9 校准的；而这些BLEU-1得分来自 分词器 "), why
    assert cosine == "此数据库中没有余弦相似度得分"
    assert en_why.startswith(f"v{other}'s BLEU-1 cut-offs are for the tokenizer word-v9; these BLEU-1 scores come from "
                             "the tokenizer ")
    assert lb.diff_names(2, 1)["rank"] == "rank v2" and lr.metric_label("averaged") == "averaged over the metrics"
    with i18n.language("zh-CN"):
        assert lr.metric_label("averaged") == "各指标平均"


def test_a_provisional_sets_stored_warning_is_read_in_the_readers_language(lb_db, tmp_path):  # noqa: F811
    with connect(lb_db) as db:
        v = th.adopt(db, 1, "some-embedding-model", created_by="test")
    data = _build(lb_db, "zh-CN", v, None)
    with i18n.language("zh-CN"):
        prov = lr.provenance_text(data["threshold_set"])
        rows = lr.provenance_rows(data["threshold_set"]["provenance"])
    assert prov.startswith("临时：余弦相似度阈值是针对 moka-ai/m3e-base 校准的，而非 some-embedding-model")
    assert "（沿用自 MedDisKEval Table 12，v1）" in prov
    assert {r["field"] for r in rows} == {"沿用自版本", "沿用自", "已校准", "警告"}
    page = lr.write_report(data, tmp_path / "zh", pdf=False, language="zh-CN")["html"].read_text(encoding="utf-8")
    assert "class='warn'>这些阈值是临时的" in page
    # in English the warning reads as stored
    assert lr.provenance_text(data["threshold_set"]).startswith(
        "provisional: cosine cut-offs were calibrated for moka-ai/m3e-base, not for some-embedding-model; calibrate")


def test_cli_report_leaderboard_takes_the_language(lb_db, tmp_path):  # noqa: F811
    out = invoke("report-leaderboard", "--db", lb_db, "--version", "2", "--compare", "1", "--out", tmp_path / "zh",
                 "--no-pdf", "--language", "zh-CN").output
    written = dict(line.split("\t") for line in out.splitlines())
    page = (tmp_path / "zh" / "report.html").read_text(encoding="utf-8")
    assert {"html", "json", "compare_csv"} <= set(written) and "pdf" not in written
    assert '<html lang="zh-CN">' in page and "排行榜报告：阈值集 v2 (strict)" in page and "与阈值集 v1" in page
    assert _header(tmp_path / "zh" / "leaderboard-averaged.csv")[0] == "模型"
    invoke("report-leaderboard", "--db", lb_db, "--version", "2", "--out", tmp_path / "en", "--no-pdf")
    assert '<html lang="en">' in (tmp_path / "en" / "report.html").read_text(encoding="utf-8")  # the default
    bad = CliRunner().invoke(main, ["report-leaderboard", "--db", str(lb_db), "--out", str(tmp_path / "fr"),
                                    "--no-pdf", "--language", "fr"])
    assert bad.exit_code == 2 and "en, zh-CN" in bad.output, bad.output
    assert not (tmp_path / "fr").exists()


def test_the_markdown_model_report_takes_the_language(lb_db):  # noqa: F811
    """``medeval report --format md --language zh-CN``: headings, table heads and notes in Chinese; the model,
    aspect and metric names are data; the figures are the English report's."""
    zh = invoke("report", "--db", lb_db, "--version", "2", "--format", "md", "--language", "zh-CN").output
    en = invoke("report", "--db", lb_db, "--version", "2", "--format", "md").output
    assert en.startswith("# Model report") and "## Notes" in en and "## 说明" not in en
    assert zh.startswith("# 模型报告") and "## 说明" in zh, zh[:300]
    with connect(lb_db) as db:
        data = {m for (m,) in db.conn.execute("SELECT DISTINCT name FROM models")} | \
            {a for (a,) in db.conn.execute("SELECT DISTINCT aspect FROM kb_entries")}
        data |= {w for n in scorer_notes.ungraded_notes(scorer_notes.scorers(db, th.load(db, 2))) for w in n.split()}
    with i18n.language("zh-CN"):
        outside = _outside_text(lb_db)
    shown = zh
    for sentence in outside:
        shown = shown.replace(sentence, " ")
    words = english_words([shown], data | data_words(lb_db))
    assert not words - KEPT_HERE - {"CW", "PC", "BC"}, words
    numbers = re.compile(r"\d+(?:\.\d+)?%?")
    assert numbers.findall(zh.split("## ")[2]) == numbers.findall(en.split("## ")[2])  # the same figures per metric


@pytest.mark.slow  # python -m medeval in a subprocess
def test_python_m_medeval_report_leaderboard_in_chinese(lb_db, tmp_path):  # noqa: F811
    from tests.conftest import run_cli

    ok = run_cli("report-leaderboard", "--db", lb_db, "--version", "1", "--out", tmp_path / "zh", "--no-pdf",
                 "--language", "zh-CN")
    assert ok.returncode == 0, ok.stderr
    page = (tmp_path / "zh" / "report.html").read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in page and "排行榜报告" in page
    bad = run_cli("report-leaderboard", "--db", lb_db, "--out", tmp_path / "fr", "--no-pdf", "--language", "fr")
    assert bad.returncode == 2 and "en, zh-CN" in bad.stderr


@pytest.mark.slow  # Chromium prints the PDF
def test_the_chinese_pdf_prints_every_character_with_a_font_that_has_it(lb_db, tmp_path):  # noqa: F811
    from tests import pdf_support

    if kit.chromium_path() is None:
        pytest.skip("no Chromium (bash scripts/install-browser.sh)")
    paths = lr.write_report(_build(lb_db, "zh-CN", 2, 1), tmp_path / "zh", pdf=True, language="zh-CN")
    text = pdf_support.text(paths["pdf"])
    assert "排行榜报告" in text and "完全错误" in text
    missing, _families = pdf_support.uncovered(paths["pdf"], kit.FONTS)
    assert not missing, sorted(missing)


@pytest.mark.slow  # AppTest runs the whole page
def test_the_leaderboard_page_makes_its_report_in_the_researchers_language(lb_db, monkeypatch):  # noqa: F811
    from medeval.accounts import auth
    from tests.test_leaderboard_report import deferred_downloads

    with connect(lb_db) as db:
        auth.add_user(db, "res", "a-long-password", "researcher", language="zh-CN")
    dl = deferred_downloads("app_pages/leaderboard.py", lb_db, "res", monkeypatch,
                            choose=[("lb_version", 1), ("lb_other", 2)])
    page = dl[i18n.translate_in("zh-CN", "Report (HTML)")]()  # made on click, outside the page's run
    assert '<html lang="zh-CN">' in page and re.search(r"<h2>[^<]*[\u4e00-\u9fff]", page)
