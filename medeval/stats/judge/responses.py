"""Reading the judge file: rows ``case, model, judge_score, human_score[, rater]`` validated into one
:class:`Response` per case and model (the clinicians' score the mean over raters), and optional per-criterion
columns ``judge_<criterion>`` / ``human_<criterion>`` (``judge_fluency``, ``human_fluency`` ...) read the same
way into :attr:`JudgeData.criteria` (a blank cell: that side did not score the response on that criterion).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from medeval.core.errors import InputError

REQUIRED = ["case", "model", "judge_score", "human_score"]
OPTIONAL = ["rater"]
CRITERION_SIDES = {"judge_": "judge", "human_": "human"}  # column prefix of per-criterion scores -> side


@dataclass(frozen=True)
class Response:
    """One model's response to one case: the judge's score and the clinicians' (mean) score."""

    case: str
    model: str
    judge: float
    human: float
    n_ratings: int  # rater rows behind ``human`` (1 without a rater column)

    def score(self, source: str) -> float:
        return self.judge if source == "judge" else self.human


@dataclass(frozen=True)
class JudgeData:
    """Validated input: one :class:`Response` per (case, model), in the order of the file."""

    responses: tuple[Response, ...]
    raters: tuple[str, ...] | None  # None: no rater column, human_score taken as given
    n_rows: int
    source: str
    # per-criterion scores: {criterion: {"judge": {(case, model): score}, "human": {(case, model): mean}}}
    criteria: dict = field(default_factory=dict, compare=False)


def _number(value: str, column: str, file: str, row: int) -> float:
    if value == "":
        raise InputError(f"{column} is empty", file=file, row=row,
                         fix=f"give every row a numeric {column}; leave out a rater's row rather than "
                             f"leaving the score blank")
    try:
        x = float(value)
    except ValueError:
        raise InputError(f"{column} {value!r} is not a number", file=file, row=row,
                         fix=f"{column} must be a number such as 4 or 3.5") from None
    if not math.isfinite(x):
        raise InputError(f"{column} {value!r} is not a finite number", file=file, row=row,
                         fix=f"{column} must be a number such as 4 or 3.5")
    return x


def _collect(header: Sequence[str], rows: Iterable[tuple[int, Mapping]], file: str) -> JudgeData:
    from medeval.core.tables import cell, require_columns

    crit_cols = _criterion_columns(header)
    require_columns(file, list(header), REQUIRED, OPTIONAL + [c for c, _, _ in crit_cols])
    has_rater = "rater" in header
    crit_judge: dict[tuple[str, str, str], tuple[float, int]] = {}
    crit_human: dict[tuple[str, str, str], list[float]] = {}
    seen: dict[tuple, int] = {}
    judge: dict[tuple[str, str], tuple[float, int]] = {}
    ratings: dict[tuple[str, str], list[float]] = {}
    raters: dict[str, None] = {}
    n_rows = 0
    for line, r in rows:
        n_rows += 1
        case, model = cell(r, "case"), cell(r, "model")
        rater = cell(r, "rater") if has_rater else None
        for col, v in (("case", case), ("model", model)) + ((("rater", rater),) if has_rater else ()):
            if not v:
                raise InputError(f"{col} is empty", file=file, row=line,
                                 fix=f"every row names its {col}")
        j = _number(cell(r, "judge_score"), "judge_score", file, line)
        h = _number(cell(r, "human_score"), "human_score", file, line)
        key = (case, model, rater)
        if key in seen:
            if has_rater:
                raise InputError(
                    f"rater {rater!r} scored model {model!r} on case {case!r} twice (also on row {seen[key]})",
                    file=file, row=line,
                    fix="keep one row per case, model and rater; ratings are never averaged silently")
            raise InputError(
                f"model {model!r} appears twice on case {case!r} (also on row {seen[key]})", file=file, row=line,
                fix="keep one row per case and model, or add a `rater` column when the rows are "
                    "different annotators' ratings")
        seen[key] = line
        if (case, model) in judge and judge[(case, model)][0] != j:
            j0, line0 = judge[(case, model)]
            raise InputError(
                f"judge_score of model {model!r} on case {case!r} is {_fmt(j)} here but {_fmt(j0)} on row {line0}",
                file=file, row=line,
                fix="the judge scores a response once: repeat the same judge_score on every rater's row")
        judge.setdefault((case, model), (j, line))
        ratings.setdefault((case, model), []).append(h)
        for col, crit, side in crit_cols:
            raw = cell(r, col)
            if raw == "":
                continue
            v = _number(raw, col, file, line)
            if side == "human":
                crit_human.setdefault((crit, case, model), []).append(v)
            elif (crit, case, model) in crit_judge and crit_judge[(crit, case, model)][0] != v:
                v0, line0 = crit_judge[(crit, case, model)]
                raise InputError(
                    f"{col} of model {model!r} on case {case!r} is {_fmt(v)} here but {_fmt(v0)} on row {line0}",
                    file=file, row=line, fix=f"the judge scores a response once: repeat the same {col} on every "
                                             "rater's row (or leave it blank there)")
            else:
                crit_judge.setdefault((crit, case, model), (v, line))
        if has_rater:
            raters.setdefault(rater, None)
    if n_rows == 0:
        raise InputError("no rows", file=file, fix="add one row per response (or per rater and response)")
    responses = tuple(Response(c, m, judge[(c, m)][0], math.fsum(v) / len(v), len(v))
                      for (c, m), v in ratings.items())
    criteria: dict = {}
    for _, crit, _ in crit_cols:
        criteria.setdefault(crit, {"judge": {}, "human": {}})
    for (crit, c, m), (v, _) in crit_judge.items():
        criteria[crit]["judge"][(c, m)] = v
    for (crit, c, m), vs in crit_human.items():
        criteria[crit]["human"][(c, m)] = math.fsum(vs) / len(vs)
    return JudgeData(responses, tuple(raters) if has_rater else None, n_rows, file, criteria)


def _criterion_columns(header: Sequence[str]) -> list[tuple[str, str, str]]:
    """``(column, criterion, side)`` of the per-criterion columns: ``judge_<criterion>``, ``human_<criterion>``."""
    out = []
    for col in header:
        for prefix, side in CRITERION_SIDES.items():
            if col.startswith(prefix) and col not in REQUIRED and len(col) > len(prefix):
                out.append((col, col[len(prefix):], side))
    return out


def read_judge_file(path) -> JudgeData:
    """Read and validate a CSV/TSV/JSONL/JSON file with columns case, model, judge_score, human_score[, rater].

    Errors name the file and the row: missing columns (with the columns found),
    empty or non-numeric scores, a (case, model, rater) given twice, a judge
    score that differs between the rater rows of one response. Read within the input limits
    (:func:`medeval.core.limits.read_table_limited`: text length, NUL bytes, nesting depth).
    """
    from medeval.core.limits import read_table_limited

    header, rows = read_table_limited(path)
    return _collect(header, rows, str(path))


def from_records(records: Iterable[Mapping], source: str = "records") -> JudgeData:
    """The same validation for in-memory rows (dicts with the file's columns); rows are numbered from 1."""
    from medeval.core.tables import _normalise_objects

    rows = [(i, dict(r)) for i, r in enumerate(records, start=1)]
    if not rows:
        raise InputError("no rows", file=source, fix="give one row per response (or per rater and response)")
    header, rows = _normalise_objects(rows)
    return _collect(header, rows, source)


def split_cases(responses: Sequence[Response]) -> tuple[dict[str, list[Response]], dict[str, list[Response]]]:
    """``(kept, excluded)``: cases with two or more responses, and cases with a single one."""
    cases: dict[str, list[Response]] = {}
    for r in responses:
        cases.setdefault(r.case, []).append(r)
    kept = {c: rs for c, rs in cases.items() if len(rs) >= 2}
    excluded = {c: rs for c, rs in cases.items() if len(rs) < 2}
    return kept, excluded


def _fmt(x: float) -> str:
    return f"{x:g}"
