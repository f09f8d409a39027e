"""Which responses a tier-grading campaign grades: score intervals and a seeded sample per interval."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from medeval.core.errors import InputError, MedevalError
from medeval.core.limits import ANNOTATORS_MAX, COUNT_MAX, check_number, check_seed
from medeval.engine import thresholds as th
from medeval.engine.metrics import METRICS, get_metric

INTERVALS_MAX = 1000
"""Score intervals per metric (a width of 0.001 on a 0-1 score)."""


@dataclass(frozen=True)
class BucketConfig:
    metrics: tuple[str, ...] = ("bleu1", "rouge1", "cosine")
    aspect_types: tuple[str, ...] = ("enumerated", "declarative")
    width: float = 0.1
    per_interval: int = 10
    k: int = 3
    seed: int = 0


def check_bucket_config(cfg: BucketConfig) -> BucketConfig:
    """``cfg`` with its numbers checked (the page and the CLI both build one): InputError says what to change.

    Width in (0, 1]; items per interval 1..COUNT_MAX; k 1..ANNOTATORS_MAX; seed 0..SEED_MAX.
    """
    check_number(cfg.width, what="--width", low=0, high=1, low_open=True)
    check_number(cfg.per_interval, what="--per-interval", low=1, high=COUNT_MAX, integer=True)
    check_number(cfg.k, what="--k", low=1, high=ANNOTATORS_MAX, integer=True)
    check_seed(cfg.seed, what="--seed")
    return cfg


def intervals(metric: str, width: float) -> list[tuple[float, float]]:
    """Half-open intervals [lo, hi) over the metric's range; the last one includes its upper end."""
    info = METRICS[metric]
    check_number(width, what="--width", low=0, high=info.high - info.low, low_open=True)
    n = int(round((info.high - info.low) / width))
    if n > INTERVALS_MAX:
        raise InputError(f"--width {width:g} makes {n:,} intervals of {metric}; the limit is {INTERVALS_MAX:,}",
                         fix=f"use a width of at least {(info.high - info.low) / INTERVALS_MAX:g}")
    if n < 1 or not math.isclose(n * width, info.high - info.low, rel_tol=1e-9):
        raise MedevalError(f"interval width {width} does not divide the {metric} range [{info.low}, {info.high}]")
    return [(round(info.low + i * width, 10), round(info.low + (i + 1) * width, 10)) for i in range(n)]


def sample_buckets(db: sqlite_utils.Database, cfg: BucketConfig) -> tuple[dict[int, list[dict]], list[dict]]:
    """Sampled response ids with their strata, and a report row per (metric, type, interval).

    Candidates are ordered by response id, so the same seed and data give the same sample.
    """
    check_bucket_config(cfg)
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
