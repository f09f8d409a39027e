"""Real-browser tests: Playwright drives Debian's Chromium against ``streamlit run server.py``.

One server per module (MEDEVAL_DEMO=1, a small database built in a few seconds, see
``tests/browser_support.py``). Every test opens a new tab with no cookies (one browser context
for the module, so Streamlit's scripts come from its HTTP cache) and, where it changes grading
state, signs in as an annotator of its own. Each test checks the page and the database.
Waits are for page or database states (30 s limits), never fixed sleeps.
"""

from __future__ import annotations

import re
import time

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

from medeval.accounts import auth  # noqa: E402
from medeval.annotation import campaigns as cp  # noqa: E402
from medeval.store.db import connect  # noqa: E402
from tests import browser_support as bs  # noqa: E402

pytestmark = bs.browser_marks()

APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
PROGRESS = '[data-testid="stProgress"]'
TIMEOUT = bs.TIMEOUT_MS


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium instead of a browser downloaded by ``playwright install``."""
    return {**browser_type_launch_args, "executable_path": bs.CHROMIUM, "headless": True,
            "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--disable-dev-shm-usage"]}


@pytest.fixture(scope="module")
def playwright():
    """Playwright for this module only: pytest-playwright's lives for the whole session and keeps an asyncio
    loop marked as running in the main thread, so every later ``asyncio.run()`` fails (tests/test_routes.py)."""
    pw = sync_playwright().start()
    yield pw
    pw.stop()


@pytest.fixture(scope="module")
def browser(playwright, browser_type_launch_args):
    browser = playwright.chromium.launch(**browser_type_launch_args)
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The database and a running server (stopped however the tests end)."""
    folder = tmp_path_factory.mktemp("browser")
    fx = bs.build_db(folder)
    with bs.serving(fx, folder):
        yield fx


@pytest.fixture(scope="module")
def shared_context(browser):
    """One browser context for the module: its HTTP cache keeps Streamlit's scripts (a sign-in is 1 s faster)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context
    context.close()


@pytest.fixture
def page(shared_context) -> Page:
    """A new tab with no cookies (so no session) for each test; pytest-playwright's own is a new context."""
    shared_context.clear_cookies()
    page = shared_context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.set_default_navigation_timeout(TIMEOUT)
    yield page
    page.close()
    shared_context.clear_cookies()


expect.set_options(timeout=TIMEOUT)


# ---------------------------------------------------------------- helpers

def shows(locator, text: str, *, exact: bool = True) -> None:
    """Wait until ``locator`` has (or contains) ``text``, then assert it.

    ``wait_for`` reacts to DOM changes at once; ``expect`` alone polls with a back-off of up to a second.
    """
    pattern = re.compile("^" + re.escape(text) + "$") if exact else re.compile(re.escape(text))
    locator.filter(has_text=pattern).first.wait_for()
    (expect(locator).to_have_text if exact else expect(locator).to_contain_text)(pattern)


def wait_idle(page: Page) -> None:
    """The Streamlit script has finished its run (and no stale elements are left)."""
    page.locator(APP_IDLE).wait_for(state="attached")
    expect(page.locator('[data-stale="true"]')).to_have_count(0)


def sign_in(page: Page, app, username: str, password: str = bs.PASSWORD, path: str = "/") -> None:
    page.goto(app.url + path)
    page.wait_for_url(re.compile(r"/signin\?"))
    page.fill("#username", username)
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/signin" not in url)
    wait_idle(page)


def button(page: Page, key: str):
    """The button of widget ``key`` (Streamlit also renders a hidden copy of it to measure its width)."""
    return page.locator(f".st-key-{key} button").filter(visible=True)


def progress_text(page: Page):
    return page.locator(PROGRESS)


def current_item(app, username: str):
    """What the grading screen must show now, according to the database."""
    return bs.state(app.db, username, app.campaigns[username])


def expect_item_shown(page: Page, app, username: str):
    """The screen shows exactly the item ``grading_state`` says is next; returns that state."""
    s = current_item(app, username)
    assert s.item is not None
    shows(progress_text(page), f"Item {s.position} of {s.total}")
    button(page, f"grade_{s.item.key}_0").wait_for()
    expect(page.locator(".st-key-item_response")).to_contain_text(s.item.response)
    # a new item takes keys once it has been on screen for webui.grade_screen.SETTLE_MS (issue 22)
    page.locator(f'body[data-grade-ready="{s.item.key}"]').wait_for(state="attached")
    return s


def saved_message(page: Page):
    """The "Saved: ... → ..." / "Changed: ..." note (not the "All N items are graded" one)."""
    return page.get_by_test_id("stAlertContentSuccess").filter(has_text=re.compile(r"(Saved|Changed): "))


def wait_settled(page: Page, app, username: str, answered: int, timeout: float = TIMEOUT / 1000) -> None:
    """After racy input: poll until item ``answered`` has an answer in the database, the page is idle
    and it shows the item the database says is next."""
    deadline = time.monotonic() + timeout
    last = None
    while answered not in per_item_counts(app, username):
        if time.monotonic() > deadline:
            raise AssertionError(f"item {answered} was never saved")
        page.wait_for_timeout(100)
    while True:
        s = current_item(app, username)
        want = f"Item {s.position} of {s.total}" if s.item is not None else (f"{s.done - s.skipped} of {s.total} answered" + (f" · {s.skipped} skipped" if s.skipped else ""))
        try:
            page.locator(APP_IDLE).wait_for(state="attached", timeout=2000)
            last = page.locator(PROGRESS).inner_text(timeout=2000).strip()
            stale = page.locator('[data-stale="true"]').count()
        except Exception as e:  # noqa: BLE001 -- a rerun replaced the element: look again
            last, stale = repr(e), 1
        if last == want and not stale and page.locator(APP_IDLE).count() == 1 and (
                s.item is None or page.locator(f".st-key-grade_{s.item.key}_0").count() == 1):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the page never settled: shows {last!r}, the database says {want!r}")
        page.wait_for_timeout(200)


def press_grade(page: Page, app, username: str, key: str) -> tuple:
    """Press a grade/skip key on the item shown; wait for the next item; return (state before, after)."""
    before = expect_item_shown(page, app, username)
    page.keyboard.press(key)
    what = f"{before.item.disease} · {before.item.aspect}"
    label = "Skipped" if key == "s" else {"1": "Completely Wrong", "2": "Partially Correct",  # key 1 = code 0
                                          "3": "Basically Correct"}[key]
    shows(saved_message(page), f"Saved: {what} → {label}", exact=False)
    if before.position < before.total:
        shows(progress_text(page), f"Item {before.position + 1} of {before.total}")
    wait_idle(page)
    return before, current_item(app, username)


def per_item_counts(app, username: str) -> dict[int, int]:
    rows = bs.query(app.db, "SELECT item_id, count(*) FROM grade_annotations WHERE user_id = ? GROUP BY item_id",
                    (bs.user_id(app.db, username),))
    return dict(rows)


# ---------------------------------------------------------------- 1. sign-in

def test_signin_wrong_then_right_password_httponly_cookie_and_demo_banner(page: Page, app):
    page.goto(app.url + "/")
    expect(page).to_have_url(re.compile(r"/signin\?next=%2F$"))
    expect(page.locator("form #username")).to_be_visible()
    expect(page.locator(".msg.demo")).to_contain_text("DEMO MODE")  # 10. the sign-in form says so too

    page.fill("#username", "doc_login")
    page.fill("#password", "not-the-password")
    page.click("button[type=submit]")
    shows(page.locator(".msg.err"), "Wrong username or password.")
    expect(page.locator("#username")).to_have_value("doc_login")
    assert not [c for c in page.context.cookies() if c["name"] == "medeval_session"]
    assert bs.query(app.db, "SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id "
                            "WHERE u.username = 'doc_login'")[0][0] == 0
    assert bs.query(app.db, "SELECT count(*) FROM audit_log WHERE action = 'login.failed' AND target = 'doc_login'"
                    )[0][0] == 1

    page.fill("#password", bs.PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(app.url + "/grade")  # "/" forwards to the role's first page
    wait_idle(page)
    expect(page.get_by_text("browser test doc_login")).to_be_visible()
    expect_item_shown(page, app, "doc_login")
    expect(page.get_by_text("Signed in as doc_login · annotator")).to_be_visible()
    # 10. demo mode is visible inside the app
    expect(page.get_by_test_id("stAlertContentWarning").filter(has_text="DEMO MODE")).to_be_visible()

    cookies = [c for c in page.context.cookies() if c["name"] == "medeval_session"]
    assert len(cookies) == 1
    assert cookies[0]["httpOnly"] is True
    assert cookies[0]["sameSite"] == "Lax"
    assert "medeval_session" not in page.evaluate("document.cookie")
    assert bs.query(app.db, "SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id "
                            "WHERE u.username = 'doc_login' AND s.ended_at IS NULL")[0][0] == 1


# ---------------------------------------------------------------- 2. keyboard grading

def test_grade_several_items_by_keyboard(page: Page, app):
    user = "doc_keys"
    sign_in(page, app, user)
    page.get_by_text("0 of 6 done so far").wait_for()
    pressed = []
    for key in ("1", "2", "3", "s"):
        before, after = press_grade(page, app, user, key)
        pressed.append((before.item.item_id, key))
        assert after.done == before.done + 1
    expect(progress_text(page)).to_have_text("Item 5 of 6")
    expect_item_shown(page, app, user)

    rows = bs.annotations(app.db, user)
    assert [(r[1], r[2], r[3]) for r in rows] == [
        (iid, None if key == "s" else int(key) - 1, 1 if key == "s" else 0) for iid, key in pressed]
    assert len({r[1] for r in rows}) == len(rows) == 4  # no duplicates
    assert all(r[4] == 0 and r[5] is None and r[6] is None for r in rows)  # not flagged, no note, no supersedes
    # the researcher's view of the same grades
    with connect(app.db, migrate=False) as d:
        grades = cp.current_grades(d, app.campaigns[user], actor=None)
    assert sorted((g["item"], g["tier"], g["skipped"]) for g in grades) == sorted(
        (iid, None if key == "s" else int(key) - 1, int(key == "s")) for iid, key in pressed)


def test_keys_typed_ahead_of_the_next_item_never_regrade_the_last(page: Page, app):
    """Streamlit keeps the previous item's buttons mounted during a rerun, so a key typed ahead can reach them;
    such a press is refused (nothing saved from it), never a silent regrade of the item just graded."""
    user = "doc_burst"
    sign_in(page, app, user)
    expect_item_shown(page, app, user)
    for key in ("1", "3", "2", "1", "3"):
        page.keyboard.press(key)  # no wait at all
    previous, deadline = None, time.monotonic() + TIMEOUT / 1000
    while (rows := bs.annotations(app.db, user)) != previous or not rows:  # until nothing more lands
        assert time.monotonic() < deadline, rows
        previous = rows
        wait_idle(page)
        time.sleep(0.5)
    expect_item_shown(page, app, user)
    assert all(r[6] is None for r in rows), rows  # nothing superseded
    assert len({r[1] for r in rows}) == len(rows)  # one answer per item
    assert bs.query(app.db, "SELECT count(*) FROM audit_log WHERE actor = ? AND action = 'annotation.change'",
                    (user,))[0][0] == 0


# ---------------------------------------------------------------- 3. reload and resume

def test_reload_keeps_session_and_resumes_at_next_ungraded_item(page: Page, app):
    user = "doc_resume"
    sign_in(page, app, user)
    press_grade(page, app, user, "2")
    _, after = press_grade(page, app, user, "3")
    expect(progress_text(page)).to_have_text(f"Item 3 of {after.total}")

    page.reload()
    expect(page).to_have_url(app.url + "/grade")  # not sent to /signin
    wait_idle(page)
    shows(progress_text(page), f"Item 3 of {after.total}")  # unchanged
    s = expect_item_shown(page, app, user)
    with connect(app.db, migrate=False) as d:
        assert s.item.item_id == cp.next_item(d, auth.get_user(d, user), app.campaigns[user])
    expect(page.locator(".st-key-gradeitem")).to_contain_text(s.item.disease)
    expect(page.get_by_text(f"2 of {s.total} done so far")).to_be_visible()  # a fresh session: no "Saved" left
    expect(page.get_by_text("Signed in as doc_resume · annotator")).to_be_visible()
    assert len(bs.annotations(app.db, user)) == 2


# ---------------------------------------------------------------- 4. double click / double key press

def test_double_click_and_double_key_press_save_once_per_item(page: Page, app):
    user = "doc_double"
    sign_in(page, app, user)
    shown = expect_item_shown(page, app, user).item
    first = shown.item_id
    button(page, f"grade_{shown.key}_0").dblclick()
    wait_settled(page, app, user, answered=first)

    second = expect_item_shown(page, app, user).item.item_id
    assert second != first
    page.keyboard.press("2")
    page.keyboard.press("2")  # no wait: the second press may hit the same button or the next item's
    wait_settled(page, app, user, answered=second)

    # one more deliberate answer: it is processed after everything sent before it
    before, _ = press_grade(page, app, user, "3")
    wait_settled(page, app, user, answered=before.item.item_id)

    counts = per_item_counts(app, user)
    assert counts and all(n == 1 for n in counts.values()), counts
    rows = {r[1]: r for r in bs.annotations(app.db, user)}
    assert rows[first][2] == 0 and rows[second][2] == 1 and rows[before.item.item_id][2] == 2
    assert all(r[6] is None for r in rows.values())  # nothing superseded
    assert bs.query(app.db, "SELECT count(*) FROM audit_log WHERE actor = ? AND action = 'annotation.change'",
                    (user,))[0][0] == 0
    assert current_item(app, user).done == len(counts)
    # a late duplicate of the double click (same client token) would be absorbed the same way
    with connect(app.db, migrate=False) as d:
        assert cp.submit_grade(d, auth.get_user(d, user), first, tier=0, client_token=rows[first][7]) == rows[first][0]
    assert per_item_counts(app, user) == counts


# ---------------------------------------------------------------- 5. change a recent answer

def test_change_last_answer_keeps_history_and_audits(page: Page, app):
    user = "doc_change"
    sign_in(page, app, user)
    before, _ = press_grade(page, app, user, "1")
    item, key = before.item.item_id, before.item.key

    page.keyboard.press("z")  # undo the last answer: its item again, whole, saying what the answer was
    shows(progress_text(page), "Answering again — your answer was: Completely Wrong")
    bs.wait_grade_keys(page)
    assert page.evaluate("() => document.body.dataset.gradeReady") == key
    page.keyboard.press("3")
    what = f"{before.item.disease} · {before.item.aspect}"
    shows(saved_message(page), f"Changed: {what} → Basically Correct", exact=False)
    wait_idle(page)
    shows(progress_text(page), f"Item 2 of {before.total}")  # on with the queue

    rows = [r for r in bs.annotations(app.db, user) if r[1] == item]
    assert len(rows) == 2
    old, new = rows
    assert old[2] == 0 and new[2] == 2
    assert new[6] == old[0] and old[6] is None
    audit = bs.query(app.db, "SELECT actor, target, detail FROM audit_log WHERE action = 'annotation.change' "
                             "AND actor = ?", (user,))
    assert len(audit) == 1 and audit[0][1] == str(item)
    assert '"from": 0' in audit[0][2] and '"to": 2' in audit[0][2]
    assert len(bs.annotations(app.db, user)) == 2


# ---------------------------------------------------------------- 6. flag with a note

def test_flag_with_note_typing_does_not_trigger_shortcuts(page: Page, app):
    user = "doc_flag"
    note = "ref 3 is outdated, see 2s"
    sign_in(page, app, user)
    s = expect_item_shown(page, app, user)
    item = s.item.item_id
    page.keyboard.press("f")
    area = page.locator(f".st-key-flag_note_{s.item.key} input")
    area.wait_for()
    wait_idle(page)
    area.click()
    area.press_sequentially(note)  # real key presses: 3, s, 2 must type, not grade or skip
    expect(area).to_have_value(note)
    wait_idle(page)
    assert bs.annotations(app.db, user) == []
    expect(progress_text(page)).to_have_text(f"Item 1 of {s.total}")

    page.get_by_role("button", name="Save flag").click()
    what = f"{s.item.disease} · {s.item.aspect}"
    shows(saved_message(page), f"Saved: {what} → Skipped · flagged", exact=False)
    wait_idle(page)
    shows(progress_text(page), f"Item 2 of {s.total}")
    expect(area).to_have_count(0)  # the form is closed

    rows = bs.annotations(app.db, user)
    assert len(rows) == 1
    _, iid, tier, skipped, flagged, saved_note, supersedes, _ = rows[0]
    assert (iid, tier, skipped, flagged, saved_note, supersedes) == (item, None, 1, 1, note, None)


# ---------------------------------------------------------------- 7. sign out

def test_signout_ends_session_and_old_cookie_is_refused(page: Page, app):
    user = "doc_logout"
    sign_in(page, app, user)
    expect_item_shown(page, app, user)
    old = [c for c in page.context.cookies() if c["name"] == "medeval_session"]
    assert len(old) == 1

    bs.open_sidebar(page)  # folded on the grading screen (issue 32)
    page.get_by_test_id("medeval-signout").click()
    page.wait_for_url(re.compile(r"/signin\?signed_out=1$"))
    shows(page.locator(".msg.ok"), "You are signed out.")
    assert not [c for c in page.context.cookies() if c["name"] == "medeval_session"]
    rows = bs.query(app.db, "SELECT ended_at, end_reason FROM sessions WHERE user_id = ?", (bs.user_id(app.db, user),))
    assert len(rows) == 1 and rows[0][0] is not None and rows[0][1] == "logout"
    assert bs.query(app.db, "SELECT count(*) FROM audit_log WHERE action = 'logout' AND actor = ?", (user,))[0][0] == 1

    page.goto(app.url + "/")
    expect(page).to_have_url(re.compile(r"/signin\?next=%2F$"))

    page.context.add_cookies(old)  # a copied cookie of the ended session
    page.goto(app.url + "/")
    expect(page).to_have_url(re.compile(r"/signin\?.*expired=1"))
    shows(page.locator(".msg.err"), "Your session ended", exact=False)
    expect(page.locator("#username")).to_be_visible()
    assert page.locator('[data-testid="stApp"]').count() == 0
    # the form deleted the stale cookie; the session stays ended
    assert not [c for c in page.context.cookies() if c["name"] == "medeval_session"]
    assert bs.query(app.db, "SELECT count(*) FROM sessions WHERE user_id = ? AND ended_at IS NULL",
                    (bs.user_id(app.db, user),))[0][0] == 0


# ---------------------------------------------------------------- 8. roles

def _no_researcher_page(page: Page) -> None:
    for title in ("Campaigns", "Users & audit", "New campaign", "Agreement", "Leaderboard", "Task results",
                  "New task campaign"):
        expect(page.get_by_role("heading", name=title, exact=True)).to_have_count(0)
    expect(page.get_by_test_id("stDataFrame")).to_have_count(0)


def test_annotator_cannot_open_researcher_pages_but_researcher_can(page: Page, app):
    user = "doc_access"
    sign_in(page, app, user)
    expect_item_shown(page, app, user)
    for path in ("/campaigns", "/users", "/new-campaign"):
        page.goto(app.url + path)
        wait_idle(page)
        progress_text(page).filter(has_text=re.compile(r"^Item 1 of \d+$")).wait_for()  # the grading screen
        _no_researcher_page(page)
        # not a page of this role: Streamlit runs the default page, which forwards to the annotator's own
        # (its "Page not found" notice may already be gone by then, so it is not waited for)
        expect(page).to_have_url(app.url + "/grade")
    # the annotator's navigation holds their two pages and Help, and nothing of other roles
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link")).to_have_count(3)
    expect(nav).to_contain_text("Grade")
    expect(nav).to_contain_text("Rate & compare")
    expect(nav).to_contain_text("Help")
    for other in ("Campaigns", "Users", "New campaign", "New task", "Task results", "Agreement", "Leaderboard"):
        expect(nav).not_to_contain_text(other)
    assert bs.annotations(app.db, user) == []

    # positive control: the researcher sees the Campaigns page and its per-annotator table
    page.context.clear_cookies()
    sign_in(page, app, "res1", path="/campaigns")
    # a bookmark of a role's page keeps its URL (with the campaign shown: ?campaign=<id>)
    expect(page).to_have_url(re.compile(re.escape(app.url + "/campaigns") + r"\?campaign=\d+$"))
    page.get_by_role("heading", name="Campaigns", exact=True).wait_for()
    wait_idle(page)
    expect(page.get_by_role("dialog", name="Page not found")).to_have_count(0)
    page.get_by_role("heading", name="Per annotator").wait_for()
    # (the grid is a canvas; its accessible table holds the cell texts)
    frames = page.get_by_test_id("stDataFrame")
    campaigns = frames.filter(has=page.locator('th:text-is("created by")'))
    expect(campaigns.locator("tbody tr")).to_have_count(len(app.campaigns))
    # the per-annotator table of the newest campaign (selected by default): doc_xss, 24 items assigned
    per_annotator = frames.filter(has=page.locator('th:text-is("assigned")'))
    expect(per_annotator).to_have_count(1)
    row = per_annotator.locator("tbody tr").filter(has=page.locator('td:text-is("doc_xss")'))
    expect(row).to_have_count(1)
    expect(row.locator('td:text-is("24")')).to_have_count(1)
    # ... but not the admin's Users page
    page.goto(app.url + "/users")
    # forwarded to the researcher's first page instead
    expect(page).to_have_url(re.compile(re.escape(app.url + "/campaigns") + r"(\?campaign=\d+)?$"))
    page.get_by_role("heading", name="Campaigns", exact=True).wait_for()
    wait_idle(page)
    expect(page.get_by_role("heading", name="Users & audit")).to_have_count(0)
    expect(page.get_by_test_id("stSidebarNav")).not_to_contain_text("Users")


# ---------------------------------------------------------------- 9. untrusted text

def test_untrusted_response_is_shown_as_text_not_html(page: Page, app):
    user = "doc_xss"
    sign_in(page, app, user)
    s = expect_item_shown(page, app, user)
    assert s.item.item_id == app.xss_item and s.item.response == bs.XSS_TEXT
    box = page.locator(".st-key-item_response")
    expect(box).to_contain_text(bs.XSS_TEXT)  # every character, literally
    expect(page.get_by_text("<b>bold</b>", exact=False)).to_be_visible()
    stapp = page.locator('[data-testid="stApp"]')
    expect(stapp.locator("b", has_text="bold")).to_have_count(0)
    expect(stapp.locator('img[src="x"]')).to_have_count(0)
    expect(box.locator("strong")).to_have_count(0)  # no Markdown either
    assert page.evaluate("typeof window.__xss") == "undefined"

    # grading it works like any other item
    press_grade(page, app, user, "1")
    assert bs.annotations(app.db, user)[-1][1:3] == (app.xss_item, 0)
    assert page.evaluate("typeof window.__xss") == "undefined"

    # the sign-in form does not render a hostile "next" either
    hostile = '/x"><b id="inj">bold</b>'
    page.goto(app.url + "/signin?next=" + hostile)
    expect(page.locator("#username")).to_be_visible()
    expect(page.locator("#inj")).to_have_count(0)
    expect(page.locator("input[name=next]")).to_have_value(hostile)  # kept as a value, escaped
