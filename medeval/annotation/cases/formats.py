"""Reading and validating the input files -- cases (CMB-Clin JSON or flat tables) and responses; judgements
in :mod:`medeval.annotation.cases.judgements`.

Each reader turns one file (CSV, TSV, JSONL or JSON) into plain records
(:mod:`medeval.annotation.cases.records`), or raises :class:`InputError` naming file, row and fix.

The judgements file (:func:`medeval.annotation.cases.judgements.read_judgements`) has one row per judge and
question: ``case, question, judge, rationale`` and ``scores`` and/or ``models``. A judge's score of each
response is ``scores`` ``{model: score}``, or is read from the rationale
(:mod:`medeval.annotation.cases.judge_scores`: "Doctor 1: 4 points", "医生1的回答较全面，给5分" ...) where
``models`` gives the order the judge saw the responses in. **Per-criterion scores** (CMB-Clin §5: the judge
scores each response on Fluency, Relevance, Completeness and Proficiency) are given either nested in
``scores`` -- ``{"model-a": {"fluency": 4, "relevance": 5, "completeness": 3, "proficiency": 4}, ...}``, every
model with the same criteria, plus an optional ``"overall"`` -- or as one column per criterion named
``score_<criterion>`` (``score_fluency``, ...), each ``{model: score}`` as JSON. Without an overall score the
response's score is read from the rationale when ``models`` is given and the rationale scores the responses,
else it is the mean over its criteria (CMB-Clin's "Avg.").
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from medeval.annotation.cases.records import CaseIn, QuestionIn, ResponseIn
from medeval.core.chinese import MAX_DIGITS
from medeval.core.errors import InputError
from medeval.core.limits import (
    NAME_MAX_CHARS,
    NOTE_MAX_CHARS,
    check_json_text,
    check_text,
    read_table_limited,
)
from medeval.core.tables import cell, require_columns

# ================================================================== reading input files


def _key(text: str) -> str:
    """Names and ids as compared: NFKC, whitespace collapsed (as in :mod:`medeval.engine.importer`)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _name(text: str, what: str, *, file: str, row: int) -> str:
    """A name or id (case, model, judge): at most NAME_MAX_CHARS characters."""
    return check_text(text, what=what, max_chars=NAME_MAX_CHARS, allow_newlines=False, file=file, row=row)


def _json_cell(text: str, what: str, *, file: str, row: int) -> str:
    """JSON written in a cell, checked (size, depth) before it is parsed."""
    return check_json_text(text, what, max_bytes=None, file=file, row=row)


def _text_value(v) -> str:
    """A text field as stripped text (numbers written as numbers; 2.0 -> '2')."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return cell({"v": v}, "v")


def _position(raw, *, file: str, row: int, what: str) -> int:
    """A 1-based position from an int, an integer-valued float or a numeric string."""
    if isinstance(raw, bool):
        raw = str(raw)
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    s = str(raw).strip() if raw is not None else ""
    s = unicodedata.normalize("NFKC", s)
    shown = s if len(s) <= 40 else s[:40] + "..."
    fix = "write the 1-based number of the question in its case (1 for the first question)"
    if re.fullmatch(r"\d+(?:\.0+)?", s):
        if len(s.partition(".")[0]) > MAX_DIGITS:  # float() would read 400 digits as inf
            raise InputError(f"{what} {shown!r} has more than {MAX_DIGITS} digits: it is no position", file=file,
                             row=row, fix=fix)
        n = int(float(s))
        if n >= 1:
            return n
    raise InputError(f"{what} must be a whole number from 1 (found {shown!r})" if s else f"{what} is empty",
                     file=file, row=row, fix=fix)


# ------------------------------------------------------------------ cases


def read_cases(path: str | Path) -> list[CaseIn]:
    """Read and validate a cases file; the cases in file order, each with its questions in order.

    Two layouts are accepted (CSV, TSV, JSONL or JSON):

    * **CMB-Clin as published**: a JSON list of ``{"id", "title", "description",
      "QA_pairs": [{"question", "answer"}]}`` -- the reference may be named
      ``answer`` (the early GitHub copy) or ``solution`` (README / HuggingFace);
      both may be present only when they are equal. ``title`` and ``description``
      are optional (empty), ``id`` is the case key.
    * **flat**: one row per question with ``case, question, reference`` and
      optional ``title, description, position`` (1-based number of the question in
      its case; default: file order within the case; within a case either every row
      has a position or none does). Rows of a case may leave ``title`` /
      ``description`` blank after the first; non-blank values must agree.

    Errors (:class:`InputError`, naming file, row and fix): missing fields, empty
    question or reference, a case without questions, duplicate case ids, duplicate
    positions, and what :func:`medeval.core.tables.read_table` rejects (non-UTF-8, empty file,
    invalid JSON).
    """
    file = str(path)
    header, rows = read_table_limited(path)
    if "qa_pairs" in header:
        return _read_nested(file, rows)
    require_columns(path, header, ["case", "question", "reference"], ["title", "description", "position"])
    return _read_flat(file, header, rows)


def _reference(pair: dict, *, file: str, row: int, where: str) -> str:
    has = [k for k in ("answer", "solution", "reference") if k in pair and pair[k] is not None]
    if not has:
        raise InputError(f"{where} has no reference answer (found: {', '.join(pair) or 'nothing'})",
                         file=file, row=row, fix="give the reference as \"answer\" or \"solution\"")
    values = {k: _text_value(pair[k]) for k in has}
    if len(set(values.values())) > 1:
        raise InputError(f"{where} has both {' and '.join(repr(k) for k in has)}, with different texts",
                         file=file, row=row, fix="keep one reference: remove the other field, or make them equal")
    ref = values[has[0]]
    if not ref:
        raise InputError(f"{where}: the reference answer is empty", file=file, row=row,
                         fix="write the reference answer (annotators and judges compare the responses with it)")
    return ref


def _read_nested(file: str, rows: list[tuple[int, dict]]) -> list[CaseIn]:
    out: list[CaseIn] = []
    seen: dict[str, int] = {}
    for row, obj in rows:
        key_field = "id" if "id" in obj else "case"
        key = _name(_key(_text_value(obj.get(key_field))), "the case id", file=file, row=row)
        if not key:
            raise InputError("the case id is missing or empty", file=file, row=row,
                             fix="give every case an \"id\" (CMB-Clin: \"0\", \"1\", ...)")
        if key in seen:
            raise InputError(f"duplicate case id {key!r} (also item {seen[key]})", file=file, row=row,
                             fix="give every case its own id")
        seen[key] = row
        pairs = obj.get("qa_pairs")
        if isinstance(pairs, str):
            try:
                pairs = json.loads(_json_cell(pairs, f"QA_pairs of case {key!r}", file=file, row=row)) \
                    if pairs.strip() else []
            except json.JSONDecodeError as e:
                raise InputError(f"QA_pairs of case {key!r} is not valid JSON: {e.msg}", file=file, row=row,
                                 fix="QA_pairs must be a list of {\"question\": ..., \"answer\": ...}") from None
        if pairs is None or pairs == []:
            raise InputError(f"case {key!r} has no questions (QA_pairs is empty or missing)", file=file, row=row,
                             fix="add at least one {\"question\": ..., \"answer\": ...}, or remove the case")
        if not isinstance(pairs, list):
            raise InputError(f"QA_pairs of case {key!r} is a {type(pairs).__name__}, not a list", file=file,
                             row=row, fix="QA_pairs must be a list of {\"question\": ..., \"answer\": ...}")
        title = check_text(_text_value(obj.get("title")), what=f"the title of case {key!r}", max_chars=NOTE_MAX_CHARS,
                           file=file, row=row)
        case = CaseIn(key, title, _text_value(obj.get("description")), [], row, file)
        for i, pair in enumerate(pairs, start=1):
            where = f"case {key!r}, QA pair {i}"
            if not isinstance(pair, dict):
                raise InputError(f"{where} is a {type(pair).__name__}, not an object", file=file, row=row,
                                 fix="each QA pair must be {\"question\": ..., \"answer\": ...}")
            pair = {str(k).strip().lower(): v for k, v in pair.items()}
            q = _text_value(pair.get("question"))
            if not q:
                raise InputError(f"{where}: the question is {'empty' if 'question' in pair else 'missing'}",
                                 file=file, row=row, fix="write the question text")
            case.questions.append(QuestionIn(i, q, _reference(pair, file=file, row=row, where=where), row))
        out.append(case)
    return out


def _read_flat(file: str, header: list[str], rows: list[tuple[int, dict]]) -> list[CaseIn]:
    cases: dict[str, CaseIn] = {}
    meta_row: dict[tuple[str, str], int] = {}
    explicit: dict[str, bool] = {}
    positions: dict[tuple[str, int], int] = {}
    for row, obj in rows:
        key = _name(_key(cell(obj, "case")), "the case id", file=file, row=row)
        if not key:
            raise InputError("the case is empty", file=file, row=row, fix="give the id of the case this question belongs to")
        check_text(cell(obj, "title"), what=f"the title of case {key!r}", max_chars=NOTE_MAX_CHARS, file=file, row=row)
        q, ref = cell(obj, "question"), cell(obj, "reference")
        if not q:
            raise InputError(f"the question (case {key!r}) is empty", file=file, row=row, fix="write the question text")
        if not ref:
            raise InputError(f"the reference (case {key!r}) is empty", file=file, row=row,
                             fix="write the reference answer (annotators and judges compare the responses with it)")
        case = cases.get(key)
        if case is None:
            case = cases[key] = CaseIn(key, "", "", [], row, file)
        for fld in ("title", "description"):
            v = cell(obj, fld)
            if not v:
                continue
            old = getattr(case, fld)
            if old and old != v:
                raise InputError(f"case {key!r} has another {fld} on row {meta_row[(key, fld)]}", file=file, row=row,
                                 fix=f"all rows of a case must have the same {fld} (or leave it blank after the first row)")
            if not old:
                setattr(case, fld, v)
                meta_row[(key, fld)] = row
        raw_pos = obj.get("position")
        has_pos = raw_pos is not None and cell(obj, "position") != ""
        if key in explicit and explicit[key] != has_pos:
            raise InputError(f"case {key!r}: some rows give a position and others do not", file=file, row=row,
                             fix="give a position on every row of the case, or on none (then the file order counts)")
        explicit[key] = has_pos
        pos = (_position(raw_pos, file=file, row=row, what="position") if has_pos else len(case.questions) + 1)
        if (key, pos) in positions:
            raise InputError(f"case {key!r} has question {pos} twice (also on row {positions[(key, pos)]})",
                             file=file, row=row, fix="give each question of a case its own position")
        positions[(key, pos)] = row
        case.questions.append(QuestionIn(pos, q, ref, row))
    for case in cases.values():
        case.questions.sort(key=lambda x: x.position)
    return list(cases.values())


# ------------------------------------------------------------------ responses


def _where(obj: dict, who: str, *, file: str, row: int, fix: str) -> tuple[str, int, str]:
    """(case, question position, model or judge) of a response or judgement row, each required."""
    key = _name(_key(cell(obj, "case")), "the case id", file=file, row=row)
    if not key:
        raise InputError("the case is empty", file=file, row=row, fix="give the id of the case")
    pos = _position(obj.get("question"), file=file, row=row, what="question")
    name = _name(_key(cell(obj, who)), f"the {who} name", file=file, row=row)
    if not name:
        raise InputError(f"the {who} is empty", file=file, row=row, fix=fix)
    return key, pos, name


def read_responses(path: str | Path) -> list[ResponseIn]:
    """Read and validate a responses file: ``case, question, model, response``.

    ``question`` is the 1-based position of the question in its case. An empty
    response is allowed (a model may answer nothing); a JSON ``null`` is not (write
    ``""``). The response text is kept exactly as written. A second row for the same
    (case, question, model) is an error.
    """
    file = str(path)
    header, rows = read_table_limited(path)
    require_columns(path, header, ["case", "question", "model", "response"])
    out: list[ResponseIn] = []
    seen: dict[tuple[str, int, str], int] = {}
    for row, obj in rows:
        key, pos, model = _where(obj, "model", file=file, row=row, fix="name the model that answered")
        if "response" not in obj:
            raise InputError("the field 'response' is missing on this row", file=file, row=row,
                             fix="write \"\" for an empty answer")
        raw = obj["response"]
        if raw is None or isinstance(raw, (dict, list, bool)):
            raise InputError(f"the response is {'null' if raw is None else type(raw).__name__}, expected text",
                             file=file, row=row, fix="write the response as a string (\"\" for an empty answer)")
        raw = raw if isinstance(raw, str) else _text_value(raw)
        k = (key, pos, model)
        if k in seen:
            raise InputError(f"duplicate response of {model} to case {key!r}, question {pos} (also on row {seen[k]})",
                             file=file, row=row, fix="keep one response per case, question and model")
        seen[k] = row
        out.append(ResponseIn(key, pos, model, raw, row))
    return out
