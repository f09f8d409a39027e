"""The leaderboard report of a threshold-set version (HTML, PDF, JSON, CSV): Figure 5, Tables 4 and 5, Welch's
t-tests, the set's provenance, the comparison with another version; hostile names escaped; ``report-leaderboard``."""

import html
import json
import re

import pytest
from click.testing import CliRunner

from medeval.cli import main
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports import leaderboard as lb
from medeval.reports import leaderboard_report as lr
from medeval.store.db import connect
from tests.conftest import db_dump, invoke, write

HOSTILE = "<img src=x onerror=alert(1)>"
ESCAPED = html.escape(HOSTILE)

KB = f"""disease,aspect,reference,aspect_type
感冒,Primary Symptoms,咳嗽;打喷嚏;流鼻涕;发热,
感冒,药物,对乙酰氨基酚;布洛芬,
感冒,{HOSTILE},咳嗽;发热,enumerated
感冒,Physical Examinations,咽部充血，扁桃体无肿大,
感冒,危重等级,4,
流感,Primary Symptoms,高热;头痛;肌肉酸痛,
流感,Medications,奥司他韦,
流感,{HOSTILE},高热;乏力,enumerated
"""
RESP = f"""model,disease,aspect,response
ModelA,感冒,Primary Symptoms,感冒的主要症状包括：咳嗽、流涕和发烧。
ModelA,感冒,Medications,布洛芬
ModelA,感冒,{HOSTILE},咳嗽;发热
ModelA,感冒,Physical Examinations,咽部充血
ModelA,感冒,Severity Level,危重等级为4级
ModelA,流感,Primary Symptoms,高热、头痛
ModelA,流感,Medications,奥司他韦
ModelA,流感,{HOSTILE},高热
{HOSTILE},感冒,Primary Symptoms,骨折
{HOSTILE},感冒,Medications,无
{HOSTILE},感冒,{HOSTILE},头痛
{HOSTILE},感冒,Physical Examinations,建议就医
{HOSTILE},感冒,Severity Level,二级
{HOSTILE},流感,Primary Symptoms,高热
{HOSTILE},流感,Medications,多喝水
{HOSTILE},流感,{HOSTILE},高热;乏力
"""
MODELS = f"""model,backbone,kind
ModelA,,general
{HOSTILE},ModelA,medical
"""


@pytest.fixture
def lb_db(db_path, tmp_path):
    """Two models (the medical one named like an HTML injection), an aspect of that name, scored lexically and graded
    under v1 (Table 12) and v2 (stricter cut-offs)."""
    with connect(db_path) as db:
        import_files(db, kb=write(tmp_path / "kb.csv", KB), responses=write(tmp_path / "r.csv", RESP),
                     models=write(tmp_path / "m.csv", MODELS))
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        th.grade_db(db)
        v2 = th.store(db, th.ThresholdSet(name="strict", cutoffs={k: (0.5, 0.95) for k in th.TABLE12.cutoffs},
                                          provenance={"calibrated": True, "method": "exhaustive cut-off search",
                                                      "source": {"campaign": 7, "campaign_name": "calibration",
                                                                 "items_graded": 30, "annotators": 3}}),
                      created_by="test")
        th.grade_db(db, v2)
    return db_path


def strings(obj):
    """Every string anywhere in a figure's dict."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(obj, (list, tuple)) or hasattr(obj, "tolist"):
        for v in (obj.tolist() if hasattr(obj, "tolist") else obj):
            yield from strings(v)


def _offline(page: str) -> None:
    assert "<script src=" not in page and not re.search(r"src=[\"']https?://", page)
    assert page.count("plotly.js (basic - minified) v") == 1  # its heat map drawn with bars


def test_methods_paragraph_and_tables_hold_the_versions_numbers(lb_db):
    with connect(lb_db) as db:
        data = lr.build(db, 1)
    rep = data["report"]
    board = lb.rows(rep)
    m = lr.methods_paragraph(data)
    assert "total score = 0 × CW + 5 × PC + 10 × BC" in m and "≥ 3.5 → 1, ≥ 3.0 → 2, ≥ 2.0 → 3, else 4" in m
    for r in board:
        assert f"{r['rank']}. {r['model']} {r['total_score']:.2f} (level {r['level']})" in m
    n_sig = sum(1 for t in rep["ttests"] if t.get("significant"))
    assert f"{len(rep['ttests'])} tests, {n_sig} significant" in m and len(rep["ttests"]) > 0
    assert "threshold set v1 (MedDisKEval Table 12; from MedDisKEval" in m  # provenance: the paper's Table 12
    assert "16 graded responses of 2 models" in m
    page = lr.render_html(data)
    assert html.escape(m) in page
    assert lr.metrics_of(rep) == ["averaged", "bleu1", "rouge1"]  # no cosine scores here
    for metric, label in (("averaged", "averaged over the metrics"), ("bleu1", "BLEU-1"), ("rouge1", "ROUGE-1")):
        assert f'data-figure="shares-{metric}"' in page  # Figure 5, averaged and per metric
        assert f"<caption>Total score, {label}</caption>" in page  # Table 4, averaged and per metric
        for r in lb.rows(rep, metric=metric):
            assert f"<td class=\"num\">{r['total_score']:.2f}</td>" in page
    assert 'data-figure="aspects"' in page and "Total score per aspect" in page  # Table 5
    assert "Medical model vs backbone (Welch" in page
    t = next(t for t in rep["ttests"] if t["t"] is not None)
    assert f"{t['t']:.3f}" in page
    assert "Compared with" not in page
    _offline(page)


def test_comparison_and_provenance_of_a_calibrated_set(lb_db):
    with connect(lb_db) as db:
        data = lr.build(db, 2, compare=1)
    page = lr.render_html(data)
    assert "calibrated by clinicians in campaign #7 (calibration), 30 items graded by 3 annotators" in page
    assert "Compared with threshold set v1 (MedDisKEval Table 12)" in page
    moves = lr.diff_rows(data)
    assert moves == lb.diff(lb.rows(data["compare"]["report"]), lb.rows(data["report"]))
    for r in moves:
        assert f"{r['total_change']:.3f}" in page
    assert "provisional" not in page


def test_a_provisional_set_is_marked(lb_db):
    with connect(lb_db) as db:
        v = th.adopt(db, 1, "some-embedding-model", created_by="test")
        th.grade_db(db, v)
        data = lr.build(db, v)
    page = lr.render_html(data)
    assert "class='warn'>These cut-offs are provisional" in page
    assert "provisional: " in lr.methods_paragraph(data) and "(adopted from MedDisKEval Table 12, v1)" in page


def test_nothing_graded_says_so(lb_db):
    # a set for another tokenizer and embedding model, without exact match: it can grade none of the scores
    # (a set that can grade them but was never made active is graded for its report: the next test)
    cut = {k: c for k, c in th.TABLE12.cutoffs.items() if k[0] != "exact_match"}
    with connect(lb_db) as db:
        v = th.store(db, th.ThresholdSet(name="ungraded", cutoffs=cut, tokenizer="no-such-tokenizer",
                                         embedding_model="no/such-model"), created_by="test")
        data = lr.build(db, v)
    page = lr.render_html(data)
    assert f"Nothing is graded under threshold set v{v} yet" in page and "0 graded responses of 0 models" in page


def test_a_set_never_made_active_is_graded_for_its_report_and_its_comparison(lb_db):
    with connect(lb_db) as db:
        v = th.store(db, th.ThresholdSet(name="never active", cutoffs=dict(th.TABLE12.cutoffs)), created_by="test")
        assert not db.conn.execute("SELECT 1 FROM grades WHERE version = ?", (v,)).fetchone()
        data = lr.build(db, v, compare=th.active(db).version)
        assert db.conn.execute("SELECT count(*) FROM grades WHERE version = ?", (v,)).fetchone()[0] > 0
    rows = lr.diff_rows(data)
    assert rows and all(r["total_before"] is not None and r["rank_before"] is not None for r in rows)
    assert "Nothing is graded" not in lr.render_html(data)


def test_hostile_model_and_aspect_names_are_escaped(lb_db):
    with connect(lb_db) as db:
        data = lr.build(db, 2, compare=1)
    assert any(m["model"] == HOSTILE for m in data["report"]["models"])
    assert any(a["aspect"] == HOSTILE for a in data["report"]["aspects"])
    page = lr.render_html(data)
    assert HOSTILE not in page  # in the tables, the figures (Plotly JSON), the methods and the t-tests
    assert f"<td>{ESCAPED}</td>" in page and f"<th>{ESCAPED}</th>" in page  # a model column in Table 5
    assert page.count(ESCAPED) >= 10
    # Plotly reads labels as its own mini-HTML: the figures get the names escaped too (the page's JSON hides that)
    texts = [t for _, fig in lr.figures(data) for t in strings(fig.to_dict())]
    assert any(ESCAPED in t for t in texts) and not any(HOSTILE in t for t in texts)


def test_write_report_writes_the_files(lb_db, tmp_path):
    with connect(lb_db) as db:
        data = lr.build(db, 1, compare=2)
    paths = lr.write_report(data, tmp_path / "out", pdf=False)
    assert set(paths) == {"html", "json", "report_csv", "leaderboard_averaged_csv", "leaderboard_bleu1_csv",
                          "leaderboard_rouge1_csv", "aspects_csv", "ttests_csv", "compare_csv"}
    assert all(p.exists() for p in paths.values())
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["report"]["models"] == \
        json.loads(json.dumps(data["report"]["models"]))
    rows = paths["leaderboard_averaged_csv"].read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("model,kind,backbone,completely_wrong") and len(rows) == 3
    assert paths["compare_csv"].name == "compare-v2.csv"


@pytest.mark.slow  # starts headless Chromium
def test_write_report_prints_the_pdf(lb_db, tmp_path):
    if lr.chromium_path() is None:
        pytest.skip("no Chromium to print with: run `bash scripts/install-browser.sh` (apt-get install chromium)")
    with connect(lb_db) as db:
        data = lr.build(db, 1)
    data_pdf = lr.write_report(data, tmp_path / "out")["pdf"].read_bytes()
    assert data_pdf.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", data_pdf)) >= 1


def test_cli_report_leaderboard_and_its_errors(lb_db, tmp_path):
    out = invoke("report-leaderboard", "--db", lb_db, "--version", "2", "--compare", "1", "--out", tmp_path / "r",
                 "--no-pdf").output
    written = dict(line.split("\t") for line in out.splitlines())
    assert {"html", "json", "compare_csv"} <= set(written) and "pdf" not in written
    assert "v2 (strict)" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    active = invoke("report-leaderboard", "--db", lb_db, "--out", tmp_path / "a", "--no-pdf")  # default: active set
    assert active.exit_code == 0 and "v1 (MedDisKEval Table 12)" in (tmp_path / "a" / "report.html").read_text(
        encoding="utf-8")
    before = db_dump(lb_db)
    for args, message in ((["--version", "9"], "Error: no threshold set version 9 (versions: 1, 2)"),
                          (["--version", "1", "--compare", "9"], "Error: no threshold set version 9 (versions: 1, 2)"),
                          (["--version", "1", "--compare", "1"], "Error: --compare 1 is the version of the report "
                                                                "itself; choose another version")):
        res = CliRunner().invoke(main, ["report-leaderboard", "--db", str(lb_db), *args, "--out",
                                        str(tmp_path / "bad"), "--no-pdf"])
        assert res.exit_code == 1 and res.output.strip().startswith(message), res.output
        assert len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "bad").exists() and db_dump(lb_db) == before


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_report_leaderboard_in_a_subprocess(lb_db, tmp_path):
    from tests.conftest import run_cli

    r = run_cli("report-leaderboard", "--db", lb_db, "--version", "1", "--out", tmp_path / "r", "--no-pdf")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r" / "report.html").exists() and (tmp_path / "r" / "ttests.csv").exists()


def deferred_downloads(page: str, db_path, username: str, monkeypatch, choose=()) -> dict:
    """Run ``page`` in AppTest as ``username``; the label -> data callable of each download made on click."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.testing.v1 import AppTest

    from medeval.accounts import auth
    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    made = {}
    add = MediaFileManager.add_deferred

    def capture(self, data_callable, *a, **k):
        file_id = add(self, data_callable, *a, **k)
        made[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", capture)
    with connect(db_path) as db:
        if not db.conn.execute("SELECT 1 FROM users WHERE username = ?", (username,)).fetchone():
            auth.add_user(db, username, "a-long-password", "researcher")
        token = auth.create_session(db, auth.get_user(db, username))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    at.switch_page(page).run()
    for key, value in choose:
        at.selectbox(key=key).set_value(value).run()
    assert not at.exception, at.exception
    import webui.i18n

    webui.i18n._last_used = None  # the files are made on click, in a server thread: no session's language there
    return {d.proto.label: made[d.proto.deferred_file_id] for d in at.get("download_button")
            if d.proto.deferred_file_id}


@pytest.mark.slow  # AppTest runs the whole page
def test_leaderboard_page_offers_the_report(lb_db, monkeypatch):
    import io
    import zipfile

    dl = deferred_downloads("app_pages/leaderboard.py", lb_db, "res", monkeypatch,
                            choose=[("lb_version", 1), ("lb_other", 2)])
    page = dl["Report (HTML)"]()
    assert page.startswith("<!doctype html>") and "threshold set v1 (MedDisKEval Table 12)" in page
    assert "Compared with threshold set v2 (strict)" in page  # the version chosen on the page
    names = zipfile.ZipFile(io.BytesIO(dl["Report (zip: HTML, PDF, …)"]())).namelist()
    assert {"report.html", "report.json", "ttests.csv", "compare-v2.csv"} <= set(names)
    assert ("report.pdf" in names) == (lr.chromium_path() is not None)
