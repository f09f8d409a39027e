"""The Grade screen's reading area in a real browser (issue 32 §1): every word a grade rests on is on screen.

Realistic Chinese answers and references (numbered lists, line breaks, symbols) of 50, 300, 600 and 1,500
characters (``tests/reading_support.py``), at 1366x768 and 1920x1080:

* a text up to 600 characters (1,500 at 1920x1080) is whole in its box -- the box's scrollHeight is at most its
  clientHeight -- with the box and the grade buttons inside the window, and the grade is stored with
  ``fully_shown`` = 1;
* a longer one scrolls inside its box with "more below" on it, the grade keys are held (the hold line says so) and
  a key pressed meanwhile is not stored but explained; once each long box is scrolled to its end, the key counts;
* two keys pressed 40 ms apart store one grade, for the item that was on screen, and the dropped key is explained.

Waits are for page states; the few fixed pauses only give a dropped key time to have been stored, had it been.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests import browser_support as bs  # noqa: E402
from tests import reading_support as rs  # noqa: E402
from tests.browser_support import browser, playwright  # noqa: E402,F401 (module fixtures)

pytestmark = bs.browser_marks()

SIZES = {"1366x768": ({"width": 1366, "height": 768}, 600), "1920x1080": ({"width": 1920, "height": 1080}, 1500)}
USERS = {"1366x768": "read_small", "1920x1080": "read_large", "fast": "read_fast", "history": "read_hist"}
BOXES = ("item_reference", "item_response")

MEASURE_JS = """() => {
  const box = (k) => { const b = document.querySelector('.st-key-' + k); const r = b.getBoundingClientRect();
    return {sh: b.scrollHeight, ch: b.clientHeight, bottom: r.bottom, more: b.dataset.more || '',
            text: b.innerText.trim()}; };
  const keys = document.querySelector('.st-key-gradekeys').getBoundingClientRect();
  const slot = document.querySelector('.st-key-gradeform');
  return {boxes: [box('item_reference'), box('item_response')], keysBottom: keys.bottom,
          held: document.body.dataset.gradeHeld || '', cue: document.body.dataset.gradeCue || '',
          holdLine: getComputedStyle(slot, '::before').content, height: window.innerHeight};
}"""


class App:
    db: Path
    campaigns: dict
    url: str = ""
    server = None


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reading")
    a = App()
    a.db, a.campaigns = rs.build(folder, list(USERS.values()))
    with bs.serving(a, folder):
        yield a


def open_grade(browser, app, username: str, size: dict) -> Page:
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.set_default_timeout(bs.TIMEOUT_MS)
    page.goto(app.url + "/grade")
    page.fill("#username", username)
    page.fill("#password", bs.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/signin" not in url)
    return page


def answers(app, username: str) -> list[tuple]:
    """(item, tier, fully_shown) of the user's grades, oldest first."""
    return bs.query(app.db, "SELECT item_id, value, fully_shown FROM answers WHERE user_id = ? ORDER BY id",
                    (bs.user_id(app.db, username),))


def current(app, username: str):
    return bs.state(app.db, username, app.campaigns[username])


def wait_measured(page: Page, item_key: str) -> dict:
    """The item ``item_key`` takes keys or is held: the reading area has measured it."""
    page.wait_for_function("(k) => document.body.dataset.gradeReady === k", arg=item_key)
    page.wait_for_function("() => document.documentElement.style.getPropertyValue('--medeval-read-max')")
    page.wait_for_timeout(100)  # the measure runs again once the hold line has been drawn
    return page.evaluate(MEASURE_JS)


def wait_saved(app, username: str, n: int) -> list[tuple]:
    import time

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rows = answers(app, username)
        if len(rows) >= n:
            return rows
        time.sleep(0.1)
    raise AssertionError(f"{username}: {len(answers(app, username))} answers, expected {n}")


@pytest.mark.parametrize("size", list(SIZES))
def test_every_text_is_whole_on_screen_or_read_to_its_end(browser, app, size, tmp_path):
    viewport, limit = SIZES[size]
    user = USERS[size]
    page = open_grade(browser, app, user, viewport)
    seen = []
    try:
        for n in range(len(rs.LENGTHS)):
            s = current(app, user)
            item = s.item
            longest = max(len(item.reference), len(item.response))
            m = wait_measured(page, item.key)
            page.screenshot(path=str(tmp_path / f"{size}-{longest}.png"))
            shown = [b["text"] for b in m["boxes"]]
            assert shown[0].replace("\n", "") == item.reference.strip().replace("\n", "")  # the text, all of it
            assert shown[1].replace("\n", "") == item.response.strip().replace("\n", "")
            if longest <= limit:
                assert all(b["sh"] <= b["ch"] for b in m["boxes"]), (size, longest, m)
                assert all(b["bottom"] <= m["height"] and not b["more"] for b in m["boxes"]), m
                assert m["keysBottom"] <= m["height"] and m["held"] == "", m
            else:
                long = [b for b in m["boxes"] if b["sh"] > b["ch"]]
                assert long and all(b["more"] == "1" for b in long), m
                assert m["held"] == item.key and "Read each text to its end" in m["holdLine"], m
                page.keyboard.press("2")  # held: not stored, and the screen says why
                page.wait_for_function("() => document.body.dataset.gradeCue === 'held'")
                page.wait_for_timeout(700)
                assert len(answers(app, user)) == n
                for k in BOXES:  # read to the end, as the doctor scrolls
                    page.locator(f".st-key-{k}").hover()
                    page.mouse.wheel(0, 5000)
                page.wait_for_function("() => !document.body.dataset.gradeHeld")
                assert page.evaluate("() => [...document.querySelectorAll('[data-more=\"1\"]')].length") == 0
            page.keyboard.press("2")
            rows = wait_saved(app, user, n + 1)
            assert rows[-1] == (item.item_id, 1, 1), rows  # Partially Correct, the whole text shown
            seen.append(longest)
        assert sorted(seen) == sorted(rs.LENGTHS)
    finally:
        page.context.close()


def test_two_fast_keys_store_one_grade_and_say_why_the_second_did_nothing(browser, app):
    user = USERS["fast"]
    page = open_grade(browser, app, user, SIZES["1920x1080"][0])
    try:
        s = current(app, user)
        wait_measured(page, s.item.key)
        page.keyboard.press("1")
        page.wait_for_timeout(40)
        page.keyboard.press("3")  # a hurried second key, 40 ms later
        page.wait_for_function("() => ['soon', 'twice'].includes(document.body.dataset.gradeCue)")
        assert "ignored" in page.evaluate(
            "() => getComputedStyle(document.querySelector('.st-key-gradeform'), '::before').content")
        page.wait_for_timeout(800)
        rows = answers(app, user)
        assert rows == [(s.item.item_id, 0, 1)], rows  # one grade, Completely Wrong, for the item that was shown
        expect(page.get_by_test_id("stProgress")).to_contain_text(f"Item 2 of {len(rs.LENGTHS)}")
    finally:
        page.context.close()


def test_my_answers_list_shows_a_snippet_filters_and_reopens_any_item(browser, app):
    """History (issue 32 §4): the list of my answers tells items of one disease apart by the start of the model's
    answer, filters by answered / skipped, and reopens an item whole to answer it anew (append-only)."""
    from medeval.annotation import campaigns as cp

    user = USERS["history"]
    page = open_grade(browser, app, user, SIZES["1920x1080"][0])
    try:
        first = current(app, user).item
        wait_measured(page, first.key)
        page.keyboard.press("1")
        wait_saved(app, user, 1)
        second = current(app, user).item
        wait_measured(page, second.key)
        page.keyboard.press("s")  # skipped
        wait_saved(app, user, 2)
        page.locator(".st-key-recent_toggle button").filter(visible=True).click()
        listing = page.locator(".st-key-recent_list")
        expect(listing).to_contain_text(cp.snippet(first.response))
        expect(listing).to_contain_text(cp.snippet(second.response))
        listing.get_by_role("radio", name="Skipped").check(force=True)
        expect(listing).not_to_contain_text(first.disease)
        page.locator(f".st-key-reopen_{second.key} button").filter(visible=True).click()
        expect(page.get_by_test_id("stProgress")).to_contain_text("Answering again — your answer was: Skipped")
        m = wait_measured(page, second.key)
        assert m["boxes"][1]["text"].replace("\n", "") == second.response.strip().replace("\n", "")  # whole again
        page.keyboard.press("3")
        rows = wait_saved(app, user, 3)
        assert rows[-1] == (second.item_id, 2, 1), rows
        expect(page.get_by_test_id("stProgress")).to_contain_text(f"Item 3 of {len(rs.LENGTHS)}")
        expect(listing).to_contain_text("No item of yours in this campaign is skipped")
    finally:
        page.context.close()
