"""The researcher's gold panel of a task campaign (Task results page) through AppTest: candidates, marking an item
with its expected answers (shown as plain text), the CSV import (all or nothing), the settings with the score
tolerance, retiring, each annotator's results, and the role guard; and the tier panel (Campaigns) on the same shared
parts (webui/gold.py) with its own keys. The library's rules are in test_task_gold.py."""

import pytest
from streamlit.testing.v1 import AppTest

from medeval.accounts import auth
from medeval.annotation import gold
from medeval.annotation import tasks
from medeval.store.db import connect
from tests.conftest import ROOT
from tests.test_app import XSS, _app, _texts, app_db, choose  # noqa: F401 (app_db: the fixture)
from tests.test_app_tasks import task_db  # noqa: F401 (the fixture)

pytestmark = pytest.mark.slow  # AppTest runs whole pages


@pytest.fixture
def gold_db(task_db):  # noqa: F811
    """task_db plus a preference campaign on 3 of the 9 model pairs (6 left for gold; one of them shows the hostile
    response) and a rubric campaign on 1 of the 3 questions (2 left); the rubric one is the newest."""
    with connect(task_db["path"]) as db:
        pref = tasks.create_campaign(db, "preference", "gold pref", ["doc1", "doc2"], k=2, seed=3,
                                     config={"dataset": "clin", "compare": "answers", "max_items": 3}, actor=None)
        rub = tasks.create_campaign(db, "rubric", "gold rubric", ["doc1", "doc2"], k=2, seed=1,
                                    config={"dataset": "clin", "judge": "judge-x", "max_items": 1}, actor=None)
    return {**task_db, "gold_pref": pref, "gold_rubric": rub}


def _results_page(gold_db, name: str) -> AppTest:
    at = _app(gold_db["path"], "res").run()
    at.switch_page("app_pages/task_results.py").run()
    assert not at.exception
    choose(at, "task_results_campaign", f"#{gold_db[name.replace(' ', '_')]} {name}")
    assert not at.exception
    return at


def _stored(gold_db, cid) -> list:
    with connect(gold_db["path"]) as db:
        return gold.list_task_gold(db, cid, actor=None)


def _candidates(gold_db, cid) -> list[str]:
    with connect(gold_db["path"]) as db:
        return [c.source for c in gold.candidates(db, cid, actor=None)]


def _table(at, column: str):
    """The data frame with ``column`` (AppTest does not keep a data frame's key)."""
    (table,) = [d.value for d in at.dataframe if column in d.value.columns]
    return table


def _mark_button(at):
    return at.button(key="task_gold_mark")


def test_the_panel_lists_candidates_and_marks_one_with_its_expected_answer(gold_db):
    cid = gold_db["gold_pref"]
    at = _results_page(gold_db, "gold pref")
    assert any(e.label == "Gold items (0)" for e in at.expander)
    assert any("kept apart from the results" in c.value for c in at.caption)
    pick = at.selectbox(key="task_gold_pick")
    assert list(pick.options) == _candidates(gold_db, cid) and len(pick.options) == 6
    assert _mark_button(at).disabled  # nothing chosen yet

    src = next(s for s in pick.options if s.startswith("clin/c1/1/") and "beta" in s)  # shows the hostile response
    pick.set_value(src).run()
    assert not at.exception
    shown = [t.value for t in at.text]
    assert XSS in shown  # the response, as plain text ...
    assert not any("onerror" in m.value for m in [*at.markdown, *at.caption])  # ... and never as Markdown
    knowledge = at.selectbox(key=f"task_gold_exp_{src}_knowledge")
    assert [o.split(" · ")[0] for o in knowledge.options] == ["— (not checked)", "A is better", "Tie", "B is better"]

    at.text_area(key="task_gold_reason").set_value("Both name the same drug")
    _mark_button(at).click().run()  # no expected answer: the library refuses, nothing is stored
    assert any("Not saved" in e.value and "at least one question" in e.value for e in at.error)
    assert _stored(gold_db, cid) == []

    at.selectbox(key=f"task_gold_exp_{src}_knowledge").set_value("tie")
    _mark_button(at).click().run()
    assert not at.exception
    (g,) = _stored(gold_db, cid)
    assert (g.source, g.expected, g.reason, g.created_by) == (src, {"knowledge": "tie"}, "Both name the same drug",
                                                              "res")
    assert any("Marked as gold item" in s.value for s in at.success)
    assert any(e.label == "Gold items (1)" for e in at.expander)
    table = _table(at, "expected")
    assert list(table["source"]) == [src] and table["expected"][0].startswith("A versus B · Knowledge Correctness: Tie")
    assert src not in at.selectbox(key="task_gold_pick").options  # gold now: no longer a candidate

    at.selectbox(key="task_gold_retire_pick").set_value(g.id).run()
    at.button(key="task_gold_retire").click().run()  # asked once
    assert not _stored(gold_db, cid)[0].retired
    at.button(key=f"task_gold_retire_ask_{g.id}_yes").click().run()
    assert not at.exception
    assert _stored(gold_db, cid)[0].retired
    assert any(e.label == "Gold items (0)" for e in at.expander)


def test_a_rubric_items_questions_are_in_the_canonical_layout(gold_db):
    cid = gold_db["gold_rubric"]
    at = _results_page(gold_db, "gold rubric")
    src = _candidates(gold_db, cid)[0]
    at.selectbox(key="task_gold_pick").set_value(src).run()
    keys = {s.key for s in at.selectbox if s.key.startswith(f"task_gold_exp_{src}_")}
    assert f"task_gold_exp_{src}_r1:relevancy" in keys and f"task_gold_exp_{src}_judge:j_knowledge" in keys
    assert any("judge" in t.value.lower() or "points" in t.value for t in at.text)  # the later part is shown too
    at.selectbox(key=f"task_gold_exp_{src}_r2:fluency").set_value("5")
    at.selectbox(key=f"task_gold_exp_{src}_judge:j_knowledge").set_value("2")
    at.text_area(key="task_gold_reason").set_value("why")
    _mark_button(at).click().run()
    assert not at.exception
    assert _stored(gold_db, cid)[0].expected == {"r2:fluency": "5", "judge:j_knowledge": "2"}


def test_a_bad_csv_shows_an_error_and_stores_nothing_a_good_one_is_imported(gold_db):
    cid = gold_db["gold_rubric"]
    src = _candidates(gold_db, cid)
    at = _results_page(gold_db, "gold rubric")
    bad = f"source,question,expected,reason\n{src[0]},r1:relevancy,5,ok\n{src[1]},r9:knowledge,1,x\n"
    at.file_uploader(key="task_gold_csv").upload("gold.csv", bad.encode(), "text/csv")
    at.run()
    at.button(key="task_gold_import").click().run()
    assert not at.exception
    assert any("Not saved" in e.value and "row 3" in e.value and "r9" in e.value for e in at.error)
    assert _stored(gold_db, cid) == []

    good = f"source,question,expected,reason\n{src[0]},r1:relevancy,5,the reference says so\n{src[1]},r2:knowledge,1,x\n"
    at.file_uploader(key="task_gold_csv").clear().upload("gold.csv", good.encode(), "text/csv")
    at.run()
    at.button(key="task_gold_import").click().run()
    assert not at.exception
    assert any("Imported 2 gold items" in s.value for s in at.success)
    assert {g.source: g.expected for g in _stored(gold_db, cid)} == {src[0]: {"r1:relevancy": "5"},
                                                                      src[1]: {"r2:knowledge": "1"}}


def test_settings_save_with_the_score_tolerance(gold_db):
    cid = gold_db["gold_rubric"]
    at = _results_page(gold_db, "gold rubric")
    tolerance = at.number_input(key="task_gold_tolerance")
    assert (tolerance.min, tolerance.max, tolerance.value) == (0, 4, 1)
    tolerance.set_value(0)
    at.slider(key="task_gold_share").set_value(0.2)
    next(b for b in at.button if b.label == "Save settings").click().run()
    assert not at.exception
    assert any("Saved the gold settings" in s.value for s in at.success)
    with connect(gold_db["path"]) as db:
        s = gold.get_settings(db, cid)
    assert (s["score_tolerance"], s["hidden_share"]) == (0, 0.2)
    assert at.number_input(key="task_gold_tolerance").value == 0

    at.checkbox(key="task_gold_req").check()  # a qualification of 4 items with no gold item: refused, kept as was
    next(b for b in at.button if b.label == "Save settings").click().run()
    assert any("Not saved" in e.value and "gold items" in e.value for e in at.error)
    with connect(gold_db["path"]) as db:
        assert gold.get_settings(db, cid) == s


def test_the_results_table_shows_an_annotators_qualification(gold_db):
    cid = gold_db["gold_pref"]
    with connect(gold_db["path"]) as db:
        src = [c.source for c in gold.candidates(db, cid, actor=None)]
        for s in src[:2]:
            gold.mark_task_gold(db, cid, s, {"knowledge": "left"}, "why", actor=None)
        gold.set_settings(db, cid, {"qualification_required": True, "qualification_items": 2}, actor=None)
        gold.start_attempt(db, auth.get_user(db, "doc1"), cid, gold.TASK)
    at = _results_page(gold_db, "gold pref")
    rows = _table(at, "qualification")
    assert dict(zip(rows["annotator"], rows["qualification"])) == {"doc1": "in progress", "doc2": "not started"}
    assert "Results per annotator" in _texts(at)


def test_an_annotator_cannot_open_the_page(gold_db):
    at = _app(gold_db["path"], "doc1").run()
    with pytest.raises(ValueError, match="Could not find"):  # not in an annotator's navigation
        at.switch_page("app_pages/task_results.py")
    page = AppTest.from_file(str(ROOT / "app_pages" / "task_results.py"), default_timeout=30)
    with connect(gold_db["path"]) as db:
        page.session_state["user"] = auth.get_user(db, "doc1")  # even run directly, the page refuses
    page.run()
    assert not page.exception
    assert any("This page is for the role researcher or admin" in e.value for e in page.error)
    assert not page.expander and not page.selectbox


def test_the_tier_panel_keeps_its_keys_and_has_no_score_tolerance(app_db):  # noqa: F811
    """The shared parts (webui/gold.py) under the Campaigns page's keys: settings and marking still save."""
    from medeval.annotation import campaigns as cp

    with connect(app_db["path"]) as db:  # a small campaign (the newest, shown first): responses left for gold
        cid = cp.create_random_campaign(db, "round 2", 2, ["doc1", "doc2"], k=2, seed=0, actor=None)
    at = _app(app_db["path"], "res").run()
    at.switch_page("app_pages/campaigns.py").run()
    assert not at.exception
    assert not [n for n in at.number_input if n.key and n.key.endswith("tolerance")]  # task campaigns only
    at.slider(key="gold_share").set_value(0.1)
    next(b for b in at.button if b.label == "Save settings").click().run()
    assert any("Saved the gold settings" in s.value for s in at.success)
    with connect(app_db["path"]) as db:
        rid = gold.find_responses(db, cid, actor=None)[0]["response_id"]
    at.selectbox(key="gold_pick").set_value(rid).run()
    at.radio(key="gold_tier").set_value(2)
    at.text_area(key="gold_reason").set_value("the reference says so")
    at.button(key="gold_mark").click().run()
    assert not at.exception and any("Marked as gold" in s.value for s in at.success)
    with connect(app_db["path"]) as db:
        assert gold.get_settings(db, cid)["hidden_share"] == 0.1
        (g,) = gold.list_gold(db, cid, actor=None)
    assert (g.response_id, g.expected_tier, g.reason) == (rid, 2, "the reference says so")
    assert list(_table(at, "disease")["id"]) == [g.id]
