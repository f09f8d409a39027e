"""The adaptive design (medeval.calibration.adaptive.propose_items): works from nothing graded, never proposes a
graded item or one twice, is deterministic for a seed, puts its targeted picks near the cut-offs, keeps a share
at random over the range, corrects a wrong start, and refuses bad input clearly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from medeval.calibration import propose_items, smooth_cutoffs
from medeval.core.errors import MedevalError

TRUE = (0.3, 0.7)


def _panel(scores, g):
    """Consensus tiers with logistic curves crossing 0.5 at TRUE (width 0.03)."""
    u = g.random(len(scores))
    return (u < expit((scores - TRUE[0]) / 0.03)).astype(int) + (u < expit((scores - TRUE[1]) / 0.03)).astype(int)


@pytest.fixture()
def pool():
    g = np.random.default_rng(0)
    scores = g.beta(2, 3, 3000)
    return scores, _panel(scores, g)


def test_from_nothing_graded_the_round_spreads_over_the_range(pool):
    scores, _ = pool
    picked = propose_items(scores, [], [], 20, 0)
    assert len(picked) == 20 and len(set(picked.tolist())) == 20
    assert np.all(np.diff(picked) > 0)  # sorted, no duplicates
    # every fifth of the pool's score range gets some of the round, although the pool is skewed
    lo, hi = scores.min(), scores.max()
    fifths = np.minimum(((scores[picked] - lo) / (hi - lo) * 5).astype(int), 4)
    assert set(fifths.tolist()) == {0, 1, 2, 3, 4}


def test_never_a_graded_item_nor_the_same_twice(pool):
    scores, tiers = pool
    g = np.random.default_rng(1)
    graded = g.choice(len(scores), 400, replace=False)
    for seed in range(5):
        picked = propose_items(scores, graded, tiers[graded], 60, seed)
        assert len(picked) == 60
        assert not set(picked.tolist()) & set(graded.tolist())
        assert len(np.unique(picked)) == 60
        assert picked.min() >= 0 and picked.max() < len(scores)


def test_deterministic_for_a_seed(pool):
    scores, tiers = pool
    graded = np.arange(0, 3000, 30)
    a = propose_items(scores, graded, tiers[graded], 25, 7)
    b = propose_items(scores, graded, tiers[graded], 25, np.random.default_rng(7))
    assert np.array_equal(a, b)
    assert np.array_equal(a, propose_items(scores, list(graded), list(tiers[graded]), 25, 7))
    assert not np.array_equal(a, propose_items(scores, graded, tiers[graded], 25, 8))


def test_targeted_picks_lie_near_the_cutoffs_and_a_share_is_random(pool):
    scores, tiers = pool
    graded = np.arange(0, 3000, 20)  # 150 items spread over the pool
    dist = lambda idx: np.min(np.abs(scores[idx][:, None] - np.array(TRUE)[None]), axis=1)  # noqa: E731
    targeted = propose_items(scores, graded, tiers[graded], 40, 3, random_share=0.0)
    assert (dist(targeted) < 0.1).mean() >= 0.75 and np.median(dist(targeted)) < 0.05
    # both cut-offs get items, most where fewer are graded (beta(2,3): the high one) -- it is the less certain
    near_low = (np.abs(scores[targeted] - TRUE[0]) < 0.1).sum()
    near_high = (np.abs(scores[targeted] - TRUE[1]) < 0.1).sum()
    assert near_low >= 1 and near_high > 2 * near_low
    spread = propose_items(scores, graded, tiers[graded], 40, 3, random_share=1.0)
    assert (dist(spread) < 0.1).mean() < 0.7 and np.ptp(scores[spread]) > 0.6


def test_rounds_find_the_cutoffs_from_a_wrong_start():
    # everything graded so far is low (a wrong start: the high cut-off never seen); rounds still find both
    g = np.random.default_rng(4)
    scores = g.uniform(0, 1, 5000)
    tiers = _panel(scores, g)
    graded = np.flatnonzero(scores < 0.35)[:30]
    rng = np.random.default_rng(9)
    while len(graded) < 200:
        graded = np.concatenate([graded, propose_items(scores, graded, tiers[graded], 25, rng)])
    fit = smooth_cutoffs(scores[graded], tiers[graded])
    assert fit.low.cutoff == pytest.approx(TRUE[0], abs=0.025)
    assert fit.high.cutoff == pytest.approx(TRUE[1], abs=0.025)


def test_small_pools_and_ties():
    scores = np.array([0.2] * 5 + [0.5] * 5 + [0.8] * 5)
    picked = propose_items(scores, [0, 5, 10], [0, 1, 2], 4, 0)
    assert len(picked) == 4 and not {0, 5, 10} & set(picked.tolist())
    # more asked than left: all that is left, once each
    rest = propose_items(scores, [0, 5, 10], [0, 1, 2], 50, 0)
    assert sorted(rest.tolist()) == sorted(set(range(15)) - {0, 5, 10})
    assert len(propose_items(scores, np.arange(15), [0] * 5 + [1] * 5 + [2] * 5, 3, 0)) == 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(graded_idx=[0, 99], graded_tiers=[0, 1]), "positions in the pool"),
    (dict(graded_idx=[3, 3], graded_tiers=[0, 1]), "twice"),
    (dict(graded_idx=[1, 2], graded_tiers=[0]), "differ in length"),
    (dict(graded_idx=[1, 2], graded_tiers=[0, 5]), "0, 1 or 2"),
    (dict(m=0), "at least one item"),
    (dict(m=2.5), "whole number; got 2.5"),
    (dict(m="3"), "whole number"),
    (dict(graded_idx=[1.5, 2], graded_tiers=[0, 1]), "whole pool positions; got 1.5"),
    (dict(random_share=1.5), "share between 0 and 1"),
    (dict(pool=[0.1, float("nan"), 0.3]), "missing"),
    (dict(pool=[0.1, 1.3, 0.3]), r"\[0, 1\]"),
])
def test_bad_input_is_refused_clearly(kwargs, message):
    args = dict(pool=np.linspace(0, 1, 10), graded_idx=[], graded_tiers=[], m=3, rng=0)
    args.update(kwargs)
    share = args.pop("random_share", 0.1)
    with pytest.raises(MedevalError, match=message):
        propose_items(args["pool"], args["graded_idx"], args["graded_tiers"], args["m"], args["rng"],
                      random_share=share)
