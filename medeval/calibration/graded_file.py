"""A GRADED file: scores with the tier clinicians gave, the input of ``medeval calibrate --graded`` (read within the
input limits, every score checked against its metric's range)."""

from __future__ import annotations

import math

from medeval.core.errors import InputError, MedevalError
from medeval.core.limits import read_table_limited
from medeval.engine.registry import METRICS, get_metric


def read_graded(path) -> list[dict]:
    """GRADED file rows (CSV/TSV/JSONL/JSON) with columns ``metric, aspect_type, score, tier`` and optional ``item``.

    Read within the input limits (:func:`medeval.core.limits.read_table_limited`); a score must be a finite
    number in its metric's range (:data:`medeval.engine.metrics.METRICS`), or the error names the file and row.
    """
    name = str(path)
    columns, rows = read_table_limited(path)
    need = ["metric", "aspect_type", "score", "tier"]
    missing = [c for c in need if c not in columns]
    if missing:
        raise MedevalError(f"{name}: column {', '.join(missing)} missing (found: {', '.join(columns)}); "
                           f"GRADED needs {', '.join(need)} and optionally item")
    if not rows:
        raise MedevalError(f"{name}: no rows")
    out = []
    for n, r in rows:
        try:
            info = METRICS[get_metric(str(r["metric"]).strip()).name]
        except MedevalError as e:
            raise MedevalError(f"{name}, row {n}: {e}")
        raw = r["score"]
        try:
            if isinstance(raw, bool):  # JSON true/false is not a score
                raise TypeError
            score = float(raw)
        except (TypeError, ValueError, OverflowError):
            raise MedevalError(f"{name}, row {n}: score {raw!r} is not a number")
        if not math.isfinite(score):
            raise InputError(f"score {str(raw).strip()!r} is not a finite number", file=name, row=n,
                             fix=f"give the {info.name} score as a number from {info.low:g} to {info.high:g}")
        if not info.low <= score <= info.high:
            raise InputError(f"score {score:g} is outside the {info.name} range [{info.low:g}, {info.high:g}]",
                             file=name, row=n, fix="check the column: it holds the automated score of the item")
        if str(r["tier"]).strip() not in ("0", "1", "2"):
            raise MedevalError(f"{name}, row {n}: tier {r['tier']!r} must be 0, 1 or 2")
        out.append({"metric": str(r["metric"]).strip(), "aspect_type": str(r["aspect_type"]).strip(),
                    "score": score, "tier": int(str(r["tier"]).strip()), "item": str(r.get("item") or "").strip()})
    return out
