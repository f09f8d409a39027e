"""Adjudication (issue 15, part 3): the adjudicator role and its migration, the queue, append-only
adjudications, the consensus methods and where they are used, and the agreement report's account of it.

The grades are hand-made (GRADES), so every expected queue order, consensus and share is counted by hand.
"""

import sqlite3

import numpy as np
import pytest
from click.testing import CliRunner

from medeval.accounts import auth
from medeval.annotation import adjudication as adj
from medeval.annotation import campaigns as cp
from medeval.calibration import cutoffs as cal
from medeval.calibration import validation as val
from medeval.core import runtime
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports import agreement_report as rep
from medeval.reports import dashboard as dash
from medeval.store import migrate
from medeval.store.db import connect
from tests.conftest import copy_db, db_dump, invoke

PW = "correct horse battery"
NAMES = ["aa", "bb", "cc"]
# tiers per item (rows, in item id order) for annotators aa, bb, cc; None = skipped
GRADES = [
    [2, 2, 1],     # 0: range 1, sd 0.471
    [0, 0, 0],     # 1: agreement
    [0, 2, 2],     # 2: range 2, sd 0.943, majority 2
    [0, 1, None],  # 3: range 1, sd 0.5 (two tiers)
    [2, 2, 2],     # 4: agreement
    [1, 0, 2],     # 5: range 2, sd 0.816, no majority
    [0, 0, 1],     # 6: range 1, sd 0.471
    [2, 0, 0],     # 7: range 2, sd 0.943, majority 0
]
HOSTILE = '<img src=x onerror="alert(1)"> **bold** [lnk](https://example.invalid)'


def _populate(db, small_files) -> dict:
    """Responses, scores, a researcher, an adjudicator (when the schema allows it), three annotators, GRADES."""
    import_files(db, **small_files)
    score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    auth.add_user(db, "res", PW, "researcher")
    for u in NAMES:
        auth.add_user(db, u, PW, "annotator")
    cid = cp.create_random_campaign(db, "round 1", 8, NAMES, k=3, seed=1, actor=None)
    items = [i for (i,) in db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ? ORDER BY id", (cid,))]
    for j, u in enumerate(NAMES):
        user = auth.get_user(db, u)
        for n, (item, row) in enumerate(zip(items, GRADES)):
            flagged = n == 5 and u == "cc"
            cp.submit_grade(db, user, item, tier=row[j], skipped=row[j] is None, client_token=f"{u}{n}",
                            flagged=flagged, note=HOSTILE if flagged else None, at=1_700_000_000.0 + 30 * n + j)
    auth.create_session(db, auth.get_user(db, "aa"))
    return {"campaign": cid, "items": items}


@pytest.fixture(scope="module")
def graded_template(tmp_path_factory):
    """The graded campaign with an adjudicator, built once per module (argon2 hashes are slow on purpose)."""
    from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, write

    folder = tmp_path_factory.mktemp("graded")
    files = {"kb": write(folder / "kb.csv", KB_CSV), "responses": write(folder / "responses.csv", RESP_CSV),
             "models": write(folder / "models.csv", MODELS_CSV)}
    with connect(folder / "graded.db") as db:
        out = _populate(db, files)
        auth.add_user(db, "senior", PW, "adjudicator")
    return folder / "graded.db", out


@pytest.fixture
def graded(db_path, graded_template):
    from tests.conftest import copy_db

    path, out = graded_template
    copy_db(path, db_path)
    return {"path": db_path, **out}


def _user(db, name):
    return auth.get_user(db, name)


# --- the migration -------------------------------------------------------------------------------------------

def test_migration_rebuilds_users_keeping_every_row_and_foreign_key(db_path, small_files, monkeypatch):
    """A database populated by the code before m013 gets the new role; every row and reference survives."""
    # every migration but m013 and the later ones that change its table (today's code needs the later tables to
    # populate; their references to users must survive the rebuild too)
    without_m013 = [m for m in migrate.migrations() if m[0] not in ("m013_adjudication", "m027_adjudication_fully_shown")]
    with runtime.use(runtime.current().but(migrations=migrate.Migrations(without_m013))), connect(db_path) as db:
        _populate(db, small_files)
        auth.create_session(db, _user(db, "res"))
        with pytest.raises(sqlite3.IntegrityError, match="CHECK"):  # the old schema refuses the new role
            db.conn.execute("INSERT INTO users (username, password_hash, role, created_at) VALUES "
                            "('x1', 'h', 'adjudicator', 'now')")
        # nor had users its later column (m029, each account's language): today's code needed it to populate
        db.conn.execute("ALTER TABLE users DROP COLUMN language")
        db.conn.execute("DELETE FROM _migrations WHERE name = 'm029_user_language'")
        db.conn.commit()
    old = dict(db_dump(db_path))
    # every migration again (the process's runtime): m013 and any later ones are missing
    with connect(db_path) as db:
        assert "m013_adjudication" in {n for (n,) in db.conn.execute("SELECT name FROM _migrations")}
        assert db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        sql = db.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'users'").fetchone()[0]
        assert "'adjudicator'" in sql and "COLLATE NOCASE" in sql
        auth.add_user(db, "senior", PW, "adjudicator")
        with pytest.raises(sqlite3.IntegrityError):  # the references are still enforced after the rebuild
            db.conn.execute("INSERT INTO sessions (token_hash, user_id, created_at, last_seen) VALUES ('t', 999, 0, 0)")
        with pytest.raises(sqlite3.IntegrityError):  # and the role is still checked
            db.conn.execute("UPDATE users SET role = 'superuser' WHERE username = 'aa'")
    new = dict(db_dump(db_path))
    for table, rows in old.items():
        if table == "users":  # (each row now ends with its language, NULL: not chosen)
            assert {r.removesuffix(", None)") + ")" for r in new[table]} >= set(rows)
            assert len(new[table]) == len(rows) + 1
        elif table not in ("_migrations", "audit_log", "sqlite_sequence"):
            assert new[table] == rows, table
    assert set(old["audit_log"]) <= set(new["audit_log"])


def test_migration_ran_on_a_copy_of_the_demo_database(demo_template, tmp_path):
    path = copy_db(demo_template, tmp_path / "demo.db")
    with connect(path) as db:
        assert db.conn.execute("SELECT 1 FROM _migrations WHERE name = 'm013_adjudication'").fetchone()
        assert db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
        n_scores = db.conn.execute("SELECT count(*) FROM scores").fetchone()[0]
        auth.add_user(db, "senior", PW, "adjudicator")
        assert _user(db, "senior").role == "adjudicator" and n_scores > 0


# --- roles ---------------------------------------------------------------------------------------------------

def test_roles_are_checked_in_the_library(graded):
    with connect(graded["path"]) as db:
        ann, senior, res = _user(db, "aa"), _user(db, "senior"), _user(db, "res")
        item = graded["items"][2]
        for call in (lambda: adj.queue(db, graded["campaign"], actor=ann), lambda: adj.campaigns(db, actor=ann),
                     lambda: adj.adjudicate(db, ann, item, 2, "looks right"),
                     lambda: adj.adjudicate(db, None, item, 2, "looks right")):
            with pytest.raises(PermissionDenied):
                call()
        assert db.conn.execute("SELECT count(*) FROM adjudications").fetchone()[0] == 0
        assert adj.queue(db, graded["campaign"], actor=senior)
        assert adj.adjudicate(db, senior, item, 2, "looks right")
        assert adj.adjudicate(db, res, item, 1, "second look")
        with pytest.raises(PermissionDenied):  # an adjudicator is no researcher: no agreement statistics
            dash.campaign_agreement(db, graded["campaign"], actor=senior, n_boot=0)


def test_an_adjudicator_is_never_assigned_grading_work(graded):
    """Adjudicators cannot grade, so they are not offered as annotators and a campaign naming one is refused."""
    from medeval.annotation import tasks

    with connect(graded["path"]) as db:
        res = _user(db, "res")
        assert "senior" not in {c["username"] for c in cp.annotator_choices(db, actor=res)}
        before = db.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0]
        with pytest.raises(MedevalError, match="adjudicator"):
            cp.create_random_campaign(db, "with a senior", 3, ["aa", "senior"], k=2, seed=1, actor=res)
        with pytest.raises(MedevalError, match="adjudicator"):
            tasks.create_campaign(db, "accr", "with a senior", ["aa", "senior"], k=2, seed=1, config={}, actor=res)
        assert db.conn.execute("SELECT count(*) FROM campaigns").fetchone()[0] == before


def test_every_place_that_lists_roles_knows_the_adjudicator():
    from medeval.cli.users import ROLE_CHOICES

    assert "adjudicator" in auth.ROLES and ROLE_CHOICES == auth.ROLES
    from medeval.cli.users import LANGUAGE_CHOICES
    from medeval.core import i18n

    assert LANGUAGE_CHOICES == i18n.LANGUAGES
    assert set(auth.ADJUDICATING_ROLES) == {"adjudicator", "researcher", "admin"}


def test_cli_adds_an_adjudicator(db_path):
    res = CliRunner().invoke(__import__("medeval.cli", fromlist=["main"]).main,
                             ["users", "add", "senior", "--role", "adjudicator", "--db", str(db_path)],
                             input=PW + "\n")
    assert res.exit_code == 0, res.output
    with connect(db_path) as db:
        assert _user(db, "senior").role == "adjudicator"


# --- the queue -----------------------------------------------------------------------------------------------

def test_queue_order_and_distance_filter(graded):
    it = graded["items"]
    with connect(graded["path"]) as db:
        senior = _user(db, "senior")
        wide = adj.queue(db, graded["campaign"], min_distance=2, actor=senior)
        every = adj.queue(db, graded["campaign"], min_distance=1, actor=senior)
        with pytest.raises(MedevalError, match="1 .* or 2"):
            adj.queue(db, graded["campaign"], min_distance=3, actor=senior)
    assert [r["item"] for r in wide] == [it[2], it[7], it[5]]  # range 2: sd 0.943, 0.943 (by id), 0.816
    assert [r["item"] for r in every] == [it[2], it[7], it[5], it[3], it[0], it[6]]
    r5 = wide[2]
    assert [(g["annotator"], g["tier"]) for g in r5["annotators"]] == [("aa", 1), ("bb", 0), ("cc", 2)]
    assert r5["annotators"][2]["note"] == HOSTILE and r5["annotators"][0]["note"] == ""
    assert r5["majority"] is None and r5["median"] == 1 and r5["adjudication"] is None
    assert {"disease", "aspect", "reference", "response"} <= set(r5) and "model" not in r5  # blind
    assert [g["tier"] for g in every[3]["annotators"]] == [0, 1]  # the skip is left out


# --- append-only adjudications -------------------------------------------------------------------------------

def test_adjudications_are_append_only_and_audited(graded):
    item = graded["items"][7]
    with connect(graded["path"]) as db:
        senior = _user(db, "senior")
        first = adj.adjudicate(db, senior, item, 1, "partly right")
        assert adj.adjudicate(db, senior, item, 1, "partly right") == first  # a double click adds nothing
        second = adj.adjudicate(db, senior, item, 0, "on reflection: wrong drug", fully_shown=True)
        rows = db.conn.execute("SELECT id, tier, supersedes, fully_shown FROM adjudications ORDER BY id").fetchall()
        assert rows == [(first, 1, None, None), (second, 0, first, 1)]  # what the screen showed, when it said
        with pytest.raises(MedevalError, match="fully_shown"):
            adj.adjudicate(db, senior, item, 2, "x", fully_shown="yes")
        for sql in ("UPDATE adjudications SET tier = 2", "DELETE FROM adjudications"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                db.conn.execute(sql)
        cur = adj.current_adjudications(db, graded["campaign"])[item]
        assert (cur["tier"], cur["reason"], cur["by"], cur["versions"]) == (0, "on reflection: wrong drug", "senior", 2)
        audit = [r for r in auth.audit_rows(db) if r["action"] == "adjudication.record"]
        assert [r["target"] for r in audit] == [str(item), str(item)]


@pytest.mark.parametrize("tier, reason, error", [
    (2, "", "give a reason"), (2, "   \n ", "give a reason"), (3, "fine", "final tier is 0"),
    (True, "fine", "final tier is 0"), (2, "x" * 2001, "the limit is 2,000"), (2, "a\x00b", "NUL"),
])
def test_bad_input_is_refused_and_nothing_is_stored(graded, tier, reason, error):
    with connect(graded["path"]) as db:
        before = db_dump(graded["path"])
        with pytest.raises(MedevalError, match=error):
            adj.adjudicate(db, _user(db, "senior"), graded["items"][2], tier, reason)
        with pytest.raises(MedevalError, match="no campaign item"):
            adj.adjudicate(db, _user(db, "senior"), 99999, 1, "fine")
    assert db_dump(graded["path"]) == before


# --- consensus -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tiers, median, majority, has_majority", [
    ([0, 0, 2], 0, 0, True), ([0, 2, 2], 2, 2, True),
    ([0, 1, 2], 1, 1, False),        # three-way tie: the lower median
    ([0, 2], 0, 0, False),           # two annotators split: the lower median, never an invented 1
    ([1, 1, 2, 2], 1, 1, False),     # an even tie
    ([0, 1, 2, 2], 1, 2, True),      # median and majority differ
    ([0, 0, 1, 2, 2, 2], 1, 2, True),
])
def test_consensus_methods_by_hand(tiers, median, majority, has_majority):
    assert adj.lower_median(tiers) == median == cal.consensus(tiers)
    assert adj.majority(tiers) == majority
    assert (adj.majority_tier(tiers) is not None) == has_majority


def test_consensus_of_a_campaign_by_each_method(graded):
    it = graded["items"]
    with connect(graded["path"]) as db:
        median = adj.consensus(db, graded["campaign"], "median")
        assert median == adj.consensus(db, graded["campaign"], "majority")  # k = 3: they coincide here
        assert [median[i] for i in it] == [2, 0, 2, 0, 2, 1, 0, 0]
        adj.adjudicate(db, _user(db, "senior"), it[2], 1, "partly right")
        adjudicated = adj.consensus(db, graded["campaign"], "adjudicated")
        assert adjudicated == {**median, it[2]: 1}
        with pytest.raises(MedevalError, match="not one of median, majority, adjudicated"):
            adj.consensus(db, graded["campaign"], "mean")


def test_calibration_and_validation_use_the_chosen_consensus(graded):
    """Adjudicating items away from the median changes the expert tiers, the cut-offs and the Spearman."""
    it = graded["items"]
    cid = graded["campaign"]
    with connect(graded["path"]) as db:
        before = {m: val.consensus_tiers(db, cid, m) for m in adj.METHODS}
        senior = _user(db, "senior")
        for i, tier in ((it[0], 0), (it[4], 0), (it[1], 2), (it[6], 2)):
            adj.adjudicate(db, senior, i, tier, "senior's reading")
        med = cal.graded_examples(cal.campaign_rows(db, cid))
        adjd = cal.graded_examples(cal.campaign_rows(db, cid, consensus="adjudicated"))
        assert med.keys() == adjd.keys()
        assert any(not np.array_equal(med[k][1], adjd[k][1]) for k in med)
        assert all(np.allclose(med[k][0], adjd[k][0]) for k in med)  # the same items and scores
        cal_med = [c.to_dict() for c in cal.calibrate_rows(cal.campaign_rows(db, cid), n_boot=0)]
        cal_adj = [c.to_dict() for c in cal.calibrate_rows(cal.campaign_rows(db, cid, consensus="adjudicated"),
                                                           n_boot=0, consensus="adjudicated")]
        assert cal_med != cal_adj
        m_med = val.machine_agreement(db, cid, actor=None)
        m_adj = val.machine_agreement(db, cid, actor=None, consensus="adjudicated")
        pooled = [(a["spearman"], b["spearman"]) for a, b in zip(m_med, m_adj)
                  if a["aspect_type"] == "enumerated+declarative" and a["against"] == "score"]
        assert pooled and any(a != b for a, b in pooled)
        after = {m: val.consensus_tiers(db, cid, m) for m in adj.METHODS}
    assert after["median"] == before["median"] and after["majority"] == before["majority"]
    assert after["adjudicated"] != before["adjudicated"]


def test_majority_differs_from_median_in_calibration_rows():
    rows = [{"metric": "rouge1", "aspect_type": "enumerated", "score": s, "tier": t, "item": f"i{n}"}
            for n, (s, tiers) in enumerate([(0.1, [0, 1, 2, 2]), (0.5, [0, 0, 1]), (0.9, [2, 2, 2])])
            for t in tiers]
    assert cal.graded_examples(rows)[("rouge1", "enumerated")][1].tolist() == [1, 0, 2]
    assert cal.graded_examples(rows, consensus="majority")[("rouge1", "enumerated")][1].tolist() == [2, 0, 2]
    with pytest.raises(MedevalError, match="adjudications"):  # raw rows of a file have none
        cal.graded_examples(rows, consensus="adjudicated")


def test_publication_records_the_consensus(graded):
    cid = graded["campaign"]
    with connect(graded["path"]) as db:
        adj.adjudicate(db, _user(db, "senior"), graded["items"][2], 1, "partly right")
        results = cal.calibrate_rows(cal.campaign_rows(db, cid, consensus="adjudicated"), n_boot=0)
        v = cal.publish(db, results, name="adjudicated set", source=cal.campaign_source(db, cid),
                        consensus="adjudicated")
        assert th.load(db, v).provenance["consensus"] == "adjudicated"
        with pytest.raises(MedevalError, match="consensus 'mean'"):
            cal.publish(db, results, name="x", consensus="mean")
    invoke("calibrate", "--campaign", cid, "--db", graded["path"], "--n-boot", 0, "--consensus", "majority",
           "--publish", "majority set")
    with connect(graded["path"]) as db:
        assert th.active(db).provenance["consensus"] == "majority"


def test_cli_refuses_an_adjudicated_consensus_from_a_file(tmp_path, db_path):
    from medeval.cli import main

    f = tmp_path / "graded.csv"
    f.write_text("metric,aspect_type,score,tier\nrouge1,enumerated,0.1,0\nrouge1,enumerated,0.5,1\n"
                 "rouge1,enumerated,0.9,2\n")
    res = CliRunner().invoke(main, ["calibrate", str(f), "--consensus", "adjudicated", "--db", str(db_path)])
    assert res.exit_code == 1 and "Error: --consensus adjudicated needs" in res.output


# --- the agreement report ------------------------------------------------------------------------------------

def test_agreement_statistics_are_unchanged_by_adjudication_and_the_report_counts_it(graded, tmp_path):
    it = graded["items"]
    cid = graded["campaign"]
    keys = ("panel", "annotators", "disagreements", "tier_distribution", "n_grades", "n_items_graded")
    with connect(graded["path"]) as db:
        before = dash.campaign_agreement(db, cid, actor=None, n_boot=50, seed=1)
        senior = _user(db, "senior")
        adj.adjudicate(db, senior, it[2], 2, "the two agree with the reference")  # majority 2: sided
        adj.adjudicate(db, senior, it[7], 1, "partly right")  # majority 0: not sided
        adj.adjudicate(db, senior, it[5], 1, HOSTILE)  # no majority: not counted
        after = dash.campaign_agreement(db, cid, actor=None, n_boot=50, seed=1, consensus="adjudicated")
        assert {k: after[k] for k in keys} == {k: before[k] for k in keys}
        assert before["adjudication"]["n_adjudicated"] == 0 and "No item was adjudicated" in before["methods"]
        a = after["adjudication"]
        assert (a["n_adjudicated"], a["n_with_majority"], a["sided_with_majority"]) == (3, 2, 1)
        assert a["share_sided_with_majority"] == 0.5
        adj.adjudicate(db, senior, it[7], 0, "on reflection: wrong")  # supersedes: now sided
        again = dash.campaign_agreement(db, cid, actor=None, n_boot=0, consensus="adjudicated")
    assert (again["adjudication"]["sided_with_majority"], again["adjudication"]["n_adjudications"]) == (2, 4)
    assert after["consensus"] == "adjudicated" and "adjudicated tier (a senior clinician's" in after["methods"]
    assert "3 items were adjudicated" in after["methods"] and "in 1 of 2 adjudicated items" in after["methods"]
    assert "median clinician tier" in before["methods"]
    html = rep.render_html(after)
    assert "3 items adjudicated" in html and "in 1 of 2 adjudicated items with a majority (50.0%)" in html
    assert "Consensus of the clinicians: adjudicated" in html


def test_report_agreement_cli_takes_the_consensus_method(graded, tmp_path):
    from medeval.cli.main import main

    with connect(graded["path"]) as db:
        adj.adjudicate(db, _user(db, "senior"), graded["items"][2], 2, "the two agree with the reference")
    out = tmp_path / "rep"
    res = CliRunner().invoke(main, ["report-agreement", "--campaign", str(graded["campaign"]), "--out", str(out),
                                    "--no-pdf", "--n-boot", "0", "--consensus", "adjudicated",
                                    "--db", str(graded["path"])])
    assert res.exit_code == 0, res.output
    summary = __import__("json").loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["consensus"] == "adjudicated" and summary["adjudication"]["n_adjudicated"] == 1
    assert "Consensus of the clinicians: adjudicated" in (out / "report.html").read_text(encoding="utf-8")
    bad = CliRunner().invoke(main, ["report-agreement", "--campaign", str(graded["campaign"]), "--out", str(out),
                                    "--no-pdf", "--consensus", "mean", "--db", str(graded["path"])])
    assert bad.exit_code != 0 and "mean" in bad.output

# --- the page (AppTest) --------------------------------------------------------------------------------------

def _app(path, username):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    with connect(path) as db:
        at.session_state[TEST_TOKEN_KEY] = auth.create_session(db, auth.authenticate(db, username, PW))
    return at.run()


@pytest.mark.slow  # AppTest runs whole pages
def test_adjudicate_page_saves_a_final_tier_with_a_reason(graded):
    it = graded["items"]
    at = _app(graded["path"], "senior")
    assert not at.exception
    with pytest.raises(ValueError, match="Could not find"):  # an adjudicator has no researcher pages
        at.switch_page("app_pages/dashboard.py")
    with pytest.raises(ValueError, match="Could not find"):
        at.switch_page("app_pages/grade.py")
    at.switch_page("app_pages/adjudicate.py").run()
    assert not at.exception
    assert at.selectbox(key="adj_item").value == it[2]  # the widest disagreement first
    def given():  # the annotators' tiers, a line each: "<who>: <tier>"
        return [line.split(": ")[0] for t in at.text if t.value.startswith(("Annotator ", *NAMES))
                for line in t.value.splitlines()]

    assert given() == ["Annotator 1", "Annotator 2", "Annotator 3"]
    at.toggle(key="adj_names").set_value(True).run()
    assert given() == NAMES
    at.button(key=f"adj_pick_{it[2]}_1").click().run()  # key 2 in a browser: Partially Correct
    at.text_area(key=f"adj_reason_{it[2]}").input(HOSTILE)
    at.button(key=f"FormSubmitter:adj_form_{it[2]}-Save adjudication").click().run()
    assert not at.exception
    with connect(graded["path"]) as db:
        cur = adj.current_adjudications(db, graded["campaign"])
    assert (cur[it[2]]["tier"], cur[it[2]]["reason"], cur[it[2]]["by"]) == (1, HOSTILE, "senior")
    assert any("Saved" in s.value and "Partially Correct" in s.value for s in at.success)
    assert at.selectbox(key="adj_item").value == it[7]  # on to the next open item
    # a flag note with markup is plain text, never Markdown
    at.selectbox(key="adj_item").set_value(it[5]).run()
    assert any(t.value.endswith(f": {HOSTILE}") or f": {HOSTILE}\n" in t.value for t in at.text)
    assert all(HOSTILE not in m.value for m in at.markdown)
    # no tier chosen: refused with a message, nothing stored
    at.text_area(key=f"adj_reason_{it[5]}").input("why")
    at.button(key=f"FormSubmitter:adj_form_{it[5]}-Save adjudication").click().run()
    assert any("Choose the final tier" in e.value for e in at.error)
    with connect(graded["path"]) as db:
        assert it[5] not in adj.current_adjudications(db, graded["campaign"])


@pytest.mark.slow  # AppTest runs whole pages
def test_researchers_reach_the_adjudicate_page_and_annotators_do_not(graded):
    at = _app(graded["path"], "res")
    at.switch_page("app_pages/adjudicate.py").run()
    assert not at.exception and at.selectbox(key="adj_item").value == graded["items"][2]
    at = _app(graded["path"], "aa")
    with pytest.raises(ValueError, match="Could not find"):
        at.switch_page("app_pages/adjudicate.py")
