"""Real-browser tests of the guidelines on the Grade page: the acknowledgement screen before the first item,
the G key opening them over the item (closing returns to the same item), and hostile guideline text shown
as text (no image, no javascript: link, no alert). Fixtures and helpers: tests/test_browser.py."""

from __future__ import annotations


import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

from medeval.annotation import guidelines as gl
from medeval.store.db import connect
from tests import browser_support as bs
from tests.test_browser import (  # noqa: F401  (fixtures: one browser and context for the module)
    TIMEOUT,
    browser,
    browser_type_launch_args,
    button,
    expect_item_shown,
    page,
    playwright,
    shared_context,
    sign_in,
    wait_idle,
)

pytestmark = bs.browser_marks()

READER, HOSTILE_READER = "doc_keys", "doc_resume"
TEXT = "## Grade by the key points\n\nCount the reference's **key points** the answer gets right."
HOSTILE = "Before <img src=x onerror=alert(1)> after [click](javascript:alert(1)) ![p](https://evil.example/p.png)"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser_guidelines")
    fx = bs.build_db(folder)
    with connect(fx.db) as db:
        gl.set_guidelines(db, fx.campaigns[READER], TEXT, actor=None)
        gl.set_guidelines(db, fx.campaigns[HOSTILE_READER], HOSTILE, actor=None)
    with bs.serving(fx, folder):
        yield fx


def _grade_buttons(page: Page):
    return page.locator("[class*='st-key-grade_'] button").filter(visible=True)


def test_acknowledge_then_g_opens_the_guidelines_over_the_same_item(page: Page, app):
    sign_in(page, app, READER)
    screen = page.locator(".st-key-guidelines_screen")
    expect(screen).to_contain_text("Grade by the key points")
    expect(_grade_buttons(page)).to_have_count(0)  # no item before the acknowledgement
    button(page, "guidelines_ack").click()
    expect(screen).to_have_count(0)  # (the acknowledgement saved and the page redrawn: reading the state is safe)
    wait_idle(page)
    before = expect_item_shown(page, app, READER)
    page.keyboard.press("g")
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Grade by the key points")
    button(page, "close_guidelines").click()
    expect(dialog).to_have_count(0)
    wait_idle(page)
    after = expect_item_shown(page, app, READER)
    assert after.item.item_id == before.item.item_id
    page.keyboard.press("3")
    page.get_by_test_id("stAlertContentSuccess").filter(has_text="Saved").first.wait_for()
    rows = bs.query(app.db, "SELECT item_id, tier, guideline_version FROM grade_annotations WHERE user_id = ?",
                    (bs.user_id(app.db, READER),))
    assert rows == [(before.item.item_id, 2, 1)]


def test_hostile_guidelines_are_text_no_image_no_link_no_script(page: Page, app):
    alerts = []
    page.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
    sign_in(page, app, HOSTILE_READER)
    screen = page.locator(".st-key-guidelines_screen")
    expect(screen).to_contain_text("<img src=x onerror=alert(1)>")  # shown as text
    expect(screen.locator("img")).to_have_count(0)
    expect(page.locator("a[href^='javascript']")).to_have_count(0)
    expect(page.locator("img[src*='evil.example']")).to_have_count(0)
    assert alerts == []
