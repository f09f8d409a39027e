"""Every page through AppTest: sign-in state, role-based navigation, grading, campaigns, users.

AppTest cannot send cookies, so a test signs in through the library (a real session in
the database) and hands the token to the app the way ``webui.page`` reads it in tests.
What only a browser shows (cookies, keyboard shortcuts, reloads) is in test_browser.py.
"""

import ast
import json

import pytest
from streamlit.testing.v1 import AppTest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation.screen_keys import screen_key
from medeval.core import settings
from medeval.store.db import connect
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from tests.conftest import ROOT
from webui.page import TEST_TOKEN_KEY

pytestmark = pytest.mark.slow  # AppTest runs whole pages

PW = "correct horse battery"
XSS = '<img src=x onerror="alert(1)"><b>bold</b> **md**'


@pytest.fixture
def app_db(db_path, small_files):
    """Scored responses (one of them hostile markup), four users and a campaign of 6 items, k = 2."""
    responses = small_files["responses"]
    quoted = '"' + XSS.replace('"', '""') + '"'
    responses.write_text(responses.read_text().replace("ModelB,感冒,Medications,无", "ModelB,感冒,Medications," + quoted))
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        auth.add_user(db, "admin", PW, "admin")
        auth.add_user(db, "res", PW, "researcher")
        auth.add_user(db, "doc1", PW, "annotator")
        auth.add_user(db, "doc2", PW, "annotator")
        cid = cp.create_random_campaign(db, "round 1", 8, ["doc1", "doc2"], k=2, seed=0, actor=None)
    return {"path": db_path, "campaign": cid}


def _token(path, username) -> str:
    with connect(path) as db:
        return auth.create_session(db, auth.authenticate(db, username, PW))


def _app(path=None, username=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    if username:
        at.session_state[TEST_TOKEN_KEY] = _token(path, username)
    return at


def _texts(at) -> str:
    parts = [e.value for kind in ("title", "subheader", "markdown", "caption", "text", "info", "success", "warning",
                                   "error") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def _label(sb, value):
    try:
        return sb.format_func(value)
    except (KeyError, IndexError, TypeError):
        return None


def choose(at, key: str, name: str) -> None:
    """Pick the option of select box ``key`` whose label starts with ``name``, as a user does (by its label,
    whatever the options' values are: campaign ids, or positions in a list)."""
    sb = at.selectbox(key=key)
    with connect(settings.db_path()) as db:  # the test's database (MEDEVAL_DB)
        ids = [i for (i,) in db.conn.execute("SELECT id FROM campaigns")]
    value = next(v for v in [*range(len(sb.options)), *ids] if (_label(sb, v) or "").startswith(name))
    sb.set_value(value).run()
    assert not at.exception


def shown(at, key: str) -> str:
    """The label select box ``key`` shows now."""
    sb = at.selectbox(key=key)
    return sb.options[sb.index]


def test_signed_out_sees_no_data_only_a_sign_in_link(app_db, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DEMO", "1")
    at = _app().run()
    assert not at.exception
    assert any("not signed in" in i.value for i in at.info)
    assert any("DEMO MODE" in w.value for w in at.warning)
    assert "感冒" not in _texts(at) and "round 1" not in _texts(at)
    with pytest.raises(ValueError, match="Could not find"):
        at.switch_page("app_pages/grade.py")


def test_a_bad_database_path_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DB", str(tmp_path / "missing" / "x.db"))
    at = _app().run()
    assert not at.exception
    assert any("does not exist" in e.value for e in at.error)


def test_an_ended_session_signs_out_at_the_next_rerun(app_db):
    at = _app(app_db["path"], "doc1").run()
    assert "Item 1 of" in _texts(at) or any("Item 1 of" in str(p.proto) for p in at.get("progress"))
    with connect(app_db["path"]) as db:
        auth.logout(db, at.session_state[TEST_TOKEN_KEY])
    at.run()
    assert any("not signed in" in i.value for i in at.info)


@pytest.mark.parametrize("username, reachable, unreachable", [
    ("doc1", ["app_pages/grade.py", "app_pages/annotate.py"],
     ["app_pages/campaigns.py", "app_pages/new_campaign.py", "app_pages/users.py", "app_pages/dashboard.py",
      "app_pages/leaderboard.py", "app_pages/tuning.py", "app_pages/new_task.py", "app_pages/task_results.py"]),
    ("res", ["app_pages/campaigns.py", "app_pages/dashboard.py", "app_pages/tuning.py", "app_pages/leaderboard.py",
             "app_pages/new_campaign.py", "app_pages/task_results.py", "app_pages/new_task.py",
             "app_pages/grade.py", "app_pages/annotate.py"],
     ["app_pages/users.py"]),
    ("admin", ["app_pages/users.py", "app_pages/campaigns.py", "app_pages/dashboard.py", "app_pages/tuning.py",
               "app_pages/leaderboard.py", "app_pages/task_results.py", "app_pages/new_task.py",
               "app_pages/new_campaign.py", "app_pages/grade.py", "app_pages/annotate.py"], []),
])
def test_navigation_holds_only_the_roles_pages(app_db, username, reachable, unreachable):
    at = _app(app_db["path"], username).run()
    assert not at.exception
    assert any(f"Signed in as **{username}**" in m.value for m in at.sidebar.markdown)
    for page in reachable:
        at.switch_page(page).run()
        assert not at.exception, page
    for page in unreachable:
        with pytest.raises(ValueError, match="Could not find"):
            at.switch_page(page)


def _grade_page(app_db, username="doc1"):
    at = _app(app_db["path"], username).run()
    at.switch_page("app_pages/grade.py").run()
    assert not at.exception
    return at


def _shown_item(at) -> str:
    """The screen key (``BlindItem.key``) of the item the grade buttons are for."""
    return next(b.key for b in at.button if b.key and b.key.startswith("grade_")).split("_")[1]


def _item_id(path, username: str, key: str) -> int:
    """The item behind a screen key: the page never shows an item's id (issue 23 §3)."""
    with connect(path) as db:
        u = auth.get_user(db, username)
        ids = [r[0] for r in db.conn.execute("SELECT item_id FROM assignments WHERE user_id = ?", (u.id,))]
        found = [i for i in ids if screen_key(db, u, f"i:{i}") == key]
    assert len(found) == 1, (key, found)
    return found[0]


def _progress_text(at) -> str:
    return at.get("progress")[0].proto.text


def test_grading_saves_each_answer_and_shows_the_next_item(app_db):
    at = _grade_page(app_db)
    assert _progress_text(at) == "Item 1 of 8"
    # blind: no score, no model name anywhere on the page
    assert "ModelA" not in _texts(at) and "ModelB" not in _texts(at) and "score" not in _texts(at).lower()
    first = _shown_item(at)
    at.button(key=f"grade_{first}_1").click().run()
    assert not at.exception
    assert any("Saved" in s.value and "Partially Correct" in s.value for s in at.success)
    assert _progress_text(at) == "Item 2 of 8" and _shown_item(at) != first
    second = _shown_item(at)
    at.button(key=f"skip_{second}").click().run()
    with connect(app_db["path"]) as db:
        rows = db.conn.execute("SELECT g.item_id, g.tier, g.skipped FROM grade_annotations g JOIN users u ON "
                               "u.id = g.user_id WHERE u.username = 'doc1' ORDER BY g.id").fetchall()
    assert rows == [(_item_id(app_db["path"], "doc1", first), 1, 0), (_item_id(app_db["path"], "doc1", second), None, 1)]


def test_recent_answers_can_be_changed_and_history_is_kept(app_db):
    at = _grade_page(app_db)
    first = _shown_item(at)
    item = _item_id(app_db["path"], "doc1", first)
    at.button(key=f"grade_{first}_0").click().run()
    assert not [b for b in at.button if (b.key or "").startswith("reopen_")]  # drawn only when asked for
    at.button(key="recent_toggle").click().run()
    at.button(key=f"reopen_{first}").click().run()  # the item again, whole, to answer anew
    assert not at.exception and _shown_item(at) == first
    assert "your answer was: Completely Wrong" in _progress_text(at)
    at.button(key=f"grade_{first}_2").click().run()
    assert not at.exception
    assert any("Changed" in s.value and "Basically Correct" in s.value for s in at.success)
    with connect(app_db["path"]) as db:
        rows = db.conn.execute("SELECT id, tier, supersedes FROM grade_annotations WHERE item_id = ? ORDER BY id",
                               (item,)).fetchall()
        changes = db.conn.execute("SELECT actor, target FROM audit_log WHERE action = 'annotation.change'").fetchall()
    assert [r[1] for r in rows] == [0, 2] and rows[1][2] == rows[0][0]
    assert changes == [("doc1", str(item))]


def test_flag_needs_a_note_and_is_saved_with_it(app_db):
    at = _grade_page(app_db)
    item = _shown_item(at)
    at.button(key=f"flag_{item}").click().run()
    assert all(b.disabled for b in at.button if b.key and b.key.startswith("grade_"))  # no grading meanwhile
    at.button(key=f"FormSubmitter:flag_form_{item}-Save flag").click().run()
    assert any("Write a short note" in e.value for e in at.error)
    at.text_input(key=f"flag_note_{item}").input("reference 3 is outdated")
    at.radio(key=f"flag_tier_{item}").set_value(1)
    at.button(key=f"FormSubmitter:flag_form_{item}-Save flag").click().run()
    assert not at.exception
    with connect(app_db["path"]) as db:
        row = db.conn.execute("SELECT tier, skipped, flagged, note FROM grade_annotations WHERE item_id = ?",
                              (_item_id(app_db["path"], "doc1", item),)).fetchone()
    assert row == (1, 0, 1, "reference 3 is outdated")
    assert _progress_text(at) == "Item 2 of 8"


def test_model_answers_are_plain_text(app_db):
    at = _grade_page(app_db)
    for _ in range(8):
        if any(XSS in t.value for t in at.text):
            break
        at.button(key=f"grade_{_shown_item(at)}_1").click().run()
    assert any(t.value == XSS for t in at.text)  # st.text: shown as written, never parsed
    assert not any("<b>" in m.value for m in at.markdown)


def test_finishing_then_revisiting_skipped_items(app_db):
    at = _grade_page(app_db)
    skipped = _shown_item(at)
    at.button(key=f"skip_{skipped}").click().run()
    for _ in range(7):
        at.button(key=f"grade_{_shown_item(at)}_2").click().run()
    assert any("1 skipped" in i.value for i in at.info)
    at.button(key="revisit").click().run()
    assert _shown_item(at) == skipped
    at.button(key=f"grade_{skipped}_0").click().run()
    assert any("All 8 items are graded" in s.value for s in at.success)
    with connect(app_db["path"]) as db:
        assert cp.progress(db, auth.get_user(db, "doc1"), app_db["campaign"]) == (8, 8)


def test_a_closed_campaign_takes_no_more_answers(app_db):
    with connect(app_db["path"]) as db:
        cp.set_campaign_status(db, app_db["campaign"], "closed", actor=auth.get_user(db, "res"))
    at = _grade_page(app_db)
    assert any("closed" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key and b.key.startswith("grade_")]


def test_an_annotator_without_work_is_told_so(app_db):
    with connect(app_db["path"]) as db:
        auth.add_user(db, "doc3", PW, "annotator")
    at = _grade_page(app_db, "doc3")
    assert any("No grading work is assigned" in i.value for i in at.info)


def test_campaigns_page_shows_progress_and_closes_a_campaign(app_db):
    at = _app(app_db["path"], "res").run()  # researcher's default page: Campaigns
    assert not at.exception
    assert at.title[0].value == "Campaigns"
    assert [m.value for m in at.metric][:1] == ["0 / 16"]
    annotators = at.dataframe[1].value
    assert list(annotators["annotator"]) == ["doc1", "doc2"] and list(annotators["assigned"]) == [8, 8]
    at.button(key="campaign_close").click().run()  # asked once (issue 32 §6): nothing closed yet
    with connect(app_db["path"]) as db:
        assert db.conn.execute("SELECT status FROM campaigns").fetchone()[0] == "open"
    cid = app_db["campaign"]
    assert any("can no longer give or change answers" in m.value for m in at.markdown)
    at.button(key=f"campaign_close_ask_{cid}_no").click().run()  # Cancel: still open, the question gone
    assert not [b for b in at.button if b.key == f"campaign_close_ask_{cid}_yes"]
    at.button(key="campaign_close").click().run()
    at.button(key=f"campaign_close_ask_{cid}_yes").click().run()
    assert not at.exception
    with connect(app_db["path"]) as db:
        assert db.conn.execute("SELECT status FROM campaigns").fetchone()[0] == "closed"
        assert db.conn.execute("SELECT actor FROM audit_log WHERE action = 'campaign.close'").fetchone()[0] == "res"
    assert at.button(key="campaign_reopen")


def test_new_campaign_page_previews_then_creates(app_db):
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/new_campaign.py").run()
    assert not at.exception
    at.button(key="create_campaign").click().run()  # no name yet: said, nothing created (never a dead button)
    assert any(e.value.startswith("Not created: Give the campaign a name.") for e in at.error)
    with connect(app_db["path"]) as db:
        assert [c["name"] for c in cp.list_campaigns(db, actor=None)] == ["round 1"]
    at.text_input(key="new_name").input("calibration").run()
    at.multiselect(key="new_metrics").set_value(["rouge1"]).run()
    at.number_input(key="new_k").set_value(2).run()
    preview = at.dataframe[0].value
    assert len(preview) == 20  # rouge1 x (enumerated, declarative) x 10 intervals
    assert any("fewer responses than asked" in w.value for w in at.warning)
    at.button(key="create_campaign").click().run()
    assert not at.exception
    assert any("created" in s.value for s in at.success)
    with connect(app_db["path"]) as db:
        assert [c["name"] for c in cp.list_campaigns(db, actor=None)] == ["round 1", "calibration"]


def test_new_campaign_page_draws_a_validation_sample_without_the_calibration_items(app_db):
    from medeval.calibration import cutoffs as cal

    with connect(app_db["path"]) as db:  # a set calibrated on "round 1", whose items are all 8 responses
        cal.publish_set(db, {("rouge1", "enumerated"): (0.1, 0.6)}, name="from round 1",
                        provenance={"source": cal.campaign_source(db, app_db["campaign"])})
        calib = {r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?",
                                              (app_db["campaign"],))}
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/new_campaign.py").run()
    at.radio(key="new_kind").set_value("random_validation").run()
    shown = lambda: [c.value.replace("\\", "") for c in at.caption]  # noqa: E731  (Markdown-escaped text)
    assert any(f"left out as items of campaign(s) #{app_db['campaign']}" in c for c in shown())
    at.text_input(key="new_name").input("validation").run()
    at.number_input(key="new_n").set_value(8).run()
    at.number_input(key="new_k").set_value(2).run()
    at.button(key="create_campaign").click().run()
    assert any("can be drawn" in e.value and "asked for 8" in e.value for e in at.error), [e.value for e in at.error]
    at.checkbox(key="new_allow_overlap").check().run()
    assert any("overlap allowed" in c for c in shown())
    at.button(key="create_campaign").click().run()
    assert not at.exception and any("created" in x.value for x in at.success)
    with connect(app_db["path"]) as db:
        cid, cfg = db.conn.execute("SELECT id, config FROM campaigns WHERE name = 'validation'").fetchone()
        items = {r for (r,) in db.conn.execute("SELECT response_id FROM campaign_items WHERE campaign_id = ?",
                                              (cid,))}
    assert json.loads(cfg)["allow_overlap"] is True and items & calib


def test_users_page_adds_a_user_and_exports_the_audit_log(app_db):
    at = _app(app_db["path"], "admin").run()
    assert at.title[0].value == "Users & audit"
    at.text_input(key="add_username").input("doc9")
    at.text_input(key="add_pw1").input("long enough pw")
    at.text_input(key="add_pw2").input("long enough pw")
    at.button(key="FormSubmitter:add_user-Add user").click().run()
    assert not at.exception
    assert any("doc9 added" in s.value for s in at.success)
    with connect(app_db["path"]) as db:
        assert auth.authenticate(db, "doc9", "long enough pw").role == "annotator"
    at.selectbox(key="edit_user").set_value("doc9").run()
    at.button(key="disable_user").click().run()  # asked once
    with connect(app_db["path"]) as db:
        doc9 = auth.get_user(db, "doc9")
        assert doc9.active
    at.button(key=f"disable_user_ask_{doc9.id}_yes").click().run()
    with connect(app_db["path"]) as db:
        assert not auth.get_user(db, "doc9").active
    # mismatched passwords are refused without adding anything
    at.text_input(key="add_username").input("doc10")
    at.text_input(key="add_pw1").input("long enough pw")
    at.text_input(key="add_pw2").input("long enough pX")
    at.button(key="FormSubmitter:add_user-Add user").click().run()
    assert any("differ" in e.value for e in at.error)
    with connect(app_db["path"]) as db:
        assert not db.conn.execute("SELECT 1 FROM users WHERE username = 'doc10'").fetchone()
        actions = [r["action"] for r in auth.audit_rows(db)]
    assert "user.add" in actions and "user.disable" in actions
    assert at.get("download_button")


def test_agreement_dashboard_shows_the_panel_and_the_annotators(app_db):
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/dashboard.py").run()
    assert not at.exception
    assert any("No grades yet" in i.value for i in at.info)
    with connect(app_db["path"]) as db:
        for name, tiers in (("doc1", [0, 1, 2, 2, 1, 0, 2, 1]), ("doc2", [0, 1, 2, 1, 1, 0, 2, 2])):
            u = auth.get_user(db, name)
            for n, tier in enumerate(tiers):
                cp.submit_grade(db, u, cp.next_item(db, u, app_db["campaign"]), tier=tier, client_token=f"t{n}")
    at.run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert "Krippendorff's alpha, ordinal" in labels and "Percent agreement" in labels
    assert at.dataframe[0].value["annotator"].tolist() == ["doc1", "doc2"]
    assert len(at.get("plotly_chart")) >= 4
    assert any("Krippendorff's alpha at the ordinal level" in t.value for t in at.text)  # the methods paragraph
    # Clinicians vs the machine (Table 2): every row with its n and its items; numeric items only as exact_match
    machine = next(d.value for d in at.dataframe if "Spearman" in d.value.columns)
    assert {"n", "items"} <= set(machine.columns) and (machine["n"] > 0).all()
    numeric = machine[machine["aspect type"] == "numeric"]
    assert len(numeric) and set(numeric["metric"]) == {"exact match"}  # by its label
    assert any("Overlap with calibration" in c.value for c in at.caption)  # Table 12: nothing to exclude, said


def test_leaderboard_page_ranks_models_and_compares_versions(app_db):
    from medeval.engine import thresholds as th

    with connect(app_db["path"]) as db:
        th.grade_db(db)
        th.grade_db(db, th.store(db, th.ThresholdSet(name="strict", cutoffs={k: (0.9, 0.99) for k in
                                                                                th.TABLE12.cutoffs}),
                                 created_by="test"))
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/leaderboard.py").run()
    assert not at.exception
    board = at.dataframe[0].value
    assert list(board["model"]) == ["ModelA", "ModelB"] and list(board["rank"]) == [1, 2]
    assert len(at.get("plotly_chart")) == 2  # shares and the per-aspect heat map
    at.selectbox(key="lb_metric").set_value("rouge1").run()
    at.selectbox(key="lb_aspect").set_value("Primary Symptoms").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1
    compared = at.dataframe[-1].value  # the comparison with the other version, columns named by version
    assert "rank change" in compared.columns and not compared.isna().any().any()


def test_tuning_page_moves_a_private_draft_and_publishes_it(app_db):
    from medeval.engine import thresholds as th
    from medeval.calibration import tuning

    with connect(app_db["path"]) as db:
        auth.add_user(db, "res2", PW, "researcher")
        th.grade_db(db)
        for name, tiers in (("doc1", [0, 1, 2, 2, 1, 0, 2, 1]), ("doc2", [0, 1, 2, 1, 1, 0, 2, 2])):
            u = auth.get_user(db, name)
            for n, tier in enumerate(tiers):
                cp.submit_grade(db, u, cp.next_item(db, u, app_db["campaign"]), tier=tier, client_token=f"t{n}")
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/tuning.py").run()
    assert not at.exception
    at.selectbox(key="tune_metric").set_value("rouge1").run()
    at.selectbox(key="tune_type").set_value("declarative").run()
    assert not at.exception
    at.slider(key="cut_rouge1_declarative").set_value((0.2, 0.6)).run()
    assert not at.exception
    with connect(app_db["path"]) as db:
        res, res2 = auth.get_user(db, "res"), auth.get_user(db, "res2")
        assert tuning.draft(db, res)[("rouge1", "declarative")] == (0.2, 0.6)
        assert tuning.draft(db, res2)[("rouge1", "declarative")] == (0.05, 0.55)  # another researcher: untouched
        assert th.active(db).version == 1  # nothing changed for anyone yet
    labels = [m.label for m in at.metric]
    assert "Weighted kappa vs clinicians" in labels and any(lbl.startswith("All scored:") for lbl in labels)
    at.text_input(key="publish_name").input("tuned").run()
    at.button(key="publish").click().run()  # asked once, with how the draft agrees against the active set
    with connect(app_db["path"]) as db:
        assert th.active(db).version == 1
    question = next(m.value for m in at.markdown if "and make it the active set?" in m.value)
    assert "weighted kappa" in question and "the active set v1 with the clinicians" in question, question
    at.button(key="publish_ask_yes").click().run()
    assert not at.exception
    with connect(app_db["path"]) as db:
        active = th.active(db)
        assert active.name == "tuned" and active.cutoffs[("rouge1", "declarative")] == (0.2, 0.6)
        assert active.provenance["source"]["campaign"] == app_db["campaign"] and active.created_by == "res"
        assert tuning.draft(db, res)[("rouge1", "declarative")] == (0.2, 0.6)  # now equal to the active set
        assert not db.conn.execute("SELECT 1 FROM threshold_drafts WHERE user_id = ?", (res.id,)).fetchone()


def test_leaderboard_can_reactivate_an_earlier_version(app_db):
    from medeval.engine import thresholds as th

    with connect(app_db["path"]) as db:
        th.grade_db(db)
        v2 = th.store(db, th.ThresholdSet(name="v2", cutoffs=dict(th.TABLE12.cutoffs)), created_by="t", activate=True)
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/leaderboard.py").run()
    at.selectbox(key="lb_version").set_value(1).run()
    at.button(key="lb_activate").click().run()  # asked once first: nothing changes yet
    assert not at.exception and any("Make v1 the active set?" in m.value for m in at.markdown)
    with connect(app_db["path"]) as db:
        assert th.active(db).version == 2
    at.button(key="lb_activate_ask_no").click().run()  # Cancel: still v2, the question gone
    assert not any("Make v1 the active set?" in m.value for m in at.markdown)
    at.button(key="lb_activate").click().run()
    at.button(key="lb_activate_ask_yes").click().run()
    assert not at.exception
    with connect(app_db["path"]) as db:
        assert th.active(db).version == 1
        last = auth.audit_rows(db)[-1]
    assert (last["actor"], last["action"], last["target"]) == ("res", "thresholds.activate", "1")
    assert v2 == 2


def test_no_page_renders_raw_html_from_data():
    """Untrusted text (answers, rationales, names) must never reach an HTML or unsafe Markdown renderer."""
    sources = {p.name: p.read_text() for p in [ROOT / "app.py", *(ROOT / "app_pages").glob("*.py")]}
    assert all("unsafe_allow_html" not in src for src in sources.values())
    # st.html is used only for our own static sign-in / sign-out markup, in webui/page.py
    assert all("st.html" not in src for src in sources.values())
    tree = ast.parse((ROOT / "webui" / "page.py").read_text())
    html_calls = {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for node in ast.walk(f)
                  if isinstance(node, ast.Call) and ast.unparse(node.func) == "st.html"}
    assert html_calls and html_calls <= {"_link", "signout_link"}, html_calls


def test_imported_names_are_shown_literally_in_messages(app_db):
    """A disease name with Markdown (a tracking image, a link) must not render as Markdown in the saved message."""
    from webui.page import md_escape

    hostile = "**Bold** [lnk](https://example.invalid/x) ![img](https://example.invalid/t.png)"
    with connect(app_db["path"]) as db:
        db.conn.execute("UPDATE kb_entries SET disease = ?", (hostile,))
        db.conn.commit()
    at = _grade_page(app_db)
    at.button(key=f"grade_{_shown_item(at)}_1").click().run()
    saved = next(s.value for s in at.success if "Saved" in s.value)
    assert md_escape(hostile) in saved and "![img](" not in saved and "**Bold**" not in saved


def test_grade_page_keeps_the_chosen_campaign_and_puts_it_in_the_url(app_db):
    """Issue 12.4 on the Grade page: the page stays on the campaign chosen while grades are given (the select box's
    labels carry no "done" count, which a grade -- rerunning only the grading panel -- would leave stale; the panel
    says it) (also in the URL, so a reload opens it); a foreign or invalid id falls back."""
    first = app_db["campaign"]
    with connect(app_db["path"]) as db:
        later = cp.create_random_campaign(db, "round 2", 4, ["doc1"], k=1, seed=1, actor=None)
        foreign = cp.create_random_campaign(db, "someone else's", 2, ["doc2"], k=1, seed=2, actor=None)
    at = _grade_page(app_db)
    assert shown(at, "grade_campaign").startswith("round 1")  # the first unfinished by default
    choose(at, "grade_campaign", "round 2")
    assert at.query_params.get("campaign") == str(later) and _progress_text(at) == "Item 1 of 4"
    at.button(key=f"grade_{_shown_item(at)}_2").click().run()
    assert shown(at, "grade_campaign") == "round 2 — 4 items"
    assert _progress_text(at) == "Item 2 of 4"  # the panel says how far the doctor is
    assert at.query_params.get("campaign") == str(later) and _progress_text(at) == "Item 2 of 4"
    at.button(key=f"grade_{_shown_item(at)}_1").click().run()
    with connect(app_db["path"]) as db:
        rows = db.conn.execute("SELECT i.campaign_id FROM grade_annotations g JOIN campaign_items i ON i.id = "
                               "g.item_id").fetchall()
    assert rows == [(later,), (later,)]
    for param, name, cid in ((str(later), "round 2", later), (str(foreign), "round 1", first),
                             ("x1", "round 1", first), ("", "round 1", first)):
        at = _app(app_db["path"], "doc1")
        at.switch_page("app_pages/grade.py")
        at.query_params["campaign"] = param
        at.run()
        assert not at.exception and not at.error, param
        assert shown(at, "grade_campaign").startswith(name), param
        assert "someone else" not in _texts(at) and at.query_params.get("campaign") == str(cid), param


def test_grade_page_stores_a_press_only_for_the_item_it_drew(app_db):
    """Issue 22.1: a grade is stored only for the item this session drew last (``grade_drawn_ref``); a press that
    names any other item (one never drawn) is refused and nothing is saved."""
    at = _grade_page(app_db)
    item = _shown_item(at)
    assert at.session_state["grade_drawn_ref"] == f"i:{_item_id(app_db['path'], 'doc1', item)}"
    at.session_state["grade_drawn_ref"] = "i:999999"  # as if the screen had drawn another item since
    at.button(key=f"grade_{item}_2").click().run()
    assert not at.exception and _progress_text(at) == "Item 1 of 8" and _shown_item(at) == item
    assert any("ignored (nothing saved" in i.value for i in at.info)
    with connect(app_db["path"]) as db:
        assert db.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 0
    at.button(key=f"grade_{item}_2").click().run()  # drawn again by that rerun: now it counts
    with connect(app_db["path"]) as db:
        assert db.conn.execute("SELECT item_id, tier FROM grade_annotations").fetchall() == [
            (_item_id(app_db["path"], "doc1", item), 2)]


def test_grade_page_shows_no_saved_note_from_another_campaign(app_db):
    """Issue 22.2: the "Saved" line belongs to the campaign it was given in; switching shows none."""
    with connect(app_db["path"]) as db:
        cp.create_random_campaign(db, "round 2", 4, ["doc1"], k=1, seed=1, actor=None)
    at = _grade_page(app_db)
    at.button(key=f"grade_{_shown_item(at)}_2").click().run()
    assert any(s.value.startswith("Saved: ") for s in at.success)
    choose(at, "grade_campaign", "round 2")
    assert not any(s.value.startswith("Saved: ") for s in at.success)


def test_the_grade_screen_html_is_static():
    """webui/grade_screen.py's st.html (the screen's styles) and its key guard's settings carry no data: only the
    module's own constants, formatted with its own numbers."""
    tree = ast.parse((ROOT / "webui" / "grade_screen.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "st.html"]
    assert [ast.unparse(c.args[0]) for c in calls] == [
        "SCREEN_CSS", "reading.cue_css(held=HELD, slot=SLOT, hold_text=HOLD_TEXT, more_text=MORE_TEXT, boxes=BOXES, "
                      "cue=CUE, cue_texts=CUE_TEXTS)"]
    guards = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "screen.key_guard"]
    assert [ast.unparse(c) for c in guards] == ["screen.key_guard('grade', **GUARD)"]
    from webui import grade_screen

    def constants(v) -> bool:
        return isinstance(v, str) or (isinstance(v, list) and all(map(constants, v))) or (
            isinstance(v, dict) and all(map(constants, v.values())))
    assert constants(grade_screen.GUARD)
    assert all(constants(v) for v in (grade_screen.HOLD_TEXT, grade_screen.MORE_TEXT, grade_screen.CUE_TEXTS,
                                      grade_screen.BOXES, grade_screen.SLOT))
