"""The Adjudicate page in a real browser: an adjudicator signs in, sees only Adjudicate and Help, picks the final
tier with the keyboard and saves it with a reason; hostile text from the data shows as text.

One server for the module on a small database of its own (three annotators' hand-made grades, see
tests/test_adjudication.py). Waits are for page or database states, never fixed sleeps.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

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
    shots = Path(os.environ.get("MEDEVAL_SCREENSHOTS") or folder / "shots")  # a folder to keep them in
    shots.mkdir(parents=True, exist_ok=True)
    with bs.serving(None, folder, db=db_path) as server:
        yield {"url": server.url, "db": db_path, "shots": shots, **out}


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
    page.locator(".st-key-adj_disease").click()  # focus off the select box: keys go to the page
    page.keyboard.press("3")
    expect(page.get_by_text("Chosen: Basically Correct")).to_be_visible()
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


# ---------------------------------------------------------------- one item on one screen, keys after clicks (issue 22)

LONG = ("参考：患者男性，五十八岁，因胸骨后压榨性疼痛两小时入院，伴大汗、恶心，既往高血压十年。"
        "Troponin I 2.3 ng/mL, ECG ST elevation V1-V4. " * 10)[:400]
SIZES = ((1366, 768), (1280, 1024), (1920, 1080))
FIT_JS = """() => {
  const box = sel => [...document.querySelectorAll(sel)].filter(e => e.checkVisibility()).map(e => {
    const r = e.getBoundingClientRect(); return {sel, top: r.top, bottom: r.bottom, left: r.left, right: r.right}; });
  const main = document.querySelector('[data-testid="stMain"]');
  return {height: window.innerHeight, width: window.innerWidth, mainScrolls: main.scrollHeight - main.clientHeight,
          boxes: [...box('.st-key-adj_disease'), ...box('.st-key-adj_reference'), ...box('.st-key-adj_response'),
                  ...box('[class*="st-key-adj_pick_"] button'), ...box('[class*="st-key-adj_reason_"] textarea'),
                  ...box('[data-testid="stFormSubmitButton"] button'), ...box('.st-key-adj_status')]};
}"""


def _fold_sidebar(page: Page) -> None:
    """Fold the sidebar away (opened by an earlier test), as the page starts: the item has the screen."""
    if page.get_by_test_id("stExpandSidebarButton").is_visible():
        return
    page.get_by_test_id("stSidebar").hover()  # (the fold button shows on hover)
    page.get_by_test_id("stSidebarCollapseButton").locator("button").click()
    expect(page.get_by_test_id("stExpandSidebarButton")).to_be_visible()


def _settled(page: Page, js: str) -> dict:
    """``js``'s measurement once two in a row, two frames apart, agree (the elements of a rerun arrive one by one)."""
    last, deadline = None, time.monotonic() + bs.TIMEOUT_MS / 1000
    while True:
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        now = page.evaluate(js)
        if now == last or time.monotonic() > deadline:
            return now
        last = now
        page.wait_for_timeout(100)


def _pick_item(page: Page, item: int) -> None:
    page.locator(".st-key-adj_item").get_by_role("combobox").click()
    page.get_by_role("option", name=re.compile(f"^Item {item} ")).click()
    wait_idle(page)
    page.locator(f".st-key-adj_reason_{item}").wait_for()


def _chosen(page: Page, name: str) -> None:
    expect(page.get_by_text(re.compile(f"^Chosen: .*{name}$"))).to_be_visible()
    wait_idle(page)


def test_the_item_fits_each_screen_size_with_400_character_texts(app, page):
    """The reference and the model's answer (400 characters each), the tier buttons, the reason and Save are in
    the viewport at each size, the page does not scroll (a long text scrolls inside its box)."""
    with connect(app["db"]) as db:
        db.conn.execute("UPDATE kb_entries SET reference = ?", (LONG,))
        db.conn.execute("UPDATE responses SET raw = ?", (LONG.replace("参考", "回答"),))
        db.conn.commit()
    it = app["items"]
    page.goto(app["url"] + "/adjudicate")
    wait_idle(page)
    _pick_item(page, it[7])
    try:
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[width, height])
            s = _settled(page, FIT_JS)
            if (width, height) == (1366, 768):
                page.screenshot(path=str(app["shots"] / "adjudicate-1366x768.png"))
            assert len(s["boxes"]) == 1 + 2 + 3 + 1 + 1 + 1, s["boxes"]
            for b in s["boxes"]:
                assert 0 <= b["top"] and b["bottom"] <= s["height"] + 0.5, (width, height, b)
                assert 0 <= b["left"] and b["right"] <= s["width"] + 0.5, (width, height, b)
            assert s["mainScrolls"] <= 1, (width, height, s["mainScrolls"])
        expect(page.locator(".st-key-adj_reference")).to_contain_text(LONG)  # all of it, scrolling inside
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_keys_work_after_a_click_on_any_control(app, page):
    it = app["items"]
    page.goto(app["url"] + "/adjudicate")
    wait_idle(page)
    bs.open_sidebar(page)  # the queue's settings and the names toggle
    _pick_item(page, it[7])  # a click in the select box, then an option
    page.keyboard.press("1")
    _chosen(page, "Completely Wrong")
    page.get_by_text("Show annotator names").click()  # the toggle in the sidebar
    expect(page.locator(".st-key-adj_names input")).to_be_checked()
    wait_idle(page)
    page.keyboard.press("3")
    _chosen(page, "Basically Correct")
    page.get_by_text("1 tier (any)").click()  # a radio button (a new filter opens on its first item to settle)
    first = _first_to_settle(app, 1)
    expect(_shown_item(page)).to_have_value(re.compile(f"^Item {first} "))  # the new filter's item, drawn
    wait_idle(page)
    page.locator(f".st-key-adj_pick_{first}_1 button").filter(visible=True).wait_for()
    page.keyboard.press("2")
    _chosen(page, "Partially Correct")
    _pick_item(page, it[7])  # (the new filter's first item to settle may be it[7] itself, or another)
    page.keyboard.press("1")
    _chosen(page, "Completely Wrong")
    page.keyboard.press("2")
    _chosen(page, "Partially Correct")
    # A tier button, clicked, after a rerun that redrew no tier button in another style. (Clicked right after the
    # rerun of a key that restyled the buttons, the click was lost in 2 CI runs and 1 local run in 6, never
    # reproduced under instrumentation; the "Chosen:" line shows it, nothing is saved until Save -- see the notes.)
    page.get_by_text("Show annotator names").click()
    expect(page.locator(".st-key-adj_names input")).not_to_be_checked()
    wait_idle(page)
    page.locator(f".st-key-adj_pick_{it[7]}_0 button").filter(visible=True).click()
    _chosen(page, "Completely Wrong")
    page.keyboard.press("3")
    _chosen(page, "Basically Correct")
    # typing in the reason stays there: its digits are text, not tiers
    reason = page.locator(f".st-key-adj_reason_{it[7]} textarea")
    reason.click()
    page.keyboard.type("2 of 3 annotators missed the dose")
    expect(reason).to_have_value("2 of 3 annotators missed the dose")
    _chosen(page, "Basically Correct")
    # a key pressed while a radio still holds the focus (a click's focus is given back a moment later; here the
    # radio has it with no click at all) is sent on to the page: Streamlit's shortcuts ignore keys on an input
    reason.blur()  # its text is kept (a change event: the focus goes back to the page)
    wait_idle(page)
    page.locator(".st-key-adj_distance input").first.focus()
    expect(page.locator(".st-key-adj_distance input").first).to_be_focused()
    page.keyboard.press("1")
    _chosen(page, "Completely Wrong")
    expect(reason).to_have_value("2 of 3 annotators missed the dose")


def test_saving_with_no_tier_chosen_says_so_next_to_the_controls(app, page):
    it = app["items"]
    page.goto(app["url"] + "/adjudicate")
    wait_idle(page)
    _pick_item(page, it[7])
    expect(page.get_by_text("Chosen: none yet")).to_be_visible()
    before = bs.query(app["db"], "SELECT count(*) FROM adjudications")[0][0]
    page.locator(f".st-key-adj_reason_{it[7]} textarea").fill("a reason without a tier")
    page.get_by_role("button", name="Save adjudication").click()
    message = page.locator(".st-key-adj_status").get_by_test_id("stAlertContentError")
    expect(message).to_contain_text("Choose the final tier first")
    box, height = message.bounding_box(), page.viewport_size["height"]
    assert 0 <= box["y"] and box["y"] + box["height"] <= height, box  # in view, by the controls
    expect(page.locator(f".st-key-adj_reason_{it[7]} textarea")).to_have_value("a reason without a tier")
    page.screenshot(path=str(app["shots"] / "adjudicate-no-tier-1366x768.png"))
    assert bs.query(app["db"], "SELECT count(*) FROM adjudications")[0][0] == before


# ---------------------------------------------------------------- where the queue opens, R, replacing (issue 32 §5)

def _first_to_settle(app, distance: int) -> int | None:
    from medeval.annotation import adjudication as adj

    with connect(app["db"], migrate=False) as db:
        senior = auth.get_user(db, "senior")
        cid = adj.campaigns(db, actor=senior)[-1]["id"]
        q = adj.queue(db, cid, min_distance=distance, actor=senior, include_own=True)
    return next((r["item"] for r in q if r["adjudication"] is None and not r["yours"]), None)


def _shown_item(page: Page):
    """The item select box (its value: the option shown, "Item <id> · ...")."""
    return page.locator(".st-key-adj_item").get_by_role("combobox")


def test_a_filter_opens_on_its_first_item_to_settle_r_reaches_the_reason_and_replacing_asks(app, page):
    it = app["items"]
    page.goto(app["url"] + "/adjudicate")
    wait_idle(page)
    bs.open_sidebar(page)  # (folded at first: the item has the page) the queue's settings
    page.get_by_text("1 tier (any)").click()
    wait_idle(page)
    expect(_shown_item(page)).to_have_value(re.compile(f"^Item {_first_to_settle(app, 1)} "))
    page.get_by_text("2 tiers", exact=False).click()
    wait_idle(page)
    expect(_shown_item(page)).to_have_value(re.compile(f"^Item {_first_to_settle(app, 2)} "))

    # an item settled before (the first test): 1, then R puts the cursor in the reason, Ctrl+Enter asks first
    _pick_item(page, it[5])
    page.locator(".st-key-adj_disease").click()
    page.keyboard.press("1")
    _chosen(page, "Completely Wrong")
    page.keyboard.press("r")
    reason = page.locator(f".st-key-adj_reason_{it[5]} textarea")
    expect(reason).to_be_focused()
    page.keyboard.type("on second reading the dose is wrong")
    expect(reason).to_have_value("on second reading the dose is wrong")  # R itself typed nothing
    before = bs.query(app["db"], "SELECT count(*) FROM adjudications WHERE item_id = ?", (it[5],))[0][0]
    reason.press("Control+Enter")
    question = page.locator(f".st-key-adj_replace_{it[5]}_confirm")
    expect(question).to_contain_text(f"Replace the adjudication of item {it[5]}?")
    expect(question).to_contain_text("Yours: Completely Wrong")
    assert bs.query(app["db"], "SELECT count(*) FROM adjudications WHERE item_id = ?", (it[5],))[0][0] == before
    page.locator(f".st-key-adj_replace_{it[5]}_yes button").filter(visible=True).click()
    deadline = time.monotonic() + bs.TIMEOUT_MS / 1000
    while bs.query(app["db"], "SELECT count(*) FROM adjudications WHERE item_id = ?", (it[5],))[0][0] == before:
        assert time.monotonic() < deadline, "the replacement was never saved"
        page.wait_for_timeout(100)
    assert bs.query(app["db"], "SELECT tier, reason FROM adjudications WHERE item_id = ? ORDER BY id DESC LIMIT 1",
                    (it[5],)) == [(0, "on second reading the dose is wrong")]


# ---------------------------------------------------------------- a final tier rests on the whole text (issue 32 §1)

WHOLE_JS = """() => ['adj_reference', 'adj_response'].map(k => {
  const b = document.querySelector('.st-key-' + k); return b.scrollHeight <= b.clientHeight + 1; })"""


@pytest.mark.parametrize("chars, width, height", [(600, 1366, 768), (1500, 1920, 1080)])
def test_texts_of_600_characters_are_whole_at_1366x768_and_1500_at_1920x1080(app, page, chars, width, height):
    from tests.reading_support import text as chinese_text

    with connect(app["db"]) as db:
        db.conn.execute("UPDATE kb_entries SET reference = ?", (chinese_text(chars, seed=1),))
        db.conn.execute("UPDATE responses SET raw = ?", (chinese_text(chars, seed=2),))
        db.conn.commit()
    page.set_viewport_size({"width": width, "height": height})
    try:
        page.goto(app["url"] + "/adjudicate")
        wait_idle(page)
        _pick_item(page, app["items"][7])
        _fold_sidebar(page)
        whole = _settled(page, WHOLE_JS)
        page.screenshot(path=str(app["shots"] / f"adjudicate-{chars}-{width}x{height}.png"))
        assert whole == [True, True]  # no scrolling inside either box
        s = _settled(page, FIT_JS)
        assert s["mainScrolls"] <= 1 and all(b["bottom"] <= s["height"] + 0.5 for b in s["boxes"]), s
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_a_save_before_each_long_text_was_read_to_its_end_is_refused_then_recorded_as_read(app, page):
    longer = (LONG * 8)[:2500]  # longer than either box at 1366x768: each scrolls
    with connect(app["db"]) as db:
        db.conn.execute("UPDATE kb_entries SET reference = ?", (longer,))
        db.conn.execute("UPDATE responses SET raw = ?", (longer.replace("参考", "回答"),))
        db.conn.commit()
    item = _first_to_settle(app, 1)
    page.set_viewport_size({"width": 1366, "height": 768})
    try:
        page.goto(app["url"] + "/adjudicate")
        wait_idle(page)
        _pick_item(page, item)
        expect(page.locator('.st-key-adj_response[data-more="1"]')).to_be_visible()  # "▼ more below"
        page.locator(".st-key-adj_disease").click()
        page.keyboard.press("2")
        _chosen(page, "Partially Correct")
        reason = page.locator(f".st-key-adj_reason_{item} textarea")
        reason.fill("read in part")
        reason.press("Control+Enter")
        message = page.locator(".st-key-adj_status").get_by_test_id("stAlertContentError")
        expect(message).to_contain_text("Scroll each box marked ▼ to its end first")
        expect(reason).to_have_value("read in part")  # the reason is kept
        assert bs.query(app["db"], "SELECT count(*) FROM adjudications WHERE item_id = ?", (item,))[0][0] == 0
        for box in ("adj_reference", "adj_response"):  # read to the end, as a reader scrolls
            page.locator(f".st-key-{box}").evaluate("el => { el.scrollTop = el.scrollHeight; }")
        expect(page.locator('.st-key-adj_response[data-more="1"]')).to_have_count(0)
        reason.press("Control+Enter")
        deadline = time.monotonic() + bs.TIMEOUT_MS / 1000
        while not (rows := bs.query(app["db"], "SELECT tier, fully_shown FROM adjudications WHERE item_id = ?",
                                    (item,))):
            assert time.monotonic() < deadline, "the adjudication was never saved"
            page.wait_for_timeout(100)
        assert rows == [(1, 1)]  # saved, recorded as read in full
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
