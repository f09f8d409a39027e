"""Campaign agreement (the dashboard's numbers) against outside implementations, and the report files.

Expected values come from the krippendorff package, scikit-learn's cohen_kappa_score and
scipy's spearmanr run on the same grades, and from counting by hand.
"""

import html
import json
import subprocess
import sys
from itertools import combinations

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from medeval.reports import agreement_report as rep
from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.reports import dashboard as dash
from medeval.store.db import connect
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from tests.conftest import ROOT

PW = "correct horse battery"
NAMES = ["aa", "bb", "cc"]
# tiers per item (rows) for annotators a, b, c; None = skipped
GRADES = [
    [2, 2, 1],
    [0, 0, 0],
    [1, 2, 2],
    [0, 1, None],
    [2, 2, 2],
    [1, 0, 2],
    [0, 0, 1],
    [2, 1, 2],
]


@pytest.fixture
def graded(db_path, small_files):
    """8 items, each graded by a, b and c (k = 3) as in GRADES, one answer at a time, 30 s apart."""
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        auth.add_user(db, "res", PW, "researcher")
        for u in NAMES:
            auth.add_user(db, u, PW, "annotator")
        cid = cp.create_random_campaign(db, "agree", 8, NAMES, k=3, seed=1, actor=None)
        items = [i for (i,) in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ? ORDER BY id",
                                               (cid,))]
        t0 = 1_700_000_000.0
        for j, u in enumerate(NAMES):
            uid = auth.get_user(db, u).id
            for n, (item, row) in enumerate(zip(items, GRADES)):
                tier = row[j]
                db.conn.execute("INSERT INTO grade_annotations (item_id, user_id, tier, skipped, flagged, note, "
                                "client_token, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                (item, uid, tier, int(tier is None), int(n == 5 and u == "cc"),
                                 "reference is outdated" if n == 5 and u == "cc" else None, f"{u}{n}",
                                 t0 + 30 * n + j))
        db.conn.commit()
    return {"path": db_path, "campaign": cid, "items": items}


def _summary(graded, **kw):
    with connect(graded["path"]) as db:
        return dash.campaign_agreement(db, graded["campaign"], actor=None, n_boot=200, seed=3, **kw)


def test_panel_statistics_match_outside_implementations(graded):
    s = _summary(graded)
    panel = {p["key"]: p["estimate"] for p in s["panel"]}
    matrix = np.array([[np.nan if v is None else v for v in row] for row in GRADES]).T  # raters x items
    expected_alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal",
                                        value_domain=[0, 1, 2])
    assert panel["alpha"]["value"] == pytest.approx(expected_alpha, abs=1e-12)
    lo, hi = panel["alpha"]["ci95"]
    assert lo < panel["alpha"]["value"] < hi
    kappas = []
    for i, j in combinations(range(3), 2):
        pairs = [(row[i], row[j]) for row in GRADES if row[i] is not None and row[j] is not None]
        kappas.append(cohen_kappa_score(*zip(*pairs), weights="linear", labels=[0, 1, 2]))
    assert panel["kappa"]["value"] == pytest.approx(np.mean(kappas), abs=1e-12)
    assert panel["kappa"]["n_pairable"] == 8 + 7 + 7
    # percent agreement by hand: per item, the share of agreeing annotator pairs; then the mean over items
    shares = []
    for row in GRADES:
        pairs = list(combinations([v for v in row if v is not None], 2))
        shares.append(sum(x == y for x, y in pairs) / len(pairs))
    assert panel["percent"]["value"] == pytest.approx(np.mean(shares)) == pytest.approx(10 / 24)
    assert panel["fleiss"]["value"] is None and "complete" in panel["fleiss"]["undefined_reason"]
    assert s["n_grades"] == 23 and s["n_skips"] == 1 and s["n_items_graded"] == 8


def test_each_annotator_against_the_rest_of_the_panel(graded):
    s = _summary(graded)
    rows = {r["annotator"]: r for r in s["annotators"]}
    for j, name in enumerate(NAMES):
        mine, others = [], []
        for row in GRADES:
            rest = [v for k, v in enumerate(row) if k != j and v is not None]
            if row[j] is not None and rest:
                mine.append(row[j])
                others.append(float(np.median(rest)))
        r = rows[name]
        assert r["spearman_vs_panel"] == pytest.approx(spearmanr(mine, others).statistic, abs=1e-12)
        assert r["n_shared"] == len(mine)
        assert r["exact_agreement_vs_panel"] == pytest.approx(np.mean([x == round(y) for x, y in zip(mine, others)]))
        assert r["median_seconds_per_item"] == pytest.approx(30.0)  # answers were 30 s apart
        assert r["assigned"] == 8
    assert rows["cc"]["skipped"] == 1 and rows["cc"]["skip_rate"] == pytest.approx(1 / 8)
    assert rows["cc"]["flagged"] == 1 and rows["aa"]["flagged"] == 0
    assert [b["answers"] for b in rows["aa"]["drift"]] == ["1-8"]


def test_widest_disagreements_come_first_and_open_to_their_content(graded):
    s = _summary(graded)
    first = s["disagreements"][0]
    assert first["range"] == 2 and first["item"] == graded["items"][5]  # 1, 0, 2: the widest, then by spread
    assert all(d["range"] >= e["range"] for d, e in zip(s["disagreements"], s["disagreements"][1:]))
    assert graded["items"][1] not in [d["item"] for d in s["disagreements"]]  # 0, 0, 0: no disagreement
    with connect(graded["path"]) as db:
        item = cp.review_item(db, first["item"], actor=auth.get_user(db, "res"))
        assert item["notes"] == ["reference is outdated"] and item["model"] in ("ModelA", "ModelB")
        with pytest.raises(PermissionDenied):
            cp.review_item(db, first["item"], actor=auth.get_user(db, "aa"))


def test_a_changed_grade_counts_once_with_its_latest_value(graded):
    with connect(graded["path"]) as db:
        a = auth.get_user(db, "aa")
        cp.submit_grade(db, a, graded["items"][0], tier=1, client_token="change")  # 2 -> 1: now 1, 2, 1
    s = _summary(graded)
    assert s["n_grades"] == 23
    assert graded["items"][0] in [d["item"] for d in s["disagreements"]]


def test_researchers_only_and_empty_campaigns(graded):
    with connect(graded["path"]) as db:
        with pytest.raises(PermissionDenied):
            dash.campaign_agreement(db, graded["campaign"], actor=auth.get_user(db, "aa"))
        with pytest.raises(MedevalError, match="no campaign 99"):
            dash.campaign_agreement(db, 99, actor=None)
        empty = cp.create_random_campaign(db, "empty", 2, ["aa", "bb"], k=2, seed=0, actor=None)
        s = dash.campaign_agreement(db, empty, actor=None)
    assert s["panel"] == [] and s["disagreements"] == [] and s["n_grades"] == 0
    assert all(r["spearman_vs_panel"] is None and r["undefined_reason"] for r in s["annotators"])
    assert "0 grades on 0 items" in s["methods"]


def test_methods_paragraph_states_the_numbers(graded):
    s = _summary(graded)
    alpha = next(p["estimate"] for p in s["panel"] if p["key"] == "alpha")
    m = s["methods"]
    assert f"alpha = {alpha['value']:.3f}" in m and f"{alpha['ci95'][0]:.3f}" in m
    assert "200 resamples, seed 3" in m and "8 model answers" in m and "3 of 3 clinicians" in m
    assert "1 skipped" in m and "ordinal" in m


def test_report_files_hold_the_computed_numbers(graded, tmp_path):
    s = _summary(graded)
    paths = rep.write_report(s, tmp_path / "out", pdf=rep.chromium_path() is not None)
    page = paths["html"].read_text()
    assert 'src="https://cdn.plot.ly' not in page and "<script src=" not in page  # nothing loaded from outside
    assert page.count("plotly.js (basic - minified) v") == 1  # plotly.js inlined exactly once: works offline
    alpha = next(p["estimate"] for p in s["panel"] if p["key"] == "alpha")
    assert f"{alpha['value']:.3f}" in page and html.escape(s["methods"]) in page
    assert json.loads(paths["json"].read_text())["panel"] == json.loads(json.dumps(s["panel"]))
    panel_csv = paths["panel_csv"].read_text().splitlines()
    assert panel_csv[0].startswith("statistic,value,ci95_low") and repr(alpha["value"]) in panel_csv[1]
    assert "reference is outdated" not in page  # flag notes stay in the app, not in a shareable report
    if "pdf" in paths:
        data = paths["pdf"].read_bytes()
        assert data.startswith(b"%PDF") and len(data) > 10_000 and data.count(b"/Type /Page") >= 2


def test_the_machine_section_defines_its_rows_and_states_the_overlap(graded, tmp_path):
    """Table 2 in the report: numeric items only under exact_match, each row's n and items, the overlap line."""
    from scipy import stats

    from medeval.calibration.validation import consensus_tiers

    s = _summary(graded)
    rows = s["machine"]
    assert not any(r["metric"] in ("bleu1", "rouge1", "cosine") and r["aspect_type"] in ("numeric", "all")
                   for r in rows)
    with connect(graded["path"]) as db:
        cons = consensus_tiers(db, graded["campaign"])
        em = dict(db.conn.execute("SELECT s.response_id, s.score FROM scores s WHERE s.metric = 'exact_match'"))
        types = dict(db.conn.execute("SELECT r.id, k.aspect_type FROM responses r JOIN kb_entries k ON k.id = r.kb_id"))
    numeric = sorted(r for r in cons if types[r] == "numeric")
    row = next(r for r in rows if r["metric"] == "exact_match" and r["against"] == "score")
    assert row["aspect_type"] == "numeric" and row["n"] == len(numeric) == 2
    # two numeric items: scipy gives +-1 from two points; medeval calls it undefined and says why
    assert abs(stats.spearmanr([cons[r] for r in numeric], [em[r] for r in numeric]).statistic) == pytest.approx(1)
    assert row["spearman"] is None and row["undefined_reason"]
    text = [r for r in cons if types[r] != "numeric"]
    pooled = next(r for r in rows if r["metric"] == "bleu1" and r["against"] == "score"
                  and r["aspect_type"] == "enumerated+declarative")
    assert pooled["n"] == len(text) == 6
    assert "(enumerated+declarative: n = 6)" in s["methods"] and "(exact match: n = 2)" in s["methods"]
    assert s["machine_overlap"]["shared_items"] == 0 and "nothing" not in s["machine_overlap"]["text"]
    assert "Overlap with calibration: threshold set v1" in s["methods"]
    page = rep.render_html(s)
    assert "Overlap with calibration." in page and "<th>items</th>" in page
    assert "numeric items (Severity Level), graded by exact match" in page
    assert "exact match (numeric)" in json.dumps(rep.machine_figure(s).to_plotly_json()["data"])  # by its label


def test_untrusted_text_in_names_is_escaped_in_the_report(graded, tmp_path):
    s = _summary(graded)
    s["campaign"]["name"] = "<script>alert(1)</script>"
    page = rep.render_html(s)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_report_agreement(graded, tmp_path):
    def run(*a):
        return subprocess.run([sys.executable, "-m", "medeval", "report-agreement", *a, "--db", str(graded["path"])],
                              cwd=ROOT, capture_output=True, text=True)

    r = run("--campaign", str(graded["campaign"]), "--out", str(tmp_path / "r"), "--no-pdf", "--n-boot", "50")
    assert r.returncode == 0, r.stderr
    assert {line.split("\t")[0] for line in r.stdout.splitlines()} == {
        "html", "json", "panel_csv", "annotators_csv", "drift_csv", "disagreements_csv", "machine_csv",
        "gold_csv"}
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["bootstrap"] == {"n_boot": 50, "seed": 0}
    bad = run("--campaign", "42", "--out", str(tmp_path / "x"), "--no-pdf")
    assert bad.returncode == 1 and "no campaign 42" in bad.stderr


def test_statistics_follow_the_scale_likert_and_preference():
    """Likert ratings get ICC(2,1)/(2,k) and interval alpha; preferences nominal alpha (vs pingouin, krippendorff)."""
    import pandas as pd
    import pingouin

    rng = np.random.default_rng(5)
    truth = rng.integers(1, 6, 30)
    ratings = {r: np.clip(truth + rng.choice([-1, 0, 0, 1], 30), 1, 5) for r in ("r1", "r2", "r3")}
    graded = [dash.Answer(i, r, int(v[i]), False, 0.0) for r, v in ratings.items() for i in range(30)]
    panel = {p["key"]: p["estimate"] for p in dash.panel_statistics(graded, scale="likert",
                                                                     categories=(1, 2, 3, 4, 5), n_boot=0)}
    long = pd.DataFrame([(i, r, int(v[i])) for r, v in ratings.items() for i in range(30)],
                        columns=["item", "rater", "score"])
    ref = pingouin.intraclass_corr(long, targets="item", raters="rater", ratings="score").set_index("Type")
    assert panel["icc2"]["value"] == pytest.approx(ref.loc["ICC(A,1)", "ICC"], abs=1e-12)
    assert panel["icc2k"]["value"] == pytest.approx(ref.loc["ICC(A,k)", "ICC"], abs=1e-12)
    matrix = np.array([ratings[r] for r in ("r1", "r2", "r3")], dtype=float)
    assert panel["alpha_interval"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval"), abs=1e-9)
    choices = ["A", "B", "tie"]
    prefs = {r: [choices[(i + (j == 2 and i % 3 == 0)) % 3] for i in range(12)] for j, r in enumerate(("p", "q", "s"))}
    graded = [dash.Answer(i, r, v[i], False, 0.0) for r, v in prefs.items() for i in range(12)]
    panel = {p["key"]: p["estimate"] for p in dash.panel_statistics(graded, scale="preference", categories=choices,
                                                                     n_boot=0)}
    codes = np.array([[choices.index(x) for x in prefs[r]] for r in ("p", "q", "s")], dtype=float)
    assert panel["alpha_nominal"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=codes, level_of_measurement="nominal"), abs=1e-12)
    with pytest.raises(MedevalError, match="scale 'ratio'"):
        dash.panel_statistics(graded, scale="ratio")
    with pytest.raises(MedevalError, match="not one of the categories"):
        dash.panel_statistics(graded, scale="preference", categories=["A", "B"])
