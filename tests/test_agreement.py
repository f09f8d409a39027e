"""Reference-value tests for ``medeval.stats.agreement``.

Every expected number names its source: a published table (Shrout & Fleiss 1979,
Krippendorff 2011, Wikipedia worked examples), a hand computation shown in the test,
or an outside implementation called live in the test:

* pingouin 0.7.0 ``intraclass_corr`` (with ``pg.options['round.column.CI95'] = None``,
  otherwise its CIs are rounded to 2 dp),
* krippendorff 0.9.0 ``alpha`` (coders x units orientation, level always passed),
* statsmodels 0.15 ``cohens_kappa`` / ``fleiss_kappa`` / ``aggregate_raters``,
* scikit-learn ``cohen_kappa_score``,
* scipy ``spearmanr`` / ``pearsonr`` / ``kendalltau``.

Pitfalls these references have are listed in shared/notes/agreement.md; the tests
work around them (orientation, rounding, label sets, value domains).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import krippendorff
import pingouin as pg
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa as sm_fleiss_kappa

from medeval.stats import agreement as ag
from medeval.core.errors import MedevalError

pg.options["round.column.CI95"] = None  # pingouin rounds CI95 to 2 dp by default

ICC_KEYS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
# pingouin 0.7.0 labels (McGraw & Wong notation) and the 0.5.x labels, both mapped
PG_LABELS = {
    "ICC(1,1)": "ICC1", "ICC(A,1)": "ICC2", "ICC(C,1)": "ICC3",
    "ICC(1,k)": "ICC1k", "ICC(A,k)": "ICC2k", "ICC(C,k)": "ICC3k",
    "ICC1": "ICC1", "ICC2": "ICC2", "ICC3": "ICC3",
    "ICC1k": "ICC1k", "ICC2k": "ICC2k", "ICC3k": "ICC3k",
}
LEVELS = ("nominal", "ordinal", "interval", "ratio")
NAN = np.nan


# ----------------------------------------------------------------------------- helpers


def table(matrix, **kw):
    """RatingTable from an items x raters matrix."""
    return ag.RatingTable.from_matrix(matrix, **kw)


def assert_undefined(est):
    assert est.value is None, f"expected undefined, got value {est.value!r}"
    assert isinstance(est.undefined_reason, str) and est.undefined_reason.strip(), est
    assert est.ci95 is None


def assert_defined(est):
    assert est.value is not None, f"unexpectedly undefined: {est.undefined_reason!r}"
    assert est.undefined_reason is None
    assert isinstance(est.value, float) and math.isfinite(est.value)


def pingouin_icc(matrix, nan_policy="raise"):
    """pingouin 0.7.0 ICC rows keyed ICC1..ICC3k, from an items x raters matrix."""
    m = np.asarray(matrix, float)
    long = pd.DataFrame(
        [(i, j, m[i, j]) for i in range(m.shape[0]) for j in range(m.shape[1])],
        columns=["target", "rater", "score"],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pg.intraclass_corr(long, "target", "rater", "score", nan_policy=nan_policy)
    out = {}
    for _, row in res.iterrows():
        out[PG_LABELS[row["Type"]]] = {
            "ICC": float(row["ICC"]), "F": float(row["F"]), "df1": float(row["df1"]),
            "df2": float(row["df2"]), "p": float(row["pval"]),
            "CI95": (float(row["CI95"][0]), float(row["CI95"][1])),
        }
    assert set(out) == set(ICC_KEYS), f"pingouin labels not mapped: {res['Type'].tolist()}"
    return out


def assert_icc_matches_pingouin(result, ref, tol=1e-9):
    assert set(result) == set(ICC_KEYS)
    for key in ICC_KEYS:
        est, r = result[key], ref[key]
        assert_defined(est)
        assert est.value == pytest.approx(r["ICC"], abs=tol), key
        assert est.ci95 is not None, key
        assert est.ci95[0] == pytest.approx(r["CI95"][0], abs=tol), (key, "CI low")
        assert est.ci95[1] == pytest.approx(r["CI95"][1], abs=tol), (key, "CI high")
        assert est.extra["F"] == pytest.approx(r["F"], rel=tol), (key, "F")
        assert est.extra["df1"] == pytest.approx(r["df1"]), (key, "df1")
        assert est.extra["df2"] == pytest.approx(r["df2"]), (key, "df2")
        assert est.extra["p"] == pytest.approx(r["p"], rel=1e-7, abs=1e-12), (key, "p")


def kalpha(items_by_raters, level, value_domain=None):
    """krippendorff 0.9.0 on an items x raters matrix (it wants coders x units: transpose)."""
    data = np.asarray(items_by_raters, float).T
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=value_domain))


def closed_form_interval_alpha(items_by_raters):
    """Interval alpha, closed form over pairable values (shared/notes/agreement.md):
    alpha = 1 - (n-1) * sum_u[m_u * SS_u / (m_u - 1)] / (n * SS_total)."""
    m = np.asarray(items_by_raters, float)
    rows = [r[~np.isnan(r)] for r in m]
    rows = [r for r in rows if r.size >= 2]
    allv = np.concatenate(rows)
    n = allv.size
    within = sum(r.size * ((r - r.mean()) ** 2).sum() / (r.size - 1) for r in rows)
    total = ((allv - allv.mean()) ** 2).sum()
    return 1 - (n - 1) * within / (n * total)


def random_ratings(seed, n_items, n_raters, levels=5, missing=0.0, agreement=0.6):
    """Ordinal ratings 1..levels with a shared item signal; `missing` share set to NaN."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, levels + 1, size=n_items)
    m = np.empty((n_items, n_raters))
    for j in range(n_raters):
        noise = rng.integers(-1, 2, size=n_items) * (rng.random(n_items) > agreement)
        m[:, j] = np.clip(truth + noise, 1, levels)
    if missing:
        m[rng.random(m.shape) < missing] = NAN
    return m


# ----------------------------------------------------------------------------- data

# Shrout & Fleiss (1979), Psychological Bulletin 86(2), Table 2: 6 targets x 4 judges.
SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float
)

# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", example C:
# 4 coders (rows A-D) x 12 units (columns), '.' = missing.  Printed coders x units,
# so the RatingTable (items = rows) is the TRANSPOSE.
K2011_CODERS_X_UNITS = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],  # A
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],  # B
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],  # C
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],  # D
    ]
)
K2011 = K2011_CODERS_X_UNITS.T  # 12 items x 4 raters

# Wikipedia "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories;
# per-subject category counts. Published kappa = 0.210.
FLEISS_WIKI_COUNTS = np.array(
    [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
)


def counts_to_matrix(counts, categories):
    """Subjects x categories counts -> subjects x raters matrix (rater slot order is
    arbitrary; Fleiss' kappa does not depend on rater identity)."""
    rows = []
    for c in counts:
        rows.append([cat for cat, k in zip(categories, c) for _ in range(int(k))])
    return np.array(rows, float)


# ============================================================================= RatingTable


class TestRatingTable:
    def test_from_matrix_orientation_and_missing(self):
        t = table([[1, 2, None], [3, NAN, 4]], items=["a", "b"], raters=["x", "y", "z"])
        assert list(t.items) == ["a", "b"]
        assert list(t.raters) == ["x", "y", "z"]
        assert t.values.shape == (2, 3)  # rows = items, columns = raters
        assert t.values.dtype.kind == "f"
        assert t.values[0, 1] == 2 and t.values[1, 2] == 4
        assert np.isnan(t.values[0, 2]) and np.isnan(t.values[1, 1])

    def test_from_long_orientation(self):
        rows = [("item1", "r1", 1), ("item1", "r2", 2), ("item2", "r1", 3), ("item3", "r2", 5)]
        t = ag.RatingTable.from_long(rows)
        assert sorted(t.items) == ["item1", "item2", "item3"]
        assert sorted(t.raters) == ["r1", "r2"]
        assert t.values.shape == (3, 2)  # items are rows

        def cell(i, r):
            return t.values[list(t.items).index(i), list(t.raters).index(r)]

        assert cell("item1", "r1") == 1 and cell("item1", "r2") == 2
        assert cell("item2", "r1") == 3 and cell("item3", "r2") == 5
        assert np.isnan(cell("item2", "r2")) and np.isnan(cell("item3", "r1"))  # absent row = missing

    def test_from_long_blank_and_none_are_missing_numeric_strings_parse(self):
        rows = [("i1", "a", "3"), ("i1", "b", ""), ("i2", "a", None), ("i2", "b", " 4.5 "), ("i3", "a", 1), ("i3", "b", "  ")]
        t = ag.RatingTable.from_long(rows)

        def cell(i, r):
            return t.values[list(t.items).index(i), list(t.raters).index(r)]

        assert cell("i1", "a") == 3.0
        assert np.isnan(cell("i1", "b"))
        assert np.isnan(cell("i2", "a"))
        assert cell("i2", "b") == 4.5
        assert np.isnan(cell("i3", "b"))

    def test_from_long_duplicate_pair_raises(self):
        # pingouin silently averages duplicated (target, rater) rows (notes); we must refuse.
        rows = [("i1", "a", 1), ("i1", "b", 2), ("i1", "a", 3)]
        with pytest.raises(MedevalError, match="twice"):
            ag.RatingTable.from_long(rows)

    def test_from_long_duplicate_pair_raises_even_with_same_value(self):
        with pytest.raises(MedevalError, match="twice"):
            ag.RatingTable.from_long([("i1", "a", 1), ("i1", "a", 1)])

    def test_from_long_non_numeric_raises(self):
        with pytest.raises(MedevalError, match="not a number"):
            ag.RatingTable.from_long([("i1", "a", 1), ("i1", "b", "severe")])

    def test_estimate_is_frozen(self):
        est = ag.percent_agreement(table([[1, 1], [1, 2]]))
        assert dataclasses.is_dataclass(est)
        with pytest.raises(dataclasses.FrozenInstanceError):
            est.value = 0.0


# ============================================================================= ICC


class TestICC:
    def test_shrout_fleiss_published_two_decimals(self):
        """Shrout & Fleiss (1979) Table 4: ICC(1,1)=.17 ICC(2,1)=.29 ICC(3,1)=.71
        ICC(1,4)=.44 ICC(2,4)=.62 ICC(3,4)=.91."""
        res = ag.icc(table(SHROUT_FLEISS))
        published = {"ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62, "ICC3k": 0.91}
        for key, val in published.items():
            assert round(res[key].value, 2) == val, key
            assert res[key].name == key

    def test_shrout_fleiss_full_precision(self):
        """Values, F, df, p and CI95 from pingouin 0.7.0 (CI95 unrounded) on Table 2,
        hard-coded so that a change in pingouin cannot move the target silently."""
        expected = {
            # key: (ICC, F, df1, df2, p, CI low, CI high)
            "ICC1": (0.1657417684054755, 1.7946784922394683, 5, 18, 0.16476880834463953, -0.13293232487475096, 0.722560062328121),
            "ICC2": (0.28976377952755916, 11.027247956403299, 5, 15, 0.000134566516484335, 0.018786513374712058, 0.7610843696489527),
            "ICC3": (0.7148407148407154, 11.027247956403299, 5, 15, 0.000134566516484335, 0.34246476503392614, 0.9458582599553597),
            "ICC1k": (0.44279713367926876, 1.7946784922394683, 5, 18, 0.16476880834463953, -0.8844421552381196, 0.9124154203407755),
            "ICC2k": (0.6200505475989893, 11.027247956403299, 5, 15, 0.000134566516484335, 0.07113681530250353, 0.9272320401677219),
            "ICC3k": (0.9093155423770697, 11.027247956403299, 5, 15, 0.000134566516484335, 0.6756747138163055, 0.9858916781690623),
        }
        res = ag.icc(table(SHROUT_FLEISS))
        assert set(res) == set(ICC_KEYS)
        for key, (v, F, df1, df2, p, lo, hi) in expected.items():
            est = res[key]
            assert_defined(est)
            assert est.value == pytest.approx(v, abs=1e-9), key
            assert est.extra["F"] == pytest.approx(F, rel=1e-9), key
            assert est.extra["df1"] == df1 and est.extra["df2"] == df2, key
            assert est.extra["p"] == pytest.approx(p, rel=1e-7), key
            assert est.ci95[0] == pytest.approx(lo, abs=1e-9), key
            assert est.ci95[1] == pytest.approx(hi, abs=1e-9), key
            assert est.n_items == 6 and est.n_raters == 4 and est.n_pairable == 6
            assert isinstance(est.method, str) and est.method.strip()

    def test_shrout_fleiss_live_pingouin(self):
        assert_icc_matches_pingouin(ag.icc(table(SHROUT_FLEISS)), pingouin_icc(SHROUT_FLEISS))

    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_random_40x5_against_pingouin(self, seed):
        """40 items x 5 raters: item effect + rater bias + noise (seeded), vs pingouin 0.7.0."""
        rng = np.random.default_rng(seed)
        m = rng.normal(0, 2, (40, 1)) + rng.normal(0, 0.7, (1, 5)) + rng.normal(0, 1, (40, 5))
        m = np.round(m, 2)
        assert_icc_matches_pingouin(ag.icc(table(m)), pingouin_icc(m))

    def test_missing_listwise_equals_pingouin_omit(self):
        """Listwise deletion == pingouin nan_policy='omit' (drops targets with any NaN)."""
        rng = np.random.default_rng(7)
        m = rng.normal(0, 2, (40, 1)) + rng.normal(0, 0.5, (1, 5)) + rng.normal(0, 1, (40, 5))
        m = np.round(m, 2)
        holes = [(0, 0), (3, 2), (3, 4), (10, 1), (17, 3), (25, 0), (39, 4)]  # 6 distinct items
        for i, j in holes:
            m[i, j] = NAN
        dropped = len({i for i, _ in holes})
        res = ag.icc(table(m))
        assert_icc_matches_pingouin(res, pingouin_icc(m, nan_policy="omit"))
        for key in ICC_KEYS:
            est = res[key]
            assert est.n_items == 40
            assert est.n_raters == 5
            assert est.n_pairable == 40 - dropped
            assert str(dropped) in est.missing, est.missing  # reports the dropped count

    def test_missing_equals_icc_of_complete_rows(self):
        m = SHROUT_FLEISS.copy()
        extra = np.array([[5, NAN, 4, 3]])
        res = ag.icc(table(np.vstack([m, extra])))
        ref = ag.icc(table(m))
        for key in ICC_KEYS:
            assert res[key].value == pytest.approx(ref[key].value, abs=1e-12)
            assert "1" in res[key].missing

    def test_single_rater_undefined(self):
        res = ag.icc(table([[1.0], [2.0], [3.0]]))
        for key in ICC_KEYS:
            assert_undefined(res[key])

    def test_all_values_identical_undefined(self):
        # pingouin gives NaN + RuntimeWarning here (notes); we must say "undefined".
        res = ag.icc(table(np.full((5, 3), 4.0)))
        for key in ICC_KEYS:
            assert_undefined(res[key])

    def test_fewer_than_two_complete_items_undefined(self):
        res = ag.icc(table([[1, 2, 3], [NAN, 2, 3], [4, NAN, 4]]))
        for key in ICC_KEYS:
            assert_undefined(res[key])


    def test_identical_raters_icc_is_one(self):
        """Perfect agreement (every rater gives each item the same score, items differ):
        every ICC form is 1 (pingouin 0.7.0: ICC 1.0 and CI95 [1.0, 1.0] for all six
        forms). This is a defined value, not an undefined case."""
        res = ag.icc(table([[1, 1], [2, 2], [4, 4]]))
        for key in ICC_KEYS:
            est = res[key]
            assert est.value == pytest.approx(1.0, abs=1e-12), (key, est.undefined_reason)
            if est.ci95 is not None:
                assert all(math.isfinite(c) for c in est.ci95), (key, est.ci95)
                assert est.ci95[0] <= 1.0 + 1e-12 and est.ci95[1] >= 1.0 - 1e-12, (key, est.ci95)

    def test_perfect_consistency_offset_no_nan(self):
        """Rater 2 = rater 1 + 1 (zero residual variance, MSE = 0). Values from pingouin
        0.7.0 (= 25/31, 14/17, 1, 25/28, 28/31, 1 by hand from the mean squares).
        pingouin returns CI95 [nan, nan] for ICC(A,1), ICC(C,1), ICC(A,k); the contract
        forbids a silent NaN: a CI is either None or two finite numbers around the value."""
        expected = {"ICC1": 25 / 31, "ICC2": 14 / 17, "ICC3": 1.0, "ICC1k": 25 / 28, "ICC2k": 28 / 31, "ICC3k": 1.0}
        res = ag.icc(table([[1, 2], [2, 3], [4, 5]]))
        for key, v in expected.items():
            est = res[key]
            assert est.value == pytest.approx(v, abs=1e-12), key
            if est.ci95 is not None:
                lo, hi = est.ci95
                assert math.isfinite(lo) and math.isfinite(hi), (key, est.ci95)
                assert lo <= est.value + 1e-12 and hi >= est.value - 1e-12, (key, est.ci95)

    def test_icc2k_zero_denominator_undefined(self):
        """[[1,2],[1,1],[2,1]]: MSR = 1/6, MSC = 0, MSE = 1/2 (by hand), so the ICC(2,k)
        denominator MSR + (MSC - MSE)/n = 1/6 - 1/6 = 0: ICC2k is undefined. (pingouin
        0.7.0 prints -1.2e16 with CI95 [3.05, 0.947], lower > upper; not usable.) The other
        five forms are defined and equal pingouin; ICC1 = -1/3, ICC2 = -1, ICC3 = -1/2,
        ICC1k = -1, ICC3k = -2 by hand."""
        m = np.array([[1, 2], [1, 1], [2, 1]], float)
        res = ag.icc(table(m))
        assert_undefined(res["ICC2k"])
        ref = pingouin_icc(m)
        by_hand = {"ICC1": -1 / 3, "ICC2": -1.0, "ICC3": -0.5, "ICC1k": -1.0, "ICC3k": -2.0}
        for key, v in by_hand.items():
            assert res[key].value == pytest.approx(v, abs=1e-12), key
            assert res[key].value == pytest.approx(ref[key]["ICC"], abs=1e-9), key
            assert res[key].ci95[0] == pytest.approx(ref[key]["CI95"][0], abs=1e-9), key
            assert res[key].ci95[1] == pytest.approx(ref[key]["CI95"][1], abs=1e-9), key

    def test_scale_and_shift_invariance(self):
        """ICC is invariant to a linear change of units (x -> 0.1 x + 3): Table 2 data."""
        a, b = ag.icc(table(SHROUT_FLEISS)), ag.icc(table(SHROUT_FLEISS * 0.1 + 3))
        for key in ICC_KEYS:
            assert b[key].value == pytest.approx(a[key].value, abs=1e-9), key
            assert b[key].ci95[0] == pytest.approx(a[key].ci95[0], abs=1e-9), key
            assert b[key].ci95[1] == pytest.approx(a[key].ci95[1], abs=1e-9), key

    def test_equal_item_means_undefined_despite_rounding(self):
        """All items have the same mean (no between-item variance): undefined. In tenths,
        0.1 + 0.2 != 0.3 in floating point, so MS(rows) comes out ~1e-32 instead of 0;
        that must not turn into ICC1k ~ -1e31 or ICC2k = 12 (pingouin 0.7.0 prints -7.9e30 and 12)."""
        ints = np.array([[1, 2], [2, 1], [3, 0]], float)
        for m in (ints, ints * 0.1):
            res = ag.icc(table(m))
            for key in ICC_KEYS:
                assert_undefined(res[key])


# ============================================================================= Krippendorff's alpha


class TestKrippendorff:
    @pytest.mark.parametrize(
        "level, published",
        [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)],
    )
    def test_krippendorff_2011_published(self, level, published):
        """Krippendorff (2011), pp. 3-7: nominal .743, ordinal .815, interval .849."""
        est = ag.krippendorff_alpha(table(K2011), level=level, n_boot=0)
        assert round(est.value, 3) == published
        assert est.name == "krippendorff_alpha"
        assert est.n_items == 12
        assert est.n_raters == 4
        assert est.n_pairable == 11  # unit 12 has a single value (coder B)
        assert est.ci95 is None  # n_boot=0

    @pytest.mark.parametrize(
        "level, expected",
        # krippendorff 0.9.0 on the coders x units array (full precision)
        [("nominal", 0.743421052631579), ("ordinal", 0.8153875037548814),
         ("interval", 0.8491071428571428), ("ratio", 0.7974027747116121)],
    )
    def test_krippendorff_2011_full_precision(self, level, expected):
        est = ag.krippendorff_alpha(table(K2011), level=level, n_boot=0)
        assert est.value == pytest.approx(expected, abs=1e-9)
        assert est.value == pytest.approx(
            float(krippendorff.alpha(reliability_data=K2011_CODERS_X_UNITS, level_of_measurement=level)), abs=1e-9
        )

    def test_orientation_transposed_gives_other_number(self):
        """Notes: feeding coders x units as items gives -0.055 (package on the transpose)."""
        wrong = ag.krippendorff_alpha(table(K2011_CODERS_X_UNITS), level="nominal", n_boot=0)
        assert wrong.value == pytest.approx(-0.05485893416927867, abs=1e-9)

    @pytest.mark.parametrize("seed", range(6))
    @pytest.mark.parametrize("level", LEVELS)
    def test_random_with_missing_against_package(self, seed, level):
        m = random_ratings(seed, n_items=30, n_raters=4, levels=5, missing=0.25)
        est = ag.krippendorff_alpha(table(m), level=level, n_boot=0)
        assert est.value == pytest.approx(kalpha(m, level), abs=1e-9)
        pairable = int((np.sum(~np.isnan(m), axis=1) >= 2).sum())
        assert est.n_pairable == pairable
        assert est.n_items == 30

    @pytest.mark.parametrize("level", LEVELS)
    def test_declared_categories_against_package_value_domain(self, level):
        m = random_ratings(11, n_items=25, n_raters=3, levels=5, missing=0.1)
        cats = [1, 2, 3, 4, 5, 6, 7]  # 6 and 7 never used
        est = ag.krippendorff_alpha(table(m), level=level, categories=cats, n_boot=0)
        assert est.value == pytest.approx(kalpha(m, level, value_domain=cats), abs=1e-9)

    def test_continuous_interval_small_equals_package(self):
        """5 raters x 30 items of floats (150 distinct values: the package's
        N x V x V tensor is still small)."""
        rng = np.random.default_rng(3)
        m = rng.normal(50, 10, (30, 1)) + rng.normal(0, 4, (30, 5))
        m[rng.random(m.shape) < 0.1] = NAN
        est = ag.krippendorff_alpha(table(m), level="interval", n_boot=0)
        ref = kalpha(m, "interval")
        assert closed_form_interval_alpha(m) == pytest.approx(ref, abs=1e-9)  # the formula used below
        assert est.value == pytest.approx(ref, abs=1e-9)

    def test_continuous_interval_300_items_closed_form(self):
        """5 raters x 300 items of floats: the package would need 1500^2 x 300 float64
        (about 5 GB), so the reference is the closed form checked against it above."""
        rng = np.random.default_rng(4)
        m = rng.normal(0, 1, (300, 1)) + rng.normal(0, 0.5, (300, 5))
        m[rng.random(m.shape) < 0.05] = NAN
        est = ag.krippendorff_alpha(table(m), level="interval", n_boot=0)
        assert est.value == pytest.approx(closed_form_interval_alpha(m), abs=1e-9)

    @pytest.mark.parametrize("offset", [1e4, 1e6])
    def test_interval_alpha_shift_invariant_large_offset(self, offset):
        """Interval alpha depends on differences only, so adding a constant cannot change
        it. krippendorff 0.9.0 on the shifted data agrees with the unshifted value to
        < 1e-11; a one-pass sum-of-squares formula loses the digits (catastrophic
        cancellation)."""
        rng = np.random.default_rng(0)
        m = rng.normal(0, 1, (30, 1)) + rng.normal(0, 0.5, (30, 4))
        base = kalpha(m, "interval")
        ref = kalpha(m + offset, "interval")
        assert ref == pytest.approx(base, abs=1e-10)
        est = ag.krippendorff_alpha(table(m + offset), level="interval", n_boot=0)
        assert_defined(est)
        assert est.value == pytest.approx(ref, abs=1e-9)

    def test_gap_in_value_domain(self):
        """Notes: recoding 5 -> 9 leaves ordinal alpha at 0.8154 (and passing 1..9 as the
        domain too); interval moves from 0.849 to 0.947 (krippendorff 0.9.0)."""
        recoded = K2011.copy()
        recoded[recoded == 5] = 9
        ordinal = ag.krippendorff_alpha(table(recoded), level="ordinal", n_boot=0)
        assert ordinal.value == pytest.approx(0.8153875037548814, abs=1e-9)
        ordinal_dom = ag.krippendorff_alpha(table(K2011), level="ordinal", categories=list(range(1, 10)), n_boot=0)
        assert ordinal_dom.value == pytest.approx(0.8153875037548814, abs=1e-9)
        interval = ag.krippendorff_alpha(table(recoded), level="interval", n_boot=0)
        assert interval.value == pytest.approx(0.9473192019950125, abs=1e-9)
        assert interval.value == pytest.approx(kalpha(recoded, "interval"), abs=1e-9)
        interval_dom = ag.krippendorff_alpha(table(K2011), level="interval", categories=list(range(1, 10)), n_boot=0)
        assert interval_dom.value == pytest.approx(0.8491071428571428, abs=1e-9)
        ratio = ag.krippendorff_alpha(table(recoded), level="ratio", n_boot=0)
        assert ratio.value == pytest.approx(0.8378882119224171, abs=1e-9)
        nominal = ag.krippendorff_alpha(table(recoded), level="nominal", n_boot=0)
        assert nominal.value == pytest.approx(0.743421052631579, abs=1e-9)

    def test_value_only_in_single_coded_unit_is_excluded(self):
        """Krippendorff (2011): unit 12 (only coder B, value 3) does not count. Changing
        that lone value to an otherwise unused 7 leaves every level unchanged."""
        m = K2011.copy()
        m[11, 1] = 7
        for level in LEVELS:
            a = ag.krippendorff_alpha(table(m), level=level, n_boot=0).value
            b = ag.krippendorff_alpha(table(K2011), level=level, n_boot=0).value
            assert a == pytest.approx(b, abs=1e-12), level

    def test_bootstrap_seeded_reproducible(self):
        t = table(K2011)
        a = ag.krippendorff_alpha(t, level="nominal", n_boot=50, rng=123)
        b = ag.krippendorff_alpha(t, level="nominal", n_boot=50, rng=123)
        assert a.ci95 is not None and a.ci95 == b.ci95
        c = ag.krippendorff_alpha(t, level="nominal", n_boot=50, rng=np.random.default_rng(5))
        d = ag.krippendorff_alpha(t, level="nominal", n_boot=50, rng=np.random.default_rng(5))
        assert c.ci95 == d.ci95
        assert a.value == c.value  # the point estimate does not depend on the bootstrap

    def test_bootstrap_ci_contains_estimate(self):
        """The one test with a full-size bootstrap (B = 1000, percentile over items)."""
        m = random_ratings(21, n_items=60, n_raters=3, levels=5, missing=0.1, agreement=0.7)
        est = ag.krippendorff_alpha(table(m), level="ordinal", n_boot=1000, rng=0)
        assert_defined(est)
        lo, hi = est.ci95
        assert lo < est.value < hi
        assert -1.0 <= lo and hi <= 1.0
        assert isinstance(est.method, str) and est.method.strip()

    def test_n_boot_zero_no_ci(self):
        est = ag.krippendorff_alpha(table(K2011), level="interval", n_boot=0)
        assert_defined(est)
        assert est.ci95 is None

    def test_identical_raters_alpha_one(self):
        col = np.array([1, 2, 3, 4, 2, NAN, 3], float)
        m = np.column_stack([col, col, col])
        for level in LEVELS:
            assert ag.krippendorff_alpha(table(m), level=level, n_boot=0).value == pytest.approx(1.0, abs=1e-12)

    def test_all_values_identical_undefined(self):
        # krippendorff raises ValueError here (notes): we must return "undefined", not 1.0
        m = np.full((6, 3), 2.0)
        m[0, 0] = NAN
        for level in LEVELS:
            assert_undefined(ag.krippendorff_alpha(table(m), level=level, n_boot=0))

    def test_single_rater_undefined(self):
        assert_undefined(ag.krippendorff_alpha(table([[1.0], [2.0], [3.0]]), level="nominal", n_boot=0))

    def test_nothing_pairable_undefined(self):
        m = [[1, NAN], [NAN, 2], [3, NAN], [NAN, 1]]
        est = ag.krippendorff_alpha(table(m), level="nominal", n_boot=0)
        assert_undefined(est)
        assert est.n_pairable == 0

    def test_negative_alpha_not_clipped(self):
        """Systematic disagreement: package gives a negative alpha; it must not be clipped."""
        m = np.array([[1, 2], [2, 1], [1, 2], [2, 1], [1, 2]], float)
        est = ag.krippendorff_alpha(table(m), level="nominal", n_boot=0)
        ref = kalpha(m, "nominal")
        assert ref < 0
        assert est.value == pytest.approx(ref, abs=1e-12)

    def test_prevalence_paradox_zero(self):
        """Notes: 21 of 22 values the same gives alpha = 0 (package agrees)."""
        m = np.ones((11, 2))
        m[10, 1] = 2
        est = ag.krippendorff_alpha(table(m), level="nominal", n_boot=0)
        assert est.value == pytest.approx(kalpha(m, "nominal"), abs=1e-12)
        assert est.value == pytest.approx(0.0, abs=1e-12)


# ============================================================================= Cohen's kappa


def cohen_pair(a, b):
    return table(np.column_stack([np.asarray(a, float), np.asarray(b, float)]))


def contingency(a, b, cats):
    t = np.zeros((len(cats), len(cats)))
    for x, y in zip(a, b):
        t[cats.index(x), cats.index(y)] += 1
    return t


class TestCohenKappa:
    def test_wikipedia_2x2(self):
        """Wikipedia "Cohen's kappa": 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no:
        p_o = 0.7, p_e = 0.5, kappa = 0.4."""
        a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
        b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
        est = ag.cohen_kappa(cohen_pair(a, b))
        assert est.value == pytest.approx(0.4, abs=1e-12)
        assert est.name == "cohen_kappa"
        assert est.n_items == 50 and est.n_raters == 2 and est.n_pairable == 50

    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_unweighted_against_sklearn_and_statsmodels(self, seed):
        m = random_ratings(seed, n_items=50, n_raters=2, levels=4)
        a, b = m[:, 0].astype(int), m[:, 1].astype(int)
        est = ag.cohen_kappa(table(m))
        assert est.value == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        cats = sorted(set(a) | set(b))
        assert est.value == pytest.approx(cohens_kappa(contingency(list(a), list(b), cats), return_results=False), abs=1e-12)

    @pytest.mark.parametrize("weights", ["linear", "quadratic"])
    @pytest.mark.parametrize("seed", [0, 1])
    def test_weighted_observed_levels_against_sklearn(self, weights, seed):
        m = random_ratings(seed + 10, n_items=60, n_raters=2, levels=5)
        a, b = m[:, 0].astype(int), m[:, 1].astype(int)
        est = ag.cohen_kappa(table(m), weights=weights)
        assert est.value == pytest.approx(cohen_kappa_score(a, b, weights=weights), abs=1e-12)

    @pytest.mark.parametrize("weights", ["linear", "quadratic"])
    def test_weighted_declared_categories_against_sklearn_and_statsmodels(self, weights):
        m = random_ratings(31, n_items=60, n_raters=2, levels=5)
        a, b = list(m[:, 0].astype(int)), list(m[:, 1].astype(int))
        cats = [1, 2, 3, 4, 5]
        est = ag.cohen_kappa(table(m), weights=weights, categories=cats)
        assert est.value == pytest.approx(cohen_kappa_score(a, b, weights=weights, labels=cats), abs=1e-12)
        assert est.value == pytest.approx(cohens_kappa(contingency(a, b, cats), wt=weights, return_results=False), abs=1e-12)

    @pytest.mark.parametrize("weights", ["linear", "quadratic"])
    def test_unused_declared_category_changes_weighted_kappa(self, weights):
        """Notes (irr anxiety raters 2/3: .2520 observed vs .2298 on 1-6): a declared but
        unused category (5) changes the weights. sklearn with labels=[1..6] and statsmodels
        on the 6x6 table are the reference for the declared scale."""
        rng = np.random.default_rng(1)
        a = rng.choice([1, 2, 3, 4, 6], 60)
        b = np.clip(a + rng.integers(-1, 2, 60), 1, 6)
        b[b == 5] = 6
        assert 5 not in set(a) | set(b)
        cats = [1, 2, 3, 4, 5, 6]
        declared = ag.cohen_kappa(cohen_pair(a, b), weights=weights, categories=cats)
        observed = ag.cohen_kappa(cohen_pair(a, b), weights=weights)
        ref_declared = cohen_kappa_score(a, b, weights=weights, labels=cats)
        ref_observed = cohen_kappa_score(a, b, weights=weights)
        assert abs(ref_declared - ref_observed) > 0.01  # the reference values differ
        assert declared.value == pytest.approx(ref_declared, abs=1e-12)
        assert declared.value == pytest.approx(
            cohens_kappa(contingency(list(a), list(b), cats), wt=weights, return_results=False), abs=1e-12
        )
        assert observed.value == pytest.approx(ref_observed, abs=1e-12)
        assert declared.value != pytest.approx(observed.value, abs=1e-6)

    def test_unused_category_does_not_change_unweighted(self):
        a = [1, 2, 3, 4, 6, 1, 2, 3]
        b = [1, 2, 4, 4, 6, 2, 2, 3]
        x = ag.cohen_kappa(cohen_pair(a, b), categories=[1, 2, 3, 4, 5, 6]).value
        y = ag.cohen_kappa(cohen_pair(a, b)).value
        assert x == pytest.approx(y, abs=1e-12)
        assert x == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)

    def test_missing_pairs_dropped(self):
        a = np.array([1, 2, 3, 1, 2, NAN, 3, 1, 2, 3])
        b = np.array([1, 2, 2, 1, NAN, 2, 3, 1, 3, 3])
        est = ag.cohen_kappa(cohen_pair(a, b))
        keep = ~np.isnan(a) & ~np.isnan(b)
        assert est.value == pytest.approx(cohen_kappa_score(a[keep].astype(int), b[keep].astype(int)), abs=1e-12)
        assert est.n_items == 10 and est.n_pairable == 8

    def test_both_raters_constant_same_category_undefined(self):
        # p_e = 1: kappa = 0/0 (sklearn returns nan); must be undefined, not 1.0
        assert_undefined(ag.cohen_kappa(cohen_pair([2, 2, 2, 2], [2, 2, 2, 2])))

    def test_not_two_raters(self):
        """Exactly 2 raters: 3 raters must either raise MedevalError or be undefined."""
        m = [[1, 2, 1], [2, 2, 2], [1, 1, 1]]
        try:
            est = ag.cohen_kappa(table(m))
        except MedevalError:
            return
        assert_undefined(est)


# ============================================================================= Fleiss' kappa


class TestFleissKappa:
    def test_wikipedia_worked_example(self):
        """Wikipedia "Fleiss' kappa": 10 subjects x 14 raters x 5 categories, kappa = 0.210;
        statsmodels fleiss_kappa on the same counts gives 0.20993070442195522."""
        m = counts_to_matrix(FLEISS_WIKI_COUNTS, [1, 2, 3, 4, 5])
        assert m.shape == (10, 14)
        est = ag.fleiss_kappa(table(m))
        assert round(est.value, 3) == 0.210
        assert est.value == pytest.approx(0.20993070442195522, abs=1e-12)
        assert est.value == pytest.approx(sm_fleiss_kappa(FLEISS_WIKI_COUNTS), abs=1e-12)
        assert est.n_items == 10 and est.n_raters == 14

    def test_rater_slots_do_not_matter(self):
        m = counts_to_matrix(FLEISS_WIKI_COUNTS, [1, 2, 3, 4, 5])
        rng = np.random.default_rng(0)
        shuffled = np.array([rng.permutation(r) for r in m])
        assert ag.fleiss_kappa(table(shuffled)).value == pytest.approx(0.20993070442195522, abs=1e-12)

    @pytest.mark.parametrize("seed", [0, 1, 2, 3])
    def test_random_against_statsmodels(self, seed):
        m = random_ratings(seed + 40, n_items=30, n_raters=6, levels=4, agreement=0.5)
        counts, _ = aggregate_raters(m.astype(int))
        est = ag.fleiss_kappa(table(m))
        assert est.value == pytest.approx(sm_fleiss_kappa(counts), abs=1e-12)

    def test_declared_unused_category_no_change(self):
        m = random_ratings(50, n_items=20, n_raters=5, levels=3)
        counts, _ = aggregate_raters(m.astype(int))
        est = ag.fleiss_kappa(table(m), categories=[1, 2, 3, 4, 5])
        assert est.value == pytest.approx(sm_fleiss_kappa(counts), abs=1e-12)

    def test_missing_undefined(self):
        m = counts_to_matrix(FLEISS_WIKI_COUNTS, [1, 2, 3, 4, 5])
        m[3, 5] = NAN
        assert_undefined(ag.fleiss_kappa(table(m)))

    def test_all_same_category_undefined(self):
        assert_undefined(ag.fleiss_kappa(table(np.full((5, 4), 3.0))))


# ============================================================================= percent agreement


class TestPercentAgreement:
    def test_two_raters(self):
        """Hand: 3 of 4 items agree -> 0.75."""
        est = ag.percent_agreement(table([[1, 1], [2, 2], [3, 3], [4, 5]]))
        assert est.value == pytest.approx(0.75)
        assert est.n_pairable == 4

    def test_three_raters_with_missing(self):
        """Hand: item1 (1,1,1): 3/3 pairs agree; item2 (1,1,2): 1/3; item3 (1,.,1): 1/1;
        item4 (2,.,.) not pairable. Mean over pairable items = (1 + 1/3 + 1) / 3 = 7/9."""
        m = [[1, 1, 1], [1, 1, 2], [1, NAN, 1], [2, NAN, NAN]]
        est = ag.percent_agreement(table(m))
        assert est.value == pytest.approx(7 / 9, abs=1e-12)
        assert est.n_items == 4 and est.n_pairable == 3 and est.n_raters == 3

    def test_four_raters_pairs(self):
        """Hand: (1,1,2,2): 2 of 6 pairs agree; (3,3,3,1): 3 of 6 -> mean 5/12."""
        est = ag.percent_agreement(table([[1, 1, 2, 2], [3, 3, 3, 1]]))
        assert est.value == pytest.approx(5 / 12, abs=1e-12)

    def test_nothing_pairable_undefined(self):
        est = ag.percent_agreement(table([[1, NAN], [NAN, 2]]))
        assert_undefined(est)
        assert est.n_pairable == 0


# ============================================================================= correlations


XS = np.array([86, 97, 99, 100, 101, 103, 106, 110, 112, 113], float)
YS = np.array([2, 20, 28, 27, 50, 29, 7, 17, 6, 12], float)  # Wikipedia "Spearman's rank" IQ / TV hours
LIKERT_X = np.array([1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 1, 2, 3, 4, 5], float)
LIKERT_Y = np.array([1, 1, 2, 3, 2, 4, 4, 5, 5, 4, 2, 2, 3, 3, 5], float)


def _spearman_rows(a, b):
    """Spearman's rho of each row pair (untied data: Pearson of the ranks), for scipy's vectorised permutation test."""
    ra, rb = stats.rankdata(a, axis=-1), stats.rankdata(b, axis=-1)
    ra, rb = ra - ra.mean(-1, keepdims=True), rb - rb.mean(-1, keepdims=True)
    return (ra * rb).sum(-1) / np.sqrt((ra * ra).sum(-1) * (rb * rb).sum(-1))


class TestCorrelation:
    @pytest.mark.parametrize("x, y", [(XS, YS), (LIKERT_X, LIKERT_Y)])
    @pytest.mark.parametrize(
        "method, ref",
        [("spearman", stats.spearmanr), ("pearson", stats.pearsonr), ("kendall", stats.kendalltau)],
    )
    def test_against_scipy(self, x, y, method, ref):
        est = ag.correlation(x, y, method=method)
        r = ref(x, y)
        assert est.value == pytest.approx(float(r[0]), abs=1e-12)
        assert est.extra["p"] == pytest.approx(float(r[1]), rel=1e-9, abs=1e-15)
        assert est.n_pairable == len(x)
        lo, hi = est.ci95
        assert -1 <= lo < est.value < hi <= 1

    def test_wikipedia_spearman_iq_tv(self):
        """Wikipedia "Spearman's rank correlation coefficient": rho = -29/165 = -0.175757...;
        t-approximation p (scipy) 0.6272 (notes, not the page's 0.6864)."""
        est = ag.correlation(XS, YS, method="spearman")
        assert est.value == pytest.approx(-29 / 165, abs=1e-12)
        assert est.extra["p"] == pytest.approx(0.6272, abs=5e-5)

    def test_default_is_spearman(self):
        assert ag.correlation(LIKERT_X, LIKERT_Y).value == pytest.approx(stats.spearmanr(LIKERT_X, LIKERT_Y)[0], abs=1e-12)

    def test_pearson_fisher_z_ci_by_hand(self):
        """CI = tanh(atanh(r) -/+ z_.975 / sqrt(n - 3)) (tolerance allows 1.96 for z_.975)."""
        r = float(stats.pearsonr(XS, YS)[0])
        n = len(XS)
        z, half = math.atanh(r), stats.norm.ppf(0.975) / math.sqrt(n - 3)
        est = ag.correlation(XS, YS, method="pearson")
        assert est.ci95[0] == pytest.approx(math.tanh(z - half), abs=1e-4)
        assert est.ci95[1] == pytest.approx(math.tanh(z + half), abs=1e-4)

    @pytest.mark.parametrize("method", ["spearman", "pearson", "kendall"])
    def test_nan_pairs_dropped(self, method):
        x = np.array([1, 2, NAN, 4, 5, 6, 7, 8, 9, 3], float)
        y = np.array([2, 1, 3, NAN, 6, 5, 8, 7, NAN, 4], float)
        keep = ~np.isnan(x) & ~np.isnan(y)
        ref = {"spearman": stats.spearmanr, "pearson": stats.pearsonr, "kendall": stats.kendalltau}[method](x[keep], y[keep])
        est = ag.correlation(x, y, method=method)
        assert est.value == pytest.approx(float(ref[0]), abs=1e-12)
        if method == "spearman":  # 7 pairs: the exact permutation p-value (the data have no ties: scipy's agrees)
            # one sample permuted against the other held fixed: all 7! pairings
            exact = stats.permutation_test((y[keep],), lambda b, axis=-1: _spearman_rows(x[keep], b),
                                           permutation_type="pairings", n_resamples=np.inf, vectorized=True)
            assert est.extra["p"] == pytest.approx(exact.pvalue, rel=1e-9)
            assert est.extra["p_method"] == "exact permutation"
        else:
            assert est.extra["p"] == pytest.approx(float(ref[1]), rel=1e-9)
        assert est.n_items == 10
        assert est.n_pairable == int(keep.sum()) == 7

    def test_lists_accepted(self):
        assert ag.correlation([1, 2, 3, 4, 5], [5, 6, 7, 8, 7], method="pearson").value == pytest.approx(
            stats.pearsonr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])[0], abs=1e-12
        )

    @pytest.mark.parametrize("method", ["spearman", "pearson", "kendall"])
    def test_constant_input_undefined(self, method):
        # scipy returns nan + ConstantInputWarning (notes)
        assert_undefined(ag.correlation([3, 3, 3, 3, 3], [1, 2, 3, 4, 5], method=method))

    @pytest.mark.parametrize("method", ["spearman", "pearson", "kendall"])
    def test_fewer_than_three_pairs_undefined(self, method):
        est = ag.correlation([1, 2, NAN, 4], [2, 1, 5, NAN], method=method)
        assert_undefined(est)


# ============================================================================= properties (hypothesis)

cell = st.one_of(st.none(), st.integers(1, 4))


@st.composite
def rating_matrices(draw, min_raters=2, max_raters=4):
    n_items = draw(st.integers(2, 8))
    n_raters = draw(st.integers(min_raters, max_raters))
    rows = draw(st.lists(st.lists(cell, min_size=n_raters, max_size=n_raters), min_size=n_items, max_size=n_items))
    return np.array([[NAN if v is None else v for v in r] for r in rows], float)


PROPS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(col=st.lists(cell, min_size=2, max_size=10), k=st.integers(2, 4), level=st.sampled_from(LEVELS))
def test_prop_identical_raters_alpha_is_one(col, k, level):
    v = np.array([NAN if c is None else c for c in col], float)
    m = np.column_stack([v] * k)
    est = ag.krippendorff_alpha(table(m), level=level, n_boot=0)
    if len(set(v[~np.isnan(v)])) >= 2:
        assert est.value == pytest.approx(1.0, abs=1e-12)
    else:
        assert_undefined(est)


@PROPS
@given(m=rating_matrices(), level=st.sampled_from(LEVELS), data=st.data())
def test_prop_alpha_invariant_to_permuting_raters_and_items(m, level, data):
    rows = data.draw(st.permutations(range(m.shape[0])))
    cols = data.draw(st.permutations(range(m.shape[1])))
    a = ag.krippendorff_alpha(table(m), level=level, n_boot=0)
    b = ag.krippendorff_alpha(table(m[np.ix_(rows, cols)]), level=level, n_boot=0)
    if a.value is None:
        assert_undefined(b)
    else:
        assert b.value == pytest.approx(a.value, abs=1e-12)


@PROPS
@given(m=rating_matrices(), level=st.sampled_from(LEVELS))
def test_prop_alpha_equals_package_when_defined(m, level):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = kalpha(m, level)
    except ValueError:  # package refuses: one value in the domain, nothing pairable
        ref = None
    est = ag.krippendorff_alpha(table(m), level=level, n_boot=0)
    if ref is None or not math.isfinite(ref):
        assert_undefined(est)
    else:
        assert est.value == pytest.approx(ref, abs=1e-9)


@PROPS
@given(
    m=st.integers(3, 8).flatmap(
        lambda n: st.integers(2, 4).flatmap(
            lambda k: st.lists(st.lists(st.integers(1, 9), min_size=k, max_size=k), min_size=n, max_size=n)
        )
    ),
    data=st.data(),
)
def test_prop_icc_invariant_to_permuting_items(m, data):
    m = np.array(m, float)
    perm = data.draw(st.permutations(range(m.shape[0])))
    a, b = ag.icc(table(m)), ag.icc(table(m[perm]))
    for key in ICC_KEYS:
        for est in (a[key], b[key]):  # never NaN/inf silently: a finite float or None + reason
            if est.value is None:
                assert_undefined(est)
            else:
                assert math.isfinite(est.value), (key, est.value)
                assert est.value <= 1 + 1e-9, (key, est.value)  # an ICC never exceeds 1
                if est.ci95 is not None:
                    assert all(math.isfinite(c) for c in est.ci95), (key, est.ci95)
                    assert est.ci95[0] <= est.ci95[1] + 1e-12, (key, est.ci95)
        if a[key].value is None:
            assert_undefined(b[key])
        else:
            assert b[key].value == pytest.approx(a[key].value, abs=1e-9), key


@PROPS
@given(
    m=st.integers(3, 8).flatmap(
        lambda n: st.integers(2, 4).flatmap(
            lambda k: st.lists(st.lists(st.integers(1, 9), min_size=k, max_size=k), min_size=n, max_size=n)
        )
    )
)
def test_prop_icc_invariant_to_change_of_units(m):
    """x -> 0.1 x + 3 (e.g. a score rescaled) changes neither definedness nor any value."""
    m = np.array(m, float)
    a, b = ag.icc(table(m)), ag.icc(table(m * 0.1 + 3))
    for key in ICC_KEYS:
        if a[key].value is None:
            assert_undefined(b[key])
        else:
            assert b[key].value == pytest.approx(a[key].value, abs=1e-9), key
