"""Judge vs clinicians (``medeval.stats.judge``, ``python -m medeval judge-agreement``).

Where the expected numbers come from:

* hand counts written out in the comments next to each small table;
* the two worked cases printed in AutoMedEval (seed 002): Table 7 (three
  responses, the annotator's Relevancy / Knowledge Correctness / Fluency and
  AutoMedEval's "Doctor 1: 5 points. Doctor 2: 4 points. Doctor 3: 2 points.")
  and Table 8 (an evaluation the paper calls incorrect, with the reference
  evaluation's scores). The paper prints no accuracy for these single cases;
  the expected values are our hand counts on its data;
* scipy (``spearmanr`` / ``pearsonr``) and pandas (``groupby`` means) called live;
* Hypothesis properties (a judge that is a monotone transform of the
  clinicians agrees perfectly, a reversed judge agrees only on the clinicians' ties, ...).
"""

from __future__ import annotations

import io
import json
import math
import statistics
import subprocess
import sys

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from medeval.stats import judge as jd
from medeval.core.errors import InputError, MedevalError
from tests.conftest import ROOT, write


def R(case, model, j, h, n=1):
    return jd.Response(case, model, float(j), float(h), n)


def recs(*rows, rater=False):
    """Records from tuples (case, model, judge, human[, rater])."""
    keys = ["case", "model", "judge_score", "human_score"] + (["rater"] if rater else [])
    return [dict(zip(keys, r)) for r in rows]


def run(*args):
    return subprocess.run([sys.executable, "-m", "medeval", "judge-agreement", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)


# ----------------------------------------------------------------------------- Accuracy_2-tuple


def test_accuracy_2tuple_hand_counted():
    rs = [
        # case c1: judge A5 B3 C4; clinicians A4.5 B3 C2.5
        #   A-B: J A>B, H A>B agree; A-C: J A>C, H A>C agree; B-C: J B<C, H B>C disagree  -> 2/3
        R("c1", "A", 5, 4.5), R("c1", "B", 3, 3), R("c1", "C", 4, 2.5),
        # case c2: judge A2 B4; clinicians A4 B3 -> A-B disagree                              -> 0/1
        R("c2", "A", 2, 4), R("c2", "B", 4, 3),
        # case c3: judge A4 B4 C1; clinicians A4 B2 C1
        #   A-B: judge tie, clinicians A>B -> disagree; A-C agree; B-C agree                -> 2/3
        R("c3", "A", 4, 4), R("c3", "B", 4, 2), R("c3", "C", 1, 1),
    ]
    a = jd.accuracy_2tuple(rs)
    assert (a.n_pairs, a.n_agree) == (7, 4)
    assert a.value == pytest.approx(4 / 7)
    assert (a.n_tied_judge, a.n_tied_clinicians, a.n_tied_both) == (1, 0, 0)
    assert a.undefined_reason is None


@pytest.mark.parametrize("judge, human, agrees", [
    ((3, 3), (4, 4), True),    # tie and tie: agree
    ((3, 3), (4, 5), False),   # judge ties, clinicians do not
    ((3, 4), (4, 4), False),   # clinicians tie, judge does not
    ((3, 4), (1, 2), True),    # same direction, different scales
    ((4, 3), (1, 2), False),   # opposite direction
])
def test_a_tie_agrees_only_with_a_tie(judge, human, agrees):
    rs = [R("c", "A", judge[0], human[0]), R("c", "B", judge[1], human[1])]
    assert jd.accuracy_2tuple(rs).value == (1.0 if agrees else 0.0)


def test_pairs_are_pooled_over_cases_not_averaged_per_case():
    # c1 (4 responses, all in the same order): 6 pairs, 6 agree; c2 (2 responses, reversed): 1 pair, 0 agree.
    # pooled: 6/7 = 0.857; a per-case mean would give (1 + 0) / 2 = 0.5
    rs = [R("c1", m, s, s) for m, s in zip("ABCD", (1, 2, 3, 4))] + [R("c2", "A", 1, 2), R("c2", "B", 2, 1)]
    a = jd.accuracy_2tuple(rs)
    assert (a.n_agree, a.n_pairs) == (6, 7)


def test_means_that_differ_only_by_rounding_tie():
    # 0.1 + 0.2 != 0.3 in floating point; as clinicians' means they are the same score
    rs = jd.from_records(recs(("c", "A", 2, 0.1, "r1"), ("c", "A", 2, 0.2, "r2"),
                              ("c", "B", 2, 0.15, "r1"), ("c", "B", 2, 0.15, "r2"), rater=True)).responses
    assert rs[0].human != rs[1].human  # (0.1+0.2)/2 vs 0.15 differ in the last bit
    a = jd.accuracy_2tuple(rs)
    assert (a.value, a.n_tied_both) == (1.0, 1)


# ----------------------------------------------------------------------------- Accuracy_triple


def test_accuracy_triple_hand_counted():
    rs = [
        # t1: judge 5>4>2, clinicians 4.5>3>1                      -> same order: agree
        R("t1", "A", 5, 4.5), R("t1", "B", 4, 3), R("t1", "C", 2, 1),
        # t2: judge 5>4>2, clinicians 3>4.5>1 (A and B swapped)    -> disagree
        R("t2", "A", 5, 3), R("t2", "B", 4, 4.5), R("t2", "C", 2, 1),
        # t3: judge 3>2=2, clinicians 5>4=4 (same weak order)     -> agree
        R("t3", "A", 3, 5), R("t3", "B", 2, 4), R("t3", "C", 2, 4),
        # t4: judge 3>2>1, clinicians 5>4=4 (judge breaks a tie)  -> disagree
        R("t4", "A", 3, 5), R("t4", "B", 2, 4), R("t4", "C", 1, 4),
        # d1 (2 responses) and q1 (4 responses): not three-response cases, not counted
        R("d1", "A", 1, 1), R("d1", "B", 2, 2),
        R("q1", "A", 1, 1), R("q1", "B", 2, 2), R("q1", "C", 3, 3), R("q1", "D", 4, 4),
    ]
    t = jd.accuracy_triple(rs)
    assert (t.n_cases, t.n_agree, t.n_cases_other_sizes) == (4, 2, 2)
    assert t.value == 0.5


def test_accuracy_triple_undefined_without_three_response_cases():
    rs = [R("c1", "A", 1, 1), R("c1", "B", 2, 2), R("c2", "A", 1, 1), R("c2", "B", 2, 2)]
    t = jd.accuracy_triple(rs)
    assert t.value is None and t.n_cases == 0
    assert "no case with exactly three responses" in t.undefined_reason and "2 with 2" in t.undefined_reason


# ----------------------------------------------------------------------------- the paper's worked cases


def test_automedeval_table7_example_agrees_fully():
    # AutoMedEval (seed 002) Table 7: one annotator rates Relevancy / Knowledge Correctness / Fluency;
    # a response's final score is the mean of these (§4.2): ChatDoctor (4+4+4)/3 = 4, Baize (3+2+2)/3 = 7/3,
    # MedAlpaca (2+2+2)/3 = 2. AutoMedEval's rationale ends "Doctor 1: 5 points. Doctor 2: 4 points.
    # Doctor 3: 2 points." Judge 5 > 4 > 2, clinician 4 > 2.33 > 2: all 3 pairs agree, the triple agrees.
    human = {"ChatDoctor": statistics.mean([4, 4, 4]), "Baize Healthcare": statistics.mean([3, 2, 2]),
             "MedAlpaca": statistics.mean([2, 2, 2])}
    judge = {"ChatDoctor": 5, "Baize Healthcare": 4, "MedAlpaca": 2}
    data = jd.from_records([{"case": "verapamil", "model": m, "judge_score": judge[m], "human_score": h}
                            for m, h in human.items()])
    assert (jd.accuracy_2tuple(data.responses).value, jd.accuracy_triple(data.responses).value) == (1.0, 1.0)


def test_automedeval_table8_incorrect_evaluation_agrees_nowhere():
    # AutoMedEval Table 8 ("an incorrect evaluation case"): the evaluation scores Doctor 1: 2, Doctor 2: 5,
    # Doctor 3: 1; the reference evaluation scores 5, 3, 5.
    #   1-2: judge 1<2, reference 1>2 -> disagree; 1-3: judge 1>3, reference tie -> disagree;
    #   2-3: judge 2>3, reference 2<3 -> disagree.  Accuracy_2-tuple 0/3, Accuracy_triple 0/1.
    rows = [("angioma", "ChatDoctor", 2, 5), ("angioma", "Baize Healthcare", 5, 3), ("angioma", "Reference", 1, 5)]
    rs = jd.from_records(recs(*rows)).responses
    a, t = jd.accuracy_2tuple(rs), jd.accuracy_triple(rs)
    assert (a.n_agree, a.n_pairs, a.n_tied_clinicians) == (0, 3, 1)
    assert (t.n_agree, t.n_cases) == (0, 1)


# ----------------------------------------------------------------------------- raters


RATER_ROWS = [
    # case, model, judge, human, rater
    ("c1", "A", 5, 5, "r1"), ("c1", "A", 5, 4, "r2"), ("c1", "A", 5, 4, "r3"),   # A: (5+4+4)/3 = 13/3
    ("c1", "B", 2, 3, "r1"), ("c1", "B", 2, 2, "r2"),                            # B: 2.5 (r3 did not rate it)
    ("c2", "A", 3, 1, "r1"), ("c2", "A", 3, 2, "r3"),                            # A: 1.5
    ("c2", "B", 4, 5, "r2"),                                                     # B: 5
]


def test_clinicians_score_is_the_mean_over_raters():
    data = jd.from_records(recs(*RATER_ROWS, rater=True))
    got = {(r.case, r.model): (r.judge, r.human, r.n_ratings) for r in data.responses}
    assert got == {("c1", "A"): (5, pytest.approx(13 / 3), 3), ("c1", "B"): (2, 2.5, 2),
                   ("c2", "A"): (3, 1.5, 2), ("c2", "B"): (4, 5, 1)}
    assert data.raters == ("r1", "r2", "r3") and data.n_rows == 8
    s = jd.summarise(data)
    assert (s["n_raters"], s["raters_per_response"], s["human_score"]) == (3, {"min": 1, "max": 3},
                                                                          "mean over raters")


def test_without_rater_column_the_score_is_taken_as_given():
    s = jd.summarise(jd.from_records(recs(("c", "A", 1, 4.2), ("c", "B", 2, 3.9))))
    assert s["n_raters"] is None and s["raters_per_response"] is None and "as given" in s["human_score"]


def test_rater_rows_and_their_means_give_the_same_statistics():
    # the long rater file and a one-row-per-response file holding the means (pandas) must agree
    long = pd.DataFrame(RATER_ROWS + [("c3", "A", 1, 2, "r1"), ("c3", "B", 2, 4, "r2"), ("c3", "C", 2, 3, "r1"),
                                      ("c3", "C", 2, 5, "r2")],
                        columns=["case", "model", "judge_score", "human_score", "rater"])
    means = long.groupby(["case", "model"], as_index=False).agg(judge_score=("judge_score", "first"),
                                                               human_score=("human_score", "mean"))
    a = jd.summarise(jd.from_records(long.to_dict("records")))
    b = jd.summarise(jd.from_records(means.to_dict("records")))
    for key in ("accuracy_2tuple", "accuracy_triple", "win_rate"):
        assert a[key] == b[key], key
    assert a["spearman"]["value"] == pytest.approx(b["spearman"]["value"])
    assert a["pearson"]["value"] == pytest.approx(b["pearson"]["value"])
    assert a["n_responses"] == b["n_responses"] == 7


# ----------------------------------------------------------------------------- correlations


CORR_ROWS = [  # 4 cases x 3 models; judge and clinicians disagree on some
    ("c1", "A", 5, 4.5), ("c1", "B", 3, 3.0), ("c1", "C", 4, 2.5),
    ("c2", "A", 2, 4.0), ("c2", "B", 4, 3.5), ("c2", "C", 1, 1.0),
    ("c3", "A", 4, 4.0), ("c3", "B", 4, 2.0), ("c3", "C", 1, 1.5),
    ("c4", "A", 5, 5.0), ("c4", "B", 2, 2.5), ("c4", "C", 3, 3.0),
]


def test_response_correlations_match_scipy():
    s = jd.summarise(jd.from_records(recs(*CORR_ROWS)))
    x = [r[2] for r in CORR_ROWS]
    y = [r[3] for r in CORR_ROWS]
    n = len(x)
    rho = stats.spearmanr(x, y).statistic
    # Spearman: Fisher z with the Bonett-Wright variance (1 + rho^2/2)/(n - 3), as per criterion
    for key, fn, se in (("spearman", stats.spearmanr, math.sqrt((1 + rho ** 2 / 2) / (n - 3))),
                        ("pearson", stats.pearsonr, 1 / math.sqrt(n - 3))):
        ref = fn(x, y)
        got = s[key]
        assert got["value"] == pytest.approx(ref.statistic, abs=1e-12)
        assert got["p"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert got["n"] == 12
        # Fisher z interval, written out: tanh(atanh(r) +- 1.96 se)
        z = math.atanh(ref.statistic)
        assert got["ci95"] == pytest.approx([math.tanh(z - 1.959963984540054 * se),
                                             math.tanh(z + 1.959963984540054 * se)])


def test_constant_scores_make_correlations_undefined_with_a_reason():
    s = jd.summarise(jd.from_records(recs(*[(c, m, 3, h) for c, m, _, h in CORR_ROWS])))
    for key in ("spearman", "pearson"):
        assert s[key]["value"] is None and s[key]["ci95"] is None
        assert s[key]["undefined_reason"] == "the judge gives every response the same score (3)"
    s = jd.summarise(jd.from_records(recs(*[(c, m, j, 4) for c, m, j, _ in CORR_ROWS])))
    assert s["spearman"]["undefined_reason"] == "the clinicians give every response the same score (4)"
    # clinicians tie everything: only the judge's ties agree (judge ties: c3 A-B only) -> 1 of 12 pairs
    assert (s["accuracy_2tuple"]["n_agree"], s["accuracy_2tuple"]["n_pairs"]) == (1, 12)


# ----------------------------------------------------------------------------- win rates


def test_win_rates_hand_counted():
    rows = [  # (case, model, judge, human)
        ("c1", "A", 5, 4), ("c1", "B", 3, 4),  # judge A>B, clinicians tie
        ("c2", "A", 2, 1), ("c2", "B", 2, 3),  # judge tie, clinicians B>A
        ("c3", "A", 4, 5), ("c3", "B", 1, 2), ("c3", "C", 3, 3),  # judge A>C>B; clinicians A>C>B
        ("c4", "B", 1, 1), ("c4", "C", 5, 5),  # C>B both
    ]
    rs = jd.from_records(recs(*rows)).responses
    j, c = jd.win_rates(rs, "judge"), jd.win_rates(rs, "clinicians")
    # A vs B on c1, c2, c3: judge A wins c1, c3, ties c2; clinicians: tie c1, B wins c2, A wins c3
    assert (j[("A", "B")].wins, j[("A", "B")].ties, j[("A", "B")].losses, j[("A", "B")].n_cases) == (2, 1, 0, 3)
    assert (c[("A", "B")].wins, c[("A", "B")].ties, c[("A", "B")].losses) == (1, 1, 1)
    assert j[("A", "B")].win == pytest.approx(2 / 3) and j[("A", "B")].tie == pytest.approx(1 / 3)
    # B vs C on c3 and c4: C wins both, by judge and clinicians
    assert (j[("B", "C")].losses, c[("B", "C")].losses, j[("C", "B")].win) == (2, 2, 1.0)
    # A vs C only on c3
    assert (j[("A", "C")].n_cases, j[("A", "C")].win, c[("A", "C")].win) == (1, 1.0, 1.0)
    for (a, b), w in j.items():  # win(A, B) = loss(B, A), shares add up to 1
        assert (w.wins, w.ties) == (j[(b, a)].losses, j[(b, a)].ties)
        assert w.win + w.tie + w.loss == pytest.approx(1)


def test_pair_of_models_without_a_shared_case_is_undefined():
    rs = jd.from_records(recs(("c1", "A", 1, 1), ("c1", "B", 2, 2), ("c2", "B", 1, 2), ("c2", "C", 2, 1))).responses
    w = jd.win_rates(rs, "judge")[("A", "C")]
    assert (w.n_cases, w.win, w.tie, w.loss) == (0, None, None, None)
    assert w.to_dict()["undefined_reason"] == "no case has responses from both models"


def test_win_rate_source_must_be_known():
    with pytest.raises(MedevalError, match="judge, clinicians"):
        jd.win_rates([], "doctors")


# ----------------------------------------------------------------------------- rankings


def test_model_ranking_and_its_spearman():
    rs = jd.from_records(recs(*CORR_ROWS)).responses
    # judge means: A (5+2+4+5)/4 = 4, B (3+4+4+2)/4 = 3.25, C (4+1+1+3)/4 = 2.25
    # clinicians:  A (4.5+4+4+5)/4 = 4.375, B (3+3.5+2+2.5)/4 = 2.75, C (2.5+1+1.5+3)/4 = 2
    judge = jd.model_ranking(rs, "judge")
    human = jd.model_ranking(rs, "clinicians")
    assert [(m.model, m.mean, m.rank, m.n_responses) for m in judge] == [("A", 4, 1, 4), ("B", 3.25, 2, 4),
                                                                         ("C", 2.25, 3, 4)]
    assert [(m.model, m.mean, m.rank) for m in human] == [("A", 4.375, 1), ("B", 2.75, 2), ("C", 2, 3)]
    # pandas groupby as the outside computation of the means
    df = pd.DataFrame(CORR_ROWS, columns=["case", "model", "j", "h"])
    assert {m.model: m.mean for m in human} == pytest.approx(df.groupby("model")["h"].mean().to_dict())
    e = jd.ranking_spearman(rs)
    assert e.value == pytest.approx(stats.spearmanr([4, 3.25, 2.25], [4.375, 2.75, 2]).statistic) == 1.0
    assert e.n_pairable == 3


def test_tied_model_means_share_the_average_rank():
    # judge: A (5+1)/2 = 3, B (3+3)/2 = 3, C (1+1)/2 ... C ranks 3rd; A and B share rank 1.5
    rs = jd.from_records(recs(("c1", "A", 5, 4), ("c1", "B", 3, 3), ("c1", "C", 1, 1),
                              ("c2", "A", 1, 4), ("c2", "B", 3, 2), ("c2", "C", 1, 2))).responses
    assert [(m.model, m.rank) for m in jd.model_ranking(rs, "judge")] == [("A", 1.5), ("B", 1.5), ("C", 3)]
    # Spearman with the clinicians (A 4, B 2.5, C 1.5) equals scipy's on the means (ties -> average ranks)
    assert jd.ranking_spearman(rs).value == pytest.approx(stats.spearmanr([3, 3, 1], [4, 2.5, 1.5]).statistic)


def test_ranking_spearman_needs_three_models():
    rs = jd.from_records(recs(("c1", "A", 5, 4), ("c1", "B", 3, 3), ("c2", "A", 1, 4), ("c2", "B", 3, 2))).responses
    e = jd.ranking_spearman(rs)
    assert e.value is None and e.undefined_reason == "fewer than 3 models (found 2)"


def test_models_on_different_cases_are_warned_about():
    s = jd.summarise(jd.from_records(recs(("c1", "A", 5, 4), ("c1", "B", 3, 3), ("c2", "B", 1, 4),
                                          ("c2", "C", 3, 2))))
    assert s["ranking"]["same_cases"] is False
    assert any("not scored on the same cases" in w and "A: 1, B: 2, C: 1" in w for w in s["warnings"])
    s = jd.summarise(jd.from_records(recs(*CORR_ROWS)))
    assert s["ranking"]["same_cases"] is True and s["warnings"] == []


# ----------------------------------------------------------------------------- exclusions, undefined


def test_single_response_cases_are_left_out_and_counted():
    rows = CORR_ROWS + [("lonely", "A", 1, 5), ("alone", "B", 5, 1)]
    s = jd.summarise(jd.from_records(recs(*rows)))
    base = jd.summarise(jd.from_records(recs(*CORR_ROWS)))
    assert s["excluded"] == {"single_response_cases": 2, "cases": ["lonely", "alone"]}
    assert (s["n_cases"], s["n_responses"], s["n_rows"]) == (4, 12, 14)
    for key in ("spearman", "pearson", "accuracy_2tuple", "accuracy_triple", "win_rate", "ranking"):
        assert s[key] == base[key], key  # the excluded responses change nothing
    assert any("2 cases with a single response" in w and "lonely, alone" in w for w in s["warnings"])


def test_one_model_everything_undefined_never_nan():
    s = jd.summarise(jd.from_records(recs(("c1", "A", 5, 4), ("c2", "A", 3, 3), ("c3", "A", 1, 2),
                                          ("c4", "A", 2, 1))))
    assert (s["n_cases"], s["n_responses"], s["excluded"]["single_response_cases"]) == (0, 0, 4)
    for e in (s["spearman"], s["pearson"], s["ranking"]["spearman"]):
        assert e["value"] is None and e["undefined_reason"] == "no case with two or more responses"
    assert s["accuracy_2tuple"]["value"] is None
    assert s["accuracy_2tuple"]["undefined_reason"] == "no case with two or more responses"
    assert s["accuracy_triple"]["value"] is None and s["accuracy_triple"]["undefined_reason"]
    assert s["win_rate"]["judge"] == {} and s["ranking"]["judge"] == []
    assert "NaN" not in json.dumps(s)
    for fmt in ("csv", "md"):
        assert "nan" not in jd.render(s, fmt).lower()


def test_two_responses_give_undefined_correlation():
    s = jd.summarise(jd.from_records(recs(("c", "A", 5, 4), ("c", "B", 3, 3))))
    assert s["spearman"]["undefined_reason"] == "fewer than 3 responses (found 2)"
    assert s["accuracy_2tuple"]["value"] == 1.0


# ----------------------------------------------------------------------------- input errors


def _err(tmp_path, text, name="j.csv"):
    with pytest.raises(InputError) as e:
        jd.read_judge_file(write(tmp_path / name, text))
    return str(e.value)


def test_missing_columns_named_with_what_was_found(tmp_path):
    msg = _err(tmp_path, "case,model,score,human\nc1,A,1,2\n")
    assert "'judge_score', 'human_score' are missing" in msg and "found: case, model, score, human" in msg


def test_non_numeric_score_names_file_and_row(tmp_path):
    msg = _err(tmp_path, "case,model,judge_score,human_score\nc1,A,5,4\nc1,B,five,4\n")
    assert "j.csv, row 3" in msg and "judge_score 'five' is not a number" in msg
    msg = _err(tmp_path, "case,model,judge_score,human_score\nc1,A,5,\n")
    assert "row 2" in msg and "human_score is empty" in msg
    msg = _err(tmp_path, "case,model,judge_score,human_score\nc1,A,5,nan\n")
    assert "not a finite number" in msg


def test_empty_identifiers(tmp_path):
    assert "row 2: model is empty" in _err(tmp_path, "case,model,judge_score,human_score\nc1,,5,4\n")
    assert "row 2: rater is empty" in _err(tmp_path, "case,model,judge_score,human_score,rater\nc1,A,5,4,\n")


def test_duplicate_rows(tmp_path):
    msg = _err(tmp_path, "case,model,judge_score,human_score,rater\nc1,A,5,4,r1\nc1,B,3,3,r1\nc1,A,5,3,r1\n")
    assert "row 4" in msg and "rater 'r1' scored model 'A' on case 'c1' twice (also on row 2)" in msg
    msg = _err(tmp_path, "case,model,judge_score,human_score\nc1,A,5,4\nc1,A,5,3\n")
    assert "model 'A' appears twice on case 'c1' (also on row 2)" in msg and "add a `rater` column" in msg


def test_judge_score_must_repeat_on_every_rater_row(tmp_path):
    msg = _err(tmp_path, "case,model,judge_score,human_score,rater\nc1,A,5,4,r1\nc1,A,4,4,r2\n")
    assert "row 3" in msg and "judge_score of model 'A' on case 'c1' is 4 here but 5 on row 2" in msg


def test_empty_files(tmp_path):
    assert "the file is empty" in _err(tmp_path, "")
    assert "header but no rows" in _err(tmp_path, "case,model,judge_score,human_score\n")
    with pytest.raises(InputError, match="no rows"):
        jd.from_records([])


def test_jsonl_input(tmp_path):
    f = write(tmp_path / "j.jsonl", "\n".join(json.dumps({"case": c, "model": m, "judge_score": j,
                                                          "human_score": h}) for c, m, j, h in CORR_ROWS))
    assert jd.summarise(jd.read_judge_file(f))["accuracy_2tuple"] == \
        jd.summarise(jd.from_records(recs(*CORR_ROWS)))["accuracy_2tuple"]


# ----------------------------------------------------------------------------- properties


def _datasets():
    """Random small datasets: up to 6 cases, each with 2-4 of the models A-D, integer 1-5 ratings by 1-3 raters."""
    case = st.tuples(st.lists(st.sampled_from("ABCD"), min_size=2, max_size=4, unique=True),
                     st.integers(1, 3), st.data())
    return st.lists(case, min_size=1, max_size=6)


def _build(cases, judge_of):
    rows = []
    for i, (models, k, data) in enumerate(cases):
        for m in models:
            ratings = data.draw(st.lists(st.integers(1, 5), min_size=k, max_size=k))
            j = judge_of(statistics.mean(ratings))
            rows += [(f"c{i}", m, j, v, f"r{n}") for n, v in enumerate(ratings)]
    return jd.from_records(recs(*rows, rater=True))


PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(cases=_datasets())
def test_a_judge_that_is_a_monotone_transform_of_the_clinicians_agrees_perfectly(cases):
    s = jd.summarise(_build(cases, lambda h: 2 * h + 1))
    assert s["accuracy_2tuple"]["value"] == 1.0
    assert s["accuracy_triple"]["value"] in (1.0, None)
    assert s["win_rate"]["judge"] == s["win_rate"]["clinicians"]
    assert [m["model"] for m in s["ranking"]["judge"]] == [m["model"] for m in s["ranking"]["clinicians"]]
    if s["spearman"]["value"] is not None:
        assert s["spearman"]["value"] == pytest.approx(1.0)


@PROPS
@given(cases=_datasets())
def test_a_reversed_judge_agrees_only_on_the_clinicians_ties(cases):
    s = jd.summarise(_build(cases, lambda h: -h))
    a = s["accuracy_2tuple"]
    assert a["n_agree"] == a["n_tied_clinicians"] == a["n_tied_both"]
    for x in s["win_rate"]["judge"]:
        for y, w in s["win_rate"]["judge"][x].items():
            c = s["win_rate"]["clinicians"][x][y]
            assert (w["wins"], w["ties"], w["losses"]) == (c["losses"], c["ties"], c["wins"])


@PROPS
@given(cases=_datasets(), seed=st.randoms(use_true_random=False))
def test_statistics_do_not_depend_on_row_order(cases, seed):
    data = _build(cases, lambda h: round(h))
    shuffled = list(data.responses)
    seed.shuffle(shuffled)
    a, b = jd.accuracy_2tuple(data.responses), jd.accuracy_2tuple(shuffled)
    assert (a.n_agree, a.n_pairs) == (b.n_agree, b.n_pairs)
    assert jd.accuracy_triple(data.responses) == jd.accuracy_triple(shuffled)
    assert 0 <= a.value <= 1


# ----------------------------------------------------------------------------- CLI


@pytest.fixture
def rater_csv(tmp_path):
    lines = ["case,model,judge_score,human_score,rater"]
    lines += [f"{c},{m},{j},{v},{r}" for c, m, j, v, r in RATER_ROWS]
    lines += ["c3,A,1,2,r1", "c3,B,2,4,r2", "c3,C,2,3,r1", "c3,C,2,5,r2", "solo,A,3,3,r1"]
    return write(tmp_path / "judge.csv", "\n".join(lines) + "\n")


@pytest.mark.slow
def test_cli_json_contract(rater_csv):
    r = run(rater_csv, "--format", "json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    for key in ("n_cases", "n_responses", "n_raters", "spearman", "pearson", "accuracy_2tuple", "accuracy_triple",
                "win_rate", "ranking"):
        assert key in s, key
    assert set(s["spearman"]) >= {"value", "ci95", "p", "n"} and set(s["pearson"]) >= {"value", "ci95", "p", "n"}
    assert set(s["win_rate"]) >= {"judge", "clinicians"} and set(s["ranking"]) >= {"judge", "clinicians", "spearman"}
    assert (s["n_cases"], s["n_responses"], s["n_raters"]) == (3, 7, 3)
    # c1: judge A5>B2, clinicians 13/3 > 2.5 agree; c2: judge A3<B4, clinicians 1.5<5 agree;
    # c3: judge A1 B2 C2, clinicians A2 B4 C4: A<B agree, A<C agree, B=C both tie -> 5/5, triple 1/1
    assert s["accuracy_2tuple"] == {"value": 1.0, "n_pairs": 5, "n_agree": 5, "n_tied_clinicians": 1,
                                    "n_tied_judge": 1, "n_tied_both": 1, "undefined_reason": None}
    assert (s["accuracy_triple"]["value"], s["accuracy_triple"]["n_cases"]) == (1.0, 1)
    assert s["excluded"]["cases"] == ["solo"]
    assert "warning: 1 case with a single response" in r.stderr


@pytest.mark.slow
def test_cli_csv_and_md(rater_csv):
    r = run(rater_csv, "--format", "csv")
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(io.StringIO(r.stdout))
    assert list(df.columns[:5]) == ["statistic", "source", "model_a", "model_b", "value"]
    row = df[(df.statistic == "win_rate") & (df.source == "judge") & (df.model_a == "A") & (df.model_b == "B")]
    assert row["value"].item() == pytest.approx(1 / 3)  # judge: A beats B on c1 (5>2), loses on c2 (3<4), c3 (1<2)
    assert df[df.statistic == "accuracy_2tuple"]["value"].item() == 1.0
    r = run(rater_csv, "--format", "md")
    assert r.returncode == 0, r.stderr
    assert "| Accuracy_2-tuple | 100.0% |" in r.stdout and "judge | clinicians" in r.stdout


@pytest.mark.slow
def test_cli_errors_are_clean(tmp_path):
    f = write(tmp_path / "bad.csv", "case,model,judge,human\nc1,A,1,2\n")
    r = run(f)
    assert r.returncode == 1
    assert r.stderr.startswith("Error: ") and "found: case, model, judge, human" in r.stderr
    assert "Traceback" not in r.stderr
    r = run(tmp_path / "nope.csv")
    assert r.returncode == 1 and "file not found" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_cli_help_describes_the_command():
    r = subprocess.run([sys.executable, "-m", "medeval", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and "judge-agreement" in r.stdout
