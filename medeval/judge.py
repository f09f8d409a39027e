"""Judge vs clinicians: how well an LLM judge's scores agree with clinicians' ratings of the same responses.

The statistics of AutoMedEval (seed 002, §4.3, Table 2, Fig. 4) and CMB-Clin
(seed 001, §5.3), from long rows ``case, model, judge_score, human_score``
with an optional ``rater`` column (one row per annotator per response):

* response level -- Spearman and Pearson between the judge's score and the
  clinicians' score of each response, with Fisher-z 95% CIs
  (:func:`medeval.agreement.correlation`);
* case level -- Accuracy_2-tuple (pairs of responses of a case the judge
  orders as the clinicians do) and Accuracy_triple (three-response cases the
  judge orders exactly as the clinicians do);
* per pair of models -- win / tie / loss shares, for the judge and for the
  clinicians side by side (002 Fig. 4);
* per model -- mean score, rank, and the Spearman between the judge's and the
  clinicians' model rankings (001 §5.3: 0.93 for GPT-4 vs experts).

Conventions (shared with :mod:`medeval.agreement`):

* The clinicians' score of a response is the mean over its raters (002 §4.2 and
  App. D: "we perform an averaging operation on the scores assigned by all
  annotators for each annotation item to derive the final rating"). The judge
  scores a response once, so its score must be the same on every rater's row.
* A case with a single response cannot be compared with anything: it is left
  out of *every* statistic (correlations included, so that all numbers describe
  the same responses) and counted in ``excluded`` with a warning.
* Two scores tie when they are equal up to a relative/absolute tolerance of
  ``TIE_TOL`` (means of several ratings are floats: 0.1 + 0.2 vs 0.3).
* A statistic that cannot be computed (one model, constant scores, no case with
  three responses) is ``value=None`` with ``undefined_reason``; never NaN.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Iterable, Mapping, Sequence

from .agreement import Estimate, correlation
from .errors import InputError, MedevalError

REQUIRED = ["case", "model", "judge_score", "human_score"]
OPTIONAL = ["rater"]
TIE_TOL = 1e-9
SOURCES = ("judge", "clinicians")
_SHOW = 20  # case ids listed in warnings before "..."


# ---------------------------------------------------------------- input


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
    from .io import cell, require_columns

    require_columns(file, list(header), REQUIRED, OPTIONAL)
    has_rater = "rater" in header
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
        if has_rater:
            raters.setdefault(rater, None)
    if n_rows == 0:
        raise InputError("no rows", file=file, fix="add one row per response (or per rater and response)")
    responses = tuple(Response(c, m, judge[(c, m)][0], math.fsum(v) / len(v), len(v))
                      for (c, m), v in ratings.items())
    return JudgeData(responses, tuple(raters) if has_rater else None, n_rows, file)


def read_judge_file(path) -> JudgeData:
    """Read and validate a CSV/TSV/JSONL/JSON file with columns case, model, judge_score, human_score[, rater].

    Errors name the file and the row: missing columns (with the columns found),
    empty or non-numeric scores, a (case, model, rater) given twice, a judge
    score that differs between the rater rows of one response.
    """
    from .io import read_table

    header, rows = read_table(path)
    return _collect(header, rows, str(path))


def from_records(records: Iterable[Mapping], source: str = "records") -> JudgeData:
    """The same validation for in-memory rows (dicts with the file's columns); rows are numbered from 1."""
    from .io import _normalise_objects

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


# ---------------------------------------------------------------- comparisons


def _fmt(x: float) -> str:
    return f"{x:g}"


def order(a: float, b: float) -> int:
    """1 if ``a`` scores higher than ``b``, -1 if lower, 0 on a tie (equal up to ``TIE_TOL``)."""
    if math.isclose(a, b, rel_tol=TIE_TOL, abs_tol=TIE_TOL):
        return 0
    return 1 if a > b else -1


def _group(responses: Sequence[Response]) -> dict[str, list[Response]]:
    cases: dict[str, list[Response]] = {}
    for r in responses:
        cases.setdefault(r.case, []).append(r)
    return cases


# ---------------------------------------------------------------- response level


def _corr(x, y, method: str, unit: str, what_j: str, what_h: str) -> Estimate:
    e = correlation(x, y, method)
    if e.value is not None:
        return e
    if e.n_pairable < 3:
        reason = f"fewer than 3 {unit} (found {e.n_pairable})"
    elif all(v == x[0] for v in x):
        reason = f"the judge gives every {what_j} the same score ({_fmt(x[0])})"
    elif all(order(v, y[0]) == 0 for v in y):
        reason = f"the clinicians give every {what_h} the same score ({_fmt(y[0])})"
    else:  # pragma: no cover - correlation() has no other undefined case
        reason = e.undefined_reason
    return dataclasses.replace(e, undefined_reason=reason)


def response_correlations(responses: Sequence[Response]) -> dict[str, Estimate]:
    """Spearman and Pearson between judge and clinicians over responses (002 §4.3, Table 2), Fisher-z CIs.

    Notes
    -----
    Responses of one case are not independent (same question, often the same
    rater), so the p-value and CI are optimistic when cases have many responses.
    Spearman asks "does the judge rank responses like the clinicians?", Pearson
    also rewards a linear scale match; AutoMedEval reports 0.631 / 0.685, GPT-4
    0.513 / 0.569 (002 Table 2).
    """
    x = [r.judge for r in responses]
    y = [r.human for r in responses]
    return {m: _corr(x, y, m, "responses", "response", "response") for m in ("spearman", "pearson")}


# ---------------------------------------------------------------- case level


@dataclass(frozen=True)
class PairAccuracy:
    """Accuracy_2-tuple: share of within-case response pairs the judge orders as the clinicians do."""

    value: float | None
    n_pairs: int
    n_agree: int
    n_tied_clinicians: int  # pairs the clinicians tie
    n_tied_judge: int  # pairs the judge ties
    n_tied_both: int  # ties on both sides (counted as agreement)
    undefined_reason: str | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class TripleAccuracy:
    """Accuracy_triple: share of three-response cases whose order the judge reproduces exactly."""

    value: float | None
    n_cases: int  # cases with exactly three responses
    n_agree: int
    n_cases_other_sizes: int  # cases with 2 or 4+ responses, not counted
    undefined_reason: str | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def accuracy_2tuple(responses: Sequence[Response]) -> PairAccuracy:
    """Accuracy_2-tuple (002 §4.3, Table 2): over all pairs of responses within a case, the share the judge
    orders as the clinicians' mean does; a tie agrees only with a tie.

    Every unordered pair {a, b} of responses of the same case is one trial; it
    agrees when sign(judge_a - judge_b) == sign(human_a - human_b), with 0 for a
    tie. Pairs are pooled over cases (a case with k responses weighs k(k-1)/2).

    Notes
    -----
    The paper defines it only as "the consistency between the relative magnitude
    of AutoMedEval's scoring and annotated scores" (§4.3); the tie rule is the
    project's (issue 6). With 1-5 scales ties are frequent: look at
    ``n_tied_clinicians`` -- a judge that never ties cannot exceed
    1 - n_tied_clinicians / n_pairs. AutoMedEval: 74.61%, GPT-4: 67.98% (Table 2).

    >>> rs = [Response("c1", "A", 5, 4.5, 2), Response("c1", "B", 3, 3.0, 2), Response("c1", "C", 3, 3.5, 2)]
    >>> accuracy_2tuple(rs).value  # A>B agrees, A>C agrees, B=C vs B<C disagrees
    0.6666666666666666
    """
    n = agree = tie_h = tie_j = tie_both = 0
    for rs in _group(responses).values():
        for a, b in combinations(rs, 2):
            oj, oh = order(a.judge, b.judge), order(a.human, b.human)
            n += 1
            agree += oj == oh
            tie_j += oj == 0
            tie_h += oh == 0
            tie_both += oj == 0 and oh == 0
    if n == 0:
        return PairAccuracy(None, 0, 0, 0, 0, 0, "no case with two or more responses")
    return PairAccuracy(agree / n, n, agree, tie_h, tie_j, tie_both)


def accuracy_triple(responses: Sequence[Response]) -> TripleAccuracy:
    """Accuracy_triple (002 §4.3, Table 2): the share of cases with exactly three responses that the judge
    orders exactly as the clinicians do.

    A case agrees when all three of its pairs agree under the rule of
    :func:`accuracy_2tuple` -- the judge's weak order (ties included) equals the
    clinicians'. So clinicians' 5 > 4 = 4 needs the judge to put the first
    response strictly on top and tie the other two.

    Notes
    -----
    The paper says only that it "measures alignment over three medical LLMs"
    (§4.3); App. F models it as the product of three per-response match
    probabilities, i.e. all three must be right. How ties count is not stated:
    here a tie agrees only with a tie, as in Accuracy_2-tuple. Cases with two
    or four and more responses are not counted (``n_cases_other_sizes``).
    AutoMedEval: 48.65%, GPT-4: 35.42% (Table 2).
    """
    cases = _group(responses)
    triples = [rs for rs in cases.values() if len(rs) == 3]
    other = len(cases) - len(triples)
    if not triples:
        sizes = Counter(len(rs) for rs in cases.values())
        found = ", ".join(f"{n} with {k}" for k, n in sorted(sizes.items())) or "no cases"
        return TripleAccuracy(None, 0, 0, other, f"no case with exactly three responses (cases: {found})")
    agree = sum(all(order(a.judge, b.judge) == order(a.human, b.human) for a, b in combinations(rs, 2))
                for rs in triples)
    return TripleAccuracy(agree / len(triples), len(triples), agree, other)


# ---------------------------------------------------------------- per pair of models


@dataclass(frozen=True)
class WinRate:
    """How often ``model_a`` scores higher than / the same as / lower than ``model_b`` on the cases with both."""

    model_a: str
    model_b: str
    source: str  # "judge" or "clinicians"
    n_cases: int
    wins: int
    ties: int
    losses: int

    @property
    def win(self) -> float | None:
        return self.wins / self.n_cases if self.n_cases else None

    @property
    def tie(self) -> float | None:
        return self.ties / self.n_cases if self.n_cases else None

    @property
    def loss(self) -> float | None:
        return self.losses / self.n_cases if self.n_cases else None

    def to_dict(self) -> dict:
        d = {"win": self.win, "tie": self.tie, "loss": self.loss, "n_cases": self.n_cases,
             "wins": self.wins, "ties": self.ties, "losses": self.losses}
        if not self.n_cases:
            d["undefined_reason"] = "no case has responses from both models"
        return d


def models_of(responses: Sequence[Response]) -> list[str]:
    """Models in order of first appearance."""
    return list(dict.fromkeys(r.model for r in responses))


def win_rates(responses: Sequence[Response], source: str = "judge") -> dict[tuple[str, str], WinRate]:
    """Win / tie / loss shares for every ordered pair of models (002 §4.4.2, Fig. 4), by ``source``.

    For (A, B): over the cases that have a response from both, the share where
    A's score is higher (win), equal (tie), lower (loss); win(A, B) = loss(B, A).

    Notes
    -----
    Compare the judge's matrix with the clinicians' cell by cell. The paper
    warns that responses are sampled per case, so "performance transitivity
    does not apply" (A beats B and B beats C says nothing about A vs C).
    A pair that shares few cases gives a noisy share: read ``n_cases``.
    """
    if source not in SOURCES:
        raise MedevalError(f"source {source!r} must be one of {', '.join(SOURCES)}")
    models = models_of(responses)
    counts = {(a, b): [0, 0, 0, 0] for a, b in permutations(models, 2)}  # n, wins, ties, losses
    for rs in _group(responses).values():
        for a, b in permutations(rs, 2):
            c = counts[(a.model, b.model)]
            o = order(a.score(source), b.score(source))
            c[0] += 1
            c[1 if o > 0 else 2 if o == 0 else 3] += 1
    return {k: WinRate(k[0], k[1], source, *v) for k, v in counts.items()}


# ---------------------------------------------------------------- per model


@dataclass(frozen=True)
class ModelMean:
    """A model's mean score by one source and its rank (1 = best; tied means share the average rank)."""

    model: str
    mean: float
    n_responses: int
    rank: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def model_ranking(responses: Sequence[Response], source: str = "judge") -> list[ModelMean]:
    """Models by mean score (over their responses) from the judge or the clinicians, best first.

    Notes
    -----
    A mean compares models fairly only when they answered the same cases;
    :func:`summarise` warns when they did not.
    """
    if source not in SOURCES:
        raise MedevalError(f"source {source!r} must be one of {', '.join(SOURCES)}")
    scores: dict[str, list[float]] = {}
    for r in responses:
        scores.setdefault(r.model, []).append(r.score(source))
    means = sorted(((m, math.fsum(v) / len(v), len(v)) for m, v in scores.items()), key=lambda t: -t[1])
    out: list[ModelMean] = []
    i = 0
    while i < len(means):
        j = i
        while j + 1 < len(means) and order(means[j + 1][1], means[i][1]) == 0:
            j += 1
        rank = (i + 1 + j + 1) / 2
        out.extend(ModelMean(m, mean, n, rank) for m, mean, n in means[i:j + 1])
        i = j + 1
    return out


def ranking_spearman(responses: Sequence[Response]) -> Estimate:
    """Spearman between the judge's and the clinicians' model rankings (001 §5.3: 0.93), Fisher-z CI.

    Notes
    -----
    n is the number of models: with fewer than 3 it is undefined, and with a
    handful a single swap moves it a lot (3 models: 1, 0.5, -0.5 or -1). The
    CI is not given for n <= 3.
    """
    judge = {m.model: m.mean for m in model_ranking(responses, "judge")}
    human = {m.model: m.mean for m in model_ranking(responses, "clinicians")}
    models = list(judge)
    return _corr([judge[m] for m in models], [human[m] for m in models], "spearman", "models", "model", "model")


# ---------------------------------------------------------------- summary (CLI)


def _est(e: Estimate) -> dict:
    return {"value": e.value, "ci95": list(e.ci95) if e.ci95 else None, "p": e.extra.get("p"),
            "n": e.n_pairable, "undefined_reason": e.undefined_reason, "method": e.method}


def _cases_list(cases: Sequence[str]) -> str:
    shown = ", ".join(cases[:_SHOW])
    return shown + (f", ... ({len(cases) - _SHOW} more)" if len(cases) > _SHOW else "")


def summarise(data: JudgeData) -> dict:
    """Every judge-vs-clinicians statistic as plain data (the CLI's JSON)."""
    kept, excluded = split_cases(data.responses)
    responses = [r for rs in kept.values() for r in rs]
    models = models_of(responses)
    warnings = []
    if excluded:
        warnings.append(f"{len(excluded)} case{'s' if len(excluded) > 1 else ''} with a single response "
                        f"left out of every statistic ({_cases_list(list(excluded))}): a case needs two or more "
                        f"responses to compare")
    case_sets = {m: {r.case for r in responses if r.model == m} for m in models}
    same_cases = len({frozenset(s) for s in case_sets.values()}) <= 1
    if not same_cases:
        counts = ", ".join(f"{m}: {len(s)}" for m, s in case_sets.items())
        warnings.append(f"models were not scored on the same cases (cases per model: {counts}); their mean "
                        f"scores, and so the rankings, average over different cases")
    corr = response_correlations(responses)
    if not responses:
        why = "no case with two or more responses"
        corr = {k: dataclasses.replace(e, undefined_reason=why) for k, e in corr.items()}
    ratings = [r.n_ratings for r in responses]
    ranking = {s: [m.to_dict() for m in model_ranking(responses, s)] for s in SOURCES}
    ranking["spearman"] = _est(ranking_spearman(responses))
    if not responses:
        ranking["spearman"]["undefined_reason"] = "no case with two or more responses"
    ranking["same_cases"] = same_cases
    wr = {s: win_rates(responses, s) for s in SOURCES}
    return {
        "file": data.source,
        "n_rows": data.n_rows,
        "n_cases": len(kept),
        "n_responses": len(responses),
        "n_models": len(models),
        "models": models,
        "n_raters": len(data.raters) if data.raters is not None else None,
        "raters_per_response": ({"min": min(ratings), "max": max(ratings)}
                                if data.raters is not None and ratings else None),
        "human_score": ("mean over raters" if data.raters is not None
                        else "as given (no rater column: one row per response)"),
        "excluded": {"single_response_cases": len(excluded), "cases": list(excluded)[:_SHOW]},
        "spearman": _est(corr["spearman"]),
        "pearson": _est(corr["pearson"]),
        "accuracy_2tuple": accuracy_2tuple(responses).to_dict(),
        "accuracy_triple": accuracy_triple(responses).to_dict(),
        "win_rate": {"models": models,
                     **{s: {a: {b: wr[s][(a, b)].to_dict() for b in models if b != a} for a in models}
                        for s in SOURCES}},
        "ranking": ranking,
        "warnings": warnings,
    }


def _num(v, digits: int = 4) -> str:
    if v is None:
        return ""
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _csv_rows(s: dict) -> list[list]:
    rows = []
    for key in ("spearman", "pearson"):
        e = s[key]
        ci = e["ci95"] or [None, None]
        rows.append([key, "", "", "", e["value"], ci[0], ci[1], e["p"], e["n"], e["undefined_reason"]])
    a2, a3 = s["accuracy_2tuple"], s["accuracy_triple"]
    rows.append(["accuracy_2tuple", "", "", "", a2["value"], None, None, None, a2["n_pairs"], a2["undefined_reason"]])
    rows.append(["accuracy_triple", "", "", "", a3["value"], None, None, None, a3["n_cases"], a3["undefined_reason"]])
    e = s["ranking"]["spearman"]
    ci = e["ci95"] or [None, None]
    rows.append(["ranking_spearman", "", "", "", e["value"], ci[0], ci[1], e["p"], e["n"], e["undefined_reason"]])
    for src in SOURCES:
        for a, cells in s["win_rate"][src].items():
            for b, c in cells.items():
                for stat in ("win", "tie", "loss"):
                    rows.append([f"{stat}_rate", src, a, b, c[stat], None, None, None, c["n_cases"],
                                 c.get("undefined_reason")])
    for src in SOURCES:
        for m in s["ranking"][src]:
            rows.append(["mean_score", src, m["model"], "", m["mean"], None, None, None, m["n_responses"], None])
            rows.append(["rank", src, m["model"], "", m["rank"], None, None, None, m["n_responses"], None])
    return rows


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def render(s: dict, fmt: str) -> str:
    """The summary as ``json``, ``csv`` (one tidy table) or ``md`` (for a report)."""
    import csv
    import io
    import json

    if fmt == "json":
        return json.dumps(s, ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["statistic", "source", "model_a", "model_b", "value", "ci95_low", "ci95_high", "p", "n",
                    "undefined_reason"])
        for row in _csv_rows(s):
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
        return buf.getvalue()
    if fmt != "md":
        raise MedevalError(f"unknown format {fmt!r} (json, csv or md)")
    raters = (f"{s['n_raters']} raters (clinicians' score = mean over raters)" if s["n_raters"] is not None
              else "human_score as given (no rater column)")
    out = [f"{s['n_cases']} cases, {s['n_responses']} responses, {s['n_models']} models; {raters}.", ""]
    out += [f"> warning: {w}" for w in s["warnings"]] + ([""] if s["warnings"] else [])
    out += ["| statistic | value | 95% CI | n |", "|---|---|---|---|"]

    def line(name, value, ci, n, why, pct=False):
        val = f"undefined: {why}" if value is None else (_pct(value) if pct else f"{value:.4f}")
        out.append(f"| {name} | {val} | {f'[{ci[0]:.4f}, {ci[1]:.4f}]' if ci else ''} | {n} |")

    for key, label in (("spearman", "Spearman (responses)"), ("pearson", "Pearson (responses)")):
        e = s[key]
        line(label, e["value"], e["ci95"], e["n"], e["undefined_reason"])
    a2, a3 = s["accuracy_2tuple"], s["accuracy_triple"]
    line("Accuracy_2-tuple", a2["value"], None, f"{a2['n_pairs']} pairs", a2["undefined_reason"], pct=True)
    line("Accuracy_triple", a3["value"], None, f"{a3['n_cases']} cases", a3["undefined_reason"], pct=True)
    e = s["ranking"]["spearman"]
    line("Spearman (model rankings)", e["value"], e["ci95"], f"{e['n']} models", e["undefined_reason"])
    models = s["win_rate"]["models"]
    if len(models) >= 2:
        out += ["", "Win rate of the row model over the column model, judge | clinicians (ties in brackets):", "",
                "| | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
        for a in models:
            cells = []
            for b in models:
                if a == b:
                    cells.append("")
                    continue
                j, c = s["win_rate"]["judge"][a][b], s["win_rate"]["clinicians"][a][b]
                cells.append("-" if not j["n_cases"] else
                             f"{_pct(j['win'])} ({_pct(j['tie'])}) \\| {_pct(c['win'])} ({_pct(c['tie'])})")
            out.append(f"| {a} | " + " | ".join(cells) + " |")
    if models:
        by = {src: {m["model"]: m for m in s["ranking"][src]} for src in SOURCES}
        out += ["", "| model | judge mean | judge rank | clinicians mean | clinicians rank | responses |",
                "|---|---|---|---|---|---|"]
        for m in s["ranking"]["judge"]:
            j, c = by["judge"][m["model"]], by["clinicians"][m["model"]]
            out.append(f"| {m['model']} | {j['mean']:.3f} | {j['rank']:g} | {c['mean']:.3f} | {c['rank']:g} | "
                       f"{j['n_responses']} |")
    return "\n".join(out) + "\n"
