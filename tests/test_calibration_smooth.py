"""The smooth cut-off estimator (medeval.calibration.smooth_cutoffs): known cut-offs recovered from several
generating models, the edge cases (nothing graded, one tier, a tier missing, ties, scores on a cut-off, crossing
fits, cut-offs at the ends of the score range, kinked curves), several clinicians' grades combined per item, bad
input refused with a clear message, and the estimators by name."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit

from medeval.calibration import ESTIMATORS, BoundaryFit, SmoothFit, estimator_names, smooth_cutoffs
from medeval.calibration import active, estimators, smooth, smooth_likelihood
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
    fit = smooth_cutoffs(scores, tiers)
    assert fit.low.status == fit.high.status == "ok"
    for b, want in zip((fit.low, fit.high), truth):
        assert b.cutoff == pytest.approx(want, abs=0.015), (b.boundary, b.cutoff, want)
        lo, hi = b.ci
        assert lo < b.cutoff < hi and hi - lo < 0.08
    assert estimators.smooth_pair(scores, tiers) == pytest.approx(fit.cutoffs())


def test_interval_covers_the_truth_about_95_percent_of_the_time():
    p1, p2, _ = MODELS["logistic"]
    covered = 0
    runs = 25  # 50 intervals: at a true 95% coverage, fewer than 80% covered happens about once in 30,000 runs
    for seed in range(runs):
        g = np.random.default_rng(seed)
        scores = g.uniform(0, 1, 200)
        fit = smooth_cutoffs(scores, _draw(p1, p2, scores, g))
        covered += fit.low.ci[0] <= 0.32 <= fit.low.ci[1]
        covered += fit.high.ci[0] <= 0.68 <= fit.high.ci[1]
    assert covered / (2 * runs) >= 0.8


def test_the_curve_is_drawn_on_a_grid_and_crosses_half_at_the_cutoff():
    g = np.random.default_rng(3)
    scores = g.uniform(0.1, 0.9, 500)
    tiers = _draw(*MODELS["logistic"][:2], scores, g)
    fit = smooth_cutoffs(scores, tiers, ci=False)
    for b in (fit.low, fit.high):
        assert len(b.grid) == len(b.curve) == smooth.GRID_POINTS
        assert b.grid[0] == pytest.approx(scores.min()) and b.grid[-1] == pytest.approx(scores.max())
        assert np.all(np.diff(b.curve) >= -1e-12)  # the curve only rises with the score
        assert np.interp(b.cutoff, b.grid, b.curve) == pytest.approx(0.5, abs=0.02)
        assert b.ci is None  # ci=False
    assert fit.method == smooth.METHOD == "smooth-logistic-lapse-v3"
    assert isinstance(fit, SmoothFit) and isinstance(fit.low, BoundaryFit)
    assert (fit.low.boundary, fit.high.boundary) == ("CW|PC", "PC|BC")


def test_nothing_graded_says_how_many_are_needed():
    fit = smooth_cutoffs([], [])
    assert (fit.low.status, fit.high.status) == ("too-few", "too-few")
    assert fit.cutoffs() == (None, None)
    assert f"at least {smooth.MIN_ITEMS}" in fit.low.reason and fit.low.n == 0
    assert fit.low.undetermined() == "too-few"
    with pytest.raises(MedevalError, match=f"at least {smooth.MIN_ITEMS}"):
        estimators.smooth_pair([], [])
    assert smooth_cutoffs([0.2, 0.5, 0.9], [0, 1, 2]).low.status == "too-few"


def test_all_one_tier_is_one_sided_not_a_guess():
    fit = smooth_cutoffs(np.linspace(0.2, 0.9, 30), [2] * 30)
    assert (fit.low.status, fit.high.status) == ("one-sided", "one-sided")
    assert fit.cutoffs() == (None, None)
    assert "below these scores" in fit.low.reason
    assert (fit.low.undetermined(), fit.high.undetermined()) == ("all-reach", "all-reach")
    with pytest.raises(MedevalError, match="one-sided"):
        estimators.smooth_pair(np.linspace(0.2, 0.9, 30), [2] * 30)
    fit = smooth_cutoffs(np.linspace(0.2, 0.9, 30), [0] * 30)
    assert "above these scores" in fit.high.reason and fit.high.undetermined() == "none-reach"


def test_only_the_low_boundary_seen():
    # tiers 0 and 1 only: the CW|PC cut-off is learnt, PC|BC lies somewhere above every graded score
    g = np.random.default_rng(8)
    s = g.uniform(0, 0.6, 200)
    t = (s + g.normal(0, 0.04, 200) > 0.3).astype(int)
    fit = smooth_cutoffs(s, t)
    assert fit.low.status == "ok" and fit.low.cutoff == pytest.approx(0.3, abs=0.03)
    assert fit.high.status == "one-sided" and fit.high.cutoff is None
    assert fit.cutoffs() == (fit.low.cutoff, None)


def test_no_partially_correct_tier_gives_equal_cutoffs():
    g = np.random.default_rng(5)
    s = g.uniform(0, 1, 400)
    t = np.where(s + g.normal(0, 0.05, 400) > 0.5, 2, 0)
    low, high = smooth_cutoffs(s, t).cutoffs()
    assert low == pytest.approx(high, abs=1e-4) and low == pytest.approx(0.5, abs=0.03)
    assert low <= high


def test_ties_and_scores_exactly_on_a_cutoff():
    # scores on a 0.1 lattice (many ties); at 0.3 half the items are tier 0 and half tier 1
    s = np.repeat(np.round(np.arange(0, 1.01, 0.1), 1), 10)
    t = np.where(s < 0.3, 0, np.where(s < 0.7, 1, 2))
    t[(s == 0.3)] = [0, 1] * 5
    t[(s == 0.7)] = [1, 2] * 5
    fit = smooth_cutoffs(s, t)
    assert fit.low.cutoff == pytest.approx(0.3, abs=0.01)
    assert fit.high.cutoff == pytest.approx(0.7, abs=0.01)
    assert fit.low.ci[0] < 0.3 < fit.low.ci[1]


def test_crossing_fits_are_joined_into_one_cut_off_and_said_so():
    # a thin, scattered partially correct tier: the PC|BC curve alone crosses 0.5 below the CW|PC one; the accuracy
    # search gives an answer here, so the estimator does too: one shared cut-off, no partially correct band
    s = [0.41, 0.57, 0.51, 0.56, 0.57, 0.87, 0.09, 0.74, 0.82, 0.71, 0.41, 0.94]
    t = [2, 2, 2, 2, 2, 2, 0, 1, 2, 2, 0, 2]
    alone = [smooth.fit_boundary(*smooth.check_inputs(s, t)[:2], k, ci=False) for k in (1, 2)]
    assert alone[0].cutoff > alone[1].cutoff  # the two fits on their own cross
    fit = smooth_cutoffs(s, t)
    assert fit.joined and fit.low.status == fit.high.status == "ok"
    assert fit.low.cutoff == fit.high.cutoff
    assert alone[1].cutoff <= fit.low.cutoff <= alone[0].cutoff
    assert "one cut-off" in fit.low.reason and "partially correct" in fit.low.reason
    for b in (fit.low, fit.high):
        assert b.ci[0] <= b.cutoff <= b.ci[1]
    # the shared cut-off maximises the two curves' joint likelihood: moving it either way lowers it
    ss, tt, _ = smooth.check_inputs(s, t)
    lo, hi, _ = smooth._grid(ss)

    def joint(c):
        return sum(smooth._fit(ss, (tt >= k).astype(float), lo, hi, fixed_c=c).fun for k in (1, 2))

    assert joint(fit.low.cutoff) <= min(joint(fit.low.cutoff - 0.02), joint(fit.low.cutoff + 0.02))


def test_many_random_panels_come_out_ordered():
    for seed in range(60):
        g = np.random.default_rng(seed)
        n = int(g.integers(5, 40))
        s = g.uniform(0, 1, n)
        t = np.clip(np.rint(2 * s + g.normal(0, 0.4, n)), 0, 2).astype(int)
        fit = smooth_cutoffs(s, t, ci=False)
        lo, hi = fit.cutoffs()
        if lo is not None and hi is not None:
            assert 0 <= lo <= hi <= 1


def test_several_clinicians_grades_are_combined_into_each_items_lower_median():
    # three clinicians (names in traditional Chinese), one strict and one lenient; one row per grade
    g = np.random.default_rng(11)
    names = ["陳醫師", "林醫師", "黃醫師"]
    shift = {"陳醫師": -0.08, "林醫師": 0.0, "黃醫師": 0.08}
    items = g.uniform(0, 1, 400)
    s, t, ids = [], [], []
    for name in names:
        latent = items - shift[name] + g.normal(0, 0.03, len(items))
        s.extend(items)
        t.extend(np.where(latent < 0.35, 0, np.where(latent < 0.65, 1, 2)))
        ids.extend([f"item {i}" for i in range(len(items))])
    fit = smooth_cutoffs(s, t, items=ids)
    # the fit is the one on the consensus rows: the same cut-offs, one row per item
    per_item = np.array(t).reshape(3, -1)
    consensus = np.sort(per_item, axis=0)[1]
    alone = smooth_cutoffs(items, consensus)
    assert fit.cutoffs() == pytest.approx(alone.cutoffs())
    assert fit.n_items == 400 and fit.grades_per_item == 3.0 and alone.grades_per_item == 1.0
    assert "lower median" in fit.basis() and "400 items" in fit.basis()
    # the consensus boundary is the middle clinician's: neither the strict nor the lenient one pulls it
    assert fit.low.cutoff == pytest.approx(0.35, abs=0.015)
    assert fit.high.cutoff == pytest.approx(0.65, abs=0.015)
    with pytest.raises(MedevalError, match="one item per grade"):
        smooth_cutoffs(s, t, items=ids[:-1])
    with pytest.raises(MedevalError, match="different scores"):
        smooth_cutoffs([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 0, 1, 1, 2, 2], items=["a", "a", "b", "b", "c", "c"])


def test_with_two_clinicians_the_consensus_is_the_stricter_grade():
    # the lower median of two grades is the lower one: the cut-offs are the strict clinician's
    g = np.random.default_rng(4)
    items = g.uniform(0, 1, 600)
    strict = np.where(items < 0.45, 0, np.where(items < 0.75, 1, 2))
    lenient = np.where(items < 0.25, 0, np.where(items < 0.55, 1, 2))
    fit = smooth_cutoffs(np.r_[items, items], np.r_[strict, lenient], items=np.r_[np.arange(600), np.arange(600)])
    assert fit.low.cutoff == pytest.approx(0.45, abs=0.01) and fit.high.cutoff == pytest.approx(0.75, abs=0.01)


def test_a_boundary_beyond_the_low_end_of_the_range_is_the_end_not_a_refusal():
    # a third of the answers score exactly 0 and just over half of those were graded partially correct: the
    # curve is past 0.5 at 0, so every score reaches PC (as the accuracy search's cut-off 0 says)
    g = np.random.default_rng(21)
    s = np.where(g.random(300) < 0.35, 0.0, g.beta(1.5, 3, 300))
    p1 = expit((s + 0.01) / 0.03)
    t = (g.random(300) < p1).astype(int) + (g.random(300) < expit((s - 0.5) / 0.05)).astype(int)
    t = np.minimum(t, 2)
    assert 0.5 < (t[s == 0] >= 1).mean() < 0.8
    fit = smooth_cutoffs(s, t)
    assert fit.low.status == "ok" and fit.low.cutoff == 0.0 and fit.low.at_end == "low"
    assert "beyond the score range" in fit.low.reason
    assert fit.low.ci[0] == 0.0 and fit.low.ci[1] < 0.1
    assert ESTIMATORS["accuracy"](s, t)[0] == 0.0


def test_a_boundary_beyond_the_high_end_is_the_end():
    s = np.linspace(0, 1, 200)
    t = np.where(s < 0.3, 0, 1)
    t[s > 0.97] = [2, 1, 1, 2, 1, 1][: int((s > 0.97).sum())]  # at the top, fewer than half reach BC
    fit = smooth_cutoffs(s, t)
    assert fit.high.status == "ok" and 0.97 < fit.high.cutoff <= 1.0


def test_a_kinked_curve_does_not_drag_the_cut_off_to_its_shallow_side(monkeypatch):
    # three clinicians (strict, middle, lenient) whose latent grade rises steeply just below 0.6 and slowly above it:
    # the panel's P(median tier = 2 | score) has a shoulder the split logistic cannot follow -- fitted globally its
    # crossing lands 0.01 towards the shallow side; the local refit follows the items near the crossing
    xs, ys = [-1.0, 0.25, 0.55, 0.6, 2.0], [-9.5, 0.5, 1.1, 1.5, 4.3]  # slopes 8, 2, 8, 2

    def median_tiers(s, g):
        x = np.interp(s, xs, ys)[:, None] + g.normal(0, 0.2, (len(s), 1)) + np.array([-0.35, 0.0, 0.35]) + \
            g.normal(0, 0.2, (len(s), 3))
        return np.sort(np.clip(np.rint(x), 0, 2), axis=1)[:, 1].astype(int)

    def p_top(x):  # common random numbers: the same draws at every score, so brentq sees a monotone function
        return np.mean(median_tiers(np.full(200_000, x), np.random.default_rng(1)) == 2) - 0.5

    truth = brentq(p_top, 0.5, 0.7, xtol=1e-5)
    g = np.random.default_rng(9)
    s = g.uniform(0, 1, 40_000)
    t = median_tiers(s, g)
    local = smooth_cutoffs(s, t, ci=False).high.cutoff
    monkeypatch.setattr(smooth_likelihood, "LOCAL_ROUNDS", 0)
    alone = smooth_cutoffs(s, t, ci=False).high.cutoff
    assert alone - truth > 0.007  # the global split logistic: towards the shallow side
    assert abs(local - truth) < 0.004


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
        smooth_cutoffs(scores, tiers)
    with pytest.raises(MedevalError, match=message):
        estimators.smooth_pair(scores, tiers)


def test_estimators_by_name():
    assert estimator_names() == ("smooth", "accuracy")
    assert set(ESTIMATORS) == {"smooth", "accuracy"}
    g = np.random.default_rng(2)
    s = g.uniform(0, 1, 300)
    t = _draw(*MODELS["logistic"][:2], s, g)
    # "accuracy" is the paper's search, unchanged
    assert ESTIMATORS["accuracy"](s, t) == active.optimal_accuracy_cuts(s, t, 0.0, 1.0)
    assert ESTIMATORS["smooth"](s, t) == smooth_cutoffs(s, t, ci=False).cutoffs()
    assert estimators.get_estimator("smooth") is estimators.smooth_pair
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
    low = smooth_cutoffs(s, t).low
    assert low.status == "ok" and s[-2] < low.cutoff < s[-1]
    assert low.ci[0] < low.cutoff and low.ci[1] > s.max()


KINKED = _ramp(0.25, 0.03, 0.15)  # steep just below its cut-off, shallow above (the demo's clinicians)
COVERAGE_MODELS = {
    "logistic": (MODELS["logistic"][0], MODELS["logistic"][1], 0.0),
    "linear ramps": (MODELS["linear ramps"][0], MODELS["linear ramps"][1], 0.0),
    "kinked": (KINKED, lambda s: np.minimum(_ramp(0.6, 0.03, 0.15)(s), KINKED(s)), 0.0),
    "low end, uneven, 5% lapses": (_ramp(0.06, 0.04, 0.12), lambda s: expit((s - 0.5) / 0.03), 0.05),
    "high end": (lambda s: expit((s - 0.5) / 0.05), _ramp(0.93, 0.08, 0.03), 0.0),
}


@pytest.mark.slow  # 300 fits with their profile intervals
def test_intervals_cover_the_true_cut_off_at_least_90_percent_across_models_and_narrow_with_the_grades():
    """The 95% profile intervals, over five generating models (two of them kinked or at an end of the range), 20
    panels each, at 60, 150 and 400 graded items: at each size at least 90% cover the true cut-off (at a true 95%,
    200 intervals fall below 90% about once in two thousand runs; the seeds are fixed), and the median width narrows
    about as 1/sqrt(n) -- by more than half from 60 to 400 grades: the grades, not a prior, set it."""
    median_width = {}
    for n in (60, 150, 400):
        covered, widths = [], []
        for m, (p1, p2, lapse) in enumerate(COVERAGE_MODELS.values()):
            truth = (_crossing(p1, lapse, 1), _crossing(lambda s: np.minimum(p2(s), p1(s)), lapse, 2))
            for seed in range(20):
                g = np.random.default_rng([m, seed, n])
                s = g.uniform(0, 1, n)
                fit = smooth_cutoffs(s, _draw(p1, lambda x: np.minimum(p2(x), p1(x)), s, g, lapse=lapse))
                for b, want in zip((fit.low, fit.high), truth):
                    assert b.status == "ok", (m, seed, b.reason)
                    covered.append(b.ci[0] <= want <= b.ci[1])
                    widths.append(b.ci[1] - b.ci[0])
        assert np.mean(covered) >= 0.9, (n, np.mean(covered))
        median_width[n] = float(np.median(widths))
    assert median_width[400] < median_width[150] < median_width[60], median_width
    assert median_width[400] < 0.5 * median_width[60], median_width


def test_every_item_reaching_a_tier_with_several_at_score_0_puts_the_cut_off_at_0():
    # no completely wrong grade at all, a fifth of the items scoring exactly 0: nothing lies below 0, so every
    # score reaches partially correct -- the accuracy search's 0, not "anywhere below these scores"
    s = np.r_[np.zeros(15), np.linspace(0.05, 1, 60)]
    t = np.r_[np.ones(15, dtype=int), np.where(np.linspace(0.05, 1, 60) < 0.5, 1, 2)]
    fit = smooth_cutoffs(s, t)
    assert (fit.low.status, fit.low.cutoff, fit.low.ci, fit.low.at_end) == ("ok", 0.0, (0.0, 0.0), "low")
    assert fit.high.status == "ok" and fit.high.cutoff == pytest.approx(0.5, abs=0.03)
    assert ESTIMATORS["accuracy"](s, t)[0] == 0.0
    # one item at 0 is not enough to say so: it could be a careless grade
    fit = smooth_cutoffs(s[14:], t[14:])
    assert fit.low.status == "one-sided" and fit.low.undetermined() == "all-reach"
