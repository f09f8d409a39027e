"""Per-criterion judge scores (CMB-Clin §5.3, App. E.3): importing them, storing them, and the Pearson and
Spearman per criterion between the judge and the clinicians, checked against scipy."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from medeval.annotation.cases import import_cases, questions, read_judgements
from medeval.core.errors import InputError
from medeval.stats import judge as jd
from tests.conftest import invoke, write
from tests.test_cases import CASES_JSON, RESPONSES, csv_text, jsonl_text

CMB = ("fluency", "relevance", "completeness", "proficiency")


def _realistic(n: int = 40, seed: int = 7):
    """A judge's 1-5 scores and three clinicians' 1-5 ratings per response on CMB-Clin's four perspectives:
    a response has a quality; each side sees it with noise; fluency is high for most responses (ties)."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(1, 5, n)
    judge, experts = {}, {}
    for k, c in enumerate(CMB):
        centre = np.maximum(quality, 3.5) if c == "fluency" else quality
        judge[c.capitalize()] = {i: float(np.clip(round(centre[i] + rng.normal(0, 0.6 + 0.1 * k)), 1, 5))
                                 for i in range(n)}
        ratings = np.clip(np.round(centre[:, None] + rng.normal(0, 0.8, (n, 3))), 1, 5)
        experts[c] = {i: float(ratings[i].mean()) for i in range(n)}
    return judge, experts


def test_per_criterion_matches_scipy():
    judge, experts = _realistic()
    rows = jd.criterion_agreement(judge, experts)
    assert [r.criterion for r in rows] == ["Fluency", "Relevance", "Completeness", "Proficiency"]
    for r in rows:
        assert r.status == "computed" and r.expert_criterion == r.criterion.lower() and r.n == 40
        x = [judge[r.criterion][i] for i in range(40)]
        y = [experts[r.expert_criterion][i] for i in range(40)]
        p = stats.pearsonr(x, y)
        assert r.pearson.value == pytest.approx(p.statistic, abs=1e-12)
        assert r.pearson.extra["p"] == pytest.approx(p.pvalue, rel=1e-9)
        lo, hi = p.confidence_interval(0.95)
        assert r.pearson.ci95 == pytest.approx((lo, hi), abs=1e-9)
        s = stats.spearmanr(x, y)
        assert r.spearman.value == pytest.approx(s.statistic, abs=1e-12)
        assert r.spearman.extra["p"] == pytest.approx(s.pvalue, rel=1e-9)
        # Fisher z with the Bonett-Wright variance (1 + r^2/2) / (n - 3), written out here
        z, se = np.arctanh(s.statistic), math.sqrt((1 + s.statistic ** 2 / 2) / 37)
        q = stats.norm.ppf(0.975)
        assert r.spearman.ci95 == pytest.approx((np.tanh(z - q * se), np.tanh(z + q * se)), abs=1e-9)
        assert r.pearson.ci95[0] < r.pearson.value < r.pearson.ci95[1]
    # the data are built to agree: every perspective well above zero, as in the paper (all > 0.71 for GPT-4)
    assert all(r.pearson.value > 0.4 for r in rows)


def test_bonett_wright_is_wider_than_plain_fisher_z():
    lo, hi = jd.bonett_wright_ci(0.6, 30)
    se = 1 / math.sqrt(27)
    assert lo < math.tanh(math.atanh(0.6) - 1.959963984540054 * se)
    assert hi > math.tanh(math.atanh(0.6) + 1.959963984540054 * se)
    # no interval for n <= 3, and none at |r| = 1 (atanh(1) is infinite), never the degenerate [1, 1]
    assert jd.bonett_wright_ci(0.6, 3) is None and jd.bonett_wright_ci(1.0, 10) is None
    assert jd.bonett_wright_ci(-1.0, 10) is None


def test_names_match_case_insensitively_and_unmatched_criteria_are_listed():
    judge = {"FLUENCY": {1: 4, 2: 5, 3: 3, 4: 2}, "Safety": {1: 5, 2: 4, 3: 4, 4: 1}}
    experts = {"Fluency": {1: 4.5, 2: 4.0, 3: 3.0, 4: 1.5}, "Relevance": {1: 4, 2: 3}}
    rows = {r.criterion: r for r in jd.criterion_agreement(judge, experts)}
    assert rows["FLUENCY"].expert_criterion == "Fluency" and rows["FLUENCY"].n == 4
    assert rows["Safety"].status == "no clinicians' ratings" and rows["Safety"].pearson is None
    assert rows["Relevance"].status == "no judge scores"
    out = rows["Safety"].rows()
    assert [(x["statistic"], x["value"], x["undefined_reason"]) for x in out] == [
        ("Pearson", None, "no clinicians' ratings"), ("Spearman", None, "no clinicians' ratings")]


@pytest.mark.parametrize("judge,experts,why", [
    ({"fluency": {1: 4, 2: 5}}, {"fluency": {1: 4.0, 2: 3.5}}, "fewer than 3"),
    ({"fluency": {1: 4, 2: 5, 3: 3}}, {"fluency": {1: 4.0, 2: 3.5, 4: 2}}, "fewer than 3"),  # 2 paired
    ({"fluency": {1: 5, 2: 5, 3: 5, 4: 5}}, {"fluency": {1: 4.0, 2: 3.5, 3: 2, 4: 5}}, "judge gives every"),
    ({"fluency": {1: 5, 2: 4, 3: 3, 4: 2}}, {"fluency": {1: 4.0, 2: 4.0, 3: 4.0, 4: 4.0}}, "clinicians give every"),
])
def test_undefined_says_why(judge, experts, why):
    (r,) = jd.criterion_agreement(judge, experts)
    for e in (r.pearson, r.spearman):
        assert e.value is None and why in e.undefined_reason
    assert all(x["value"] is None and x["undefined_reason"] for x in r.rows())
    assert "nan" not in json.dumps(r.to_dict()).lower()


# ------------------------------------------------------------------ judge-agreement file with criteria


def test_judge_file_criterion_columns_with_raters(tmp_path):
    rng = np.random.default_rng(3)
    rows = []
    for case in range(12):
        for model in ("A", "B", "C"):
            q = rng.integers(1, 6)
            jf, jc = int(np.clip(q + rng.integers(-1, 2), 1, 5)), int(np.clip(q + rng.integers(-1, 2), 1, 5))
            for rater in ("r1", "r2"):
                rows.append({"case": f"c{case}", "model": model, "rater": rater, "judge_score": (jf + jc) / 2,
                             "human_score": int(q), "judge_fluency": jf, "judge_completeness": jc,
                             "human_fluency": int(np.clip(q + rng.integers(-1, 2), 1, 5)),
                             "judge_safety": 4})
    p = write(tmp_path / "j.csv", csv_text(rows))
    s = jd.summarise(jd.read_judge_file(p))
    crit = {c["criterion"]: c for c in s["criteria"]}
    df = pd.DataFrame(rows).groupby(["case", "model"], as_index=False).agg(
        jf=("judge_fluency", "first"), hf=("human_fluency", "mean"))
    ref = stats.pearsonr(df.jf, df.hf)
    assert crit["fluency"]["n"] == 36
    assert crit["fluency"]["pearson"]["value"] == pytest.approx(ref.statistic, abs=1e-12)
    assert crit["fluency"]["pearson"]["ci95"] == pytest.approx(list(ref.confidence_interval()), abs=1e-9)
    assert crit["fluency"]["spearman"]["value"] == pytest.approx(stats.spearmanr(df.jf, df.hf).statistic)
    means = df.assign(m=df.model).groupby("m").agg(jf=("jf", "mean"), hf=("hf", "mean"))
    assert crit["fluency"]["n_models"] == 3
    assert crit["fluency"]["pearson_model_means"]["value"] == pytest.approx(
        stats.pearsonr(means.jf, means.hf).statistic, abs=1e-12)
    assert crit["completeness"]["status"] == "no clinicians' ratings"
    assert crit["safety"]["status"] == "no clinicians' ratings"
    md = jd.render(s, "md")
    assert "| completeness | no clinicians' ratings |" in md and "| fluency | " in md
    csv_out = jd.render(s, "csv")
    assert "pearson_criterion,,fluency" in csv_out
    out = invoke("judge-agreement", p, "--format", "md").output
    assert "Per criterion" in out and "no clinicians' ratings" in out


def test_judge_file_criterion_judge_score_must_repeat(tmp_path):
    rows = [{"case": "c1", "model": "A", "rater": "r1", "judge_score": 4, "human_score": 4, "judge_fluency": 4},
            {"case": "c1", "model": "A", "rater": "r2", "judge_score": 4, "human_score": 3, "judge_fluency": 5}]
    with pytest.raises(InputError, match="judge_fluency of model 'A' on case 'c1' is 5 here but 4"):
        jd.read_judge_file(write(tmp_path / "j.csv", csv_text(rows)))


# ------------------------------------------------------------------ import


def _case_files(tmp_path, judgements, name="j.jsonl"):
    return {"cases": write(tmp_path / "cases.json", json.dumps(CASES_JSON, ensure_ascii=False)),
            "responses": write(tmp_path / "responses.csv", csv_text(RESPONSES)),
            "judgements": write(tmp_path / name, jsonl_text(judgements) if name.endswith("jsonl")
                                else csv_text(judgements))}


NESTED = {"case": "c1", "question": 1, "judge": "gpt-4", "rationale": "医生1较全面；医生2误诊。",
          "models": ["ModelA", "ModelB"],
          "scores": {"ModelA": {"Fluency": 5, "Relevance": 5, "Completeness": 4, "Proficiency": 5},
                     "ModelB": {"Fluency": 4, "Relevance": 3, "Completeness": 2, "Proficiency": 1}}}


def test_nested_criterion_scores_are_imported_and_the_overall_is_their_mean(tmp_path, db):
    f = _case_files(tmp_path, [NESTED])
    (j,) = read_judgements(f["judgements"])
    assert j.criteria["ModelA"] == {"Fluency": 5.0, "Relevance": 5.0, "Completeness": 4.0, "Proficiency": 5.0}
    assert j.scores == {"ModelA": 4.75, "ModelB": 2.5}  # CMB-Clin's Avg. over the four perspectives
    import_cases(db, "d", **f)
    q = next(q for q in questions(db, "d") if q["case_key"] == "c1" and q["position"] == 1)
    (jj,) = q["judgements"]
    assert list(jj["criteria"]["ModelB"]) == ["Fluency", "Relevance", "Completeness", "Proficiency"]
    assert jj["criteria"]["ModelB"]["Proficiency"] == 1.0 and jj["scores"] == {"ModelA": 4.75, "ModelB": 2.5}
    again = import_cases(db, "d", **f)
    assert again["judgements_added"] == 0 and again["judgements_present"] == 1
    changed = json.loads(json.dumps(NESTED))
    changed["scores"]["ModelB"]["Fluency"] = 5
    f2 = _case_files(tmp_path, [changed], "j2.jsonl")
    with pytest.raises(InputError, match="per-criterion"):
        import_cases(db, "d", judgements=f2["judgements"])


def test_overall_given_beside_the_criteria_is_kept(tmp_path):
    row = json.loads(json.dumps(NESTED))
    row["scores"]["ModelA"]["overall"] = 5
    row["scores"]["ModelB"]["Overall"] = 2
    (j,) = read_judgements(_case_files(tmp_path, [row])["judgements"])
    assert j.scores == {"ModelA": 5.0, "ModelB": 2.0} and "overall" not in j.criteria["ModelA"]


def test_criterion_columns_in_csv(tmp_path):
    rows = [{"case": "c1", "question": 1, "judge": "gpt-4", "rationale": "医生1：5分；医生2：2分",
             "models": "ModelA,ModelB", "scores": '{"ModelA": 5, "ModelB": 2}',
             "score_fluency": '{"ModelA": 5, "ModelB": 4}', "score_Proficiency": '{"ModelA": 5, "ModelB": 1}'}]
    (j,) = read_judgements(_case_files(tmp_path, rows, "j.csv")["judgements"])
    assert j.scores == {"ModelA": 5.0, "ModelB": 2.0}
    assert j.criteria == {"ModelA": {"fluency": 5.0, "proficiency": 5.0}, "ModelB": {"fluency": 4.0, "proficiency": 1.0}}


@pytest.mark.parametrize("scores,extra,msg", [
    ({"ModelA": {"Fluency": 5, "Relevance": 4}, "ModelB": {"Fluency": 4}}, {}, "'ModelB' has no Relevance score"),
    ({"ModelA": {"Fluency": 5}, "ModelB": 3}, {}, "some models a number and others per-criterion"),
    ({"ModelA": {"Fluency": 5, "fluency": 4}, "ModelB": {"Fluency": 4}}, {}, "appears twice"),
    ({"ModelA": {"Fluency": "good"}, "ModelB": {"Fluency": 4}}, {}, "the Fluency score of 'ModelA' is 'good'"),
    ({"ModelA": {"Fluency": 5, "overall": 5}, "ModelB": {"Fluency": 4}}, {}, "overall score to some models"),
    ({"ModelA": 5, "ModelB": 3}, {"score_fluency": {"ModelA": 5, "ModelC": 4}}, "ModelC, which the judge did not"),
    ({"ModelA": {"Fluency": 5}, "ModelB": {"Fluency": 4}}, {"score_fluency": {"ModelA": 5, "ModelB": 4}},
     "given twice"),
])
def test_criterion_score_errors(tmp_path, scores, extra, msg):
    row = {**NESTED, "scores": scores, **extra}
    with pytest.raises(InputError, match=msg) as e:
        read_judgements(_case_files(tmp_path, [row])["judgements"])
    assert e.value.row == 1 and e.value.fix


def test_a_score_naming_no_response_is_listed_in_the_error(tmp_path):
    row = {"case": "c1", "question": 1, "judge": "gpt-4", "models": ["ModelA", "ModelB"],
           "rationale": "医生1：5分。医生1较好，医生2较差，给3分"}
    with pytest.raises(InputError, match="name no single response: '给3分'"):
        read_judgements(_case_files(tmp_path, [row])["judgements"])


# ------------------------------------------------------------------ rubric campaign results and the task report


@pytest.fixture
def cdb(db, tmp_path):
    """The cases of test_tasks with a judge that scored CMB-Clin's four perspectives and one more (safety)."""
    from medeval.accounts.auth import add_user
    from medeval.annotation import cases as cs
    from tests.test_tasks import CASES, RESPONSES

    rng = np.random.default_rng(11)
    judgements = []
    for case, pos in (("c1", 1), ("c1", 2), ("c2", 1)):
        models = ["alpha", "beta", "gamma"]
        judgements.append({"case": case, "question": pos, "judge": "judge-c", "rationale": "分项评分见表。",
                           "models": models,
                           "scores": {m: {"Fluency": int(rng.integers(3, 6)), "Relevance": int(rng.integers(1, 6)),
                                          "Completeness": int(rng.integers(1, 6)),
                                          "Proficiency": int(rng.integers(1, 6)), "Safety": int(rng.integers(1, 6))}
                                      for m in models}})
    cs.import_cases(db, "clin", cases=write(tmp_path / "c.json", json.dumps(CASES, ensure_ascii=False)),
                    responses=write(tmp_path / "r.jsonl", jsonl_text(
                        [{"case": a, "question": b, "model": m, "response": t} for a, b, m, t in RESPONSES])),
                    judgements=write(tmp_path / "j.jsonl", jsonl_text(judgements)))
    for name, role in (("doc1", "annotator"), ("doc2", "annotator"), ("res", "researcher")):
        add_user(db, name, "a-long-password", role)
    return db


def test_rubric_results_per_criterion(cdb):
    from medeval.accounts.auth import get_user
    from medeval.annotation import tasks
    from medeval.reports import task_report
    from tests.test_tasks import answer_all, rated_response

    res = get_user(cdb, "res")
    cid = tasks.create_campaign(cdb, "rubric", "r", ["doc1", "doc2"], k=2, seed=3,
                                config={"dataset": "clin", "judge": "judge-c", "rubric": "cmb-clin"}, actor=res)
    rng = np.random.default_rng(5)
    for who in ("doc1", "doc2"):
        answer_all(cdb, get_user(cdb, who), cid, lambda view, q: str(int(rng.integers(1, 6))))
    r = tasks.results(cdb, cid, actor=res)
    sec = {s["title"]: s for s in r["sections"]}["The judge against the clinicians, per criterion"]
    rows = {(x["criterion"], x["statistic"]): x for x in sec["tables"]["per criterion"]}
    # independently: the clinicians' mean per (item, model) and criterion from the stored answers, with scipy
    items = {i: json.loads(p) for i, p in cdb.conn.execute("SELECT id, payload FROM task_items WHERE campaign_id = ?",
                                                           (cid,))}
    answers = tasks.answers(cdb, cid, actor=res)
    ratings: dict = {}
    for a in answers:
        if a.question.startswith("r"):
            unit = rated_response(cdb, items, a)
            ratings.setdefault((a.question.split(":", 1)[1], unit), []).append(float(a.value))
    for crit, key in (("Fluency", "fluency"), ("Relevance", "relevance"), ("Completeness", "completeness"),
                      ("Proficiency", "proficiency")):
        x, y = [], []
        for iid, p in items.items():
            for m, cs_ in p["judge"]["criteria"].items():
                x.append(cs_[crit])
                y.append(float(np.mean(ratings[(key, f"{iid}/{m}")])))
        assert rows[(crit, "Pearson")]["n"] == len(x) == 9
        ref = stats.pearsonr(x, y)
        assert rows[(crit, "Pearson")]["value"] == pytest.approx(ref.statistic, abs=1e-12)
        assert rows[(crit, "Pearson")]["ci95"] == pytest.approx(list(ref.confidence_interval()), abs=1e-9)
        assert rows[(crit, "Spearman")]["value"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        # the models' mean scores (3 models: no CI)
        mx = {m: np.mean([p["judge"]["criteria"][m][crit] for p in items.values()]) for m in ("alpha", "beta", "gamma")}
        my = {m: np.mean([np.mean(ratings[(key, f"{iid}/{m}")]) for iid in items]) for m in mx}
        mm = rows[(crit, "Pearson (model means)")]
        assert mm["n"] == 3 and mm["ci95"] is None
        assert mm["value"] == pytest.approx(stats.pearsonr(list(mx.values()), list(my.values())).statistic, abs=1e-12)
    assert rows[("Safety", "Pearson")]["undefined_reason"] == "no clinicians' ratings"
    text = task_report.methods_paragraph(task_report.build(cdb, cid, actor=res))
    assert "Safety: no clinicians' ratings" in text and "Bonett-Wright" in text and "Proficiency: Pearson = " in text


def test_overall_from_the_rationale_when_it_scores_the_responses(tmp_path):
    row = {**NESTED, "rationale": "医生1的回答较全面，给5分；医生2误诊，给1分。"}
    (j,) = read_judgements(_case_files(tmp_path, [row])["judgements"])
    assert j.scores == {"ModelA": 5.0, "ModelB": 1.0} and j.criteria["ModelB"]["Relevance"] == 3.0
    partial = {**NESTED, "rationale": "医生1的回答较全面，给5分。"}
    with pytest.raises(InputError, match="gives 1 score"):
        read_judgements(_case_files(tmp_path, [partial], "p.jsonl")["judgements"])
    no_models = {k: v for k, v in row.items() if k != "models"}
    (j,) = read_judgements(_case_files(tmp_path, [no_models], "n.jsonl")["judgements"])
    assert j.scores == {"ModelA": 4.75, "ModelB": 2.5}  # no order given: the rationale's numbers name nobody


def test_per_criterion_figure_has_both_statistics_and_says_why_a_bar_is_missing():
    from medeval.reports.task_report import table_figure

    rows = [r for c in jd.criterion_agreement(*_realistic()) for r in c.rows()]
    rows += jd.CriterionAgreement("Safety", None, 0, None, None, "no clinicians' ratings").rows()
    fig = table_figure("per criterion", rows, "The judge against the clinicians, per criterion")
    pearson, spearman = fig.data  # no model means here: no third trace
    assert (pearson.name, spearman.name) == ("Pearson", "Spearman")
    assert list(pearson.y[:4]) == [r["value"] for r in rows if r["statistic"] == "Pearson"][:4]
    assert pearson.y[4] is None and pearson.text[4] == "undefined" and pearson.hovertext[4] == "no clinicians' ratings"
