"""Rate & compare in a real browser at the sizes of hospital screens (issue 22 §2): one item fits one screen.

At 1366×768, 1280×1024 and 1920×1080, with texts of 400 characters (Chinese: the widest), the context, both
responses of a pair side by side and the rating buttons are inside the viewport and the page itself does not
scroll (a long text scrolls inside its own box); the options' labels are shown in full; the "Saved" line does not
move the item; no "Saved" of another task; F opens the flag note in view with the focus in it (Enter saves, Esc
cancels). Screenshots at 1366×768 go to the module's temporary folder (printed). Waits are for page or database
states, never fixed sleeps.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from medeval.accounts import auth  # noqa: E402
from medeval.annotation import cases as cs  # noqa: E402
from medeval.annotation import tasks  # noqa: E402
from medeval.store.db import connect  # noqa: E402
from tests import browser_support as bs  # noqa: E402
from tests.test_browser import (  # noqa: E402,F401  (fixtures: one browser for the module)
    TIMEOUT, browser, browser_type_launch_args, playwright, shows, sign_in, wait_idle)

pytestmark = bs.browser_marks()

SIZES = ((1366, 768), (1280, 1024), (1920, 1080))
FIT_USER, SAVED_USER, FLAG_USER = "sdoc_fit", "sdoc_saved", "sdoc_flag"
KEYS_USER, SLOW_USER = "sdoc_keys", "sdoc_slow"
JUDGE_USER = "sdoc_judge"  # every response rated: the judge's assessment (part 2) is on screen  # key gaps (issue 22 §1): a normal server, a slow one
GAPS_MS = (10, 40, 100, 300)


def long_text(tag: str, n: int = 400) -> str:
    base = (f"{tag}：患者男性，五十八岁，因胸骨后压榨性疼痛两小时入院，伴大汗、恶心，既往高血压十年。"
            "Troponin I 2.3 ng/mL, ECG ST elevation V1-V4. ")
    text = (base * 20)[:n]
    assert len(text) == n
    return text


def _jsonl(path: Path, rows) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sapp(tmp_path_factory):
    """One case whose description, reference, two responses and judge's assessment are 400 characters each; per
    user a preference campaign (3 criteria) and a rubric campaign with the judge."""
    folder = tmp_path_factory.mktemp("browser_task_screen")
    cases = folder / "cases.json"
    cases.write_text(json.dumps([{"id": "c1", "title": "胸痛", "description": long_text("病史"),
                                  "QA_pairs": [{"question": "最可能的诊断是什么？下一步应做哪些检查和处理？",
                                                "answer": long_text("参考答案")}]}], ensure_ascii=False),
                     encoding="utf-8")
    responses = _jsonl(folder / "resp.jsonl", ({"case": "c1", "question": 1, "model": m, "response": long_text(m)}
                                               for m in ("alpha", "beta")))
    rationale = "Doctor 1: 4 points. Doctor 2: 2 points. "
    judgements = _jsonl(folder / "judge.jsonl", [{"case": "c1", "question": 1, "judge": "jx", "models": ["alpha", "beta"],
                                                  "rationale": rationale + long_text("评价", 400 - len(rationale))}])
    db_path = folder / "screen.db"

    class Fx:
        db, url, campaigns, shots = db_path, "", {}, folder / "shots"

    with connect(db_path) as db:
        cs.import_cases(db, "fit", cases=cases, responses=responses, judgements=judgements)
        facts = _jsonl(folder / "fc.jsonl", [
            {"id": "1", "type": "Disease-Symptom", "label": "support", "claim": "流感可引起发热", "model": "m1",
             "response": "正确。" + long_text("流感病毒感染常引起发热", 397)},
            {"id": "1", "type": "Disease-Symptom", "label": "refute", "claim": "流感不会引起发热", "model": "m1",
             "response": "错误。" + long_text("流感常有发热", 397)}])
        cs.import_fact_claims(db, "fc", facts)
        for n, name in enumerate((FIT_USER, SAVED_USER, FLAG_USER, KEYS_USER, SLOW_USER, JUDGE_USER)):
            auth.add_user(db, name, bs.PASSWORD, "annotator")
            Fx.campaigns[name] = {
                "preference": tasks.create_campaign(db, "preference", f"pair {name}", [name], k=1, seed=n,
                                                    config={"dataset": "fit", "compare": "answers"}, actor=None),
                "rubric": tasks.create_campaign(db, "rubric", f"rate {name}", [name], k=1, seed=n,
                                                config={"dataset": "fit", "judge": "jx"}, actor=None),
                "accr": tasks.create_campaign(db, "accr", f"check {name}", [name], k=1, seed=n,
                                              config={"dataset": "fc"}, actor=None)}
        judge = auth.get_user(db, JUDGE_USER)
        cid = Fx.campaigns[JUDGE_USER]["rubric"]
        while (st := tasks.task_state(db, judge, cid)).item.open_part == 1:
            tasks.answer(db, judge, cid, st.item.ref, st.item.pending.id, "3", revision=st.item.revision,
                         client_token=f"setup-{st.item.revision}")
    Fx.shots = Path(os.environ.get("MEDEVAL_SCREENSHOTS") or Fx.shots)  # a folder to keep them in
    Fx.shots.mkdir(parents=True, exist_ok=True)
    Fx.folder = folder
    with bs.serving(Fx, folder):
        yield Fx
    print(f"screenshots: {Fx.shots}")


@pytest.fixture(scope="module")
def slow_url(sapp):
    """A second server on the same database whose every answer takes 400 ms to save (a slow server)."""
    old = os.environ.get("MEDEVAL_TEST_SUBMIT_DELAY_MS")
    os.environ["MEDEVAL_TEST_SUBMIT_DELAY_MS"] = "400"
    try:
        server = bs.Server(sapp.db, sapp.folder / "slow-server.log", demo=True)
    finally:
        if old is None:
            del os.environ["MEDEVAL_TEST_SUBMIT_DELAY_MS"]
        else:
            os.environ["MEDEVAL_TEST_SUBMIT_DELAY_MS"] = old
    try:
        server.wait_healthy()
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def page(browser) -> Page:
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    yield page
    context.close()


def read_all(page: Page) -> None:
    """Scroll every text box to its end, as a doctor reads (a long text holds the answer keys until then)."""
    for box in page.locator('[class*="st-key-read_"]').all():
        if box.is_visible():
            box.hover()
            page.mouse.wheel(0, 20000)
    page.wait_for_function("() => !document.body.dataset.taskHeld")


def open_task(page: Page, app, user: str, task: str, *, signed_in: bool = False, read: bool = True) -> None:
    path = f"/annotate?task={app.campaigns[user][task]}"
    if signed_in:
        page.goto(app.url + path)
        wait_idle(page)
    else:
        sign_in(page, app, user, path=path)
    page.locator('[class*="st-key-ask_"] button').first.wait_for()
    wait_idle(page)
    # the one-time "start here" panel stays (a doctor's first visit): it is in the sidebar, the item still fits
    keys_ready(page)
    if read:
        read_all(page)


def keys_ready(page: Page) -> str:
    """Wait until the question on screen takes keys (``webui.screen.key_guard``); returns its screen id."""
    marker = page.locator('body[data-task-ready]:not([data-task-ready=""])')
    marker.wait_for(state="attached")
    return marker.get_attribute("data-task-ready")


# where the parts of the screen are, and what of them lies outside the viewport or is cut
SCREEN_JS = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left,
                                                                    right: r.right}; };
  const shown = sel => [...document.querySelectorAll(sel)].filter(e => e.checkVisibility());
  const main = document.querySelector('[data-testid="stMain"]');
  return {
    height: window.innerHeight, width: window.innerWidth,
    mainScrolls: main.scrollHeight - main.clientHeight,
    context: shown('.st-key-read_0').map(box),
    sides: shown('[class*="st-key-read_"]:not(.st-key-read_0)').map(box),
    whole: shown('[class*="st-key-read_"]').map(e => e.scrollHeight <= e.clientHeight + 1 || e.dataset.more === '1'
                                                 || e.scrollTop + e.clientHeight >= e.scrollHeight - 2),
    buttons: shown('[class*="st-key-ask_"] button').map(box),
    heading: shown('h3').map(box),
    cut: shown('[class*="st-key-ask_"] button [data-testid="stMarkdownContainer"]').filter(
      e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1).map(e => e.textContent),
    labels: shown('[class*="st-key-ask_"] button [data-testid="stMarkdownContainer"]').map(e => e.textContent),
  };
}"""


def screen(page: Page) -> dict:
    """The screen once its layout has settled: two measurements in a row, two frames apart, agree (the elements
    of a rerun arrive one by one, and a panel just hidden leaves its space a moment later)."""
    last, deadline = None, time.monotonic() + TIMEOUT / 1000
    while True:
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        now = page.evaluate(SCREEN_JS)
        if now == last or time.monotonic() > deadline:
            return now
        last = now
        page.wait_for_timeout(100)


def assert_fits(s: dict, what: str, *, context: bool = True) -> None:
    # (the heading: replaced by the task's select box when the annotator has several tasks)
    parts = {"context": s["context"], "sides": s["sides"], "buttons": s["buttons"], "heading": s["heading"]}
    for name, boxes in parts.items():
        assert boxes or (name == "context" and not context) or name == "heading", f"{what}: no {name} on screen"
        for b in boxes:
            assert b["top"] >= 0 and b["bottom"] <= s["height"] + 0.5, f"{what}: {name} outside the viewport {b}"
            assert b["left"] >= 0 and b["right"] <= s["width"] + 0.5, f"{what}: {name} outside the viewport {b}"
    # (the page may scroll for what lies below the question: the list of answers to change, the sidebar's notes)
    assert not s["cut"], f"{what}: labels cut: {s['cut']}"
    # every box shows its whole text, or says "more below" (and holds the keys) until it has been read to its end
    assert all(s["whole"]), f"{what}: a box cut with no cue: {s['whole']}"


@pytest.mark.parametrize("task", ["preference", "rubric", "judge", "accr"])
def test_one_item_fits_each_screen_size(page: Page, sapp, task):
    if task == "judge":  # the rubric's part 2: the responses, the judge's mapping and assessment, its questions
        open_task(page, sapp, JUDGE_USER, "rubric", read=False)
        expect(page.get_by_text("The judge's assessment", exact=True)).to_be_visible()
    else:
        open_task(page, sapp, FIT_USER, task, read=False)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function("([w, h]) => window.innerWidth === w && window.innerHeight === h", arg=[width, height])
        wait_idle(page)
        s = screen(page)
        if (width, height) == (1366, 768):
            page.screenshot(path=str(sapp.shots / f"{task}-1366x768.png"))
        assert_fits(s, f"{task} at {width}×{height}")
        # only what the question asked now needs (issue 32 §2): the context, and beside it the pair's two sides,
        # or the one response (assessment, claim's answer) the question is about
        assert len(s["sides"]) == (2 if task == "preference" else 1), s["sides"]
        assert all(abs(b["top"] - s["context"][0]["top"]) < 1 for b in s["sides"])  # side by side
        assert len(s["buttons"]) == {"preference": 3, "accr": 2}.get(task, 5)
        if (width, height) == (1366, 768) and task != "accr":  # (an AccR group's 400 characters fit)
            # a text longer than its box scrolls inside it (the page does not), marked "more below"
            more = page.evaluate("() => [...document.querySelectorAll('[class*=\"st-key-read_\"]')].map("
                                 "e => e.scrollHeight > e.clientHeight && e.dataset.more === '1')")
            assert any(more), more
    boxes = page.locator('[class*="st-key-read_"]')
    if task == "accr":
        expect(boxes.filter(has_text=long_text("流感病毒感染常引起发热", 397))).to_have_count(1)
    elif task == "rubric":  # one response at a time
        assert sum(boxes.filter(has_text=long_text(t)).count() for t in ("alpha", "beta")) == 1
    else:  # the pair; or the responses the judge discusses, beside its assessment
        for text in (long_text("alpha"), long_text("beta")):
            expect(boxes.filter(has_text=text)).to_have_count(1)


def test_rubric_labels_are_whole_and_the_criterion_is_on_hover(page: Page, sapp):
    open_task(page, sapp, FIT_USER, "rubric")
    s = screen(page)
    assert s["labels"] and not s["cut"], s
    assert any(label.startswith("Touches the topic but misses what was asked") for label in s["labels"]), s["labels"]
    page.locator('[class*="st-key-ask_"] button').filter(visible=True).nth(2).hover()
    tip = page.get_by_test_id("stTooltipContent").filter(visible=True)
    expect(tip).to_contain_text("How well does the response answer the question that was asked?")
    expect(tip).to_contain_text("Answers the question in part")


def _rows(app, user: str) -> list[tuple]:
    return bs.query(app.db, "SELECT question, value FROM task_answers WHERE user_id = ? ORDER BY id",
                    (bs.user_id(app.db, user),))


def _wait_rows(app, user: str, n: int) -> list[tuple]:
    deadline = time.monotonic() + TIMEOUT / 1000
    while len(rows := _rows(app, user)) < n:
        assert time.monotonic() < deadline, rows
        time.sleep(0.05)
    return rows


def test_saved_line_never_moves_the_item_and_stays_with_its_task(page: Page, sapp):
    user = SAVED_USER
    open_task(page, sapp, user, "preference")
    side = page.locator('.st-key-read_1')
    before = side.bounding_box()
    page.keyboard.press("ArrowLeft")  # the first criterion; the item stays (two more criteria)
    _wait_rows(sapp, user, 1)
    status = page.locator(".st-key-task_status")
    shows(status, "Saved", exact=False)
    wait_idle(page)
    after = side.bounding_box()
    assert abs(after["y"] - before["y"]) < 1 and abs(after["height"] - before["height"]) < 1, (before, after)
    assert_fits(screen(page), "preference after a save")
    page.screenshot(path=str(sapp.shots / "preference-saved-1366x768.png"))

    # the other task, picked in the sidebar: no "Saved" from the preference task
    page.locator(".st-key-task_campaign input").click()
    page.get_by_role("option", name=re.compile(f"^rate {user}")).click()
    expect(page.locator(".st-key-task_campaign input")).to_have_value(re.compile(f"^rate {user}"))
    page.locator(".st-key-read_1").filter(has_text="Response").wait_for()
    wait_idle(page)
    expect(status).not_to_contain_text("Saved")
    expect(status).to_contain_text("Every answer is saved the moment you give it")
    # the select box gave the keyboard back: a key answers at once, no click elsewhere first
    keys_ready(page)
    page.keyboard.press("3")
    rows = _wait_rows(sapp, user, 2)
    assert rows[-1][1] == "3" and rows[-1][0].startswith("r"), rows
    expect(page.locator(".st-key-task_campaign input")).to_have_value(re.compile(f"^rate {user}"))


def test_f_opens_the_note_in_view_with_the_focus_enter_saves_esc_cancels(page: Page, sapp):
    user = FLAG_USER
    open_task(page, sapp, user, "preference")
    page.get_by_test_id("stProgress").click()  # the page has the keyboard
    page.keyboard.press("f")
    dialog = page.get_by_role("dialog")
    note = dialog.locator("input[type=text]")
    expect(note).to_be_focused()
    box, height = note.bounding_box(), page.viewport_size["height"]
    assert 0 <= box["y"] and box["y"] + box["height"] <= height, box
    page.screenshot(path=str(sapp.shots / "flag-note-1366x768.png"))
    page.keyboard.press("Escape")  # cancels: nothing saved
    expect(dialog).to_have_count(0)
    flag = page.locator('[class*="st-key-task_flag_"] button').filter(visible=True)
    expect(flag).to_be_enabled()  # the answer keys are back
    wait_idle(page)
    assert _rows(sapp, user) == []

    page.keyboard.press("f")
    expect(note).to_be_focused()
    page.keyboard.type("the reference is outdated")  # typing goes straight into the note
    page.keyboard.press("Enter")
    rows = _wait_rows(sapp, user, 1)
    assert rows == [("#flag", "the reference is outdated")], rows
    expect(dialog).to_have_count(0)
    shows(page.locator(".st-key-task_status"), "Flag saved", exact=False)
    expect(flag).to_contain_text("Flagged")


def _settled_rows(app, user: str, page: Page) -> list[tuple]:
    """The user's answers once nothing more lands: the page idle and two reads half a second apart agree."""
    previous, deadline = None, time.monotonic() + TIMEOUT / 1000
    while (rows := _rows(app, user)) != previous:
        assert time.monotonic() < deadline, rows
        previous = rows
        wait_idle(page)
        page.wait_for_timeout(500)
    return rows


@pytest.mark.parametrize("speed", ["normal", "slow"])
def test_a_second_key_never_answers_a_question_not_yet_seen(page: Page, sapp, speed, request):
    """Issue 22 §1 on Rate & compare: "4" then "2" after 10, 40, 100 and 300 ms saves the "4" for the question on
    screen and nothing for the next question (shown for less than the settle time, unread); with a slow server
    too. Each answer row names the question that was on screen when its key was pressed."""
    user = KEYS_USER if speed == "normal" else SLOW_USER
    if speed == "slow":
        sapp = type("SlowApp", (), {"url": request.getfixturevalue("slow_url"), "db": sapp.db,
                                    "campaigns": sapp.campaigns})
    open_task(page, sapp, user, "rubric")
    with connect(sapp.db, migrate=False) as d:
        u, cid = auth.get_user(d, user), sapp.campaigns[user]["rubric"]
    for n, gap in enumerate(GAPS_MS, start=1):
        keys_ready(page)
        with connect(sapp.db, migrate=False) as d:
            shown = tasks.task_state(d, u, cid).item.pending  # the question on screen
        page.keyboard.press("4")
        page.wait_for_timeout(gap)  # the gap between the two presses (what is tested, not a wait for the app)
        page.keyboard.press("2")
        rows = _settled_rows(sapp, user, page)
        assert len(rows) == n, (gap, rows)  # one answer per pair of keys
        assert rows[-1] == (shown.id, "4"), (gap, rows)  # for the question on screen, with the first key
    with connect(sapp.db, migrate=False) as d:
        s = tasks.task_state(d, u, cid)
    assert len(s.item.answers) == len(GAPS_MS) and "2" not in s.item.answers.values()
