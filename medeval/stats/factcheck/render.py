"""Fact-check results as output: a JSON-ready summary, json/csv/md reports, and one CSV row per claim."""

from __future__ import annotations

from medeval.core.errors import MedevalError
from medeval.stats.factcheck.score import ERROR_TYPES, HEDGED_TEXT, FactcheckResult


def _pct(v: float | None) -> str:
    return "undefined" if v is None else f"{100 * v:.2f}%"


def summary(results: list[FactcheckResult]) -> dict:
    """JSON-ready summary: the flat result for one model, ``{"models": {...}}`` for several."""
    if len(results) == 1:
        return results[0].to_dict()
    return {"models": {r.model: r.to_dict() for r in results}}


def render(results: list[FactcheckResult], fmt: str = "json") -> str:
    """The results as ``json``, ``csv`` (one row per model and scope) or ``md``."""
    import io
    import json

    from medeval.core import csvsafe

    if fmt == "json":
        return json.dumps(summary(results), ensure_ascii=False, indent=2) + "\n"
    rows = []
    for r in results:
        for scope, g in [("overall", r.overall)] + [(t, g) for t, g in r.by_type.items()]:
            rows.append((r.model, scope, g))
    if fmt == "csv":
        buf = io.StringIO()
        w = csvsafe.writer(buf, lineterminator="\n")
        w.writerow(["model", "type", "n_items", "n_followed", "n_correct", "ifr", "fact_acc", "fact_acc_followed",
                    *ERROR_TYPES, "n_hedged_items", "claims_hedged", "claims_contradictory", "hedged_mode"])
        modes = {r.model: r.hedged for r in results}
        for model, scope, g in rows:
            w.writerow([model, scope, g.n_items, g.n_followed, g.n_correct, _num(g.ifr), _num(g.fact_acc),
                        _num(g.fact_acc_followed), *(g.errors.get(k, 0) for k in ERROR_TYPES), g.n_hedged_items,
                        g.statuses.get("hedged", 0), g.statuses.get("contradictory", 0), modes[model]])
        return buf.getvalue()
    if fmt == "md":
        out = []
        for r in results:
            title = f"## {r.model}" if r.model else "## Fact-check verification"
            out += [title, "",
                    f"{r.overall.n_items} items; IFR {_pct(r.ifr)}, FactAcc {_pct(r.fact_acc)} "
                    f"(among followed items {_pct(r.overall.fact_acc_followed)}).", "",
                    f"Hedged responses: {r.overall.statuses.get('hedged', 0)} (in {r.overall.n_hedged_items} items); "
                    f"two opposite verdicts: {r.overall.statuses.get('contradictory', 0)}. "
                    f"Counted as: {HEDGED_TEXT[r.hedged]}.", "",
                    "| type | items | IFR | FactAcc | " + " | ".join(ERROR_TYPES) + " | hedged items |",
                    "|---|---|---|---|" + "---|" * len(ERROR_TYPES) + "---|"]
            for model, scope, g in rows:
                if model == r.model:
                    out.append(f"| {scope} | {g.n_items} | {_pct(g.ifr)} | {_pct(g.fact_acc)} | "
                               + " | ".join(str(g.errors.get(k, 0)) for k in ERROR_TYPES)
                               + f" | {g.n_hedged_items} |")
            out.append("")
        return "\n".join(out)
    raise MedevalError(f"unknown format {fmt!r}; use json, csv or md")


def _num(v: float | None) -> str:
    return "" if v is None else repr(v)


def details_csv(results: list[FactcheckResult]) -> str:
    """One row per claim: what was parsed from each response (for checking the parser by eye)."""
    import io

    from medeval.core import csvsafe

    buf = io.StringIO()
    w = csvsafe.writer(buf, lineterminator="\n")
    w.writerow(["model", "id", "type", "label", "line", "verdict", "status", "lead", "matched", "item_correct",
                "item_error"])
    for r in results:
        for it in r.items:
            for claim, v in ((it.factual, it.factual_verdict), (it.counterfactual, it.counterfactual_verdict)):
                w.writerow([r.model, it.id, it.type, claim.label, claim.line, v.label or "", v.status, v.lead or "",
                            v.matched, int(it.correct), it.error or ""])
    return buf.getvalue()
