"""Reading and validating a judgements file: each judge's assessment of the responses to one question, with
its score of each response, overall and, optionally, per criterion (CMB-Clin §5: Fluency, Relevance,
Completeness, Proficiency).

The format is described in :func:`read_judgements` (and in the README's import section).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from pathlib import Path

from medeval.annotation.cases.formats import _json_cell, _key, _name, _text_value, _where
from medeval.annotation.cases.judge_scores import read_judge_scores
from medeval.annotation.cases.records import JudgementIn
from medeval.core.errors import InputError
from medeval.core.limits import JUDGE_SCORE_MAX, JUDGE_SCORE_MIN, read_table_limited
from medeval.core.tables import cell, require_columns

CRITERION_PREFIX = "score_"
OVERALL_KEYS = ("overall", "total")  # in a nested scores object: the response's overall score, not a criterion


def _parse_models(raw, *, file: str, row: int) -> list[str]:
    if isinstance(raw, str):
        t = raw.strip()
        if t.startswith("["):
            try:
                raw = json.loads(_json_cell(t, "models", file=file, row=row))
            except json.JSONDecodeError as e:
                raise InputError(f"models is not a valid JSON list: {e.msg}", file=file, row=row,
                                 fix='write ["model-a", "model-b"] or model-a,model-b') from None
        else:
            raw = re.split(r"[,，]", t) if t else []
    if not isinstance(raw, list):
        raise InputError(f"models is a {type(raw).__name__}, expected a list", file=file, row=row,
                         fix='write ["model-a", "model-b"] or model-a,model-b')
    models = [_name(_key(_text_value(m)), "a model name in models", file=file, row=row) for m in raw]
    if not models or any(not m for m in models):
        raise InputError("models has an empty name" if models else "models is empty", file=file, row=row,
                         fix="list the models in the order the judge saw their responses, e.g. model-a,model-b")
    dup = next((m for i, m in enumerate(models) if m in models[:i]), None)
    if dup:
        raise InputError(f"model {dup!r} appears twice in models", file=file, row=row,
                         fix="list each model once, in the order the judge saw the responses")
    return models


def _score(v, what: str, *, file: str, row: int) -> float:
    """A judge's score: a finite number in [JUDGE_SCORE_MIN, JUDGE_SCORE_MAX], the same range wherever it was
    read from (``what`` names it in errors: "the score of 'model-a'")."""
    if isinstance(v, str):
        try:
            v = float(unicodedata.normalize("NFKC", v).strip())
        except ValueError:
            pass
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise InputError(f"{what} is {v!r}, not a number", file=file, row=row,
                         fix="scores must be finite numbers, e.g. 4 or 3.5")
    if not JUDGE_SCORE_MIN <= v <= JUDGE_SCORE_MAX:
        raise InputError(f"{what} is {v:g}, outside {JUDGE_SCORE_MIN:g} to {JUDGE_SCORE_MAX:g}",
                         file=file, row=row,
                         fix=f"judge scores are numbers from {JUDGE_SCORE_MIN:g} to {JUDGE_SCORE_MAX:g} "
                             "(e.g. 1-5 or 1-10); rescale them before importing")
    return float(v)


def _json_object(raw, what: str, *, file: str, row: int, example: str) -> dict:
    if isinstance(raw, str):
        try:
            raw = json.loads(_json_cell(raw, what, file=file, row=row))
        except json.JSONDecodeError as e:
            raise InputError(f"{what} is not valid JSON: {e.msg}", file=file, row=row,
                             fix=f"write a JSON object like {example} (in CSV, quote the cell)") from None
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{what} must be a non-empty JSON object" +
                         (f" (found {type(raw).__name__})" if not isinstance(raw, dict) else ""),
                         file=file, row=row, fix=f"write {example}")
    return raw


def _model_map(raw: dict, what: str, *, file: str, row: int) -> dict:
    """``{model name: value}`` with the names checked and normalised, each once."""
    out: dict = {}
    for k, v in raw.items():
        name = _name(_key(str(k)), f"a model name in {what}", file=file, row=row)
        if not name:
            raise InputError(f"{what} has an empty model name", file=file, row=row, fix="name every model")
        if name in out:
            raise InputError(f"model {name!r} appears twice in {what}", file=file, row=row, fix="score each model once")
        out[name] = v
    return out


def _criterion(name: str, *, file: str, row: int) -> str:
    crit = _name(_key(name), "a criterion name", file=file, row=row)
    if not crit:
        raise InputError("a criterion name is empty", file=file, row=row,
                         fix='name each criterion, e.g. {"fluency": 4, "relevance": 5}')
    return crit


def _parse_scores(raw, *, file: str, row: int) -> tuple[dict[str, float] | None, dict[str, dict[str, float]]]:
    """``scores`` as ``(overall {model: score} or None, criteria {model: {criterion: score}})``: each model's
    value a number (its score) or an object of per-criterion scores, with ``overall``/``total`` optional."""
    example = '{"model-a": 4, "model-b": 3} or {"model-a": {"fluency": 4, "relevance": 5}, ...}'
    by_model = _model_map(_json_object(raw, "scores", file=file, row=row, example=example), "scores",
                          file=file, row=row)
    nested = {m for m, v in by_model.items() if isinstance(v, dict)}
    if nested and len(nested) < len(by_model):
        raise InputError("scores gives some models a number and others per-criterion scores", file=file, row=row,
                         fix="give every model a number, or every model an object of per-criterion scores")
    if not nested:
        return {m: _score(v, f"the score of {m!r}", file=file, row=row) for m, v in by_model.items()}, {}
    overall: dict[str, float] = {}
    criteria: dict[str, dict[str, float]] = {}
    for m, obj in by_model.items():
        crit: dict[str, float] = {}
        for k, v in obj.items():
            c = _criterion(str(k), file=file, row=row)
            if c.casefold() in OVERALL_KEYS:
                overall[m] = _score(v, f"the overall score of {m!r}", file=file, row=row)
                continue
            if any(c.casefold() == o.casefold() for o in crit):
                raise InputError(f"criterion {c!r} appears twice for {m!r}", file=file, row=row,
                                 fix="score each criterion once")
            crit[c] = _score(v, f"the {c} score of {m!r}", file=file, row=row)
        criteria[m] = crit
    if overall and len(overall) < len(by_model):
        missing = [m for m in by_model if m not in overall]
        raise InputError(f"scores gives an overall score to some models but not to {', '.join(missing)}",
                         file=file, row=row, fix="give every model an \"overall\" score, or none")
    return overall or None, criteria


def _criterion_columns(obj: dict, header: list[str], criteria: dict, *, file: str, row: int) -> None:
    """Add the ``score_<criterion>`` columns' ``{model: score}`` to ``criteria`` ({model: {criterion: score}})."""
    for col in header:
        if not col.startswith(CRITERION_PREFIX) or obj.get(col) in (None, "") or (
                isinstance(obj.get(col), str) and not obj[col].strip()):
            continue
        c = _criterion(col[len(CRITERION_PREFIX):], file=file, row=row)
        raw = _model_map(_json_object(obj[col], col, file=file, row=row, example='{"model-a": 4, "model-b": 3}'),
                         col, file=file, row=row)
        for m, v in raw.items():
            have = criteria.setdefault(m, {})
            if any(c.casefold() == o.casefold() for o in have):
                raise InputError(f"the {c} score of {m!r} is given twice (in scores and in {col})", file=file,
                                 row=row, fix="give each criterion in one place")
            have[c] = _score(v, f"the {c} score of {m!r}", file=file, row=row)


def _check_criteria(models: list[str], criteria: dict, *, file: str, row: int) -> None:
    extra = [m for m in criteria if m not in models]
    if extra:
        raise InputError(f"per-criterion scores name {', '.join(extra)}, which the judge did not assess "
                         f"(models: {', '.join(models)})", file=file, row=row,
                         fix="score exactly the models the judge saw")
    names = {c.casefold(): c for m in criteria for c in criteria[m]}
    for m in models:
        have = {c.casefold() for c in criteria.get(m, {})}
        missing = [names[k] for k in names if k not in have]
        if missing:
            raise InputError(f"{m!r} has no {', '.join(missing)} score (the other models have one)", file=file,
                             row=row, fix="score every response on every criterion, or leave the criterion out")


def _reads_scores(rationale: str) -> bool:
    """Whether the rationale holds any per-response score (a conflict in it counts: it is reported later)."""
    try:
        return bool(read_judge_scores(rationale).scores)
    except InputError:
        return True


def _from_rationale(rationale: str, models: list[str], *, file: str, row: int) -> dict[str, float]:
    try:
        r = read_judge_scores(rationale, n_responses=len(models))
    except InputError as e:
        raise InputError(e.detail, file=file, row=row, fix=e.fix) from None
    parsed = r.scores
    beyond = [p for p in parsed if p > len(models)]
    if beyond:
        raise InputError(f"the rationale scores response {beyond[0]} but models lists only {len(models)} "
                         f"({', '.join(models)})", file=file, row=row,
                         fix="list every model the judge saw, in order, or correct the rationale")
    missing = [i for i in range(1, len(models) + 1) if i not in parsed]
    if missing:
        shown = ", ".join(f"{p}: {v:g}" for p, v in parsed.items()) or "no score"
        loose = (f"; scores that name no single response: {', '.join(repr(u[:60]) for u in r.unassigned[:3])}"
                 if r.unassigned else "")
        raise InputError(f"the rationale gives {len(parsed)} score(s) for {len(models)} models (found {shown}; "
                         f"none for response {', '.join(map(str, missing))} = "
                         f"{', '.join(models[i - 1] for i in missing)}{loose})", file=file, row=row,
                         fix="give the scores in a 'scores' column ({\"model\": score, ...}), or write them in "
                             "the rationale as 'Doctor 1: 4 points' / '医生1：4分'")
    return {models[p - 1]: _score(v, f"the score of {models[p - 1]!r}", file=file, row=row)
            for p, v in parsed.items()}


def read_judgements(path: str | Path) -> list[JudgementIn]:
    """Read and validate a judgements file: ``case, question, judge, rationale`` and ``scores`` and/or ``models``.

    * ``scores``: a JSON object ``{model: score}`` (in CSV a JSON string); its key
      order is the judge's order unless ``models`` is given too (then the two must
      name the same models). A model's value may instead be an object of
      per-criterion scores, ``{"fluency": 4, "relevance": 5, "completeness": 3,
      "proficiency": 4}`` (every model the same criteria), with an optional
      ``"overall"`` (or ``"total"``) score.
    * ``score_<criterion>`` columns (``score_fluency`` ...): per-criterion scores,
      each a JSON object ``{model: score}``; criterion names are compared
      case-insensitively, and every model needs a score on every criterion given.
    * ``models``: the order the judge saw the responses in (a JSON list, or a
      comma-separated string); without ``scores`` the scores are read from the
      rationale with :func:`medeval.annotation.cases.judge_scores.read_judge_scores`,
      where "Doctor 2" is ``models[1]``. Every model needs a score there, and no number
      may point beyond the list; a score that names no single response is listed in the error.
    * With per-criterion scores and no overall score (no number in ``scores``, no
      ``overall``): when ``models`` is given and the rationale scores responses, the
      overall scores are read from it (every model needs one, as above); otherwise a
      response's score is the mean over its criteria (CMB-Clin's "Avg.").

    ``question`` is the 1-based position of the question in its case; one
    assessment per (case, question, judge); the rationale may not be empty.
    """
    file = str(path)
    header, rows = read_table_limited(path)
    crit_cols = [h for h in header if h.startswith(CRITERION_PREFIX)]
    require_columns(path, header, ["case", "question", "judge", "rationale"], ["scores", "models", *crit_cols])
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
        overall, criteria = _parse_scores(obj["scores"], file=file, row=row) if has_scores else (None, {})
        _criterion_columns(obj, crit_cols, criteria, file=file, row=row)
        if models is None:
            if not has_scores:
                raise InputError("neither scores nor models is given on this row", file=file, row=row,
                                 fix="give scores ({\"model\": score}) or models (the order the judge saw the "
                                     "responses in)")
            models = list(overall or criteria)
        named = set(overall) if overall is not None else set(criteria) if has_scores else None
        if named is not None and set(models) != named:
            raise InputError(f"models ({', '.join(models)}) and scores ({', '.join(named)}) name different "
                             "models", file=file, row=row, fix="score exactly the models listed in models")
        _check_criteria(models, criteria, file=file, row=row)
        if overall is not None:
            scores = overall
        elif criteria and not (has_models and _reads_scores(rationale)):
            scores = {m: math.fsum(criteria[m].values()) / len(criteria[m]) for m in models}
        else:
            scores = _from_rationale(rationale, models, file=file, row=row)
        k = (key, pos, judge)
        if k in seen:
            raise InputError(f"duplicate assessment by {judge} of case {key!r}, question {pos} (also on row {seen[k]})",
                             file=file, row=row, fix="keep one assessment per case, question and judge")
        seen[k] = row
        out.append(JudgementIn(key, pos, judge, rationale, tuple(models), {m: scores[m] for m in models}, row,
                               {m: dict(criteria[m]) for m in models if criteria.get(m)}))
    return out
