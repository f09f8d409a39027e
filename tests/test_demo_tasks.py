"""The demo task campaigns: the demo case and fact-check files import, the three campaigns exist once, doctor2
and doctor3 have simulated answers (doctor1 none), every results page has numbers, and the judges' scores parsed
from the rationales are the ones the rationales were written with."""

import json
import math
from importlib import resources

import pytest

from medeval.accounts import auth
from medeval.annotation import tasks
from medeval.annotation import cases as cs
from medeval.annotation import gold as gd
from medeval.annotation.gold import gold_accuracy
from medeval.demo import task_gold_demo as tgd
from medeval.demo import tasks as dt
from medeval.demo.build import DEMO_ACCOUNTS
from medeval.demo.generate import DEMO_MODELS
from medeval.core.errors import MedevalError
from medeval.stats.factcheck import read_factcheck, score_items

pytestmark = pytest.mark.slow  # builds the demo task campaigns (about 1 s per module fixture)

DATA = resources.files("medeval.demo").joinpath("data")
SRC = "DEMO DATA (medeval's own writing) -- not clinical advice"
G, M, B = "DemoGPT-L", "DemoMed-7B", "DemoBase-7B"
TABLES = ("users", "cases", "case_questions", "case_responses", "judge_assessments", "judge_scores", "fact_claims",
          "campaigns", "task_items", "task_assignments", "task_answers", "audit_log")


def lines(name):
    return [json.loads(x) for x in DATA.joinpath(name).read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture
def demo(db):
    for username, password, role in DEMO_ACCOUNTS:
        auth.add_user(db, username, password, role)
    return db, dt.add_demo_tasks(db)


def counts(db):
    have = {n for (n,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    return {t: db.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES if t in have}


def user(db, name):
    return auth.get_user(db, name)


# ------------------------------------------------------------------ the files


def test_cases_file_is_cmb_clin_format_and_marked_demo():
    cases = json.loads(DATA.joinpath(dt.CASES_FILES["cases"]).read_text(encoding="utf-8"))
    assert len(cases) == 5
    assert sum(len(c["QA_pairs"]) for c in cases) == 12
    for c in cases:
        assert set(c) == {"id", "title", "description", "QA_pairs", "source"} and c["source"] == SRC
        assert all(h in c["description"] for h in ("现病史", "体格检查", "辅助检查", "演示"))
        assert 2 <= len(c["QA_pairs"]) <= 3
        assert all(p["question"].strip() and p["answer"].strip() for p in c["QA_pairs"])
    parsed = cs.read_cases(DATA.joinpath(dt.CASES_FILES["cases"]))
    assert [len(c.questions) for c in parsed] == [3, 2, 2, 3, 2]


def test_three_demo_models_answer_every_question():
    rows = lines(dt.CASES_FILES["responses"])
    assert {r["model"] for r in rows} == {G, M, B} <= {m.name for m in DEMO_MODELS}
    per_q = {}
    for r in rows:
        per_q.setdefault((r["case"], r["question"]), set()).add(r["model"])
        assert r["source"] == SRC and r["response"].strip()
    assert len(per_q) == 12 and all(v == {G, M, B} for v in per_q.values())


def test_parser_reads_every_rationale_and_both_judges_write_chinese_in_varied_orders():
    rows = lines(dt.CASES_FILES["judgements"])
    assert len(rows) == 24 and {r["judge"] for r in rows} == {"DemoJudge-A", "DemoJudge-B"}
    for r in rows:
        scores = cs.parse_judge_scores(r["rationale"])
        assert sorted(scores) == [1, 2, 3], r
        assert all(v in (1, 2, 3, 4, 5) for v in scores.values())
        assert sorted(r["models"]) == sorted([G, M, B])
        # same language and score format for both, so the preference task stays blind
        assert "医生1：" in r["rationale"] and "评分：" in r["rationale"], r
        assert not any(w in r["rationale"] for w in ("Doctor", "points", "Score")), r
    for judge in ("DemoJudge-A", "DemoJudge-B"):
        assert len({tuple(r["models"]) for r in rows if r["judge"] == judge}) >= 3  # orders vary
    # the reader's own check (every model scored, none beyond the list) passes on the whole file
    assert len(cs.read_judgements(DATA.joinpath(dt.CASES_FILES["judgements"]))) == 24


def test_the_judges_rationales_do_not_give_the_judge_away():
    """Blind preference: neither length nor a stock phrase tells DemoJudge-A from DemoJudge-B."""
    rows = lines(dt.CASES_FILES["judgements"])
    by_q = {}
    for r in rows:
        by_q.setdefault((r["case"], r["question"]), {})[r["judge"]] = r["rationale"]
        body = r["rationale"][:r["rationale"].index("评分：")]
        assert all(f"医生{i}" in body for i in (1, 2, 3)), r  # every response discussed by number
    assert len(by_q) == 12
    for key, texts in by_q.items():
        a, b = len(texts["DemoJudge-A"]), len(texts["DemoJudge-B"])
        assert max(a, b) / min(a, b) <= 1.25, (key, a, b)
    mean = {j: sum(len(t[j]) for t in by_q.values()) / len(by_q) for j in ("DemoJudge-A", "DemoJudge-B")}
    assert abs(mean["DemoJudge-A"] - mean["DemoJudge-B"]) <= 0.1 * min(mean.values()), mean
    # neither judge is the one that is always longer
    assert 3 <= sum(len(t["DemoJudge-A"]) > len(t["DemoJudge-B"]) for t in by_q.values()) <= 9
    # openings vary within each judge and are shared across them
    opening = {j: [r["rationale"][:4] for r in rows if r["judge"] == j] for j in ("DemoJudge-A", "DemoJudge-B")}
    for j, o in opening.items():
        assert len(set(o)) >= 6 and max(o.count(x) for x in o) <= 3, (j, o)
    assert len(set(opening["DemoJudge-A"]) & set(opening["DemoJudge-B"])) >= 2
    # no phrase in half of one judge's rationales and (almost) none of the other's
    bodies = {j: [r["rationale"][:r["rationale"].index("评分：")] for r in rows if r["judge"] == j]
              for j in ("DemoJudge-A", "DemoJudge-B")}

    def share(gram, texts):
        return sum(gram in t for t in texts) / len(texts)

    for j, other in (("DemoJudge-A", "DemoJudge-B"), ("DemoJudge-B", "DemoJudge-A")):
        grams = {t[i:i + n] for t in bodies[j] for n in (2, 3, 4) for i in range(len(t) - n + 1)}
        signature = [g for g in grams if share(g, bodies[j]) >= 0.4 and share(g, bodies[other]) <= 0.1]
        assert not signature, (j, signature)


# the scores each rationale was written with, per model (two questions by both judges, one misattributed by B)
MEANT = {
    ("demo-c1", 1): {"DemoJudge-A": {G: 5, M: 3, B: 1}, "DemoJudge-B": {G: 5, M: 4, B: 2}},
    ("demo-c1", 3): {"DemoJudge-A": {G: 4, M: 3, B: 1}, "DemoJudge-B": {G: 4, M: 2, B: 3}},
    ("demo-c3", 2): {"DemoJudge-A": {G: 4, M: 2, B: 1}, "DemoJudge-B": {G: 4, M: 1, B: 2}},
}


def test_parsed_judge_scores_are_the_ones_meant(demo):
    db, _ = demo
    got = {(q["case_key"], q["position"]): {j["judge"]: j["scores"] for j in q["judgements"]}
           for q in cs.questions(db, dt.CASES_DATASET)}
    for key, judges in MEANT.items():
        assert got[key] == {j: {m: float(v) for m, v in s.items()} for j, s in judges.items()}, key
    # the judge orders the models alike on every question except where it mixes up the responses
    for key, judges in got.items():
        a, b = judges["DemoJudge-A"], judges["DemoJudge-B"]
        assert a[G] > a[M] > a[B]
        if key not in dt.MISATTRIBUTED:
            assert b[G] >= b[M] >= b[B] and b[B] >= a[B]  # B is lenient, never harsher on the weak model
        else:
            assert b[B] > b[M]  # the weak model's error blamed on the mediocre one


def test_true_quality_agrees_with_the_judge_mostly_not_always():
    """The simulated clinicians' centre: every rated response, models in order, the judge's order on most pairs."""
    judged = {(r["case"], r["question"]): dict(zip(r["models"], (cs.parse_judge_scores(r["rationale"])[i]
                                                                 for i in (1, 2, 3))))
              for r in lines(dt.CASES_FILES["judgements"]) if r["judge"] == dt.RATED_JUDGE}
    assert set(dt.TRUE_QUALITY) == set(judged)
    assert all(set(q) == {G, M, B} and all(1 <= v <= 5 for v in q.values()) for q in dt.TRUE_QUALITY.values())
    mean = {m: sum(q[m] for q in dt.TRUE_QUALITY.values()) / len(dt.TRUE_QUALITY) for m in (G, M, B)}
    assert mean[G] > mean[M] + 1 > mean[B] + 1
    pairs = [(j[x] > j[y], t[x] > t[y], t[x] == t[y]) for key, j in judged.items()
             for t in [dt.TRUE_QUALITY[key]] for x, y in ((G, M), (G, B), (M, B))]
    same = sum(jo == to and not tie for jo, to, tie in pairs)
    assert 0.65 <= same / len(pairs) <= 0.85  # 27 of 36


def test_factcheck_file_mixes_the_error_types():
    rows = lines(dt.FACTCHECK_FILE)
    assert all(r["source"] == SRC for r in rows) and len(rows) == 3 * 12 * 2
    assert len({r["type"] for r in rows}) >= 4
    res = {m: score_items(pairs, m) for m, pairs in read_factcheck(DATA.joinpath(dt.FACTCHECK_FILE)).items()}
    assert set(res) == {G, M, B}
    assert res[G].fact_acc == 1.0 and res[M].fact_acc == pytest.approx(10 / 12) and res[B].fact_acc == 0.5
    assert res[M].overall.errors["Sycophancy"] == 1 and res[M].overall.errors["NotFollow"] == 1
    assert res[B].overall.errors["Sycophancy"] == 3 and res[B].overall.errors["NotFollow"] == 1
    assert res[B].overall.errors["Safety"] == 1 and res[B].overall.errors["Misinterpretation"] == 1
    # every bad reason sits in an item its model got right: it is in the AccR pool
    correct = {(m, it.factual.id) for m, r in res.items() for it in r.items if it.correct}
    assert {(m, i) for m, i, _ in dt.BAD_REASONS} <= correct


# ------------------------------------------------------------------ the database


def test_datasets_import(demo):
    db, s = demo
    sets = {d["dataset"]: d for d in cs.datasets(db)}
    c = sets[dt.CASES_DATASET]
    assert (c["cases"], c["questions"], c["responses"], c["judges"], c["judgements"]) == (5, 12, 36, 2, 24)
    f = sets[dt.FACTCHECK_DATASET]
    assert (f["fact_items"], f["fact_claims"], f["models"]) == (36, 72, 3)
    assert s["datasets"][dt.CASES_DATASET]["judgements_added"] == 24
    assert s["datasets"][dt.FACTCHECK_DATASET]["claims_added"] == 72


def test_three_campaigns_with_their_task_types(demo):
    db, s = demo
    camps = {c["name"]: c for c in tasks.task_campaigns(db, actor=None)}
    assert {n: c["kind"] for n, c in camps.items()} == {dt.RUBRIC_CAMPAIGN: "rubric",
                                                          dt.PREFERENCE_CAMPAIGN: "preference",
                                                          dt.ACCR_CAMPAIGN: "accr"}
    assert s["campaigns"] == {n: c["id"] for n, c in camps.items()}
    cfg = {n: tasks.campaign(db, c["id"])["config"] for n, c in camps.items()}
    assert cfg[dt.RUBRIC_CAMPAIGN]["judge"] == "DemoJudge-A" and cfg[dt.RUBRIC_CAMPAIGN]["rubric"] == "automedeval"
    assert cfg[dt.PREFERENCE_CAMPAIGN]["compare"] == "judges"
    assert cfg[dt.ACCR_CAMPAIGN]["per_model"] == dt.ACCR_PER_MODEL
    for c in cfg.values():
        assert c["annotators"] == ["doctor1", "doctor2", "doctor3"] and c["k"] in (2, 3)
    assert camps[dt.RUBRIC_CAMPAIGN]["items"] == 12 and camps[dt.PREFERENCE_CAMPAIGN]["items"] == 12
    assert camps[dt.ACCR_CAMPAIGN]["items"] == 3 * dt.ACCR_PER_MODEL


def test_doctor1_untouched_doctor2_done_doctor3_partial(demo):
    db, s = demo
    d1 = user(db, "doctor1")
    assert db.conn.execute("SELECT count(*) FROM task_answers WHERE user_id = ?", (d1.id,)).fetchone()[0] == 0
    for cid in s["campaigns"].values():
        prog = {a["annotator"]: a for a in tasks.campaign_progress(db, cid, actor=None)["annotators"]}
        assert prog["doctor1"]["done"] == 0 and prog["doctor1"]["assigned"] > 0
        assert prog["doctor2"]["done"] == prog["doctor2"]["assigned"]
        assert 0 < prog["doctor3"]["done"] < prog["doctor3"]["assigned"]
        st = tasks.task_state(db, d1, cid)  # a newcomer starts at item 1 of a blind view
        assert st.done == 0 and st.item is not None and st.item.answers == {}
        shown = " ".join(b.label + b.text for b in st.item.blocks)
        assert not any(n in shown for n in (G, M, B, "DemoJudge"))
    # doctor3 left the rubric half-way through an item: its responses rated, the judge not yet
    d3 = user(db, "doctor3")
    v = tasks.task_state(db, d3, s["campaigns"][dt.RUBRIC_CAMPAIGN]).item
    assert v.open_part == 2 and v.pending.id.startswith("judge:")


def test_results_have_numbers(demo):
    db, s = demo
    res = user(db, "researcher")
    r = tasks.results(db, s["campaigns"][dt.RUBRIC_CAMPAIGN], actor=res)
    sec = {x["title"]: x for x in r["sections"]}
    per_model = {row["model"]: row["mean"] for row in sec["Ratings per model"]["tables"]["per model"]}
    assert per_model[G] > per_model[M] > per_model[B]
    judge = sec["The judge against the clinicians"]["numbers"]
    assert all(isinstance(judge[k], float) for k in ("spearman", "pearson", "accuracy_2tuple", "accuracy_triple"))
    # good but imperfect agreement, like AutoMedEval's judge (Spearman 0.631, Accuracy_2-tuple 74.61%): the
    # clinicians' ratings are centred on dt.TRUE_QUALITY, not on the judge's scores (that gave 0.95 and 0.97)
    assert 0.7 <= judge["spearman"] <= 0.85, judge
    assert 0.7 <= judge["accuracy_2tuple"] <= 0.82, judge
    assert judge["ranking_spearman"] == 1.0  # the judge still ranks the three models as the clinicians do
    agree = sec["Agreement among clinicians"]["tables"]["agreement"]
    assert agree and all(isinstance(a["value"], float) for a in agree if a["statistic"].startswith("ICC"))
    icc = next(a["value"] for a in agree if a["rated"] == "mean over criteria" and a["statistic"].startswith("ICC"))
    assert 0.6 <= icc <= 0.9  # the two simulated doctors agree about as well as AutoMedEval's (ICC 0.712)
    assert sec["The judge's assessments, as rated by the clinicians"]["tables"]["mean rating"]

    r = tasks.results(db, s["campaigns"][dt.PREFERENCE_CAMPAIGN], actor=res)
    assert len(r["sections"]) == 3
    for x in r["sections"]:
        shares = {row["source"]: row["share"] for row in x["tables"]["preference share"]}
        assert set(shares) == {"DemoJudge-A", "DemoJudge-B"} and sum(shares.values()) == pytest.approx(1.0)
        assert shares["DemoJudge-A"] > shares["DemoJudge-B"]
        assert all(isinstance(c["value"], float) for c in x["tables"]["checks"])

    r = tasks.results(db, s["campaigns"][dt.ACCR_CAMPAIGN], actor=res)
    accr = {row["model"]: row for row in r["sections"][0]["tables"]["AccR"]}
    assert set(accr) == {G, M, B}
    for row in accr.values():  # per knowledge item (factual + counterfactual claim)
        assert 0 <= row["AccR (ratings)"] <= 1 and row["ratings"] > 0 and row["items"] == dt.ACCR_PER_MODEL
        assert row["items in the pool"] >= dt.ACCR_PER_MODEL and row["claims without a twin (left out)"] == 0
    assert accr[B]["AccR (ratings)"] < accr[G]["AccR (ratings)"]  # the weak model's reasons hold less often
    assert accr[B]["AccR (items, majority)"] < accr[G]["AccR (items, majority)"]
    lo, hi = accr[B]["AccR 95% CI (Wilson)"]
    assert lo < accr[B]["AccR (items, majority)"] < hi
    alpha = next(a for a in r["sections"][1]["tables"]["agreement"] if "alpha" in a["statistic"])
    assert isinstance(alpha["value"], float) and not math.isnan(alpha["value"])


def test_simulated_answers_follow_the_data(demo):
    """doctor2 says no to most bad reasons and yes to most good ones; prefers DemoJudge-A on reference
    correctness where DemoJudge-B mixes up the responses."""
    db, s = demo
    d2 = user(db, "doctor2")
    items = {iid: (src, json.loads(p)) for iid, src, p in db.conn.execute(
        "SELECT id, source, payload FROM task_items WHERE campaign_id = ?", (s["campaigns"][dt.ACCR_CAMPAIGN],))}
    votes = {True: [], False: []}
    for a in tasks.answers(db, s["campaigns"][dt.ACCR_CAMPAIGN]):
        if a.annotator == "doctor2":
            p = items[a.item_id][1]
            label = {"factual": "support", "counterfactual": "refute"}[a.question]  # a question per claim
            votes[(p["model"], p["item"], label) in dt.BAD_REASONS].append(a.value)
    assert votes[True] and votes[True].count("no") > len(votes[True]) / 2
    assert votes[False].count("yes") > 0.8 * len(votes[False])
    cid = s["campaigns"][dt.PREFERENCE_CAMPAIGN]
    lay = {iid: json.loads(x) for iid, x in db.conn.execute(
        "SELECT item_id, layout FROM task_assignments WHERE campaign_id = ? AND user_id = ?", (cid, d2.id))}
    pay = {iid: (src, json.loads(p)) for iid, src, p in db.conn.execute(
        "SELECT id, source, payload FROM task_items WHERE campaign_id = ?", (cid,))}
    for a in tasks.answers(db, cid):
        src, p = pay[a.item_id]
        if a.annotator == "doctor2" and a.question == "reference" and (p["case"], int(src.split("/")[-2])) \
                in dt.MISATTRIBUTED:
            left = p[lay[a.item_id]["left"]]["source"]
            assert a.value in ("tie", "left" if left == "DemoJudge-A" else "right")


def test_second_call_changes_nothing(demo):
    db, s = demo
    before = counts(db)
    again = dt.add_demo_tasks(db)
    assert counts(db) == before
    assert again["campaigns"] == s["campaigns"] and again["answers_added"] == 0
    assert again["datasets"][dt.CASES_DATASET]["judgements_added"] == 0
    assert again["datasets"][dt.FACTCHECK_DATASET]["claims_added"] == 0
    assert s["answers_added"] == before["task_answers"]


def test_needs_the_demo_accounts(db):
    with pytest.raises(MedevalError, match="demo accounts"):
        dt.add_demo_tasks(db)
    assert db.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0] == 0


# ------------------------------------------------------------------ gold items on the AccR campaign (issue 15)

GOLD_TABLES = ("task_gold_items", "task_gold_retired", "task_gold_answers", "gold_settings", "task_answers",
               "guideline_acks", "audit_log")


@pytest.fixture
def demo_gold(demo):
    db, s = demo
    before = db.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0]
    return db, s, tgd.add_demo_task_gold(db), before


def gold_counts(db):
    have = {n for (n,) in db.conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    return {t: db.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in GOLD_TABLES if t in have}


def test_accr_campaign_gets_gold_items_expecting_no_for_the_bad_reasons(demo_gold):
    db, s, g, _ = demo_gold
    cid = s["campaigns"][dt.ACCR_CAMPAIGN]
    assert g["campaign"] == cid and g["gold_items"] == tgd.GOLD_ITEMS == 8
    gold = gd.list_task_gold(db, cid, actor=None)
    assert len(gold) == 8 and gd.active_gold_ids(db, cid) == [x.id for x in gold]
    real = {src for (src,) in db.conn.execute("SELECT source FROM task_items WHERE campaign_id = ?", (cid,))}
    for x in gold:  # whole knowledge items: an expected answer per claim, "no" where its reason is a bad one
        bad = {q: (x.payload["model"], x.payload["item"], label) in dt.BAD_REASONS
               for q, label in (("factual", "support"), ("counterfactual", "refute"))}
        assert x.expected == {q: "no" if b else "yes" for q, b in bad.items()}, x.source
        assert x.reason.startswith("演示（模拟）") and "(Demo, simulated: " in x.reason and "\n" not in x.reason
        assert x.source not in real
    wants = ["no" in x.expected.values() for x in gold]
    # a mix: the one item with a bad reason the real items leave (five of the six are real items), the rest good
    assert wants.count(True) == 1 and wants.count(False) == 7
    assert sum(any((p["model"], p["item"], lab) in dt.BAD_REASONS for lab in ("support", "refute")) for (p,) in (
        (json.loads(x),) for (x,) in db.conn.execute("SELECT payload FROM task_items WHERE campaign_id = ?",
                                                      (cid,)))) == 5
    st = gd.get_settings(db, cid)
    assert st["hidden_share"] == 0.15 and st["feedback"] is True and st["qualification_required"] is False


def test_simulated_doctors_answer_their_hidden_gold_items_plausibly(demo_gold):
    db, s, g, before = demo_gold
    cid = s["campaigns"][dt.ACCR_CAMPAIGN]
    acc = {a["annotator"]: a for a in gold_accuracy(db, cid, actor=None, backend=gd.TASK)["annotators"]}
    # what the seeded picking gives (85% "no" to a bad reason, 93% "yes" to a good one): right mostly, not always
    assert {n: (a["hidden_answered"], a["hidden_correct"]) for n, a in acc.items()} == {
        "doctor1": (0, 0), "doctor2": (3, 2), "doctor3": (3, 3)}
    assert acc["doctor2"]["accuracy"] == pytest.approx(2 / 3) and acc["doctor1"]["accuracy"] is None
    # two answers per hidden gold item (its factual and counterfactual claim)
    assert g["answers"] == 12 and all(a["qualification"] == "not_required" for a in acc.values())
    # gold answers stay out of the real answers: none added there, and only hidden ones, by doctor2/3
    assert db.conn.execute("SELECT count(*) FROM task_answers").fetchone()[0] == before
    assert not db.conn.execute("SELECT 1 FROM task_answers WHERE client_token LIKE 'demo-gold:%'").fetchone()
    who = {(u, m) for u, m in db.conn.execute(
        "SELECT u.username, a.mode FROM task_gold_answers a JOIN users u ON u.id = a.user_id")}
    assert who == {("doctor2", "hidden"), ("doctor3", "hidden")}
    # each answer is the one the simulation gives that doctor for that claim (the same picking as real items)
    for username, gid, q, value in db.conn.execute(
            "SELECT u.username, a.gold_id, a.question, a.value FROM task_gold_answers a JOIN users u ON "
            "u.id = a.user_id"):
        x = gd.task_gold_item(db, gid)
        assert q in ("factual", "counterfactual")
        assert value == dt._pick("accr", username, x.source, x.payload, {}, q, dt._rng(username, x.source, q))
    d1, d2, d3 = (user(db, n) for n in dt.DOCTORS)
    # doctor2 is through; doctor3 stopped at a real item they left open; doctor1 starts on the real items at once,
    # with hidden gold items waiting in the queue
    assert tasks.task_state(db, d2, cid).item is None
    s3 = tasks.task_state(db, d3, cid)
    assert s3.item.ref.startswith("i:") and s3.done < s3.total
    s1 = tasks.task_state(db, d1, cid)
    assert s1.phase == "items" and s1.done == 0 and s1.total == 3 * dt.ACCR_PER_MODEL + 3
    assert gd.hidden_counts(db, d1, cid, gd.TASK) == (0, 3)


def test_task_gold_second_call_adds_nothing(demo_gold):
    db, s, g, _ = demo_gold
    before = gold_counts(db)
    assert tgd.add_demo_task_gold(db) == {"campaign": g["campaign"], "gold_items": 0, "answers": 0}
    assert gold_counts(db) == before
    assert dt.add_demo_tasks(db)["answers_added"] == 0  # the task simulation, with gold items in the queues
    assert gold_counts(db) == before


def test_task_gold_needs_the_accr_campaign(db):
    assert tgd.add_demo_task_gold(db) == {"campaign": None, "gold_items": 0, "answers": 0}
    assert db.conn.execute("SELECT count(*) FROM task_gold_items").fetchone()[0] == 0


@pytest.mark.slow
def test_build_demo_adds_the_task_campaigns(demo_template, tmp_path):
    from medeval.store.db import connect
    from medeval.demo.build import build_demo
    from tests.conftest import copy_db

    path = copy_db(demo_template, tmp_path / "demo.db")
    with connect(path) as db:
        s = build_demo(db, tmp_path / "files")
        assert set(s["tasks"]["campaigns"]) == {dt.RUBRIC_CAMPAIGN, dt.PREFERENCE_CAMPAIGN, dt.ACCR_CAMPAIGN}
        assert s["tasks"]["answers_added"] > 0
        cid = s["tasks"]["campaigns"][dt.ACCR_CAMPAIGN]
        assert s["task_gold"] == {"campaign": cid, "gold_items": 8, "answers": 12}  # two answers per gold item
        # in the full demo (other ids, so other hidden plans than in the fixture) doctor3 answers the hidden gold
        # items planned before and after the real items they leave open (else the second build below would answer
        # one more real item); doctor2 misses one of 3 (the draw of tgd.SALT), so the pages show a miss
        acc = {a["annotator"]: (a["hidden_answered"], a["hidden_correct"])
               for a in gold_accuracy(db, cid, actor=None, backend=gd.TASK)["annotators"]}
        assert acc == {"doctor1": (0, 0), "doctor2": (3, 2), "doctor3": (3, 3)}
        gold = db.conn.execute("SELECT count(*) FROM task_gold_answers").fetchone()[0]
        again = build_demo(db, tmp_path / "files2")
        assert again["tasks"]["answers_added"] == 0 and again["tasks"]["campaigns"] == s["tasks"]["campaigns"]
        assert again["task_gold"]["gold_items"] == 0 and again["task_gold"]["answers"] == 0
        assert db.conn.execute("SELECT count(*) FROM task_gold_answers").fetchone()[0] == gold
        d3 = tasks.task_state(db, user(db, "doctor3"), cid)  # (acknowledged the guidelines in the second build)
        assert d3.item.ref.startswith("i:") and d3.total - d3.done == 3  # the real items doctor3 leaves open
