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


ACTIVE_CRITERIA = ("kappa", "accuracy", "spearman")  # medeval.calibration.cutoffs.CRITERIA (a higher layer)
ACTIVE_DEFAULT_CRITERION = "accuracy"
"""Active campaigns calibrate with accuracy by default: its optimum is local (where two neighbouring tiers are
equally likely at a score), so it does not move when the rounds over-sample the scores near the cut-offs;
kappa's optimum depends on the tier shares of the sample (see bench/README.md, "Active calibration sampling")."""


@dataclass(frozen=True)
class ActiveConfig:
    """An active calibration campaign: a seed interval sample, then rounds drawn where the cut-offs are uncertain.

    ``per_interval`` items per score interval in the seed round; each later round draws ``round_size`` items per
    (metric, aspect type) stratum, ``explore`` of them spread over the range; a stratum stops when both cut-offs'
    95% intervals are at most ``target_width`` wide or it holds ``budget`` items.
    """

    metrics: tuple[str, ...] = ("rouge1",)
    aspect_types: tuple[str, ...] = ("enumerated", "declarative")
    width: float = 0.1
    per_interval: int = 2
    round_size: int = 20
    target_width: float = 0.05
    budget: int = 300
    explore: float = 0.2
    criterion: str = ACTIVE_DEFAULT_CRITERION
    k: int = 3
    seed: int = 0

    def seed_config(self) -> BucketConfig:
        return BucketConfig(self.metrics, self.aspect_types, self.width, self.per_interval, self.k, self.seed)


def check_active_config(cfg: ActiveConfig) -> ActiveConfig:
    """``cfg`` with its numbers checked: InputError (or MedevalError) says what to change."""
    check_bucket_config(cfg.seed_config())
    check_number(cfg.round_size, what="--round-size", low=1, high=COUNT_MAX, integer=True)
    check_number(cfg.target_width, what="--target-width", low=0, high=1, low_open=True)
    check_number(cfg.budget, what="--budget (items per metric and aspect type)", low=1, high=COUNT_MAX, integer=True)
    check_number(cfg.explore, what="--explore (share of a round spread over the range)", low=0, high=1)
    if cfg.criterion not in ACTIVE_CRITERIA:
        raise MedevalError(f"criterion {str(cfg.criterion)[:40]!r} is not one of {', '.join(ACTIVE_CRITERIA)}")
    if not cfg.metrics or not cfg.aspect_types:
        raise MedevalError("choose at least one metric and one aspect type")
    for m in cfg.metrics:
        get_metric(m)
    return cfg


def stratum_pool(db: sqlite_utils.Database, ts, metric: str, aspect_type: str) -> list[tuple[int, float]]:
    """(response id, score) of every response scored on ``metric`` of ``aspect_type`` under ``ts``'s scorers."""
    rows = db.conn.execute(
        "SELECT s.response_id, s.score, s.scorer FROM scores s JOIN responses r ON r.id = s.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE s.metric = ? AND k.aspect_type = ? ORDER BY s.response_id",
        (metric, aspect_type)).fetchall()
    if metric == "cosine":
        return [(rid, s) for rid, s, sc in rows if th.embedding_matches(ts.embedding_model, sc)]
    return [(rid, s) for rid, s, sc in rows if sc == ts.scorer_for(metric)]


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
            rows = [(rid, sc, None) for rid, sc in stratum_pool(db, ts, metric, atype)]
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
