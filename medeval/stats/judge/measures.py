"""The judge-vs-clinicians statistics: response-level correlations, Accuracy_2-tuple and Accuracy_triple,
win / tie / loss shares per pair of models, model rankings and their Spearman.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Sequence

from medeval.core.errors import MedevalError
from medeval.stats.agreement.correlations import correlation
from medeval.stats.agreement.ratings import Estimate
from medeval.stats.judge.responses import Response, _fmt

TIE_TOL = 1e-9
SOURCES = ("judge", "clinicians")


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

    The intervals are :func:`medeval.stats.agreement.correlations.correlation`'s: Pearson with variance
    1/(n-3), Spearman with the Bonett-Wright variance (1 + r²/2)/(n-3) -- the same Spearman interval as per
    criterion (:mod:`medeval.stats.judge.criteria`) and for the model rankings.

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
    CI (Bonett-Wright variance) is not given for n <= 3, nor when the rankings
    agree or disagree perfectly (|rho| = 1: Fisher's z is infinite; the
    estimate's ``extra["ci_undefined_reason"]`` says so). The p-value is the
    exact permutation p for up to 9 models: four models in the same order give
    p = 2/24, not the t approximation's 0.
    """
    judge = {m.model: m.mean for m in model_ranking(responses, "judge")}
    human = {m.model: m.mean for m in model_ranking(responses, "clinicians")}
    models = list(judge)
    return _corr([judge[m] for m in models], [human[m] for m in models], "spearman", "models", "model", "model")
