"""Issue 22 §3, the smaller items in the library: campaign names are unique, task CSV times are ISO 8601 with a time
zone, an empty flags.csv has its header, a task's item count is bounded by what exists."""

from __future__ import annotations

import csv
import io
import re

import pytest

from medeval.accounts.auth import add_user, get_user
from medeval.annotation import campaigns as cp
from medeval.annotation import tasks
from medeval.core.errors import MedevalError
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports import html_kit
from tests.test_tasks import tdb  # noqa: F401  (the fixture)

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")


def test_a_tier_campaign_name_is_refused_when_taken_naming_the_campaign(db, small_files):
    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    for n in ("doc1", "doc2"):
        add_user(db, n, "a-long-password", "annotator")
    first = cp.create_random_campaign(db, "Round 1", 4, ["doc1", "doc2"], k=1, seed=0, actor=None)
    before = db.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0]
    for again in ("Round 1", "  round 1 ", "ROUND 1"):  # case and outer spaces aside
        with pytest.raises(MedevalError, match=rf"a campaign named 'Round 1' already exists \(#{first}\)"):
            cp.create_random_campaign(db, again, 4, ["doc1", "doc2"], k=1, seed=1, actor=None)
    with pytest.raises(MedevalError, match="already exists"):
        cp.create_bucket_campaign(db, "Round 1", cp.BucketConfig(("rouge1",), ("enumerated",), 0.1, 2, 1, 0),
                                  ["doc1"], actor=None)
    assert db.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0] == before  # nothing stored
    assert cp.create_random_campaign(db, "Round 2", 4, ["doc1", "doc2"], k=1, seed=1, actor=None) > first


def test_the_campaign_cli_says_the_name_is_taken(db, db_path, small_files):
    from click.testing import CliRunner

    from medeval.cli import main

    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    add_user(db, "doc1", "a-long-password", "annotator")
    first = cp.create_random_campaign(db, "Round 1", 2, ["doc1"], k=1, seed=0, actor=None)
    out = CliRunner().invoke(main, ["campaign", "create", "--name", "round 1", "--annotators", "doc1", "--k", "1",
                                    "--metrics", "rouge1", "--aspect-types", "enumerated", "--db", str(db_path)])
    assert out.exit_code == 1 and f"Error: a campaign named 'Round 1' already exists (#{first})" in out.output, \
        out.output


def test_a_task_campaign_name_is_refused_when_any_campaign_has_it(tdb):  # noqa: F811
    res = get_user(tdb, "res")
    cid = tasks.create_campaign(tdb, "rubric", "Judges A", ["doc1"], k=1, config={"dataset": "clin"}, actor=res)
    with pytest.raises(MedevalError, match=rf"a campaign named 'Judges A' already exists \(#{cid}\)"):
        tasks.create_campaign(tdb, "preference", "judges a", ["doc1"], k=1, config={"dataset": "clin"}, actor=res)
    assert [c["name"] for c in tasks.task_campaigns(tdb, actor=res)] == ["Judges A"]


def test_the_cli_says_the_name_is_taken(tdb, db_path):  # noqa: F811
    from click.testing import CliRunner

    from medeval.cli import main

    tasks.create_campaign(tdb, "rubric", "Same", ["doc1"], k=1, config={"dataset": "clin"}, actor=None)
    out = CliRunner().invoke(main, ["task", "create", "--type", "rubric", "--name", "Same", "--annotators", "doc1", "--k", "1",
                                    "--set", "dataset=clin", "--db", str(db_path)])
    assert out.exit_code == 1 and "a campaign named 'Same' already exists" in out.output, out.output


def test_questions_beyond_what_exists_are_refused(tdb):  # noqa: F811
    with pytest.raises(MedevalError, match=r"Questions \(0 = all\): 99,999 asked for, but this data set has 3 .*"
                                           r"choose at most 3 \(0 takes all\)"):
        tasks.preview(tdb, "rubric", {"dataset": "clin", "max_items": 99_999}, actor=None)
    with pytest.raises(MedevalError, match=r"Comparisons \(0 = all\): 10 asked for.*choose at most 9"):
        tasks.preview(tdb, "preference", {"dataset": "clin", "compare": "answers", "max_items": 10}, actor=None)
    assert tasks.preview(tdb, "rubric", {"dataset": "clin", "max_items": 2}, actor=None)["items"] == 2
    assert tasks.preview(tdb, "rubric", {"dataset": "clin", "max_items": 0}, actor=None)["items"] == 3


def test_task_answers_csv_and_flags_have_iso_times_with_a_zone(tdb, tmp_path):  # noqa: F811
    from medeval.reports import task_report

    doc1, res = get_user(tdb, "doc1"), get_user(tdb, "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=res)
    v = tasks.task_state(tdb, doc1, cid).item
    tasks.submit_answer(tdb, doc1, v.item_id, v.pending.id, 3, client_token="t1")
    tasks.flag_item(tdb, doc1, v.item_id, "old reference", client_token="f1")
    rows = list(csv.DictReader(io.StringIO(tasks.answers_csv(tasks.answers(tdb, cid, actor=res)))))
    assert rows and all(ISO.match(r["at"]) for r in rows), rows
    paths = task_report.write_report(tasks.results(tdb, cid, actor=res), tmp_path / "rep", pdf=False)
    flags = list(csv.DictReader(paths["flags_csv"].open(encoding="utf-8")))
    assert [f["note"] for f in flags] == ["old reference"] and ISO.match(flags[0]["at"]), flags


def test_an_empty_flags_csv_has_its_header(tdb, tmp_path):  # noqa: F811
    from medeval.reports import task_report

    res = get_user(tdb, "res")
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, seed=1, config={"dataset": "clin"}, actor=res)
    paths = task_report.write_report(tasks.results(tdb, cid, actor=res), tmp_path / "rep", pdf=False)
    assert paths["flags_csv"].read_text(encoding="utf-8").splitlines() == ["item,source,annotator,note,at"]
    p = tmp_path / "none.csv"
    html_kit.write_csv(p, [], columns=["a", "b"])
    assert p.read_text(encoding="utf-8").strip() == "a,b"
    html_kit.write_csv(p, [{"b": 1, "c": 2}], columns=["a", "b"])  # the declared columns first, then the rest
    assert p.read_text(encoding="utf-8").splitlines() == ["a,b,c", ",1,2"]


def test_report_cells_break_between_words_and_only_long_tokens_inside():
    t = html_kit.table([{"aspect": "Differential Symptoms", "zh": "转移性右下腹痛；麦氏点压痛", "n": 3,
                         "id": "https://example.org/a/very/long/identifier/0123456789"}])
    assert '<td>Differential Symptoms</td>' in t and '<td>转移性右下腹痛；麦氏点压痛</td>' in t
    assert '<td class="num">3</td>' in t and '<td class="long">https://example.org/' in t
    assert "overflow-wrap:anywhere" not in html_kit.CSS.replace("td.long{overflow-wrap:anywhere}", "")


WORD_LINES_JS = """(word) => { const out = [];
  for (const td of document.querySelectorAll('td')) {
    const i = td.textContent.indexOf(word); if (i < 0) continue;
    const r = document.createRange(); r.setStart(td.firstChild, i); r.setEnd(td.firstChild, i + word.length);
    out.push(new Set([...r.getClientRects()].map(x => Math.round(x.top))).size); }
  return out; }"""


@pytest.mark.browser
@pytest.mark.slow
def test_a_printed_report_table_keeps_words_whole(tmp_path):
    """Laid out as Chromium prints it (A4 text width, print media): English words stay whole (a line may end at a
    hyphen), Chinese wraps between characters, a long URL still fits its column."""
    from tests import browser_support as bs

    if not __import__("pathlib").Path(bs.CHROMIUM).exists():
        pytest.skip("Chromium is missing")
    from playwright.sync_api import sync_playwright

    rows = [{"model": "DemoMed-7B-Instruct", "aspect": "Differential Symptoms",
             "note": "Basically Correct answers outnumber Partially Correct ones; the medical fine-tune improves "
                     "declarative aspects considerably",
             "zh": "转移性右下腹痛；麦氏点压痛；反跳痛；白细胞升高伴中性粒细胞比例增高" * 2,
             "id": "https://example.org/very/long/identifier/without/any/spaces/at/all/0123456789", "share": "23.6%"}]
    p = tmp_path / "r.html"
    p.write_text(html_kit.page("words", html_kit.table(rows)), encoding="utf-8")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=bs.CHROMIUM)
        try:
            page = b.new_page(viewport={"width": 718, "height": 600})  # A4 less 2 x 14 mm margins, at 96 dpi
            page.emulate_media(media="print")
            page.goto(p.as_uri())
            for word in ("DemoMed", "Instruct", "Differential", "Symptoms", "considerably", "23.6%"):
                assert page.evaluate(WORD_LINES_JS, word) == [1], word  # on one line
            assert page.evaluate(WORD_LINES_JS, "转移性右下腹痛；麦氏点压痛；反跳痛")[0] > 1  # Chinese wraps
            assert page.evaluate("() => document.querySelector('table').getBoundingClientRect().right") <= 718
        finally:
            b.close()
