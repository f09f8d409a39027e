"""The paper's model-level arithmetic: tier shares, total score (0·CW + 5·PC + 10·BC) and level.

Pure functions of tier counts, shared by the tier report (``medeval.reports.tier_report``) and the live
tuning workspace (``medeval.calibration.tuning``), so both compute a leaderboard the same way.
"""

from __future__ import annotations

import math

from medeval.engine.metrics import REPORT_METRICS

# Levels reproduce the grouping of the paper's Table 4 (4.00 -> 1; 3.14-3.00 -> 2; 2.75-2.20 -> 3; 1.84 -> 4).
LEVEL_BANDS = ((3.5, 1), (3.0, 2), (2.0, 3), (-math.inf, 4))


def level(total: float) -> int:
    """Level 1 (best) to 4 of a total score.

    >>> level(4.00), level(3.00), level(2.20), level(1.84)
    (1, 2, 3, 4)
    """
    for bound, lvl in LEVEL_BANDS:
        if total >= bound:
            return lvl
    return 4


def total_score(shares: tuple[float, float, float]) -> float:
    return 0 * shares[0] + 5 * shares[1] + 10 * shares[2]


def _shares(counts: dict[int, int]) -> tuple[float, float, float] | None:
    n = sum(counts.values())
    if n == 0:
        return None
    return tuple(counts.get(t, 0) / n for t in (0, 1, 2))  # type: ignore[return-value]


def summarise(counts_by_metric: dict[str, dict[int, int]]) -> dict:
    """Shares and total score per report metric, and averaged over the metrics present (with the level)."""
    per_metric = {}
    for m in REPORT_METRICS + (("exact_match",) if "exact_match" in counts_by_metric else ()):
        s = _shares(counts_by_metric.get(m, {}))
        per_metric[m] = None if s is None else {
            "n": sum(counts_by_metric[m].values()),
            "completely_wrong": s[0], "partially_correct": s[1], "basically_correct": s[2],
            "total_score": total_score(s)}
    present = [v for v in per_metric.values() if v]
    if present:
        avg = tuple(sum(v[k] for v in present) / len(present)
                    for k in ("completely_wrong", "partially_correct", "basically_correct"))
        averaged = {"metrics": [m for m, v in per_metric.items() if v],
                    "completely_wrong": avg[0], "partially_correct": avg[1], "basically_correct": avg[2],
                    "total_score": total_score(avg), "level": level(total_score(avg))}
    else:
        averaged = None
    return {"per_metric": per_metric, "averaged": averaged}
