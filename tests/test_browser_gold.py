"""Real-browser test of the qualification round on the Grade page: the gold items look exactly like real items
(same test ids, same sections, element keys of the same form), the round is passed, then the real items come.
Fixtures and helpers: tests/test_browser.py."""

from __future__ import annotations

import re
import time

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect

from medeval.annotation import gold
from medeval.store.db import connect
from tests import browser_support as bs
from tests.test_browser import (  # noqa: F401  (fixtures: one browser and context for the module)
    TIMEOUT,
    browser,
    browser_type_launch_args,
    button,
    page,
    playwright,
    shared_context,
    sign_in,
    wait_idle,
)

pytestmark = bs.browser_marks()

USER = bs.ANNOTATORS[0]
STRUCTURE_JS = """() => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const ids = [...main.querySelectorAll('[data-testid]')].map(e => e.getAttribute('data-testid'));
  const keys = [...main.querySelectorAll('[class*="st-key-"]')]
    .flatMap(e => [...e.classList].filter(c => c.startsWith('st-key-')));
  return {ids, keys};
}"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser_gold")
    fx = bs.build_db(folder)
    with connect(fx.db) as db:
        cid = fx.campaigns[USER]
        free = [r for (r,) in db.conn.execute(
            "SELECT DISTINCT response_id FROM scores WHERE response_id NOT IN (SELECT response_id FROM campaign_items "
            "WHERE campaign_id = ?) ORDER BY response_id LIMIT 3", (cid,))]
        fx.gold = {gold.mark_gold(db, cid, r, 1, f"reason {r}", actor=None): 1 for r in free}
        gold.set_settings(db, cid, {"qualification_required": True, "qualification_items": 2, "pass_mark": 1.0,
                                  "retries": 0}, actor=None)
    with bs.serving(fx, folder):
        yield fx


def structure(page: Page) -> tuple[list[str], list[str]]:
    """The screen's test ids and element keys, an item's screen key and other numbers replaced, once two readings
    two frames and 150 ms apart agree (a rerun's elements arrive one by one; a loaded machine draws them slowly)."""
    last, deadline = None, time.monotonic() + 10
    while True:
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        s = page.evaluate(STRUCTURE_JS)
        if s == last or time.monotonic() > deadline:
            break
        last = s
        page.wait_for_timeout(150)
    # an item's screen key (k + 12 hex digits, per annotator and item) as KEY, other numbers as N
    return s["ids"], sorted(re.sub(r"\d+", "N", re.sub(r"(?<=_)k[0-9a-f]{12}(?=_|$)", "KEY", k)) for k in s["keys"])


def test_qualification_items_look_like_real_items_then_real_items_follow(page: Page, app):
    sign_in(page, app, USER, path="/grade")
    button(page, "qualification_start").click()
    wait_idle(page)
    progress = page.get_by_test_id("stProgress")
    expect(progress).to_contain_text("Qualification item 1 of 2")
    gold_screen = None
    for n in (1, 2):
        expect(progress).to_contain_text(f"Qualification item {n} of 2")
        if n == 2:  # (after an answer, like the first real item: the "Saved" note is on both)
            gold_screen = structure(page)
            assert "qualification" not in " ".join(gold_screen[1]) and "gold" not in " ".join(gold_screen[1])
        bs.wait_grade_keys(page)  # a new item takes keys after webui.grade_screen.SETTLE_MS (issue 22)
        page.keyboard.press("2")  # the expected tier (1 = Partially Correct)
        wait_idle(page)
    button(page, "qualification_continue").click()
    wait_idle(page)
    expect(progress).to_contain_text("Item 1 of 6")
    real_screen = structure(page)
    assert real_screen == gold_screen  # the same test ids in the same order, the same sections and keys
    rows = bs.query(app.db, "SELECT count(*) FROM gold_answers WHERE mode = 'qualification' AND tier = 1")
    assert rows == [(2,)]
    assert bs.query(app.db, "SELECT count(*) FROM grade_annotations WHERE user_id = ?",
                    (bs.user_id(app.db, USER),)) == [(0,)]
