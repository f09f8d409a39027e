"""The Adjudicate page in a real browser: an adjudicator signs in, sees only Adjudicate and Help, picks the final
tier with the keyboard and saves it with a reason; hostile text from the data shows as text.

One server for the module on a small database of its own (three annotators' hand-made grades, see
tests/test_adjudication.py). Waits are for page or database states, never fixed sleeps.
"""

from __future__ import annotations

import re
import time

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

from medeval.accounts import auth  # noqa: E402
from medeval.store.db import connect  # noqa: E402
from tests import browser_support as bs  # noqa: E402
from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV  # noqa: E402
from tests.test_adjudication import HOSTILE, PW, _populate  # noqa: E402

pytestmark = bs.browser_marks()

APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
HOSTILE_DISEASE = "<b>感冒</b> **bold** ![img](https://example.invalid/t.png)"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser-adjudication")
    files = {}
    for name, text in (("kb", KB_CSV), ("responses", RESP_CSV), ("models", MODELS_CSV)):
        files[name] = folder / f"{name}.csv"
        files[name].write_text(text, encoding="utf-8")
    db_path = folder / "adj.db"
    with connect(db_path) as db:
        out = _populate(db, files)
        auth.add_user(db, "senior", PW, "adjudicator")
        db.conn.execute("UPDATE kb_entries SET disease = ?", (HOSTILE_DISEASE,))
    with bs.serving(None, folder, db=db_path) as server:
        yield {"url": server.url, "db": db_path, **out}


@pytest.fixture(scope="module")
def page(app):
    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=bs.CHROMIUM, headless=True,
                                 args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(bs.TIMEOUT_MS)
    expect.set_options(timeout=bs.TIMEOUT_MS)
    try:
        yield page
    finally:
        context.close()
        browser.close()
        pw.stop()


def wait_idle(page: Page) -> None:
    page.locator(APP_IDLE).wait_for(state="attached")
    expect(page.locator('[data-stale="true"]')).to_have_count(0)


def test_adjudicator_records_a_final_tier_with_the_keyboard(app, page):
    it = app["items"]
    page.goto(app["url"] + "/")
    page.wait_for_url(re.compile(r"/signin\?"))
    page.fill("#username", "senior")
    page.fill("#password", PW)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/adjudicate"))
    wait_idle(page)
    nav = page.locator('[data-testid="stSidebarNav"] a')
    expect(nav).to_have_text([re.compile(r"Adjudicate$"), re.compile(r"Help$")])  # (icon name, then title)

    # the widest disagreement first; hostile text from the data is text, never markup
    expect(page.locator(".st-key-adj_disease")).to_contain_text(HOSTILE_DISEASE)
    assert page.locator(".st-key-adj_disease b, .st-key-adj_disease img, .st-key-adj_disease strong").count() == 0
    page.locator(".st-key-adj_item").get_by_role("combobox").click()  # (a combo box in Streamlit 1.67)
    page.get_by_role("option", name=re.compile(f"^Item {it[5]} ")).click()
    wait_idle(page)
    expect(page.locator(".st-key-adj_notes")).to_contain_text(f"Annotator 3: {HOSTILE}")
    assert page.locator(".st-key-adj_notes img, .st-key-adj_notes a, .st-key-adj_notes strong").count() == 0

    # keys: 3 picks Basically Correct; the reason; Ctrl+Enter in the reason saves
    page.get_by_role("heading", name="Adjudicate").click()  # focus off the select box: keys go to the page
    page.keyboard.press("3")
    expect(page.get_by_text("Chosen: 3 · Basically Correct")).to_be_visible()
    wait_idle(page)
    reason = page.locator(f".st-key-adj_reason_{it[5]} textarea")
    reason.fill("the answer covers the key points <i>in full</i>")
    reason.press("Control+Enter")
    deadline = time.monotonic() + bs.TIMEOUT_MS / 1000
    while not (rows := bs.query(app["db"], "SELECT item_id, tier, reason FROM adjudications")):
        assert time.monotonic() < deadline, "the adjudication was never saved"
        page.wait_for_timeout(100)
    assert rows == [(it[5], 2, "the answer covers the key points <i>in full</i>")]
    wait_idle(page)
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text("Basically Correct")
