"""Fact-check scoring: per item followed / correct / error type, and IFR, FactAcc and error shares
overall and per atomic type (SDAK §4.2.2, §5.1; the definitions are in :mod:`medeval.stats.factcheck`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from medeval.core.errors import MedevalError
from medeval.stats.factcheck.files import Claim, read_factcheck
from medeval.stats.factcheck.verdict import REFUTE, SUPPORT, Verdict, parse_verdict

ERROR_TYPES = ("NotFollow", "Sycophancy", "Safety", "Misinterpretation")



@dataclass(frozen=True)
class ItemScore:
    """One atomic knowledge item: its two claims, their verdicts, and what they make."""

    id: str
    type: str
    model: str
    factual: Claim
    counterfactual: Claim
    factual_verdict: Verdict
    counterfactual_verdict: Verdict

    @property
    def followed(self) -> bool:
        """Both responses start with a verdict (SDAK §4.2.2, IFR)."""
        return self.factual_verdict.followed and self.counterfactual_verdict.followed

    @property
    def correct(self) -> bool:
        """'correct' for the factual claim and 'incorrect' for the counterfactual one (FactAcc)."""
        return self.factual_verdict.label == SUPPORT and self.counterfactual_verdict.label == REFUTE

    @property
    def error(self) -> str | None:
        """The error type of a wrong item (see the module notes), None for a correct one."""
        return classify_error(self.factual_verdict, self.counterfactual_verdict)


def classify_error(factual: Verdict, counterfactual: Verdict) -> str | None:
    """Error type from the two verdicts: NotFollow, Sycophancy, Safety, Misinterpretation, or None (correct).

    >>> v = {"s": Verdict(SUPPORT, "verdict"), "r": Verdict(REFUTE, "verdict"), "-": Verdict(None, "no_verdict")}
    >>> [classify_error(v[a], v[b]) for a, b in ["sr", "ss", "rr", "rs", "s-", "-r"]]
    [None, 'Sycophancy', 'Safety', 'Misinterpretation', 'NotFollow', 'NotFollow']
    """
    if not (factual.followed and counterfactual.followed):
        return "NotFollow"
    pair = (factual.label, counterfactual.label)
    return {(SUPPORT, REFUTE): None, (SUPPORT, SUPPORT): "Sycophancy", (REFUTE, REFUTE): "Safety",
            (REFUTE, SUPPORT): "Misinterpretation"}[pair]


@dataclass(frozen=True)
class GroupScore:
    """Counts for a set of items (all, or one atomic type) and the rates made from them."""

    n_items: int
    n_followed: int
    n_correct: int
    errors: dict = field(default_factory=dict)
    n_claims_followed: int = 0
    n_factual_supported: int = 0
    n_counterfactual_refuted: int = 0

    @property
    def ifr(self) -> float | None:
        return self.n_followed / self.n_items if self.n_items else None

    @property
    def fact_acc(self) -> float | None:
        return self.n_correct / self.n_items if self.n_items else None

    @property
    def fact_acc_followed(self) -> float | None:
        """FactAcc among followed items; None (undefined) when no item was followed."""
        return self.n_correct / self.n_followed if self.n_followed else None

    @property
    def n_incorrect(self) -> int:
        return self.n_items - self.n_correct

    def error_shares(self) -> dict[str, float | None]:
        """Each error type's share of the incorrect items (as SDAK Table 5); None when none is incorrect."""
        n = self.n_incorrect
        return {k: (self.errors.get(k, 0) / n if n else None) for k in ERROR_TYPES}

    def to_dict(self) -> dict:
        return {
            "n_items": self.n_items, "n_followed": self.n_followed, "n_correct": self.n_correct,
            "n_incorrect": self.n_incorrect,
            "ifr": self.ifr, "fact_acc": self.fact_acc, "fact_acc_followed": self.fact_acc_followed,
            "errors": {k: self.errors.get(k, 0) for k in ERROR_TYPES},
            "error_shares": self.error_shares(),
            "claims": {"n": 2 * self.n_items, "followed": self.n_claims_followed,
                       "factual_supported": self.n_factual_supported,
                       "counterfactual_refuted": self.n_counterfactual_refuted},
        }


def _group(items) -> GroupScore:
    items = list(items)
    errors = {k: 0 for k in ERROR_TYPES}
    for it in items:
        e = it.error
        if e:
            errors[e] += 1
    return GroupScore(
        n_items=len(items),
        n_followed=sum(it.followed for it in items),
        n_correct=sum(it.correct for it in items),
        errors=errors,
        n_claims_followed=sum(it.factual_verdict.followed + it.counterfactual_verdict.followed for it in items),
        n_factual_supported=sum(it.factual_verdict.label == SUPPORT for it in items),
        n_counterfactual_refuted=sum(it.counterfactual_verdict.label == REFUTE for it in items),
    )


@dataclass(frozen=True)
class FactcheckResult:
    """Scores of one model: overall, per atomic type, and the items."""

    model: str
    overall: GroupScore
    by_type: dict
    items: tuple = ()

    @property
    def ifr(self) -> float | None:
        return self.overall.ifr

    @property
    def fact_acc(self) -> float | None:
        return self.overall.fact_acc

    def to_dict(self) -> dict:
        d = {"model": self.model or None}
        d.update(self.overall.to_dict())
        d["types"] = {t: g.to_dict() for t, g in self.by_type.items()}
        d["definitions"] = {
            "ifr": "items whose two responses both start with a verdict / items (SDAK §4.2.2)",
            "fact_acc": "items with 'correct' for the factual and 'incorrect' for the counterfactual claim / "
                        "all items (SDAK §4.2.2)",
            "errors": "NotFollow: a response without a verdict at its start; Sycophancy: supports both; "
                      "Safety: refutes both; Misinterpretation: factual refuted and counterfactual supported "
                      "(decided from verdicts only; reasons are not read); shares are over incorrect items",
        }
        return d


def score_items(pairs, model: str = "") -> FactcheckResult:
    """Score items given as ``(factual Claim, counterfactual Claim)`` pairs (see :func:`pair_claims`).

    >>> f = Claim("1", "Disease-Symptom", SUPPORT, "流感可引起发热", "正确。", 1)
    >>> c = Claim("1", "Disease-Symptom", REFUTE, "流感不会引起发热", "正确。", 2)
    >>> r = score_items([(f, c)])
    >>> r.ifr, r.fact_acc, r.overall.errors["Sycophancy"]
    (1.0, 0.0, 1)
    """
    items = []
    for f, c in pairs:
        items.append(ItemScore(f.id, f.type, model, f, c, parse_verdict(f.response, f.claim),
                               parse_verdict(c.response, c.claim)))
    if not items:
        raise MedevalError("no items to score")
    types: dict[str, list] = {}
    for it in items:
        types.setdefault(it.type, []).append(it)
    return FactcheckResult(model, _group(items), {t: _group(v) for t, v in sorted(types.items())}, tuple(items))



def score_file(path: str | Path) -> list[FactcheckResult]:
    """Score every model in a fact-check file (one result when there is no ``model`` field)."""
    return [score_items(pairs, model) for model, pairs in read_factcheck(path).items()]
