"""Library-level tests of medeval.engine.importer.import_files: happy paths, idempotency,
bad input (clear InputError, database untouched) and all-or-nothing writes."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest

from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, db_dump, write
from medeval.core.errors import InputError
from medeval.engine.importer import import_files


# ---------------------------------------------------------------- helpers

def content(path) -> dict:
    """The imported data without ids or timestamps (comparable across databases)."""
    conn = sqlite3.connect(str(path))
    try:
        return {
            "kb": sorted(conn.execute(
                "SELECT disease, disease_en, aspect, aspect_type, reference, processed FROM kb_entries")),
            "models": sorted(conn.execute("SELECT name, backbone, kind FROM models")),
            "responses": sorted(conn.execute(
                "SELECT m.name, k.disease, k.aspect, r.raw, r.processed, r.note FROM responses r "
                "JOIN models m ON m.id = r.model_id JOIN kb_entries k ON k.id = r.kb_id")),
        }
    finally:
        conn.close()


def csv_records(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def as_jsonl(text: str) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in csv_records(text))


def as_json(text: str) -> str:
    return json.dumps(csv_records(text), ensure_ascii=False, indent=1)


def import_small(db, files):
    return import_files(db, kb=files["kb"], responses=files["responses"], models=files["models"])


EXPECTED_KB = [
    ("感冒", None, "Medications", "enumerated", "对乙酰氨基酚;布洛芬", "对乙酰氨基酚 布洛芬"),
    ("感冒", None, "Physical Examinations", "declarative", "咽部充血，扁桃体无肿大", "咽部充血,扁桃体无肿大"),
    ("感冒", None, "Primary Symptoms", "enumerated", "咳嗽;打喷嚏;流鼻涕;发热", "咳嗽 打喷嚏 流鼻涕 发热"),
    ("感冒", None, "Severity Level", "numeric", "4", "4"),
]


# ---------------------------------------------------------------- happy paths

def test_import_csv_stores_canonical_aspects_and_processed_text(db, db_path, small_files):
    s = import_small(db, small_files)
    assert (s.kb_added, s.models_added, s.responses_added) == (4, 2, 8)
    assert s.changed
    c = content(db_path)
    # 药物 and 危重等级 resolved to their English canonical names
    assert c["kb"] == EXPECTED_KB
    assert c["models"] == [("ModelA", None, "general"), ("ModelB", "ModelA", "medical")]
    resp = {(m, a): (raw, proc, note) for m, _, a, raw, proc, note in c["responses"]}
    assert len(resp) == 8
    # the answer pattern is extracted and split; the raw text is kept unchanged
    assert resp[("ModelA", "Primary Symptoms")] == ("感冒的主要症状包括：咳嗽、流涕和发烧。", "咳嗽 流涕 发烧", "pattern")
    assert resp[("ModelA", "Severity Level")][:2] == ("危重等级为4级", "4")
    assert resp[("ModelB", "Severity Level")][:2] == ("二级", "2")
    assert resp[("ModelB", "Medications")] == ("无", "无", "none_answer")


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_import_json_formats_give_same_rows_as_csv(tmp_path, fmt):
    from medeval.store.db import connect

    conv = as_jsonl if fmt == "jsonl" else as_json
    csv_dir, other_dir = tmp_path / "csv", tmp_path / fmt
    csv_dir.mkdir()
    other_dir.mkdir()
    with connect(csv_dir / "a.db") as db:
        import_files(db, kb=write(csv_dir / "kb.csv", KB_CSV), responses=write(csv_dir / "r.csv", RESP_CSV),
                     models=write(csv_dir / "m.csv", MODELS_CSV))
    with connect(other_dir / "b.db") as db:
        s = import_files(db, kb=write(other_dir / f"kb.{fmt}", conv(KB_CSV)),
                         responses=write(other_dir / f"r.{fmt}", conv(RESP_CSV)),
                         models=write(other_dir / f"m.{fmt}", conv(MODELS_CSV)))
    assert (s.kb_added, s.models_added, s.responses_added) == (4, 2, 8)
    a, b = content(csv_dir / "a.db"), content(other_dir / "b.db")
    assert a["kb"] == EXPECTED_KB
    assert a == b


def test_json_object_wrapping_one_list_and_numbers_as_values(db, db_path, tmp_path, small_files):
    import_small(db, small_files)
    before = content(db_path)
    # {"rows": [...]} is accepted; a JSON number 4 is the same reference as the CSV text "4"
    kb = {"rows": [dict(r, reference=4) if r["aspect"] == "危重等级" else r for r in csv_records(KB_CSV)]}
    s = import_files(db, kb=write(tmp_path / "kb2.json", json.dumps(kb, ensure_ascii=False)))
    assert (s.kb_added, s.kb_unchanged) == (0, 4)
    assert content(db_path) == before


def test_chinese_aspect_aliases_in_responses_match_kb(db, db_path, tmp_path, small_files):
    import_files(db, kb=small_files["kb"])
    s = import_files(db, responses=write(tmp_path / "r.csv",
                                         "model,disease,aspect,response\n"
                                         "ModelZ,感冒,主要症状,咳嗽\n"
                                         "ModelZ,感冒,药物,布洛芬\n"
                                         "ModelZ,感冒,危重程度,4\n"))
    assert s.responses_added == 3
    assert s.models_implicit == ["ModelZ"]
    got = sorted((a, raw) for _, _, a, raw, _, _ in content(db_path)["responses"])
    assert got == [("Medications", "布洛芬"), ("Primary Symptoms", "咳嗽"), ("Severity Level", "4")]


def test_explicit_aspect_type_allows_custom_aspect(db, db_path, tmp_path):
    kb = write(tmp_path / "kb.csv", "disease,aspect,reference,aspect_type\n"
                                    "流感,传播途径,飞沫;接触,enumerated\n"
                                    "流感,药物,奥司他韦,\n")
    resp = write(tmp_path / "r.csv", "model,disease,aspect,response\nM,流感,传播途径,飞沫和接触\nM,流感,药物,奥司他韦\n")
    s = import_files(db, kb=kb, responses=resp)
    assert (s.kb_added, s.responses_added) == (2, 2)
    c = content(db_path)
    assert ("流感", None, "传播途径", "enumerated", "飞沫;接触", "飞沫 接触") in c["kb"]
    assert ("流感", None, "Medications", "enumerated", "奥司他韦", "奥司他韦") in c["kb"]
    assert ("M", "流感", "传播途径", "飞沫和接触", "飞沫 接触", None) in c["responses"]


def test_custom_aspect_without_aspect_type_is_rejected(db, db_path, tmp_path):
    kb = write(tmp_path / "kb.csv", "disease,aspect,reference\n流感,传播途径,飞沫\n")
    with pytest.raises(InputError) as e:
        import_files(db, kb=kb)
    assert "unknown aspect '传播途径'" in str(e.value)
    assert "aspect_type" in str(e.value)
    assert content(db_path)["kb"] == []


def test_invalid_aspect_type_value_is_rejected(db, db_path, tmp_path):
    kb = write(tmp_path / "kb.csv", "disease,aspect,reference,aspect_type\n流感,传播途径,飞沫,list\n")
    with pytest.raises(InputError) as e:
        import_files(db, kb=kb)
    assert (e.value.file, e.value.row) == (str(kb), 2)
    assert "'list'" in str(e.value) and "enumerated, declarative or numeric" in str(e.value)
    assert content(db_path)["kb"] == []


# ---------------------------------------------------------------- idempotency

def test_reimport_same_files_changes_nothing(db, db_path, small_files):
    first = import_small(db, small_files)
    assert first.changed
    before = db_dump(db_path)
    second = import_small(db, small_files)
    assert (second.kb_added, second.models_added, second.models_updated, second.responses_added) == (0, 0, 0, 0)
    assert (second.kb_unchanged, second.models_unchanged, second.responses_unchanged) == (4, 2, 8)
    assert not second.changed
    assert db_dump(db_path) == before


def test_reimport_same_data_in_another_format_changes_nothing(db, db_path, tmp_path, small_files):
    import_small(db, small_files)
    before = db_dump(db_path)
    s = import_files(db, kb=write(tmp_path / "kb.jsonl", as_jsonl(KB_CSV)),
                     responses=write(tmp_path / "r.json", as_json(RESP_CSV)),
                     models=write(tmp_path / "m.jsonl", as_jsonl(MODELS_CSV)))
    assert not s.changed
    assert db_dump(db_path) == before


def test_models_file_updates_existing_model(db, db_path, tmp_path, small_files):
    import_small(db, small_files)
    s = import_files(db, models=write(tmp_path / "m2.csv", "model,backbone,kind\nModelA,,general\nModelB,,医疗\n"))
    assert (s.models_updated, s.models_unchanged, s.models_added) == (1, 1, 0)
    assert content(db_path)["models"] == [("ModelA", None, "general"), ("ModelB", None, "medical")]


# ---------------------------------------------------------------- bad input

VALID_EXTRA_KB = "disease,aspect,reference\n流感,药物,奥司他韦\n流感,主要症状,发热;咳嗽\n"

# id -> (files: {kind: (file name, text or bytes)}, failing kind, row or None, substrings of the message)
BAD = {
    "missing_column": (
        {"kb": ("kb.csv", "disease,aspect,ref\n流感,药物,奥司他韦\n")}, "kb", None,
        ["'reference' is missing", "found: disease, aspect, ref", "needs the columns disease, aspect, reference"]),
    "missing_columns_responses": (
        {"responses": ("r.csv", "model,disease,answer\nModelA,感冒,x\n")}, "responses", None,
        ["'aspect', 'response' are missing", "found: model, disease, answer", "needs the columns"]),
    "unknown_aspect": (
        {"kb": ("kb.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n流感,Primry Symptoms,发热\n")}, "kb", 3,
        ["unknown aspect 'Primry Symptoms'", "Did you mean", "'Primary Symptoms'", "aspect_type column"]),
    "unknown_aspect_in_responses": (
        {"responses": ("r.csv", "model,disease,aspect,response\nModelA,感冒,Medicatoins,x\n")}, "responses", 2,
        ["unknown aspect 'Medicatoins'", "Did you mean", "'Medications'"]),
    "row_after_multiline_cell": (
        {"kb": ("kb.csv", 'disease,aspect,reference\n流感,体格检查,"咽部充血\n体温升高"\n流感,Primry Symptoms,发热\n')},
        "kb", 4, ["unknown aspect 'Primry Symptoms'"]),
    "json_item_location": (
        {"kb": ("kb.json", json.dumps([{"disease": "流感", "aspect": "药物", "reference": "x"},
                                       {"disease": "流感", "aspect": "Primry Symptoms", "reference": "y"}],
                                      ensure_ascii=False))}, "kb", 2, ["unknown aspect 'Primry Symptoms'"]),
    "response_disease_not_in_kb": (
        {"responses": ("r.csv", "model,disease,aspect,response\nModelA,感冒,药物,布洛芬\nModelA,肺炎,药物,阿莫西林\n")},
        "responses", 3, ["肺炎", "this disease is not in the knowledge base", "import the knowledge-base entry first"]),
    "response_aspect_not_in_kb": (
        {"responses": ("r.csv", "model,disease,aspect,response\nModelC,感冒,Departments,呼吸科\n")}, "responses", 2,
        ["no reference for this aspect", "Departments", "import the knowledge-base entry first"]),
    "duplicate_kb_rows": (
        {"kb": ("kb.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n流感,Medications,布洛芬\n")}, "kb", 3,
        ["duplicate row", "流感 / Medications", "also on row 2", "keep one reference per disease and aspect"]),
    "duplicate_responses": (
        {"responses": ("r.csv", "model,disease,aspect,response\nModelC,感冒,药物,布洛芬\nModelC,感冒,药物,阿司匹林\n")},
        "responses", 3, ["duplicate response of ModelC", "also on row 2", "keep one response per model"]),
    "duplicate_responses_alias_spelling": (
        {"responses": ("r.csv", "model,disease,aspect,response\nModelC,感冒,药物,布洛芬\nModelC,感冒,Medications,阿司匹林\n")},
        "responses", 3, ["duplicate response of ModelC", "also on row 2", "keep one response per model"]),
    "gb18030_file": (
        {"kb": ("kb.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n".encode("gb18030"))}, "kb", None,
        ["not UTF-8", "line 2", "save it as UTF-8", "iconv"]),
    "latin1_file": (
        {"responses": ("r.csv", "model,disease,aspect,response\nModelC,flu,Medications,café\n".encode("latin-1"))},
        "responses", None, ["not UTF-8", "byte 0xe9", "line 2", "save it as UTF-8"]),
    "empty_file": (
        {"kb": ("kb.csv", "")}, "kb", None, ["the file is empty", "needs a header and at least one row"]),
    "blank_file": (
        {"models": ("m.csv", "\n  \n")}, "models", None, ["the file is empty"]),
    "header_only_csv": (
        {"kb": ("kb.csv", "disease,aspect,reference\n")}, "kb", None, ["header but no rows", "add data rows"]),
    "invalid_json": (
        {"kb": ("kb.json", '[{"disease": "流感", "aspect": "药物",\n "reference": }]')}, "kb", None,
        ["invalid JSON", "line 2", "fix the JSON syntax"]),
    "json_not_array": (
        {"kb": ("kb.json", '"just a string"')}, "kb", None, ["expected a JSON array of objects"]),
    "jsonl_line_not_object": (
        {"kb": ("kb.jsonl", '{"disease": "流感", "aspect": "药物", "reference": "x"}\n\n["流感", "主要症状", "y"]\n')},
        "kb", 3, ["expected a JSON object, found list", "each line must be one JSON object"]),
    "jsonl_invalid_line": (
        {"responses": ("r.jsonl", '{"model": "ModelC", "disease": "感冒", "aspect": "药物", "response": "x"}\n{"model": \n')},
        "responses", 2, ["invalid JSON", "each line must be one JSON object"]),
    "csv_too_many_values": (
        {"kb": ("kb.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n流感,主要症状,发热,咳嗽\n")}, "kb", 3,
        ["4 values but the header has 3 columns", "quote values that contain the delimiter"]),
    "invalid_kind": (
        {"models": ("m.csv", "model,backbone,kind\nModelC,,general\nModelD,ModelC,clinical\n")}, "models", 3,
        ["kind 'clinical'", "write general", "medical"]),
    "kb_conflicts_with_db": (
        {"kb": ("kb.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n感冒,Medications,阿司匹林\n")}, "kb", 3,
        ["感冒 / Medications is already in the database with a different reference", "not overwritten"]),
    "response_differs_from_db": (
        {"responses": ("r.csv", "model,disease,aspect,response\nModelC,感冒,药物,布洛芬\nModelA,感冒,药物,阿司匹林\n")},
        "responses", 3, ["ModelA already has a different response for 感冒 / Medications", "new model name"]),
    "responses_fail_with_valid_kb_and_models": (
        {"kb": ("kb.csv", VALID_EXTRA_KB),
         "models": ("m.csv", "model,backbone,kind\nModelC,ModelA,medical\nModelB,,general\n"),
         "responses": ("r.csv", "model,disease,aspect,response\nModelC,流感,药物,奥司他韦\nModelC,肺炎,药物,阿莫西林\n")},
        "responses", 3, ["this disease is not in the knowledge base"]),
    "responses_unreadable_with_valid_kb": (
        {"kb": ("kb.csv", VALID_EXTRA_KB), "responses": ("r.csv", "model,disease,aspect\nModelC,流感,药物\n")},
        "responses", None, ["'response' is missing"]),
    "responses_conflict_db_with_valid_kb": (
        {"kb": ("kb.csv", VALID_EXTRA_KB),
         "responses": ("r.csv", "model,disease,aspect,response\nModelD,流感,药物,奥司他韦\nModelB,感冒,药物,布洛芬\n")},
        "responses", 3, ["ModelB already has a different response", "not overwritten"]),
    # NUL bytes (issue 12, point 8): refused with the file, the line and the column, never stored
    "nul_in_kb_reference_csv": (
        {"kb": ("kb.csv", "disease,aspect,reference\n流感,药物,奥司他韦\n流感,主要症状,发热\x00咳嗽\n")}, "kb", 3,
        ["the reference contains a NUL byte (character 3)", "plain UTF-8 text"]),
    "nul_in_model_name": (
        {"models": ("m.csv", "model,backbone,kind\nModel\x00C,,general\n")}, "models", 2,
        ["the model contains a NUL byte", "plain UTF-8 text"]),
    "nul_in_response_jsonl": (
        {"responses": ("r.jsonl", '{"model": "ModelC", "disease": "感冒", "aspect": "药物", "response": "布洛芬"}\n'
                                  '{"model": "ModelC", "disease": "感冒", "aspect": "主要症状", "response": "x\\u0000y"}\n')},
        "responses", 2, ["the response contains a NUL byte (character 2)"]),
    # the responses file is read as a stream (issue 13): the same errors as when it was read whole
    "blank_responses_jsonl": (
        {"responses": ("r.jsonl", "\n  \n")}, "responses", None, ["the file is empty"]),
    "header_only_responses_csv": (
        {"responses": ("r.csv", "model,disease,aspect,response\n\n")}, "responses", None, ["header but no rows"]),
    "blank_header_responses_csv": (
        {"responses": ("r.csv", "\nmodel,disease,aspect,response\n")}, "responses", 1, ["the header row is blank"]),
    "missing_column_jsonl_lists_every_key": (
        {"responses": ("r.jsonl", '{"model": "ModelC", "disease": "感冒", "aspect": "药物"}\n'
                                  '{"model": "ModelC", "disease": "感冒", "aspect": "主要症状", "answer": "x"}\n')},
        "responses", None, ["'response' is missing (found: model, disease, aspect, answer)"]),
    "nul_in_disease_json": (
        {"kb": ("kb.json", '[{"disease": "流\\u0000感", "aspect": "药物", "reference": "x"}]')}, "kb", 1,
        ["the disease contains a NUL byte"]),
}

XFAIL: dict[str, str] = {}  # known library bugs, none open


def _params():
    for name in BAD:
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else []
        yield pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_bad_input_raises_clear_error_and_changes_nothing(case, db, db_path, tmp_path, small_files):
    files, failing, row, expected = BAD[case]
    import_small(db, small_files)  # valid data first, so "unchanged" means something
    before = db_dump(db_path)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    paths = {}
    for kind, (name, data) in files.items():
        p = bad_dir / name
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            write(p, data)
        paths[kind] = p
    with pytest.raises(InputError) as e:
        import_files(db, **paths)
    msg = str(e.value)
    assert msg.startswith(str(paths[failing])), msg
    assert e.value.file == str(paths[failing])
    assert e.value.row == row
    if row is not None:
        assert f"{paths[failing]}, row {row}: " in msg
    for s in expected:
        assert s in msg, f"{s!r} not in {msg!r}"
    assert db_dump(db_path) == before
    # the connection is usable afterwards (no transaction left open)
    assert not db.conn.in_transaction


def test_did_you_mean_lists_each_aspect_once(db, tmp_path):
    kb = write(tmp_path / "kb.csv", "disease,aspect,reference\n流感,Primry Symptoms,发热\n")
    with pytest.raises(InputError) as e:
        import_files(db, kb=kb)
    hint = str(e.value).split("Did you mean:")[1].split("?")[0]
    names = [n.strip() for n in hint.split(",")]
    assert len(names) == len(set(names)), names


def test_nothing_to_import_is_an_error(db, db_path):
    from medeval.core.errors import MedevalError

    before = db_dump(db_path)
    with pytest.raises(MedevalError, match="nothing to import"):
        import_files(db)
    assert db_dump(db_path) == before


def test_missing_file_names_the_path(db, db_path, tmp_path):
    before = db_dump(db_path)
    with pytest.raises(InputError) as e:
        import_files(db, kb=tmp_path / "nope.csv")
    assert str(tmp_path / "nope.csv") in str(e.value) and "file not found" in str(e.value)
    assert db_dump(db_path) == before


# ---------------------------------------------------------------- atomicity of the write phase

@pytest.mark.parametrize("fail_after", [0, 2, 3, 4, 6])
def test_failure_during_write_phase_rolls_back_everything(fail_after, db, db_path, tmp_path, small_files, monkeypatch):
    import medeval.engine.importer as importer

    import_small(db, small_files)
    before = db_dump(db_path)
    kb = write(tmp_path / "kb2.csv", VALID_EXTRA_KB + "流感,危重等级,3\n")  # 3 new KB rows -> 3 process() calls
    models = write(tmp_path / "m2.csv", "model,backbone,kind\nModelB,,general\nModelE,ModelA,medical\n")
    resp = write(tmp_path / "r2.csv", "model,disease,aspect,response\n"
                                      "ModelA,流感,药物,奥司他韦\nModelB,流感,主要症状,发热\n"
                                      "ModelF,流感,危重等级,3级\nModelE,流感,药物,无\n")
    real = importer.process
    calls = []

    def flaky(*args, **kwargs):
        calls.append(args[0])
        if len(calls) > fail_after:
            raise RuntimeError("disk on fire")
        return real(*args, **kwargs)

    monkeypatch.setattr(importer, "process", flaky)
    with pytest.raises(RuntimeError, match="disk on fire"):
        import_files(db, kb=kb, models=models, responses=resp)
    assert len(calls) == fail_after + 1
    assert db_dump(db_path) == before
    assert not db.conn.in_transaction

    # control: the same import succeeds without the fault, so the rollback above undid real writes
    monkeypatch.setattr(importer, "process", real)
    s = import_files(db, kb=kb, models=models, responses=resp)
    assert (s.kb_added, s.models_added, s.models_updated, s.responses_added) == (3, 2, 1, 4)
    assert db_dump(db_path) != before


# ---------------------------------------------------------------- streaming (issue 13: memory flat in the rows)

def responses_text(n_models: int, fmt: str = "csv", pad: int = 0) -> str:
    """Responses of ``n_models`` new models to the 4 aspects of the small knowledge base (4 rows per model)."""
    rows = [{"model": f"Stream-{m:04d}", "disease": "感冒", "aspect": a, "response": f"{a} {m} " + "x" * pad}
            for m in range(n_models) for a in ("Primary Symptoms", "Medications", "Physical Examinations",
                                               "Severity Level")]
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    out = io.StringIO()
    w = csv.DictWriter(out, ["model", "disease", "aspect", "response"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def count_transactions(monkeypatch, on_enter=None) -> list:
    """Record the importer's write transactions (``on_enter()``'s value at the start of each)."""
    import medeval.engine.importer as importer

    seen, real = [], importer.transaction

    def watched(db):
        seen.append(on_enter() if on_enter else None)
        return real(db)

    monkeypatch.setattr(importer, "transaction", watched)
    return seen


def test_responses_are_written_before_the_file_is_read_to_the_end(db, db_path, tmp_path, small_files, monkeypatch):
    """The responses file is a pipe fed row by row: when the first write transaction starts, most of it has
    not been read yet (the importer reads a chunk, writes it, reads on). Reading the file whole first --
    what made memory grow with the rows -- would have drained the pipe before the first write."""
    import os
    import threading

    import_files(db, kb=small_files["kb"])
    text = responses_text(750, pad=150).encode()  # 3,000 rows, ~600 KB: far beyond the pipe's 64 KB buffer
    lines = text.splitlines(keepends=True)
    fifo = tmp_path / "stream.csv"
    os.mkfifo(fifo)
    fed = [0]

    def feed():
        fd = os.open(fifo, os.O_WRONLY)
        try:
            for line in lines:
                os.write(fd, line)  # blocks while the pipe is full: ``fed`` is at most 64 KB ahead of the reader
                fed[0] += len(line)
        finally:
            os.close(fd)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    seen = count_transactions(monkeypatch, lambda: fed[0])
    try:
        s = import_files(db, responses=fifo, chunk_rows=100)
    finally:
        if feeder.is_alive():  # the import failed: drain the pipe so that the feeder ends
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            while feeder.is_alive():
                try:
                    os.read(fd, 1 << 16)
                except BlockingIOError:
                    pass
            os.close(fd)
        feeder.join(5)
    assert s.responses_added == 3000 and len(s.models_implicit) == 750
    assert len(seen) == 1 + 30 + 1  # the batch, one transaction per 100 rows, the flip
    assert seen[0] < len(text) / 3, (seen[0], len(text))
    assert seen[-1] == len(text)
    assert content(db_path)["responses"][-1][:4] == ("Stream-0749", "感冒", "Severity Level", "Severity Level 749 " + "x" * 150)


LATE = {  # a bad row near the end of a 2,000-row responses file (row 1 is the header) -> (row text, message parts)
    "not_in_kb": ("Late,肺炎,药物,阿莫西林", ["response of Late for 肺炎 / 药物: this disease is not in the knowledge base"]),
    "duplicate": ("Stream-0003,感冒,Medications,again",
                  ["duplicate response of Stream-0003 for 感冒 / Medications (also on row 15)"]),
    "duplicate_alias": ("Stream-0003,感冒,药物,again",
                        ["duplicate response of Stream-0003 for 感冒 / Medications (also on row 15, under another "
                         "name of the aspect)"]),
    "differs_from_db": ("ModelA,感冒,Medications,阿司匹林",
                        ["ModelA already has a different response for 感冒 / Medications in the database"]),
    "unknown_aspect": ("Late,感冒,Medicatoins,x", ["unknown aspect 'Medicatoins'"]),
    "nul": ("Late,感冒,药物,a\x00b", ["the response contains a NUL byte"]),
    "too_many_values": ("Late,感冒,药物,a,b", ["5 values but the header has 4 columns"]),
    "not_utf8": (None, ["not UTF-8", "byte 0xe9", "line 1902"]),
}


@pytest.mark.parametrize("case", list(LATE))
def test_a_bad_row_in_a_late_chunk_leaves_the_database_as_it_was(case, db, db_path, tmp_path, small_files,
                                                                 monkeypatch):
    """Chunks before the bad row are already written (aside) when it is read: nothing is imported."""
    import_small(db, small_files)
    before = db_dump(db_path)
    bad_line, expected = LATE[case]
    text = responses_text(475)  # rows 2-1901
    data = text.encode() + ("Late,感冒,药物,caf".encode() + b"\xe9\n" if bad_line is None else (bad_line + "\n").encode())
    data += responses_text(500)[len("model,disease,aspect,response\n"):].replace("Stream-", "After-").encode()
    path = tmp_path / "r.csv"
    path.write_bytes(data)
    seen = count_transactions(monkeypatch)
    with pytest.raises(InputError) as e:
        import_files(db, responses=path, chunk_rows=100)
    assert e.value.file == str(path) and e.value.row == (None if bad_line is None else 1902)
    for part in expected:
        assert part in str(e.value), str(e.value)
    # the side file's tables and 18 or 19 chunks were written (aside) before the bad row was read (the decoder
    # reads ahead: a byte that is not UTF-8 stops the 19th)
    assert len(seen) >= 1 + 18
    assert db_dump(db_path) == before
    assert not db.conn.in_transaction


def test_severity_ranges_and_roman_levels_are_recorded(db, tmp_path):
    """A Severity Level answer naming a range is stored without a number and with the note 'range' (issue 21)."""
    write(tmp_path / "kb.csv", "disease,aspect,reference\n感冒,危重等级,4\n流感,严重程度,3\n")
    write(tmp_path / "r.csv", "model,disease,aspect,response\nA,感冒,Severity Level,三至四级\n"
                              "A,流感,危重等级,Ⅲ级\nB,感冒,危重程度,level 3 or 4\nB,流感,Severity,Grade III\n")
    import_files(db, kb=tmp_path / "kb.csv", responses=tmp_path / "r.csv")
    rows = db.conn.execute("SELECT m.name, k.disease, r.processed, r.note FROM responses r JOIN models m "
                           "ON m.id = r.model_id JOIN kb_entries k ON k.id = r.kb_id ORDER BY m.name, k.disease").fetchall()
    assert [tuple(r) for r in rows] == [("A", "感冒", "", "range"), ("A", "流感", "3", None),
                                         ("B", "感冒", "", "range"), ("B", "流感", "3", None)]
    from medeval.engine.scoring import score_db, severity_ranges

    score_db(db, metrics=["exact_match"])
    assert severity_ranges(db) == {"A": 1, "B": 1} and severity_ranges(db, ["B", "C"]) == {"B": 1, "C": 0}
    assert [s for (s,) in db.conn.execute("SELECT score FROM scores ORDER BY response_id")] == [0.0, 1.0, 0.0, 1.0]
    from medeval.engine import thresholds as th
    from medeval.engine.scoring import severity_ranges_text
    from medeval.reports.tier_report import build_report

    assert severity_ranges_text(db) == (" 2 Severity Level answers named a range of levels (e.g. 三至四级) rather than "
                                        "one level and scored 0 on exact match (A 1, B 1).")
    th.grade_db(db)
    assert severity_ranges_text(db) in build_report(db)["notes"][0]


def test_each_import_batch_records_how_it_read_the_answers(db, tmp_path, monkeypatch):
    """The Severity Level reading and the normalisation are applied at import: the batch keeps which were used, so
    a later change of MEDEVAL_SEVERITY_READING (or of the tokenizer) says which rows were read the other way."""
    import json

    from medeval.engine.tokenize import TOKENIZER_BASE

    write(tmp_path / "kb.csv", "disease,aspect,reference\n感冒,危重等级,1\n")
    write(tmp_path / "a.csv", "model,disease,aspect,response\nA,感冒,Severity Level,48小时内休克，属于一级\n")
    write(tmp_path / "b.csv", "model,disease,aspect,response\nB,感冒,Severity Level,48小时内休克，属于一级\n")
    import_files(db, kb=tmp_path / "kb.csv", responses=tmp_path / "a.csv")
    monkeypatch.setenv("MEDEVAL_SEVERITY_READING", "first-number")
    import_files(db, responses=tmp_path / "b.csv")
    batches = [json.loads(s)["read_with"] for (s,) in db.conn.execute("SELECT summary FROM import_batches ORDER BY id")]
    assert batches == [{"severity_reading": "level-word", "normalisation": TOKENIZER_BASE},
                       {"severity_reading": "first-number", "normalisation": TOKENIZER_BASE}]
    read = dict(db.conn.execute("SELECT m.name, r.processed FROM responses r JOIN models m ON m.id = r.model_id"))
    assert read == {"A": "1", "B": "48"}  # each as its batch says it was read


def test_the_report_says_when_no_severity_answer_named_a_range(db):
    from medeval.engine.scoring import severity_ranges_text

    assert severity_ranges_text(db) == " No Severity Level answer named a range of levels (e.g. 三至四级)."


@pytest.mark.parametrize("ref,says", [("3-4", "names a range of levels"), ("三至四级", "names a range of levels"),
                                      ("不详", "has no level"), ("待定", "has no level")])
def test_a_severity_reference_must_be_one_level(db, db_path, tmp_path, ref, says):
    write(tmp_path / "kb.csv", f"disease,aspect,reference\n感冒,危重等级,{ref}\n")
    before = db_dump(db_path)
    with pytest.raises(InputError, match=says):
        import_files(db, kb=tmp_path / "kb.csv")
    assert db_dump(db_path) == before
