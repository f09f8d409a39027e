"""An active campaign's estimator and design: how its grades become cut-offs, and where its next round is drawn.

Each ``active_calibration`` campaign records both in its config (:data:`medeval.annotation.campaigns.sampling.
ACTIVE_ESTIMATORS`, ``ACTIVE_DESIGNS``); a config stored before they were recorded keeps the behaviour it was made
with (the accuracy search and the bootstrap-kernel rounds: ``LEGACY_ESTIMATOR``, ``LEGACY_DESIGN``).

* estimator ``smooth``: :func:`medeval.calibration.smooth_cutoffs` -- a psychometric curve of P(consensus tier >= k |
  score) per boundary, each cut-off where its curve crosses 0.5, with a 95% interval; fitted to one consensus tier
  per item (given every grade with its item, it takes each item's lower median itself); a boundary the grades leave
  undetermined is None while the other is kept; ``accuracy``: the paper's exhaustive
  search (:func:`medeval.calibration.active.spread`, maximising the campaign's criterion) with its bootstrap
  percentile intervals.
* design ``adaptive``: :func:`medeval.calibration.propose_items` (where a grade most narrows the two cut-offs, a
  share drawn at random over the range); ``active``: :func:`medeval.calibration.active.propose` (where the bootstrap
  distribution of either cut-off has mass); ``interval``: the paper's design round by round (an interval sample).

The smooth functions work on scores in [0, 1]; a metric with another range (cosine: [-1, 1]) is mapped onto it and
back. Pure functions on arrays, numbers in and numbers out, so rounds, pages, the CLI and the demo share them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from medeval.annotation.campaigns.sampling import LEGACY_DESIGN, LEGACY_ESTIMATOR
from medeval.calibration import active
from medeval.calibration.estimator_text import DESIGN_TEXT, ESTIMATOR_TEXT  # noqa: F401 (re-exported)
from medeval.core.i18n import N_, _
from medeval.engine.registry import METRICS, get_metric

def estimator_of(cfg: dict) -> str:
    """The campaign's estimator (a config stored before it was recorded: the accuracy search it was made with)."""
    return str(cfg.get("estimator") or LEGACY_ESTIMATOR)


def design_of(cfg: dict) -> str:
    """The campaign's design (a config stored before it was recorded: the bootstrap-kernel rounds)."""
    return str(cfg.get("design") or LEGACY_DESIGN)


def method_name(cfg: dict) -> str:
    """The estimator as a provenance or a report names it, e.g. ``smooth`` or ``accuracy (criterion kappa)``."""
    est = estimator_of(cfg)
    crit = cfg.get("criterion", "accuracy")
    return est if est == "smooth" or crit == "accuracy" else f"{est} search (criterion {crit})"


ESTIMATOR_LABELS = {"smooth": N_("smooth"), "accuracy": N_("accuracy")}
"""The estimators in a word, as a page names them (e.g. a chart's title: "smooth estimator")."""


def method_label(cfg: dict) -> str:
    """:func:`method_name` in the reader's language."""
    est = estimator_of(cfg)
    crit = cfg.get("criterion", "accuracy")
    word = _(ESTIMATOR_LABELS[est]) if est in ESTIMATOR_LABELS else est
    if est == "smooth" or crit == "accuracy":
        return word
    return _("{estimator} search (criterion {criterion})").format(estimator=word, criterion=crit)


def _unit(metric: str) -> tuple[float, float]:
    info = METRICS[get_metric(metric).name]
    return float(info.low), float(info.high)


def to_unit(metric: str, x) -> np.ndarray:
    lo, hi = _unit(metric)
    return np.clip((np.asarray(x, dtype=float) - lo) / (hi - lo), 0.0, 1.0)


def from_unit(metric: str, u):
    lo, hi = _unit(metric)
    return lo + np.asarray(u, dtype=float) * (hi - lo)


@dataclass(frozen=True)
class Estimate:
    """Cut-offs and their 95% intervals by one estimator; duck-types :class:`medeval.calibration.active.CutoffSpread`
    where the rounds need it (``cut_offs``, ``n``, ``ci95``, ``widths``). ``fit``: the smooth fit (its curves, in the
    metric's units), ``spread``: the search's bootstrap (what the ``active`` design draws from)."""

    estimator: str
    cut_offs: tuple[float, float] | None
    cis: tuple[tuple[float, float] | None, tuple[float, float] | None]
    n: int
    fit: object | None = None
    spread: active.CutoffSpread | None = None

    def ci95(self, which: str) -> tuple[float, float] | None:
        return self.cis[0] if which == "low" else self.cis[1]

    def undetermined(self) -> tuple[str, ...]:
        """The boundaries (``low``, ``high``) the grades leave undetermined while the other is estimated."""
        if self.cut_offs is None:
            return ()
        return tuple(w for w, c in zip(("low", "high"), self.cut_offs) if c is None)

    def widths(self) -> tuple[float, float] | None:
        lo, hi = self.cis
        if lo is None or hi is None:
            return None
        return lo[1] - lo[0], hi[1] - hi[0]


def _smooth(metric: str, scores: np.ndarray, tiers: np.ndarray, rng, grades=None) -> Estimate:
    """The smooth estimator, :func:`medeval.calibration.smooth_cutoffs`: on ``grades`` (every grade's score, tier
    and item) when given -- it combines each item's grades into their lower median -- else on the consensus
    tiers. A boundary the grades leave undetermined (a tier never used, too few items) is None in ``cut_offs``
    while the other is kept; its status and reason are in ``fit``."""
    from medeval.calibration.smooth import smooth_cutoffs

    n = len(scores)
    if grades is not None and len(grades[0]):
        g_scores, g_tiers, g_items = grades
        fit = smooth_cutoffs(to_unit(metric, g_scores), np.asarray(g_tiers, dtype=int), items=g_items, ci=True)
    else:
        fit = smooth_cutoffs(to_unit(metric, scores), tiers, ci=True)
    cuts = fit.cutoffs()
    if all(c is None for c in cuts):
        return Estimate("smooth", None, (None, None), n, fit=fit)
    # an interval is within the score range; mapped back onto the metric's
    cis = tuple(None if b.ci is None or c is None else (_clip(metric, b.ci[0]), _clip(metric, b.ci[1]))
                for b, c in zip((fit.low, fit.high), cuts))
    return Estimate("smooth", tuple(None if c is None else _clip(metric, c) for c in cuts), cis, n, fit=fit)


def _clip(metric: str, u: float) -> float:
    lo, hi = _unit(metric)
    return float(np.clip(from_unit(metric, u), lo, hi))


def estimate(metric: str, scores, tiers, cfg: dict, *, rng, n_boot: int = 200, grades=None) -> Estimate:
    """The campaign's estimator on (score, consensus tier) pairs: cut-offs, 95% intervals, the fit or the bootstrap.
    ``grades``: the same items' grades one by one (scores, tiers, items), which the smooth estimator combines into
    each item's lower median itself (:func:`_smooth`); the search uses the consensus tiers."""
    scores = np.asarray(scores, dtype=float)
    tiers = np.asarray(tiers, dtype=int)
    if estimator_of(cfg) == "smooth":
        return _smooth(metric, scores, tiers, rng, grades)
    s = active.spread(metric, scores, tiers, criterion=cfg.get("criterion", "accuracy"), n_boot=n_boot, rng=rng)
    cis = (s.ci95("low"), s.ci95("high")) if s.cut_offs is not None else (None, None)
    return Estimate(estimator_of(cfg), s.cut_offs, cis, s.n, spread=s)


def propose(metric: str, cfg: dict, pool_scores, blocked, graded_pos, graded_tiers, est: Estimate, *, m: int,
            rng, n_boot: int = 200) -> np.ndarray:
    """Pool positions of the next ``m`` items by the campaign's design (none blocked: graded or otherwise taken).

    ``blocked``: positions that may not be drawn (the campaign's items, its gold items, items chosen for another
    stratum in this round); ``graded_pos`` / ``graded_tiers``: the stratum's graded items and consensus tiers.
    """
    pool_scores = np.asarray(pool_scores, dtype=float)
    blocked = np.asarray(blocked, dtype=int)
    width, explore = float(cfg["width"]), float(cfg["explore"])
    design = design_of(cfg)
    if design == "interval":
        return active.propose(metric, pool_scores, blocked, None, m=m, width=width, explore=explore, rng=rng)
    if design == "active":
        s = est.spread
        if s is None:  # the smooth estimator has no bootstrap of the search: the kernel draws from the search's
            s = active.spread(metric, *_graded(pool_scores, graded_pos, graded_tiers),
                              criterion=cfg.get("criterion", "accuracy"), n_boot=n_boot, rng=rng)
        return active.propose(metric, pool_scores, blocked, s, m=m, width=width, explore=explore, rng=rng)
    from medeval.calibration.adaptive import propose_items

    # propose_items never draws a graded item; blocked items that are not graded (gold items, another stratum's
    # picks) are taken out of the pool it sees, and its picks mapped back
    graded_pos = np.asarray(graded_pos, dtype=int)
    other = np.setdiff1d(blocked, graded_pos)
    keep = np.setdiff1d(np.arange(len(pool_scores)), other)
    if len(np.setdiff1d(keep, graded_pos)) == 0:
        return np.array([], dtype=int)
    where = np.searchsorted(keep, graded_pos)
    m = min(m, len(keep) - len(graded_pos))
    picked = propose_items(to_unit(metric, pool_scores[keep]), where, np.asarray(graded_tiers, dtype=int), m, rng,
                           random_share=explore)
    return np.sort(keep[np.asarray(picked, dtype=int)])


def _graded(pool_scores: np.ndarray, graded_pos, graded_tiers) -> tuple[np.ndarray, np.ndarray]:
    return pool_scores[np.asarray(graded_pos, dtype=int)], np.asarray(graded_tiers, dtype=int)


def curves(metric: str, est: Estimate) -> list[dict] | None:
    """The smooth fit's two curves in the metric's units (long rows: score, p, boundary), or None without a fit."""
    fit = est.fit
    if fit is None:
        return None
    rows = []
    for name, b in (("P(tier ≥ Partially Correct)", fit.low), ("P(tier ≥ Basically Correct)", fit.high)):
        if b.grid is None or b.curve is None:
            continue
        x = from_unit(metric, np.asarray(b.grid, dtype=float))
        rows.extend({"score": float(s), "p": float(p), "boundary": name} for s, p in zip(x, np.asarray(b.curve)))
    return rows or None


def calibrate_smooth(metric: str, aspect_type: str, scores, tiers, *, rng=0, grades=None):
    """The smooth estimator as a :class:`medeval.calibration.cutoffs.Calibration` (criterion ``smooth``, no criterion
    ``value`` since nothing is maximised): its cut-offs, the three criteria (``also``) and the confusion at them, and
    in ``bootstrap`` its 95% intervals (``low_ci95`` / ``high_ci95``: profile likelihood, not a bootstrap --
    ``interval`` says so), what it was fitted to (``fitted_to``: items, grades per item), the boundaries whose
    cut-off is the score range's end (``at_range_end``), whether two crossed fits were joined into one cut-off
    (``joined``), and a boundary the grades leave undetermined (``undetermined``: low/high -> why, a code of
    :meth:`medeval.calibration.smooth.BoundaryFit.undetermined`; its cut-off is None in ``cut_offs`` and a
    publication keeps the base set's, saying so); or the reason it is undefined."""
    from medeval.calibration.cutoffs import Calibration
    from medeval.calibration.tuning import against_experts

    scores = np.asarray(scores, dtype=float)
    tiers = np.asarray(tiers, dtype=int)
    est = _smooth(metric, scores, tiers, rng, grades)
    fit = est.fit
    if est.cut_offs is None:
        why = "; ".join(f"{b.boundary}: {b.reason or b.status}" for b in (fit.low, fit.high) if b.status != "ok")
        return Calibration(metric, aspect_type, None, "smooth", None, len(scores), undefined_reason=why)
    boot = {"interval": "profile likelihood", "low_ci95": list(est.cis[0]) if est.cis[0] else None,
            "high_ci95": list(est.cis[1]) if est.cis[1] else None,
            "fitted_to": {"items": fit.n_items, "grades_per_item": round(fit.grades_per_item, 2)},
            "at_range_end": [b.boundary for b in (fit.low, fit.high) if b.at_end] or None,
            "joined": fit.joined or None,
            "undetermined": {w: b.undetermined() for w, b in zip(("low", "high"), (fit.low, fit.high))
                             if b.status != "ok"} or None}
    if est.undetermined():
        return Calibration(metric, aspect_type, est.cut_offs, "smooth", None, len(scores), None, {}, boot)
    ag = against_experts(scores, tiers, *est.cut_offs)
    also = {"kappa": ag.kappa, "accuracy": ag.accuracy, "spearman": ag.spearman}
    return Calibration(metric, aspect_type, est.cut_offs, "smooth", None, len(scores), ag.confusion, also, boot)


def graded_grades(rows: list[dict]) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per (metric, aspect type): every grade's score, tier and item, from long rows that name their annotator
    (``user``; rows without one -- a consensus row, a file without annotators -- are left out). What
    :func:`medeval.calibration.smooth_cutoffs` is given (``items=``): it combines each item's grades itself."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for n, r in enumerate(rows):
        if r.get("user") is None:
            continue
        item = r.get("item")  # a row without one is an item of its own, as cutoffs.graded_examples counts it
        groups[(get_metric(r["metric"]).name, r["aspect_type"])].append(
            (float(r["score"]), int(r["tier"]), str(item) if item not in (None, "") else f"row{n}"))
    return {key: (np.array([g[0] for g in grades], dtype=float), np.array([g[1] for g in grades], dtype=int),
                  np.array([g[2] for g in grades]))
            for key, grades in sorted(groups.items())}


def calibrate_rows(rows: list[dict], *, estimator: str, criterion: str = "kappa", n_boot: int = 200, rng=0,
                   consensus: str = "median"):
    """:func:`medeval.calibration.cutoffs.calibrate_rows` by an estimator: ``smooth`` fits every (metric, aspect
    type) with :func:`calibrate_smooth`; ``accuracy`` (or ``search``) is the exhaustive search maximising
    ``criterion`` (for ``accuracy``: accuracy)."""
    from medeval.calibration import cutoffs as cal
    from medeval.core.errors import MedevalError
    from medeval.core.limits import check_seed

    if estimator not in ("smooth", "accuracy", "search"):
        raise MedevalError(f"estimator {str(estimator)[:40]!r} is not one of smooth, accuracy")
    if estimator != "smooth":
        return cal.calibrate_rows(rows, criterion="accuracy" if estimator == "accuracy" else criterion,
                                  n_boot=n_boot, rng=rng, consensus=consensus)
    if rng is not None and not isinstance(rng, np.random.Generator):
        rng = check_seed(rng, what="seed")
    # each grade where the rows name their annotators (a campaign's, with the median consensus): smooth_cutoffs
    # combines an item's grades into their lower median itself; else the consensus tiers as given
    grades = graded_grades(rows) if consensus == "median" else {}
    return [calibrate_smooth(metric, atype, scores, tiers, rng=rng, grades=grades.get((metric, atype)))
            for (metric, atype), (scores, tiers) in cal.graded_examples(rows, consensus=consensus).items()]


def campaign_estimator(db, campaign_id: int) -> str:
    """``smooth`` for an active campaign that records the smooth estimator, else ``search`` (what ``calibrate
    --campaign`` uses by default)."""
    import json

    row = db.conn.execute("SELECT kind, config FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None or row[0] != "active_calibration":
        return "search"
    return "smooth" if estimator_of(json.loads(row[1])) == "smooth" else "search"
