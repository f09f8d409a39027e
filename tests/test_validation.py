"""Clinicians vs the machine (MedDisKEval Table 2) on a hand-built campaign, and the validation sample's overlap
with the campaigns that calibrated the set it validates (issue 21 §4, §7).

Every Spearman is recomputed here with scipy.stats.spearmanr from the grades the test submitted and the scores
and tiers read straight from the database -- never from medeval's own rows.
"""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from scipy import stats

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation.campaigns import sampling as smp
from medeval.calibration import validation as val
from medeval.core.errors import MedevalError
from medeval.engine import embeddings
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports import dashboard as dash
from tests.conftest import write

PW = "correct horse battery"
ANNOTATORS = ("va", "vb", "vc")

# three diseases x (two enumerated, one declarative, one numeric aspect) x three models: 27 text items, 9 numeric
KB = """disease,aspect,reference
感冒,Primary Symptoms,咳嗽;打喷嚏;流鼻涕;发热
感冒,药物,对乙酰氨基酚;布洛芬
感冒,Physical Examinations,咽部充血，扁桃体无肿大
感冒,危重等级,4
肺炎,Primary Symptoms,发热;咳嗽;咳痰;胸痛
肺炎,药物,阿莫西林;头孢曲松;阿奇霉素
肺炎,Physical Examinations,肺部听诊可闻及湿啰音，叩诊呈浊音
肺炎,危重等级,2
糖尿病,Primary Symptoms,多饮;多尿;多食;体重下降
糖尿病,药物,二甲双胍;胰岛素;格列美脲
糖尿病,Physical Examinations,空腹血糖≥7.0 mmol/L，糖化血红蛋白升高
糖尿病,危重等级,3
"""
MODELS = "model,backbone,kind\nGood,,general\nHalf,,general\nPoor,Good,medical\n"
ANSWERS = {
    "Good": {("感冒", "Primary Symptoms"): "咳嗽、打喷嚏、流鼻涕、发热", ("感冒", "Medications"): "对乙酰氨基酚、布洛芬",
             ("感冒", "Physical Examinations"): "咽部充血，扁桃体无肿大", ("感冒", "Severity Level"): "危重等级为4级",
             ("肺炎", "Primary Symptoms"): "发热、咳嗽、咳痰、胸痛", ("肺炎", "Medications"): "阿莫西林、阿奇霉素",
             ("肺炎", "Physical Examinations"): "肺部可闻及湿啰音，叩诊浊音", ("肺炎", "Severity Level"): "2",
             ("糖尿病", "Primary Symptoms"): "多饮、多尿、多食和体重下降", ("糖尿病", "Medications"): "二甲双胍、胰岛素",
             ("糖尿病", "Physical Examinations"): "空腹血糖≥7.0 mmol/L", ("糖尿病", "Severity Level"): "3级"},
    "Half": {("感冒", "Primary Symptoms"): "咳嗽、头痛", ("感冒", "Medications"): "布洛芬、阿司匹林",
             ("感冒", "Physical Examinations"): "咽部充血", ("感冒", "Severity Level"): "危重等级：2",
             ("肺炎", "Primary Symptoms"): "发热和咳嗽", ("肺炎", "Medications"): "头孢曲松",
             ("肺炎", "Physical Examinations"): "听诊有啰音", ("肺炎", "Severity Level"): "2级",
             ("糖尿病", "Primary Symptoms"): "口渴、多尿", ("糖尿病", "Medications"): "二甲双胍",
             ("糖尿病", "Physical Examinations"): "血糖升高", ("糖尿病", "Severity Level"): "一级"},
    "Poor": {("感冒", "Primary Symptoms"): "骨折", ("感冒", "Medications"): "无",
             ("感冒", "Physical Examinations"): "建议就医", ("感冒", "Severity Level"): "1",
             ("肺炎", "Primary Symptoms"): "脱发", ("肺炎", "Medications"): "维生素C",
             ("肺炎", "Physical Examinations"): "不清楚", ("肺炎", "Severity Level"): "4",
             ("糖尿病", "Primary Symptoms"): "I don't know", ("糖尿病", "Medications"): "多喝热水",
             ("糖尿病", "Physical Examinations"): "无特殊", ("糖尿病", "Severity Level"): "重度"},
}


def _embedding():
    """Character-count vectors under the model id the set was calibrated for (no model is loaded)."""
    from tests.test_scoring import CountingBackend

    return CountingBackend(th.TABLE12.embedding_model, dims=32)


@pytest.fixture
def scored(db, tmp_path, monkeypatch):
    """36 responses scored with BLEU-1, ROUGE-1, exact match and cosine, graded under Table 12's cut-offs."""
    rows = "\n".join(f"{m},{d},{a},{t}" for m, answers in ANSWERS.items() for (d, a), t in answers.items())
    import_files(db, kb=write(tmp_path / "kb.csv", KB), models=write(tmp_path / "models.csv", MODELS),
                 responses=write(tmp_path / "responses.csv", "model,disease,aspect,response\n" + rows + "\n"))
    monkeypatch.setitem(embeddings.backends().loaded, "t2-fake", _embedding())
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    score_db(db, metrics=["cosine"], embedding_model="t2-fake")
    (tok,) = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'bleu1'")}
    v = th.store(db, th.ThresholdSet(name="Table 12 cut-offs", cutoffs=dict(th.TABLE12.cutoffs), tokenizer=tok,
                                     embedding_model=th.TABLE12.embedding_model), created_by="test")
    th.activate(db, v)
    for name in ANNOTATORS:
        auth.add_user(db, name, PW, "annotator")
    auth.add_user(db, "res", PW, "researcher")
    return db, v


def _types(db) -> dict[int, str]:
    return dict(db.conn.execute("SELECT r.id, k.aspect_type FROM responses r JOIN kb_entries k ON k.id = r.kb_id"))


def _grade_everything(db, cid, tier_of) -> dict[int, list[int]]:
    """Every annotator grades every item with ``tier_of(response id, annotator)``; returns response -> tiers."""
    given: dict[int, list[int]] = {}
    for name in ANNOTATORS:
        u = auth.get_user(db, name)
        while (item := cp.next_item(db, u, cid)) is not None:
            rid = db.conn.execute("SELECT response_id FROM campaign_items WHERE id = ?", (item,)).fetchone()[0]
            t = tier_of(rid, name)
            cp.submit_grade(db, u, item, tier=t, client_token=f"{name}-{item}")
            given.setdefault(rid, []).append(t)
    return given


def _db_value(db, rid, metric, against, version):
    if against == "score":
        row = db.conn.execute("SELECT score FROM scores WHERE response_id = ? AND metric = ?", (rid, metric)).fetchone()
    else:
        row = db.conn.execute("SELECT tier FROM grades WHERE response_id = ? AND metric = ? AND version = ?",
                              (rid, metric, version)).fetchone()
    return None if row is None else row[0]


def test_table2_rows_keep_numeric_items_out_of_the_metric_rows(scored):
    """Numeric items graded by clinicians exactly as the exact-match tier: counted under each metric's name they
    would lift every pooled row; here they get one exact_match row (rho = 1 on 9 items) and the metric rows
    cover the 27 enumerated and declarative items, each rho equal to scipy's on the same vectors."""
    db, v = scored
    types = _types(db)
    assert sorted(types.values()).count("numeric") == 9 and len(types) == 36
    cid = cp.create_random_campaign(db, "table 2", 36, list(ANNOTATORS), k=3, seed=4, actor=None)
    rng = np.random.default_rng(7)
    noise = {rid: int(rng.choice([-1, 0, 0, 1])) for rid in types}

    def tier_of(rid, name):
        if types[rid] == "numeric":  # the clinicians agree with the exact match
            return int(_db_value(db, rid, "exact_match", "tier", v))
        base = _db_value(db, rid, "rouge1", "tier", v)
        return int(np.clip(base + (noise[rid] if name != "vc" else 0), 0, 2))

    given = _grade_everything(db, cid, tier_of)
    cons = {rid: float(statistics.median(t)) for rid, t in given.items()}
    rows = val.machine_agreement(db, cid, actor=None)
    by = {(r["metric"], r["aspect_type"], r["against"]): r for r in rows}
    text = [r for r in cons if types[r] in ("enumerated", "declarative")]
    numeric = [r for r in cons if types[r] == "numeric"]
    assert len(text) == 27 and len(numeric) == 9
    # no metric row on numeric items, no metric row called "all"
    assert not any(r["metric"] in ("bleu1", "rouge1", "cosine") and r["aspect_type"] in ("numeric", "all")
                   for r in rows)
    for metric in ("bleu1", "rouge1", "cosine"):
        for group, members in (("enumerated", [r for r in text if types[r] == "enumerated"]),
                               ("declarative", [r for r in text if types[r] == "declarative"]),
                               ("enumerated+declarative", text)):
            for against in ("score", "tier"):
                row = by[(metric, group, against)]
                x = [cons[r] for r in members]
                y = [_db_value(db, r, metric, against, v) for r in members]
                want = stats.spearmanr(x, y).statistic
                assert row["n"] == len(members), (metric, group, against)
                assert row["spearman"] == pytest.approx(want, abs=1e-12), (metric, group, against)
                assert row["definition"]
    em = by[("exact_match", "numeric", "tier")]
    assert em["n"] == 9 and em["spearman"] == pytest.approx(1.0)
    assert em["spearman"] == pytest.approx(stats.spearmanr(
        [cons[r] for r in numeric], [_db_value(db, r, "exact_match", "tier", v) for r in numeric]).statistic)
    # the average row: the mean of the three metric tiers (the paper's Table 2), on the text items only
    avg = {r: np.mean([_db_value(db, r, m, "tier", v) for m in ("bleu1", "rouge1", "cosine")]) for r in text}
    row = by[("average", "enumerated+declarative", "tier")]
    assert row["n"] == 27
    assert row["spearman"] == pytest.approx(stats.spearmanr([cons[r] for r in text], [avg[r] for r in text]).statistic)
    # average over all items (explicitly defined): numeric items by their exact-match tier
    every = text + numeric
    allv = {**avg, **{r: _db_value(db, r, "exact_match", "tier", v) for r in numeric}}
    row = by[("average", "all", "tier")]
    assert row["n"] == 36 and "exact-match tier" in row["definition"]
    assert row["spearman"] == pytest.approx(stats.spearmanr([cons[r] for r in every],
                                                            [allv[r] for r in every]).statistic)
    # what relabelling did: the numeric items' exact-match tier counted as BLEU-1 inflates the pooled rho
    relabelled = stats.spearmanr([cons[r] for r in every],
                                 [_db_value(db, r, "bleu1" if r in text else "exact_match", "tier", v)
                                  for r in every]).statistic
    honest = by[("bleu1", "enumerated+declarative", "tier")]["spearman"]
    assert relabelled > honest + 0.02, (relabelled, honest)
    # the methods paragraph states every row's n and the definition of the rows
    s = dash.campaign_agreement(db, cid, actor=None, n_boot=0)
    assert "enumerated and declarative items only (enumerated+declarative: n = 27)" in s["methods"]
    assert "(exact match: n = 9)" in s["methods"] and "mean of the three metric tiers" in s["methods"]
    assert f"threshold set v{v}" in s["methods"]


def test_a_campaign_without_numeric_items_has_no_exact_match_or_all_row(scored):
    db, v = scored
    types = _types(db)
    cid = cp.create_random_campaign(db, "text only", 10, list(ANNOTATORS), k=2, seed=1, actor=None,
                                    aspect_types=("enumerated",))
    _grade_everything(db, cid, lambda rid, name: int(_db_value(db, rid, "bleu1", "tier", v)))
    rows = val.machine_agreement(db, cid, actor=None)
    assert {r["aspect_type"] for r in rows} == {"enumerated"}
    assert {r["metric"] for r in rows} == {"bleu1", "rouge1", "cosine", "average"}
    assert all(r["n"] == 10 for r in rows)
    assert all(types[r] == "enumerated" for (r,) in db.conn.execute(
        "SELECT response_id FROM campaign_items WHERE campaign_id = ?", (cid,)))


# ---------------------------------------------------------------- the validation sample and calibration (§7)

def _calibrated_from(db, campaign_id, base, **prov) -> int:
    """A set published from ``campaign_id`` (its provenance as :func:`cutoffs.publish` writes it), active."""
    from medeval.calibration import cutoffs as cal

    b = th.load(db, base)
    changes = {("rouge1", "enumerated"): (0.1, 0.6), ("rouge1", "declarative"): (0.1, 0.5)}
    if prov.pop("all_strata", False):
        changes = {k: v for k, v in b.cutoffs.items() if k[0] != "exact_match"}
    return cal.publish_set(db, changes, name=f"from #{campaign_id}", base_version=base,
                           provenance={"source": cal.campaign_source(db, campaign_id), **prov})


def _items(db, cid) -> set[int]:
    return {r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?", (cid,))}


def test_the_validation_sample_leaves_out_the_calibration_campaigns_items(scored):
    db, v = scored
    calib = cp.create_random_campaign(db, "calibration", 20, list(ANNOTATORS), k=2, seed=3, actor=None)
    cal_v = _calibrated_from(db, calib, v)
    assert smp.calibration_campaigns(db, th.load(db, cal_v)) == [calib]
    # default: none of the calibration items; the campaign records what it validates and what was left out
    vid = cp.create_random_campaign(db, "validation", 16, list(ANNOTATORS), k=2, seed=3, actor=None)
    assert not _items(db, vid) & _items(db, calib) and len(_items(db, vid)) == 16
    cfg = next(c for c in cp.list_campaigns(db, actor=None) if c["id"] == vid)["config"]
    assert cfg["validates_version"] == cal_v and cfg["calibration_campaigns"] == [calib]
    assert cfg["allow_overlap"] is False and cfg["excluded_responses"] == 20
    ov = val.overlap(db, vid)
    assert ov["shared_items"] == 0 and ov["calibration_campaigns"] == [calib]
    assert f"#{calib}" in ov["text"] and "0 of this campaign's 16 items" in ov["text"]
    # what the New campaign page previews
    pool = cp.validation_pool(db)
    assert pool["left_out"] == 20 and len(pool["pool"]) == 16 and pool["scored"] == 36
    assert pool["text"] == (f"20 of 36 scored responses left out as items of campaign(s) #{calib}, whose grades "
                            f"calibrated threshold set v{cal_v}; 16 can be drawn")
    assert cp.validation_pool(db, allow_overlap=True)["left_out"] == 0
    assert cp.validation_pool(db, version=v)["left_out"] == 0  # the set before: nothing calibrated it here
    # asking for more than the rest holds: a clear error naming the flag
    with pytest.raises(MedevalError, match="allow-overlap"):
        cp.create_random_campaign(db, "too big", 17, list(ANNOTATORS), k=2, seed=3, actor=None)
    # --allow-overlap: the whole pool, recorded, and the overlap counted and stated
    both = cp.create_random_campaign(db, "overlapping", 36, list(ANNOTATORS), k=2, seed=3, actor=None,
                                     allow_overlap=True)
    ov = val.overlap(db, both)
    assert ov["shared_items"] == len(_items(db, both) & _items(db, calib)) == 20
    assert ov["allow_overlap"] is True and "overlap was allowed" in ov["text"]
    with pytest.raises(MedevalError, match="true or false"):
        cp.create_random_campaign(db, "x", 2, list(ANNOTATORS), k=2, actor=None, allow_overlap="yes")


def test_a_set_without_a_calibration_campaign_has_nothing_to_exclude(scored):
    db, v = scored
    assert smp.calibration_campaigns(db, th.load(db, v)) == []
    assert smp.calibration_campaigns(db, th.load(db, 1)) == []  # Table 12, published by the paper
    vid = cp.create_random_campaign(db, "validation", 36, list(ANNOTATORS), k=2, seed=0, actor=None)
    ov = val.overlap(db, vid)
    assert ov["shared_items"] == 0 and ov["calibration_campaigns"] == []
    assert "records no calibration campaign" in ov["text"] and "no item had to be excluded" in ov["text"]


def test_an_old_validation_campaign_that_shares_items_is_counted_and_said(scored):
    """A database from before this rule: the validation sample was drawn first, the set calibrated on a campaign
    sharing items with it afterwards. The report counts the shared items and says what that means."""
    db, v = scored
    vid = cp.create_random_campaign(db, "old validation", 18, list(ANNOTATORS), k=2, seed=11, actor=None)
    calib = cp.create_random_campaign(db, "calibration", 18, list(ANNOTATORS), k=2, seed=12, actor=None)
    shared = len(_items(db, vid) & _items(db, calib))
    assert shared > 0
    # drawn before the rule, the campaign recorded neither the overlap choice nor a set it validates: it is read
    # against the active set, the one calibrated on the sharing campaign
    db.conn.execute("UPDATE campaigns SET config = json_remove(config, '$.allow_overlap', '$.validates_version') "
                    "WHERE id = ?", (vid,))
    db.conn.commit()
    cal_v = _calibrated_from(db, calib, v)
    ov = val.overlap(db, vid)
    assert ov["shared_items"] == shared and ov["allow_overlap"] is None
    assert f"{shared} of this campaign's 18 items are also items there" in ov["text"]
    assert "not independent" in ov["text"]
    # the calibration campaign (drawn as a random sample, so it records v as the set it validates) read against
    # the set its own grades calibrated says so; by default it is read against v, which no campaign calibrated
    own = val.overlap(db, calib, version=cal_v)
    assert own["own_grades_calibrated"] and "not an independent validation" in own["text"]
    assert val.overlap(db, calib)["version"] == v and not val.overlap(db, calib)["own_grades_calibrated"]


def test_calibration_campaigns_follow_kept_and_adopted_cut_offs(scored):
    db, v = scored
    a = cp.create_random_campaign(db, "A", 6, list(ANNOTATORS), k=2, seed=1, actor=None, allow_overlap=True)
    b = cp.create_random_campaign(db, "B", 6, list(ANNOTATORS), k=2, seed=2, actor=None, allow_overlap=True)
    va = _calibrated_from(db, a, v)
    vb = _calibrated_from(db, b, va)  # two strata from B, the rest kept from A's set
    assert smp.calibration_campaigns(db, th.load(db, vb)) == sorted([a, b])
    vc = _calibrated_from(db, b, va, all_strata=True)  # every stratum recalibrated on B: A's grades left nothing
    assert smp.calibration_campaigns(db, th.load(db, vc)) == [b]
    adopted = th.adopt(db, vb, "st:bge:123", created_by="test")  # a copy for another model keeps A's and B's
    assert smp.calibration_campaigns(db, th.load(db, adopted)) == sorted([a, b])


def test_cli_create_random_allow_overlap_and_machine_agreement(scored, db_path):
    from click.testing import CliRunner

    from medeval.cli import main

    db, v = scored
    calib = cp.create_random_campaign(db, "calibration", 20, list(ANNOTATORS), k=2, seed=3, actor=None)
    _calibrated_from(db, calib, v)
    run = lambda *a: CliRunner().invoke(main, ["campaign", *map(str, a), "--db", str(db_path)])  # noqa: E731
    r = run("create-random", "--name", "v", "--annotators", "va,vb", "--n", "16", "--k", "2")
    assert r.exit_code == 0, r.output
    assert "0 of this campaign's 16 items are also items there" in r.output
    r = run("create-random", "--name", "v2", "--annotators", "va,vb", "--n", "17", "--k", "2")
    assert r.exit_code == 1 and r.output.startswith("Error: ") and "--allow-overlap keeps them" in r.output
    r = run("create-random", "--name", "v3", "--annotators", "va,vb", "--n", "36", "--k", "2", "--allow-overlap")
    assert r.exit_code == 0 and "20 of this campaign's 36 items" in r.output and "overlap was allowed" in r.output
    cid = int(r.output.split()[1].rstrip(":"))
    _grade_everything(db, cid, lambda rid, name: int(_db_value(db, rid, "rouge1", "tier", v) or 0)
                      if _types(db)[rid] != "numeric" else int(_db_value(db, rid, "exact_match", "tier", v)))
    r = run("machine-agreement", cid)  # click >= 8.2: stdout and stderr kept apart
    assert r.exit_code == 0
    rows = json.loads(r.stdout)
    assert {(x["metric"], x["aspect_type"]) for x in rows if x["aspect_type"] in ("numeric", "all")} == {
        ("exact_match", "numeric"), ("average", "all")}
    assert all(isinstance(x["n"], int) and x["n"] > 0 for x in rows)
    assert "overlap with calibration:" in r.stderr and "20 of this campaign's 36 items" in r.stderr


# ---------------------------------------------------------------- the set a validation campaign validates


def _tier_by_rouge(db, v):
    return lambda rid, name: (int(_db_value(db, rid, "exact_match", "tier", v)) if _types(db)[rid] == "numeric"
                              else int(_db_value(db, rid, "rouge1", "tier", v)))


def test_table2_is_computed_under_the_validated_set_not_the_active_one(scored):
    """A random validation campaign drawn while v was active validates v. A set published afterwards (v2, every
    ROUGE-1 answer in the top tier) becomes active: the campaign's Table 2 -- in the library, the agreement report
    and the page's summary alike -- stays computed under v, and says so; v2 is used only when asked for."""
    db, v = scored
    cid = cp.create_random_campaign(db, "validation", 36, list(ANNOTATORS), k=3, seed=5, actor=None)
    _grade_everything(db, cid, _tier_by_rouge(db, v))
    cut = dict(th.TABLE12.cutoffs)
    cut[("rouge1", "enumerated")] = cut[("rouge1", "declarative")] = (0.0, 0.0)
    (tok,) = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'rouge1'")}
    v2 = th.store(db, th.ThresholdSet(name="lenient", cutoffs=cut, tokenizer=tok,
                                      embedding_model=th.TABLE12.embedding_model), created_by="test")
    th.activate(db, v2)
    assert th.active(db).version == v2
    ts, source = val.validated_set(db, cid)
    assert (ts.version, source) == (v, "validated")

    def rouge_tier(rows):
        return next(r for r in rows if r["metric"] == "rouge1" and r["aspect_type"] == "enumerated"
                    and r["against"] == "tier")

    default = val.machine_agreement(db, cid, actor=None)
    under_v = val.machine_agreement(db, cid, version=v, actor=None)
    under_v2 = val.machine_agreement(db, cid, version=v2, actor=None)
    assert default == under_v
    # the clinicians gave exactly v's ROUGE-1 tier: rho = 1 under v; under v2 every tier is 2 -> undefined
    assert rouge_tier(under_v)["spearman"] == pytest.approx(1.0)
    assert rouge_tier(under_v2)["spearman"] is None
    s = dash.campaign_agreement(db, cid, actor=None, n_boot=0)
    assert s["machine"] == under_v
    assert s["machine_version"]["version"] == v and s["machine_version"]["source"] == "validated"
    assert f"threshold set v{v}" in s["methods"] and "the set this validation campaign validates" in s["methods"]
    assert val.overlap(db, cid)["version"] == v


def test_a_campaign_that_validates_no_set_is_read_under_the_active_one_and_says_so(scored):
    db, v = scored
    cid = cp.create_random_campaign(db, "validation", 12, list(ANNOTATORS), k=2, seed=6, actor=None)
    db.conn.execute("UPDATE campaigns SET config = json_remove(config, '$.validates_version') WHERE id = ?", (cid,))
    db.conn.commit()
    ts, source = val.validated_set(db, cid)
    assert (ts.version, source) == (v, "active")
    _grade_everything(db, cid, _tier_by_rouge(db, v))
    s = dash.campaign_agreement(db, cid, actor=None, n_boot=0)
    assert s["machine_version"]["source"] == "active" and "the active set" in s["methods"]


# ---------------------------------------------------------------- two medians, two names


def test_lower_median_and_mean_of_middle_are_two_consensus_methods(scored):
    """Two annotators per item who split 0 / 1: the lower median is 0 (a tier someone gave), the mean of the two
    middle tiers 0.5; the library's bare "median" is the lower median; every report names the one used."""
    db, v = scored
    cid = cp.create_random_campaign(db, "split", 8, ["va", "vb"], k=2, seed=2, actor=None)
    _grade_everything(db, cid, lambda rid, name: 0 if name == "va" else 1)
    low = val.consensus_tiers(db, cid, "lower-median")
    mid = val.consensus_tiers(db, cid, "mean-of-middle")
    assert set(low.values()) == {0.0} and set(mid.values()) == {0.5} and len(low) == 8
    assert val.consensus_tiers(db, cid, "median") == low == val.consensus_tiers(db, cid)
    with pytest.raises(MedevalError, match="lower-median, mean-of-middle, majority, adjudicated"):
        val.consensus_tiers(db, cid, "mean")
    default = dash.campaign_agreement(db, cid, actor=None, n_boot=0)
    assert default["consensus"] == "lower-median" and "lower median clinician tier" in default["methods"]
    mean = dash.campaign_agreement(db, cid, actor=None, n_boot=0, consensus="mean-of-middle")
    assert mean["consensus"] == "mean-of-middle" and "mean of the two middle tiers" in mean["methods"]
    from medeval.reports.agreement_report import render_html

    assert "Consensus of the clinicians: lower median (the lower median of the annotators" in render_html(default)
    assert "Consensus of the clinicians: mean of the two middle tiers" in render_html(mean)


def test_report_agreement_refuses_a_bare_median_and_calibrate_reads_it_as_the_lower_median(scored, db_path,
                                                                                           tmp_path):
    from click.testing import CliRunner

    from medeval.cli import main

    db, v = scored
    cid = cp.create_random_campaign(db, "split", 8, ["va", "vb"], k=2, seed=2, actor=None)
    _grade_everything(db, cid, lambda rid, name: 0 if name == "va" else 1)
    r = CliRunner().invoke(main, ["report-agreement", "--db", str(db_path), "--campaign", str(cid), "--out",
                                  str(tmp_path / "rep"), "--no-pdf", "--n-boot", "0", "--consensus", "median"])
    assert r.exit_code == 1 and "ambiguous" in r.output
    assert "lower-median" in r.output and "mean-of-middle" in r.output
    assert not (tmp_path / "rep").exists()
    r = CliRunner().invoke(main, ["report-agreement", "--db", str(db_path), "--campaign", str(cid), "--out",
                                  str(tmp_path / "rep"), "--no-pdf", "--n-boot", "0", "--consensus", "mean-of-middle"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "rep" / "summary.json").read_text())["consensus"] == "mean-of-middle"
    # calibrate: the two spellings give the same (lower-median) consensus; a cut-off needs a tier someone gave
    out = [CliRunner().invoke(main, ["calibrate", "--db", str(db_path), "--campaign", str(cid), "--n-boot", "0",
                                     "--consensus", c]) for c in ("median", "lower-median")]
    assert all(o.exit_code == 0 for o in out), out[0].output
    assert out[0].stdout == out[1].stdout


# ---------------------------------------------------------------- one model's cosine under two scorer ids


def _cosine_graded_by(db, version) -> dict[int, str]:
    return dict(db.conn.execute("SELECT response_id, scorer FROM grades WHERE version = ? AND metric = 'cosine'",
                                (version,)))


def test_cosine_with_and_without_t2s_is_graded_by_the_conversion_the_set_records(scored, monkeypatch):
    """The fixture scored cosine with the conversion (``+t2s``, first); scored again without it, each response has
    both. A set recording ``+t2s`` (its tokenizer id) grades the converted scores, one recording none the others --
    whichever was stored first and whatever the setting is when grading runs."""
    db, v = scored
    score_db(db, metrics=["cosine"], embedding_model="t2-fake", t2s=False)
    model = th.TABLE12.embedding_model
    ids = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'cosine'")}
    assert ids == {model + "+t2s", model}
    (tok,) = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'rouge1'")}
    assert tok.endswith("+t2s")
    monkeypatch.setenv("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", "0")  # the setting of the moment decides nothing
    with_t2s = th.store(db, th.ThresholdSet(name="t2s", cutoffs=dict(th.TABLE12.cutoffs), tokenizer=tok,
                                            embedding_model=model), created_by="test")
    without = th.store(db, th.ThresholdSet(name="as written", cutoffs=dict(th.TABLE12.cutoffs),
                                           tokenizer=tok[: -len("+t2s")], embedding_model=model), created_by="test")
    th.grade_db(db, with_t2s)
    th.grade_db(db, without)
    a, b = _cosine_graded_by(db, with_t2s), _cosine_graded_by(db, without)
    text_items = sum(1 for t in _types(db).values() if t != "numeric")
    assert len(a) == len(b) == text_items
    assert set(a.values()) == {model + "+t2s"} and set(b.values()) == {model}
    # Table 2 reads the same score the grade came from
    cid = cp.create_random_campaign(db, "validation", 36, list(ANNOTATORS), k=2, seed=8, actor=None)
    _grade_everything(db, cid, _tier_by_rouge(db, v))
    score = dict(db.conn.execute("SELECT response_id, score FROM scores WHERE metric = 'cosine' AND scorer = ?",
                                 (model,)))
    cons = val.consensus_tiers(db, cid)
    row = next(r for r in val.machine_agreement(db, cid, version=without, actor=None)
               if r["metric"] == "cosine" and r["aspect_type"] == "enumerated" and r["against"] == "score")
    ids_e = [rid for rid in cons if _types(db)[rid] == "enumerated"]
    assert row["spearman"] == pytest.approx(stats.spearmanr([cons[r] for r in ids_e],
                                                            [score[r] for r in ids_e]).statistic, abs=1e-12)


def test_two_fingerprints_of_a_local_model_are_not_graded_by_whichever_came_first(scored):
    """A set for ``other/m3e-base`` matches local directories named m3e-base. A response scored by one fingerprint
    is graded by it; one scored by two (equally close: the set names neither) is not graded, and cosine_pick says
    which ids tie. The leaderboard's count of a set that is not active agrees with the stored grades."""
    from medeval.reports.leaderboard import live_tier_counts
    from medeval.reports.tier_report import tier_counts

    db, v = scored
    rids = sorted(r for r, t in _types(db).items() if t == "enumerated")[:4]
    rows = [(rids[0], "st:m3e-base:aaaa+t2s", 0.9), (rids[1], "st:m3e-base:aaaa+t2s", 0.5),
            (rids[1], "st:m3e-base:bbbb+t2s", 0.1), (rids[2], "st:m3e-base:bbbb+t2s", 0.2),
            (rids[2], "st:m3e-base:bbbb", 0.95)]
    db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'cosine', ?, ?)", rows)
    db.conn.commit()
    (tok,) = {s for (s,) in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric = 'rouge1'")}
    ts = th.ThresholdSet(name="local", cutoffs=dict(th.TABLE12.cutoffs), tokenizer=tok,
                         embedding_model="other/m3e-base")
    version = th.store(db, ts, created_by="test")
    th.grade_db(db, version)
    graded = _cosine_graded_by(db, version)
    tiers = dict(db.conn.execute("SELECT response_id, tier FROM grades WHERE version = ? AND metric = 'cosine'",
                                 (version,)))
    assert graded == {rids[0]: "st:m3e-base:aaaa+t2s", rids[2]: "st:m3e-base:bbbb+t2s"}
    assert tiers == {rids[0]: 2, rids[2]: 0}  # 0.9 >= 0.75; 0.2 < 0.35 (the +t2s score, not 0.95 without it)
    assert th.cosine_pick(ts, ["st:m3e-base:aaaa+t2s", "st:m3e-base:bbbb+t2s"]) == (
        None, ["st:m3e-base:aaaa+t2s", "st:m3e-base:bbbb+t2s"])
    assert th.cosine_pick(ts, ["st:m3e-base:bbbb", "st:m3e-base:bbbb+t2s"]) == ("st:m3e-base:bbbb+t2s", [])
    assert th.cosine_pick(ts, [th.TABLE12.embedding_model + "+t2s"]) == (None, [])  # another model
    live = live_tier_counts(db, version)
    stored = tier_counts(db, version)
    assert {k: c for k, c in live.items() if k[2] == "cosine"} == {k: c for k, c in stored.items() if k[2] == "cosine"}
    from medeval.reports import scorer_notes

    notes = scorer_notes.ungraded_notes(scorer_notes.scorers(db, th.load(db, version)))
    assert any(n.startswith("cosine of 1 response not graded") and "fingerprint aaaa" in n
               and "fingerprint bbbb" in n for n in notes)
    assert th.cosine_undetermined(db, th.load(db, version)) == {
        "responses": 1, "scorers": ["st:m3e-base:aaaa+t2s", "st:m3e-base:bbbb+t2s"]}
