"""The demo data set: the project's own writing, reproducible, every tier populated."""


import pytest

from tests.conftest import ROOT

from medeval.engine import thresholds as th
from medeval.engine.aspects import ASPECTS, BY_NAME
from medeval.demo.generate import DEMO_MODELS, generate_responses, load_kb, load_synonyms
from medeval.demo.build import build_demo


def test_knowledge_base_covers_30_diseases_and_all_18_aspects():
    kb = load_kb()
    diseases = {r["disease"] for r in kb}
    assert len(diseases) >= 30
    for d in diseases:
        assert sorted(r["aspect"] for r in kb if r["disease"] == d) == sorted(a.name for a in ASPECTS)
    assert all(r["disease_en"] and r["reference"] for r in kb)
    assert {r["reference"] for r in kb if r["aspect"] == "Severity Level"} == {"1", "2", "3", "4"}
    syn = load_synonyms()
    entities = {e for r in kb if BY_NAME[r["aspect"]].type == "enumerated" for e in r["reference"].split(";")}
    assert set(syn) <= entities


def test_models_include_a_medical_model_and_its_backbone():
    names = {m.name for m in DEMO_MODELS}
    assert len(DEMO_MODELS) >= 4
    assert any(m.kind == "medical" and m.backbone in names for m in DEMO_MODELS)


def test_generation_is_reproducible():
    kb = load_kb()
    a, b = generate_responses(kb), generate_responses(kb)
    assert a == b and len(a) == len(kb) * len(DEMO_MODELS)
    assert generate_responses(kb, seed=1) != a


@pytest.mark.slow
def test_demo_database_has_every_tier_and_the_full_score_range(db, tmp_path):
    s = build_demo(db, tmp_path / "demo")
    assert s["scores_added"] > 8000
    # Table 12 adopted (provisional) for the demo's embedding model; the set calibrated on the simulated
    # clinicians (medeval.demo.clinicians) published over it is the active one
    adopted = th.load(db, s["threshold_version"])
    assert adopted.provenance["calibrated"] is False
    ts = th.active(db)
    assert ts.version == s["clinicians"]["version"] != adopted.version and ts.provenance["calibrated"] is True
    assert ts.provenance["base_version"] == adopted.version
    for version in (adopted.version, ts.version):
        for metric, atype in [("bleu1", "enumerated"), ("rouge1", "enumerated"), ("cosine", "enumerated"),
                              ("bleu1", "declarative"), ("rouge1", "declarative"), ("cosine", "declarative"),
                              ("exact_match", "numeric")]:
            tiers = {t for (t,) in db.conn.execute(
                "SELECT DISTINCT g.tier FROM grades g JOIN responses r ON r.id = g.response_id "
                "JOIN kb_entries k ON k.id = r.kb_id WHERE g.version = ? AND g.metric = ? AND k.aspect_type = ?",
                (version, metric, atype))}
            assert tiers == ({0, 2} if atype == "numeric" else {0, 1, 2}), (version, metric, atype)
    for metric in ("bleu1", "rouge1", "cosine"):
        buckets = {b for (b,) in db.conn.execute(
            "SELECT DISTINCT min(CAST(score * 10 AS INTEGER), 9) FROM scores WHERE metric = ? AND score >= 0", (metric,))}
        assert len(buckets) >= 8, (metric, buckets)  # scores spread over (nearly) every 0.1 interval
    # models differ in quality: the strongest and the weakest are at least 1.5 points apart
    from medeval.reports.tier_report import build_report

    totals = [r["averaged"]["total_score"] for r in build_report(db)["models"]]
    assert max(totals) - min(totals) > 1.5
    # building again is a no-op
    again = build_demo(db, tmp_path / "demo2")
    assert again["scores_added"] == 0
    # ... and keeps the calibrated set active
    assert again["threshold_version"] == s["threshold_version"] and th.active(db).version == ts.version
    assert again["clinicians"]["grades_added"] == 0 and not again["clinicians"]["published"]
    assert again["clinicians"]["campaigns"] == s["clinicians"]["campaigns"]
    # demo accounts sign in with the README's passwords; the demo campaign exists once, k = 3 per item
    from medeval.accounts import auth
    from medeval.annotation import campaigns as cp
    from medeval.demo.build import DEMO_ACCOUNTS

    assert again["campaign"] == s["campaign"]
    for username, password, role in DEMO_ACCOUNTS:
        assert auth.authenticate(db, username, password).role == role
    prog = cp.campaign_progress(db, s["campaign"], actor=None)
    assert prog["k"] == 3 and prog["items"] > 30
    assert sorted(a["annotator"] for a in prog["annotators"]) == ["doctor1", "doctor2", "doctor3"]
    # ... left ungraded for the demo doctors; the simulated clinicians' two campaigns come last (the newest)
    assert db.conn.execute("SELECT count(*) FROM grade_annotations g JOIN campaign_items ci ON ci.id = g.item_id "
                           "WHERE ci.campaign_id = ?", (s["campaign"],)).fetchone()[0] == 0
    from medeval.demo import clinicians as sc

    from medeval.demo.active_demo import ACTIVE_CAMPAIGN, PAPER_CAMPAIGN

    assert [c["name"] for c in cp.list_campaigns(db, actor=None)] == [
        "Demo calibration round", sc.VALIDATION_CAMPAIGN, PAPER_CAMPAIGN, ACTIVE_CAMPAIGN, sc.CALIBRATION_CAMPAIGN]
    # the validation sample shares no item with the campaign whose grades calibrated the active set (issue 21 §7)
    from medeval.calibration.validation import overlap

    vid, kid = (s["clinicians"]["campaigns"][n] for n in (sc.VALIDATION_CAMPAIGN, sc.CALIBRATION_CAMPAIGN))
    ov = overlap(db, vid)
    assert ov["calibration_campaigns"] == [kid] and ov["shared_items"] == 0
    assert not db.conn.execute("SELECT 1 FROM campaign_items a JOIN campaign_items b ON a.response_id = b.response_id "
                               "WHERE a.campaign_id = ? AND b.campaign_id = ?", (vid, kid)).fetchone()
    readme = (ROOT / "README.md").read_text()
    assert all(f"`{u}`" in readme and f"`{p}`" in readme for u, p, _ in DEMO_ACCOUNTS)
    assert "sim_clin_" in readme and "SIMULATED" in readme  # the README says the clinicians are simulated


def test_the_demo_has_no_placeholder_answers():
    """Issue 32 §8: no model answer of the demo is a placeholder a doctor would read as a bug ("None", "null",
    "[]", "True", empty): every generated answer, the refusals included."""
    placeholders = {"none", "null", "nan", "[]", "{}", "true", "false", ""}
    answers = [r["response"] for r in generate_responses(load_kb())]
    assert not [a for a in answers if a.strip().lower() in placeholders]
