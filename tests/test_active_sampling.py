"""Active calibration sampling (medeval.calibration.active): rounds drawn where the cut-offs are uncertain."""

import numpy as np
import pytest

from medeval.calibration import active
from medeval.core.errors import MedevalError


def _separable(n=60, lo=0.3, hi=0.7, seed=0):
    g = np.random.default_rng(seed)
    scores = g.uniform(0, 1, n)
    tiers = np.where(scores < lo, 0, np.where(scores < hi, 1, 2))
    return scores, tiers


def test_spread_finds_the_gap_and_every_resample_stays_near_it():
    scores, tiers = _separable()
    s = active.spread("rouge1", scores, tiers, n_boot=50, rng=1)
    lo, hi = s.cut_offs
    below0, above0 = scores[tiers == 0].max(), scores[tiers == 1].min()
    assert below0 < lo < above0
    assert scores[tiers == 1].max() < hi < scores[tiers == 2].min()
    assert len(s.lows) == len(s.highs) == 50
    # a resample may miss the items at the edge of a gap, so its cut can move a little, not across a class
    assert np.all(s.lows < 0.45) and np.all(s.highs > 0.55)
    w = s.widths()
    assert w is not None and 0 <= w[0] < 0.15 and 0 <= w[1] < 0.15


def test_spread_is_undefined_with_too_few_items_or_one_tier():
    assert active.spread("rouge1", [0.1, 0.2], [0, 1]).cut_offs is None
    one = active.spread("rouge1", [0.1, 0.2, 0.3, 0.4], [1, 1, 1, 1])
    assert one.cut_offs is None and one.widths() is None
    with pytest.raises(MedevalError, match="differ in length"):
        active.spread("rouge1", [0.1, 0.2, 0.3], [0, 1])


def test_without_an_estimate_a_round_is_an_interval_sample_of_ungraded_items():
    g = np.random.default_rng(3)
    scores = g.uniform(0, 1, 500)
    graded = np.arange(0, 500, 7)
    new = active.propose("rouge1", scores, graded, None, m=20, rng=0)
    assert len(new) == 20 and len(set(new.tolist())) == 20
    assert not set(new.tolist()) & set(graded.tolist())
    assert sorted(set(active.interval_of("rouge1", scores[new], 0.1).tolist())) == list(range(10))  # 2 per interval


def test_a_round_goes_where_the_cut_offs_are_uncertain():
    g = np.random.default_rng(4)
    scores = g.uniform(0, 1, 4000)
    s = active.CutoffSpread((0.3, 0.7), g.normal(0.3, 0.02, 200), g.normal(0.7, 0.02, 200), 100)
    new = active.propose("rouge1", scores, np.array([], dtype=int), s, m=100, explore=0.0, rng=5)
    near = np.minimum(abs(scores[new] - 0.3), abs(scores[new] - 0.7)) < 0.08
    assert near.mean() > 0.9  # uniform sampling would put 32% there
    assert abs(np.mean(scores[new] < 0.5) - 0.5) < 0.15  # both cut-offs get their share
    # the explore share still looks at the rest of the range
    mixed = active.propose("rouge1", scores, np.array([], dtype=int), s, m=100, explore=0.4, rng=5)
    far = np.minimum(abs(scores[mixed] - 0.3), abs(scores[mixed] - 0.7)) >= 0.08
    assert 20 <= far.sum() <= 60


def test_a_round_never_repeats_an_item_and_stops_when_the_pool_is_spent():
    scores = np.linspace(0, 1, 30)
    s = active.CutoffSpread((0.3, 0.7), np.full(10, 0.3), np.full(10, 0.7), 30)
    graded = np.arange(25)
    new = active.propose("rouge1", scores, graded, s, m=10, rng=0)
    assert sorted(new.tolist()) == [25, 26, 27, 28, 29]
    assert len(active.propose("rouge1", scores, np.arange(30), s, m=10, rng=0)) == 0


def test_rounds_are_reproducible_from_the_seed():
    g = np.random.default_rng(9)
    scores = g.uniform(0, 1, 800)
    s = active.CutoffSpread((0.4, 0.6), g.normal(0.4, 0.05, 100), g.normal(0.6, 0.05, 100), 80)
    a = active.propose("rouge1", scores, np.arange(10), s, m=30, rng=11)
    b = active.propose("rouge1", scores, np.arange(10), s, m=30, rng=11)
    assert a.tolist() == b.tolist()


def test_bad_round_settings_are_refused():
    s = active.CutoffSpread((0.3, 0.7), np.full(3, 0.3), np.full(3, 0.7), 10)
    with pytest.raises(MedevalError, match="at least one item"):
        active.propose("rouge1", [0.1, 0.2], [], s, m=0)
    with pytest.raises(MedevalError, match="explore"):
        active.propose("rouge1", [0.1, 0.2], [], s, m=1, explore=1.5)


def test_the_stopping_rule():
    narrow = active.CutoffSpread((0.3, 0.7), np.array([0.29, 0.3, 0.31]), np.array([0.69, 0.7, 0.72]), 50)
    wide = active.CutoffSpread((0.3, 0.7), np.array([0.2, 0.3, 0.4]), np.array([0.69, 0.7, 0.71]), 50)
    assert active.should_stop(narrow, n_graded=50, budget=100, target_width=0.05) == "target"
    assert active.should_stop(wide, n_graded=50, budget=100, target_width=0.05) is None  # the low cut-off is loose
    assert active.should_stop(wide, n_graded=100, budget=100, target_width=0.05) == "budget"
    assert active.should_stop(None, n_graded=10, budget=100, target_width=0.05) is None


def test_the_fast_accuracy_search_picks_exactly_what_the_exhaustive_search_picks():
    """Random cases with many ties (few distinct scores, skewed tiers, one or two tiers missing)."""
    from medeval.calibration.cutoffs import _optimise

    g = np.random.default_rng(2024)
    for case in range(400):
        n = int(g.integers(3, 60))
        scores = np.round(g.uniform(0, 1, n), int(g.integers(1, 3)))
        tiers = g.choice(3, size=n, p=g.dirichlet(np.ones(3) * 0.7))
        if case % 3 == 0:  # tiers that follow the score, with noise
            tiers = np.clip(np.rint(scores * 2 + g.normal(0, 0.4, n)), 0, 2).astype(int)
        want = _optimise(scores, tiers, 0.0, 1.0, "accuracy")["cut_offs"]
        assert active.optimal_accuracy_cuts(scores, tiers, 0.0, 1.0) == pytest.approx(want, abs=1e-12), case
