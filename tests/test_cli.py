"""The command line, end to end: ``python -m medeval ...`` in a subprocess, and click's CliRunner
where an in-process call is enough (faster). Cosine is never scored here (it loads an embedding model)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from medeval.cli import main
from tests.conftest import db_dump, write

ROOT = Path(__file__).resolve().parents[1]
LEXICAL = "bleu1,rouge1,exact_match"
EXPORT_HEADER = ["model", "disease", "aspect", "aspect_type", "metric", "score", "tier", "tier_name", "threshold_version",
                 "scorer"]
# metrics that apply per aspect type (with cosine left out)
APPLICABLE = {"enumerated": {"bleu1", "rouge1"}, "declarative": {"bleu1", "rouge1"}, "numeric": {"exact_match"}}


def run_cli(*args, db, **env_extra) -> subprocess.CompletedProcess:
    """``python -m medeval ARGS`` with MEDEVAL_DB=db (None: unset), from the repository root."""
    env = {k: v for k, v in os.environ.items() if k != "MEDEVAL_DB"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONIOENCODING="utf-8", **env_extra)
    if db is not None:
        env["MEDEVAL_DB"] = str(db)
    return subprocess.run([sys.executable, "-m", "medeval", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, encoding="utf-8")


def invoke(*args, db):
    """The same command in process (CliRunner keeps stdout and stderr apart)."""
    return CliRunner().invoke(main, [str(a) for a in args], env={"MEDEVAL_DB": str(db)}, catch_exceptions=False)


def import_args(files):
    return ["import", "--kb", files["kb"], "--responses", files["responses"], "--models", files["models"]]


def export_rows(text: str) -> list[dict]:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == EXPORT_HEADER
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def response_aspect_types(db_path) -> dict[int, str]:
    conn = sqlite3.connect(str(db_path))
    try:
        return dict(conn.execute("SELECT r.id, k.aspect_type FROM responses r JOIN kb_entries k ON k.id = r.kb_id"))
    finally:
        conn.close()


def score_rows(db_path) -> list[tuple[int, str, str]]:
    conn = sqlite3.connect(str(db_path))
    try:
        return list(conn.execute("SELECT response_id, metric, scorer FROM scores"))
    finally:
        conn.close()


@pytest.fixture
def imported(db_path, small_files):
    """small_files imported into db_path through the library."""
    from medeval.store.db import connect
    from medeval.engine.importer import import_files

    with connect(db_path) as db:
        import_files(db, **small_files)
    return db_path


@pytest.fixture
def scored(imported):
    """small_files imported, scored with the lexical metrics and graded under v1."""
    from medeval.engine import thresholds as th
    from medeval.store.db import connect
    from medeval.engine.scoring import score_db

    with connect(imported) as db:
        score_db(db, metrics=LEXICAL.split(","))
        th.grade_db(db)
    return imported


# ---------------------------------------------------------------- help

def _commands(help_text: str) -> dict[str, str]:
    section = help_text.split("Commands:", 1)[1]
    out = {}
    for line in section.splitlines():
        m = re.match(r"^\s{2}(\S+)\s{2,}(\S.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_help_lists_every_command_with_a_description(tmp_path):
    r = run_cli("--help", db=tmp_path / "h.db")
    assert r.returncode == 0, r.stderr
    cmds = _commands(r.stdout)
    for name in ("init", "import", "score", "grade", "thresholds", "report", "export", "demo"):
        assert name in cmds, f"{name} missing from --help:\n{r.stdout}"
        assert len(cmds[name]) > 10, f"{name} has no one-line description"
    assert not (tmp_path / "h.db").exists()  # --help creates no database


def test_thresholds_help_lists_subcommands(tmp_path):
    r = invoke("thresholds", "--help", db=tmp_path / "h.db")
    assert r.exit_code == 0
    cmds = _commands(r.stdout)
    assert set(cmds) == {"list", "export", "import", "activate", "adopt"}
    assert all(len(d) > 10 for d in cmds.values())


# ---------------------------------------------------------------- --db and MEDEVAL_DB

@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_db_option_overrides_env(tmp_path):
    env_db, opt_db = tmp_path / "env.db", tmp_path / "opt.db"
    r = run_cli("init", "--db", opt_db, db=env_db)
    assert r.returncode == 0, r.stderr
    assert opt_db.exists()
    assert not env_db.exists()
    assert str(opt_db) in r.stdout


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_env_db_used_without_option(tmp_path):
    env_db = tmp_path / "env.db"
    r = run_cli("init", db=env_db)
    assert r.returncode == 0, r.stderr
    assert env_db.exists()
    assert str(env_db) in r.stdout


def test_missing_db_folder_is_a_clean_error(tmp_path):
    r = invoke("init", "--db", tmp_path / "no" / "such" / "x.db", db=tmp_path / "env.db")
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: ") and "does not exist" in r.stderr
    assert not (tmp_path / "env.db").exists()


# ---------------------------------------------------------------- import errors

BAD_IMPORT = {
    "unknown_aspect": ("kb", "kb2.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n流感,Primry Symptoms,发热\n",
                       3, ["unknown aspect", "Did you mean"]),
    "gb18030": ("kb", "kb2.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n".encode("gb18030"),
                None, ["not UTF-8", "line 2", "save it as UTF-8"]),
    "response_not_in_kb": ("responses", "r2.csv", "model,disease,aspect,response\nModelA,肺炎,药物,阿莫西林\n",
                           2, ["not in the knowledge base"]),
    "response_changed": ("responses", "r2.csv", "model,disease,aspect,response\nModelA,感冒,药物,阿司匹林\n",
                         2, ["already has a different response"]),
    "duplicate_response_alias_spelling": (
        "responses", "r2.csv", "model,disease,aspect,response\nModelC,感冒,药物,布洛芬\nModelC,感冒,Medications,阿司匹林\n",
        3, ["duplicate response"]),
}


IN_PROCESS = {"response_not_in_kb", "response_changed"}


def _bad_params():
    for name in BAD_IMPORT:
        marks = []
        yield pytest.param(name, id=name, marks=marks)


@pytest.mark.slow  # runs python -m medeval in a subprocess
@pytest.mark.parametrize("case", list(_bad_params()))
def test_import_bad_input_exits_nonzero_with_clean_message(case, imported, tmp_path):
    kind, name, data, row, expected = BAD_IMPORT[case]
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        write(p, data)
    before = db_dump(imported)
    if case in IN_PROCESS:  # same checks, faster; an unexpected exception propagates and fails the test
        res = invoke("import", f"--{kind}", p, db=imported)
        r = subprocess.CompletedProcess([], res.exit_code, res.stdout, res.stderr)
    else:
        r = run_cli("import", f"--{kind}", p, db=imported)
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    assert r.returncode == 1
    assert r.stderr.startswith("Error: "), r.stderr
    where = f"{p}, row {row}: " if row is not None else f"{p}: "
    assert where in r.stderr
    for s in expected:
        assert s in r.stderr
    assert "added" not in r.stdout
    assert db_dump(imported) == before


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_import_twice_reports_nothing_changed(db_path, small_files):
    first = run_cli(*import_args(small_files), db=db_path)
    assert first.returncode == 0, first.stderr
    assert "knowledge base: 4 added" in first.stdout and "responses: 8 added" in first.stdout
    before = db_dump(db_path)
    again = invoke(*import_args(small_files), db=db_path)
    assert again.exit_code == 0
    assert "responses: 0 added, 8 unchanged" in again.stdout
    assert "nothing changed" in again.stdout
    assert db_dump(db_path) == before


def test_import_without_files_is_an_error(db_path):
    r = invoke("import", db=db_path)
    assert r.exit_code == 1
    assert "Error: nothing to import" in r.stderr


# ---------------------------------------------------------------- full flow

@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_full_flow(db_path, small_files, tmp_path):
    # import
    r = run_cli(*import_args(small_files), db=db_path)
    assert r.returncode == 0, r.stderr

    # score (lexical metrics only) and grade under the active set v1
    r = run_cli("score", "--metrics", LEXICAL, "--no-progress", db=db_path)
    assert r.returncode == 0, r.stderr
    assert "8 responses checked, 14 scores added" in r.stdout
    assert "14 grades added under threshold set v1" in r.stdout

    # report --format json (in process: scipy is slow to import)
    r = invoke("report", "--format", "json", db=db_path)
    assert r.exit_code == 0
    rep = json.loads(r.stdout)
    assert rep["threshold_set"]["version"] == 1
    models = {m["model"]: m for m in rep["models"]}
    assert set(models) == {"ModelA", "ModelB"}
    for m in models.values():
        avg = m["averaged"]
        assert avg is not None
        assert avg["completely_wrong"] + avg["partially_correct"] + avg["basically_correct"] == pytest.approx(1.0)
        assert avg["total_score"] == pytest.approx(5 * avg["partially_correct"] + 10 * avg["basically_correct"])
        used = [m["per_metric"][k] for k in avg["metrics"]]
        for share in ("completely_wrong", "partially_correct", "basically_correct"):
            assert avg[share] == pytest.approx(sum(u[share] for u in used) / len(used))
    # ModelB answers nothing right: every tier is Completely Wrong
    assert models["ModelB"]["averaged"]["total_score"] == 0.0
    assert models["ModelB"]["averaged"]["level"] == 4
    assert models["ModelA"]["averaged"]["total_score"] > 0

    # export --what scores --format csv: one row per response and applicable metric
    r = run_cli("export", "--what", "scores", "--format", "csv", db=db_path)
    assert r.returncode == 0, r.stderr
    rows = export_rows(r.stdout)
    types = response_aspect_types(db_path)
    assert len(rows) == sum(len(APPLICABLE[t]) for t in types.values()) == 14
    keys = [(x["model"], x["disease"], x["aspect"], x["metric"]) for x in rows]
    assert len(set(keys)) == len(keys)
    for x in rows:
        assert x["metric"] in APPLICABLE[x["aspect_type"]]
        assert 0.0 <= float(x["score"]) <= 1.0
        assert x["tier"] in {"0", "1", "2"}
        assert x["threshold_version"] == "1"
    # per-metric shares of the report agree with the exported tiers (exact_match counts under every metric)
    for model in ("ModelA", "ModelB"):
        for metric in ("bleu1", "rouge1"):
            tiers = [int(x["tier"]) for x in rows if x["model"] == model and x["metric"] in (metric, "exact_match")]
            pm = models[model]["per_metric"][metric]
            assert pm["n"] == len(tiers) == 4
            assert pm["basically_correct"] == pytest.approx(tiers.count(2) / 4)
            assert pm["partially_correct"] == pytest.approx(tiers.count(1) / 4)

    # thresholds export -> import: a new version with identical cut-offs
    th_file = tmp_path / "th.json"
    r = invoke("thresholds", "export", "--out", th_file, db=db_path)
    assert r.exit_code == 0
    exported = json.loads(th_file.read_text(encoding="utf-8"))
    assert exported["version"] == 1
    r = invoke("thresholds", "import", th_file, "--by", "tester", db=db_path)
    assert r.exit_code == 0, r.stderr
    assert "as v2" in r.stdout
    r = invoke("thresholds", "export", "2", db=db_path)
    v2 = json.loads(r.stdout)
    assert v2["version"] == 2 and v2["created_by"] == "tester"
    assert v2["thresholds"] == exported["thresholds"]
    assert (v2["tokenizer"], v2["embedding_model"]) == (exported["tokenizer"], exported["embedding_model"])
    r = invoke("thresholds", "list", db=db_path)
    assert re.search(r"^\* v1 ", r.stdout, re.M) and re.search(r"^  v2 ", r.stdout, re.M)
    # importing does not activate: the export still names v1
    assert {x["threshold_version"] for x in export_rows(invoke("export", db=db_path).stdout)} == {"1"}

    # thresholds activate 2: the export follows it; identical cut-offs give identical tiers
    r = invoke("thresholds", "activate", "2", db=db_path)
    assert r.exit_code == 0
    assert "v2 is active; 14 grades added" in r.stdout
    r = invoke("thresholds", "list", db=db_path)
    assert re.search(r"^\* v2 ", r.stdout, re.M) and re.search(r"^  v1 ", r.stdout, re.M)
    rows2 = export_rows(invoke("export", "--what", "scores", "--format", "csv", db=db_path).stdout)
    assert {x["threshold_version"] for x in rows2} == {"2"}
    strip = lambda rs: [{k: v for k, v in x.items() if k != "threshold_version"} for x in rs]  # noqa: E731
    assert strip(rows2) == strip(rows)
    assert json.loads(invoke("report", "--format", "json", db=db_path).stdout)["threshold_set"]["version"] == 2
    # the old version can still be exported explicitly
    assert {x["threshold_version"] for x in export_rows(invoke("export", "--version", "1", db=db_path).stdout)} == {"1"}


def test_report_average_only_covers_scored_metrics(scored):
    rep = json.loads(invoke("report", "--format", "json", db=scored).stdout)
    assert "cosine" not in rep["coverage"]
    for m in rep["models"]:
        assert m["averaged"]["metrics"] == ["bleu1", "rouge1"]


# ---------------------------------------------------------------- resumable scoring

@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_score_is_resumable(imported):
    from medeval.store.db import connect
    from medeval.engine.scoring import score_db

    metrics = LEXICAL.split(",")
    types = response_aspect_types(imported)
    expected_total = sum(len(APPLICABLE[t]) for t in types.values())
    with connect(imported) as db:
        s = score_db(db, metrics=metrics, batch_size=2, stop_after_chunks=1)  # an interrupted run
    assert s.responses_seen == 2
    first = score_rows(imported)
    assert {rid for rid, _, _ in first} == set(sorted(types)[:2])
    assert 0 < len(first) == s.scores_added < expected_total

    r = run_cli("score", "--metrics", LEXICAL, "--no-progress", "--batch-size", "3", db=imported)
    assert r.returncode == 0, r.stderr
    assert f"8 responses checked, {expected_total - len(first)} scores added" in r.stdout
    after = score_rows(imported)
    assert set(first) <= set(after)
    per_response: dict[int, list[str]] = {}
    for rid, metric, _ in after:
        per_response.setdefault(rid, []).append(metric)
    assert set(per_response) == set(types)
    for rid, ms in per_response.items():
        assert sorted(ms) == sorted(APPLICABLE[types[rid]]), (rid, ms)  # exactly one score per metric

    # a third run has nothing left to do
    r = invoke("score", "--metrics", LEXICAL, "--no-progress", db=imported)
    assert "8 responses checked, 0 scores added" in r.stdout
    assert sorted(score_rows(imported)) == sorted(after)


def test_score_unknown_metric_is_a_clean_error(imported):
    before = db_dump(imported)
    r = invoke("score", "--metrics", "bleu2", "--no-progress", db=imported)
    assert r.exit_code == 1
    assert "Error: unknown metric 'bleu2'" in r.stderr and "Did you mean" in r.stderr
    assert db_dump(imported) == before


# ---------------------------------------------------------------- report formats

def test_report_markdown(scored):
    r = invoke("report", "--format", "md", db=scored)
    assert r.exit_code == 0
    md = r.stdout
    assert md.startswith("# Model report")
    assert "Threshold set v1 (MedDisKEval Table 12)" in md
    rep = json.loads(invoke("report", "--format", "json", db=scored).stdout)
    for m in rep["models"]:
        a = m["averaged"]
        assert re.search(rf"^\| {m['model']} \| {m['kind']} \|.*\| {a['total_score']:.2f} \| {a['level']} \|$", md, re.M)


def test_report_csv(scored, tmp_path):
    out = tmp_path / "rep.csv"
    r = invoke("report", "--format", "csv", "--out", out, db=scored)
    assert r.exit_code == 0 and r.stdout == ""
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert {"section", "model", "metric", "total_score", "level"} <= set(rows[0])
    rep = json.loads(invoke("report", "--format", "json", db=scored).stdout)
    for m in rep["models"]:
        avg = [x for x in rows if x["section"] == "model" and x["model"] == m["model"] and x["metric"] == "average"]
        assert len(avg) == 1
        assert float(avg[0]["total_score"]) == pytest.approx(m["averaged"]["total_score"])
        assert int(avg[0]["level"]) == m["averaged"]["level"]
    assert {x["section"] for x in rows} >= {"model", "aspect", "ttest"}
    assert any(x["section"] == "aspect" and x["aspect"] == "Severity Level" for x in rows)


# ---------------------------------------------------------------- thresholds import errors

BAD_THRESHOLDS = {
    "malformed_json": ('{"thresholds": [ {"metric": "bleu1", }', ["invalid JSON", "line 1"]),
    "no_thresholds_key": ('{"name": "x"}', ['"thresholds" list', "thresholds export"]),
    "low_above_high": (json.dumps({"thresholds": [{"metric": "bleu1", "aspect_type": "enumerated",
                                                    "low": 0.5, "high": 0.2}]}), ["low 0.5 must be <= high 0.2"]),
    "metric_wrong_type": (json.dumps({"thresholds": [{"metric": "exact_match", "aspect_type": "enumerated",
                                                       "low": 1, "high": 1}]}), ["does not apply to aspect type"]),
}


@pytest.mark.slow  # runs python -m medeval in a subprocess
@pytest.mark.parametrize("case", list(BAD_THRESHOLDS))
def test_thresholds_import_bad_file(case, db_path, tmp_path):
    text, expected = BAD_THRESHOLDS[case]
    f = write(tmp_path / "bad.json", text)
    invoke("init", db=db_path)
    before = db_dump(db_path)
    r = run_cli("thresholds", "import", f, db=db_path) if case == "malformed_json" else invoke(
        "thresholds", "import", f, db=db_path)
    rc, err, out = (r.returncode, r.stderr, r.stdout) if case == "malformed_json" else (r.exit_code, r.stderr, r.stdout)
    assert rc == 1
    assert err.startswith(f"Error: {f}: "), err
    for s in expected:
        assert s in err
    assert "Traceback" not in err + out
    assert db_dump(db_path) == before


def test_thresholds_activate_unknown_version(scored):
    before = db_dump(scored)
    r = invoke("thresholds", "activate", "7", db=scored)
    assert r.exit_code == 1
    assert "no threshold set version 7" in r.stderr and "versions: 1" in r.stderr
    assert db_dump(scored) == before


# ---------------------------------------------------------------- grade, adopt, export of a version

def test_score_no_grade_then_grade(imported):
    r = invoke("score", "--metrics", LEXICAL, "--no-progress", "--no-grade", db=imported)
    assert r.exit_code == 0
    assert "14 scores added" in r.stdout and "grades added" not in r.stdout
    assert export_rows(invoke("export", db=imported).stdout)[0]["tier"] == ""  # not graded yet
    r = invoke("grade", db=imported)
    assert r.exit_code == 0
    assert "14 grades added under threshold set v1" in r.stdout
    rows = export_rows(invoke("export", db=imported).stdout)
    assert all(x["tier"] in {"0", "1", "2"} and x["threshold_version"] == "1" for x in rows)
    names = {"0": "Completely Wrong", "1": "Partially Correct", "2": "Basically Correct"}  # README "Tier codes"
    assert all(x["tier_name"] == names[x["tier"]] for x in rows)
    assert "0 grades added" in invoke("grade", db=imported).stdout


def test_thresholds_adopt_is_marked_provisional(scored):
    r = invoke("thresholds", "adopt", "1", "--embedding-model", "my-model", "--activate", "--by", "tester", db=scored)
    assert r.exit_code == 0
    assert "v2: copy of v1 for my-model (provisional); active" in r.stdout
    v2 = json.loads(invoke("thresholds", "export", db=scored).stdout)
    assert v2["version"] == 2 and v2["embedding_model"] == "my-model"
    assert v2["provenance"]["calibrated"] is False and v2["provenance"]["adopted_from_version"] == 1
    assert "provisional" in invoke("report", "--format", "md", db=scored).stdout


def test_thresholds_export_unknown_version_zero(scored):
    assert invoke("report", "--version", "0", db=scored).exit_code == 1  # the consistent behaviour
    r = invoke("thresholds", "export", "0", db=scored)
    assert r.exit_code == 1
    assert "no threshold set version 0" in r.stderr


def test_calibrate_csv_prefixes_text_and_keeps_negative_numbers(db_path, tmp_path):
    """A GRADED file's aspect type starting with @ is written as text; a negative cut-off stays a number."""
    g = write(tmp_path / "g.csv", "metric,aspect_type,score,tier\n" + "".join(
        f"cosine,@SUM(1),{s},{t}\n" for s, t in ((-0.5, 0), (-0.2, 0), (0.1, 1), (0.3, 1), (0.6, 2), (0.9, 2))))
    res = invoke("calibrate", g, "--format", "csv", "--n-boot", "10", db=db_path)
    assert res.exit_code == 0, res.output
    head, row = list(csv.reader(io.StringIO(res.stdout)))
    row = dict(zip(head, row))
    assert row["aspect_type"] == "'@SUM(1)" and row["low"] == "-0.0500"
