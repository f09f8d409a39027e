"""Report: tier shares, total score, level, and Welch's t-test (checked against a hand computation)."""

import math

import pytest
from scipy import stats

from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.reports.tier_report import build_report, level, render, total_score, welch
from medeval.engine.scoring import score_db


def test_total_score_and_levels_reproduce_table4():
    # Table 4 of the paper: GPT-3.5 Turbo 46.1 / 27.7 / 26.1 -> 4.00 (level 1); BLOOMZ-7B 68.7/25.9/5.5 -> 1.84 (level 4)
    assert total_score((0.461, 0.277, 0.261)) == pytest.approx(3.995)
    assert total_score((0.687, 0.259, 0.055)) == pytest.approx(1.845)
    table4 = {4.00: 1, 3.14: 2, 3.10: 2, 3.02: 2, 3.00: 2, 2.75: 3, 2.70: 3, 2.41: 3, 2.36: 3, 2.26: 3, 2.20: 3, 1.84: 4}
    assert {s: level(s) for s in table4} == table4


def test_welch_against_hand_computation():
    a, b = [0.9, 0.8, 0.7, 0.95], [0.2, 0.4, 0.3]
    r = welch(a, b)
    ma, mb = sum(a) / 4, sum(b) / 3
    va = sum((x - ma) ** 2 for x in a) / 3
    vb = sum((x - mb) ** 2 for x in b) / 2
    t = (ma - mb) / math.sqrt(va / 4 + vb / 3)
    df = (va / 4 + vb / 3) ** 2 / ((va / 4) ** 2 / 3 + (vb / 3) ** 2 / 2)
    p = 2 * stats.t.sf(abs(t), df)
    assert r["t"] == pytest.approx(t, rel=1e-12) and r["df"] == pytest.approx(df, rel=1e-12)
    assert r["p"] == pytest.approx(p, rel=1e-9) and r["significant"] is True


@pytest.mark.parametrize("a,b,reason", [([1.0], [0.2, 0.3], "fewer than 2"), ([0.5, 0.5], [0.5, 0.5], "no variance"),
                                        ([], [], "fewer than 2")])
def test_welch_undefined_cases_say_why(a, b, reason):
    r = welch(a, b)
    assert r["t"] is None and r["p"] is None and reason in r["undefined_reason"]


def test_report_numbers_follow_from_the_grades(db, small_files):
    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    th.grade_db(db)
    rep = build_report(db)
    assert rep["threshold_set"]["version"] == 1
    models = {r["model"]: r for r in rep["models"]}
    assert set(models) == {"ModelA", "ModelB"}
    # ModelA: severity exact match -> BC under every metric; count its BLEU-1 tiers by hand from the grades
    tiers = [t for (t,) in db.conn.execute(
        "SELECT g.tier FROM grades g JOIN responses r ON r.id = g.response_id JOIN models m ON m.id = r.model_id "
        "WHERE m.name = 'ModelA' AND g.metric IN ('bleu1', 'exact_match')")]
    bl = models["ModelA"]["per_metric"]["bleu1"]
    assert bl["n"] == 4 == len(tiers)
    assert bl["basically_correct"] == tiers.count(2) / 4 and bl["completely_wrong"] == tiers.count(0) / 4
    assert models["ModelA"]["per_metric"]["cosine"] is None  # cosine never scored: not graded, not averaged in
    assert models["ModelA"]["averaged"]["metrics"] == ["bleu1", "rouge1"]
    avg = models["ModelA"]["averaged"]
    assert avg["total_score"] == pytest.approx(5 * avg["partially_correct"] + 10 * avg["basically_correct"])
    assert sum(avg[k] for k in ("completely_wrong", "partially_correct", "basically_correct")) == pytest.approx(1)
    # ModelB is medical with backbone ModelA: one t-test row per aspect and metric present
    assert rep["ttests"] and all(r["medical"] == "ModelB" and r["backbone"] == "ModelA" for r in rep["ttests"])
    assert all(r["t"] is None for r in rep["ttests"])  # one response per aspect: undefined, with reason
    for fmt in ("json", "csv", "md"):
        assert "ModelA" in render(rep, fmt)


# ---------------------------------------------------------------- CSV exports a spreadsheet cannot run (issue 12)

EVIL = ['=HYPERLINK("http://x","y")', "+1", "-cmd", "@SUM(1)"]


def _cells(text: str) -> list[list[str]]:
    import csv
    import io

    return list(csv.reader(io.StringIO(text)))


@pytest.fixture
def evil_models(db_path, tmp_path):
    """The small data set with its two models named like formulas, scored and graded."""
    import csv
    import io

    from medeval.store.db import connect
    from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, write

    def table(text):
        buf = io.StringIO()
        csv.writer(buf).writerows([[{"ModelA": EVIL[0], "ModelB": EVIL[2]}.get(c, c) for c in r]
                                   for r in _cells(text)])
        return buf.getvalue()

    files = {"kb": write(tmp_path / "kb.csv", KB_CSV), "responses": write(tmp_path / "r.csv", table(RESP_CSV)),
             "models": write(tmp_path / "m.csv", table(MODELS_CSV))}
    with connect(db_path) as db:
        import_files(db, **files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        th.grade_db(db)
    return db_path


def test_report_export_and_leaderboard_csv_prefix_formula_names(evil_models, tmp_path):
    import csv
    import io

    from click.testing import CliRunner

    from medeval.cli import main
    from medeval.reports import leaderboard as lb
    from medeval.store.db import connect

    out = tmp_path / "rep.csv"
    CliRunner().invoke(main, ["report", "--format", "csv", "--out", str(out)], env={"MEDEVAL_DB": str(evil_models)},
                       catch_exceptions=False)
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert {r["model"] for r in rows if r["section"] == "model"} == {"'" + EVIL[0], "'" + EVIL[2]}
    tt = [r for r in rows if r["section"] == "ttest"]
    assert {r["model"] for r in tt} == {"'" + EVIL[2]} and {r["backbone"] for r in tt} == {"'" + EVIL[0]}
    assert all(not r[k].startswith("'") for r in rows for k in ("t", "p", "total_score"))  # numbers stay numbers
    exported = CliRunner().invoke(main, ["export"], env={"MEDEVAL_DB": str(evil_models)}, catch_exceptions=False)
    assert {r[0] for r in _cells(exported.output)[1:]} == {"'" + EVIL[0], "'" + EVIL[2]}
    with connect(evil_models) as db:
        board = lb.rows(build_report(db, None))
    assert {r[0] for r in _cells(lb.to_csv(board))[1:]} == {"'" + EVIL[0], "'" + EVIL[2]}


def test_agreement_csvs_prefix_names_and_keep_numbers(tmp_path):
    from medeval.reports.agreement_report import _write_csv
    from medeval.stats.agreement.summary import render_summary

    p = tmp_path / "a.csv"
    _write_csv(p, [{"annotator": EVIL[1], "kappa": -0.25, "tiers": [0, 1]}])
    assert _cells(p.read_text(encoding="utf-8")) == [["annotator", "kappa", "tiers"], ["'+1", "-0.25", "[0, 1]"]]
    s = {"percent_agreement": -0.25, "level": "interval", "n_items": 3, "n_raters": 2,
         "krippendorff_alpha": {"value": -0.5, "ci95": [-1.0, 0.0], "undefined_reason": None}}
    got = _cells(render_summary(s, "csv"))
    assert got[1][:2] == ["percent_agreement", "-0.25"] and got[2][1:4] == ["-0.5", "-1.0", "0.0"]


# ---------------------------------------------------------------- what the header and methods claim (issue 21 §4)

def _fake_embedding(model_id):
    """A deterministic embedding backend under a chosen model id (character counts; no model is loaded)."""
    from tests.test_scoring import CountingBackend

    return CountingBackend(model_id, dims=16)


def _scored(db, small_files, monkeypatch, *model_ids):
    from medeval.engine import embeddings

    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    for i, mid in enumerate(model_ids):
        monkeypatch.setitem(embeddings.backends().loaded, f"fake{i}", _fake_embedding(mid))
        score_db(db, metrics=["cosine"], embedding_model=f"fake{i}")
    # Table 12's cut-offs for whatever tokenizer produced the lexical scores, for M3E: the set under test
    (tok,) = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'bleu1'")}
    v = th.store(db, th.ThresholdSet(name="Table 12 for this tokenizer", cutoffs=dict(th.TABLE12.cutoffs),
                                     tokenizer=tok, embedding_model=th.TABLE12.embedding_model),
                 created_by="test")
    th.activate(db, v)
    return v


# (scorer ids of the cosine scores, graded under Table 12 (M3E)?, what the header says about cosine)
COSINE_CASES = [
    (("use-multilingual-v3@1.0",), False,
     "cosine not graded: set v{v}'s cut-offs are for moka-ai/m3e-base, the scores come from use-multilingual-v3@1.0"),
    (("sentence-transformers/all-MiniLM-L6-v2",), False,
     "cosine not graded: set v{v}'s cut-offs are for moka-ai/m3e-base, the scores come from "
     "sentence-transformers/all-MiniLM-L6-v2"),
    (("st:bge-large-zh:9f8e7d6c5b",), False,
     "cosine not graded: set v{v}'s cut-offs are for moka-ai/m3e-base, the scores come from bge-large-zh "
     "(local model directory, fingerprint 9f8e7d6c5b)"),
    (("st:m3e-base:0123456789",), True, "cosine from m3e-base (local model directory, fingerprint 0123456789)"),
    (("moka-ai/m3e-base",), True, "cosine from moka-ai/m3e-base"),
    # two models scored: only the one the set was calibrated for produced the graded cosine scores
    (("use-multilingual-v3@1.0", "st:m3e-base:0123456789"), True,
     "cosine from m3e-base (local model directory, fingerprint 0123456789)"),
]


@pytest.mark.parametrize("model_ids,graded,says", COSINE_CASES)
def test_the_header_names_the_model_behind_the_cosine_scores(db, small_files, monkeypatch, model_ids, graded, says):
    from medeval.reports import leaderboard_report as lr
    from medeval.reports import scorer_notes

    v = _scored(db, small_files, monkeypatch, *model_ids)
    says = says.format(v=v)
    rep = build_report(db)
    md = render(rep, "md")
    header = md.splitlines()[2]
    assert says in header, header
    metrics = "BLEU-1, ROUGE-1, cosine" if graded else "BLEU-1, ROUGE-1"
    assert f"## Models (shares averaged over {metrics})" in md
    assert rep["scorers"]["graded_metrics"] == (["bleu1", "rouge1", "cosine"] if graded else ["bleu1", "rouge1"])
    # the cosine grades exist exactly when the header says so (checked on the grades table, not our own output)
    n_cos = db.conn.execute("SELECT count(*) FROM grades WHERE metric = 'cosine' AND version = ?", (v,)).fetchone()[0]
    assert (n_cos > 0) == graded
    if not graded:
        assert "cosine from moka-ai/m3e-base" not in md and "cosine from" not in header
    data = lr.build(db)
    para = lr.methods_paragraph(data)
    assert says in para or (graded and says.removeprefix("cosine from ") in para), para
    assert f"per metric ({metrics})" in para
    if not graded:
        assert "sentence embeddings (moka-ai/m3e-base)" not in para
        assert "cosine not graded" in para
    html = lr.render_html(data)
    assert says.replace("'", "&#x27;") in html or says in html
    # the tokenizer is described from the stored scorer ids of the BLEU-1/ROUGE-1 scores
    tok = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric IN ('bleu1', 'rouge1')")}
    assert rep["scorers"]["tokenizers"] == sorted(tok)
    assert all(t in header and scorer_notes.tokenizer_text(t).rstrip(". ") in header for t in tok)
    assert all(scorer_notes.tokenizer_text(t).startswith("tokens:") for t in tok)  # described, not just the id


def test_no_cosine_scores_at_all_is_said_plainly(db, small_files):
    from medeval.reports import leaderboard_report as lr

    _scored(db, small_files, None)
    rep = build_report(db)
    assert rep["scorers"]["metrics"]["cosine"]["reason"] == "cosine not scored"
    assert rep["scorers"]["graded_metrics"] == ["bleu1", "rouge1"]
    assert "cosine not scored" in render(rep, "md").splitlines()[2]
    para = lr.methods_paragraph(lr.build(db))
    assert "sentence embeddings" not in para and "cosine not scored" in para


def test_a_set_for_another_tokenizer_leaves_the_lexical_metrics_ungraded_and_says_why(db, small_files, monkeypatch):
    _scored(db, small_files, monkeypatch, "st:m3e-base:0123456789")
    (tok,) = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'rouge1'")}
    other = th.ThresholdSet(name="other tokenizer", cutoffs=dict(th.TABLE12.cutoffs), tokenizer="word-v9",
                            embedding_model=th.TABLE12.embedding_model)
    v = th.store(db, other, created_by="test")
    th.grade_db(db, v)
    rep = build_report(db, v)
    assert rep["scorers"]["graded_metrics"] == ["cosine"]
    md = render(rep, "md")
    for label in ("BLEU-1", "ROUGE-1"):
        assert f"{label} not graded: set v{v}'s cut-offs are for tokenizer word-v9, the scores come from {tok}" in md
    assert "## Models (shares averaged over cosine)" in md
