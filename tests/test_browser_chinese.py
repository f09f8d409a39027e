"""The screens a grade rests on, in Simplified Chinese, in a real browser at 1366x768 (issue 33).

The demo as ``scripts/start.sh`` builds it, with its languages as built (the doctors and senior1 read Chinese, the
researcher English). Grade (doctor1, past the guidelines and the qualification), Rate & compare (doctor3, past the
guidelines), Adjudicate (senior1) and Tune cut-offs (the researcher, who switches to Chinese in the sidebar) must
still fit as the reading screens require: no sideways scrolling, no button or label cut, the answer keys inside the
window; their interface text is Chinese (no English word but names, abbreviations and the data's own). A screenshot
of each goes to the test's folder; ``MEDEVAL_DOCS_SCREENSHOTS=1`` also writes them to ``docs/zh-CN-*.jpg``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests import browser_support as bs  # noqa: E402
from tests.browser_support import browser, playwright  # noqa: E402,F401 (module fixtures)
from tests.i18n_support import data_words, english_words  # noqa: E402

pytestmark = bs.browser_marks()

LAPTOP = {"width": 1366, "height": 768}
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
WRITE_DOCS = os.environ.get("MEDEVAL_DOCS_SCREENSHOTS") == "1"
expect.set_options(timeout=bs.TIMEOUT_MS)

FIT_JS = """(answers) => {
  const shown = sel => [...document.querySelectorAll(sel)].filter(e => e.checkVisibility());
  const main = document.querySelector('[data-testid="stMain"]');
  const side = document.querySelector('[data-testid="stSidebar"]');
  return {
    sideways: document.documentElement.scrollWidth > window.innerWidth,
    cut: shown('[data-testid="stMain"] button [data-testid="stMarkdownContainer"], '
               + '[data-testid="stMain"] [data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"], '
               + '[data-testid="stMain"] [data-baseweb="tab"]')
         .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent),
    answersBelow: answers ? shown(answers).filter(e => e.getBoundingClientRect().bottom > window.innerHeight + 1)
                              .map(e => e.textContent) : [],
    answers: answers ? shown(answers).length : 0,
    // (Material icons are ligatures: their names, "gavel", are in the text but drawn as pictures)
    text: [main, side].filter(e => e).map(e => { const c = e.cloneNode(true);
      c.querySelectorAll('style, script, [data-testid="stIconMaterial"], [translate="no"]').forEach(i => i.remove());
      return c.textContent; }).join('\\n'),
  };
}"""


class Demo:
    url: str
    db: Path
    shots: Path


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chinese")
    d = Demo()
    d.db = bs.build_demo_db(folder, english=False)
    d.shots = folder / "screens"
    d.shots.mkdir()
    with bs.serving(d, folder):
        yield d


@pytest.fixture(scope="module")
def data(demo) -> set[str]:
    return data_words(demo.db)


def wait_ready(page: Page) -> None:
    page.locator('[data-testid="stMain"] h1, [data-testid="stMain"] h3, [data-testid="stMain"] [data-testid="stProgress"], '
                 '[data-testid="stMain"] .st-key-adj_item, .st-key-guidelines_ack, [class*="st-key-ask_"]'
                 ).first.wait_for()
    bs.wait_settled(page)


def sign_in(page: Page, demo, username: str, path: str) -> None:
    page.goto(demo.url + path)
    page.wait_for_url(re.compile(r"/signin\?"))
    expect(page.locator("html")).to_have_attribute("lang", re.compile("zh-CN|en"))
    page.fill("#username", username)
    page.fill("#password", bs.demo_password(username))
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/signin" not in url)
    wait_ready(page)


def past_the_guidelines(page: Page) -> None:
    ack = page.locator(".st-key-guidelines_ack button").filter(visible=True)
    if ack.count():
        ack.click()
        page.locator(".st-key-guidelines_ack").wait_for(state="detached")
        wait_ready(page)


def past_the_qualification(page: Page, demo, username: str) -> None:
    """Answer the demo round's qualification as expected (the gold items' tiers, read from the database)."""
    start = page.locator(".st-key-qualification_start button").filter(visible=True)
    if not start.count():
        return
    start.click()
    wait_ready(page)
    rows = bs.query(demo.db, "SELECT a.gold_ids FROM gold_attempts a JOIN users u ON u.id = a.user_id WHERE "
                    "u.username = ? ORDER BY a.attempt DESC LIMIT 1", (username,))
    for gold_id in json.loads(rows[0][0]):
        tier = bs.query(demo.db, "SELECT expected_tier FROM gold_items WHERE id = ?", (gold_id,))[0][0]
        bs.wait_grade_keys(page)
        page.keyboard.press(str(tier + 1))
        wait_ready(page)
    page.locator(".st-key-qualification_continue button").filter(visible=True).click()
    wait_ready(page)


# every line of text inside a container, as drawn: two lines that share more than 2 px of height and width overlap
OVERLAP_JS = """
(sel) => {
  const root = document.querySelector(sel);
  const lines = [];
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode;
    if (!node.textContent.trim() || !node.parentElement.checkVisibility()) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) if (r.width > 1 && r.height > 1) lines.push({text: node.textContent.trim(), r});
  }
  const out = [];
  for (let i = 0; i < lines.length; i++) for (let j = i + 1; j < lines.length; j++) {
    const a = lines[i].r, b = lines[j].r;
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top), w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    if (h > 2 && w > 2) out.push([lines[i].text, lines[j].text]);
  }
  return out;
}
"""


def check_screen(page: Page, demo, data: set[str], name: str, answers: str | None) -> dict:
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    fit = page.evaluate(FIT_JS, answers)
    page.screenshot(path=str(demo.shots / f"zh-CN-{name}.png"))
    if WRITE_DOCS:
        page.screenshot(path=str(bs.ROOT / "docs" / f"zh-CN-{name}.jpg"), type="jpeg", quality=70)
    assert not fit["sideways"], f"{name} scrolls sideways"
    assert not fit["cut"], f"{name}: labels cut: {fit['cut']}"
    if answers:
        assert fit["answers"] and not fit["answersBelow"], f"{name}: answer keys below the window"
    assert re.search(r"[\u4e00-\u9fff]", fit["text"])
    left = english_words([fit["text"]], data)
    assert not left, f"English words on the Chinese {name}: {sorted(left)}"
    return fit


def test_grade_in_chinese_fits(browser, demo, data):
    context = browser.new_context(viewport=LAPTOP, locale="zh-CN")
    try:
        page = context.new_page()
        page.set_default_timeout(bs.TIMEOUT_MS)
        sign_in(page, demo, "doctor1", "/grade")
        past_the_guidelines(page)
        past_the_qualification(page, demo, "doctor1")
        expect(page.get_by_test_id("stProgress")).to_be_visible()
        bs.wait_grade_keys(page)
        check_screen(page, demo, data, "grade", ".st-key-gradekeys button")
    finally:
        context.close()


def test_rate_and_compare_in_chinese_fits(browser, demo, data):
    context = browser.new_context(viewport=LAPTOP, locale="zh-CN")
    try:
        page = context.new_page()
        page.set_default_timeout(bs.TIMEOUT_MS)
        sign_in(page, demo, "doctor3", "/annotate")
        past_the_guidelines(page)
        page.locator('[class*="st-key-ask_"] button').first.wait_for()
        wait_ready(page)
        check_screen(page, demo, data, "annotate", '[class*="st-key-ask_"] button')
    finally:
        context.close()


def test_adjudicate_in_chinese_fits(browser, demo, data):
    context = browser.new_context(viewport=LAPTOP, locale="zh-CN")
    try:
        page = context.new_page()
        page.set_default_timeout(bs.TIMEOUT_MS)
        sign_in(page, demo, "senior1", "/adjudicate")
        page.locator(".st-key-adj_item").wait_for()
        check_screen(page, demo, data, "adjudicate", '[class*="st-key-adj_pick_"] button')
        # the narrow panel's lines wrap more in Chinese: no line is drawn over another (a two-line caption was)
        overlaps = page.evaluate(OVERLAP_JS, ".st-key-adj_panel")
        assert not overlaps, f"lines drawn over one another in the panel: {overlaps}"
    finally:
        context.close()


def test_the_researcher_switches_tune_cutoffs_to_chinese_in_place(browser, demo, data):
    context = browser.new_context(viewport=LAPTOP, locale="en-US")
    try:
        page = context.new_page()
        page.set_default_timeout(bs.TIMEOUT_MS)
        sign_in(page, demo, "researcher", "/tuning")
        expect(page.get_by_test_id("stMain").locator("h1")).to_contain_text("Tune cut-offs")
        url = page.url
        bs.open_sidebar(page)
        combo = page.locator(".st-key-ui_language").get_by_role("combobox")
        combo.click()
        page.get_by_role("option", name="中文", exact=True).click()
        expect(page.get_by_test_id("stMain").locator("h1")).to_contain_text("调整阈值")
        wait_ready(page)
        assert page.url == url  # the same page, its choices kept in the URL
        assert bs.query(demo.db, "SELECT language FROM users WHERE username = 'researcher'") == [("zh-CN",)]
        check_screen(page, demo, data, "tuning", None)
    finally:
        context.close()
