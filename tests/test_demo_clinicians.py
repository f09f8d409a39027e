"""The demo's simulated clinicians: five graders with seeded disagreement, two fully graded campaigns and a
threshold set calibrated on them -- and the ``at`` time of a grade that makes their sessions possible.

DEMO DATA -- NOT CLINICAL ADVICE. The tests on the demo database are slow (``demo_template``).
"""

import math
import time
from itertools import pairwise

import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.calibration import cutoffs as cal
from medeval.calibration.tuning import strata
from medeval.core.errors import MedevalError
from medeval.demo import clinicians as sc
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports import dashboard as dash
from medeval.store.db import connect
from tests.conftest import copy_db, invoke

PW = "correct horse battery"


# ---------------------------------------------------------------- submit_grade(at=...)  (unit, fast)

@pytest.fixture
def small_campaign(db_path, small_files):
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        auth.add_user(db, "aa", PW, "annotator")
        cid = cp.create_random_campaign(db, "at", 4, ["aa"], k=1, seed=1, actor=None)
        yield db, auth.get_user(db, "aa"), cid


def _created_at(db, annotation_id):
    return db.conn.execute("SELECT created_at FROM grade_annotations WHERE id = ?", (annotation_id,)).fetchone()[0]


def test_submit_grade_records_the_given_time_and_defaults_to_now(small_campaign):
    db, u, cid = small_campaign
    past = 1_700_000_000.5
    first = cp.submit_grade(db, u, cp.next_item(db, u, cid), tier=1, client_token="a1", at=past)
    assert _created_at(db, first) == past
    before = time.time()
    second = cp.submit_grade(db, u, cp.next_item(db, u, cid), tier=2, client_token="a2")
    assert before <= _created_at(db, second) <= time.time()
    # recent grades and the dashboard read the recorded time
    assert {g.annotation_id: g.at for g in cp.recent_grades(db, u, cid)}[first] == past


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "yesterday", True, -5.0])
def test_submit_grade_refuses_a_time_that_is_not_a_finite_number(small_campaign, bad):
    db, u, cid = small_campaign
    item = cp.next_item(db, u, cid)
    with pytest.raises(MedevalError, match="time"):
        cp.submit_grade(db, u, item, tier=1, client_token="bad", at=bad)
    assert db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 0


# ---------------------------------------------------------------- the simulated clinicians  (demo database, slow)

TABLES = ("users", "campaigns", "campaign_items", "assignments", "grade_annotations", "threshold_sets", "thresholds",
          "grades", "audit_log")


def _counts(db) -> dict:
    return {t: db.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


@pytest.fixture(scope="module")
def sim(demo_template, tmp_path_factory):
    """The demo database (no demo accounts) with the simulated clinicians added once; the Table 12 set's version."""
    path = copy_db(demo_template, tmp_path_factory.mktemp("clinicians") / "demo.db")
    with connect(path) as db:
        adopted = th.active(db).version
        s = sc.add_simulated_clinicians(db)
    return path, s, adopted


def _latest(db, cid):
    """(item, annotator) -> (tier, skipped, flagged, note, created_at) of the latest answer."""
    return {(r[0], r[1]): r[2:] for r in db.conn.execute(
        "SELECT g.item_id, u.username, g.tier, g.skipped, g.flagged, g.note, g.created_at FROM grade_annotations g "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ? AND "
        "g.id = (SELECT max(id) FROM grade_annotations g2 WHERE g2.item_id = g.item_id AND g2.user_id = g.user_id)",
        (cid,))}


def test_five_simulated_annotators_nobody_can_sign_in_as(sim):
    path, s, _ = sim
    with connect(path) as db:
        assert len(sc.CLINICIANS) >= 5 and s["clinicians"] == list(sc.CLINICIAN_NAMES)
        hashes = set()
        for name in sc.CLINICIAN_NAMES:
            u = auth.get_user(db, name)
            assert u.role == "annotator" and u.active
            hashes.add(db.conn.execute("SELECT password_hash FROM users WHERE id = ?", (u.id,)).fetchone()[0])
            for guess in (name, "demo-doctor-pass", "demo-researcher-pass", "demo-admin-pass", "password"):
                with pytest.raises(MedevalError):
                    auth.authenticate(db, name, guess)
        assert len(hashes) == len(sc.CLINICIAN_NAMES)
        lenient = next(c for c in sc.CLINICIANS if c.username == sc.LENIENT)
        severe = next(c for c in sc.CLINICIANS if c.username == sc.SEVERE)
        others = [c for c in sc.CLINICIANS if c.username not in (sc.LENIENT, sc.SEVERE)]
        assert lenient.bias > 0 > severe.bias and all(abs(c.bias) < lenient.bias / 3 for c in others)


def test_both_campaigns_fully_graded_k_per_item_with_the_documented_skips_and_flags(sim):
    path, s, _ = sim
    with connect(path) as db:
        camps = {c["name"]: c for c in cp.list_campaigns(db, actor=None)}
        assert camps[sc.VALIDATION_CAMPAIGN]["kind"] == "random_validation"
        assert camps[sc.VALIDATION_CAMPAIGN]["items"] == sc.VALIDATION_N
        assert camps[sc.CALIBRATION_CAMPAIGN]["kind"] == "bucket_grading"
        # the calibration campaign is the newest grading campaign: the Agreement and Tune cut-offs pages open it
        assert list(camps)[-1] == sc.CALIBRATION_CAMPAIGN
        assert s["campaigns"] == {n: camps[n]["id"] for n in (sc.VALIDATION_CAMPAIGN, sc.CALIBRATION_CAMPAIGN)}
        for name, cid in s["campaigns"].items():
            latest = _latest(db, cid)
            items = [i for (i,) in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ?", (cid,))]
            per_item = {i: [v for (item, _), v in latest.items() if item == i] for i in items}
            assert all(len(v) == sc.K for v in per_item.values())  # every assigned item answered
            skips = {k: v for k, v in latest.items() if v[1]}
            expected_skips = {u: n for (c, u), n in sc.SKIPS.items() if c == name}
            assert sum(expected_skips.values()) > 0
            assert sorted(u for _, u in skips) == sorted(u for u, n in expected_skips.items() for _ in range(n))
            graded = {k: v for k, v in latest.items() if not v[1]}
            assert all(v[0] in (0, 1, 2) for v in graded.values())
            assert sum(len([x for x in v if not x[1]]) for v in per_item.values()) == len(items) * sc.K - len(skips)
            flagged = {k: v for k, v in latest.items() if v[2]}
            expected_flags = {u: n for (c, u), n in sc.FLAGS.items() if c == name}
            assert sorted(u for _, u in flagged) == sorted(u for u, n in expected_flags.items() for _ in range(n))
            assert all(v[3] in sc.FLAG_NOTES and v[0] is not None for v in flagged.values())
            prog = cp.campaign_progress(db, cid, actor=None)
            assert prog["k"] == sc.K and {a["annotator"] for a in prog["annotators"]} == set(sc.CLINICIAN_NAMES)


def test_lenient_and_severe_graders_show_on_the_agreement_page(sim):
    path, s, _ = sim
    with connect(path) as db:
        for name, cid in s["campaigns"].items():
            a = dash.campaign_agreement(db, cid, actor=None, n_boot=200)
            rows = {r["annotator"]: r for r in a["annotators"]}
            assert set(rows) == set(sc.CLINICIAN_NAMES)
            assert rows[sc.LENIENT]["mean_difference_vs_panel"] > 0.2, name
            assert rows[sc.SEVERE]["mean_difference_vs_panel"] < -0.2, name
            for who, r in rows.items():
                if who not in (sc.LENIENT, sc.SEVERE):
                    assert abs(r["mean_difference_vs_panel"]) < rows[sc.LENIENT]["mean_difference_vs_panel"]
                assert 0.5 < r["spearman_vs_panel"] < 0.95 and r["spearman_ci95"] is not None
                assert 10 <= r["median_seconds_per_item"] <= 40  # lognormal per item, medians 16-25 s
                assert len(r["drift"]) >= 3  # answers in blocks of 20 over their sessions
            panel = {p["key"]: p["estimate"] for p in a["panel"]}
            alpha = panel["alpha"]
            assert alpha["value"] is not None and alpha["ci95"] is not None
            assert 0.5 < alpha["value"] < 0.9 and alpha["ci95"][0] <= alpha["value"] <= alpha["ci95"][1]
            assert panel["kappa"]["value"] is not None


def test_clinicians_vs_the_machine_on_the_validation_sample(sim):
    path, s, _ = sim
    with connect(path) as db:
        rows = dash.campaign_agreement(db, s["campaigns"][sc.VALIDATION_CAMPAIGN], actor=None, n_boot=0)["machine"]
        pooled = {(r["metric"], r["against"]): r for r in rows if r["aspect_type"] == "enumerated+declarative"}
        n_text = db.conn.execute(
            "SELECT count(*) FROM campaign_items ci JOIN responses r ON r.id = ci.response_id JOIN kb_entries k "
            "ON k.id = r.kb_id WHERE ci.campaign_id = ? AND k.aspect_type != 'numeric'",
            (s["campaigns"][sc.VALIDATION_CAMPAIGN],)).fetchone()[0]
        assert 0 < n_text < sc.VALIDATION_N  # the numeric items have their own exact_match row
        for metric in ("bleu1", "rouge1", "cosine"):
            for against in ("score", "tier"):
                r = pooled[(metric, against)]
                assert r["n"] == n_text and 0.6 <= r["spearman"] <= 0.85, (metric, against, r)
                assert r["ci95"] is not None
        assert 0.6 <= pooled[("average", "tier")]["spearman"] <= 0.85
        numeric = next(r for r in rows if r["metric"] == "exact_match" and r["against"] == "tier")
        assert numeric["aspect_type"] == "numeric" and numeric["n"] == sc.VALIDATION_N - n_text
        every = next(r for r in rows if r["metric"] == "average" and r["aspect_type"] == "all")
        assert every["n"] == sc.VALIDATION_N


def test_the_validation_sample_shares_no_item_with_the_calibration_campaign(sim):
    """Grades that set the cut-offs must not validate them (issue 21 §7): 0 shared items, and the report says so."""
    from medeval.calibration.validation import overlap

    path, s, _ = sim
    vid, kid = s["campaigns"][sc.VALIDATION_CAMPAIGN], s["campaigns"][sc.CALIBRATION_CAMPAIGN]
    with connect(path) as db:
        items = {c: {r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?",
                                                   (c,))} for c in (vid, kid)}
        ov = overlap(db, vid)
        methods = dash.campaign_agreement(db, vid, actor=None, n_boot=0)["methods"]
    assert len(items[vid]) == sc.VALIDATION_N and not items[vid] & items[kid]
    assert ov["calibration_campaigns"] == [kid] and ov["shared_items"] == 0
    assert f"0 of this campaign's {sc.VALIDATION_N} items are also items there" in methods


def test_every_tuning_stratum_has_graded_examples_in_all_three_tiers(sim):
    path, s, _ = sim
    with connect(path) as db:
        examples = cal.graded_examples(cal.campaign_rows(db, s["campaigns"][sc.CALIBRATION_CAMPAIGN]))
    for key in strata():
        scores, tiers = examples[key]
        assert set(tiers.tolist()) == {0, 1, 2}, key
        assert len(scores) >= 20, key


def test_the_calibrated_set_is_active_and_records_the_campaign(sim):
    path, s, adopted = sim
    with connect(path) as db:
        act = th.active(db)
        assert act.version == s["version"] != adopted and s["published"] and s["active"]
        assert act.name == sc.CALIBRATED_SET and act.provenance["calibrated"] is True
        assert act.provenance["base_version"] == adopted
        cid = s["campaigns"][sc.CALIBRATION_CAMPAIGN]
        assert act.provenance["source"] == cal.campaign_source(db, cid)
        assert act.provenance["source"]["campaign"] == cid and act.provenance["source"]["annotators"] == 5
        assert act.provenance["source"]["campaign_name"] == sc.CALIBRATION_CAMPAIGN
        assert {(x["metric"], x["aspect_type"]) for x in act.provenance["strata"]} == set(strata())
        base = th.load(db, adopted)
        assert base.provenance["calibrated"] is False
        assert sum(act.cutoffs[k] != base.cutoffs[k] for k in strata()) >= 3  # visibly different from Table 12
        assert act.cutoffs[("exact_match", "numeric")] == base.cutoffs[("exact_match", "numeric")]
        # every score graded under it (the leaderboard reads these)
        assert db.conn.execute("SELECT count(*) FROM grades WHERE version = ?", (act.version,)).fetchone()[0] == \
            db.conn.execute("SELECT count(*) FROM grades WHERE version = ?", (adopted,)).fetchone()[0] > 0


def test_grade_times_are_past_sessions_increasing_per_clinician(sim):
    path, s, _ = sim
    with connect(path) as db:
        now = time.time()
        vid, kid = s["campaigns"][sc.VALIDATION_CAMPAIGN], s["campaigns"][sc.CALIBRATION_CAMPAIGN]
        for name in sc.CLINICIAN_NAMES:
            rows = db.conn.execute(
                "SELECT g.created_at, ci.campaign_id FROM grade_annotations g JOIN campaign_items ci ON "
                "ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE u.username = ? ORDER BY g.id",
                (name,)).fetchall()
            times = [t for t, _ in rows]
            assert all(t < now for t in times)
            assert all(a < b for a, b in pairwise(times)), name
            assert [c for _, c in rows] == sorted((c for _, c in rows), key=[vid, kid].index)  # validation first
            days = {int(t // 86400) for t in times}
            assert len(days) >= 3 and max(days) < int(now // 86400), name  # sessions on several past days


def test_a_second_call_adds_nothing(sim, tmp_path):
    path, s, _ = sim
    copy = copy_db(path, tmp_path / "again.db")
    with connect(copy) as db:
        before = _counts(db)
        again = sc.add_simulated_clinicians(db)
        assert _counts(db) == before
    assert again["grades_added"] == 0 and not again["published"]
    assert (again["version"], again["campaigns"], again["active"]) == (s["version"], s["campaigns"], True)
    assert s["grades_added"] == before["grade_annotations"]


def test_the_simulation_is_deterministic(sim, demo_template, tmp_path):
    path, s, _ = sim
    other = copy_db(demo_template, tmp_path / "other.db")
    with connect(other) as db:
        t = sc.add_simulated_clinicians(db)
        answers_b = {k: v[:4] for cid in t["campaigns"].values() for k, v in _latest(db, cid).items()}
        cut_b = th.load(db, t["version"]).cutoffs
    with connect(path) as db:
        answers_a = {k: v[:4] for cid in s["campaigns"].values() for k, v in _latest(db, cid).items()}
        cut_a = th.load(db, s["version"]).cutoffs
    assert answers_a == answers_b and cut_a == cut_b


def test_the_demo_command_reports_the_simulated_clinicians(demo_template, tmp_path):
    path = copy_db(demo_template, tmp_path / "cli.db")
    out = invoke("demo", "--db", path).output
    line = next(x for x in out.splitlines() if "SIMULATED clinicians" in x)
    with connect(path) as db:
        act = th.active(db)
        camps = {c["name"]: c["id"] for c in cp.list_campaigns(db, actor=None)}
    assert all(name in line for name in sc.CLINICIAN_NAMES) and "no sign-in" in line
    assert f"{camps[sc.VALIDATION_CAMPAIGN]} {sc.VALIDATION_CAMPAIGN!r}" in line
    assert f"{camps[sc.CALIBRATION_CAMPAIGN]} {sc.CALIBRATION_CAMPAIGN!r}" in line
    assert f"threshold set v{act.version} calibrated on their grades (active)" in line
    assert act.name == sc.CALIBRATED_SET
    assert "passw" not in line.lower()  # their passwords are never shown
