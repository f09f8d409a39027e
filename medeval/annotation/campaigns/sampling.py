"""Which responses a tier-grading campaign grades: score intervals and a seeded sample per interval."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from medeval.core.errors import InputError, MedevalError
from medeval.core.i18n import _
from medeval.core.limits import ANNOTATORS_MAX, COUNT_MAX, check_number, check_seed
from medeval.engine import cosine_scorers
from medeval.engine import thresholds as th
from medeval.engine.registry import METRICS, get_metric

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
ACTIVE_ESTIMATORS = ("smooth", "accuracy")  # medeval.calibration.ESTIMATORS (a higher layer)
"""How an active campaign turns its grades into cut-offs: ``smooth`` (psychometric curves of P(tier >= k | score),
each cut-off where its curve crosses 0.5; the default of new campaigns) or ``accuracy`` (the paper's exhaustive
search, maximising the campaign's ``criterion``; what campaigns created before the estimator was recorded use)."""
ACTIVE_DESIGNS = ("adaptive", "active", "interval")
"""Where an active campaign's next rounds are drawn: ``adaptive`` (where a grade most narrows the two cut-offs,
medeval.calibration.propose_items; the default of new campaigns), ``active`` (where the bootstrap distribution of
either cut-off has mass; what campaigns created before the design was recorded use) or ``interval`` (the paper's
design, round by round: the same number of items from every score interval)."""
LEGACY_ESTIMATOR, LEGACY_DESIGN = "accuracy", "active"  # a stored config without them: the behaviour it was made with


@dataclass(frozen=True)
class ActiveConfig:
    """An active calibration campaign: a seed interval sample, then rounds drawn where the cut-offs are uncertain.

    ``per_interval`` items per score interval in the seed round; each later round draws ``round_size`` items per
    (metric, aspect type) stratum, ``explore`` of them spread over the range; a stratum stops when both cut-offs'
    95% intervals are at most ``target_width`` wide or it holds ``budget`` items. ``estimator`` and ``design``
    (:data:`ACTIVE_ESTIMATORS`, :data:`ACTIVE_DESIGNS`) say how cut-offs are estimated and where rounds are drawn.
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
    estimator: str = "smooth"
    design: str = "adaptive"

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
        raise MedevalError(_("criterion {value} is not one of {names}").format(
            value=repr(str(cfg.criterion)[:40]), names=", ".join(ACTIVE_CRITERIA)))
    if cfg.estimator not in ACTIVE_ESTIMATORS:
        raise MedevalError(_("estimator {value} is not one of {names}").format(
            value=repr(str(cfg.estimator)[:40]), names=", ".join(ACTIVE_ESTIMATORS)))
    if cfg.design not in ACTIVE_DESIGNS:
        raise MedevalError(_("design {value} is not one of {names}").format(
            value=repr(str(cfg.design)[:40]), names=", ".join(ACTIVE_DESIGNS)))
    if not cfg.metrics or not cfg.aspect_types:
        raise MedevalError(_("choose at least one metric and one aspect type"))
    for m in cfg.metrics:
        get_metric(m)
    return cfg


def stratum_pool(db: sqlite_utils.Database, ts, metric: str, aspect_type: str) -> list[tuple[int, float]]:
    """(response id, score) of every response scored on ``metric`` of ``aspect_type`` under ``ts``'s scorers: one
    score per response (cosine: the one the set's grading picks; none where two ids tie,
    :func:`medeval.engine.cosine_scorers.graded_scores`)."""
    rows = db.conn.execute(
        "SELECT s.response_id, s.metric, s.scorer, s.score FROM scores s JOIN responses r ON r.id = s.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE s.metric = ? AND k.aspect_type = ? ORDER BY s.response_id",
        (metric, aspect_type)).fetchall()
    return [(rid, score) for rid, _m, _s, score in cosine_scorers.graded_scores(ts, rows)]


def intervals(metric: str, width: float) -> list[tuple[float, float]]:
    """Half-open intervals [lo, hi) over the metric's range; the last one includes its upper end."""
    info = METRICS[metric]
    check_number(width, what="--width", low=0, high=info.high - info.low, low_open=True)
    ratio = (info.high - info.low) / width  # inf for a width of 5e-324 (issue 23 §7): checked before int()
    if not math.isfinite(ratio) or round(ratio) > INTERVALS_MAX:
        many = f"{round(ratio):,}" if ratio < 1e6 else _("more than {n}").format(n=f"{INTERVALS_MAX:,}")
        raise InputError(_("--width {width} makes {many} intervals of {metric}; the limit is {max}").format(
            width=f"{width:g}", many=many, metric=metric, max=f"{INTERVALS_MAX:,}"),
            fix=_("use a width of at least {width}").format(width=f"{(info.high - info.low) / INTERVALS_MAX:g}"))
    n = int(round(ratio))
    if n < 1 or not math.isclose(n * width, info.high - info.low, rel_tol=1e-9):
        raise MedevalError(_("interval width {width} does not divide the {metric} range [{low}, {high}]").format(
            width=width, metric=metric, low=info.low, high=info.high))
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
                # the comparison rule (medeval.engine.cutoff_rule): a score on an interval's end reaches it
                lo_b, hi_b = th.reach_bound(lo), th.reach_bound(hi)
                pool = [rid for rid, s, _ in rows if lo_b <= s < hi_b or (last and s >= hi_b)]
                take = min(cfg.per_interval, len(pool))
                picked = sorted(rng.choice(len(pool), size=take, replace=False).tolist()) if take else []
                for j in picked:
                    chosen.setdefault(pool[j], []).append({"metric": metric, "aspect_type": atype,
                                                           "interval": [lo, hi]})
                report.append({"metric": metric, "aspect_type": atype, "interval": [lo, hi], "available": len(pool),
                               "sampled": take, "short": take < cfg.per_interval})
    return chosen, report


# ---------------------------------------------------------------- the validation sample and its calibration campaigns

def calibration_campaigns(db: sqlite_utils.Database, ts) -> list[int]:
    """The campaigns whose grades calibrated ``ts``'s cut-offs, from its provenance (sorted ids; may be empty).

    A set published from a campaign records it as ``provenance["source"]["campaign"]``; cut-offs kept from a base
    version (``base_version``, ``kept_from_base``) or copied from another set (``adopted_from_version``) bring that
    set's campaigns with them. A set with no campaign in its provenance (e.g. MedDisKEval Table 12, published by
    the paper, or a set calibrated from a file) gives none: no item of this database calibrated it.
    """
    out: set[int] = set()
    seen: set[int] = set()
    todo = [ts]
    while todo:
        cur = todo.pop()
        if cur.version is not None:
            if cur.version in seen:
                continue
            seen.add(cur.version)
        p = cur.provenance or {}
        src = p.get("source")
        if isinstance(src, dict) and isinstance(src.get("campaign"), int):
            out.add(src["campaign"])
        kept = [s for s in p.get("kept_from_base") or [] if not str(s).startswith("exact_match/")]
        parents = [p.get("adopted_from_version")]
        if p.get("base_version") is not None and (kept or "kept_from_base" not in p):
            parents.append(p.get("base_version"))
        for v in parents:
            if isinstance(v, int) and v not in seen:
                row = db.conn.execute("SELECT 1 FROM threshold_sets WHERE version = ?", (v,)).fetchone()
                if row:
                    todo.append(th.load(db, v))
    return sorted(out)


def campaign_responses(db: sqlite_utils.Database, campaign_ids: list[int]) -> set[int]:
    """The response ids of every item of ``campaign_ids``."""
    out: set[int] = set()
    for cid in campaign_ids:
        out.update(r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?",
                                                 (cid,)))
    return out


def validation_overlap(db: sqlite_utils.Database, campaign_id: int, ts) -> dict:
    """How a campaign's items overlap the campaigns that calibrated ``ts`` (the set its grades validate).

    ``{"version", "calibration_campaigns", "shared_items", "allow_overlap", "excluded_at_creation", "text"}``;
    ``shared_items`` counts the campaign's responses that are also items of a calibration campaign (grades that set
    the cut-offs would then "validate" them); ``allow_overlap`` is what the campaign recorded when it was created
    (None: not recorded, e.g. a campaign of an older database or not a validation sample).
    """
    row = db.conn.execute("SELECT config FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    cfg = json.loads(row[0]) if row else {}
    cal = [c for c in calibration_campaigns(db, ts) if c != campaign_id]
    mine = campaign_responses(db, [campaign_id])
    shared = len(mine & campaign_responses(db, cal))
    allow = cfg.get("allow_overlap")
    label = f"v{ts.version} ({ts.name})" if ts.version is not None else ts.name
    if campaign_id in calibration_campaigns(db, ts):
        text = _("this campaign's own grades calibrated threshold set {set}: its agreement with that set's tiers is "
                 "not an independent validation").format(set=label)
    elif not cal:
        text = _("threshold set {set} records no calibration campaign of this database (e.g. cut-offs published by "
                 "the paper or calibrated from a file): no item had to be excluded").format(set=label)
    else:
        names = ", ".join(f"#{c}" for c in cal)
        values = {"set": label, "campaigns": names, "shared": shared, "n": len(mine)}
        if allow:
            text = _("threshold set {set} was calibrated on campaign(s) {campaigns}; {shared} of this campaign's {n} "
                     "items are also items there (overlap was allowed when the sample was drawn)").format(**values)
        elif shared == 0 and cfg.get("validates_version") == ts.version:
            text = _("threshold set {set} was calibrated on campaign(s) {campaigns}; {shared} of this campaign's {n} "
                     "items are also items there (they were excluded from the sample)").format(**values)
        elif shared == 0:
            text = _("threshold set {set} was calibrated on campaign(s) {campaigns}; {shared} of this campaign's {n} "
                     "items are also items there").format(**values)
        else:
            text = _("threshold set {set} was calibrated on campaign(s) {campaigns}; {shared} of this campaign's {n} "
                     "items are also items there: those items' grades helped set the cut-offs they now validate; "
                     "draw a new validation sample (overlap is excluded by default) or read these figures as not "
                     "independent").format(**values)
    return {"version": ts.version, "calibration_campaigns": cal, "shared_items": shared,
            "allow_overlap": allow, "excluded_at_creation": cfg.get("excluded_responses"), "text": text,
            "own_grades_calibrated": campaign_id in calibration_campaigns(db, ts)}


def validation_pool(db: sqlite_utils.Database, *, version: int | None = None, allow_overlap: bool = False,
                    aspect_types: tuple[str, ...] = ("enumerated", "declarative", "numeric"),
                    exclude_responses=()) -> dict:
    """What a random validation sample of threshold set ``version`` (default: the active one) can draw from.

    ``{"version", "calibration_campaigns", "scored", "left_out", "pool": [response ids], "text"}``: the scored
    responses of ``aspect_types``, less the items of the campaigns that calibrated the set (unless
    ``allow_overlap``) and ``exclude_responses``. The New campaign page previews it;
    :func:`medeval.annotation.campaigns.assignment.create_random_campaign` draws from it.
    """
    ts = th.load(db, version) if version is not None else th.active(db)
    calibrating = calibration_campaigns(db, ts)
    excluded = set(exclude_responses) | (set() if allow_overlap else campaign_responses(db, calibrating))
    marks = ",".join("?" * len(aspect_types))
    scored = [r for (r,) in db.conn.execute(
        f"SELECT r.id FROM responses r JOIN kb_entries k ON k.id = r.kb_id WHERE k.aspect_type IN ({marks}) "
        f"AND EXISTS (SELECT 1 FROM scores s WHERE s.response_id = r.id) ORDER BY r.id", aspect_types)]
    pool = [r for r in scored if r not in excluded]
    names = ", ".join(f"#{c}" for c in calibrating)
    if not calibrating:
        text = _("threshold set v{version} records no calibration campaign of this database: nothing to exclude; "
                 "{n} scored responses can be drawn").format(version=ts.version, n=len(pool))
    elif allow_overlap:
        text = _("overlap allowed: the {n} scored responses include the items of campaign(s) {campaigns}, whose "
                 "grades calibrated threshold set v{version}").format(n=len(pool), campaigns=names, version=ts.version)
    else:
        text = _("{left} of {scored} scored responses left out as items of campaign(s) {campaigns}, whose grades "
                 "calibrated threshold set v{version}; {n} can be drawn").format(
            left=len(scored) - len(pool), scored=len(scored), campaigns=names, version=ts.version, n=len(pool))
    return {"version": ts.version, "calibration_campaigns": calibrating, "scored": len(scored),
            "left_out": len(scored) - len(pool), "pool": pool, "text": text}
