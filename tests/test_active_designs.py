"""Calibration v2 in active campaigns (issue 24): the estimator and the design recorded per campaign, the next round
drawn by propose_items, old campaigns unchanged, the estimator named in provenance and methods, and every setting of
a web-started active campaign reaching it (issue 23 §7)."""

import json

import numpy as np
import pytest

from medeval.accounts import auth
from medeval.annotation.campaigns import assignment
from medeval.annotation.campaigns.sampling import stratum_pool
from medeval.calibration import active, designs, rounds, tuning
from medeval.calibration import cutoffs as cal
from medeval.core.errors import MedevalError
from medeval.engine import thresholds as th
from medeval.store.db import connect
from tests.conftest import db_dump, invoke
from tests.test_active_rounds import DOCS, PW, _cfg, _grade_everything, pool_db, pool_template  # noqa: F401


def _round_items(db, cid, round_):
    return sorted(r for r, s in db.conn.execute("SELECT response_id, strata FROM campaign_items WHERE campaign_id = ?",
                                                (cid,)) if json.loads(s)[0]["round"] == round_)


def _strip(db, cid, *keys):
    """Make a campaign look like one stored before calibration v2: its config without ``keys``."""
    cfg = json.loads(db.conn.execute("SELECT config FROM campaigns WHERE id = ?", (cid,)).fetchone()[0])
    for k in keys:
        cfg.pop(k)
    db.conn.execute("UPDATE campaigns SET config = ? WHERE id = ?", (json.dumps(cfg), cid))
    db.conn.commit()


def test_a_new_active_campaign_records_the_smooth_estimator_and_the_adaptive_design(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "v2", _cfg(), DOCS, actor=res)
        cfg = json.loads(db.conn.execute("SELECT config FROM campaigns WHERE id = ?", (cid,)).fetchone()[0])
        assert (cfg["estimator"], cfg["design"]) == ("smooth", "adaptive")
        _grade_everything(db, cid)
        st = rounds.round_status(db, cid, actor=res)
        assert (st["estimator"], st["design"]) == ("smooth", "adaptive")
        out = rounds.next_round(db, cid, actor=res)
        assert (out["estimator"], out["design"], out["items"]) == ("smooth", "adaptive", 20)


@pytest.mark.parametrize("bad, message", [({"estimator": "median"}, "estimator 'median' is not one of smooth, "),
                                          ({"design": "bandit"}, "design 'bandit' is not one of adaptive, ")])
def test_an_unknown_estimator_or_design_is_refused_with_nothing_stored(pool_db, bad, message):
    before = db_dump(pool_db)
    with connect(pool_db) as db:
        with pytest.raises(MedevalError, match=message):
            assignment.create_active_campaign(db, "bad", _cfg(**bad), DOCS, actor=auth.get_user(db, "res"))
    assert db_dump(pool_db) == before


def test_a_campaign_stored_before_v2_keeps_the_accuracy_search_and_the_bootstrap_rounds(pool_db):
    """Its config has no estimator or design: its cut-offs, intervals and next round are exactly what the accuracy
    search and the bootstrap-kernel proposal give -- the same as a campaign that names them explicitly."""
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        old = assignment.create_active_campaign(db, "old", _cfg(seed=9), DOCS, actor=res)
        _strip(db, old, "estimator", "design")
        named = assignment.create_active_campaign(db, "named", _cfg(seed=9, estimator="accuracy", design="active"),
                                                  DOCS, actor=res)
        assert _round_items(db, old, 1) == _round_items(db, named, 1)  # the same seed round
        for cid in (old, named):
            _grade_everything(db, cid)
        st_old, st_named = (rounds.round_status(db, c, actor=res) for c in (old, named))
        assert (st_old["estimator"], st_old["design"]) == ("accuracy", "active")
        s_old, s_named = st_old["strata"][0], st_named["strata"][0]
        # the numbers of the code before v2: active.spread on the graded items, seeded as the rounds seed it
        (rids, scores, tiers), = rounds.graded_items(db, old).values()
        cfg = json.loads(db.conn.execute("SELECT config FROM campaigns WHERE id = ?", (old,)).fetchone()[0])
        ref = active.spread("rouge1", scores, tiers, criterion="accuracy", n_boot=200,
                            rng=np.random.default_rng([cfg["seed"], 7, len(scores), 0]))
        assert s_old["cut_offs"] == list(ref.cut_offs) == s_named["cut_offs"]
        assert s_old["low_ci95"] == [round(x, 6) for x in ref.ci95("low")] == s_named["low_ci95"]
        rounds.next_round(db, old, actor=res)
        rounds.next_round(db, named, actor=res)
        assert _round_items(db, old, 2) == _round_items(db, named, 2)
        pool = stratum_pool(db, th.active(db), "rouge1", "enumerated")
        pool_rids = np.array([r for r, _ in pool])
        taken = np.nonzero(np.isin(pool_rids, _round_items(db, old, 1)))[0]
        want = active.propose("rouge1", np.array([s for _, s in pool]), taken, ref, m=20, width=0.1, explore=0.2,
                              rng=np.random.default_rng([cfg["seed"], 11, 2, 0]))
        assert _round_items(db, old, 2) == sorted(pool_rids[want].tolist())


def test_the_next_round_of_an_adaptive_campaign_is_what_propose_items_picks(pool_db, monkeypatch):
    import medeval.calibration.adaptive as adaptive

    calls = []
    real = adaptive.propose_items

    def spy(pool_scores, graded_idx, graded_tiers, m, rng, **kw):
        out = real(pool_scores, graded_idx, graded_tiers, m, rng, **kw)
        calls.append((np.array(pool_scores), np.array(graded_idx), np.array(graded_tiers), m, kw, np.array(out)))
        return out

    monkeypatch.setattr(adaptive, "propose_items", spy)
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "adaptive", _cfg(round_size=25, explore=0.1), DOCS, actor=res)
        _grade_everything(db, cid)
        rounds.next_round(db, cid, actor=res)
        (pool_s, g_idx, g_tiers, m, kw, picked), = calls
        assert m == 25 and kw == {"random_share": 0.1}
        assert len(g_idx) == 20 and len(pool_s) == 600  # every graded item of the seed round, the whole pool
        pool = stratum_pool(db, th.active(db), "rouge1", "enumerated")
        pool_rids = np.array([r for r, _ in pool])
        # the graded items it was given are the seed round, with their consensus tiers
        (rids, scores, tiers), = rounds.graded_items(db, cid).values()
        tier_of = dict(zip(rids.tolist(), tiers.tolist()))
        assert sorted(pool_rids[g_idx].tolist()) == _round_items(db, cid, 1)
        assert [tier_of[r] for r in pool_rids[g_idx].tolist()] == g_tiers.tolist()
        assert _round_items(db, cid, 2) == sorted(pool_rids[picked].tolist())


def test_the_smooth_estimate_of_a_round_is_smooth_cutoffs_on_every_grade(pool_db):
    """Items graded by several clinicians: the round's estimate is :func:`smooth_cutoffs` on every grade, which
    combines each item's grades into their lower median -- the same fit as on the consensus tiers."""
    from medeval.calibration import smooth_cutoffs

    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "smooth", _cfg(per_interval=5), DOCS, actor=res)
        _grade_everything(db, cid, noise=0.25)
        s = rounds.round_status(db, cid, actor=res)["strata"][0]
        (g_scores, g_tiers, items), = rounds.graded_grades(db, cid).values()
        (_, scores, _tiers), = rounds.graded_items(db, cid).values()
        assert len(set(items.tolist())) == len(scores) < len(g_scores)  # several grades an item
        fit = smooth_cutoffs(g_scores, g_tiers, items=items, ci=True)
        consensus_fit = smooth_cutoffs(scores, _tiers, ci=True)
        assert fit.cutoffs() == pytest.approx(consensus_fit.cutoffs(), abs=1e-12)
        assert fit.grades_per_item > 1 and consensus_fit.grades_per_item == 1
        assert s["cut_offs"] == pytest.approx(list(fit.cutoffs()))
        assert s["low_ci95"] == pytest.approx(list(fit.low.ci), abs=1e-6)
        assert s["widths"][1] == pytest.approx(fit.high.ci[1] - fit.high.ci[0], abs=2e-6)
        assert abs(s["cut_offs"][0] - 0.3) < 0.1 and abs(s["cut_offs"][1] - 0.7) < 0.1  # the simulated truth
        rounds.next_round(db, cid, actor=res)
        [row] = rounds.round_history(db, cid, actor=res)
        assert [row["low"], row["high"]] == pytest.approx(s["cut_offs"])


def test_an_interval_design_spreads_each_round_over_the_score_intervals(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "paper", _cfg(design="interval", estimator="accuracy",
                                                                  round_size=30), DOCS, actor=res)
        _grade_everything(db, cid)
        rounds.next_round(db, cid, actor=res)
        new = _round_items(db, cid, 2)
        scores = [db.conn.execute("SELECT score FROM scores WHERE response_id = ?", (r,)).fetchone()[0] for r in new]
        per = np.bincount(active.interval_of("rouge1", np.array(scores), 0.1), minlength=10)
        assert len(new) == 30 and per.tolist() == [3] * 10


def test_a_cosine_stratum_is_mapped_onto_the_unit_range_and_back():
    g = np.random.default_rng(3)
    scores = g.uniform(-1, 1, 400)
    tiers = (scores >= -0.2).astype(int) + (scores >= 0.5).astype(int)
    est = designs.estimate("cosine", scores, tiers, {"estimator": "smooth"}, rng=0)
    assert est.cut_offs == pytest.approx((-0.2, 0.5), abs=0.02)
    lo_ci, hi_ci = est.cis
    assert lo_ci[0] <= est.cut_offs[0] <= lo_ci[1] and hi_ci[0] <= est.cut_offs[1] <= hi_ci[1]
    curves = designs.curves("cosine", est)
    assert min(r["score"] for r in curves) < -0.9 and max(r["score"] for r in curves) > 0.9


def test_too_few_grades_or_one_tier_give_no_cut_offs_and_say_why():
    for scores, tiers in (([0.2, 0.8], [0, 2]), ([0.1, 0.5, 0.9, 0.3], [1, 1, 1, 1])):
        est = designs.estimate("rouge1", scores, tiers, {"estimator": "smooth"}, rng=0)
        assert est.cut_offs is None and est.widths() is None
        c = designs.calibrate_smooth("rouge1", "enumerated", scores, tiers)
        assert c.cut_offs is None and c.undefined_reason


@pytest.mark.parametrize("estimator, named", [("smooth", "cut-off estimator: smooth"),
                                              ("accuracy", "cut-off estimator: accuracy search")])
def test_the_published_set_and_the_methods_paragraph_name_the_estimator(pool_db, estimator, named):
    from medeval.reports.leaderboard_report import provenance_text

    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "pub", _cfg(per_interval=5, estimator=estimator), DOCS, actor=res)
        _grade_everything(db, cid, noise=0.25)
        results = designs.calibrate_rows(cal.campaign_rows(db, cid), estimator=estimator, n_boot=20)
        assert [c.criterion for c in results] == ["smooth" if estimator == "smooth" else "accuracy"]
        version = cal.publish(db, results, name=f"v2 {estimator}", source=cal.campaign_source(db, cid))
        ts = th.load(db, version)
    p = ts.provenance
    assert p["estimator"] == ("smooth" if estimator == "smooth" else "accuracy search")
    assert ("psychometric curve" in p["method"]) == (estimator == "smooth")
    assert p.get("estimator_version") == ("smooth-logistic-lapse-v3" if estimator == "smooth" else None)
    text = provenance_text({"provenance": p, "embedding_model": ts.embedding_model})
    assert named in text and f"campaign #{cid}" in text


def test_cli_create_with_an_estimator_and_a_design_and_the_rounds_name_them(pool_db):
    out = invoke("campaign", "create", "--name", "cli v2", "--annotators", ",".join(DOCS), "--metrics", "rouge1",
                 "--aspect-types", "enumerated", "--sampling", "active", "--estimator", "accuracy", "--design",
                 "interval", "--round-size", "10").output
    assert "estimator accuracy, design interval" in out
    cid = int(out.split()[1].rstrip(":"))
    with connect(pool_db) as db:
        cfg = json.loads(db.conn.execute("SELECT config FROM campaigns WHERE id = ?", (cid,)).fetchone()[0])
        assert (cfg["estimator"], cfg["design"], cfg["round_size"]) == ("accuracy", "interval", 10)
        _grade_everything(db, cid)
    assert "round 2 adds 10 items (estimator accuracy, design interval)" in invoke(
        "campaign", "next-round", "--campaign", cid).output
    assert "estimator accuracy, criterion accuracy, design interval" in invoke("campaign", "rounds", "--campaign",
                                                                              cid).output


@pytest.mark.slow  # AppTest runs the whole New campaign page
def test_every_setting_of_an_active_campaign_started_on_the_web_reaches_it(pool_db):
    """Issue 23 §7: the page's settings of an active campaign are stored as chosen, none replaced by a default."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    with connect(pool_db) as db:
        token = auth.create_session(db, auth.authenticate(db, "res", PW))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    at.switch_page("app_pages/new_campaign.py").run()
    at.text_input(key="new_name").input("主動校準 第二輪 (web)").run()
    at.multiselect(key="new_metrics").set_value(["rouge1"]).run()
    at.multiselect(key="new_types").set_value(["enumerated"]).run()
    at.number_input(key="new_k").set_value(2).run()
    at.number_input(key="new_campaign_seed").set_value(4242).run()
    at.number_input(key="new_width").set_value(0.2).run()
    at.radio(key="new_sampling").set_value("active").run()
    at.number_input(key="new_per_active").set_value(3).run()
    at.number_input(key="new_round_size").set_value(35).run()
    at.number_input(key="new_target").set_value(0.08).run()
    at.number_input(key="new_budget").set_value(150).run()
    at.number_input(key="new_explore").set_value(0.35).run()
    at.selectbox(key="new_estimator").set_value("accuracy").run()
    at.selectbox(key="new_design").set_value("interval").run()
    at.button(key="create_campaign").click().run()
    assert not at.exception and at.success
    with connect(pool_db) as db:
        kind, config = db.conn.execute("SELECT kind, config FROM campaigns").fetchone()
        n = db.conn.execute("SELECT count(*) FROM campaign_items").fetchone()[0]
        k_each = {c for (c,) in db.conn.execute("SELECT count(*) FROM assignments GROUP BY item_id")}
    cfg = json.loads(config)
    assert kind == "active_calibration"
    assert {x: cfg[x] for x in ("width", "per_interval", "round_size", "target_width", "budget", "explore",
                                "estimator", "design", "k", "seed")} == {
        "width": 0.2, "per_interval": 3, "round_size": 35, "target_width": 0.08, "budget": 150, "explore": 0.35,
        "estimator": "accuracy", "design": "interval", "k": 2, "seed": 4242}
    assert n == 15 and k_each == {2}  # 3 per 0.2-wide interval, two annotators each


@pytest.mark.slow  # AppTest runs the whole Tune cut-offs page
def _tune_page(token: str, campaign: int):
    """Tune cut-offs in AppTest, signed in with ``token``, on ``campaign``'s ROUGE-1 grades."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.session_state[TEST_TOKEN_KEY] = token
    at.switch_page("app_pages/tuning.py").run()
    at.selectbox(key="tune_campaign").set_value(campaign).run()
    at.selectbox(key="tune_metric").set_value("rouge1").run()
    assert not at.exception
    return at


def test_tune_cut_offs_draws_the_fitted_curves_round_by_round_beside_the_other_design(pool_db):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        paper = assignment.create_active_campaign(db, "paper design", _cfg(estimator="accuracy", design="interval",
                                                                           per_interval=3), DOCS, actor=res)
        v2 = assignment.create_active_campaign(db, "平滑 adaptive", _cfg(per_interval=3, seed=8), DOCS, actor=res)
        for cid in (paper, v2):
            _grade_everything(db, cid, noise=0.25)
            rounds.next_round(db, cid, actor=res)
            _grade_everything(db, cid, noise=0.25)
        token = auth.create_session(db, auth.authenticate(db, "res", PW))
        (_, scores, tiers), = rounds.graded_items(db, v2).values()
    at = _tune_page(token, v2)
    # the suggested cut-offs of a smooth campaign are its smooth fit's (on each clinician's grade)
    compare = next(d.value for d in at.dataframe if "cut-offs" in d.value.columns)
    with connect(pool_db) as db:
        grades = rounds.graded_grades(db, v2)[("rouge1", "enumerated")]
    want = designs.calibrate_smooth("rouge1", "enumerated", scores, tiers, grades=grades).cut_offs
    row = compare[compare["cut-offs"] == "suggested optimum"].iloc[0]
    assert (row["low"], row["high"]) == pytest.approx(want)
    assert any("smooth fit, profile likelihood" in c.value for c in at.caption)

    def charts():
        out = {}
        for c in at.get("plotly_chart"):
            if "tune_curves" in str(c.proto.id):
                spec = json.loads(c.proto.spec)
                out[spec["layout"]["title"]["text"]] = spec
        return out

    assert at.selectbox(key="curves_compare").value == paper  # the other design beside it by default
    shown = charts()
    assert sorted(shown) == [f"#{paper}: accuracy estimator, interval design, round 2",
                             f"#{v2}: smooth estimator, adaptive design, round 2"]
    spec = shown[f"#{v2}: smooth estimator, adaptive design, round 2"]
    names = [t["name"] for t in spec["data"]]
    assert "P(tier ≥ Partially Correct)" in names and "P(tier ≥ Basically Correct)" in names
    assert sum(len(t["x"]) for t in spec["data"] if t["name"].startswith("graded")) == 50  # a seed round of 30, a round of 20
    assert len(spec["layout"]["shapes"]) == 4  # two shaded intervals, two cut-off lines
    at.select_slider(key="curves_round").set_value(1).run()
    spec = charts()[f"#{v2}: smooth estimator, adaptive design, round 1"]
    assert sum(len(t["x"]) for t in spec["data"] if t["name"].startswith("graded")) == 30  # the seed round
    at.selectbox(key="curves_compare").set_value(0).run()  # nothing beside it
    assert len(charts()) == 1 and not at.exception


def test_a_cut_off_or_interval_beyond_the_range_is_clipped_to_it():
    """Few low tiers near 0: the fit's interval reaches below 0, where every cut-off grades alike -- shown as 0."""
    g = np.random.default_rng(1)
    scores = np.concatenate([[0.01, 0.03], g.uniform(0.05, 1, 40)])
    tiers = np.concatenate([[0, 1], (scores[2:] >= 0.6).astype(int) + 1])
    est = designs.estimate("rouge1", scores, tiers, {"estimator": "smooth"}, rng=0)
    (a, b), (c, d) = est.cis
    assert 0 <= a <= est.cut_offs[0] <= b and c <= est.cut_offs[1] <= d <= 1


@pytest.mark.slow  # AppTest runs the whole Tune cut-offs page
def test_the_suggested_cut_offs_of_an_accuracy_campaign_use_its_criterion_not_the_page_default(pool_db):
    """The page's default criterion (kappa) used to stand in for an active campaign's own (accuracy)."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "accuracy", _cfg(estimator="accuracy", per_interval=6), DOCS,
                                                actor=res)
        _grade_everything(db, cid, noise=0.45)
        token = auth.create_session(db, auth.authenticate(db, "res", PW))
        [(scores, tiers)] = cal.graded_examples(cal.campaign_rows(db, cid)).values()
    want = cal.calibrate("rouge1", "enumerated", scores, tiers, criterion="accuracy", n_boot=0).cut_offs
    kappa = cal.calibrate("rouge1", "enumerated", scores, tiers, criterion="kappa", n_boot=0).cut_offs
    assert want != kappa  # the data tell the two criteria apart, so the check below can fail
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.session_state[TEST_TOKEN_KEY] = token
    at.switch_page("app_pages/tuning.py").run()
    at.selectbox(key="tune_campaign").set_value(cid).run()
    at.selectbox(key="tune_metric").set_value("rouge1").run()
    compare = next(d.value for d in at.dataframe if "cut-offs" in d.value.columns)
    row = compare[compare["cut-offs"] == "suggested optimum"].iloc[0]
    assert (row["low"], row["high"]) == pytest.approx(want)
    at.selectbox(key="tune_consensus").set_value("majority").run()
    assert any("lower-median tier (the campaign's rule)" in c.value for c in at.caption)


def test_cli_calibrate_uses_an_active_campaigns_estimator_and_publishes_it(pool_db):
    from medeval.calibration import smooth_cutoffs

    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "cli smooth", _cfg(per_interval=5), DOCS, actor=res)
        _grade_everything(db, cid, noise=0.25)
        rows = cal.campaign_rows(db, cid)
        [(scores, tiers)] = cal.graded_examples(rows).values()
        [grades] = designs.graded_grades(rows).values()  # every grade: smooth_cutoffs combines an item's grades
        n_items = rounds.round_status(db, cid, actor=res)["strata"][0]["items"]
    out = invoke("calibrate", "--campaign", cid, "--publish", "v2 from the CLI").output
    assert "published threshold set v" in out
    [r] = json.loads(out[out.index("["):])  # the JSON after the message on stderr
    assert r["criterion"] == "smooth" and r["value"] is None
    assert r["cut_offs"] == pytest.approx(list(designs.calibrate_smooth("rouge1", "enumerated", scores, tiers,
                                                                         grades=grades).cut_offs))
    assert r["bootstrap"]["interval"] == "profile likelihood" and r["bootstrap"]["low_ci95"][0] <= r["cut_offs"][0]
    with connect(pool_db) as db:
        p = th.active(db).provenance
    assert p["estimator"] == "smooth" and p["source"]["campaign"] == cid and p["strata"][0]["criterion"] == "smooth"
    # the published cut-offs are smooth_cutoffs on the same grades, and the provenance says what it was fitted to,
    # by which design, in how many rounds of which sizes
    fit = smooth_cutoffs(*grades[:2], items=grades[2])
    with connect(pool_db) as db:
        assert th.active(db).cutoffs[("rouge1", "enumerated")] == pytest.approx(fit.cutoffs(), abs=1e-9)
    assert p["strata"][0]["fitted_to"] == {"items": fit.n_items, "grades_per_item": round(fit.grades_per_item, 2)}
    assert (p["design"], p["design_version"], p["rounds"], p["round_size"]) == ("adaptive", "adaptive-psi-v2", 1, 20)
    assert p["strata"][0]["items_per_round"] == [n_items]
    assert "consensus tier per item" in p["method"] and "adaptive design" in p["method"]
    [s] = json.loads(invoke("calibrate", "--campaign", cid, "--estimator", "search", "--n-boot", "0").output)
    assert s["criterion"] == "kappa"  # asked for: the paper's search with the default criterion
    md = invoke("calibrate", "--campaign", cid, "--format", "md").output
    assert "| rouge1 | enumerated |" in md and "| smooth |" in md


@pytest.mark.slow  # AppTest runs the whole Tune cut-offs page
@pytest.mark.parametrize("estimator", ["smooth", "accuracy"])
def test_tune_cut_offs_on_an_active_campaign_with_nothing_graded_yet(pool_db, estimator):
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "fresh", _cfg(estimator=estimator), DOCS, actor=res)
        token = auth.create_session(db, auth.authenticate(db, "res", PW))
    at = _tune_page(token, cid)
    (chart,) = [c for c in at.get("plotly_chart") if "tune_curves" in str(c.proto.id)]
    spec = json.loads(chart.proto.spec)
    assert not any(t.get("x") for t in spec["data"])  # nothing graded, nothing drawn -- and no error
    def captions():  # as shown: without md_escape's backslashes and word joiners
        return [c.value.replace("\\", "").replace("\u2060", "") for c in at.caption]

    assert any("fresh — 0 graded, no cut-offs yet" in c for c in captions())
    at.selectbox(key="tune_metric").set_value("bleu1").run()  # a metric the campaign does not calibrate
    assert any("does not calibrate BLEU-1 / enumerated" in c for c in captions()) and not at.exception


def test_the_smooth_estimator_fits_the_lower_median_of_each_items_grades():
    """Every grade (with its item) or one consensus tier per item: the same fit, the cut-offs of the panel's lower
    median -- and ``calibrate_rows`` takes the grades only under the median consensus (majority and adjudicated rows
    are one per item: the chosen consensus is what is fitted)."""
    from medeval.calibration import smooth_cutoffs

    g = np.random.default_rng(4)
    scores = np.sort(g.uniform(0, 1, 60))
    lenient = np.array([-0.08, 0.0, 0.08])
    grades3 = np.clip(np.rint(2 * (scores[:, None] + lenient[None, :] - 0.3) / 0.4 + g.normal(0, 0.3, (60, 3))),
                      0, 2).astype(int)
    consensus = np.sort(grades3, axis=1)[:, 1]
    each = (np.repeat(scores, 3), grades3.ravel(), np.repeat(np.arange(60), 3).astype(str))

    by_consensus = designs.estimate("rouge1", scores, consensus, {"estimator": "smooth"}, rng=0)
    assert by_consensus.cut_offs == pytest.approx(smooth_cutoffs(scores, consensus, ci=False).cutoffs())
    by_grade = designs.estimate("rouge1", scores, consensus, {"estimator": "smooth"}, rng=0, grades=each)
    assert by_grade.cut_offs == pytest.approx(smooth_cutoffs(*each[:2], items=each[2], ci=False).cutoffs())
    assert by_grade.cut_offs == pytest.approx(by_consensus.cut_offs, abs=1e-12)
    assert by_grade.fit.grades_per_item == 3 and by_grade.n == 60  # items, not grades
    # the accuracy search uses the consensus whatever grades are given
    acc = designs.estimate("rouge1", scores, consensus, {"estimator": "accuracy"}, rng=0, grades=each, n_boot=0)
    assert acc.cut_offs == designs.estimate("rouge1", scores, consensus, {"estimator": "accuracy"}, rng=0,
                                            n_boot=0).cut_offs

    rows = [{"metric": "rouge1", "aspect_type": "enumerated", "score": float(s), "tier": int(t), "item": str(i),
             "user": u} for i, (s, ts) in enumerate(zip(scores, grades3)) for t, u in zip(ts, (1, 2, 3))]
    [median] = designs.calibrate_rows(rows, estimator="smooth", rng=0)
    assert median.cut_offs == pytest.approx(by_grade.cut_offs)
    assert median.bootstrap["fitted_to"] == {"items": 60, "grades_per_item": 3.0}
    [majority] = designs.calibrate_rows(rows, estimator="smooth", rng=0, consensus="majority")
    by_majority = np.array([cal.CONSENSUS["majority"](list(ts)) for ts in grades3])
    assert majority.cut_offs == pytest.approx(smooth_cutoffs(scores, by_majority, ci=False).cutoffs())
    assert majority.bootstrap["fitted_to"] == {"items": 60, "grades_per_item": 1.0}


def test_a_boundary_the_grades_leave_undetermined_keeps_the_base_sets_cut_off_and_says_so(pool_db):
    """Clinicians who used only Completely Wrong and Partially Correct: the CW|PC cut-off is fitted and published,
    the PC|BC one is kept from the base set -- in the calibration, the provenance and on publishing."""
    g = np.random.default_rng(12)
    scores = g.uniform(0, 0.8, 120)
    tiers = (scores + g.normal(0, 0.04, 120) >= 0.35).astype(int)
    c = designs.calibrate_smooth("rouge1", "enumerated", scores, tiers)
    assert c.cut_offs[1] is None and c.cut_offs[0] == pytest.approx(0.35, abs=0.03)
    assert c.bootstrap["undetermined"] == {"high": "none-reach"} and c.undefined_reason is None
    assert c.bootstrap["high_ci95"] is None and c.bootstrap["low_ci95"][0] < c.cut_offs[0]
    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        base = th.active(db)
        kept = base.cutoffs[("rouge1", "enumerated")]
        version = cal.publish(db, [c], name="two tiers", actor=res)
        new = th.load(db, version)
        assert new.cutoffs[("rouge1", "enumerated")] == pytest.approx((c.cut_offs[0], kept[1]), abs=1e-9)
        p = new.provenance
        assert p["strata"][0]["undetermined"] == {"high": "none-reach"}
        assert p["kept_from_base_cutoffs"] == [f"rouge1/enumerated high cut-off {kept[1]:g}"]
        # said in words, in both languages (a report's provenance table)
        from medeval.core import i18n
        from medeval.reports.leaderboard_report import provenance_rows
        from tests.i18n_support import english_words

        rows = {r["field"]: r["value"] for r in provenance_rows(p)}
        assert f"ROUGE-1 / enumerated: high cut-off {kept[1]:g}" in rows["cut-offs kept from the base set"]
        assert "undetermined by the grades: high cut-off: no graded item reaches that tier" in \
            rows["stratum ROUGE-1 / enumerated"]
        with i18n.language("zh-CN"):
            zh = provenance_rows(p)
        ids = {"ROUGE", "rouge1", "smooth", "medeval", "calibration", "smooth_cutoffs", "smooth-logistic-lapse-v"}
        assert not english_words([f"{r['field']} {r['value']}" for r in zh], ids)  # names and ids only
        # a kept cut-off that the estimated one would cross is refused, nothing stored
        late = cal.Calibration("rouge1", "enumerated", (kept[1] + 0.01, None), "smooth", None, 50)
        before = db.conn.execute("SELECT count(*) FROM threshold_sets").fetchone()
        with pytest.raises(MedevalError, match="kept from the base set"):
            cal.publish(db, [late], name="crossing", actor=res)
        assert db.conn.execute("SELECT count(*) FROM threshold_sets").fetchone() == before
    assert tuning.with_kept((0.3, None), kept, (0.0, 1.0)) == (0.3, kept[1])
    assert tuning.with_kept((None, 0.2), (0.25, 0.6), (0.0, 1.0)) == (0.2, 0.2)
    assert tuning.boundary_reason("none-reach") == "no graded item reaches that tier"


@pytest.mark.slow  # AppTest runs the whole Tune cut-offs page
def test_tune_cut_offs_says_which_cut_off_the_grades_leave_undetermined(pool_db):
    """Clinicians who never graded Basically Correct: the page suggests the fitted low cut-off, keeps the active set's
    high one, and says so; only the determined cut-off's interval is shaded."""
    from medeval.annotation import campaigns as cp
    from tests.test_active_rounds import _tier

    with connect(pool_db) as db:
        res = auth.get_user(db, "res")
        cid = assignment.create_active_campaign(db, "两级 two tiers", _cfg(per_interval=5), DOCS, actor=res)
        for d in DOCS:
            user = auth.get_user(db, d)
            while (item := cp.next_item(db, user, cid)) is not None:
                rid = db.conn.execute("SELECT response_id FROM campaign_items WHERE id = ?", (item,)).fetchone()[0]
                score = db.conn.execute("SELECT score FROM scores WHERE response_id = ?", (rid,)).fetchone()[0]
                cp.submit_grade(db, user, item, tier=min(_tier(score, rid, d, 0.2), 1), client_token=f"2t:{item}:{d}")
        kept_high = th.active(db).cutoffs[("rouge1", "enumerated")][1]
        token = auth.create_session(db, auth.authenticate(db, "res", PW))
        (_, scores, tiers), = rounds.graded_items(db, cid).values()
    want = designs.calibrate_smooth("rouge1", "enumerated", scores, tiers)
    assert want.cut_offs[1] is None and want.cut_offs[0] is not None
    at = _tune_page(token, cid)
    compare = next(d.value for d in at.dataframe if "cut-offs" in d.value.columns)
    row = compare[compare["cut-offs"] == "suggested optimum"].iloc[0]
    assert (row["low"], row["high"]) == pytest.approx((want.cut_offs[0], kept_high))
    assert any("leave the high cut-off undetermined (no graded item reaches that tier)" in i.value and
               f"{kept_high:.3f}" in i.value for i in at.info)
    [scatter] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "tune_scatter" in str(c.proto.id)]
    shaded = [s for s in scatter["layout"].get("shapes", []) if s.get("type") == "rect"]
    assert len(shaded) == 1 and shaded[0]["x0"] <= want.cut_offs[0] <= shaded[0]["x1"]


def test_calibrate_says_which_cut_off_the_grades_leave_undetermined(tmp_path):
    g = np.random.default_rng(13)
    scores = g.uniform(0, 0.8, 80)
    tiers = (scores + g.normal(0, 0.04, 80) >= 0.35).astype(int)
    f = tmp_path / "graded.csv"
    f.write_text("metric,aspect_type,score,tier\n" + "".join(f"rouge1,enumerated,{s:.4f},{t}\n"
                                                              for s, t in zip(scores, tiers)), encoding="utf-8")
    [r] = json.loads(invoke("calibrate", str(f), "--estimator", "smooth").output)
    assert r["cut_offs"][1] is None and abs(r["cut_offs"][0] - 0.35) < 0.05
    assert r["bootstrap"]["undetermined"] == {"high": "none-reach"}
    out = invoke("calibrate", str(f), "--estimator", "smooth", "--format", "csv").output
    assert "high cut-off undetermined (none-reach): the base set's is kept on --publish" in out
