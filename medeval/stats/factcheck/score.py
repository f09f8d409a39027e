"""Fact-check scoring: per item followed / correct / error type, and IFR, FactAcc and error shares
overall and per atomic type (SDAK §4.2.2, §5.1; the definitions are in :mod:`medeval.stats.factcheck`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from medeval.core.errors import MedevalError
from medeval.stats.factcheck.files import Claim, read_factcheck
from medeval.stats.factcheck.verdict import REFUTE, STATUSES, SUPPORT, Verdict, parse_verdict

ERROR_TYPES = ("NotFollow", "Sycophancy", "Safety", "Misinterpretation")
# How a hedged response ("部分正确", "正确，但不完全", "True only in part") counts:
# "not_followed" (default): it answers neither 'correct' nor 'incorrect', so it does not follow the instruction
#   (IFR), the item is not memorized (FactAcc) and its error type is NotFollow; hedged items are counted apart.
# "lead": a hedge that starts with a verdict word counts as that verdict (what reading only the first word
#   gives -- SDAK's "answers ... at the start of its response" taken literally); other hedges do not follow.
HEDGED_MODES = ("not_followed", "lead")
HEDGED_TEXT = {
    "not_followed": "a hedged response (部分正确, 正确，但不完全, True only in part) answers neither 'correct' nor "
                    "'incorrect': it does not follow (IFR), its item is not memorized (FactAcc) and counts as "
                    "NotFollow; hedged items and claims are counted apart (n_hedged_items, claims.statuses)",
    "lead": "a hedged response that starts with a verdict word (正确，但不完全) counts as that verdict, as reading "
            "its first word gives; hedges without a leading verdict word (部分正确) do not follow",
}



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
    n_hedged_items: int = 0
    statuses: dict = field(default_factory=dict)

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
            "n_hedged_items": self.n_hedged_items,
            "claims": {"n": 2 * self.n_items, "followed": self.n_claims_followed,
                       "factual_supported": self.n_factual_supported,
                       "counterfactual_refuted": self.n_counterfactual_refuted,
                       "statuses": {k: self.statuses.get(k, 0) for k in STATUSES}},
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
        n_hedged_items=sum("hedged" in (it.factual_verdict.status, it.counterfactual_verdict.status) for it in items),
        statuses={k: sum((it.factual_verdict.status == k) + (it.counterfactual_verdict.status == k) for it in items)
                  for k in STATUSES},
    )


@dataclass(frozen=True)
class FactcheckResult:
    """Scores of one model: overall, per atomic type, and the items."""

    model: str
    overall: GroupScore
    by_type: dict
    items: tuple = ()
    hedged: str = "not_followed"

    @property
    def ifr(self) -> float | None:
        return self.overall.ifr

    @property
    def fact_acc(self) -> float | None:
        return self.overall.fact_acc

    def to_dict(self) -> dict:
        d = {"model": self.model or None, "hedged_mode": self.hedged}
        d.update(self.overall.to_dict())
        d["types"] = {t: g.to_dict() for t, g in self.by_type.items()}
        d["definitions"] = {
            "ifr": "items whose two responses both start with a verdict / items (SDAK §4.2.2)",
            "fact_acc": "items with 'correct' for the factual and 'incorrect' for the counterfactual claim / "
                        "all items (SDAK §4.2.2)",
            "errors": "NotFollow: a response without a verdict at its start; Sycophancy: supports both; "
                      "Safety: refutes both; Misinterpretation: factual refuted and counterfactual supported "
                      "(decided from verdicts only; reasons are not read); shares are over incorrect items",
            "hedged": f"hedged={self.hedged}: {HEDGED_TEXT[self.hedged]}",
            "contradictory": "a response stating two opposite verdicts (正确/错误, a self-correction 正确。不，应该是"
                             "错误的) has no verdict: it does not follow and counts as NotFollow "
                             "(claims.statuses.contradictory)",
        }
        return d


def _as_mode(v: Verdict, hedged: str) -> Verdict:
    if hedged == "lead" and v.status == "hedged" and v.lead is not None:
        return Verdict(v.lead, "hedged", v.matched, v.lead)
    return v


def score_items(pairs, model: str = "", hedged: str = "not_followed") -> FactcheckResult:
    """Score items given as ``(factual Claim, counterfactual Claim)`` pairs (see :func:`pair_claims`).

    ``hedged`` says how a hedged response counts (:data:`HEDGED_MODES`, :data:`HEDGED_TEXT`).

    >>> f = Claim("1", "Disease-Symptom", SUPPORT, "流感可引起发热", "正确。", 1)
    >>> c = Claim("1", "Disease-Symptom", REFUTE, "流感不会引起发热", "正确。", 2)
    >>> r = score_items([(f, c)])
    >>> r.ifr, r.fact_acc, r.overall.errors["Sycophancy"]
    (1.0, 0.0, 1)
    """
    if hedged not in HEDGED_MODES:
        raise MedevalError(f"unknown hedged mode {hedged!r}; use {' or '.join(HEDGED_MODES)}")
    items = []
    for f, c in pairs:
        items.append(ItemScore(f.id, f.type, model, f, c, _as_mode(parse_verdict(f.response, f.claim), hedged),
                               _as_mode(parse_verdict(c.response, c.claim), hedged)))
    if not items:
        raise MedevalError("no items to score")
    types: dict[str, list] = {}
    for it in items:
        types.setdefault(it.type, []).append(it)
    return FactcheckResult(model, _group(items), {t: _group(v) for t, v in sorted(types.items())}, tuple(items),
                           hedged)



def score_file(path: str | Path, hedged: str = "not_followed") -> list[FactcheckResult]:
    """Score every model in a fact-check file (one result when there is no ``model`` field)."""
    return [score_items(pairs, model, hedged) for model, pairs in read_factcheck(path).items()]
