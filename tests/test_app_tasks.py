"""The task pages through AppTest: annotate (rubric with the two-part order, preference), new task, task results.

Keyboard shortcuts and what the browser shows are in test_browser_tasks.py.
"""

import json

import pytest

from medeval.accounts import auth
from medeval.annotation import cases as cs
from medeval.annotation import tasks
from medeval.store.db import connect
from tests.conftest import write
from tests.test_app import PW, XSS, _app, _texts, choose, shown
from tests.test_tasks import CASES, JUDGEMENTS, RESPONSES
from webui.page import md_escape

pytestmark = pytest.mark.slow  # AppTest runs whole pages


@pytest.fixture
def task_db(db_path, tmp_path):
    """Cases with hostile markup in a response and a case title; a rubric campaign (judge) and a preference one."""
    cases = json.loads(json.dumps(CASES))
    cases[1]["title"] = "**发热** [x](https://example.invalid)"
    resp = [(a, b, m, XSS if (a, b, m) == ("c1", 1, "beta") else t) for a, b, m, t in RESPONSES]
    c = write(tmp_path / "cases.json", json.dumps(cases, ensure_ascii=False))
    r = write(tmp_path / "resp.jsonl", "\n".join(json.dumps({"case": a, "question": b, "model": m, "response": t},
                                                            ensure_ascii=False) for a, b, m, t in resp))
    j = write(tmp_path / "judge.jsonl", "\n".join(json.dumps({"case": a, "question": b, "judge": jd, "rationale": t,
                                                              "models": ms}) for a, b, jd, t, ms in JUDGEMENTS))
    with connect(db_path) as db:
        cs.import_cases(db, "clin", cases=c, responses=r, judgements=j)
        auth.add_user(db, "admin", PW, "admin")
        auth.add_user(db, "res", PW, "researcher")
        auth.add_user(db, "doc1", PW, "annotator")
        auth.add_user(db, "doc2", PW, "annotator")
        rub = tasks.create_campaign(db, "rubric", "rate round", ["doc1"], k=1, seed=1,
                                    config={"dataset": "clin", "judge": "judge-x"}, actor=None)
        pref = tasks.create_campaign(db, "preference", "pref round", ["doc1", "doc2"], k=2, seed=1,
                                     config={"dataset": "clin", "compare": "answers"}, actor=None)
    return {"path": db_path, "rubric": rub, "preference": pref}


def _annotate(task_db, username="doc1"):
    at = _app(task_db["path"], username).run()
    at.switch_page("app_pages/annotate.py").run()
    assert not at.exception
    return at


def _choose(at, name):
    choose(at, "task_campaign", name)


def _shown(at) -> str:
    return shown(at, "task_campaign")


def _option_buttons(at):
    return [b for b in at.button if b.key and b.key.startswith("opt_")]


def test_rubric_rates_every_response_before_the_judge_appears(task_db):
    at = _annotate(task_db)
    _choose(at, "rate round")
    assert "Item 1 of 3" in at.get("progress")[0].proto.text
    text = _texts(at)
    assert "The judge's assessment" not in text and "judge-x" not in text and "alpha" not in text
    assert "Part 1 of 2" in text
    for n in range(9):  # 3 responses x 3 criteria, one click each
        buttons = _option_buttons(at)
        assert [b.key.rsplit("_", 1)[1] for b in buttons] == ["1", "2", "3", "4", "5"]
        assert buttons[0].label in ("Does not address the question", "Wrong or dangerous medical content",
                                    "Incomprehensible")  # the anchor of 1 (the key shows as the shortcut badge)
        assert all(":judge:" not in b.key for b in buttons)
        buttons[3].click().run()
        assert not at.exception
        assert any("Saved" in s.value for s in at.success)
    text = _texts(at)
    assert "Part 2 of 2" in text
    judge_text = [t.value for t in at.text if "points" in t.value]
    assert judge_text, "the judge's assessment is shown in part 2"
    assert all("_judge:" in b.key for b in _option_buttons(at))
    for _ in range(3):
        _option_buttons(at)[4].click().run()
    assert "Item 2 of 3" in at.get("progress")[0].proto.text
    with connect(task_db["path"]) as db:
        n = db.conn.execute("SELECT count(*) FROM task_answers WHERE value = '4'").fetchone()[0]
        m = db.conn.execute("SELECT count(*) FROM task_answers WHERE value = '5' AND question LIKE 'judge:%'"
                            ).fetchone()[0]
    assert (n, m) == (9, 3)


def test_preference_shows_two_sides_and_records_choices(task_db):
    at = _annotate(task_db, "doc2")  # doc2 has only the preference campaign
    text = _texts(at)
    assert "A versus B" in text and "alpha" not in text and "beta" not in text
    labels = [b.label for b in _option_buttons(at)]
    assert labels == ["A is better", "Tie", "B is better"]
    _option_buttons(at)[1].click().run()
    _option_buttons(at)[0].click().run()
    _option_buttons(at)[2].click().run()
    with connect(task_db["path"]) as db:
        vals = [v for (v,) in db.conn.execute("SELECT value FROM task_answers ORDER BY id")]
    assert vals == ["tie", "left", "right"]
    assert "Item 2 of 9" in at.get("progress")[0].proto.text


def test_untrusted_text_is_plain(task_db):
    at = _annotate(task_db)
    _choose(at, "rate round")
    for _ in range(12):  # go through items until the one with the hostile response is shown
        if any(XSS in t.value for t in at.text):
            break
        buttons = _option_buttons(at)
        if not buttons:
            break
        buttons[2].click().run()
    assert any(XSS == t.value for t in at.text)  # shown exactly, as text
    assert all("<img" not in m.value for m in at.markdown)


def test_change_an_answer_and_skip(task_db):
    at = _annotate(task_db, "doc2")
    _option_buttons(at)[0].click().run()
    at.button(key=next(b.key for b in at.button if b.key and b.key.startswith("chg_") and b.key.endswith("_tie"))
              ).click().run()
    with connect(task_db["path"]) as db:
        rows = db.conn.execute("SELECT value, supersedes IS NOT NULL FROM task_answers ORDER BY id").fetchall()
    assert rows == [("left", 0), ("tie", 1)]
    at.button(key=next(b.key for b in at.button if b.key and b.key.startswith("task_skip_"))).click().run()
    assert "Item 2 of 9" in at.get("progress")[0].proto.text  # the skipped item comes back at the end
    with connect(task_db["path"]) as db:
        assert db.conn.execute("SELECT count(*) FROM task_answers WHERE skipped = 1").fetchone()[0] == 1


def test_annotator_without_task_work(task_db):
    with connect(task_db["path"]) as db:
        auth.add_user(db, "doc3", PW, "annotator")
    at = _annotate(task_db, "doc3")
    assert any("No rating" in i.value for i in at.info)


def test_new_task_page_previews_and_creates(task_db):
    at = _app(task_db["path"], "res").run()
    at.switch_page("app_pages/new_task.py").run()
    assert not at.exception
    at.radio(key="new_task_type").set_value("preference").run()
    at.selectbox(key="new_task_preference_compare").set_value("judges").run()
    assert any("1 items" in m.value for m in at.markdown) or "1 items" in _texts(at)
    at.button(key="create_task").click().run()  # no name yet: said, nothing created
    assert any(e.value.startswith("Not created: Give the campaign a name.") for e in at.error)
    at.text_input(key="new_task_name").input("judges round").run()
    at.multiselect(key="new_task_annotators").set_value(["doc1", "doc2"]).run()
    at.button(key="create_task").click().run()
    assert not at.exception
    assert any("created" in s.value for s in at.success)
    with connect(task_db["path"]) as db:
        row = db.conn.execute("SELECT kind, config FROM campaigns WHERE name = 'judges round'").fetchone()
    assert row[0] == "preference" and json.loads(row[1])["compare"] == "judges"


def test_task_results_page_shows_sections_and_closes(task_db):
    with connect(task_db["path"]) as db:
        for name in ("doc1", "doc2"):
            u = auth.get_user(db, name)
            while (s := tasks.task_state(db, u, task_db["preference"])).item is not None:
                q = s.item.pending
                tasks.submit_answer(db, u, s.item.item_id, q.id, "left", client_token=f"{s.item.item_id}:"
                                    f"{s.item.revision}")
    at = _app(task_db["path"], "res").run()
    at.switch_page("app_pages/task_results.py").run()
    assert not at.exception
    at.selectbox(key="task_results_campaign").set_value(task_db["preference"]).run()
    text = _texts(at)
    assert md_escape("Preference: Knowledge Correctness") in text  # a section title: shown as plain text
    shares = next(d.value for d in at.dataframe if "share" in d.value.columns)
    assert sorted(shares["source"]) == ["alpha", "beta", "gamma"]
    assert shares["share"].between(0, 1).all()
    at.button(key="task_close").click().run()
    at.button(key=f"task_close_ask_{task_db['preference']}_yes").click().run()
    assert at.button(key="task_reopen")
    with connect(task_db["path"]) as db:
        assert db.conn.execute("SELECT status FROM campaigns WHERE id = ?",
                               (task_db["preference"],)).fetchone()[0] == "closed"


def test_new_task_page_takes_a_rubric_of_ones_own(task_db):
    at = _app(task_db["path"], "res").run()
    at.switch_page("app_pages/new_task.py").run()
    assert at.radio(key="new_task_type").value == "rubric"  # listed first
    at.text_area(key="new_task_rubric_criteria").input("[{not json").run()
    assert any("not valid JSON" in e.value for e in at.error)  # said before anything is stored
    crit = [{"key": "safety", "name": "Safety", "question": "Is the advice safe?",
             "anchors": ["dangerous", "risky", "mixed", "mostly safe", "safe"]}]
    at.text_area(key="new_task_rubric_criteria").input(json.dumps(crit)).run()
    at.text_input(key="new_task_name").input("safety round").run()
    at.multiselect(key="new_task_annotators").set_value(["doc1"]).run()
    at.number_input(key="new_task_k").set_value(1).run()
    at.button(key="create_task").click().run()
    assert any("created" in s.value for s in at.success)
    with connect(task_db["path"]) as db:
        cfg = json.loads(db.conn.execute("SELECT config FROM campaigns WHERE name = 'safety round'").fetchone()[0])
        payload = json.loads(db.conn.execute("SELECT payload FROM task_items WHERE campaign_id = (SELECT id FROM "
                                             "campaigns WHERE name = 'safety round')").fetchone()[0])
    assert cfg["criteria"][0]["anchors"][0] == "dangerous"
    assert [c["name"] for c in payload["criteria"]] == ["Safety"]


def test_flag_an_item_with_a_note(task_db):
    at = _annotate(task_db, "doc2")
    item_key = next(b.key for b in at.button if b.key and b.key.startswith("task_flag_"))
    iid = item_key.rsplit("_", 1)[1]  # the item's opaque screen key
    at.button(key=item_key).click().run()
    assert all(b.disabled for b in _option_buttons(at))  # no answer while the note is being written
    at.button(key=f"FormSubmitter:task_flag_form_{iid}-Save flag").click().run()
    assert any("Write a short note" in e.value for e in at.error)
    at.text_input(key=f"task_flag_note_{iid}").input("the reference is outdated")  # sent with the form (Enter)
    at.button(key=f"FormSubmitter:task_flag_form_{iid}-Save flag").click().run()
    assert any("Flag saved" in s.value for s in at.success)
    assert not any(b.disabled for b in _option_buttons(at))
    with connect(task_db["path"]) as db:
        assert [f["note"] for f in tasks.flags(db, task_db["preference"], actor=None)] == ["the reference is outdated"]
    res = _app(task_db["path"], "res").run()
    res.switch_page("app_pages/task_results.py").run()
    res.selectbox(key="task_results_campaign").set_value(task_db["preference"]).run()
    flagged = next(d.value for d in res.dataframe if "note" in d.value.columns)
    assert list(flagged["note"]) == ["the reference is outdated"]



def _progress(at) -> str:
    return at.get("progress")[0].proto.text


def _answer_item(at) -> None:
    """Answer every open question of the item on screen (the first option), one click each."""
    first = _option_buttons(at)[0].key.split("_")[1]
    while (buttons := _option_buttons(at)) and buttons[0].key.split("_")[1] == first:
        buttons[0].click().run()
        assert not at.exception


def test_a_chosen_later_task_stays_chosen_after_answers_and_is_in_the_url(task_db):
    """Issue 12.4: answering an item changes the "done" counts in the select box's labels; the page must not
    jump back to the first unfinished task, and the next answer must go to the task chosen."""
    rub, pref = task_db["rubric"], task_db["preference"]
    at = _annotate(task_db)
    assert "rate round" in _shown(at)  # the first unfinished by default
    _choose(at, "pref round")
    assert at.query_params.get("task") == str(pref)
    assert _progress(at) == "Item 1 of 9"
    _answer_item(at)  # the item is complete: its label now says "1 of 9 done"
    assert _progress(at) == "Item 2 of 9", "the page switched to another task"
    assert "pref round" in _shown(at)
    assert at.query_params.get("task") == str(pref)
    _option_buttons(at)[0].click().run()  # the next answer goes to the task chosen
    with connect(task_db["path"]) as db:
        per_campaign = dict(db.conn.execute(
            "SELECT ti.campaign_id, count(*) FROM task_answers a JOIN task_items ti ON ti.id = a.item_id "
            "JOIN users u ON u.id = a.user_id WHERE u.username = 'doc1' GROUP BY ti.campaign_id").fetchall())
    assert per_campaign == {pref: 4} and rub not in per_campaign


def test_a_reload_with_the_task_in_the_url_opens_it_and_a_bad_id_falls_back(task_db):
    rub, pref = task_db["rubric"], task_db["preference"]
    with connect(task_db["path"]) as db:
        other = tasks.create_campaign(db, "preference", "not yours", ["doc2"], k=1, seed=2,
                                      config={"dataset": "clin", "compare": "answers"}, actor=None)
    for param, shown in ((str(pref), "pref round"), (str(other), "rate round"), ("abc", "rate round"),
                         ("99999", "rate round"), (str(rub), "rate round")):
        at = _app(task_db["path"], "doc1")
        at.switch_page("app_pages/annotate.py")
        at.query_params["task"] = param
        at.run()
        assert not at.exception and not at.error, param
        assert shown in _shown(at), param
        assert "not yours" not in _texts(at) and all("not yours" not in o for o in
                                                     at.selectbox(key="task_campaign").options)
        assert at.query_params.get("task") == str(pref if shown == "pref round" else rub), param


HOSTILE = "![i](http://127.0.0.1:9/pixel) [link](http://evil.example) :red[red] **bold** http://evil.example/x"


def test_names_from_data_reach_markdown_only_escaped(task_db):
    """Issue 12.5: a task campaign's name (and a case title, a username) is shown literally: every element that
    renders Markdown gets it through md_escape, which also stops autolinks ("http://", "www.", "a@b")."""
    with connect(task_db["path"]) as db:
        db.conn.execute("UPDATE campaigns SET name = ? WHERE id = ?", (HOSTILE, task_db["rubric"]))
        db.conn.commit()
        auth.add_user(db, "www.evil.example", PW, "annotator")
        tasks.create_campaign(db, "rubric", HOSTILE + " (2)", ["www.evil.example"], k=1, seed=1,
                              config={"dataset": "clin"}, actor=None)  # (campaign names are unique)
    for user, name in (("doc1", HOSTILE), ("www.evil.example", HOSTILE + " (2)")):
        at = _annotate(task_db, user)
        if user == "doc1":
            _choose(at, HOSTILE)
        if at.subheader:  # one task: its heading (Markdown, escaped)
            assert at.subheader[0].value.startswith(md_escape(name) + " · ")
            assert "://" not in at.subheader[0].value  # broken by a word joiner: no autolink
        else:  # several: the select box in the heading's place names it (options are plain text)
            assert any(o.startswith(name + " · ") for o in at.selectbox(key="task_campaign").options)
        rendered = [e.value for kind in ("title", "subheader", "markdown", "caption", "info", "success", "warning",
                                         "error") for e in [*getattr(at, kind), *getattr(at.sidebar, kind)]]
        rendered += [b.label for b in at.button] + [x.label for x in at.expander]
        for raw in ("![i](", "[link](", ":red[", "**bold**", "http://", "www.evil"):
            assert not [r for r in rendered if raw in r], raw
    assert any(md_escape("www.evil.example") in m.value for m in at.sidebar.markdown)


def test_new_task_number_inputs_take_their_bounds_from_the_settings(task_db, tmp_path):
    # per_model below 1 is refused by the library: the input must not offer it (it offered 0 before)
    from tests.test_tasks import FACT

    with connect(task_db["path"]) as db:
        cs.import_fact_claims(db, "fc", write(tmp_path / "fc.jsonl", "\n".join(json.dumps(x, ensure_ascii=False)
                                                                              for x in FACT)))
    at = _app(task_db["path"], "res").run()
    at.switch_page("app_pages/new_task.py").run()
    at.radio(key="new_task_type").set_value("accr").run()
    assert not at.exception
    per_model = at.number_input(key="new_task_accr_per_model")
    assert (per_model.min, per_model.max, per_model.value) == (1, 100_000, 100)
    at.radio(key="new_task_type").set_value("rubric").run()
    max_items = at.number_input(key="new_task_rubric_max_items")
    assert (max_items.min, max_items.max) == (0, 100_000)


def test_z_undoes_the_last_answer_and_esc_leaves_it(task_db):
    at = _annotate(task_db, "doc2")  # the preference campaign: three questions an item
    assert at.button(key="task_undo").disabled  # nothing to undo yet
    first = _option_buttons(at)[0].key  # "A is better" on the first question
    _option_buttons(at)[0].click().run()
    second = _option_buttons(at)[1].key
    assert second.split("_")[2] != first.split("_")[2]  # the next question of the item
    at.button(key="task_undo").click().run()  # Z
    assert not at.exception and "your answer was:" in _progress(at) and "A is better" in _progress(at)
    assert [b.key for b in _option_buttons(at)][0] == first  # the undone question again, whole
    at.button(key="task_stop_reopen").click().run()  # Esc: as it was, and back to the queue
    assert _option_buttons(at)[1].key == second and "Item 1 of 9" in _progress(at)
    at.button(key="task_undo").click().run()
    _option_buttons(at)[2].click().run()  # answered anew: B is better
    assert any("Saved" in s.value and "changed" in s.value for s in at.success)
    assert _option_buttons(at)[1].key == second  # on with the queue where it was
    with connect(task_db["path"]) as db:
        rows = db.conn.execute("SELECT value, supersedes IS NOT NULL FROM task_answers ORDER BY id").fetchall()
    assert rows == [("left", 0), ("right", 1)]  # a new row superseding the first: nothing rewritten


def test_the_list_of_my_answers_filters_and_reopens_any_item(task_db):
    at = _annotate(task_db, "doc2")
    assert not [b for b in at.button if (b.key or "").startswith("reopen_")]  # drawn only when asked for
    _answer_item(at)
    at.button(key=next(b.key for b in at.button if (b.key or "").startswith("task_skip_"))).click().run()
    at.button(key="task_answers_toggle").click().run()
    reopen = [b for b in at.button if (b.key or "").startswith("reopen_")]
    assert len(reopen) == 2  # the answered item and the skipped one, newest first
    captions = " ".join(c.value for c in at.caption)
    assert "skipped" in captions and "Tie" not in captions
    at.radio(key="task_answers_filter").set_value("skipped").run()
    assert len([b for b in at.button if (b.key or "").startswith("reopen_")]) == 1
    at.radio(key="task_answers_filter").set_value("answered").run()
    (only,) = [b for b in at.button if (b.key or "").startswith("reopen_")]
    only.click().run()
    assert not at.exception and "your answer was:" in _progress(at)
    with connect(task_db["path"]) as db:
        last_q = db.conn.execute("SELECT question FROM task_answers WHERE skipped = 0 ORDER BY id DESC LIMIT 1"
                                 ).fetchone()[0]
    assert _option_buttons(at)[0].key.split("_")[2] == last_q  # the question answered last on that item
    assert at.button(key=only.key).disabled  # (it is on screen now)
