"""Which responses a tier-grading campaign grades: score intervals and a seeded sample per interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from medeval.core.errors import MedevalError
from medeval.engine import thresholds as th
from medeval.engine.metrics import METRICS, get_metric


@dataclass(frozen=True)
class BucketConfig:
    metrics: tuple[str, ...] = ("bleu1", "rouge1", "cosine")
    aspect_types: tuple[str, ...] = ("enumerated", "declarative")
    width: float = 0.1
    per_interval: int = 10
    k: int = 3
    seed: int = 0


def intervals(metric: str, width: float) -> list[tuple[float, float]]:
    """Half-open intervals [lo, hi) over the metric's range; the last one includes its upper end."""
    info = METRICS[metric]
    n = int(round((info.high - info.low) / width))
    if n < 1 or not math.isclose(n * width, info.high - info.low, rel_tol=1e-9):
        raise MedevalError(f"interval width {width} does not divide the {metric} range [{info.low}, {info.high}]")
    return [(round(info.low + i * width, 10), round(info.low + (i + 1) * width, 10)) for i in range(n)]


def sample_buckets(db: sqlite_utils.Database, cfg: BucketConfig) -> tuple[dict[int, list[dict]], list[dict]]:
    """Sampled response ids with their strata, and a report row per (metric, type, interval).

    Candidates are ordered by response id, so the same seed and data give the same sample.
    """
    ts = th.active(db)
    rng = np.random.default_rng(cfg.seed)
    chosen: dict[int, list[dict]] = {}
    report = []
    for metric in cfg.metrics:
        get_metric(metric)
        for atype in cfg.aspect_types:
            if atype not in METRICS[metric].aspect_types:
                continue
            rows = db.conn.execute(
                "SELECT s.response_id, s.score, s.scorer FROM scores s JOIN responses r ON r.id = s.response_id "
                "JOIN kb_entries k ON k.id = r.kb_id WHERE s.metric = ? AND k.aspect_type = ? ORDER BY s.response_id",
                (metric, atype)).fetchall()
            if metric == "cosine":
                rows = [r for r in rows if th.embedding_matches(ts.embedding_model, r[2])]
            else:
                rows = [r for r in rows if r[2] == ts.scorer_for(metric)]
            ivs = intervals(metric, cfg.width)
            for i, (lo, hi) in enumerate(ivs):
                last = i == len(ivs) - 1
                pool = [rid for rid, s, _ in rows if lo <= s < hi or (last and s == hi)]
                take = min(cfg.per_interval, len(pool))
                picked = sorted(rng.choice(len(pool), size=take, replace=False).tolist()) if take else []
                for j in picked:
                    chosen.setdefault(pool[j], []).append({"metric": metric, "aspect_type": atype,
                                                           "interval": [lo, hi]})
                report.append({"metric": metric, "aspect_type": atype, "interval": [lo, hi], "available": len(pool),
                               "sampled": take, "short": take < cfg.per_interval})
    return chosen, report
