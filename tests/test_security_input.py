"""Issue 12 (points 7-9): clear errors for bad numbers, input limits, CSV exports a spreadsheet cannot run.

Each problem found is replayed: on the CLI (in process, exit code 1, a one-line ``Error: ...``, no
traceback, the database unchanged) and in the library that the pages call. Limits are tested at the
boundary: exactly the limit is accepted, one more is refused.
"""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from click.testing import CliRunner

from medeval.accounts.auth import add_user, get_user
from medeval.annotation import campaigns as cp
from medeval.annotation import cases as cs
from medeval.annotation import tasks
from medeval.cli import main
from medeval.core import csvsafe, limits
from medeval.core.errors import InputError, MedevalError
from medeval.store.db import connect
from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, db_dump, write
from tests.test_tasks import tdb  # noqa: F401  (fixture: cases, responses, judgements and four users)

PW = "a-long-password"
EVIL = ['=HYPERLINK("http://x","y")', "+1", "-cmd", "@SUM(1)"]
DEEP = 100_000


def fails(db, *args) -> str:
    """Run a command that must fail cleanly: exit 1, one line ``Error: ...``, the database unchanged."""
    before = db_dump(db)
    res = CliRunner().invoke(main, [str(a) for a in args], env={"MEDEVAL_DB": str(db)}, catch_exceptions=False)
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert res.exit_code == 1, res.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.output
    assert "Traceback" not in res.output
    assert db_dump(db) == before
    return lines[0]


@pytest.fixture
def scored(db_path, tmp_path):
    """The small knowledge base and responses imported and scored (lexical metrics), three annotators."""
    from medeval.engine import thresholds as th
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db

    files = {"kb": write(tmp_path / "kb.csv", KB_CSV), "responses": write(tmp_path / "r.csv", RESP_CSV),
             "models": write(tmp_path / "m.csv", MODELS_CSV)}
    with connect(db_path) as db:
        import_files(db, **files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        th.grade_db(db)
        for u in ("doc1", "doc2", "doc3", "res"):
            add_user(db, u, PW, "researcher" if u == "res" else "annotator")
    return db_path


CREATE = ("campaign", "create", "--name", "round 1", "--annotators", "doc1,doc2,doc3", "--metrics", "rouge1",
          "--aspect-types", "enumerated")


# ---------------------------------------------------------------- 7. numbers on the CLI and in the library

@pytest.mark.parametrize("args, says", [
    (("--width", "0"), "--width must be a number in (0, 1]; got 0.0"),
    (("--width", "nan"), "--width must be a number in (0, 1]; got nan"),
    (("--width", "inf"), "--width must be a number in (0, 1]; got inf"),
    (("--width", "-0.1"), "--width must be a number in (0, 1]"),
    (("--width", "1e-9"), "the limit is 1,000"),  # a billion intervals: memory ran out before the fix
    (("--seed", "-1"), "--seed must be a whole number in [0, 4294967295]; got -1"),
    (("--seed", str(2**32)), "--seed must be a whole number in [0, 4294967295]"),
], ids=["width-0", "width-nan", "width-inf", "width-negative", "width-tiny", "seed-negative", "seed-2^32"])
def test_campaign_create_bad_numbers_are_one_line_errors(scored, args, says):
    assert says in fails(scored, *CREATE, *args)


def test_campaign_create_random_bad_numbers(scored):
    base = ("campaign", "create-random", "--name", "v", "--annotators", "doc1,doc2,doc3")
    assert "--seed must be a whole number" in fails(scored, *base, "--seed", "-1")
    assert "--n (responses drawn) must be a whole number in [1, 100000]" in fails(scored, *base, "--n", "1000000")


def test_bucket_config_is_checked_in_the_library_for_the_page(scored):
    """The New campaign page previews with sample_buckets and creates with create_bucket_campaign."""
    with connect(scored) as db:
        res = get_user(db, "res")
        for bad in ({"width": 0.0}, {"width": math.nan}, {"seed": -1}, {"per_interval": 0}, {"k": 0}):
            cfg = cp.BucketConfig(("rouge1",), ("enumerated",), **{"width": 0.1, **bad})
            with pytest.raises(InputError, match="must be"):
                cp.sample_buckets(db, cfg)
            with pytest.raises(InputError, match="must be"):
                cp.create_bucket_campaign(db, "x", cfg, ["doc1", "doc2", "doc3"], actor=res)
        with pytest.raises(InputError, match="--seed"):
            cp.create_random_campaign(db, "x", 2, ["doc1"], k=1, seed=-1, actor=res)
        assert db.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0] == 0


def test_calibrate_bad_seed_and_n_boot(scored, tmp_path):
    g = write(tmp_path / "g.csv", "metric,aspect_type,score,tier\nrouge1,enumerated,0.1,0\nrouge1,enumerated,0.9,2\n")
    assert "--seed must be a whole number" in fails(scored, "calibrate", g, "--seed", "-1")
    assert "--n-boot must be a whole number in [0, 10000]" in fails(scored, "calibrate", g, "--n-boot", "10000001")


TASK = ("task", "create", "--type", "rubric", "--name", "t", "--annotators", "doc1,doc2", "--set", "dataset=clin")


@pytest.mark.parametrize("args, says", [
    (("--seed", "-1"), "--seed must be a whole number in [0, 4294967295]; got -1"),
    (("--k", "0"), "--k (annotators per item) must be a whole number in [1, 1000]; got 0"),
    (("--set", "max_items=-1"), "(max_items) must be a whole number in [0, 100000]; got -1"),
    (("--set", "max_items=Infinity"), "(max_items) must be a whole number"),
    (("--set", "max_items=1e400"), "(max_items) must be a whole number"),
    (("--set", "max_items=NaN"), "(max_items) must be a whole number"),
    (("--set", "max_items=2.5"), "(max_items) must be a whole number"),
    (("--set", "max_items=true"), "(max_items) must be a whole number"),
    (("--set", "max_items=" + "[" * DEEP), "(max_items) must be a whole number"),
    (("--set", "criteria=" + "[" * DEEP + "]" * DEEP), "nested more than 20 levels deep"),
], ids=["seed-negative", "k-0", "max_items-negative", "max_items-Infinity", "max_items-1e400", "max_items-NaN",
        "max_items-2.5", "max_items-true", "max_items-deep-json", "criteria-deep-json"])
def test_task_create_bad_settings_are_one_line_errors(tdb, db_path, args, says):  # noqa: F811
    assert says in fails(db_path, *TASK, *args)


def test_task_create_deep_criteria_file(tdb, db_path, tmp_path):  # noqa: F811
    crit = write(tmp_path / "crit.json", "[" * DEEP + "]" * DEEP)
    assert "nested more than 20 levels deep" in fails(db_path, *TASK, "--criteria", crit)


def test_int_settings_are_checked_in_the_library(tdb):  # noqa: F811
    t = tasks.get("accr")
    with pytest.raises(InputError, match=r"\(per_model\) must be a whole number in \[1, 100000\]; got 0"):
        t.check_config(tdb, {"per_model": 0})
    with pytest.raises(InputError, match=r"\(max_items\) must be a whole number in \[0, 100000\]; got 100001"):
        tasks.preview(tdb, "rubric", {"dataset": "clin", "max_items": 100_001}, actor=None)
    # within the declared bound, a count beyond what exists is refused too (issue 22: "Questions = 99999")
    with pytest.raises(MedevalError, match=r"100,000 asked for, but this data set has 3 .*choose at most 3"):
        tasks.preview(tdb, "rubric", {"dataset": "clin", "max_items": 100_000}, actor=None)
    assert tasks.preview(tdb, "rubric", {"dataset": "clin", "max_items": 3}, actor=None)["items"] == 3


# ---------------------------------------------------------------- 8. limits where data enters

def test_campaign_name_limit_at_the_boundary(tdb):  # noqa: F811
    cid = tasks.create_campaign(tdb, "rubric", "n" * limits.NAME_MAX_CHARS, ["doc1"], k=1,
                                config={"dataset": "clin"}, actor=None)
    assert tdb.conn.execute("SELECT length(name) FROM campaigns WHERE id = ?", (cid,)).fetchone()[0] == 200
    before = db_dump_conn(tdb)
    with pytest.raises(InputError, match="campaign name is 201 characters long; the limit is 200"):
        tasks.create_campaign(tdb, "rubric", "n" * 201, ["doc1"], k=1, config={"dataset": "clin"}, actor=None)
    with pytest.raises(InputError, match="NUL byte"):
        tasks.create_campaign(tdb, "rubric", "a\x00b", ["doc1"], k=1, config={"dataset": "clin"}, actor=None)
    with pytest.raises(InputError, match="line break"):
        tasks.create_campaign(tdb, "rubric", "a\nb", ["doc1"], k=1, config={"dataset": "clin"}, actor=None)
    assert db_dump_conn(tdb) == before


def db_dump_conn(db) -> list:
    return [(t, sorted(map(repr, db.conn.execute(f"SELECT * FROM [{t}]"))))
            for (t,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]


def test_one_megabyte_campaign_name_on_the_cli(scored):
    msg = fails(scored, "campaign", "create", "--name", "x" * 1_000_000, "--annotators", "doc1,doc2,doc3",
                "--metrics", "rouge1", "--aspect-types", "enumerated")
    assert "campaign name is 1,000,000 characters long; the limit is 200" in msg


def test_one_megabyte_task_campaign_name_on_the_cli(tdb, db_path):  # noqa: F811
    huge = "x" * 1_000_000
    msg = fails(db_path, "task", "create", "--type", "rubric", "--name", huge, "--annotators", "doc1",
                "--k", "1", "--set", "dataset=clin")
    assert "the limit is 200" in msg and len(msg) < 300


def test_bucket_campaign_name_limit(scored):
    cfg = cp.BucketConfig(("rouge1",), ("enumerated",), 0.1, 10, 3, 0)
    with connect(scored) as db:
        cp.create_bucket_campaign(db, "b" * 200, cfg, ["doc1", "doc2", "doc3"], actor=None)
        with pytest.raises(InputError, match="the limit is 200"):
            cp.create_bucket_campaign(db, "b" * 201, cfg, ["doc1", "doc2", "doc3"], actor=None)


def test_task_flag_note_limit(tdb):  # noqa: F811
    cid = tasks.create_campaign(tdb, "rubric", "r", ["doc1"], k=1, config={"dataset": "clin"}, actor=None)
    doc = get_user(tdb, "doc1")
    item = tasks.task_state(tdb, doc, cid).item.item_id
    tasks.flag_item(tdb, doc, item, "n" * limits.NOTE_MAX_CHARS, client_token="f1")
    with pytest.raises(InputError, match="the flag note is 2,001 characters long; the limit is 2,000"):
        tasks.flag_item(tdb, doc, item, "n" * 2001, client_token="f2")
    with pytest.raises(InputError, match="the flag note is 10,485,760 characters long"):
        tasks.flag_item(tdb, doc, item, "n" * 10 * 2**20, client_token="f3")
    with pytest.raises(InputError, match="NUL byte"):
        tasks.flag_item(tdb, doc, item, "bad\x00note", client_token="f4")
    assert [f["note"] for f in tasks.flags(tdb, cid, actor=None)] == ["n" * 2000]


def test_grade_flag_note_limit(scored):
    cfg = cp.BucketConfig(("rouge1",), ("enumerated",), 0.1, 10, 1, 0)
    with connect(scored) as db:
        cid = cp.create_bucket_campaign(db, "g", cfg, ["doc1"], actor=None)
        doc = get_user(db, "doc1")
        item = cp.next_item(db, doc, cid)
        cp.submit_grade(db, doc, item, tier=None, skipped=True, flagged=True, note="n" * 2000, client_token="t1")
        with pytest.raises(InputError, match="the flag note is 2,001 characters long; the limit is 2,000"):
            cp.submit_grade(db, doc, item, tier=1, flagged=True, note="n" * 2001, client_token="t2")
        with pytest.raises(InputError, match="NUL byte"):
            cp.submit_grade(db, doc, item, tier=1, flagged=True, note="a\x00", client_token="t3")
        assert db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 1


def test_deep_rubric_json_is_refused_with_the_limit_named(tdb):  # noqa: F811
    t = tasks.get("rubric")
    for text in ("[" * DEEP + "]" * DEEP, "[" * 21 + "]" * 21):
        with pytest.raises(InputError, match="nested more than 20 levels deep"):
            t.check_config(tdb, {"dataset": "clin", "criteria": text})
    with pytest.raises(InputError, match="nested more than 20 levels deep"):
        t.check_config(tdb, {"dataset": "clin", "criteria": [[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]})
    crit = {"key": "k", "name": "Safety", "question": "q" * 2001, "anchors": list("abcde")}
    with pytest.raises(InputError, match="the question is 2,001 characters long; the limit is 2,000"):
        t.check_config(tdb, {"dataset": "clin", "criteria": json.dumps([crit])})
    crit["question"] = "Safe?"
    assert t.check_config(tdb, {"dataset": "clin", "criteria": json.dumps([crit])})["criteria"][0]["key"] == "k"


def test_json_depth_at_the_boundary():
    assert limits.load_json_limited("[" * 20 + "]" * 20, "x") is not None
    with pytest.raises(InputError, match="nested more than 20 levels deep"):
        limits.load_json_limited("[" * 21 + "]" * 21, "x")
    assert limits.json_depth('["[[[[", {"a": "]]"}]') == 2  # brackets in strings do not count
    with pytest.raises(InputError, match="the limit is 1,000,000"):
        limits.load_json_limited(" " * 1_000_001, "x")


def test_check_number_and_check_text():
    assert limits.check_number(1, what="w", low=0, high=1, low_open=True) == 1
    for bad in (0, math.nan, math.inf, -math.inf, True, "abc", None, 1.0000001):
        with pytest.raises(InputError):
            limits.check_number(bad, what="w", low=0, high=1, low_open=True)
    assert limits.check_number("7", what="w", low=0, integer=True) == 7
    assert limits.check_text("é" * 200, what="n", max_chars=200) == "é" * 200
    with pytest.raises(InputError, match="must be text"):
        limits.check_text(5, what="n")


def _judgements(tmp_path, scores=None, rationale="Doctor 1: 5 points. Doctor 2: 1 points. Doctor 3: 4 points."):
    row = {"case": "c1", "question": 1, "judge": "judge-z", "rationale": rationale,
           "models": ["alpha", "beta", "gamma"]}
    if scores is not None:
        row["scores"] = scores
    return write(tmp_path / "j.jsonl", json.dumps(row))


def test_imported_judge_scores_out_of_range_are_refused(tdb, db_path, tmp_path):  # noqa: F811
    ok = {"alpha": 10, "beta": 0, "gamma": 4.5}
    assert cs.read_judgements(_judgements(tmp_path, ok))[0].scores == {"alpha": 10.0, "beta": 0.0, "gamma": 4.5}
    for bad, shown in ((99, "99"), (10.5, "10.5"), (-1, "-1")):
        f = _judgements(tmp_path, {**ok, "beta": bad})
        msg = fails(db_path, "import-cases", "--dataset", "clin", "--judgements", f)
        assert f"the score of 'beta' is {shown}, outside 0 to 10" in msg and "row 1" in msg
    # the rationale path applies the same range
    f = _judgements(tmp_path, rationale="Doctor 1: 99 points. Doctor 2: 1 points. Doctor 3: 4 points.")
    assert "the score of 'alpha' is 99, outside 0 to 10" in fails(db_path, "import-cases", "--dataset", "clin",
                                                                  "--judgements", f)


def test_nul_bytes_and_long_texts_in_imported_cases(tdb, db_path, tmp_path):  # noqa: F811
    def resp(text, name="r.jsonl"):
        return write(tmp_path / name, json.dumps({"case": "c1", "question": 1, "model": "delta", "response": text}))

    assert cs.read_responses(resp("r" * limits.TEXT_MAX_CHARS))[0].response == "r" * 20_000
    msg = fails(db_path, "import-cases", "--dataset", "clin", "--responses", resp("r" * 20_001))
    assert "column 'response' is 20,001 characters long; the limit is 20,000" in msg and "row 1" in msg
    msg = fails(db_path, "import-cases", "--dataset", "clin", "--responses", resp("bad\x00text"))
    assert "column 'response' contains a NUL byte" in msg
    raw = write(tmp_path / "r.csv", "case,question,model,response\nc1,1,delta,bad\x00text\n")
    assert "r.csv, row 2: column 'response' contains a NUL byte" in fails(
        db_path, "import-cases", "--dataset", "clin", "--responses", raw)
    long_model = write(tmp_path / "m.jsonl", json.dumps({"case": "c1", "question": 1, "model": "m" * 201,
                                                         "response": "x"}))
    assert "the model name is 201 characters long; the limit is 200" in fails(
        db_path, "import-cases", "--dataset", "clin", "--responses", long_model)
    assert "the dataset name is 201 characters long" in fails(
        db_path, "import-cases", "--dataset", "d" * 201, "--responses", resp("fine"))


def test_deep_json_input_file_is_refused_with_the_limit_named(tdb, db_path, tmp_path):  # noqa: F811
    deep = write(tmp_path / "cases.json", "[" + '{"a":' * DEEP + "1" + "}" * DEEP + "]")
    assert "nested more than 20 levels deep" in fails(db_path, "import-cases", "--dataset", "x", "--cases", deep)
    deep_line = write(tmp_path / "r.jsonl", json.dumps({"case": "c1", "question": 1, "model": "m",
                                                        "response": "x", "extra": [[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]}))
    assert "row 1: the row is nested more than 20 levels deep" in fails(
        db_path, "import-cases", "--dataset", "clin", "--responses", deep_line)
    scores_cell = _judgements(tmp_path, "[" * 5000 + "]" * 5000)  # within the text limit, past the parser's
    assert "nested more than 20 levels deep" in fails(db_path, "import-cases", "--dataset", "clin",
                                                      "--judgements", scores_cell)


def test_exam_and_factcheck_files_refuse_nul_bytes_and_long_names(tmp_path):
    from medeval.stats.exam import read_answers, read_key
    from medeval.stats.factcheck import read_factcheck

    key = write(tmp_path / "key.json", json.dumps([{"id": "q1", "answer": "A", "option": {"A": "x", "B": "y"}}]))
    k = read_key(key)
    with pytest.raises(InputError, match="row 1: column 'response' contains a NUL byte"):
        read_answers(write(tmp_path / "a.jsonl", json.dumps({"id": "q1", "response": "A\x00"})), k)
    with pytest.raises(InputError, match="the model name is 201 characters long"):
        read_answers(write(tmp_path / "a.jsonl", json.dumps({"id": "q1", "response": "A", "model": "m" * 201})), k)
    with pytest.raises(InputError, match="nested more than 20 levels deep"):
        read_key(write(tmp_path / "deep.json", "[" * DEEP + "]" * DEEP))
    line = {"id": "1", "type": "t", "label": "support", "claim": "c\x00", "response": "yes"}
    with pytest.raises(InputError, match="column 'claim' contains a NUL byte"):
        read_factcheck(write(tmp_path / "f.jsonl", json.dumps(line)))
    line.update(claim="c", model="m" * 201)
    with pytest.raises(InputError, match="field 'model' is 201 characters long"):
        read_factcheck(write(tmp_path / "f.jsonl", json.dumps(line)))


# ---------------------------------------------------------------- 9. CSV exports

def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_safe_cell():
    assert [csvsafe.safe_cell(v) for v in EVIL] == ["'" + v for v in EVIL]
    assert [csvsafe.safe_cell(v) for v in ("\tx", "\rx", "a=b", "", "-0.25", "-3", "-1e-05")] == \
        ["'\tx", "'\rx", "a=b", "", "-0.25", "-3", "-1e-05"]
    assert [csvsafe.safe_cell(v) for v in (-0.25, -3, 0, None, True)] == [-0.25, -3, 0, None, True]
    assert cells(csvsafe.csv_text([{"=h": "=x", "n": -0.25}])) == [["'=h", "n"], ["'=x", "-0.25"]]


def test_grades_and_audit_csv_helpers_prefix_names(scored):
    from medeval.accounts import auth

    with connect(scored) as db:
        add_user(db, "-cmd", PW, "annotator")
        cfg = cp.BucketConfig(("rouge1",), ("enumerated",), 0.1, 10, 1, 0)
        cid = cp.create_bucket_campaign(db, EVIL[0], cfg, ["-cmd"], actor=None)
        u = get_user(db, "-cmd")
        cp.submit_grade(db, u, cp.next_item(db, u, cid), tier=2, client_token="g")
        got = cells(cp.grades_csv(cp.current_grades(db, cid, actor=None)))
        assert got[0] == cp.GRADES_CSV_COLUMNS and got[1][2] == "'-cmd"
        audit = cells(csvsafe.csv_text(auth.audit_rows(db), header=auth.AUDIT_COLUMNS))
        assert any("'-cmd" in r for r in audit[1:])


def test_judge_agreement_csv_prefixes_model_names(tmp_path):
    from medeval.stats import judge as jg

    rows = [{"case": c, "model": m, "judge_score": js, "human_score": hs}
            for c in ("c1", "c2") for m, js, hs in ((EVIL[3], 4, 5), ("b", 2, 1))]
    text = jg.render(jg.summarise(jg.read_judge_file(write(tmp_path / "j.jsonl", "\n".join(map(json.dumps, rows))))),
                     "csv")
    got = [c for r in cells(text)[1:] for c in r]
    assert "'" + EVIL[3] in got and EVIL[3] not in got


# ---------------------------------------------------------------- follow-ups: seeds and bootstrap sizes in the library

AGREE = "item,rater,value\n1,a,1\n1,b,2\n2,a,2\n2,b,2\n3,a,1\n3,b,1\n4,a,0\n4,b,1\n"
SAME = "item,rater,value\n1,a,1\n1,b,1\n2,a,1\n2,b,1\n"  # alpha undefined: no bootstrap runs, so a bad n_boot is quick


def test_agreement_cli_refuses_a_bad_seed_and_n_boot(db_path, tmp_path):
    f, same = write(tmp_path / "r.csv", AGREE), write(tmp_path / "s.csv", SAME)
    assert "--seed must be a whole number in [0, 4294967295]; got -1" in fails(
        db_path, "agreement", f, "--level", "ordinal", "--seed", "-1")  # was a numpy traceback
    assert "--seed must be a whole number" in fails(db_path, "agreement", f, "--level", "ordinal",
                                                    "--seed", str(2**32))
    assert "--n-boot must be a whole number in [0, 10000]; got 10001" in fails(
        db_path, "agreement", same, "--level", "ordinal", "--n-boot", "10001")
    ok = CliRunner().invoke(main, ["agreement", str(f), "--level", "ordinal", "--n-boot", "10", "--seed",
                                   str(2**32 - 1)])
    assert ok.exit_code == 0, ok.output


def test_agreement_library_refuses_a_bad_seed_and_n_boot(db):
    from medeval.reports.dashboard import campaign_agreement, panel_statistics
    from medeval.stats.agreement import RatingTable, cohen_kappa, krippendorff_alpha, summarise

    rows = [("1", "a", "1"), ("1", "b", "1"), ("2", "a", "1"), ("2", "b", "1")]
    t = RatingTable.from_long(rows)
    for call in (lambda **kw: summarise(rows, "ordinal", **kw), lambda **kw: krippendorff_alpha(t, "ordinal", **kw),
                 lambda **kw: cohen_kappa(t, "linear", **kw)):
        with pytest.raises(InputError, match=r"n_boot must be a whole number in \[0, 10000\]; got 10001"):
            call(n_boot=limits.BOOT_MAX + 1)
        with pytest.raises(InputError, match="n_boot must be a whole number"):
            call(n_boot=-1)
        with pytest.raises(InputError, match=r"seed must be a whole number in \[0, 4294967295\]; got -1"):
            call(rng=-1)
        call(n_boot=limits.BOOT_MAX, rng=limits.SEED_MAX)  # the limits themselves are accepted
    with pytest.raises(InputError, match="seed must be"):
        panel_statistics([], seed=-1)
    with pytest.raises(InputError, match="n_boot must be"):  # refused before the campaign is even looked up
        campaign_agreement(db, 999, actor=None, n_boot=10**9)
    with pytest.raises(InputError, match="seed must be"):
        campaign_agreement(db, 999, actor=None, seed=2**32)


def test_report_agreement_cli_refuses_a_bad_seed(db_path, tmp_path):
    assert "--seed must be a whole number" in fails(db_path, "report-agreement", "--campaign", "1", "--out",
                                                    tmp_path / "o", "--seed", "-1", "--no-pdf")
    assert "--n-boot must be a whole number in [0, 10000]" in fails(
        db_path, "report-agreement", "--campaign", "1", "--out", tmp_path / "o", "--n-boot", "10001", "--no-pdf")


def test_calibrate_rows_checks_n_boot_and_seed_itself():
    from medeval.calibration.cutoffs import calibrate_rows

    rows = [{"metric": "rouge1", "aspect_type": "enumerated", "score": 0.1, "tier": 0},
            {"metric": "rouge1", "aspect_type": "enumerated", "score": 0.9, "tier": 2}]
    with pytest.raises(InputError, match=r"n_boot must be a whole number in \[0, 10000\]"):
        calibrate_rows(rows, n_boot=limits.BOOT_MAX + 1)
    with pytest.raises(InputError, match="seed must be a whole number"):
        calibrate_rows(rows, rng=-1)
    assert calibrate_rows(rows, n_boot=limits.BOOT_MAX, rng=limits.SEED_MAX)[0].n == 2


@pytest.mark.parametrize("score, says", [
    ("nan", "score 'nan' is not a finite number"),
    ("inf", "score 'inf' is not a finite number"),
    ("-inf", "score '-inf' is not a finite number"),
    ("1.5", "score 1.5 is outside the rouge1 range [0, 1]"),
    ("-0.1", "score -0.1 is outside the rouge1 range [0, 1]"),
])
def test_read_graded_refuses_scores_outside_the_metric(tmp_path, score, says):
    from medeval.calibration.graded_file import read_graded

    f = write(tmp_path / "g.csv", f"metric,aspect_type,score,tier\nrouge1,enumerated,0.5,1\nrouge1,enumerated,{score},0\n")
    with pytest.raises(InputError) as e:
        read_graded(f)
    assert f"g.csv, row 3: {says}" in str(e.value) and len(str(e.value).splitlines()) == 1


def test_read_graded_accepts_the_metric_range_and_uses_the_limits(scored, tmp_path):
    from medeval.calibration.graded_file import read_graded

    ok = write(tmp_path / "ok.csv", "metric,aspect_type,score,tier\nrouge1,enumerated,0,0\nrouge1,enumerated,1,2\n"
                                    "cosine,enumerated,-1,0\n")
    assert [r["score"] for r in read_graded(ok)] == [0.0, 1.0, -1.0]
    nul = write(tmp_path / "n.csv", "metric,aspect_type,score,tier\nrouge1,enum\x00erated,0.5,1\n")
    assert "n.csv, row 2: column 'aspect_type' contains a NUL byte" in fails(scored, "calibrate", nul)
    deep = write(tmp_path / "d.jsonl", json.dumps({"metric": "rouge1", "aspect_type": "enumerated", "score": 0.5,
                                                   "tier": 1, "x": [[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]}))
    assert "row 1: the row is nested more than 20 levels deep" in fails(scored, "calibrate", deep)
    nan = write(tmp_path / "nan.csv", "metric,aspect_type,score,tier\nrouge1,enumerated,nan,1\n")
    assert "nan.csv, row 2: score 'nan' is not a finite number" in fails(scored, "calibrate", nan)


def test_judge_file_goes_through_the_limits(tmp_path):
    from medeval.stats import judge as jg

    nul = write(tmp_path / "j.csv", "case,model,judge_score,human_score\nc1,m\x00x,4,5\n")
    with pytest.raises(InputError, match="j.csv, row 2: column 'model' contains a NUL byte"):
        jg.read_judge_file(nul)
    long = write(tmp_path / "l.csv", f"case,model,judge_score,human_score\nc1,{'m' * 20_001},4,5\n")
    with pytest.raises(InputError, match="column 'model' is 20,001 characters long"):
        jg.read_judge_file(long)


# ---------------------------------------------------------------- follow-ups: names in Plotly figures are plain text

HOSTILE = '<a href="http://evil.example">x</a><b>y</b>'


def _strings(obj):
    """Every string anywhere in a figure's dict (data, layout, hover templates, category arrays)."""
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif hasattr(v, "tolist") and not isinstance(v, (int, float)):
            stack.append(v.tolist())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def _only_escaped(fig) -> None:
    texts = list(_strings(fig.to_dict()))
    assert any("&lt;a href=" in s for s in texts), "the hostile name is not in the figure at all"
    assert not any("<a href" in s or "<b>" in s or "</a>" in s for s in texts), \
        [s for s in texts if "<a href" in s or "<b>" in s]


def test_leaderboard_figures_escape_model_and_aspect_names():
    from medeval.reports import leaderboard as lb

    shares = {"completely_wrong": 0.2, "partially_correct": 0.3, "basically_correct": 0.5, "total_score": 6.5,
              "level": 1}
    rep = {"models": [{"model": HOSTILE, "averaged": shares}, {"model": "plain", "averaged": shares}],
           "aspects": [{"model": HOSTILE, "aspect": HOSTILE, "averaged": shares},
                       {"model": "plain", "aspect": "Drugs", "averaged": shares}], "ttests": []}
    board = lb.rows(rep)
    _only_escaped(lb.shares_figure(board, "Tier shares"))
    heat = lb.aspect_heatmap(rep)
    _only_escaped(heat)
    assert "&lt;a href=" in heat.data[0].x[0] + heat.data[0].y[0] or "&lt;a href=" in heat.data[0].y[1]
    assert board[0]["model"] == HOSTILE  # the data itself is unchanged: only what Plotly draws is escaped


def test_agreement_report_figures_escape_annotator_names():
    from medeval.reports import agreement_report as rep

    est = {"value": 0.5, "ci95": [0.1, 0.9]}
    s = {"panel": [{"title": "Krippendorff's alpha", "estimate": est}],
         "annotators": [{"annotator": HOSTILE, "spearman_vs_panel": 0.4, "spearman_ci95": [0.1, 0.7],
                         "drift": [{"block": 1, "exact_agreement": 0.5, "answers": "1-10"}]},
                        {"annotator": "doc2", "spearman_vs_panel": None, "spearman_ci95": None, "drift": []}],
         "tier_distribution": [{"annotator": n, "tier": t, "count": 1} for n in (HOSTILE, "doc2") for t in range(3)],
         "machine": [{"aspect_type": "all", "against": a, "metric": "rouge1", "spearman": 0.3, "ci95": None}
                     for a in ("score", "tier")]}
    figs = dict(rep.figures(s))
    for name in ("annotators", "drift", "tiers"):
        _only_escaped(figs[name])
    for fig in figs.values():
        assert not any("<a href" in x or "<b>" in x for x in _strings(fig.to_dict()))


# ---------------------------------------------------------------- follow-ups: deep JSON refused before it is parsed

def _nested(depth: int) -> str:
    """An object nested ``depth`` levels deep (the object itself is level 1)."""
    return '{"a": ' * (depth - 1) + '{"a": 1' + "}" * depth


def test_tables_depth_limit_is_the_one_in_limits():
    from medeval.core import tables

    assert tables.JSON_MAX_DEPTH == limits.JSON_MAX_DEPTH  # tables cannot import limits (limits imports tables)


def test_read_table_refuses_deep_jsonl_before_parsing(tmp_path, monkeypatch):
    from medeval.core import tables

    ok = '{"case": "c1", "x": ' + _nested(limits.JSON_MAX_DEPTH - 1) + "}"  # the row: exactly the limit
    brackets = json.dumps({"case": "c2", "text": "[" * 5000 + "{" * 5000})  # brackets inside a string do not count
    f = write(tmp_path / "ok.jsonl", ok + "\n" + brackets + "\n")
    assert [n for n, _ in tables.read_table(f)[1]] == [1, 2]
    deep = write(tmp_path / "deep.jsonl", ok + "\n" + "[" * DEEP + "]" * DEEP + "\n")
    parsed = []
    real = json.loads
    monkeypatch.setattr(tables.json, "loads", lambda s, *a, **k: parsed.append(len(s)) or real(s, *a, **k))
    with pytest.raises(InputError) as e:
        tables.read_table(deep)  # was a RecursionError from the parser
    assert str(e.value).startswith(f"{deep}, row 2: the row is nested more than 20 levels deep -- flatten it")
    assert max(parsed) < DEEP  # the deep line never reached the parser
    one_more = write(tmp_path / "d21.jsonl", '{"x": ' + _nested(limits.JSON_MAX_DEPTH) + "}\n")
    with pytest.raises(InputError, match="row 1: the row is nested more than 20 levels deep"):
        tables.read_table(one_more)


def test_read_table_refuses_deep_json_before_parsing(tmp_path):
    from medeval.core import tables

    row = _nested(limits.JSON_MAX_DEPTH)  # a row exactly at the limit, in an array, in an object: accepted
    assert len(tables.read_table(write(tmp_path / "a.json", "[" + row + "]"))[1]) == 1
    assert len(tables.read_table(write(tmp_path / "b.json", '{"rows": [' + row + "]}"))[1]) == 1
    for text in ("[" * DEEP + "]" * DEEP, '[{"a": ' + "[" * DEEP + "]" * DEEP + "}]"):
        with pytest.raises(InputError, match="the JSON is nested more than 20 levels deep"):
            tables.read_table(write(tmp_path / "deep.json", text))
    # one level more than the limit: in a bare array it parses (22 levels) and is refused after; in an object too
    with pytest.raises(InputError, match="a row of the JSON is nested more than 20 levels deep"):
        tables.read_table(write(tmp_path / "d21.json", "[" + _nested(21) + "]"))
    with pytest.raises(InputError, match="nested more than 20 levels deep"):
        tables.read_table(write(tmp_path / "d21.json", '{"rows": [' + _nested(21) + "]}"))


def test_a_json_number_of_thousands_of_digits_is_a_clear_error(tmp_path):
    # Python's int() refuses more than 4,300 digits with a bare ValueError; a file carrying one is bad input
    huge = "9" * 5000
    for name, text in (("rows.jsonl", '{"id": 1, "response": ' + huge + '}\n'),
                       ("rows.json", '[{"id": 1, "response": ' + huge + '}]')):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match="thousands of digits") as e:
            limits.read_table_limited(path)
        assert name in str(e.value)
