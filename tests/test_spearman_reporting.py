"""How a Spearman correlation is reported: the exact permutation p-value for small n, no interval at |rho| = 1 (and
the reason wherever the interval would be printed), and one interval formula -- Fisher z with the Bonett-Wright
variance -- for every Spearman in medeval.

Expectations are counted by hand from the definitions: under independence each of the n! pairings of two lists is
equally likely, so for four models ranked identically only the identity and the reversal reach |rho| = 1:
p = 2/24. Bonett & Wright (2000): var(atanh(r_s)) = (1 + r_s^2 / 2) / (n - 3).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from medeval.stats import judge as jd
from medeval.stats.agreement import correlation, read_long, render_summary, summarise
from medeval.stats.agreement.correlations import EXACT_MAX_N, fisher_ci, spearman_exact_p
from medeval.stats.judge.rendering import render


# ---------------------------------------------------------------- exact p-values


@pytest.mark.parametrize("x, y, p", [
    ([1, 2, 3, 4], [10, 20, 30, 40], 2 / 24),          # identity and reversal of 4! = 24 pairings
    ([1, 2, 3, 4], [40, 30, 20, 10], 2 / 24),          # a perfect disagreement: the same two pairings
    ([1, 2, 3], [5, 6, 7], 2 / 6),                     # three models: 1/3 of the pairings are perfect
    ([1, 2, 3, 4, 5], [1, 2, 3, 5, 4], 10 / 120),      # rho = 0.9, counted in the docstring
])
def test_exact_p_by_hand(x, y, p):
    """n = 5, one adjacent swap: D = sum d^2 = 2, rho = 1 - 6D/(n(n^2-1)) = 1 - 12/120 = 0.9. |rho| >= 0.9 needs
    D <= 2 (the identity and the 4 adjacent transpositions: 5 pairings) or D >= 38 (their reversals, D' = 40 - D:
    5 more): p = 10/120."""
    est = correlation(x, y, "spearman")
    assert est.extra["p"] == pytest.approx(p)
    assert est.extra["p_method"] == "exact permutation"


def test_scipy_t_approximation_would_print_zero_at_a_perfect_correlation():
    """What the issue saw: scipy's p for rho = 1 over four models is 0 (t is infinite); medeval's is 2/24."""
    x, y = [1, 2, 3, 4], [2.0, 2.5, 3.9, 4.2]
    assert stats.spearmanr(x, y).pvalue == 0.0
    est = correlation(x, y)
    assert est.value == 1.0 and est.extra["p"] == pytest.approx(1 / 12)


def _brute_p(x, y) -> float:
    """Every pairing, rho by scipy (average ranks for ties): the share reaching the observed |rho|."""
    obs = abs(stats.spearmanr(x, y).statistic)
    hits = [abs(stats.spearmanr(x, [y[i] for i in perm]).statistic) >= obs - 1e-12
            for perm in itertools.permutations(range(len(x)))]
    return sum(hits) / len(hits)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=3, max_size=6))
def test_exact_p_equals_brute_force_with_ties(data):
    """Likert-like scores with ties, 3 to 6 pairs: the same p as enumerating every pairing with scipy's rho."""
    x, y = [a for a, _ in data], [b for _, b in data]
    if len(set(x)) < 2 or len(set(y)) < 2:
        return
    assert spearman_exact_p(x, y) == pytest.approx(_brute_p(x, y), abs=1e-12)


def test_exact_p_equals_scipys_permutation_test():
    """scipy.stats.permutation_test over all 8! pairings (one sample permuted against the other) on untied data:
    its two-sided p (twice the smaller tail; the null of rho is symmetric without ties) equals medeval's."""
    rng = np.random.default_rng(3)
    x = rng.permutation(8).astype(float)
    y = x + rng.normal(0, 2.5, 8)

    def rho(b, axis=-1):
        rb = stats.rankdata(b, axis=-1)
        rx = stats.rankdata(x)
        rb, rx = rb - rb.mean(-1, keepdims=True), rx - rx.mean()
        return (rb * rx).sum(-1) / np.sqrt((rb * rb).sum(-1) * (rx * rx).sum())

    ref = stats.permutation_test((y,), rho, permutation_type="pairings", n_resamples=np.inf, vectorized=True)
    assert correlation(x, y).extra["p"] == pytest.approx(ref.pvalue, rel=1e-9)


def test_above_the_exact_limit_p_is_scipys():
    x = list(range(EXACT_MAX_N + 1))
    y = [1, 0, 2, 4, 3, 5, 7, 6, 9, 8][: len(x)]
    est = correlation(x, y)
    assert est.extra["p"] == pytest.approx(stats.spearmanr(x, y).pvalue, rel=1e-12)
    assert est.extra["p_method"] == "scipy"


# ---------------------------------------------------------------- the interval


def test_bonett_wright_by_hand():
    """r = 0.5, n = 20: z = atanh(0.5) = 0.549306, se = sqrt(1.125 / 17) = 0.257248, z -+ 1.96 se = 0.045108 and
    1.053505, tanh of them 0.04508 and 0.78316 (the constant 1.06/(n-3) would give the narrower 0.0598-0.7774)."""
    (lo, hi), why = fisher_ci(0.5, 20, "spearman")
    assert why is None
    assert (lo, hi) == pytest.approx((0.04508, 0.78316), abs=5e-5)


def test_no_interval_at_a_perfect_correlation_and_the_reason_is_kept():
    est = correlation([1, 2, 3, 4, 5], [3, 5, 8, 9, 12])
    assert est.value == pytest.approx(1.0) and est.ci95 is None
    assert "undefined at |r| = 1" in est.extra["ci_undefined_reason"]
    neg = correlation([1, 2, 3, 4, 5], [11, 9, 7, 5, 3], "pearson")  # y = 13 - 2x
    assert neg.ci95 is None and "|r| = 1" in neg.extra["ci_undefined_reason"]
    small = correlation([1, 2, 3], [1, 3, 2])
    assert small.ci95 is None and "fewer than 4 pairs" in small.extra["ci_undefined_reason"]


def test_one_spearman_interval_everywhere():
    """The same pairs give the same Spearman CI as an agreement statistic, as the judge's overall correlation and
    as a per-criterion correlation -- the formula written out once here."""
    judge = [5, 3, 4, 2, 4, 1, 4, 4, 1, 5, 2, 3]
    human = [4.5, 3.0, 2.5, 4.0, 3.5, 1.0, 4.0, 2.0, 1.5, 5.0, 2.5, 3.0]
    r = stats.spearmanr(judge, human).statistic
    n = len(judge)
    z, se = math.atanh(r), math.sqrt((1 + r * r / 2) / (n - 3))
    want = (math.tanh(z - 1.959963984540054 * se), math.tanh(z + 1.959963984540054 * se))
    assert correlation(judge, human).ci95 == pytest.approx(want, abs=1e-12)
    rows = [{"case": f"c{i // 3}", "model": "ABC"[i % 3], "judge_score": j, "human_score": h}
            for i, (j, h) in enumerate(zip(judge, human))]
    overall = jd.summarise(jd.from_records(rows))["spearman"]
    assert overall["ci95"] == pytest.approx(list(want), abs=1e-12)
    crit = jd.criterion_agreement({"Fluency": dict(enumerate(judge))}, {"fluency": dict(enumerate(human))})[0]
    assert crit.spearman.ci95 == pytest.approx(want, abs=1e-12)
    assert "Bonett-Wright" in crit.spearman.method and "Bonett-Wright" in correlation(judge, human).method


# ---------------------------------------------------------------- where it is printed


def _perfect_rankings():
    """Four models; the judge and the clinicians rank them in the same order (the responses themselves differ)."""
    rows = []
    for case in ("c1", "c2"):
        for model, j, h in (("A", 5, 4.5), ("B", 4, 4.0), ("C", 3, 3.0), ("D", 1, 2.5)):
            rows.append({"case": case, "model": model, "judge_score": j if case == "c1" else j - 0.5,
                         "human_score": h})
    return jd.summarise(jd.from_records(rows))


def test_judge_summary_and_report_say_why_the_ranking_has_no_interval():
    s = _perfect_rankings()
    e = s["ranking"]["spearman"]
    assert e["value"] == 1.0 and e["n"] == 4 and e["ci95"] is None
    assert e["p"] == pytest.approx(2 / 24) and e["p_method"] == "exact permutation"
    assert "undefined at |r| = 1" in e["ci_undefined_reason"]
    md = render(s, "md")
    line = next(x for x in md.splitlines() if x.startswith("| Spearman (model rankings)"))
    assert "| 1.0000 | undefined: the 95% CI is undefined at |r| = 1" in line and "[1.0000, 1.0000]" not in md
    assert "Bonett-Wright" in md and "exact permutation" in md
    csv = render(s, "csv").splitlines()
    assert csv[0].endswith(",undefined_reason,ci95_undefined_reason")
    ranking = next(x for x in csv if x.startswith("ranking_spearman"))
    assert "undefined at |r| = 1" in ranking


def test_agreement_summary_says_why_two_raters_perfect_rho_has_no_interval(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("item,rater,value\n" + "".join(f"{i},a,{v}\n{i},b,{v + 1}\n" for i, v in
                                                      enumerate([1, 2, 3, 4, 5])))
    s = summarise(read_long(str(path)), "interval", n_boot=0)
    assert s["spearman"]["rho"] == pytest.approx(1.0) and s["spearman"]["ci95"] is None
    assert s["spearman"]["p"] == pytest.approx(2 / 120)
    assert "undefined at |r| = 1" in s["spearman"]["ci_undefined_reason"]
    md = render_summary(s, "md")
    assert "| spearman_rho | 1.0000 | undefined: the 95% CI is undefined at |r| = 1" in md
