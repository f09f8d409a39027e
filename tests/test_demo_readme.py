"""The demo agrees with what is written about it (issue 22 §3): every count the README states about the demo is
read from the README and compared with a freshly built demo, and no demo gold item contradicts the guideline the
doctors read before grading it."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from medeval.accounts import auth
from medeval.annotation.campaigns import grading
from medeval.demo.generate import load_synonyms
from medeval.demo.gold_demo import guideline_tier
from medeval.store.db import connect
from tests.conftest import ROOT, copy_db

WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def number(text: str) -> int:
    return WORDS[text] if text in WORDS else int(text)


def stated(pattern: str) -> int:
    """The number the README states where ``pattern`` (one group: the number) matches; it must match once."""
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    found = re.findall(pattern, readme)
    assert len(found) == 1, (pattern, found)
    return number(found[0])


@pytest.fixture(scope="module")
def demo_db(full_demo_template, tmp_path_factory):
    return copy_db(full_demo_template, tmp_path_factory.mktemp("readme-demo") / "demo.db")


def one(db, sql: str, *args) -> int:
    return db.conn.execute(sql, args).fetchone()[0]


def items_of(db, name: str) -> int:
    return one(db, "SELECT count(*) FROM campaign_items ci JOIN campaigns c ON c.id = ci.campaign_id WHERE c.name = ?",
               name)


@pytest.mark.slow
def test_every_count_the_readme_states_about_the_demo(demo_db):
    from medeval.demo import clinicians as sc
    from medeval.demo.active_demo import ACTIVE_CAMPAIGN

    with connect(demo_db) as db:
        assert stated(r"(\d+) common diseases") == one(db, "SELECT count(DISTINCT disease) FROM kb_entries")
        assert stated(r"diseases × (\d+) aspects") == one(db, "SELECT count(DISTINCT aspect) FROM kb_entries")
        assert stated(r"responses of (\w+) fictional models") == one(db, "SELECT count(*) FROM models")
        assert stated(r"(\w+) clinical cases in CMB-Clin's format") == one(db, "SELECT count(*) FROM cases")
        assert stated(r"CMB-Clin's format \((\d+) questions\)") == one(db, "SELECT count(*) FROM case_questions")
        assert stated(r"answered by (\w+) of the demo models") == one(
            db, "SELECT count(DISTINCT model) FROM case_responses")
        assert stated(r"with (\w+) misattributions") == 3 == len(__import__(
            "medeval.demo.tasks", fromlist=["MISATTRIBUTED"]).MISATTRIBUTED)
        assert stated(r"to (\d+) claim pairs") == one(db, "SELECT count(DISTINCT item_key) FROM fact_claims")
        assert stated(r"and (\w+) task campaigns for doctor1-3") == one(
            db, "SELECT count(*) FROM campaigns WHERE kind NOT IN ('bucket_grading', 'random_validation', "
                "'active_calibration')")
        # doctor1's Grade page: the qualification, then real items plus hidden gold, as the page counts them
        doc1 = auth.get_user(db, "doctor1")
        (mine,) = [c for c in grading.my_campaigns(db, doc1) if c["name"] == "Demo calibration round"]
        assert stated(r"then (\d+) items — \d+ to grade") == mine["total"]
        assert stated(r"items — (\d+) to grade") == grading.progress(db, doc1, mine["id"])[1]
        assert stated(r"to grade and (\d+) hidden gold items among them") == mine["total"] - mine_real(db, doc1)
        settings = json.loads(db.conn.execute(
            "SELECT settings FROM gold_settings WHERE campaign_id = ? ORDER BY version DESC", (mine["id"],)).fetchone()[0])
        assert stated(r"campaign: a (\d+)-item qualification") == settings["qualification_items"]
        assert stated(r"for a qualification \((\d+) items") == settings["qualification_items"]
        assert stated(r"calibration round\" has (\d+) gold items") == one(
            db, "SELECT count(*) FROM gold_items WHERE campaign_id = ?", mine["id"])
        assert stated(r"(\w+) already adjudicated") == one(db, "SELECT count(*) FROM adjudications")
        assert stated(r"demo also has (\w+) annotator accounts") == len(sc.CLINICIAN_NAMES)
        assert stated(r"fill the demo's (\w+) graded campaigns") == stated(r"grade (\w+) campaigns completely") == one(
            db, "SELECT count(DISTINCT ci.campaign_id) FROM grade_annotations g JOIN campaign_items ci ON "
                "ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE u.username LIKE 'sim_clin_%'")
        assert stated(r"\((\d+) random responses") == items_of(db, sc.VALIDATION_CAMPAIGN)
        assert stated(r"and three active rounds, (\d+) responses") == items_of(db, ACTIVE_CAMPAIGN)
        assert stated(r"a seed round and (\w+) active rounds") == one(
            db, "SELECT count(DISTINCT round) FROM calibration_rounds")
        assert stated(r"\((\d+) responses, about 4 per 0.1 score") == items_of(db, sc.CALIBRATION_CAMPAIGN)
        task_gold = one(db, "SELECT count(*) FROM task_gold_items g JOIN campaigns c ON c.id = g.campaign_id "
                            "WHERE c.name = 'Demo: do the reasons hold?'")
        assert stated(r"do the reasons hold\?\" has (\d+) gold items") == task_gold


def mine_real(db, user) -> int:
    return one(db, "SELECT count(*) FROM assignments a JOIN campaigns c ON c.id = a.campaign_id WHERE "
                   "c.name = 'Demo calibration round' AND a.user_id = ?", user.id)


def test_the_guideline_rule_for_enumerated_aspects():
    syn = {"头痛": ["头疼", "头部疼痛"]}
    ref = "头痛;头晕;视物模糊;水肿"
    assert guideline_tier(ref, ["头部疼痛", "头晕", "水肿"], syn) == 2  # most of them, nothing wrong
    assert guideline_tier(ref, ["头痛", "头晕", "水肿", "血尿"], syn) is None  # most, but with a wrong one: open
    assert guideline_tier(ref, ["头痛", "血尿"], syn) == 1  # some
    assert guideline_tier(ref, ["头痛"], syn) == 1
    assert guideline_tier(ref, ["头痛", "血尿", "咳嗽"], syn) == 0  # mostly wrong items
    assert guideline_tier(ref, ["抱歉", "我无法回答这个问题"], syn) == 0  # none
    assert guideline_tier("无", ["无"], syn) == 2 and guideline_tier("无", ["青年"], syn) == 0


@pytest.mark.slow
def test_no_demo_gold_item_contradicts_the_grading_guideline(demo_db):
    guide = json.loads(resources.files("medeval.demo").joinpath("data/guidelines.json").read_text(encoding="utf-8"))
    assert "Most of them: 3. Some: 2. None, or mostly wrong items: 1." in guide["grading"]["text"]  # the rule checked
    syn = load_synonyms()
    with connect(demo_db) as db:
        gold = db.conn.execute(
            "SELECT g.campaign_id, g.expected_tier, g.reason, k.aspect_type, k.reference, r.processed FROM gold_items g "
            "JOIN responses r ON r.id = g.response_id JOIN kb_entries k ON k.id = r.kb_id").fetchall()
    assert len(gold) >= 30 and {g[1] for g in gold} >= {0, 2}
    for cid, expected, reason, atype, reference, processed in gold:
        assert atype == "enumerated", (cid, atype)  # the aspect type whose rule the guideline spells out
        assert guideline_tier(reference, processed.split(), syn) == expected, (cid, expected, reference, processed)
        assert {0: "misses or contradicts", 1: "some key points", 2: "conveys the reference"}[expected] in reason
        assert reason.startswith({0: "演示（模拟）：回答遗漏", 1: "演示（模拟）：部分要点正确", 2: "演示（模拟）：回答表达"}[expected])
    # the guideline's own worked examples: the tier each names is the tier its reason gives
    keys = {"1": "none", "2": "two of", "3": "five of"}
    for ex in guide["grading"]["examples"]:
        if ex["aspect_type"] == "enumerated":
            assert keys[ex["tier"]] in ex["why"].lower(), ex


@pytest.mark.slow
def test_the_active_calibration_panel_shows_every_metric_the_rounds_ran(demo_db, monkeypatch):
    """Tune cut-offs on the demo's active campaign: the widths chart has both cut-offs of every stratum the rounds
    ran, whichever metric the slider above is on; the table lists every stratum."""
    from streamlit.testing.v1 import AppTest

    from medeval.demo.active_demo import ACTIVE_CAMPAIGN, ACTIVE_CONFIG
    from webui.page import TEST_TOKEN_KEY
    from medeval.engine.registry import label

    monkeypatch.setenv("MEDEVAL_DB", str(demo_db))
    with connect(demo_db) as db:
        token = auth.create_session(db, auth.authenticate(db, "researcher", "demo-researcher-pass"))
        cid = one(db, "SELECT id FROM campaigns WHERE name = ?", ACTIVE_CAMPAIGN)
        ran = [tuple(r) for r in db.conn.execute(
            "SELECT DISTINCT metric, aspect_type FROM calibration_rounds WHERE campaign_id = ? ORDER BY 1, 2", (cid,))]
    assert len(ran) == len(ACTIVE_CONFIG.metrics) * len(ACTIVE_CONFIG.aspect_types) >= 2
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TEST_TOKEN_KEY] = token
    at.switch_page("app_pages/tuning.py").run()
    at.selectbox(key="tune_campaign").set_value(cid).run()
    for metric in ("cosine", "rouge1"):  # a metric the campaign did not run, then one it did
        at.selectbox(key="tune_metric").set_value(metric).run()
        assert not at.exception
        (chart,) = [c for c in at.get("plotly_chart") if "tune_widths" in str(c.proto.id)]
        names = {t["name"] for t in json.loads(chart.proto.spec)["data"]}
        # each metric by its label (BLEU-1), as everywhere on the page
        assert names == {f"{label(m)} / {t}: {w} cut-off" for m, t in ran for w in ("low", "high")}, names
        strata = next(d.value for d in at.dataframe if "stratum" in d.value.columns)
        assert sorted(strata["stratum"]) == sorted(f"{label(m)} / {t}" for m, t in ran)
