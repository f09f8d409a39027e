"""Real-browser tests of the annotation page (``app_pages/annotate.py``, /annotate): keyboard shortcuts.

The AppTest versions of the same flows are in ``tests/test_app_tasks.py``; here Playwright drives
Debian's Chromium against ``streamlit run server.py`` (one server and one browser for the module,
the fixtures and helpers of ``tests/test_browser.py``). Every test signs in as an annotator of its
own with a task campaign of their own, answers with key presses only, and checks the page and the
database. Waits are for page or database states (30 s limits), never fixed sleeps.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from medeval.accounts import auth  # noqa: E402
from medeval.annotation import cases as cs  # noqa: E402
from medeval.annotation import tasks  # noqa: E402
from medeval.store.db import connect  # noqa: E402
from tests import browser_support as bs  # noqa: E402
from tests.test_browser import (  # noqa: E402,F401  (fixtures: one browser and context for the module)
    TIMEOUT, browser, browser_type_launch_args, page, playwright, progress_text, shared_context, shows,
    sign_in, wait_idle)
from tests.test_tasks import CASES, JUDGEMENTS, RESPONSES  # noqa: E402

pytestmark = bs.browser_marks()

# one annotator per test, each with a campaign of their own: the tests do not depend on each other
RUBRIC_USER, PREF_USER, DOUBLE_USER, RELOAD_USER, XSS_USER, BURST_USER = (
    "tdoc_rubric", "tdoc_pref", "tdoc_double", "tdoc_reload", "tdoc_xss", "tdoc_burst")
PICK_USER = "tdoc_pick"  # two task campaigns: picks the later one (issue 12.4)
HOSTILE_USER, RESEARCHER = "www.evil.example", "tres1"  # a username that autolinks; a researcher (issue 12.5)
PIXEL_PORT = bs.free_port()  # nothing listens there: a request to it is only seen by page.on("request")
HOSTILE = (f"![i](http://127.0.0.1:{PIXEL_PORT}/pixel) [link](http://evil.example) :red[red] "
           "<img src=x onerror=window.__xss=1> **bold** http://evil.example/x")
HOSTILE_NOTE = "note " + HOSTILE


@dataclass
class TaskFixture:
    db: Path
    campaigns: dict[str, int] = field(default_factory=dict)  # annotator -> their task campaign
    url: str = ""
    later: int = 0  # PICK_USER's second task campaign


def _jsonl(path: Path, rows) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


def build_tasks_db(folder: Path) -> TaskFixture:
    """Two data sets of cases: "clin" (tests/test_tasks.py) and "hostile" (one question, one response is
    markup); five annotators, each with one task campaign (k=1)."""
    folder.mkdir(parents=True, exist_ok=True)
    cases = folder / "cases.json"
    cases.write_text(json.dumps(CASES, ensure_ascii=False), encoding="utf-8")
    responses = _jsonl(folder / "resp.jsonl", ({"case": a, "question": b, "model": m, "response": t}
                                               for a, b, m, t in RESPONSES))
    judgements = _jsonl(folder / "judge.jsonl", ({"case": a, "question": b, "judge": jd, "rationale": t,
                                                  "models": ms} for a, b, jd, t, ms in JUDGEMENTS))
    hostile_cases = folder / "hostile.json"
    hostile_cases.write_text(json.dumps([{**c, "title": HOSTILE} for c in CASES if c["id"] == "c2"],
                                        ensure_ascii=False), encoding="utf-8")
    hostile_resp = _jsonl(folder / "hostile.jsonl", (
        {"case": a, "question": b, "model": m, "response": bs.XSS_TEXT if m == "gamma" else t}
        for a, b, m, t in RESPONSES if a == "c2"))

    fx = TaskFixture(folder / "tasks.db")
    with connect(fx.db) as db:
        cs.import_cases(db, "clin", cases=cases, responses=responses, judgements=judgements)
        cs.import_cases(db, "hostile", cases=hostile_cases, responses=hostile_resp)
        for name in (RUBRIC_USER, PREF_USER, DOUBLE_USER, RELOAD_USER, XSS_USER, BURST_USER):
            auth.add_user(db, name, bs.PASSWORD, "annotator")
        one = {"dataset": "clin", "max_items": 1}

        def make(user: str, task: str, config: dict, seed: int) -> None:
            fx.campaigns[user] = tasks.create_campaign(db, task, f"tasks {user}", [user], k=1, seed=seed,
                                                       config=config, actor=None)

        make(RUBRIC_USER, "rubric", {**one, "judge": "judge-x"}, 1)
        make(PREF_USER, "preference", {"dataset": "clin", "compare": "answers"}, 2)
        make(DOUBLE_USER, "rubric", one, 3)
        make(RELOAD_USER, "rubric", one, 4)
        make(XSS_USER, "rubric", {"dataset": "hostile"}, 5)
        make(BURST_USER, "rubric", one, 6)
        for name in (PICK_USER, HOSTILE_USER):
            auth.add_user(db, name, bs.PASSWORD, "annotator")
        auth.add_user(db, RESEARCHER, bs.PASSWORD, "researcher")
        make(PICK_USER, "rubric", one, 7)
        fx.later = tasks.create_campaign(db, "preference", f"later {PICK_USER}", [PICK_USER], k=1, seed=8,
                                         config={"dataset": "clin", "compare": "answers"}, actor=None)
        fx.campaigns[HOSTILE_USER] = tasks.create_campaign(db, "rubric", HOSTILE, [HOSTILE_USER], k=1, seed=9,
                                                           config={"dataset": "hostile"}, actor=None)
        u = auth.get_user(db, HOSTILE_USER)
        s = tasks.task_state(db, u, fx.campaigns[HOSTILE_USER])
        tasks.flag_item(db, u, s.item.item_id, HOSTILE_NOTE, client_token="setup-flag")
    return fx


@pytest.fixture(scope="module")
def tapp(tmp_path_factory):
    """The task database and a running server (stopped however the tests end)."""
    folder = tmp_path_factory.mktemp("browser_tasks")
    fx = build_tasks_db(folder)
    with bs.serving(fx, folder):
        yield fx


# ---------------------------------------------------------------- helpers

def task_state(app: TaskFixture, username: str, campaign: int | None = None) -> tasks.TaskState:
    """What the annotation page must show now (of ``campaign``, default the user's first), according to the
    database."""
    with connect(app.db, migrate=False) as d:
        return tasks.task_state(d, auth.get_user(d, username), campaign or app.campaigns[username])


def answer_rows(app: TaskFixture, username: str) -> list[tuple]:
    """(id, item_id, question, value, skipped, client_token, supersedes) of a user's answers, oldest first."""
    return bs.query(app.db, "SELECT id, item_id, question, value, skipped, client_token, supersedes "
                            "FROM task_answers WHERE user_id = ? ORDER BY id", (bs.user_id(app.db, username),))


def css_key(key: str) -> str:
    """The class Streamlit gives an element of ``key`` (characters other than [a-zA-Z0-9_-] become "-")."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


def option_button(page: Page, key: str, question: str, value: str):
    """The button of ``value`` for ``question`` of the item of screen key ``key`` (``ItemView.key``)."""
    return page.locator(f".{css_key(f'opt_{key}_{question}_{value}')} button").filter(visible=True)


def wait_task_keys(page: Page, key: str, question: str) -> None:
    """The question on screen takes answer keys: it has been shown for ``webui.grade_screen.SETTLE_MS`` (a key pressed
    sooner is dropped by the page's key guard, ``webui.screen.key_guard``; issue 22)."""
    ready = re.sub(r"[^a-zA-Z0-9_-]", "-", f"{key}_{question}")
    page.locator(f'body[data-task-ready="{ready}"]').wait_for(state="attached")


def app_text(page: Page) -> str:
    return page.locator('[data-testid="stApp"]').inner_text()


def expect_state_shown(page: Page, app: TaskFixture, username: str) -> tasks.TaskState:
    """Wait until the page shows what ``task_state`` says (the item, its pending question's buttons), idle."""
    s = task_state(app, username)
    if s.item is None:
        shows(progress_text(page), f"{s.done} of {s.total} answered")  # (a task item's done: complete)
    else:
        shows(progress_text(page), f"Item {s.position} of {s.total}")
        if s.item.pending is not None:
            q = s.item.pending
            option_button(page, s.item.key, q.id, q.options[0].value).wait_for()
            ask = page.locator(f".{css_key(f'ask_{s.item.key}')}")
            expect(ask).to_contain_text(f"{q.target} — {q.criterion}")
            wait_task_keys(page, s.item.key, q.id)
            read_all(page)
    wait_idle(page)
    return task_state(app, username)  # unchanged while the page was idle


def read_all(page: Page) -> None:
    """Scroll every text box that holds the keys to its end, as a doctor reads (issue 32: a long text holds the
    answer keys until then); nothing when every text is whole."""
    page.wait_for_function("() => document.documentElement.style.getPropertyValue('--medeval-read-max')")
    if page.evaluate("() => !document.body.dataset.taskHeld"):
        return
    for box in page.locator('[class*="st-key-read_"]').all():
        if box.is_visible():
            box.hover()
            page.mouse.wheel(0, 20000)
    page.wait_for_function("() => !document.body.dataset.taskHeld")


def wait_rows(app: TaskFixture, username: str, n: int, *, exact: bool = True,
              timeout: float = TIMEOUT / 1000) -> list[tuple]:
    """Poll the database until ``username`` has ``n`` answer rows (a press saved); with ``exact``, more is
    an error, without it ``n`` is a minimum."""
    deadline = time.monotonic() + timeout
    while True:
        rows = answer_rows(app, username)
        if len(rows) >= n:
            assert not exact or len(rows) == n, rows
            return rows
        if time.monotonic() > deadline:
            raise AssertionError(f"{username}: {len(rows)} answers saved, {n} expected")
        time.sleep(0.05)


def press_answer(page: Page, app: TaskFixture, username: str, key: str) -> tuple[tasks.TaskState, tuple]:
    """Press ``key`` on an idle page showing the current item; wait for the row and for the page to follow.

    Returns the state before the press and the new row."""
    before = expect_state_shown(page, app, username)
    n = len(answer_rows(app, username))
    page.keyboard.press(key)
    row = wait_rows(app, username, n + 1)[-1]
    expect_state_shown(page, app, username)
    return before, row


def open_annotate(page: Page, app: TaskFixture, username: str) -> tasks.TaskState:
    sign_in(page, app, username, path="/annotate")
    expect(page).to_have_url(re.compile(re.escape(app.url + "/annotate") + r"(\?task=\d+)?$"))
    page.get_by_text(f"tasks {username}", exact=False).first.wait_for()
    return expect_state_shown(page, app, username)


# ---------------------------------------------------------------- 1. rubric, then the judge, keyboard only

def test_rubric_with_judge_by_keyboard_judge_appears_after_part_one(page: Page, tapp):
    user = RUBRIC_USER
    s = open_annotate(page, tapp, user)
    assert s.total == 1 and s.item.parts == 2 and s.item.open_part == 1
    iid = s.item.item_id
    payload = json.loads(bs.query(tapp.db, "SELECT payload FROM task_items WHERE id = ?", (iid,))[0][0])
    rationale = payload["judge"]["rationale"]
    assert "points" in rationale
    expect(page.get_by_text("Part 1 of 2", exact=False)).to_be_visible()
    expect(page.locator(f".{css_key(f'ask_{s.item.key}')} button").filter(visible=True)).to_have_count(5)

    for n in range(9):  # 3 responses x 3 criteria
        text = app_text(page)
        assert "points" not in text and "judge-x" not in text, f"the judge's text is shown before press {n + 1}"
        assert "The judge's assessment" not in text
        before, row = press_answer(page, tapp, user, "4")
        assert row[1:5] == (iid, before.item.pending.id, "4", 0)
        assert not row[2].startswith("judge:")

    # part 2 is open: the judge's assessment is shown -- its "Doctor n" as the screen's "Response k" (one numbering,
    # issue 32 §3) -- and the keys now rate it
    from medeval.annotation.tasks.mentions import relabel

    order = json.loads(bs.query(tapp.db, "SELECT layout FROM task_assignments WHERE item_id = ? AND user_id = ?",
                                (iid, bs.user_id(tapp.db, user)))[0][0])["order"]
    models = [r["model"] for r in payload["responses"]]
    shown_as = {models[j]: f"Response {n}" for n, j in enumerate(order, start=1)}
    on_screen = relabel(rationale, {i: shown_as[m] for i, m in enumerate(payload["judge"]["models"], start=1)})
    assert "Doctor" not in on_screen
    expect(page.get_by_text(on_screen, exact=True)).to_be_visible()
    expect(page.get_by_text("Part 2 of 2", exact=False)).to_be_visible()
    assert task_state(tapp, user).item.pending.id.startswith("judge:")
    for _ in range(3):
        before, row = press_answer(page, tapp, user, "5")
        assert row[2] == before.item.pending.id and row[2].startswith("judge:") and row[3] == "5"

    rows = answer_rows(tapp, user)
    assert len(rows) == 12 and {r[1] for r in rows} == {iid}
    assert sorted(r[3] for r in rows if not r[2].startswith("judge:")) == ["4"] * 9
    assert sorted(r[3] for r in rows if r[2].startswith("judge:")) == ["5"] * 3
    assert len({r[2] for r in rows}) == 12 and all(r[4] == 0 and r[6] is None for r in rows)
    # the judge's part came after every response rating
    first_judge = min(i for i, r in enumerate(rows) if r[2].startswith("judge:"))
    assert first_judge == 9
    # the single item is done
    shows(progress_text(page), "1 of 1 answered")
    expect(page.get_by_text("All 1 items are done. Thank you!")).to_be_visible()


# ---------------------------------------------------------------- 2. preference with the arrow keys

def test_preference_arrow_keys_and_tie(page: Page, tapp):
    user = PREF_USER
    s = open_annotate(page, tapp, user)
    assert s.position == 1 and s.total == 9
    iid = s.item.item_id
    text = app_text(page)
    assert "A versus B" in text
    for secret in ("alpha", "beta", "gamma"):
        assert secret not in text  # the sources are hidden
    buttons = page.locator(f".{css_key(f'ask_{s.item.key}')} button").filter(visible=True)
    expect(buttons).to_contain_text(["A is better", "Tie", "B is better"])
    texts = buttons.all_inner_texts()
    assert "←" in texts[0] and "T" in texts[1].replace("Tie", "") and "→" in texts[2], texts  # the key badges

    for key in ("ArrowLeft", "t", "ArrowRight"):
        before, row = press_answer(page, tapp, user, key)
        if key != "ArrowRight":
            assert before.item.item_id == iid
    rows = answer_rows(tapp, user)
    assert [r[3] for r in rows] == ["left", "tie", "right"]
    assert {r[1] for r in rows} == {iid}
    assert [r[2] for r in rows] == [q[0] for q in
                                    json.loads(bs.query(tapp.db, "SELECT payload FROM task_items WHERE id = ?",
                                                        (iid,))[0][0])["criteria"]]
    shows(progress_text(page), "Item 2 of 9")
    assert task_state(tapp, user).item.item_id != iid

    # the side each output is shown on is stored with each assignment of this annotator
    layouts = bs.query(tapp.db, "SELECT item_id, layout FROM task_assignments WHERE user_id = ? AND campaign_id = ?",
                       (bs.user_id(tapp.db, user), tapp.campaigns[user]))
    assert len(layouts) == 9
    assert all(json.loads(lay).get("left") in ("a", "b") for _, lay in layouts)
    assert iid in {i for i, _ in layouts}


# ---------------------------------------------------------------- 3. a double key press

def test_double_key_press_never_saves_a_question_twice(page: Page, tapp):
    user = DOUBLE_USER
    s = open_annotate(page, tapp, user)
    iid = s.item.item_id
    first_q = s.item.pending.id
    page.keyboard.press("3")
    page.keyboard.press("3")  # no wait: the second press may hit the same button or the next question's
    wait_rows(tapp, user, 1, exact=False)
    expect_state_shown(page, tapp, user)  # not before: a key pressed on the old screen answers the old question
    # a deliberate press is processed after both: once its "1" is saved, whatever the second "3" did has landed
    page.keyboard.press("1")
    deadline = time.monotonic() + TIMEOUT / 1000
    while not any(r[3] == "1" for r in answer_rows(tapp, user)):
        assert time.monotonic() < deadline, answer_rows(tapp, user)
        time.sleep(0.05)
    expect_state_shown(page, tapp, user)
    n = sum(r[3] == "3" for r in answer_rows(tapp, user))
    assert n in (1, 2)
    print(f"double press of '3' saved {n} answer(s)")

    rows = answer_rows(tapp, user)
    assert len(rows) == n + 1
    assert rows[0][1:4] == (iid, first_q, "3")
    per_question = {}
    for r in rows:
        per_question.setdefault((r[1], r[2]), []).append(r)
    assert all(len(v) == 1 for v in per_question.values()), per_question  # at most one row per question
    assert len({r[5] for r in rows}) == len(rows)  # no client token twice
    assert all(r[6] is None for r in rows)  # nothing superseded: no change recorded
    assert [r[3] for r in rows] == ["3"] * n + ["1"]
    assert bs.query(tapp.db, "SELECT count(*) FROM audit_log WHERE actor = ? AND action = 'annotation.change'",
                    (user,))[0][0] == 0


def test_keys_typed_ahead_of_the_screen_never_change_an_earlier_answer(page: Page, tapp):
    """Keys pressed faster than the screen redraws reach the previous question's buttons too (Streamlit keeps
    them mounted during a rerun): those presses are refused, so no earlier answer is ever changed by them."""
    user = BURST_USER
    open_annotate(page, tapp, user)
    for key in ("3", "1", "2", "4", "5", "3"):
        page.keyboard.press(key)  # no wait at all
    wait_rows(tapp, user, 1, exact=False)
    previous, deadline = None, time.monotonic() + TIMEOUT / 1000
    while (rows := answer_rows(tapp, user)) != previous:  # until the app is idle and nothing more lands
        assert time.monotonic() < deadline, rows
        previous = rows
        wait_idle(page)
        time.sleep(0.5)
    expect_state_shown(page, tapp, user)
    assert 1 <= len(rows) <= 6
    assert all(r[6] is None for r in rows), rows  # nothing superseded
    per_question = {}
    for r in rows:
        per_question.setdefault((r[1], r[2]), []).append(r)
    assert all(len(v) == 1 for v in per_question.values()), per_question
    assert bs.query(tapp.db, "SELECT count(*) FROM audit_log WHERE actor = ? AND action = 'annotation.change'",
                    (user,))[0][0] == 0


# ---------------------------------------------------------------- 4. reload resumes on the same item

def test_reload_resumes_the_item_with_its_answers(page: Page, tapp):
    user = RELOAD_USER
    s = open_annotate(page, tapp, user)
    iid = s.item.item_id
    press_answer(page, tapp, user, "3")
    press_answer(page, tapp, user, "2")
    rows = answer_rows(tapp, user)
    assert [r[3] for r in rows] == ["3", "2"]

    page.reload()
    expect(page).to_have_url(tapp.url + "/annotate")  # still signed in, on the same page
    wait_idle(page)
    after = expect_state_shown(page, tapp, user)
    assert after.item.item_id == iid and after.position == 1
    third = after.item.pending
    assert third.id not in {r[2] for r in rows} and third.target == "Response 1"
    # the answers given are listed under the response they rate
    given = "Relevancy: 3 · Knowledge Correctness: 2 · Fluency: —"
    expect(page.get_by_text(given, exact=True)).to_be_visible()
    expect(page.get_by_text(f"0 of {after.total} done so far", exact=False)).to_be_visible()  # a fresh session

    before, row = press_answer(page, tapp, user, "5")
    assert before.item.pending.id == third.id
    assert row[1:4] == (iid, third.id, "5")
    assert len(answer_rows(tapp, user)) == 3
    # Response 1 is rated: the screen shows only what the next question needs, Response 2 (issue 32 §2)
    expect(page.locator(".st-key-read_1")).to_contain_text("Response 2")
    expect(page.locator('[class*="st-key-read_"]').filter(has_text="Response 1")).to_have_count(0)


# ---------------------------------------------------------------- 5. untrusted text

def test_untrusted_response_is_plain_text(page: Page, tapp):
    user = XSS_USER
    s = open_annotate(page, tapp, user)
    assert s.total == 1
    stapp = page.locator('[data-testid="stApp"]')
    expect(page.get_by_text(bs.XSS_TEXT, exact=True)).to_be_visible()  # every character, literally
    expect(stapp.locator('img[src="x"]')).to_have_count(0)
    expect(stapp.locator("img")).to_have_count(0)
    expect(stapp.locator("b", has_text="bold")).to_have_count(0)
    expect(stapp.locator("strong", has_text="md")).to_have_count(0)  # no Markdown either
    assert page.evaluate("typeof window.__xss") == "undefined"

    # rating it works like any other response, and the text stays literal
    press_answer(page, tapp, user, "2")
    expect(page.get_by_text(bs.XSS_TEXT, exact=True)).to_be_visible()
    expect(stapp.locator("img")).to_have_count(0)
    assert page.evaluate("typeof window.__xss") == "undefined"


# ---------------------------------------------------------------- 6. the task chosen stays chosen (issue 12.4)

def test_a_later_task_picked_stays_picked_and_keys_answer_it(page: Page, tapp):
    """Answering changes the "done" count in the select box's labels: the page must stay on the task picked
    (in the URL too) and every key press must answer an item of that task."""
    user, later = PICK_USER, tapp.later
    sign_in(page, tapp, user, path="/annotate")
    buttons = page.locator(".st-key-task_campaign input")  # on the page, in the heading's place (issue 32)
    expect(buttons).to_have_value(re.compile(f"^tasks {user}"))  # the first unfinished task by default
    wait_idle(page)
    buttons.click()
    page.get_by_role("option", name=re.compile(f"^later {user}")).click()
    expect(buttons).to_have_value(re.compile(f"^later {user}"))
    wait_idle(page)
    expect(page).to_have_url(re.compile(rf"/annotate\?task={later}$"))
    page.get_by_test_id("stProgress").click()  # out of the select box: keys answer
    for n, key in enumerate(("ArrowLeft", "t", "ArrowRight", "ArrowLeft"), start=1):  # item 1 complete, then item 2
        s = task_state(tapp, user, later)  # this question on screen takes keys, read to its end
        wait_task_keys(page, s.item.key, s.item.pending.id)
        read_all(page)
        page.keyboard.press(key)
        wait_rows_for(tapp, user, n)
        wait_idle(page)
        expect(buttons).to_have_value(re.compile(f"^later {user}"))
    shows(progress_text(page), "Item 2 of 9")
    expect(page).to_have_url(re.compile(rf"/annotate\?task={later}$"))
    rows = bs.query(tapp.db, "SELECT ti.campaign_id, a.value FROM task_answers a JOIN task_items ti ON ti.id = "
                             "a.item_id WHERE a.user_id = ? ORDER BY a.id", (bs.user_id(tapp.db, user),))
    assert rows == [(later, "left"), (later, "tie"), (later, "right"), (later, "left")], rows

    page.reload()  # the URL keeps the task
    wait_idle(page)
    expect(page.locator(".st-key-task_campaign input")).to_have_value(re.compile(f"^later {user}"))
    shows(progress_text(page), "Item 2 of 9")


def wait_rows_for(app: TaskFixture, username: str, n: int) -> None:
    deadline = time.monotonic() + TIMEOUT / 1000
    while len(answer_rows(app, username)) < n:
        assert time.monotonic() < deadline, answer_rows(app, username)
        time.sleep(0.05)


# ---------------------------------------------------------------- 7. names and notes from data (issue 12.5)

def _visible_text(page: Page) -> str:
    """What the reader sees (md_escape's invisible word joiners, U+2060, removed)."""
    return page.locator('[data-testid="stApp"]').inner_text().replace("\u2060", "")


def _no_markup_from(page: Page) -> None:
    stapp = page.locator('[data-testid="stApp"]')
    expect(stapp.locator('a[href*="evil"], a[href*="pixel"], a[href^="mailto:"]')).to_have_count(0)
    expect(stapp.locator("img")).to_have_count(0)
    expect(stapp.locator("strong", has_text="bold")).to_have_count(0)
    expect(stapp.locator("a", has_text="evil")).to_have_count(0)
    assert page.evaluate("typeof window.__xss") == "undefined"


def test_names_titles_notes_and_usernames_are_plain_text(page: Page, tapp):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    # the annotator: the campaign's name (heading), the case title (caption), their username (sidebar)
    sign_in(page, tapp, HOSTILE_USER, path="/annotate")
    expect_state_shown(page, tapp, HOSTILE_USER)
    text = _visible_text(page)
    assert f"{HOSTILE} · " in text and f"Case: {HOSTILE}" in text
    assert f"Signed in as {HOSTILE_USER} · annotator" in text
    _no_markup_from(page)

    # the researcher: the campaign in the select box, the flag note in its table, the section titles
    page.context.clear_cookies()
    cid = tapp.campaigns[HOSTILE_USER]
    sign_in(page, tapp, RESEARCHER, path=f"/task-results?campaign={cid}")
    page.get_by_role("heading", name="Task results", exact=True).wait_for()
    wait_idle(page)
    expect(page.locator(".st-key-task_results_campaign input")).to_have_value(f"#{cid} {HOSTILE} (open)")
    flags = page.get_by_test_id("stDataFrame").filter(has=page.locator('th:text-is("note")'))
    expect(flags.locator("td").filter(has_text=HOSTILE_NOTE)).to_have_count(1)
    expect(flags.locator("td").filter(has_text=HOSTILE_USER)).to_have_count(1)
    _no_markup_from(page)
    assert not [u for u in requests if "/pixel" in u or "evil.example" in u], requests
