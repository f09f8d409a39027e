"""The smooth cut-off estimator (medeval.calibration.smooth): known cut-offs recovered from several generating
models, the edge cases (nothing graded, one tier, a tier missing, ties, scores on a cut-off, crossing fits),
bad input refused with a clear message, and the estimators by name."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from medeval.calibration import ESTIMATORS, BoundaryFit, SmoothFit, estimator_names, fit_cutoffs, smooth_cutoffs
from medeval.calibration import active, estimators, smooth
from medeval.core.errors import MedevalError


def _draw(p1, p2, scores, g, *, lapse=0.0):
    """Tiers whose P(tier >= 1 | s) = p1(s) and P(tier >= 2 | s) = p2(s) (p2 <= p1), lapses: a random tier."""
    u = g.random(len(scores))
    a, b = p1(scores), p2(scores)
    assert (b <= a + 1e-12).all()
    t = (u < a).astype(int) + (u < b).astype(int)
    careless = g.random(len(scores)) < lapse
    t[careless] = g.integers(0, 3, int(careless.sum()))
    return t


def _crossing(p, lapse, k):
    # where the lapsed curve crosses 0.5: a careless grade reaches tier 1 two times in three, tier 2 one in three
    return brentq(lambda s: (1 - lapse) * p(np.array([s]))[0] + lapse * (3 - k) / 3 - 0.5, 0.0, 1.0)


def _ramp(c, left, right):
    """A straight ramp from 0 to 1 through (c, 0.5), ``left`` wide below c and ``right`` above."""
    return lambda s: np.clip(np.where(s < c, 0.5 + (s - c) / (2 * left), 0.5 + (s - c) / (2 * right)), 0, 1)


MODELS = {
    "logistic": (lambda s: expit((s - 0.32) / 0.04), lambda s: expit((s - 0.68) / 0.04), 0.0),
    "linear ramps": (_ramp(0.30, 0.08, 0.08), _ramp(0.60, 0.1, 0.1), 0.0),
    "uneven slopes, skewed, 5% lapses": (_ramp(0.40, 0.12, 0.05), lambda s: expit((s - 0.75) / 0.015), 0.05),
}


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("dist", ["uniform", "beta(2,3)"])
def test_recovers_known_cutoffs(model, dist):
    p1, p2, lapse = MODELS[model]
    g = np.random.default_rng([list(MODELS).index(model), len(dist)])
    scores = g.uniform(0, 1, 3000) if dist == "uniform" else g.beta(2, 3, 3000)
    tiers = _draw(p1, lambda s: np.minimum(p2(s), p1(s)), scores, g, lapse=lapse)
    truth = (_crossing(p1, lapse, 1), _crossing(lambda s: np.minimum(p2(s), p1(s)), lapse, 2))
    fit = fit_cutoffs(scores, tiers)
    assert fit.low.status == fit.high.status == "ok"
    for b, want in zip((fit.low, fit.high), truth):
        assert b.cutoff == pytest.approx(want, abs=0.015), (b.boundary, b.cutoff, want)
        lo, hi = b.ci
        assert lo < b.cutoff < hi and hi - lo < 0.08
    assert smooth_cutoffs(scores, tiers) == pytest.approx(fit.cutoffs())


def test_interval_covers_the_truth_about_95_percent_of_the_time():
    p1, p2, _ = MODELS["logistic"]
    covered = 0
    runs = 25  # 50 intervals: at a true 95% coverage, fewer than 80% covered happens about once in 30,000 runs
    for seed in range(runs):
        g = np.random.default_rng(seed)
        scores = g.uniform(0, 1, 200)
        fit = fit_cutoffs(scores, _draw(p1, p2, scores, g))
        covered += fit.low.ci[0] <= 0.32 <= fit.low.ci[1]
        covered += fit.high.ci[0] <= 0.68 <= fit.high.ci[1]
    assert covered / (2 * runs) >= 0.8


def test_the_curve_is_drawn_on_a_grid_and_crosses_half_at_the_cutoff():
    g = np.random.default_rng(3)
    scores = g.uniform(0.1, 0.9, 500)
    tiers = _draw(*MODELS["logistic"][:2], scores, g)
    fit = fit_cutoffs(scores, tiers, ci=False)
    for b in (fit.low, fit.high):
        assert len(b.grid) == len(b.curve) == smooth.GRID_POINTS
        assert b.grid[0] == pytest.approx(scores.min()) and b.grid[-1] == pytest.approx(scores.max())
        assert np.all(np.diff(b.curve) >= -1e-12)  # the curve only rises with the score
        assert np.interp(b.cutoff, b.grid, b.curve) == pytest.approx(0.5, abs=0.02)
        assert b.ci is None  # ci=False
    assert fit.method == smooth.METHOD == "smooth-logistic-lapse-v1"
    assert isinstance(fit, SmoothFit) and isinstance(fit.low, BoundaryFit)
    assert (fit.low.boundary, fit.high.boundary) == ("CW|PC", "PC|BC")


def test_nothing_graded_says_how_many_are_needed():
    fit = fit_cutoffs([], [])
    assert (fit.low.status, fit.high.status) == ("too-few", "too-few")
    assert fit.cutoffs() == (None, None)
    assert f"at least {smooth.MIN_ITEMS}" in fit.low.reason and fit.low.n == 0
    with pytest.raises(MedevalError, match=f"at least {smooth.MIN_ITEMS}"):
        smooth_cutoffs([], [])
    assert fit_cutoffs([0.2, 0.5, 0.9], [0, 1, 2]).low.status == "too-few"


def test_all_one_tier_is_one_sided_not_a_guess():
    fit = fit_cutoffs(np.linspace(0.2, 0.9, 30), [2] * 30)
    assert (fit.low.status, fit.high.status) == ("one-sided", "one-sided")
    assert fit.cutoffs() == (None, None)
    assert "below these scores" in fit.low.reason
    with pytest.raises(MedevalError, match="one-sided"):
        smooth_cutoffs(np.linspace(0.2, 0.9, 30), [2] * 30)
    fit = fit_cutoffs(np.linspace(0.2, 0.9, 30), [0] * 30)
    assert "above these scores" in fit.high.reason


def test_only_the_low_boundary_seen():
    # tiers 0 and 1 only: the CW|PC cut-off is learnt, PC|BC lies somewhere above every graded score
    g = np.random.default_rng(8)
    s = g.uniform(0, 0.6, 200)
    t = (s + g.normal(0, 0.04, 200) > 0.3).astype(int)
    fit = fit_cutoffs(s, t)
    assert fit.low.status == "ok" and fit.low.cutoff == pytest.approx(0.3, abs=0.03)
    assert fit.high.status == "one-sided" and fit.high.cutoff is None
    assert fit.cutoffs() == (fit.low.cutoff, None)


def test_no_partially_correct_tier_gives_equal_cutoffs():
    g = np.random.default_rng(5)
    s = g.uniform(0, 1, 400)
    t = np.where(s + g.normal(0, 0.05, 400) > 0.5, 2, 0)
    low, high = smooth_cutoffs(s, t)
    assert low == pytest.approx(high, abs=1e-4) and low == pytest.approx(0.5, abs=0.03)
    assert low <= high


def test_ties_and_scores_exactly_on_a_cutoff():
    # scores on a 0.1 lattice (many ties); at 0.3 half the items are tier 0 and half tier 1
    s = np.repeat(np.round(np.arange(0, 1.01, 0.1), 1), 10)
    t = np.where(s < 0.3, 0, np.where(s < 0.7, 1, 2))
    t[(s == 0.3)] = [0, 1] * 5
    t[(s == 0.7)] = [1, 2] * 5
    fit = fit_cutoffs(s, t)
    assert fit.low.cutoff == pytest.approx(0.3, abs=0.01)
    assert fit.high.cutoff == pytest.approx(0.7, abs=0.01)
    assert fit.low.ci[0] < 0.3 < fit.low.ci[1]


def test_crossing_fits_are_reported_never_swapped():
    # a thin, scattered partially correct tier: the fitted PC|BC curve crosses 0.5 below the CW|PC one
    s = [0.64, 0.68, 0.4, 0.7, 0.63, 0.53, 0.89, 1.0, 0.22, 0.92, 0.57, 0.68]
    t = [2, 2, 0, 2, 2, 2, 1, 2, 0, 1, 2, 2]
    fit = fit_cutoffs(s, t)
    assert fit.low.status == fit.high.status == "crossed"
    assert fit.low.cutoff > fit.high.cutoff  # as fitted: not swapped
    assert fit.cutoffs() == (None, None)
    assert "partially correct" in fit.low.reason
    with pytest.raises(MedevalError, match="crossed"):
        smooth_cutoffs(s, t)


def test_many_random_panels_come_out_ordered_or_crossed():
    for seed in range(60):
        g = np.random.default_rng(seed)
        n = int(g.integers(5, 40))
        s = g.uniform(0, 1, n)
        t = np.clip(np.rint(2 * s + g.normal(0, 0.4, n)), 0, 2).astype(int)
        fit = fit_cutoffs(s, t, ci=False)
        lo, hi = fit.cutoffs()
        if lo is not None and hi is not None:
            assert lo <= hi
        if fit.low.status == "crossed":
            assert fit.high.status == "crossed" and fit.low.cutoff > fit.high.cutoff


def test_per_clinician_offsets():
    # three clinicians (names in traditional Chinese), each with their own leniency; per-grade rows
    g = np.random.default_rng(11)
    names = ["陳醫師", "林醫師", "黃醫師"]
    shift = {"陳醫師": -0.05, "林醫師": 0.0, "黃醫師": 0.05}
    items = g.uniform(0, 1, 400)
    s, t, who = [], [], []
    for name in names:
        latent = items - shift[name] + g.normal(0, 0.03, len(items))
        s.extend(items)
        t.extend(np.where(latent < 0.35, 0, np.where(latent < 0.65, 1, 2)))
        who.extend([name] * len(items))
    fit = fit_cutoffs(s, t, clinicians=who)
    assert fit.low.cutoff == pytest.approx(0.35, abs=0.015)
    assert fit.high.cutoff == pytest.approx(0.65, abs=0.015)
    # the offsets explain the spread: the curve of the average clinician is steeper than the pooled one
    pooled = fit_cutoffs(s, t, ci=False)
    assert fit.low.width < pooled.low.width
    with pytest.raises(MedevalError, match="one clinician per grade"):
        fit_cutoffs(s, t, clinicians=who[:-1])


@pytest.mark.parametrize("scores, tiers, message", [
    ([0.1, float("nan"), 0.5, 0.6, 0.7], [0, 1, 1, 2, 2], "missing"),
    ([0.1, 0.2, 0.5, 0.6, 1.2], [0, 1, 1, 2, 2], r"\[0, 1\]"),
    ([-0.1, 0.2, 0.5, 0.6, 0.7], [0, 1, 1, 2, 2], r"\[0, 1\]"),
    ([0.1, 0.2, 0.5, 0.6, 0.7], [0, 1, 3, 2, 2], "0, 1 or 2"),
    ([0.1, 0.2, 0.5, 0.6, 0.7], [0, 1, 1.5, 2, 2], "0, 1 or 2"),
    ([0.1, 0.2, 0.5, 0.6, 0.7], ["CW", "PC", "PC", "BC", "BC"], "0, 1 or 2"),
    ([0.1, 0.2, 0.5], [0, 1], "differ in length"),
    (["high", 0.2, 0.5], [0, 1, 2], "numbers"),
])
def test_bad_input_is_refused_clearly(scores, tiers, message):
    with pytest.raises(MedevalError, match=message):
        fit_cutoffs(scores, tiers)
    with pytest.raises(MedevalError, match=message):
        smooth_cutoffs(scores, tiers)


def test_estimators_by_name():
    assert estimator_names() == ("smooth", "accuracy")
    assert set(ESTIMATORS) == {"smooth", "accuracy"}
    g = np.random.default_rng(2)
    s = g.uniform(0, 1, 300)
    t = _draw(*MODELS["logistic"][:2], s, g)
    # "accuracy" is the paper's search, unchanged
    assert ESTIMATORS["accuracy"](s, t) == active.optimal_accuracy_cuts(s, t, 0.0, 1.0)
    assert ESTIMATORS["smooth"](s, t) == smooth_cutoffs(s, t)
    assert estimators.get_estimator("smooth") is smooth_cutoffs
    with pytest.raises(MedevalError, match="smooth, accuracy"):
        estimators.get_estimator("isotonic")
    with pytest.raises(MedevalError, match="only one tier"):
        ESTIMATORS["accuracy"]([0.1, 0.5, 0.9], [1, 1, 1])
    with pytest.raises(MedevalError, match="at least 3"):
        ESTIMATORS["accuracy"]([0.1, 0.5], [0, 2])


def test_a_cutoff_at_the_edge_of_the_graded_scores_gets_a_wide_interval_not_a_narrow_one():
    # one item reaches tier 1, the highest graded: the cut-off lies near the top and is not bounded from above
    s = np.linspace(0.1, 0.9, 40)
    t = np.zeros(40, dtype=int)
    t[-1] = 1
    low = fit_cutoffs(s, t).low
    assert low.status == "ok" and s[-2] < low.cutoff < s[-1]
    assert low.ci[0] < low.cutoff and low.ci[1] > s.max()
