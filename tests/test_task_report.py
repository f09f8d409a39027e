"""The task campaign report (HTML, PDF, JSON, CSV): a methods paragraph with the campaign's own numbers, one part per
results section, figures, offline, hostile names escaped; the shared html_kit; ``task report`` on the command line."""

import html
import json
import re
import shutil

import pytest
from click.testing import CliRunner

from medeval.accounts.auth import add_user, get_user
from medeval.annotation import cases as cs
from medeval.annotation import tasks
from medeval.cli import main
from medeval.reports import html_kit as kit
from medeval.reports import task_report as tr
from tests.conftest import db_dump, invoke, write
from tests.test_tasks import answer_all

HOSTILE = "<img src=x onerror=alert(1)>"
ESCAPED = html.escape(HOSTILE)

CASES = [{"id": "c1", "title": "胸痛", "description": "男，58岁，胸痛2小时。",
          "QA_pairs": [{"question": "最可能的诊断？", "answer": "急性心肌梗死"},
                       {"question": "首选检查？", "answer": "心电图"}]},
         {"id": "c2", "title": "发热", "description": "女，25岁，发热咳嗽3天。",
          "QA_pairs": [{"question": "诊断？", "answer": "社区获得性肺炎"}]}]
MODELS = ("alpha", HOSTILE, "gamma")
RESPONSES = [(c, q, m, f"{m} 的回答 {c}{q}") for c, q in (("c1", 1), ("c1", 2), ("c2", 1)) for m in MODELS]
# judge-x's scores per question, in the order of MODELS
JUDGE_SCORES = {("c1", 1): (5, 1, 4), ("c1", 2): (4, 2, 5), ("c2", 1): (5, 2, 4)}
FACT = [{"id": "1", "type": "Disease-Symptom", "label": label, "claim": claim, "response": response, "model": model}
        for label, claim, response, model in (
            ("support", "流感可引起发热", "正确，发热常见。", "m1"),
            ("refute", "流感不会引起发热", "错误，发热常见。", "m1"),
            ("support", "流感可引起发热", "Correct. Fever.", HOSTILE),
            ("refute", "流感不会引起发热", "Incorrect: fever.", HOSTILE))]


@pytest.fixture
def tdb(db, tmp_path):
    """Two cases (3 questions x 3 models, one named like an HTML injection), a judge, fact-check answers, users."""
    c = write(tmp_path / "cases.json", json.dumps(CASES, ensure_ascii=False))
    r = write(tmp_path / "resp.jsonl", "\n".join(json.dumps({"case": a, "question": b, "model": m, "response": t},
                                                            ensure_ascii=False) for a, b, m, t in RESPONSES))
    j = write(tmp_path / "judge.jsonl", "\n".join(json.dumps(
        {"case": a, "question": b, "judge": "judge-x", "rationale": f"Scores {s}.", "scores": dict(zip(MODELS, s))},
        ensure_ascii=False) for (a, b), s in
        JUDGE_SCORES.items()))
    cs.import_cases(db, "clin", cases=c, responses=r, judgements=j)
    cs.import_fact_claims(db, "fc", write(tmp_path / "fc.jsonl", "\n".join(json.dumps(x, ensure_ascii=False)
                                                                            for x in FACT)))
    for name, role in (("doc1", "annotator"), ("doc2", "annotator"), ("res", "researcher")):
        add_user(db, name, "a-long-password", role)
    return db


def _rubric(db, *, name="rubric report", criteria=None):
    """A rubric campaign with judge-x, both clinicians answering: doc1 gives the judge's score, doc2 one less."""
    from medeval.annotation.tasks.rubric import response_of

    d1, d2, res = (get_user(db, n) for n in ("doc1", "doc2", "res"))
    cfg = {"dataset": "clin", "judge": "judge-x"} | ({"criteria": criteria} if criteria else {})
    cid = tasks.create_campaign(db, "rubric", name, ["doc1", "doc2"], k=2, seed=11, config=cfg, actor=res)

    def pick(who, minus):
        def f(view, q):
            if q.part == 2:
                return "4"
            p = json.loads(db.conn.execute("SELECT payload FROM task_items WHERE id = ?",
                                           (view.item_id,)).fetchone()[0])
            lay = json.loads(db.conn.execute(
                "SELECT a.layout FROM task_assignments a JOIN users u ON u.id = a.user_id WHERE a.item_id = ? AND "
                "u.username = ?", (view.item_id, who)).fetchone()[0])
            return str(max(1, int(p["judge"]["scores"][response_of(p, lay, q.id)["model"]]) - minus))
        return f

    answer_all(db, d1, cid, pick("doc1", 0))
    answer_all(db, d2, cid, pick("doc2", 1 if criteria is None else 0))
    return cid, tasks.results(db, cid, actor=res)


def _offline(page: str) -> None:
    assert "<script src=" not in page and not re.search(r"src=[\"']https?://", page)
    assert page.count("plotly.js (basic - minified) v") == 1  # inlined exactly once, before the first figure


def test_rubric_report_states_the_campaigns_numbers_and_every_section(tdb):
    cid, r = _rubric(tdb)
    page = tr.render_html(r, computed_at="2030-01-01T00:00:00Z")
    methods = tr.methods_paragraph(r)
    assert html.escape(methods) in page
    per_model = next(s for s in r["sections"] if s["title"] == "Ratings per model")["tables"]["per model"]
    for row in per_model:  # every model's mean rating, as computed by the task type
        assert f"{row['model']} {row['mean']:.2f}" in methods
    assert f"{sum(x['ratings'] for x in per_model)} ratings of 3 models" in methods
    agree = next(s for s in r["sections"] if s["title"] == "Agreement among clinicians")["tables"]["agreement"]
    alpha = next(a for a in agree if a["rated"] == "mean over criteria" and "alpha" in a["statistic"])
    assert f"Krippendorff's alpha (interval) (mean over criteria) = {alpha['value']:.3f}" in methods
    assert f"95% CI {alpha['ci95'][0]:.3f} to {alpha['ci95'][1]:.3f}" in methods
    judge = next(s for s in r["sections"] if s["title"] == "The judge against the clinicians")
    assert f"Spearman (per response) = {judge['numbers']['spearman']:.3f}" in methods
    assert f"Accuracy_2-tuple = {judge['numbers']['accuracy_2tuple']:.3f}" in methods
    assert "3 case questions" in methods and "k = 2 of 2 annotators" in methods and "seed 11" in methods
    assert "Relevancy, Knowledge Correctness, Fluency" in methods and "judge-x" in methods
    # one part per results section, each with its title; figures where the tables suit one
    assert page.count('<section class="results"') == len(r["sections"]) == 4
    for s in r["sections"]:
        assert f"<h2>{html.escape(s['title'])}</h2>" in page
    for name in ("per model", "agreement", "model rankings", "mean rating"):
        assert f'data-figure="{name}"' in page
    # ratings, agreement; rankings; the judge's ratings and their agreement
    assert page.count('class="plotly-graph-div"') == sum(len(tr.section_figures(s)) for s in r["sections"]) == 5
    _offline(page)
    assert "2030-01-01T00:00:00Z" in page and f"Campaign #{cid}" in page


def test_preference_report_gives_ties_shares_and_position_bias(tdb):
    d1, d2, res = (get_user(tdb, n) for n in ("doc1", "doc2", "res"))
    cid = tasks.create_campaign(tdb, "preference", "pref", ["doc1", "doc2"], k=2, seed=5,
                                config={"dataset": "clin", "compare": "answers"}, actor=res)
    answer_all(tdb, d1, cid, lambda v, q: "left")
    answer_all(tdb, d2, cid, lambda v, q: "tie" if q.id == "fluency" else "right")
    r = tasks.results(tdb, cid, actor=res)
    methods = tr.methods_paragraph(r)
    assert "double-blind" in methods and "randomised per annotator" in methods and "a tie counts half" in methods
    for sec in r["sections"]:
        checks = sec["tables"]["checks"]
        ties = sec["numbers"]["n_choices"] - checks[0]["n"]
        assert f"{sec['title'].removeprefix('Preference: ')}: {sec['numbers']['n_choices']} choices, {ties} ties" \
            in methods
        for row in sec["tables"]["preference share"]:
            assert f"{row['source']} {row['share']:.3f}" in methods
        assert f"(binomial p = {checks[0]['p (binomial, vs 1/2)']:.3f})" in methods
    fluency = next(s for s in r["sections"] if s["title"] == "Preference: Fluency")
    assert fluency["numbers"]["n_choices"] - fluency["tables"]["checks"][0]["n"] == 9  # doc2 tied all 9
    page = tr.render_html(r)
    assert page.count('data-figure="preference share"') == 3 == len(r["sections"])
    _offline(page)


def test_accr_report_gives_accr_per_model(tdb):
    d1, d2, res = (get_user(tdb, n) for n in ("doc1", "doc2", "res"))
    cid = tasks.create_campaign(tdb, "accr", "accr", ["doc1", "doc2"], k=2, seed=0, config={"dataset": "fc"},
                                actor=res)
    answer_all(tdb, d1, cid, lambda v, q: "yes")
    answer_all(tdb, d2, cid, lambda v, q: "no" if "fever" in " ".join(b.text for b in v.blocks).lower() else "yes")
    r = tasks.results(tdb, cid, actor=res)
    methods = tr.methods_paragraph(r)
    assert "Accuracy Reliability (AccR; SDAK" in methods and "reason supports its verdict" in methods
    assert "per item (factual + counterfactual claim)" in methods and "sampled whole" in methods
    rows = r["sections"][0]["tables"]["AccR"]
    assert {x["model"]: x["AccR (ratings)"] for x in rows} == {"m1": 1.0, HOSTILE: 0.5}
    for x in rows:
        assert f"{x['model']}: AccR {x['AccR (ratings)']:.3f} over {x['ratings']} ratings" in methods
    assert "m1: AccR 1.000 over 2 ratings, 1.000 by majority over the 1 of 1 items that have one (95% CI 0.207" \
        in methods
    assert "undefined by majority (none of the 1 items checked has one)" in methods  # the hostile model: a tie
    page = tr.render_html(r)
    assert 'data-figure="AccR"' in page and html.escape(methods) in page
    _offline(page)


def test_undefined_statistics_are_said_so_with_the_reason(tdb):
    res, d1 = get_user(tdb, "res"), get_user(tdb, "doc1")
    empty = tasks.create_campaign(tdb, "preference", "nobody yet", ["doc1"], k=1, seed=1,
                                  config={"dataset": "clin", "compare": "answers"}, actor=res)
    r = tasks.results(tdb, empty, actor=res)
    assert r["sections"] == []
    assert "No choices have been made yet, so every figure is undefined" in tr.methods_paragraph(r)
    assert "No results yet" in tr.render_html(r)
    rubric = tasks.create_campaign(tdb, "rubric", "not rated yet", ["doc1"], k=1, seed=1,
                                   config={"dataset": "clin", "judge": "judge-x"}, actor=res)
    r = tasks.results(tdb, rubric, actor=res)
    methods = tr.methods_paragraph(r)
    assert "0 ratings of 0 models' responses" in methods and "Agreement is undefined" in methods
    assert "nothing yet" in tr.render_html(r)
    generic = dict(r, campaign=dict(r["campaign"], kind="some-new-type"))  # a type the report has no words for
    assert tr.methods_paragraph(generic).startswith("3 items from the data set clin were each assigned to k = 1")
    one = tasks.create_campaign(tdb, "accr", "one clinician", ["doc1"], k=1, seed=1, config={"dataset": "fc"},
                                actor=res)
    answer_all(tdb, d1, one, lambda v, q: "yes")
    r = tasks.results(tdb, one, actor=res)
    alpha = r["sections"][1]["tables"]["agreement"][0]
    assert alpha["value"] is None and alpha["undefined_reason"]
    methods = tr.methods_paragraph(r)
    assert f"Krippendorff's alpha (nominal) (reason supports verdict) undefined ({alpha['undefined_reason']})" \
        in methods
    page = tr.render_html(r)
    assert html.escape(alpha["undefined_reason"]) in page and "undefined because" in page


def test_hostile_names_are_escaped_everywhere(tdb):
    crit = [{"key": "safe", "name": HOSTILE, "question": "Safe?", "anchors": ["a", "b", "c", "d", "e"]}]
    cid, _ = _rubric(tdb, name=HOSTILE, criteria=crit)
    tasks.flag_item(tdb, get_user(tdb, "doc1"), tdb.conn.execute(
        "SELECT min(id) FROM task_items WHERE campaign_id = ?", (cid,)).fetchone()[0], HOSTILE, client_token="f1")
    r = tasks.results(tdb, cid, actor=get_user(tdb, "res"))
    assert r["campaign"]["name"] == HOSTILE and r["flags"][0]["note"] == HOSTILE
    assert any(row["model"] == HOSTILE for row in r["sections"][0]["tables"]["per model"])
    page = tr.render_html(r)
    assert HOSTILE not in page  # campaign, model, criterion names and the note: never raw, not even in a figure
    assert f"<title>Task report: {ESCAPED}</title>" in page
    assert f"<th>{ESCAPED}</th>" in page  # the criterion as a column
    assert f"<td>{ESCAPED}</td>" in page  # the model and the note as cells
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") >= 4
    # Plotly reads labels as its own mini-HTML: the figures get the names escaped too (the page's JSON hides that)
    from tests.test_leaderboard_report import strings

    texts = [t for s in r["sections"] for _, fig in tr.section_figures(s) for t in strings(fig.to_dict())]
    assert any(ESCAPED in t for t in texts) and not any(HOSTILE in t for t in texts)



def test_html_kit_escapes_tables_and_the_title():
    rows = [{HOSTILE: HOSTILE, "n": 3, "ci95": [0.1, None]}]
    t = kit.table(rows, caption=HOSTILE)
    assert HOSTILE not in t and t.count(ESCAPED) == 3
    assert '<td class="num">3</td>' in t and '<td class="num">0.100, —</td>' in t  # a list in words
    assert HOSTILE not in kit.page(HOSTILE, "<p>body</p>")
    assert kit.plain(HOSTILE) == "&lt;img src=x onerror=alert(1)&gt;"
    # words break between words (Chinese between characters); only a cell with a long token breaks inside it
    assert "word-break:normal;overflow-wrap:break-word" in kit.CSS and "td.long{overflow-wrap:anywhere}" in kit.CSS
    assert kit.short("很" * 100, 10) == "很" * 9 + "…" and kit.short(HOSTILE, 100) == kit.plain(HOSTILE)


def test_write_report_writes_the_files(tdb, tmp_path):
    _, r = _rubric(tdb)
    paths = tr.write_report(r, tmp_path / "out", pdf=False)
    assert "pdf" not in paths and all(p.exists() for p in paths.values())
    assert paths["html"].read_text(encoding="utf-8").startswith("<!doctype html>")
    assert json.loads(paths["json"].read_text(encoding="utf-8")) == json.loads(json.dumps(r, default=str))
    n_tables = sum(len(s["tables"]) for s in r["sections"])
    assert len([k for k in paths if k.startswith("section")]) == n_tables
    per_model = paths["section1_table1_csv"].read_text(encoding="utf-8").splitlines()
    assert per_model[0] == "model,Relevancy,Knowledge Correctness,Fluency,mean,ratings" and len(per_model) == 4


@pytest.mark.slow  # starts headless Chromium
def test_write_report_prints_the_pdf(tdb, tmp_path):
    if tr.chromium_path() is None:
        pytest.skip("no Chromium to print with: run `bash scripts/install-browser.sh` (apt-get install chromium)")
    _, r = _rubric(tdb)
    paths = tr.write_report(r, tmp_path / "out")
    data = paths["pdf"].read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", data)) >= 1


def test_cli_task_report_and_its_errors(tdb, db_path, tmp_path):
    cid, _ = _rubric(tdb)
    out = invoke("task", "report", "--db", db_path, "--campaign", cid, "--out", tmp_path / "r", "--no-pdf").output
    written = dict(line.split("\t") for line in out.splitlines())
    assert {"html", "json", "section1_table1_csv", "progress_csv", "flags_csv"} <= set(written)
    assert "pdf" not in written and (tmp_path / "r" / "report.html").exists()
    tdb.conn.execute("INSERT INTO campaigns (name, kind, config, report, created_by, created_at) VALUES "
                     "('tiers', 'bucket_grading', '{}', '[]', 'test', '2024-01-01')")
    tdb.conn.commit()
    grading = tdb.conn.execute("SELECT max(id) FROM campaigns").fetchone()[0]
    before = db_dump(db_path)
    for campaign, message in ((999, "Error: no campaign 999"),
                              (grading, f"Error: campaign {grading} is a bucket_grading campaign, not an annotation "
                                        "task")):
        res = CliRunner().invoke(main, ["task", "report", "--db", str(db_path), "--campaign", str(campaign),
                                        "--out", str(tmp_path / "bad"), "--no-pdf"])
        assert res.exit_code == 1 and res.output.strip() == message, res.output
    assert not (tmp_path / "bad").exists() and db_dump(db_path) == before


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_task_report_in_a_subprocess(tdb, db_path, tmp_path):
    from tests.conftest import run_cli

    cid, _ = _rubric(tdb)
    r = run_cli("task", "report", "--db", db_path, "--campaign", cid, "--out", tmp_path / "r", "--no-pdf")
    assert r.returncode == 0, r.stderr
    assert "methods" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8").lower()
    shutil.rmtree(tmp_path / "r")


@pytest.mark.slow  # AppTest runs the whole page
def test_task_results_page_offers_the_report(tdb, db_path, monkeypatch):
    import io
    import zipfile

    from tests.test_leaderboard_report import deferred_downloads

    cid, r = _rubric(tdb)
    dl = deferred_downloads("app_pages/task_results.py", db_path, "res", monkeypatch,
                            choose=[("task_results_campaign", cid)])
    page = dl["Report (HTML)"]()
    assert page.startswith("<!doctype html>") and html.escape(tr.methods_paragraph(r)[:200]) in page
    names = zipfile.ZipFile(io.BytesIO(dl["Report (zip: HTML, PDF, …)"]())).namelist()
    assert {"report.html", "results.json", "01-1-per-model.csv", "flags.csv"} <= set(names)
    assert ("report.pdf" in names) == (tr.chromium_path() is not None)


# ------------------------------------------------------------------ gold items (issue 15)


def _pref_with_gold(db, *, gold: bool):
    """A preference campaign on 3 of the 9 pairs (doc1, doc2) whose annotators answer "tie" to everything on screen.

    With ``gold``: two gold items, one expecting the tie on relevancy (everyone right), one expecting A (everyone
    wrong), a hidden share that puts both in each queue."""
    from medeval.annotation import gold as gd

    res = get_user(db, "res")
    cid = tasks.create_campaign(db, "preference", "pref with gold" if gold else "pref", ["doc1", "doc2"], k=2,
                                seed=3, config={"dataset": "clin", "compare": "answers", "max_items": 3}, actor=res)
    if gold:
        cands = gd.candidates(db, cid, actor=res)
        gd.mark_task_gold(db, cid, cands[0].source, {"relevancy": "tie"}, "both say the same", actor=res)
        gd.mark_task_gold(db, cid, cands[1].source, {"relevancy": "left"}, f"A is right {HOSTILE}", actor=res)
        gd.set_settings(db, cid, {"hidden_share": 0.5, "feedback": False}, actor=res)
    for who in ("doc1", "doc2"):
        user = get_user(db, who)
        while (v := tasks.task_state(db, user, cid).item) is not None:
            tasks.answer(db, user, cid, v.ref, v.pending.id, "tie", client_token=f"{v.ref}:{v.revision}",
                         revision=v.revision)
    return cid


def test_report_of_a_task_campaign_with_gold_items_has_the_methods_sentence_and_the_gold_table(tdb, tmp_path):
    from medeval.annotation.gold import methods_sentence

    cid = _pref_with_gold(tdb, gold=True)
    r = tr.build(tdb, cid)
    sentence = methods_sentence(tdb, cid)
    assert sentence.startswith("2 gold items") and "hidden quality checks" in sentence
    methods = tr.methods_paragraph(r)
    assert methods.endswith(sentence) and methods.startswith("3 pairwise comparisons")
    assert [(row["annotator"], row["hidden_answered"], row["hidden_correct"], row["accuracy"])
            for row in tr.gold_rows(r)] == [("doc1", 2, 1, 0.5), ("doc2", 2, 1, 0.5)]
    page = tr.render_html(r)
    assert html.escape(methods) in page and "<h2>Gold items</h2>" in page
    table = page[page.index("<h2>Gold items</h2>"):]
    assert "<th>hidden gold answered</th>" in table and "<td>doc1</td>" in table and "<td>not required</td>" in table
    assert HOSTILE not in page  # (a model is named like an HTML injection: escaped like every name)
    paths = tr.write_report(r, tmp_path / "out", pdf=False)
    gold_csv = paths["gold_csv"].read_text(encoding="utf-8").splitlines()
    assert gold_csv[0] == "annotator,qualification,hidden_answered,hidden_correct,accuracy,accuracy_by_block,flagged"
    # both below the default alert threshold (0.7): flagged
    assert gold_csv[1:] == ["doc1,not_required,2,1,0.5,[0.5],True", "doc2,not_required,2,1,0.5,[0.5],True"]
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["gold"]["accuracy"]["gold_items"] == 2
    # the gold answers count in none of the results: every real answer is a tie, and only the real items are there
    assert r["progress"]["items"] == 3
    assert all(x["share"] == 0.5 for s in r["sections"] for x in s["tables"]["preference share"])


def test_report_without_gold_items_has_neither(tdb, tmp_path):
    cid = _pref_with_gold(tdb, gold=False)
    r = tr.build(tdb, cid)
    assert r["gold"] is None
    methods = tr.methods_paragraph(r)
    assert "gold" not in methods.lower()
    page = tr.render_html(r)
    assert "<h2>Gold items</h2>" not in page and "gold item" not in page.lower()
    paths = tr.write_report(r, tmp_path / "out", pdf=False)
    assert "gold_csv" not in paths and not (tmp_path / "out" / "gold.csv").exists()
    # the results alone (no gold part) make the same report as before
    plain = tasks.results(tdb, cid, actor=None)
    assert tr.methods_paragraph(plain) == methods
