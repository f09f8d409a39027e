"""Real-browser test of items with known answers in a task campaign (Rate and compare, ``app_pages/annotate.py``):
the qualification round answered by keys only (failed, reviewed with the reasons, retried, passed), then the real
items with a hidden check among them drawn exactly like them (no trace of it in the page's HTML), the feedback
after it, and G opening the guidelines on the "all done" screens of Rate and compare and of Grade.
Fixtures and helpers: tests/test_browser.py, tests/test_browser_tasks.py."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.annotation import cases as cs
from medeval.annotation import gold
from medeval.annotation import guidelines as gl
from medeval.annotation import tasks
from medeval.store.db import connect
from tests import browser_support as bs
from tests.test_browser import (  # noqa: F401  (fixtures: one browser and context for the module)
    TIMEOUT,
    browser,
    browser_type_launch_args,
    button,
    page,
    playwright,
    progress_text,
    shared_context,
    shows,
    sign_in,
    wait_idle,
)
from tests.test_tasks import CASES, JUDGEMENTS, RESPONSES
from tests.test_browser_tasks import wait_task_keys  # noqa: E402

pytestmark = bs.browser_marks()

USER = "tq_doc"  # the task annotator
GRADER = bs.ANNOTATORS[0]  # a tier-grading annotator whose items are all graded (the G key on "all done")
TASK_GUIDE = "Prefer the output that **answers the question asked**."
GRADE_GUIDE = "Grade by the reference's key points."
# the structure of what follows the progress bar: test ids and element keys (numbers replaced)
STRUCTURE_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const bar = main.querySelector('[data-testid="stProgress"]');
  const after = e => bar && (bar.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
  const els = [...main.querySelectorAll('*')].filter(after);
  const ids = els.filter(e => e.hasAttribute('data-testid')).map(e => e.getAttribute('data-testid'));
  const keys = els.flatMap(e => [...e.classList].filter(c => c.startsWith('st-key-')));
  return {ids, keys};
}"""


def _jsonl(path: Path, rows) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The tier-grading database of tests/browser_support.py plus the "clin" cases and one preference campaign
    (3 real items) with 6 items of known answer ("A", the data's first output, is better on knowledge), a
    required qualification (2 items, all as expected, one retry), a hidden share giving 1 hidden item, feedback
    on, and guidelines; GRADER's tier campaign is graded to the end and has guidelines."""
    folder = tmp_path_factory.mktemp("browser_task_gold")
    fx = bs.build_db(folder)
    cases = folder / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    responses = _jsonl(folder / "resp.jsonl", ({"case": a, "question": b, "model": m, "response": t}
                                               for a, b, m, t in RESPONSES))
    judgements = _jsonl(folder / "judge.jsonl", ({"case": a, "question": b, "judge": jd, "rationale": t,
                                                  "models": ms} for a, b, jd, t, ms in JUDGEMENTS))
    with connect(fx.db) as db:
        cs.import_cases(db, "clin", cases=cases, responses=responses, judgements=judgements)
        auth.add_user(db, USER, bs.PASSWORD, "annotator")
        cid = tasks.create_campaign(db, "preference", "tasks round", [USER], k=1, seed=5,
                                    config={"dataset": "clin", "compare": "answers", "max_items": 3}, actor=None)
        fx.campaigns[USER] = cid
        fx.reasons = {}
        for n, c in enumerate(gold.candidates(db, cid, actor=None), start=1):
            reason = f"Reason {n}: only one of the two outputs names the diagnosis"
            fx.reasons[gold.mark_task_gold(db, cid, c.source, {"knowledge": "left"}, reason, actor=None)] = reason
        assert len(fx.reasons) == 6
        gold.set_settings(db, cid, {"qualification_required": True, "qualification_items": 2, "pass_mark": 1.0,
                                  "retries": 1, "hidden_share": 0.25, "feedback": True}, actor=None)
        gl.set_guidelines(db, cid, TASK_GUIDE, actor=None)
        grader = auth.get_user(db, GRADER)
        gcid = fx.campaigns[GRADER]
        gl.set_guidelines(db, gcid, GRADE_GUIDE, actor=None)
        gl.acknowledge(db, grader, gcid, 1)
        while (iid := cp.next_item(db, grader, gcid)) is not None:
            cp.submit_grade(db, grader, iid, tier=2, client_token=f"setup-{iid}")
    with bs.serving(fx, folder):
        yield fx


# ---------------------------------------------------------------- helpers

def css_key(key: str) -> str:
    """The class Streamlit gives an element of ``key`` (characters other than [a-zA-Z0-9_-] become "-")."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


def task_state(app) -> tasks.TaskState:
    with connect(app.db, migrate=False) as d:
        return tasks.task_state(d, auth.get_user(d, USER), app.campaigns[USER])


def a_side_key(app, ref: str) -> str:
    """The key of the side the data's output "a" is on, in USER's layout of the item with ``ref`` (gold only)."""
    gid = int(ref.split(":")[1])
    with connect(app.db, migrate=False) as d:
        layout = gold.layout_for(d, auth.get_user(d, USER), app.campaigns[USER], gid)
    return "ArrowLeft" if layout["left"] == "a" else "ArrowRight"


def rows_saved(app) -> int:
    uid = bs.user_id(app.db, USER)
    return sum(n for (n,) in bs.query(app.db, "SELECT count(*) FROM task_answers WHERE user_id = ? UNION ALL "
                                              "SELECT count(*) FROM task_gold_answers WHERE user_id = ?", (uid, uid)))


def expect_item_shown(page: Page, app) -> tasks.TaskState:
    """Wait until the page shows the item ``task_state`` says is next, with its pending question's buttons."""
    s = task_state(app)
    assert s.item is not None and s.item.pending is not None
    label = "Qualification item" if s.phase == "qualification" else "Item"
    shows(progress_text(page), f"{label} {s.position} of {s.total}")
    q = s.item.pending
    page.locator(f".{css_key(f'opt_{s.item.key}_{q.id}_{q.options[0].value}')} button").filter(
        visible=True).wait_for()
    expect(page.locator(f".{css_key(f'ask_{s.item.key}')}")).to_contain_text(f"{q.target} — {q.criterion}")
    wait_task_keys(page, s.item.key, q.id)  # a new question takes keys after webui.grade_screen.SETTLE_MS
    wait_idle(page)
    return task_state(app)


def press(page: Page, app, key: str) -> None:
    """Press ``key`` on an idle page showing the current item; wait until its answer is saved and the page idle."""
    n = rows_saved(app)
    page.keyboard.press(key)
    deadline = time.monotonic() + TIMEOUT / 1000
    while rows_saved(app) < n + 1:
        assert time.monotonic() < deadline, f"the key {key!r} saved nothing"
        time.sleep(0.05)
    assert rows_saved(app) == n + 1
    page.locator('[data-stale="true"]').first.wait_for(state="detached")
    wait_idle(page)


def answer_item(page: Page, app, *, as_expected: bool) -> tasks.TaskState:
    """Answer the item on screen by keys: T (tie) on relevancy and fluency; knowledge: the side of output "a"
    (as expected) or a tie (not). Returns the state the item was answered from."""
    s = expect_item_shown(page, app)
    ref = s.item.ref
    for _ in range(3):
        s2 = expect_item_shown(page, app)
        assert s2.item.ref == ref
        # answers can be changed on a real (or hidden) item, never in the qualification round
        expect(page.get_by_text("Change an answer on this item")).to_have_count(
            1 if s2.item.answers and s2.item.changeable else 0)
        q = s2.item.pending
        key = "t"
        if q.id == "knowledge" and as_expected:
            key = a_side_key(app, ref)
        press(page, app, key)
    return s


def structure(page: Page) -> tuple[list[str], list[str]]:
    """The screen's test ids and element keys, an item's screen key (k + 12 hex digits) and other numbers replaced."""
    s = page.evaluate(STRUCTURE_JS)
    return s["ids"], sorted(re.sub(r"\d+", "N", re.sub(r"(?<=_)k[0-9a-f]{12}(?=_|$)", "KEY", k)) for k in s["keys"])


def no_trace(page: Page) -> None:
    """Nothing in the page's HTML says the item is not a real one."""
    assert "gold" not in page.content().lower()


# ---------------------------------------------------------------- the flow

def test_qualification_failed_reviewed_retried_passed_then_hidden_check_looks_real(page: Page, app):
    sign_in(page, app, USER, path="/annotate")
    expect(page.locator(".st-key-guidelines_screen")).to_contain_text("answers the question asked")
    button(page, "guidelines_ack").click()
    expect(page.locator(".st-key-task_qualification_intro")).to_contain_text("2 items whose expected answers")
    button(page, "qualification_start").click()
    shows(progress_text(page), "Qualification item 1 of 2")

    # attempt 1: answered not as expected (a tie on knowledge), by keys only; answers cannot be changed
    first, round_screens = [], []
    for _ in (1, 2):
        expect_item_shown(page, app)
        round_screens.append(structure(page))
        s = answer_item(page, app, as_expected=False)
        assert s.phase == "qualification" and s.item.ref.startswith("q:") and not s.item.changeable
        first.append(int(s.item.ref.split(":")[1]))
    expect(page.get_by_text("Qualification not passed: 0 of 2 items", exact=False)).to_be_visible()
    review = page.get_by_test_id("stDataFrame").filter(has=page.locator('th:text-is("why")'))
    for gid in first:  # the review table: the expected answer and the researcher's reason
        expect(review.locator("td").filter(has_text=app.reasons[gid])).to_have_count(1)
    # told in this annotator's own layout: where output "a" (expected better) was on the right, "B is better"
    sides = [a_side_key(app, f"q:{gid}:1") for gid in first]
    for label in ("A is better", "B is better"):
        want = sum(1 for k in sides if (k == "ArrowLeft") == (label == "A is better"))
        expect(review.locator("td").filter(has_text=label)).to_have_count(want)
    button(page, "qualification_retry").click()
    shows(progress_text(page), "Qualification item 1 of 2")

    # attempt 2: as expected (the key of the side output "a" is on in this annotator's layout)
    for _ in (1, 2):
        s = answer_item(page, app, as_expected=True)
        assert int(s.item.ref.split(":")[1]) not in first  # new items
    expect(page.get_by_text("Qualification passed: 2 of 2 items", exact=False)).to_be_visible()
    assert task_state(app).item.ref.startswith(("i:", "h:"))
    button(page, "qualification_continue").click()
    shows(progress_text(page), "Item 1 of 4")

    # the real items, with one hidden check among them that looks exactly like them
    screens: dict[str, list] = {"i": [], "h": []}
    feedback_seen = False
    while (s := task_state(app)).item is not None:
        s = expect_item_shown(page, app)
        assert s.phase == "items" and s.item.revision == 0 and s.item.changeable
        kind = s.item.ref[0]
        screens[kind].append(structure(page))
        no_trace(page)
        answer_item(page, app, as_expected=True)
        if kind == "h":  # done: the feedback (the expected answer and the reason) comes on the next screen
            info = page.get_by_test_id("stAlertContentInfo").filter(has_text="Expected: ")
            expect(info).to_contain_text(app.reasons[int(s.item.ref[2:])])
            side = "A" if a_side_key(app, s.item.ref) == "ArrowLeft" else "B"  # in this annotator's layout
            expect(info).to_contain_text(f"Knowledge Correctness: {side} is better")
            feedback_seen = True
    assert len(screens["i"]) == 3 and len(screens["h"]) == 1 and feedback_seen
    assert all(x == screens["i"][0] for x in screens["i"]) and screens["h"][0] == screens["i"][0]
    assert all(x == screens["i"][0] for x in round_screens)  # the round's items are drawn like real ones too
    shows(progress_text(page), "4 of 4 answered")
    expect(page.get_by_text("All 4 items are done. Thank you!")).to_be_visible()

    # G on the "all done" screen: the guidelines
    page.keyboard.press("g")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("answers the question asked")
    button(page, "task_close_guidelines").click()
    expect(dialog).to_have_count(0)

    # the real answers hold the real items only; the rest is apart
    uid = bs.user_id(app.db, USER)
    real = {i for (i,) in bs.query(app.db, "SELECT item_id FROM task_assignments WHERE user_id = ?", (uid,))}
    answered = bs.query(app.db, "SELECT item_id, count(*) FROM task_answers WHERE user_id = ? GROUP BY item_id",
                        (uid,))
    assert {i for i, _ in answered} == real and all(n == 3 for _, n in answered)
    assert bs.query(app.db, "SELECT mode, attempt, count(*) FROM task_gold_answers WHERE user_id = ? GROUP BY mode, "
                            "attempt ORDER BY mode, attempt", (uid,)) == [
        ("hidden", None, 3), ("qualification", 1, 6), ("qualification", 2, 6)]


def test_g_opens_the_guidelines_when_every_item_is_graded(page: Page, app):
    sign_in(page, app, GRADER, path="/grade")
    expect(page.get_by_text("All 6 items are graded. Thank you!")).to_be_visible()
    # a click first, as a reader would (a key pressed in the very moment the page has loaded can be lost)
    bs.open_sidebar(page)  # folded on the grading screen (issue 32)
    button(page, "start_here_grade_hide").click()
    expect(page.locator(".st-key-start_here_grade")).to_have_count(0)
    wait_idle(page)
    page.keyboard.press("g")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(GRADE_GUIDE)
    button(page, "close_guidelines").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_text("All 6 items are graded. Thank you!")).to_be_visible()
