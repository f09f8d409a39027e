"""Judge vs clinicians per criterion (CMB-Clin, seed 001, §5.3 and App. E.3): on each perspective (Fluency,
Relevance, Completeness, Proficiency) the Pearson correlation between the judge's score and the experts' score
of every response -- all above 0.71 for GPT-4 in the paper -- here with Spearman beside it, 95% CIs and n.

* The experts' score of a response on a criterion is the mean over the clinicians who rated it (as for the
  overall score, :mod:`medeval.stats.judge`); a response enters a criterion when both sides scored it there.
* Criterion names are matched case-insensitively (NFKC, spaces collapsed): the judge's "Fluency" is the
  clinicians' "fluency". A criterion only the judge scores is listed as "no clinicians' ratings"; one only the
  clinicians rate as "no judge scores".
* Pearson: :func:`scipy.stats.pearsonr` with the Fisher-z 95% CI (se = 1/sqrt(n-3)), the interval
  ``pearsonr(...).confidence_interval()`` gives. Spearman: :func:`scipy.stats.spearmanr` (average ranks for
  ties) with a Fisher-z CI using the Bonett & Wright (2000) variance (1 + r²/2)/(n-3) -- the one Spearman
  interval of medeval (:mod:`medeval.stats.agreement.correlations`), the same as for the overall score.
* Undefined (value ``None`` with ``undefined_reason``, never NaN): fewer than 3 responses, or one side gives
  every response the same score. No CI for n <= 3, nor at |r| = 1 (Fisher's z is infinite there): the CI is
  ``None`` and ``ci_undefined_reason`` says why. Spearman's p is exact (permutations) for n <= 9.
* The paper does not say over what its Pearson runs (App. E.3, Figure 5: "on each perspective"; §5.3 compares
  the models' rankings). The unit here is the response; with ``model_of`` the Pearson over the models' mean
  scores on the criterion (each side's mean over the same responses) is given too, as "Pearson (model means)".
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Callable, Hashable, Mapping

from medeval.stats.agreement.correlations import Z975, ci_undefined_reason, fisher_ci  # noqa: F401 (Z975: API)
from medeval.stats.agreement.ratings import Estimate
from medeval.stats.judge.measures import _corr


def criterion_key(name: str) -> str:
    """How criterion names are compared: NFKC, spaces collapsed, case folded."""
    return " ".join(unicodedata.normalize("NFKC", str(name)).split()).casefold()


def bonett_wright_ci(r: float, n: int) -> tuple[float, float] | None:
    """95% CI of a Spearman correlation by Fisher z with the Bonett-Wright variance (1 + r²/2)/(n-3); None for
    n <= 3 or |r| = 1 (:func:`medeval.stats.agreement.correlations.fisher_ci` says why)."""
    return fisher_ci(r, n, "spearman")[0]


@dataclass(frozen=True)
class CriterionAgreement:
    """One criterion: the judge's name for it, the clinicians' (None: they do not rate it), the responses both
    scored, and the two correlations (None when a side has no scores: see ``status``)."""

    criterion: str
    expert_criterion: str | None
    n: int
    pearson: Estimate | None
    spearman: Estimate | None
    status: str  # "computed", "no clinicians' ratings" or "no judge scores"
    models: Estimate | None = None  # Pearson over the models' mean scores (with model_of)

    def rows(self) -> list[dict]:
        """A row per statistic (Pearson, Spearman, and Pearson (model means) when computed): ``criterion,
        statistic, value, ci95, p, n, undefined_reason`` (n: responses, or models for the model means;
        ``undefined_reason`` of a defined value: why it has no CI, e.g. |r| = 1)."""
        out = []
        stats = [("Pearson", self.pearson, self.n), ("Spearman", self.spearman, self.n)]
        if self.models is not None:
            stats.append(("Pearson (model means)", self.models, self.models.n_pairable))
        for name, e, n in stats:
            if e is None:
                out.append({"criterion": self.criterion, "statistic": name, "value": None, "ci95": None, "p": None,
                            "n": n, "undefined_reason": self.status})
            else:
                out.append({"criterion": self.criterion, "statistic": name, "value": e.value,
                            "ci95": list(e.ci95) if e.ci95 else None, "p": e.extra.get("p"), "n": n,
                            "undefined_reason": e.undefined_reason or ci_undefined_reason(e)})
        return out

    def to_dict(self) -> dict:
        def est(e):
            return None if e is None else {"value": e.value, "ci95": list(e.ci95) if e.ci95 else None,
                                           "p": e.extra.get("p"), "p_method": e.extra.get("p_method"),
                                           "undefined_reason": e.undefined_reason,
                                           "ci_undefined_reason": ci_undefined_reason(e), "method": e.method}
        return {"criterion": self.criterion, "expert_criterion": self.expert_criterion, "n": self.n,
                "status": self.status, "pearson": est(self.pearson), "spearman": est(self.spearman),
                "pearson_model_means": est(self.models),
                "n_models": self.models.n_pairable if self.models is not None else None}


def _pair(judge: Mapping[Hashable, float], expert: Mapping[Hashable, float]):
    units = [u for u in judge if u in expert]
    return [float(judge[u]) for u in units], [float(expert[u]) for u in units]


def _model_means(judge: Mapping[Hashable, float], expert: Mapping[Hashable, float], model_of, name: str) -> Estimate:
    """Pearson over the models' mean scores, each side averaged over the responses both scored."""
    by: dict = {}
    for u in judge:
        if u in expert:
            by.setdefault(model_of(u), []).append((float(judge[u]), float(expert[u])))
    x = [math.fsum(a for a, _ in v) / len(v) for v in by.values()]
    y = [math.fsum(b for _, b in v) / len(v) for v in by.values()]
    return _corr(x, y, "pearson", "models", f"model on {name}", f"model on {name}")


def criterion_agreement(judge: Mapping[str, Mapping[Hashable, float]],
                        experts: Mapping[str, Mapping[Hashable, float]],
                        model_of: Callable[[Hashable], str] | None = None) -> list[CriterionAgreement]:
    """Pearson and Spearman per criterion between the judge's scores and the experts' mean scores.

    ``judge``: criterion -> {response: the judge's score}; ``experts``: criterion -> {response: the mean of the
    clinicians' ratings}; responses are any hashable keys, paired by equality. The judge's criteria come first,
    in their order, then the criteria only the clinicians rate. ``model_of`` (response key -> model) adds the
    Pearson over the models' mean scores.

    >>> j = {"Fluency": {1: 4, 2: 5, 3: 3, 4: 2}}
    >>> e = {"fluency": {1: 4.5, 2: 4.0, 3: 3.0, 4: 1.5}, "Safety": {1: 5, 2: 5}}
    >>> [(c.criterion, c.status, c.n, round(c.pearson.value, 3)) for c in criterion_agreement(j, e)[:1]]
    [('Fluency', 'computed', 4, 0.878)]
    >>> criterion_agreement(j, e)[1].status
    'no judge scores'
    """
    by_key = {}
    for name in experts:
        by_key.setdefault(criterion_key(name), name)
    out: list[CriterionAgreement] = []
    used = set()
    for name, scores in judge.items():
        key = criterion_key(name)
        if key in used:
            continue
        used.add(key)
        ename = by_key.get(key)
        if ename is None or not experts[ename]:
            out.append(CriterionAgreement(name, None, 0, None, None, "no clinicians' ratings"))
            continue
        x, y = _pair(scores, experts[ename])
        what = f"response on {name}"
        pearson = _corr(x, y, "pearson", "responses scored by both", what, what)
        spearman = _corr(x, y, "spearman", "responses scored by both", what, what)
        models = _model_means(scores, experts[ename], model_of, name) if model_of is not None else None
        out.append(CriterionAgreement(name, ename, len(x), pearson, spearman, "computed", models))
    for key, ename in by_key.items():
        if key not in used:
            out.append(CriterionAgreement(ename, ename, 0, None, None, "no judge scores"))
    return out
