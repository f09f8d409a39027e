"""The Help page in a real browser: each person's own guide (docs/help/), its pictures drawn, nothing failing.

One demo database, built as ``scripts/start.sh`` builds it, and one server for the module. Checks:

* a doctor who opens Help from Grade reads "How to use Grade" first, then the doctor guide; every picture of the
  guide is loaded (``naturalWidth`` > 0, none "not available") and no request gets a 4xx or 5xx; the selector above
  the guide shows another role's guide and keeps it in the address;
* the adjudicator, the researcher and the admin each open Help on their own guide.

``MEDEVAL_DOCS_SCREENSHOTS=1`` also writes the guides' screenshots to ``docs/help/img/`` (JPEG, 1366x768, the
viewport only), walking the demo as each role does; without it nothing in the repository is written. Waits are for
page states (30 s limits), never fixed sleeps.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests import browser_support as bs  # noqa: E402
from tests import reading_support as rs  # noqa: E402
from tests.browser_support import browser, playwright  # noqa: E402,F401 (module fixtures)
from webui import help as guide  # noqa: E402

pytestmark = bs.browser_marks()

LAPTOP = {"width": 1366, "height": 768}
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
IMG = bs.ROOT / "docs" / "help" / "img"
WRITE_DOCS = os.environ.get("MEDEVAL_DOCS_SCREENSHOTS") == "1"

expect.set_options(timeout=bs.TIMEOUT_MS)


class Demo:
    url: str
    db: Path
    folder: Path
    server = None


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("help")
    d = Demo()
    d.folder = folder
    d.db = bs.build_demo_db(folder)
    with bs.serving(d, folder):
        yield d


# ---------------------------------------------------------------- helpers


# every picture in the main area: (its alt or src, loaded with a size)
PICTURES_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stImage"] img')]
  .map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0}))"""


def wait_ready(page: Page) -> None:
    """The script has run to the end, nothing is stale, and nothing has been added for a moment."""
    bs.wait_settled(page)


def new_page(context) -> Page:
    page = context.new_page()
    page.set_default_timeout(bs.TIMEOUT_MS)
    page.set_default_navigation_timeout(bs.TIMEOUT_MS)
    return page


def sign_in(page: Page, url: str, username: str, password: str | None = None) -> None:
    page.goto(url + "/")
    page.wait_for_url(re.compile(r"/signin\?"))
    page.fill("#username", username)
    page.fill("#password", password or bs.demo_password(username))
    page.click("button[type=submit]")
    page.wait_for_url(lambda u: "/signin" not in u)
    page.locator(APP_IDLE).wait_for(state="attached")


def open_help(page: Page) -> None:
    """Help through the menu, as a user opens it (the same session: it knows the page the user came from)."""
    bs.open_sidebar(page)
    nav = page.get_by_test_id("stSidebarNav")
    more = nav.get_by_text(re.compile(r"^View \d+ more$"))  # a long menu (an admin's) shows its first pages only
    if more.count():
        more.click()
    nav.get_by_role("link", name="Help").click()
    page.wait_for_url(lambda u: "/help" in u)
    expect(page.get_by_role("heading", name="Help", exact=True)).to_be_visible()
    wait_ready(page)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stMain\"] [data-testid=\"stImage\"] "
                           "img')].every(i => i.complete)")


def to_top(locator) -> None:
    """Scroll the page so that ``locator`` is at the top of the window."""
    locator.evaluate("e => e.scrollIntoView({block: 'start'})")
    locator.page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def guide_heading(page: Page, name: str):
    return page.get_by_role("heading", name=guide.guide_sections(name)[0].title, exact=True)


def pictures_of(name: str) -> list[str]:
    return [p[2] for s in guide.guide_sections(name) for p in s.parts if p[0] == "image"]


def shot(page: Page, name: str) -> None:
    """A guide's screenshot in docs/help/img/ (the viewport, JPEG), only with MEDEVAL_DOCS_SCREENSHOTS=1."""
    if WRITE_DOCS:
        IMG.mkdir(parents=True, exist_ok=True)
        file = IMG / f"{name}.jpg"
        page.mouse.move(LAPTOP["width"] - 2, LAPTOP["height"] - 2)  # no button shown as hovered
        for quality in (70, 60, 50, 40):  # a screen of dense Chinese text needs a lower quality to stay small
            page.screenshot(path=str(file), type="jpeg", quality=quality)
            if file.stat().st_size < 140_000:
                break
        assert file.stat().st_size < 150_000, name


# ---------------------------------------------------------------- what every run checks

def test_a_doctors_help_is_the_doctor_guide_with_its_pictures(browser, demo):
    context = browser.new_context(viewport=LAPTOP)
    failed = []
    context.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    try:
        page = new_page(context)
        sign_in(page, demo.url, "doctor2")  # an annotator's first page: Grade (its guidelines first)
        expect(page).to_have_url(re.compile(r"/grade"))
        open_help(page)
        first = page.locator(".st-key-help_this_page")
        expect(first).to_contain_text("How to use Grade")
        expect(first).to_contain_text("Completely Wrong")
        assert first.bounding_box()["y"] < LAPTOP["height"]  # in view when the page opens
        heading = guide_heading(page, "doctor")
        expect(heading).to_be_visible()
        assert heading.bounding_box()["y"] > first.bounding_box()["y"]  # the guide follows how to use Grade
        expect(page.get_by_role("heading", name="Rate & compare", exact=True)).to_be_attached()
        # every picture of the doctor guide, each once (Grade's in the box above, the others in the guide)
        pictures = page.evaluate(PICTURES_JS)
        assert len(pictures) == len(pictures_of("doctor")) >= 4, pictures
        assert all(p["ok"] for p in pictures), pictures
        expect(page.get_by_text("picture not available")).to_have_count(0)
        expect(page.get_by_text("Help for researchers")).to_have_count(0)

        # another role's guide, one click away, kept in the address
        page.locator(".st-key-help_guide").get_by_role("radio", name="Researchers", exact=True).click()
        expect(guide_heading(page, "researcher")).to_be_visible()
        wait_ready(page)
        expect(page).to_have_url(re.compile(r"[?&]guide=researcher"))
        expect(guide_heading(page, "doctor")).to_have_count(0)
        page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stMain\"] [data-testid=\"stImage\"]"
                               " img')].every(i => i.complete)")
        pictures = page.evaluate(PICTURES_JS)
        assert all(p["ok"] for p in pictures) and len(pictures) >= len(pictures_of("researcher")), pictures
        page.reload()
        wait_ready(page)
        expect(guide_heading(page, "researcher")).to_be_visible()
        assert not failed, failed
    finally:
        context.close()


@pytest.mark.parametrize("username, name", [("senior1", "adjudicator"), ("researcher", "researcher"),
                                            ("admin", "admin")])
def test_every_role_opens_help_on_its_own_guide(browser, demo, username, name):
    context = browser.new_context(viewport=LAPTOP)
    try:
        page = new_page(context)
        sign_in(page, demo.url, username)
        wait_ready(page)
        open_help(page)
        expect(guide_heading(page, name)).to_be_visible()
        expect(page.locator(".st-key-help_this_page")).to_contain_text("How to use")
        pictures = page.evaluate(PICTURES_JS)
        assert pictures and all(p["ok"] for p in pictures), pictures
    finally:
        context.close()


# ---------------------------------------------------------------- the guides' screenshots

def pass_qualification(page: Page, db: Path, username: str) -> None:
    """Start the demo round's qualification and answer its gold items as expected (read from the database)."""
    page.locator(".st-key-qualification_start button").filter(visible=True).click()
    expect(page.get_by_test_id("stProgress")).to_contain_text("Qualification item 1 of")
    wait_ready(page)
    (ids,) = bs.query(db, "SELECT a.gold_ids FROM gold_attempts a JOIN users u ON u.id = a.user_id WHERE "
                          "u.username = ? ORDER BY a.attempt DESC LIMIT 1", (username,))[0]
    ids = json.loads(ids)
    for n, gold_id in enumerate(ids):
        expect(page.get_by_test_id("stProgress")).to_contain_text(f"Qualification item {n + 1} of {len(ids)}")
        tier = bs.query(db, "SELECT expected_tier FROM gold_items WHERE id = ?", (gold_id,))[0][0]
        bs.wait_grade_keys(page)
        page.keyboard.press(str(tier + 1))
        wait_ready(page)
    page.locator(".st-key-qualification_continue button").filter(visible=True).click()
    wait_ready(page)


def read_the_guidelines(page: Page) -> None:
    page.locator(".st-key-guidelines_ack button").filter(visible=True).click()
    wait_ready(page)


def grade(page: Page, key: str) -> None:
    before = page.get_by_test_id("stProgress").inner_text()
    bs.wait_grade_keys(page)
    page.keyboard.press(key)
    expect(page.get_by_test_id("stProgress")).not_to_have_text(before)
    wait_ready(page)


@pytest.mark.skipif(not WRITE_DOCS, reason="writes docs/help/img/ only with MEDEVAL_DOCS_SCREENSHOTS=1")
def test_write_the_guides_screenshots(browser, demo, tmp_path):
    context = browser.new_context(viewport=LAPTOP)
    try:
        # the doctor: the guidelines, the Grade screen, their answers, Rate & compare
        page = new_page(context)
        sign_in(page, demo.url, "doctor1")
        page.locator(".st-key-guidelines_ack button").filter(visible=True).wait_for()
        wait_ready(page)
        page.locator(".st-key-guidelines_ack button").scroll_into_view_if_needed()  # the worked examples, the button
        shot(page, "doctor-guidelines")
        read_the_guidelines(page)
        pass_qualification(page, demo.db, "doctor1")
        for key in "231":
            grade(page, key)
        bs.wait_grade_keys(page)
        shot(page, "doctor-grade")
        page.get_by_role("button", name=re.compile("Your answers in this campaign")).click()
        wait_ready(page)
        page.get_by_role("button", name="Reopen").first.wait_for()
        page.get_by_role("button", name="Reopen").last.scroll_into_view_if_needed()
        shot(page, "doctor-your-answers")
        page.goto(demo.url + "/annotate")
        page.locator(".st-key-guidelines_ack button").filter(visible=True).wait_for()
        read_the_guidelines(page)
        page.wait_for_function("() => !!document.body.dataset.taskReady")
        wait_ready(page)
        shot(page, "doctor-rate-compare")
        page.close()
    finally:
        context.close()

    # a long answer: "more below" and the keys held (a database of its own with a 1,500-character text)
    folder = tmp_path / "long"
    db, _ = rs.build(folder, ["help_long"], lengths=(1500,))
    with closing(sqlite3.connect(db)) as conn, conn:  # a campaign name a doctor could meet
        conn.execute("UPDATE campaigns SET name = 'Treatment principles: long answers'")
    with bs.serving(None, folder, db=db) as server:
        context = browser.new_context(viewport=LAPTOP)
        try:
            page = new_page(context)
            sign_in(page, server.url, "help_long", bs.PASSWORD)
            page.wait_for_function("() => !!document.body.dataset.gradeHeld")
            bs.wait_grade_keys(page)
            wait_ready(page)
            expect(page.locator('.st-key-item_response[data-more="1"]')).to_have_count(1)
            shot(page, "doctor-more-below")
        finally:
            context.close()

    # the adjudicator: an item with its final tier and reason; replacing an earlier adjudication
    context = browser.new_context(viewport=LAPTOP)
    try:
        page = new_page(context)
        sign_in(page, demo.url, "senior1")
        wait_ready(page)
        page.keyboard.press("2")
        expect(page.get_by_text("Chosen: Partially Correct")).to_be_visible()
        page.keyboard.press("r")
        page.keyboard.type("The answer names the main drug but misses the second-line treatment.")
        wait_ready(page)
        shot(page, "adjudicate")
        page.locator(".st-key-adj_item").click()
        page.get_by_role("option", name=re.compile("adjudicated:")).first.click()
        wait_ready(page)
        now = page.locator(".st-key-adj_current").inner_text()  # the adjudication on record
        key, name = ("2", "Partially Correct") if "Basically Correct" in now else ("3", "Basically Correct")
        page.keyboard.press(key)  # another tier than the one on record
        expect(page.get_by_text(f"Chosen: {name}")).to_be_visible()
        page.keyboard.press("r")
        page.keyboard.type("On reading it again: every key point of the reference is there.")
        page.keyboard.press("Control+Enter")
        question = page.get_by_text(re.compile(r"Replace the adjudication of item \d+\?"))
        question.wait_for()
        wait_ready(page)
        question.scroll_into_view_if_needed()
        shot(page, "adjudicate-replace")
        page.close()
    finally:
        context.close()

    # the researcher: Campaigns, New campaign, Agreement, publishing a draft (asked once; cancelled)
    context = browser.new_context(viewport=LAPTOP)
    try:
        page = new_page(context)
        sign_in(page, demo.url, "researcher")
        wait_ready(page)
        page.goto(demo.url + "/campaigns")
        wait_ready(page)
        shot(page, "researcher-campaigns")
        page.goto(demo.url + "/new-campaign")
        wait_ready(page)
        page.get_by_label("Name").fill("Calibration round 2")
        page.get_by_label("Name").press("Tab")
        wait_ready(page)
        shot(page, "researcher-new-campaign")
        page.goto(demo.url + "/agreement")
        wait_ready(page)
        shot(page, "researcher-agreement")
        page.goto(demo.url + "/tuning")
        wait_ready(page)
        thumb = page.get_by_role("slider").last
        for _ in range(4):
            thumb.focus()
            page.keyboard.press("ArrowRight")
            wait_ready(page)
        name = page.get_by_label("Name of the new threshold set")
        name.fill("Tuned by hand, round 2")
        name.press("Tab")
        wait_ready(page)
        page.get_by_role("button", name="Publish and activate…").click()
        ask = page.get_by_role("button", name="Publish and regrade every score")
        ask.wait_for()
        wait_ready(page)
        ask.scroll_into_view_if_needed()
        page.mouse.wheel(0, 120)
        wait_ready(page)
        shot(page, "researcher-publish")
        page.locator(".st-key-publish_ask_no button").click()
        wait_ready(page)
        page.close()
    finally:
        context.close()

    # the admin: the accounts, and the audit log
    context = browser.new_context(viewport=LAPTOP)
    try:
        page = new_page(context)
        sign_in(page, demo.url, "admin")
        wait_ready(page)
        page.locator(".st-key-start_here_users button").click()  # the panel, hidden: the table and the forms
        wait_ready(page)
        page.get_by_role("tab", name="Change a user").click()
        wait_ready(page)
        to_top(page.get_by_role("tab", name="Change a user"))  # the tabs and the form under the accounts
        shot(page, "admin-users")
        page.get_by_role("tab", name="Audit log").click()
        wait_ready(page)
        to_top(page.get_by_role("tab", name="Audit log"))
        shot(page, "admin-audit")
        page.close()
    finally:
        context.close()
    used = {Path(p).name for name in guide.GUIDES for p in pictures_of(name)}
    assert used == {f.name for f in IMG.iterdir()}, used ^ {f.name for f in IMG.iterdir()}
