"""Every judge-vs-clinicians statistic of a judge file as plain data (the CLI's JSON), with its warnings."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from medeval.stats.agreement.correlations import ci_undefined_reason
from medeval.stats.agreement.ratings import Estimate
from medeval.stats.judge.criteria import criterion_agreement
from medeval.stats.judge.measures import (
    SOURCES,
    accuracy_2tuple,
    accuracy_triple,
    model_ranking,
    models_of,
    ranking_spearman,
    response_correlations,
    win_rates,
)
from medeval.stats.judge.responses import JudgeData, split_cases

_SHOW = 20  # case ids listed in warnings before "..."


def _est(e: Estimate) -> dict:
    return {"value": e.value, "ci95": list(e.ci95) if e.ci95 else None, "p": e.extra.get("p"),
            "p_method": e.extra.get("p_method"), "n": e.n_pairable, "undefined_reason": e.undefined_reason,
            "ci_undefined_reason": ci_undefined_reason(e), "method": e.method}


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
    in_kept = {(r.case, r.model) for r in responses}
    crit = criterion_agreement(
        {c: {u: v for u, v in d["judge"].items() if u in in_kept} for c, d in data.criteria.items() if d["judge"]},
        {c: {u: v for u, v in d["human"].items() if u in in_kept} for c, d in data.criteria.items() if d["human"]},
        model_of=lambda u: u[1])
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
        "criteria": [c.to_dict() for c in crit],
        "warnings": warnings,
    }
