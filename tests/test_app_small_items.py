"""Issue 22 §3 on the pages (AppTest): the New campaign and New task forms return to their defaults after a create
and name what was created; a taken name and a count beyond what exists are refused with the library's words; the
audit log's caption says the order it shows."""

from __future__ import annotations

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.core import i18n
from medeval.store.db import connect
from tests.test_app import _app, _texts, app_db  # noqa: F401  (the fixture)
from tests.test_app_tasks import task_db  # noqa: F401  (the fixture)


def test_new_campaign_form_is_reset_after_a_create_and_names_it(app_db):  # noqa: F811
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/new_campaign.py").run()
    at.text_input(key="new_name").input("calibration").run()
    at.multiselect(key="new_metrics").set_value(["rouge1"]).run()
    at.number_input(key="new_k").set_value(2).run()
    at.number_input(key="new_width").set_value(0.2).run()
    at.button(key="create_campaign").click().run()
    assert not at.exception
    with connect(app_db["path"]) as db:
        cid = next(c["id"] for c in cp.list_campaigns(db, actor=None) if c["name"] == "calibration")
    assert [s.value for s in at.success] == [f"Campaign #{cid} “calibration” created. Its annotators see it on "
                                             "their Grade page now."]
    # a fresh form (its widgets have new keys, so a browser shows their defaults too)
    assert at.text_input(key="new_name__1").value == ""
    assert at.multiselect(key="new_metrics__1").value == ["bleu1", "rouge1", "cosine"]
    assert at.number_input(key="new_width__1").value == 0.1
    assert at.number_input(key="new_k__1").value == 3  # the default again, not the 2 chosen
    at.button(key="create_campaign").click().run()  # no name: nothing to create twice by accident
    assert any(e.value.startswith("Not created: Give the campaign a name.") for e in at.error)
    at.run()  # the message is shown once, not on every later run
    assert not at.success


def test_new_campaign_page_refuses_a_taken_name(app_db):  # noqa: F811
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/new_campaign.py").run()
    at.radio(key="new_kind").set_value("random_validation").run()
    at.checkbox(key="new_allow_overlap").check().run()
    at.text_input(key="new_name").input("Round 1").run()  # "round 1" exists (the fixture)
    at.number_input(key="new_n").set_value(2).run()
    at.number_input(key="new_k").set_value(1).run()
    at.button(key="create_campaign").click().run()
    assert not at.success
    assert any(f"a campaign named 'round 1' already exists (#{app_db['campaign']})" in e.value.replace("\\", "")
               for e in at.error), [e.value for e in at.error]
    assert at.text_input(key="new_name").value == "Round 1"  # what was typed stays, to be changed


def test_new_task_form_is_reset_after_a_create_and_a_taken_name_is_refused(task_db):  # noqa: F811
    at = _app(task_db["path"], "res").run()
    at.switch_page("app_pages/new_task.py").run()
    at.radio(key="new_task_type").set_value("preference").run()
    at.text_input(key="new_task_name").input("pref round").run()  # taken (the fixture)
    at.multiselect(key="new_task_annotators").set_value(["doc1"]).run()
    at.number_input(key="new_task_k").set_value(1).run()
    at.button(key="create_task").click().run()
    assert any("a campaign named 'pref round' already exists" in e.value.replace("\\", "") for e in at.error)
    at.text_input(key="new_task_name").input("judges round").run()
    at.button(key="create_task").click().run()
    assert not at.exception
    with connect(task_db["path"]) as db:
        cid = db.conn.execute("SELECT id FROM campaigns WHERE name = 'judges round'").fetchone()[0]
    assert [s.value for s in at.success] == [f"Campaign #{cid} “judges round” created. Its annotators see it on "
                                             "their Rate & compare page now."]
    assert at.radio(key="new_task_type__1").value == "rubric"  # the default type again (a fresh form)
    assert at.text_input(key="new_task_name__1").value == ""
    assert at.multiselect(key="new_task_annotators__1").value == ["doc1", "doc2"]
    # and a second campaign from the fresh form is created as well
    at.text_input(key="new_task_name__1").input("second round").run()
    at.button(key="create_task").click().run()
    assert any("“second round” created" in s.value for s in at.success)
    assert at.text_input(key="new_task_name__2").value == ""


def test_questions_beyond_what_exists_are_refused_on_the_page(task_db):  # noqa: F811
    at = _app(task_db["path"], "res").run()
    at.switch_page("app_pages/new_task.py").run()
    at.number_input(key="new_task_rubric_max_items").set_value(99_999).run()
    assert any("99,999 asked for, but this data set has 3" in e.value and "choose at most 3" in e.value
               for e in at.error), [e.value for e in at.error]
    assert "create_task" not in [b.key for b in at.button]  # nothing to create until the count is changed
    at.number_input(key="new_task_rubric_max_items").set_value(2).run()
    assert not at.error and "2 items" in _texts(at)


def test_audit_log_caption_says_newest_first_and_the_table_is(app_db):  # noqa: F811
    at = _app(app_db["path"], "admin").run()
    assert at.title[0].value == "Users & audit"
    caption = next(c.value for c in at.caption if "records" in c.value)
    assert "newest first" in caption and "oldest first" in caption.split("(", 1)[1]  # only the download is
    table = next(d.value for d in at.dataframe if "action" in d.value.columns)
    with connect(app_db["path"]) as db:
        newest = auth.audit_rows(db)[-1]
    # (the page shows the stored UTC moment in the server's zone, as a moment that sorts)
    assert table.iloc[0]["at"] == i18n.local_moment(newest["at"]) and table.iloc[0]["action"] == newest["action"]
    assert list(table["at"]) == sorted(table["at"], reverse=True)
