"""Double-blind preference results: hand counts, scipy's binomial test, a direct Bradley-Terry MLE, krippendorff."""

import itertools

import krippendorff
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import binomtest

from medeval.stats import preference as pref
from medeval.core.errors import MedevalError


def test_shares_count_ties_as_half_and_report_the_spread():
    rows = [(1, "a", "X", "Y", "left"), (2, "a", "Y", "X", "left"), (3, "a", "X", "Y", "tie"),
            (1, "b", "Y", "X", "right"), (2, "b", "X", "Y", "right"), (3, "b", "Y", "X", "right")]
    s = pref.shares(rows)
    # X: a won 1, lost 1, tied 1 -> 1.5/3; b: won items 1 and 3, lost item 2 -> 2/3
    assert s["X"]["share"] == pytest.approx(3.5 / 6) and s["Y"]["share"] == pytest.approx(2.5 / 6)
    assert (s["X"]["per_annotator_min"], s["X"]["per_annotator_max"]) == (pytest.approx(0.5), pytest.approx(2 / 3))
    assert s["X"]["share"] + s["Y"]["share"] == pytest.approx(1.0)


def test_position_bias_uses_scipys_exact_binomial_test():
    rows = [(i, "a", "X", "Y", "left" if i < 15 else "right") for i in range(20)] + [(99, "a", "X", "Y", "tie")]
    b = pref.position_bias(rows)
    assert b["left_share"] == pytest.approx(15 / 20) and b["n_decided"] == 20
    assert b["p"] == pytest.approx(binomtest(15, 20, 0.5).pvalue)
    assert pref.position_bias([(1, "a", "X", "Y", "tie")])["undefined_reason"] == "every choice is a tie"


def _bt_mle(wins: np.ndarray) -> np.ndarray:
    """Bradley-Terry by direct maximisation of the log-likelihood (an independent implementation)."""
    k = len(wins)

    def nll(theta):
        theta = np.append(theta, -theta.sum())  # identifiability: log-strengths sum to 0
        ll = 0.0
        for i, j in itertools.permutations(range(k), 2):
            ll += wins[i, j] * (theta[i] - np.logaddexp(theta[i], theta[j]))
        return -ll

    res = minimize(nll, np.zeros(k - 1), method="BFGS", options={"gtol": 1e-10})
    p = np.exp(np.append(res.x, -res.x.sum()))
    return p * k / p.sum()


def test_bradley_terry_equals_a_direct_maximum_likelihood_fit():
    rng = np.random.default_rng(3)
    true = {"A": 3.0, "B": 1.0, "C": 0.5, "D": 1.5}
    rows, n = [], 0
    for _ in range(400):
        a, b = rng.choice(list(true), 2, replace=False)
        win = rng.random() < true[a] / (true[a] + true[b])
        rows.append((n, "r", a, b, "left" if win else "right"))
        n += 1
    bt = pref.bradley_terry(rows)
    srcs = bt["sources"]
    wins = np.zeros((4, 4))
    for _, _, left, right, choice in rows:
        i, j = srcs.index(left), srcs.index(right)
        wins[(i, j) if choice == "left" else (j, i)] += 1
    expected = _bt_mle(wins)
    assert [bt["strengths"][s] for s in srcs] == pytest.approx(expected.tolist(), rel=1e-5)
    assert max(bt["strengths"], key=bt["strengths"].get) == "A"


def test_two_sources_closed_form_and_undefined_cases():
    rows = [(i, "r", "X", "Y", "left" if i < 6 else "right") for i in range(8)]
    s = pref.bradley_terry(rows)["strengths"]
    assert s["X"] / s["Y"] == pytest.approx(6 / 2)  # the MLE for two sources is the ratio of wins
    never = pref.bradley_terry([(1, "r", "X", "Y", "left"), (2, "r", "X", "Y", "left")])
    assert never["strengths"] is None and "never lost or never won" in never["undefined_reason"]


def test_agreement_is_over_the_chosen_source_not_the_side():
    # a and b always pick the same source although it was shown on opposite sides
    rows = []
    for item in range(10):
        src = "X" if item % 3 else "Y"
        rows.append((item, "a", "X", "Y", "left" if src == "X" else "right"))
        rows.append((item, "b", "Y", "X", "right" if src == "X" else "left"))
    rows.append((10, "a", "X", "Y", "tie"))
    rows.append((10, "b", "X", "Y", "left"))
    alpha = pref.annotator_agreement(rows)["value"]
    labels = ["X", "Y", "tie"]
    data = np.array([[labels.index("tie" if c == "tie" else (l if c == "left" else r)) for i, w, l, r, c in rows
                      if w == who] for who in ("a", "b")], dtype=float)
    assert alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-12)


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(MedevalError, match="'up' is not one of left, right, tie"):
        pref.shares([(1, "a", "X", "Y", "up")])
    with pytest.raises(MedevalError, match="same source"):
        pref.shares([(1, "a", "X", "X", "left")])
    with pytest.raises(MedevalError, match="judged item 1 twice"):
        pref.shares([(1, "a", "X", "Y", "left"), (1, "a", "Y", "X", "left")])
    with pytest.raises(MedevalError, match="no choices"):
        pref.summarise([])
