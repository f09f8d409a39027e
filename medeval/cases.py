"""Clinical cases with several models' responses and judges' assessments; fact-check claims.

The source data of the rating, preference and fact-check verification task types
(``medeval.tasks``), following AutoMedEval (a question, a reference answer, responses
from two or more models, a judge's rationale with a score per response), CMB-Clin
(a case description followed by a sequence of questions) and SDAK (pairs of factual
and counterfactual claims with a model's answer to each).

Everything is grouped in named *datasets* so that several imports can live side by side.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from .auth import User, audit, require_role
from .db import _run_script, migration, transaction
from .errors import InputError, MedevalError
from .io import cell, read_table, require_columns


@migration
def m007_cases(db: sqlite_utils.Database) -> None:
    _run_script(db, """
    CREATE TABLE cases (
        id INTEGER PRIMARY KEY,
        dataset TEXT NOT NULL,
        case_key TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        UNIQUE (dataset, case_key)
    );
    CREATE TABLE case_questions (
        id INTEGER PRIMARY KEY,
        case_id INTEGER NOT NULL REFERENCES cases(id),
        position INTEGER NOT NULL CHECK (position >= 1),
        question TEXT NOT NULL,
        reference TEXT NOT NULL,
        UNIQUE (case_id, position)
    );
    CREATE TABLE case_responses (
        id INTEGER PRIMARY KEY,
        question_id INTEGER NOT NULL REFERENCES case_questions(id),
        model TEXT NOT NULL,
        response TEXT NOT NULL,
        UNIQUE (question_id, model)
    );
    CREATE TABLE judge_assessments (
        id INTEGER PRIMARY KEY,
        question_id INTEGER NOT NULL REFERENCES case_questions(id),
        judge TEXT NOT NULL,
        rationale TEXT NOT NULL,
        models TEXT NOT NULL,
        UNIQUE (question_id, judge)
    );
    CREATE TABLE judge_scores (
        assessment_id INTEGER NOT NULL REFERENCES judge_assessments(id),
        model TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (assessment_id, model)
    ) WITHOUT ROWID;
    CREATE TABLE fact_claims (
        id INTEGER PRIMARY KEY,
        dataset TEXT NOT NULL,
        item_key TEXT NOT NULL,
        type TEXT NOT NULL,
        label TEXT NOT NULL CHECK (label IN ('support', 'refute')),
        claim TEXT NOT NULL,
        model TEXT NOT NULL,
        response TEXT NOT NULL,
        UNIQUE (dataset, model, item_key, label)
    )
    """)


# ================================================================== reading input files

DEFAULT_FACT_MODEL = "default"
"""Model name stored for a fact-check file without a ``model`` column."""


def _key(text: str) -> str:
    """Names and ids as compared: NFKC, whitespace collapsed (as in :mod:`medeval.importer`)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _text_value(v) -> str:
    """A text field as stripped text (numbers written as numbers; 2.0 -> '2')."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return cell({"v": v}, "v")


@dataclass(frozen=True)
class QuestionIn:
    """One question of a case, as read from a file."""

    position: int
    question: str
    reference: str
    row: int


@dataclass
class CaseIn:
    """One clinical case as read from a file: key, title, description and its questions in order."""

    key: str
    title: str
    description: str
    questions: list[QuestionIn] = field(default_factory=list)
    row: int = 0
    file: str = ""

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The ordered ``(question, reference)`` pairs."""
        return [(q.question, q.reference) for q in self.questions]


@dataclass(frozen=True)
class ResponseIn:
    """One model's response to one question (``position`` is 1-based within the case)."""

    case: str
    position: int
    model: str
    response: str
    row: int


@dataclass(frozen=True)
class JudgementIn:
    """One judge's assessment of the responses to one question.

    ``models`` is the order the judge saw the responses in; ``scores`` maps each
    model to its score (from the ``scores`` column, or parsed from the rationale).
    """

    case: str
    position: int
    judge: str
    rationale: str
    models: tuple[str, ...]
    scores: dict
    row: int


def _position(raw, *, file: str, row: int, what: str) -> int:
    """A 1-based position from an int, an integer-valued float or a numeric string."""
    if isinstance(raw, bool):
        raw = str(raw)
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    s = str(raw).strip() if raw is not None else ""
    s = unicodedata.normalize("NFKC", s)
    if re.fullmatch(r"\d+(?:\.0+)?", s):
        n = int(float(s))
        if n >= 1:
            return n
    shown = s if len(s) <= 40 else s[:40] + "..."
    raise InputError(f"{what} must be a whole number from 1 (found {shown!r})" if s else f"{what} is empty",
                     file=file, row=row,
                     fix="write the 1-based number of the question in its case (1 for the first question)")


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
    positions, and what :func:`medeval.io.read_table` rejects (non-UTF-8, empty file,
    invalid JSON).
    """
    file = str(path)
    header, rows = read_table(path)
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
        key = _key(_text_value(obj.get(key_field)))
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
                pairs = json.loads(pairs) if pairs.strip() else []
            except json.JSONDecodeError as e:
                raise InputError(f"QA_pairs of case {key!r} is not valid JSON: {e.msg}", file=file, row=row,
                                 fix="QA_pairs must be a list of {\"question\": ..., \"answer\": ...}") from None
        if pairs is None or pairs == []:
            raise InputError(f"case {key!r} has no questions (QA_pairs is empty or missing)", file=file, row=row,
                             fix="add at least one {\"question\": ..., \"answer\": ...}, or remove the case")
        if not isinstance(pairs, list):
            raise InputError(f"QA_pairs of case {key!r} is a {type(pairs).__name__}, not a list", file=file,
                             row=row, fix="QA_pairs must be a list of {\"question\": ..., \"answer\": ...}")
        case = CaseIn(key, _text_value(obj.get("title")), _text_value(obj.get("description")), [], row, file)
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
        key = _key(cell(obj, "case"))
        if not key:
            raise InputError("the case is empty", file=file, row=row, fix="give the id of the case this question belongs to")
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
    key = _key(cell(obj, "case"))
    if not key:
        raise InputError("the case is empty", file=file, row=row, fix="give the id of the case")
    pos = _position(obj.get("question"), file=file, row=row, what="question")
    name = _key(cell(obj, who))
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
    header, rows = read_table(path)
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


# ------------------------------------------------------------------ judgements

_LABEL_WORDS = (r"doctors?|physicians?|responses?|assistants?|answers?|models?|candidates?|outputs?|replies|reply"
                r"|systems?|ai|bots?|chatbots?|students?")
_LABEL_ZH = r"医生|医师|大夫|回答|回复|答复|答案|模型|助手|候选|助理|应答|学生"
_ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUM = r"(?:\d+(?:\.\d+)?)"
_LABEL = rf"(?:(?<![a-z])(?:{_LABEL_WORDS})|{_LABEL_ZH})"
_POS = r"(?:\d+|[一二三四五六七八九十])(?![\d.]\d)"
_PREFIX = r"\s*(?:(?:#|no\.?|编号|第)\s*)?"  # one way to read each space: no backtracking blow-up
# what may stand between a label and its score: separators, markdown and score words -- nothing else, so
# "Doctor 1 said the dose is 5 mg" is not a score
_FILL_WORD = (r"'s|’s|s'|的|score[sd]?|rating|rated|gets?|got|receives?|received|earns?|earned|deserves?|is given"
              r"|was given|is|was|total|overall|final|points?|of"
              r"|最终|最后|综合|总|得分|评分|分数|打分|分值|获得|得到|给予|可得|打|给|得|为|是|计")
_FILL_CHARS = r"[\s*_`#\[\]()【】（）<>:=\-–—→|,]"
_FILL = rf"(?:{_FILL_CHARS}|{_FILL_WORD})*?"
_SCORE = rf"(?P<num>{_NUM}|[一二两三四五六七八九十](?=\s*分))"
_UNIT = r"(?P<unit>\s*(?:\*\*)?\s*(?:/\s*\d+(?:\.\d+)?|out of \d+(?:\.\d+)?|points?\b|pts?\b|分(?!钟|之|析|别|期|级|型|泌|布|娩|化|裂|离|为|成)))?"
# a number followed by one of these is a measurement, not a score
_NOT_SCORE = re.compile(r"[a-z]|[.,]\d|\s*-?\s*(?:%|‰|°|℃|mg|μg|ug|mcg|ml|kg|mmol|mmhg|cm|mm|iu|u/|g\b|l\b|x\b"
                        r"|times?\b|years?\b|days?\b|weeks?\b|months?\b|hours?\b|h\b|minutes?\b|min\b"
                        r"|次|岁|天|日|周|月|年|小时|分钟|秒|毫|克|升|片|粒|支|倍|例|项|条|个|点|种)")
# any mention of a response: "Doctor 1", "Response #2", "医生一", "第2号回答"
_MENTION_RE = re.compile(rf"{_LABEL}{_PREFIX}(?P<pos>{_POS})(?:\s*号)?")
# label, score words, score: "Doctor 1: 4 points", "医生1得分：4分"
_SCORE_RE = re.compile(rf"{_LABEL}{_PREFIX}(?P<pos>{_POS})(?:\s*号)?{_FILL}{_SCORE}{_UNIT}")
# several labels sharing one score: "Doctor 1 and Doctor 2 both get 4 points", "Doctors 1 and 2: 4",
# "医生1和医生2均为4分", "医生1、2均得4分"; a bare number after a comma is not a label ("Response 1, 2, 3")
_REF0 = rf"{_LABEL}{_PREFIX}{_POS}(?:\s*号)?"
_JOIN = r"\s*(?:,(?:\s*and\b)?|and\b|&|和|与|及|以及|跟|、|/)\s*"
_JOIN_AND = r"\s*(?:,\s*)?(?:and\b|&|和|与|及|以及|跟|、)\s*"
# (found whole with finditer, then the shared score at its end: linear however long the chain)
_REF0S = rf"{_REF0}(?:'s|’s)?"
_CHAIN_RE = re.compile(rf"{_REF0S}(?:{_JOIN}{_REF0S}|{_JOIN_AND}{_POS}(?:\s*号)?)+")
_SHARED_WORD = r"(?:are|were|both|each|all)\s+given|both|each|all|equally|are|were|均|都|皆|各|同样|同为|也|亦"
_SHARED_RE = re.compile(rf"(?:{_FILL_CHARS}|{_SHARED_WORD}|{_FILL_WORD})*?{_SCORE}{_UNIT}")
# "... 4 and 3 points respectively", "分别为4分和3分": one score each, not a shared one
_RESPECTIVELY = re.compile(r"respectively|分别|依次|\A\s*(?:\*\*)?\s*(?:and|or|&|和|与|、|,|/|vs\.?)\s*\d")
# a score with no label of its own, alone on a line or starting a sentence: "Score: 4", "**Rating**: 4/5",
# "得分：4分", "评分：4"; it belongs to the response the section before it is about (see _owner)
_LINE_RE = re.compile(
    r"(?:^|(?<=[.。;；!！?？,，]))[ \t>*_#\-•]*"
    r"(?:(?:(?:final|overall|total)\s+)?(?:score|rating)(?![a-z])|(?:最终|综合|总)?(?:得分|评分|分数|打分)|总分)"
    rf"[\s*_]*(?:[:=]|is\b|为|是)?[\s*_]*{_SCORE}{_UNIT}", re.M)
# the rest of a sentence (a decimal point does not end it)
_SENTENCE_REST = re.compile(r"(?:[^\n.;；。!！?？]|\.\d)*")
# a mention that heads a section: first on its line (after markdown, a bullet or a list number) ...
_HEAD_BEFORE = re.compile(r"[\s>*_#\-•\[【(]*(?:\d+[.)、]\s*)?[\s*_#\[【(]*")
# ... or followed by nothing but a colon or the end of its line: "Doctor 1:", "**Response 2**", "医生1的回答："
_HEAD_AFTER = re.compile(r"[ \t*_\]】)]*(?:(?:'s|’s)\s+(?:response|answer|reply)|的(?:回答|回复|答复))?"
                         r"[ \t*_\]】)]*(?::|\n|\Z)")
# what may stand between a list-item-looking "4." and a following label or the end of its line
_SKIP_AFTER_STOP = " \t*_#.,;。，；\"'“”‘’「」『』[]【】()"


def _num(s: str) -> float:
    return float(_ZH_NUM[s]) if s in _ZH_NUM else float(s)


def _list_item(s: str, m: re.Match) -> bool:
    """Whether the number *m* read is a list item ("Doctor 1: 1. Accurate diagnosis 2. ...") rather than a score.

    Only a number directly followed by ".", "、" or ")" can be one (a ")" closing a "(" of the match
    counts only in "(1)", right round the number). What follows the stop decides: the end of the line or text ("Doctor 1: 4.") or
    another label ("Doctor 1: 4. Doctor 2: 3.") makes it a score; text makes it a list item when the
    number is 1 (a list starts there) or the next item (the number plus one, same stop) follows before
    the next label -- "Doctor 1: 4. The answer is accurate." stays a score. Called only when there is
    no score unit: "Doctor 1: 1 point. Poor" is a score.
    """
    i = m.end()
    while i < len(s) and s[i] in "*_":
        i += 1
    if i >= len(s) or s[i] not in ".、)":
        return False
    if s[i] == ")" and m.group(0).count("(") > m.group(0).count(")"):
        if s[:m.start("num")].rstrip()[-1:] != "(":
            return False  # "Response 1 (score: 4) is ...": a parenthesis, not a list
        # "Doctor 1 (1) accurate (2) ...": a list item numbered "(1)"
    j = i + 1
    while j < len(s) and s[j] in _SKIP_AFTER_STOP:
        j += 1
    if j >= len(s) or s[j] in "\r\n" or _MENTION_RE.match(s, j):
        return False
    n = m.group("num")
    if n == "1":
        return True
    if not n.isdigit():
        return False
    nxt = _MENTION_RE.search(s, j)
    item = re.compile(rf"(?<![\d.]){int(n) + 1}{re.escape(s[i])}(?!\d)")
    return bool(item.search(s, j, nxt.start() if nxt else len(s)))


# a score written before its label: "4 (Doctor 1), 3 (Doctor 2)" -- the number after the label is not its score
_SCORE_BEFORE = re.compile(r"\d(?:\s*(?:\*\*)?\s*(?:/\s*\d+|points?|pts?|分))?\s*[(\[【]\s*\Z")


def _is_score(s: str, m: re.Match, *, labelled: bool = False) -> bool:
    """Whether *m* (a match ending in _SCORE and _UNIT) reads a score, not a measurement or a list item;
    *labelled*: it starts with its label, which must not follow a score ("4 (Doctor 1)")."""
    if labelled and _SCORE_BEFORE.search(s, max(0, m.start() - 20), m.start()):
        return False
    if m.group("unit"):
        return True
    return not _NOT_SCORE.match(s, m.end()) and not _list_item(s, m)


def _owner(s: str, start: int, end: int) -> int | None:
    """The response a label-less score line at *end* is about: the section ``s[start:end]`` (since the previous
    score) must mention a response, and every mention from its last heading on (or from its first mention
    when none heads a line) must name the same one; otherwise it is ambiguous and ``None``."""
    ms = list(_MENTION_RE.finditer(s, start, end))
    if not ms:
        return None
    heads = [k for k, mt in enumerate(ms) if _HEAD_AFTER.match(s, mt.end())
             or _HEAD_BEFORE.fullmatch(s, s.rfind("\n", 0, mt.start()) + 1, mt.start())]
    first = heads[-1] if heads else 0
    pos = {int(_num(mt.group("pos"))) for mt in ms[first:]}
    return pos.pop() if len(pos) == 1 else None


def parse_judge_scores(text: str) -> dict[int, float]:
    """Per-response scores written in a judge's rationale: ``{position: score}`` (position 1-based).

    A score is a label (Doctor, Response, Assistant, Answer, Model ...; 医生, 回答,
    模型, 助手 ...) with the response's number, then only separators, markdown and
    score words (gets, score, 得分, 评分, 为 ...), then a number, optionally with a
    unit (points, 分, /5, out of 5). A number followed by a unit of measure (mg, %,
    次, 岁 ...) is not a score, so "Doctor 1 said the dose is 5 mg" counts for
    nothing. Full-width characters are read as ASCII (NFKC). The same score repeated
    is fine; two different scores for one response raise :class:`InputError`.

    * List items are not scores: a number without a unit directly followed by ".",
      "、" or ")" and then more text on the same line ("Doctor 1: 1. Accurate
      diagnosis 2. ...", "医生1：1、诊断正确") is a numbered list if it is 1 or the next
      item follows ("Doctor 1: 3. Dose 4. Follow-up"). The end of the line or text, or
      another label, after the stop makes it a score ("Doctor 1: 4.", "Doctor 1: 4.
      Doctor 2: 3."); so does a unit ("Doctor 1: 1 point. Poor").
    * Several labels joined by and/,/和/与/、 share the score after them ("Doctor 1
      and Doctor 2 both get 4 points", "Doctors 1 and 2: 4", "医生1和医生2均为4分") --
      unless it is one of several ("4 and 3 points respectively", "分别为4分、3分").
    * A score line without a label ("Score: 4", "**Rating**: 4/5", "得分：4分",
      "评分：4"), starting a line or a sentence, belongs to the response the text
      since the previous score is about: every label from the last one that heads a
      line (or from the first, if none does) must name that response, and nothing
      after the number in its sentence may be a label. "Doctor 1:\\n1. ...\\nScore: 4"
      gives Doctor 1 a 4; "Doctor 1:\\nUnlike Doctor 2 ...\\nScore: 4" gives nothing.
      A later summary ("Scores: Doctor 1: 4 points") must agree with it.
    * A label in brackets after a number ("4 (Doctor 1), 3 (Doctor 2)") gives nothing:
      its score comes before it, and the number after it belongs to the next label.

    >>> parse_judge_scores("Doctor 1: 5 points. Doctor 2 gets 4 points.")
    {1: 5.0, 2: 4.0}
    >>> parse_judge_scores("医生1：5分；医生2得分：3分")
    {1: 5.0, 2: 3.0}
    >>> parse_judge_scores("**Response 2**: 4/5, Response 1: 3.5")
    {1: 3.5, 2: 4.0}
    >>> parse_judge_scores("Doctor 1 said the dose is 5 mg. Score: Doctor 1: 4 points")
    {1: 4.0}
    >>> parse_judge_scores("医生１：５分")
    {1: 5.0}
    >>> parse_judge_scores("Doctor 1: 1. Accurate diagnosis 2. Clear plan\\nScore: 4\\nDoctor 2: 3.")
    {1: 4.0, 2: 3.0}
    >>> parse_judge_scores("医生1和医生2均为4分")
    {1: 4.0, 2: 4.0}
    """
    s = unicodedata.normalize("NFKC", text or "").lower()
    found: dict[int, tuple[float, str]] = {}

    def put(positions, start: int, m: re.Match) -> None:
        score = _num(m.group("num"))
        if not math.isfinite(score):
            return
        what = s[start:m.end()].strip()
        for pos in positions:
            seen = found.get(pos)
            if seen is not None and seen[0] != score:
                raise InputError(
                    f"the rationale gives response {pos} two different scores: {seen[1]!r} and {what!r}",
                    fix="correct the rationale, or give the scores in a 'scores' column ({\"model\": score, ...})")
            found.setdefault(pos, (score, what))

    # (start, end, positions or None for a score line, match of the score)
    events: list[tuple[int, int, list[int] | None, re.Match]] = []
    taken: list[tuple[int, int]] = []  # shared scores, and "respectively" groups that no label may take alone
    for chain in _CHAIN_RE.finditer(s):
        m = _SHARED_RE.match(s, chain.end())
        if m is None:
            continue
        if _RESPECTIVELY.search(_SENTENCE_REST.match(s, m.end()).group()):
            taken.append((chain.start(), m.end()))
        elif _is_score(s, m):
            taken.append((chain.start(), m.end()))
            events.append((chain.start(), m.end(), [int(_num(p)) for p in re.findall(_POS, chain.group())], m))
    for m in _SCORE_RE.finditer(s):
        if all(m.end() <= a or m.start() >= b for a, b in taken) and _is_score(s, m, labelled=True):
            events.append((m.start(), m.end(), [int(_num(m.group("pos")))], m))
    labelled = [(a, b) for a, b, _, _ in events]
    for m in _LINE_RE.finditer(s):
        if (all(m.end() <= a or m.start() >= b for a, b in labelled) and _is_score(s, m)
                and not _MENTION_RE.search(_SENTENCE_REST.match(s, m.end()).group())):
            events.append((m.start(), m.end(), None, m))
    last = 0
    for start, end, positions, m in sorted(events, key=lambda e: e[0]):
        if positions is None:
            pos = _owner(s, last, start)
            if pos is not None:
                put([pos], start, m)
        else:
            put(positions, start, m)
        last = max(last, end)
    return {p: v for p, (v, _) in sorted(found.items())}


def _parse_models(raw, *, file: str, row: int) -> list[str]:
    if isinstance(raw, str):
        t = raw.strip()
        if t.startswith("["):
            try:
                raw = json.loads(t)
            except json.JSONDecodeError as e:
                raise InputError(f"models is not a valid JSON list: {e.msg}", file=file, row=row,
                                 fix='write ["model-a", "model-b"] or model-a,model-b') from None
        else:
            raw = re.split(r"[,，]", t) if t else []
    if not isinstance(raw, list):
        raise InputError(f"models is a {type(raw).__name__}, expected a list", file=file, row=row,
                         fix='write ["model-a", "model-b"] or model-a,model-b')
    models = [_key(_text_value(m)) for m in raw]
    if not models or any(not m for m in models):
        raise InputError("models has an empty name" if models else "models is empty", file=file, row=row,
                         fix="list the models in the order the judge saw their responses, e.g. model-a,model-b")
    dup = next((m for i, m in enumerate(models) if m in models[:i]), None)
    if dup:
        raise InputError(f"model {dup!r} appears twice in models", file=file, row=row,
                         fix="list each model once, in the order the judge saw the responses")
    return models


def _parse_scores(raw, *, file: str, row: int) -> dict[str, float]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as e:
            raise InputError(f"scores is not valid JSON: {e.msg}", file=file, row=row,
                             fix='write a JSON object like {"model-a": 4, "model-b": 3} (in CSV, quote the cell)') from None
    if not isinstance(raw, dict) or not raw:
        raise InputError("scores must be a non-empty JSON object {model: score}" +
                         (f" (found {type(raw).__name__})" if not isinstance(raw, dict) else ""),
                         file=file, row=row, fix='write {"model-a": 4, "model-b": 3}')
    out: dict[str, float] = {}
    for k, v in raw.items():
        name = _key(str(k))
        if not name:
            raise InputError("scores has an empty model name", file=file, row=row, fix="name every model")
        if name in out:
            raise InputError(f"model {name!r} appears twice in scores", file=file, row=row, fix="score each model once")
        if isinstance(v, str):
            try:
                v = float(unicodedata.normalize("NFKC", v).strip())
            except ValueError:
                v = None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InputError(f"the score of {name!r} is {v!r}, not a number", file=file, row=row,
                             fix="scores must be finite numbers, e.g. 4 or 3.5")
        out[name] = float(v)
    return out


def read_judgements(path: str | Path) -> list[JudgementIn]:
    """Read and validate a judgements file: ``case, question, judge, rationale`` and ``scores`` and/or ``models``.

    * ``scores``: a JSON object ``{model: score}`` (in CSV a JSON string); its key
      order is the judge's order unless ``models`` is given too (then the two must
      name the same models).
    * ``models``: the order the judge saw the responses in (a JSON list, or a
      comma-separated string); without ``scores`` the scores are read from the
      rationale with :func:`parse_judge_scores`, where "Doctor 2" is ``models[1]``.
      Every model needs a score there, and no number may point beyond the list.

    ``question`` is the 1-based position of the question in its case; one
    assessment per (case, question, judge); the rationale may not be empty.
    """
    file = str(path)
    header, rows = read_table(path)
    require_columns(path, header, ["case", "question", "judge", "rationale"], ["scores", "models"])
    if "scores" not in header and "models" not in header:
        raise InputError(f"neither 'scores' nor 'models' is a column (found: {', '.join(header)})", file=file,
                         fix="add scores ({\"model\": score} as JSON) or models (the order the judge saw the "
                             "responses in; the scores are then read from the rationale)")
    out: list[JudgementIn] = []
    seen: dict[tuple[str, int, str], int] = {}
    for row, obj in rows:
        key, pos, judge = _where(obj, "judge", file=file, row=row, fix="name the judge (e.g. gpt-4, AutoMedEval)")
        rationale = cell(obj, "rationale")
        if not rationale:
            raise InputError("the rationale is empty", file=file, row=row, fix="give the judge's written assessment")
        has_scores = obj.get("scores") not in (None, "") and not (isinstance(obj.get("scores"), str)
                                                                 and not obj["scores"].strip())
        has_models = obj.get("models") not in (None, "", []) and not (isinstance(obj.get("models"), str)
                                                                     and not obj["models"].strip())
        models = _parse_models(obj["models"], file=file, row=row) if has_models else None
        if has_scores:
            scores = _parse_scores(obj["scores"], file=file, row=row)
            if models is None:
                models = list(scores)
            elif set(models) != set(scores):
                raise InputError(f"models ({', '.join(models)}) and scores ({', '.join(scores)}) name different "
                                 "models", file=file, row=row, fix="score exactly the models listed in models")
        elif models is not None:
            try:
                parsed = parse_judge_scores(rationale)
            except InputError as e:
                raise InputError(e.detail, file=file, row=row, fix=e.fix) from None
            beyond = [p for p in parsed if p > len(models)]
            if beyond:
                raise InputError(f"the rationale scores response {beyond[0]} but models lists only {len(models)} "
                                 f"({', '.join(models)})", file=file, row=row,
                                 fix="list every model the judge saw, in order, or correct the rationale")
            missing = [i for i in range(1, len(models) + 1) if i not in parsed]
            if missing:
                shown = ", ".join(f"{p}: {v:g}" for p, v in parsed.items()) or "no score"
                raise InputError(f"the rationale gives {len(parsed)} score(s) for {len(models)} models (found {shown}; "
                                 f"none for response {', '.join(map(str, missing))} = "
                                 f"{', '.join(models[i - 1] for i in missing)})", file=file, row=row,
                                 fix="give the scores in a 'scores' column ({\"model\": score, ...}), or write them in "
                                     "the rationale as 'Doctor 1: 4 points' / '医生1：4分'")
            scores = {models[p - 1]: v for p, v in parsed.items()}
        else:
            raise InputError("neither scores nor models is given on this row", file=file, row=row,
                             fix="give scores ({\"model\": score}) or models (the order the judge saw the responses in)")
        k = (key, pos, judge)
        if k in seen:
            raise InputError(f"duplicate assessment by {judge} of case {key!r}, question {pos} (also on row {seen[k]})",
                             file=file, row=row, fix="keep one assessment per case, question and judge")
        seen[k] = row
        out.append(JudgementIn(key, pos, judge, rationale, tuple(models), {m: scores[m] for m in models}, row))
    return out


# ================================================================== import

def _dataset_name(dataset: str) -> str:
    name = (dataset or "").strip()
    if not name:
        raise InputError("the dataset name is empty", fix="name the dataset, e.g. --dataset cmb-clin")
    return name


def _hint(name: str, known) -> str:
    """A "did you mean" hint (case-insensitive) or ''."""
    by_lower = {}
    for k in sorted(known):
        by_lower.setdefault(k.lower(), k)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean {by_lower[close[0]]!r}? " if close else ""


def import_cases(db: sqlite_utils.Database, dataset: str, *, cases: str | Path | None = None,
                 responses: str | Path | None = None, judgements: str | Path | None = None,
                 actor: User | None = None) -> dict:
    """Import cases, responses and judgements into ``dataset`` -- validated first, then all or nothing.

    Responses and judgements may refer to cases stored earlier or in ``cases`` of the
    same call (by case id and 1-based question number); a judgement's models must all
    have a response to its question. Stored text (case title / description, question,
    reference, response, rationale, scores) is never overwritten: importing the same
    files again changes nothing, a different text for something stored is an error.
    New questions may be added to a stored case as long as its questions stay numbered
    1..n; a blank title or description in the file leaves the stored one as it is. Returns counts ``{"dataset", "cases_added", "cases_present", "questions_added",
    "questions_present", "responses_added", "responses_present", "judgements_added",
    "judgements_present"}``. With ``actor``, needs the researcher or admin role and is audited.
    """
    if actor is not None:
        require_role(actor, "researcher", "admin")
    name = _dataset_name(dataset)
    if not (cases or responses or judgements):
        raise MedevalError("nothing to import: give cases, responses and/or judgements")
    case_rows = read_cases(cases) if cases else []
    resp_rows = read_responses(responses) if responses else []
    judge_rows = read_judgements(judgements) if judgements else []
    s = {"dataset": name, "cases_added": 0, "cases_present": 0, "questions_added": 0, "questions_present": 0,
         "responses_added": 0, "responses_present": 0, "judgements_added": 0, "judgements_present": 0}
    conn = db.conn
    never = "stored text is never overwritten"
    with transaction(db):
        # -- cases and questions
        stored = {k: (i, t, d) for i, k, t, d in conn.execute(
            "SELECT id, case_key, title, description FROM cases WHERE dataset = ?", (name,))}
        stored_q: dict[int, dict[int, tuple[str, str]]] = {}
        for cid, p, q, r in conn.execute(
                "SELECT q.case_id, q.position, q.question, q.reference FROM case_questions q JOIN cases c "
                "ON c.id = q.case_id WHERE c.dataset = ?", (name,)):
            stored_q.setdefault(cid, {})[p] = (q, r)
        for c in case_rows:
            old = stored.get(c.key)
            if old is None:
                cid = conn.execute("INSERT INTO cases (dataset, case_key, title, description) VALUES (?, ?, ?, ?)",
                                   (name, c.key, c.title, c.description)).lastrowid
                stored[c.key] = (cid, c.title, c.description)
                s["cases_added"] += 1
                old_q = {}
            else:
                cid = old[0]
                for fld, was, now in (("title", old[1], c.title), ("description", old[2], c.description)):
                    if now and was != now:  # blank in the file: not given, the stored text stands
                        raise InputError(f"case {c.key!r} is already stored in dataset {name!r} with a different "
                                         f"{fld}; {never}", file=c.file, row=c.row,
                                         fix=f"correct the {fld}, or import the changed cases as a new dataset")
                s["cases_present"] += 1
                old_q = stored_q.get(cid, {})
            new = []
            for q in c.questions:
                if q.position in old_q:
                    if old_q[q.position] != (q.question, q.reference):
                        what = "question" if old_q[q.position][0] != q.question else "reference"
                        raise InputError(f"case {c.key!r}, question {q.position} is already stored with a different "
                                         f"{what}; {never}", file=c.file, row=q.row,
                                         fix="correct the file, or import the changed cases as a new dataset")
                    s["questions_present"] += 1
                else:
                    new.append((cid, q.position, q.question, q.reference))
            allpos = sorted(set(old_q) | {q.position for q in c.questions})
            if allpos != list(range(1, len(allpos) + 1)):
                gap = next(i for i in range(1, len(allpos) + 2) if i not in allpos)
                raise InputError(f"case {c.key!r} would have questions {_ranges(allpos)}, without question {gap}",
                                 file=c.file, row=c.row,
                                 fix="number the questions of a case 1, 2, 3 ... without gaps")
            conn.executemany("INSERT INTO case_questions (case_id, position, question, reference) VALUES (?, ?, ?, ?)",
                             new)
            s["questions_added"] += len(new)

        if resp_rows or judge_rows:
            qids = {(k, p): qid for qid, k, p in conn.execute(
                "SELECT q.id, c.case_key, q.position FROM case_questions q JOIN cases c ON c.id = q.case_id "
                "WHERE c.dataset = ?", (name,))}
            npos: dict[str, int] = {}
            for k, p in qids:
                npos[k] = max(npos.get(k, 0), p)

            def question_id(case: str, pos: int, file, row) -> int:
                qid = qids.get((case, pos))
                if qid is not None:
                    return qid
                if case not in npos:
                    raise InputError(f"case {case!r} is not in dataset {name!r}", file=str(file), row=row,
                                     fix=_hint(case, npos) + "import the case first (cases file), or check the case "
                                         "id and the dataset name")
                raise InputError(f"case {case!r} has {npos[case]} question(s); there is no question {pos}",
                                 file=str(file), row=row,
                                 fix="question is the 1-based number of the question in its case")

            stored_resp: dict[tuple[int, str], str] = {(q, m): r for q, m, r in conn.execute(
                "SELECT r.question_id, r.model, r.response FROM case_responses r JOIN case_questions q "
                "ON q.id = r.question_id JOIN cases c ON c.id = q.case_id WHERE c.dataset = ?", (name,))}
            new = []
            for r in resp_rows:
                qid = question_id(r.case, r.position, responses, r.row)
                if (qid, r.model) in stored_resp:
                    if stored_resp[(qid, r.model)] != r.response:
                        raise InputError(f"{r.model}'s response to case {r.case!r}, question {r.position} is already "
                                         f"stored with different text; {never}", file=str(responses), row=r.row,
                                         fix="import the new run under a new model name (e.g. 'model-v2') or as a "
                                             "new dataset")
                    s["responses_present"] += 1
                    continue
                stored_resp[(qid, r.model)] = r.response
                new.append((qid, r.model, r.response))
            conn.executemany("INSERT INTO case_responses (question_id, model, response) VALUES (?, ?, ?)", new)
            s["responses_added"] = len(new)

            answered: dict[int, set] = {}
            for qid, m in stored_resp:
                answered.setdefault(qid, set()).add(m)
            stored_j = {(q, j): (i, rat, mods) for i, q, j, rat, mods in conn.execute(
                "SELECT a.id, a.question_id, a.judge, a.rationale, a.models FROM judge_assessments a "
                "JOIN case_questions q ON q.id = a.question_id JOIN cases c ON c.id = q.case_id "
                "WHERE c.dataset = ?", (name,))}
            for j in judge_rows:
                qid = question_id(j.case, j.position, judgements, j.row)
                have = answered.get(qid, set())
                missing = [m for m in j.models if m not in have]
                if missing:
                    raise InputError(
                        f"{j.judge} assesses {', '.join(missing)} on case {j.case!r}, question {j.position}, but "
                        f"{'that model has' if len(missing) == 1 else 'those models have'} no response to it "
                        f"(responses from: {', '.join(sorted(have)) or 'none'})", file=str(judgements), row=j.row,
                        fix=_hint(missing[0], have) + "import the responses first (responses file), or correct "
                                                      "the model names")
                models_json = json.dumps(list(j.models), ensure_ascii=False)
                old = stored_j.get((qid, j.judge))
                if old is not None:
                    old_scores = dict(conn.execute("SELECT model, score FROM judge_scores WHERE assessment_id = ?",
                                                   (old[0],)).fetchall())
                    if (old[1], old[2], old_scores) != (j.rationale, models_json, j.scores):
                        raise InputError(f"{j.judge}'s assessment of case {j.case!r}, question {j.position} is "
                                         f"already stored with different text or scores; {never}",
                                         file=str(judgements), row=j.row,
                                         fix="import the new assessment under a new judge name or as a new dataset")
                    s["judgements_present"] += 1
                    continue
                aid = conn.execute("INSERT INTO judge_assessments (question_id, judge, rationale, models) "
                                   "VALUES (?, ?, ?, ?)", (qid, j.judge, j.rationale, models_json)).lastrowid
                stored_j[(qid, j.judge)] = (aid, j.rationale, models_json)
                conn.executemany("INSERT INTO judge_scores (assessment_id, model, score) VALUES (?, ?, ?)",
                                 [(aid, m, v) for m, v in j.scores.items()])
                s["judgements_added"] += 1
        if actor is not None:
            audit(db, actor.username, "cases.import", name,
                  {**{k: v for k, v in s.items() if k != "dataset"},
                   "files": {k: str(v) for k, v in (("cases", cases), ("responses", responses),
                                                    ("judgements", judgements)) if v}})
    return s


def _ranges(nums: list[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``'1-3, 5'``."""
    out, start = [], None
    for i, n in enumerate(nums):
        if start is None:
            start = n
        if i + 1 == len(nums) or nums[i + 1] != n + 1:
            out.append(f"{start}-{n}" if n != start else str(n))
            start = None
    return ", ".join(out)


def import_fact_claims(db: sqlite_utils.Database, dataset: str, path: str | Path, *,
                       actor: User | None = None) -> dict:
    """Import a fact-check file (see :func:`medeval.factcheck.read_factcheck`) into ``dataset``; all or nothing.

    Both claims of every item are stored per model with the model's response. A
    file without a ``model`` column is stored under the model name ``"default"``
    (:data:`DEFAULT_FACT_MODEL`). Importing the same file again changes nothing; a
    stored claim (dataset, model, id, label) with another type, claim or response is
    an error (never overwritten). Returns ``{"dataset", "models", "items_added",
    "items_present", "claims_added", "claims_present"}``. With ``actor``, needs the
    researcher or admin role and is audited.
    """
    from .factcheck import read_factcheck

    if actor is not None:
        require_role(actor, "researcher", "admin")
    name = _dataset_name(dataset)
    by_model = read_factcheck(path)
    s = {"dataset": name, "models": sorted(m or DEFAULT_FACT_MODEL for m in by_model), "items_added": 0,
         "items_present": 0, "claims_added": 0, "claims_present": 0}
    conn = db.conn
    with transaction(db):
        stored = {(m, k, lab): (t, c, r) for m, k, lab, t, c, r in conn.execute(
            "SELECT model, item_key, label, type, claim, response FROM fact_claims WHERE dataset = ?", (name,))}
        new = []
        for model, pairs in by_model.items():
            model = model or DEFAULT_FACT_MODEL
            for pair in pairs:
                added = 0
                for c in pair:
                    old = stored.get((model, c.id, c.label))
                    if old is not None:
                        if old != (c.type, c.claim, c.response):
                            what = ("type" if old[0] != c.type else "claim" if old[1] != c.claim else "response")
                            raise InputError(f"the {c.label!r} claim of item {c.id!r} (model {model!r}) is already "
                                             f"stored in dataset {name!r} with a different {what}; stored text is "
                                             "never overwritten", file=str(path), row=c.line,
                                             fix="correct the file, or import it as a new dataset or model name")
                        s["claims_present"] += 1
                        continue
                    new.append((name, c.id, c.type, c.label, c.claim, model, c.response))
                    added += 1
                s["claims_added"] += added
                s["items_added" if added else "items_present"] += 1
        conn.executemany("INSERT INTO fact_claims (dataset, item_key, type, label, claim, model, response) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", new)
        if actor is not None:
            audit(db, actor.username, "factcheck.import", name,
                  {k: v for k, v in s.items() if k != "dataset"} | {"file": str(path)})
    return s


# ================================================================== reading the database

def datasets(db: sqlite_utils.Database) -> list[dict]:
    """Every dataset (name in ``cases`` or ``fact_claims``) with its counts, sorted by name.

    Keys: ``dataset, cases, questions, responses, models`` (distinct models with a case
    response or a fact-check claim), ``judges, judgements, fact_items, fact_claims``.
    """
    conn = db.conn
    q = {
        "cases": "SELECT dataset, count(*) FROM cases GROUP BY dataset",
        "questions": "SELECT c.dataset, count(*) FROM case_questions q JOIN cases c ON c.id = q.case_id "
                     "GROUP BY c.dataset",
        "responses": "SELECT c.dataset, count(*) FROM case_responses r JOIN case_questions q ON q.id = r.question_id "
                     "JOIN cases c ON c.id = q.case_id GROUP BY c.dataset",
        "models": "SELECT dataset, count(DISTINCT model) FROM (SELECT c.dataset, r.model FROM case_responses r "
                  "JOIN case_questions q ON q.id = r.question_id JOIN cases c ON c.id = q.case_id "
                  "UNION SELECT dataset, model FROM fact_claims) GROUP BY dataset",
        "judges": "SELECT c.dataset, count(DISTINCT a.judge) FROM judge_assessments a JOIN case_questions q "
                  "ON q.id = a.question_id JOIN cases c ON c.id = q.case_id GROUP BY c.dataset",
        "judgements": "SELECT c.dataset, count(*) FROM judge_assessments a JOIN case_questions q "
                      "ON q.id = a.question_id JOIN cases c ON c.id = q.case_id GROUP BY c.dataset",
        "fact_items": "SELECT dataset, count(DISTINCT model || char(0) || item_key) FROM fact_claims GROUP BY dataset",
        "fact_claims": "SELECT dataset, count(*) FROM fact_claims GROUP BY dataset",
    }
    counts = {k: dict(conn.execute(sql).fetchall()) for k, sql in q.items()}
    names = sorted(set(counts["cases"]) | set(counts["fact_claims"]))
    return [{"dataset": n, **{k: counts[k].get(n, 0) for k in q}} for n in names]


def questions(db: sqlite_utils.Database, dataset: str) -> list[dict]:
    """Every question of ``dataset`` in case (import) order and position order, with responses and judgements.

    Each: ``question_id, case_id, case_key, title, description, position, question,
    reference, responses`` (``[{model, response}]`` sorted by model) and ``judgements``
    (``[{judge, rationale, models, scores}]`` sorted by judge; ``models`` in the order
    the judge saw them, ``scores`` ``{model: score}`` in that order). An unknown
    dataset gives ``[]``.
    """
    conn = db.conn
    name = (dataset or "").strip()
    out, by_id = [], {}
    for qid, cid, key, title, desc, pos, question, ref in conn.execute(
            "SELECT q.id, c.id, c.case_key, c.title, c.description, q.position, q.question, q.reference "
            "FROM case_questions q JOIN cases c ON c.id = q.case_id WHERE c.dataset = ? ORDER BY c.id, q.position",
            (name,)):
        d = {"question_id": qid, "case_id": cid, "case_key": key, "title": title, "description": desc,
             "position": pos, "question": question, "reference": ref, "responses": [], "judgements": []}
        out.append(d)
        by_id[qid] = d
    if not out:
        return out
    for qid, model, response in conn.execute(
            "SELECT r.question_id, r.model, r.response FROM case_responses r JOIN case_questions q ON q.id = r.question_id "
            "JOIN cases c ON c.id = q.case_id WHERE c.dataset = ? ORDER BY r.model", (name,)):
        by_id[qid]["responses"].append({"model": model, "response": response})
    scores: dict[int, dict] = {}
    for aid, model, score in conn.execute(
            "SELECT s.assessment_id, s.model, s.score FROM judge_scores s JOIN judge_assessments a "
            "ON a.id = s.assessment_id JOIN case_questions q ON q.id = a.question_id JOIN cases c "
            "ON c.id = q.case_id WHERE c.dataset = ?", (name,)):
        scores.setdefault(aid, {})[model] = score
    for aid, qid, judge, rationale, models in conn.execute(
            "SELECT a.id, a.question_id, a.judge, a.rationale, a.models FROM judge_assessments a JOIN case_questions q "
            "ON q.id = a.question_id JOIN cases c ON c.id = q.case_id WHERE c.dataset = ? ORDER BY a.judge", (name,)):
        models = json.loads(models)
        sc = scores.get(aid, {})
        by_id[qid]["judgements"].append({"judge": judge, "rationale": rationale, "models": models,
                                         "scores": {m: sc[m] for m in models if m in sc}})
    return out


def fact_claim_pairs(db: sqlite_utils.Database, dataset: str) -> list[dict]:
    """One row per (model, item) of ``dataset``, sorted by model then import order.

    Keys: ``model, item_key, type, factual_claim, factual_response,
    counterfactual_claim, counterfactual_response``.
    """
    rows = db.conn.execute(
        "SELECT f.model, f.item_key, f.type, f.claim, f.response, c.claim, c.response FROM fact_claims f "
        "JOIN fact_claims c ON c.dataset = f.dataset AND c.model = f.model AND c.item_key = f.item_key "
        "AND c.label = 'refute' WHERE f.dataset = ? AND f.label = 'support' ORDER BY f.model, f.id",
        ((dataset or "").strip(),)).fetchall()
    keys = ("model", "item_key", "type", "factual_claim", "factual_response", "counterfactual_claim",
            "counterfactual_response")
    return [dict(zip(keys, r)) for r in rows]
