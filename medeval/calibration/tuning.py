"""Live cut-off tuning: what a draft pair of cut-offs does to the experts' agreement, the tier shares and the leaderboard.

For speed on a full-size corpus (the paper's 2.3 million scored responses), every score
is loaded once into a :class:`ScoreIndex`: one sorted float array per (metric, aspect
type, model). Under any cut-offs, the number of scores in each tier is then two binary
searches per array (``np.searchsorted`` against :func:`medeval.engine.thresholds.reach_bound`, so a score on a
cut-off reaches it, as in grading), so a slider move costs microseconds per model
instead of a regrade; :func:`regrade` gives the tiers of every score when they are
needed as an array. The leaderboard computed here equals :func:`medeval.reports.tier_report.build_report`
after grading under the same cut-offs (tested).

Drafts are per researcher (a table keyed by user): nothing reaches the engine until
a draft is published as a new threshold-set version (:func:`medeval.calibration.cutoffs.publish_set`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.calibration.cutoffs import CRITERIA, _criteria_grid
from medeval.core.errors import MedevalError
from medeval.calibration.estimator_text import UNDETERMINED_TEXT
from medeval.core.i18n import _
from medeval.engine import cosine_scorers
from medeval.engine import thresholds as th
from medeval.engine.registry import get_metric, report_metrics
from medeval.engine.totals import summarise as _summarise
from medeval.store.db import transaction


def strata() -> tuple[tuple[str, str], ...]:
    """Every (metric, aspect type) Tune cut-offs can set: the report metrics (plugins too) x enumerated, declarative."""
    return tuple((m, t) for m in report_metrics() for t in ("enumerated", "declarative")
                 if t in get_metric(m).aspect_types)


@dataclass
class ScoreIndex:
    """Sorted scores per (metric, aspect type, model) under one threshold set's scorers (cosine: one per response,
    the one the set's grading picks, :func:`medeval.engine.thresholds.cosine_blockers`)."""

    version: int
    arrays: dict[tuple[str, str, str], np.ndarray]
    models: list[str]
    exact: dict[str, tuple[int, int]]  # model -> (numeric answers wrong, right)
    n_scores: int

    @classmethod
    def load(cls, db: sqlite_utils.Database, version: int | None = None) -> "ScoreIndex":
        ts = th.load(db, version) if version is not None else th.active(db)
        # the cosine scorers the set grades, each with the ids whose score on the same response takes precedence:
        # one cosine score per response, the one grading picks (none where two ids tie); one id: no lookup at all
        blockers = th.cosine_blockers(ts, [s for (s,) in db.conn.execute(
            "SELECT DISTINCT scorer FROM scores WHERE metric = 'cosine'")])
        models = {mid: name for mid, name in db.conn.execute("SELECT id, name FROM models")}
        collect: dict[tuple[str, str, str], list] = defaultdict(list)
        exact: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        n, right = 0, th.reach_bound(1.0)  # an exact match (score 1) reaches the numeric cut-off
        for metric in (*report_metrics(), "exact_match"):
            scorers = sorted(blockers) if metric == "cosine" else [ts.scorer_for(metric)]
            for scorer in scorers:
                others = blockers[scorer] if metric == "cosine" else []
                cur = db.conn.execute(
                    "SELECT r.model_id, k.aspect_type, s.score FROM scores s JOIN responses r ON r.id = s.response_id "
                    "JOIN kb_entries k ON k.id = r.kb_id WHERE s.metric = ? AND s.scorer = ?"
                    + cosine_scorers.unblocked_sql(others), (metric, scorer, *others))
                while rows := cur.fetchmany(200_000):
                    n += len(rows)
                    if metric == "exact_match":
                        for mid, _type, score in rows:
                            exact[models[mid]][int(score >= right)] += 1
                        continue
                    # group by (model, aspect type) with masks, not a Python loop over rows
                    arr = np.array([(mid, score) for mid, _type, score in rows], dtype=float)
                    tcode = np.array([0 if t == "enumerated" else 1 if t == "declarative" else 2 for _, t, _ in rows])
                    for mid in np.unique(arr[:, 0]).astype(int):
                        for code, atype in ((0, "enumerated"), (1, "declarative")):
                            sel = (arr[:, 0] == mid) & (tcode == code)
                            if sel.any():
                                collect[(metric, atype, models[mid])].append(arr[sel, 1])
        arrays = {k: np.sort(np.concatenate(v)) for k, v in collect.items()}
        names = sorted({k[2] for k in arrays} | set(exact))
        return cls(ts.version, arrays, names, {m: tuple(v) for m, v in exact.items()}, n)

    def counts(self, metric: str, aspect_type: str, low: float, high: float, model: str | None = None) -> np.ndarray:
        """Scores per tier [CW, PC, BC] under ``(low, high)``, for one model or all pooled."""
        out = np.zeros(3, dtype=np.int64)
        for name in ([model] if model else self.models):
            a = self.arrays.get((metric, aspect_type, name))
            if a is None:
                continue
            i, j = np.searchsorted(a, [th.reach_bound(low), th.reach_bound(high)], side="left")
            out += (i, j - i, len(a) - j)
        return out


def signature(db: sqlite_utils.Database) -> tuple:
    """Changes when scores are added (scores are never updated or deleted): the key of a cached index."""
    return tuple(db.conn.execute("SELECT count(*) FROM scores").fetchone())


def regrade(scores: np.ndarray, low: float, high: float) -> np.ndarray:
    """The tier of every score under ``(low, high)`` (same rule as :func:`medeval.engine.thresholds.tier`)."""
    scores = np.asarray(scores, dtype=float)
    return (scores >= th.reach_bound(low)).astype(np.int8) + (scores >= th.reach_bound(high)).astype(np.int8)


def leaderboard(index: ScoreIndex, cutoffs: dict[tuple[str, str], tuple[float, float]]) -> list[dict]:
    """Per model, tier shares per metric and averaged, total score and level under draft ``cutoffs``.

    Mirrors :func:`medeval.reports.tier_report.build_report`: the numeric aspect's exact-match result counts under
    every report metric that has scores.
    """
    present = [m for m in report_metrics() if any(k[0] == m for k in index.arrays)]
    rows = []
    for model in index.models:
        by_metric: dict[str, dict[int, int]] = {}
        for metric in present:
            c = np.zeros(3, dtype=np.int64)
            for atype in ("enumerated", "declarative"):
                if (metric, atype) in cutoffs:
                    c += index.counts(metric, atype, *cutoffs[(metric, atype)], model=model)
            wrong, right = index.exact.get(model, (0, 0))
            c += (wrong, 0, right)
            by_metric[metric] = {t: int(c[t]) for t in range(3) if c[t]}
        if not present and model in index.exact:
            wrong, right = index.exact[model]
            by_metric["exact_match"] = {0: wrong, 2: right}
        s = _summarise(by_metric)
        if s["averaged"]:
            rows.append({"model": model, **s})
    rows.sort(key=lambda r: (-r["averaged"]["total_score"], r["model"]))
    for i, r in enumerate(rows, start=1):
        r["rank"] = i
    return rows


@dataclass(frozen=True)
class Agreement:
    """Draft cut-offs against the experts' tiers on the graded examples."""

    n: int
    confusion: list[list[int]]  # rows: expert tier, columns: automated tier
    kappa: float | None
    accuracy: float | None
    spearman: float | None


def against_experts(scores, tiers, low: float, high: float) -> Agreement:
    """Confusion matrix, quadratic-weighted kappa, accuracy and Spearman of draft cut-offs vs the experts."""
    scores = np.asarray(scores, dtype=float)
    tiers = np.asarray(tiers, dtype=int)
    n = len(scores)
    if n == 0:
        return Agreement(0, [[0] * 3 for _ in range(3)], None, None, None)
    order = np.argsort(scores, kind="stable")
    s, t = scores[order], tiers[order]
    prefix = np.zeros((n + 1, 3), dtype=np.int64)
    prefix[1:] = np.cumsum(np.eye(3, dtype=np.int64)[t], axis=0)
    i = np.searchsorted(s, [th.reach_bound(low)])
    j = np.searchsorted(s, [th.reach_bound(max(low, high))])
    g = _criteria_grid(prefix, i, j, n)
    val = {c: (None if np.isnan(g[c][0]) else float(g[c][0])) for c in CRITERIA}
    return Agreement(n, g["confusion"][0].astype(int).tolist(), val["kappa"], val["accuracy"], val["spearman"])


# ---------------------------------------------------------------- the two-handled slider

SLIDER_STEP = 0.005
"""The Tune cut-offs slider's step: the browser snaps a handle it moves to this grid (from the metric's low end)."""


def boundary_reason(code: str) -> str:
    """:data:`UNDETERMINED_TEXT` of ``code`` in the reader's language (an unknown code as it is)."""
    return _(UNDETERMINED_TEXT[code]) if code in UNDETERMINED_TEXT else str(code)


def with_kept(cut_offs, kept: tuple[float, float] | None, whole: tuple[float, float]) -> tuple[float, float]:
    """Estimated cut-offs with an undetermined one (None) taken from ``kept`` (the active set's for the stratum),
    else from ``whole`` (the metric's range); the pair kept in order (the kept one moved to the estimated one when
    they would cross, as a slider must start)."""
    base = kept or whole
    lo = float(base[0]) if cut_offs[0] is None else float(cut_offs[0])
    hi = float(base[1]) if cut_offs[1] is None else float(cut_offs[1])
    if lo > hi:
        lo, hi = (hi, hi) if cut_offs[0] is None else (lo, lo)
    return lo, hi


def settle_handles(before: tuple[float, float], after: tuple[float, float], *, low: float,
                   step: float = SLIDER_STEP) -> tuple[float, float]:
    """The cut-offs after one move of the two-handled slider: a handle the researcher did not move keeps its value.

    The browser's slider snaps the handle that was *not* moved too: to the step grid from the metric's low end, or
    to a grid anchored on the other handle (measured in Chromium: a calibrated 0.066894637 arrives as 0.065 when only
    the upper handle moved, and an upper 0.56 as 0.5619 when only the lower one moved). A handle whose new value is
    its old one snapped to one of those grids (within a tenth of a step: the browser also rounds to 4 decimals) has
    not been moved and keeps its old value exactly; a deliberate move goes at least about half a step. A moved
    handle that passes the kept one stops on it (the two may be equal, never crossed).

    >>> settle_handles((0.066894637, 0.466), (0.065, 0.5), low=0.0)
    (0.066894637, 0.5)
    >>> settle_handles((0.066894637, 0.56), (0.07, 0.5619), low=0.0)
    (0.07, 0.56)
    >>> settle_handles((0.066894637, 0.466), (0.065, 0.065), low=0.0)
    (0.066894637, 0.066894637)
    """
    tol = step / 10

    def kept(old: float, new: float, anchors: tuple[float, ...]) -> bool:
        grids = [a + round((old - a) / step) * step for a in anchors]
        return any(abs(new - g) <= tol for g in (old, *grids))

    (b_lo, b_hi), (a_lo, a_hi) = before, after
    lo_kept = kept(b_lo, a_lo, (low, b_hi, a_hi))
    hi_kept = kept(b_hi, a_hi, (low, b_lo, a_lo))
    lo = float(b_lo) if lo_kept else float(a_lo)
    hi = float(b_hi) if hi_kept else float(a_hi)
    if lo > hi:  # only the moved handle gives way
        if lo_kept:
            hi = lo
        else:
            lo = hi
    return lo, hi


# ---------------------------------------------------------------- drafts, one per researcher

def draft(db: sqlite_utils.Database, user: User) -> dict[tuple[str, str], tuple[float, float]]:
    """The researcher's own draft: the active set's cut-offs, overridden by what they moved."""
    authorize(user, "thresholds.tune", db=db)
    cut = dict(th.active(db).cutoffs)
    for m, t, lo, hi in db.conn.execute("SELECT metric, aspect_type, low, high FROM threshold_drafts "
                                        "WHERE user_id = ?", (user.id,)):
        cut[(m, t)] = (lo, hi)
    return cut


def save_draft(db: sqlite_utils.Database, user: User, metric: str, aspect_type: str, low: float, high: float) -> None:
    """Keep one stratum of the researcher's draft (survives a reload; invisible to everyone else)."""
    authorize(user, "thresholds.tune", db=db)
    if (metric, aspect_type) not in th.TABLE12.cutoffs and (metric, aspect_type) not in strata():
        raise MedevalError(_("no cut-offs for {metric} / {aspect_type}").format(metric=metric, aspect_type=aspect_type))
    if not low <= high:
        raise MedevalError(_("the low cut-off {low} must not exceed the high one {high}").format(low=low, high=high))
    with transaction(db):
        db.conn.execute("INSERT OR REPLACE INTO threshold_drafts (user_id, metric, aspect_type, low, high, updated_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (user.id, metric, aspect_type, float(low), float(high), time.time()))


def discard_draft(db: sqlite_utils.Database, user: User) -> None:
    authorize(user, "thresholds.tune", db=db)
    with transaction(db):
        db.conn.execute("DELETE FROM threshold_drafts WHERE user_id = ?", (user.id,))
