"""Real-browser checks of issue 22 §3's smaller items at 1366x768: the guidelines' worked-examples table shows every
row with long cells wrapped (on the acknowledgement screen and in the G dialog), Help opens with how to use the
page the user came from, and New campaign returns to an empty form naming what it created. Screenshots go to
``MEDEVAL_SCREENSHOTS`` (or the test's temporary folder). Fixtures and helpers: tests/test_browser.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

from medeval.annotation import guidelines as gl
from medeval.store.db import connect
from tests import browser_support as bs
from tests.test_browser import (  # noqa: F401  (fixtures: one browser for the module)
    browser,
    browser_type_launch_args,
    button,
    playwright,
    sign_in,
    wait_idle,
)

pytestmark = bs.browser_marks()

READER = "doc_change"
LONG = ("主要症状为鼻塞、流鼻涕、咽痛和咳嗽，部分患者有发热、乏力、全身酸痛，少数患者可出现声音嘶哑、食欲减退，"
        "病程一般为一周左右，多数可自行缓解。")
EXAMPLES = [{"aspect_type": "enumerated", "answer": f"{n}. {LONG}", "tier": str(1 + n % 3),
             "why": f"Example {n}: names most of the reference's symptoms, in other words, and nothing wrong; the "
                    "course of the illness is harmless extra detail that does not lower the tier."}
            for n in range(1, 13)] + [{"aspect_type": "numeric", "answer": "<b>not bold</b> **nor this**",
                                       "tier": "1", "why": "shown as written"}]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser_small_items")
    fx = bs.build_db(folder)
    with connect(fx.db) as db:
        gl.set_guidelines(db, fx.campaigns[READER], "## Grade by the key points\n\nCount the key points.",
                          examples=EXAMPLES, actor=None)
    fx.shots = Path(os.environ.get("MEDEVAL_SCREENSHOTS") or folder / "shots")
    fx.shots.mkdir(parents=True, exist_ok=True)
    with bs.serving(fx, folder):
        yield fx


@pytest.fixture
def page(browser) -> Page:
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(bs.TIMEOUT_MS)
    yield page
    context.close()


def _examples_shown_whole(table) -> None:
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(len(EXAMPLES))  # every row, none behind a scroll bar
    for n, ex in enumerate(EXAMPLES):
        row = rows.nth(n)
        expect(row).to_contain_text(ex["answer"])  # the whole cell, not cut
        expect(row).to_contain_text(ex["why"])
    box, frame = table.bounding_box(), table.locator("xpath=..").bounding_box()
    assert box["x"] + box["width"] <= frame["x"] + frame["width"] + 1  # wrapped, not wider than its place
    heights = [rows.nth(n).bounding_box()["height"] for n in range(3)]
    assert min(heights) > 40, heights  # long cells wrap onto several lines


def test_the_worked_examples_table_shows_every_row_wrapped(page: Page, app):
    sign_in(page, app, READER)
    screen = page.locator(".st-key-guidelines_screen")
    expect(screen).to_contain_text("Grade by the key points")
    table = screen.locator(".st-key-guidelines_examples table")
    _examples_shown_whole(table)
    expect(table).to_contain_text("<b>not bold</b> **nor this**")  # the researcher's text, as written
    expect(table.locator("b, strong")).to_have_count(0)
    bs.full_page_screenshot(page, app.shots / "guidelines-examples-1366x768.png")
    button(page, "guidelines_ack").click()
    expect(screen).to_have_count(0)
    wait_idle(page)
    page.keyboard.press("g")  # the same table in the dialog over the item
    dialog = page.get_by_role("dialog")
    _examples_shown_whole(dialog.locator(".st-key-guidelines_examples table"))
    page.screenshot(path=str(app.shots / "guidelines-dialog-1366x768.png"))


def test_help_opens_with_how_to_use_the_page_the_user_came_from(page: Page, app):
    sign_in(page, app, "doc_login")  # an annotator's first page: Grade
    wait_idle(page)
    bs.open_sidebar(page)  # folded on the grading screen (issue 32)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Help").click()
    page.wait_for_url(lambda url: url.endswith("/help"))
    wait_idle(page)
    first = page.locator(".st-key-help_this_page")
    expect(first).to_contain_text("How to use Grade")
    expect(first).to_contain_text("Basically Correct")
    box = first.bounding_box()
    assert box["y"] < 768  # in view when the page opens
    later = page.get_by_role("heading", name="Rate & compare", exact=True)
    assert later.bounding_box()["y"] > box["y"] + box["height"]  # the rest of the guide comes further down
    page.screenshot(path=str(app.shots / "help-from-grade-1366x768.png"))


def test_new_campaign_form_is_empty_again_and_names_the_campaign(page: Page, app):
    sign_in(page, app, "res1", path="/new-campaign")
    wait_idle(page)
    page.get_by_role("radio", name="Random sample (validation)").check(force=True)
    wait_idle(page)
    n = page.locator(".st-key-new_n input")
    n.fill("2")
    n.press("Enter")
    k = page.locator(".st-key-new_k input")
    k.fill("1")
    k.press("Enter")
    wait_idle(page)
    # the name typed last, and Create clicked while the field still has the focus: one click creates (issue 32 §6;
    # the button was disabled until the field lost the focus, so the first click was lost)
    name = page.locator(".st-key-new_name input")
    name.fill("Validation from the browser")
    button(page, "create_campaign").click()
    success = page.get_by_test_id("stAlertContentSuccess")
    expect(success).to_contain_text("“Validation from the browser” created")
    (cid,) = bs.query(app.db, "SELECT id FROM campaigns WHERE name = ?", ("Validation from the browser",))[0]
    expect(success).to_contain_text(f"Campaign #{cid} “Validation from the browser” created")
    expect(page.locator(".st-key-new_name__1 input")).to_have_value("")  # a fresh form
    expect(page.get_by_role("radio", name="Score-interval buckets (calibration)")).to_be_checked()
    page.screenshot(path=str(app.shots / "new-campaign-created-1366x768.png"))
