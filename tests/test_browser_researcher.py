"""The researcher's screens in a real browser (issue 22 §3): Tune cut-offs' two-handled slider and Publish section,
the Leaderboard's comparison with Table 12 (v1), and each page keeping its own width.

One demo build (``python -m medeval demo``, as start.sh builds it: v1 Table 12 never made active, the active set
calibrated on the simulated clinicians, cosine scores from another model than Table 12's) and one server for the
module; the researcher signs in once. Waits are for page or database states (30 s limits), never fixed sleeps or
durations. Screenshots at 1366x768 go to pytest's temporary folder.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests import browser_support as bs  # noqa: E402
from tests.browser_support import browser, playwright  # noqa: E402,F401 (module fixtures)

pytestmark = bs.browser_marks()

TIMEOUT = bs.TIMEOUT_MS
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
LAPTOP = {"width": 1366, "height": 768}
FULL_HD = {"width": 1920, "height": 1080}
WIDE_MIN, NARROW_MAX = 1000, 800  # the main column at 1920 px: wide ~1620, centered ~736

expect.set_options(timeout=TIMEOUT)


class Demo:
    url: str
    db: Path
    shots: Path
    server: object


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("researcher")
    d = Demo()
    d.db = bs.build_demo_db(folder)
    d.shots = folder / "screens"
    d.shots.mkdir()
    with bs.serving(d, folder):
        yield d


@pytest.fixture(scope="module")
def researcher(browser, demo):
    """A browser context with the researcher signed in (its cookie serves every test's new tab)."""
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.goto(demo.url + "/")
    page.wait_for_url(re.compile(r"/signin\?"))
    page.fill("#username", "researcher")
    page.fill("#password", bs.demo_password("researcher"))
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/signin" not in url)
    page.close()
    yield context
    context.close()


def new_page(context, size=LAPTOP) -> Page:
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.set_default_navigation_timeout(TIMEOUT)
    page.set_viewport_size(size)
    return page


def wait_idle(page: Page) -> None:
    page.locator('[data-testid="stMain"] h1').first.wait_for()
    page.locator(APP_IDLE).wait_for(state="attached")
    expect(page.locator('[data-stale="true"]')).to_have_count(0)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def open_page(page: Page, demo, path: str) -> None:
    page.goto(demo.url + path)
    wait_idle(page)


def main_width(page: Page) -> float:
    return page.evaluate("() => document.querySelector('[data-testid=\"stMainBlockContainer\"]')"
                         ".getBoundingClientRect().width")


def draft(demo, username: str = "researcher") -> dict:
    return {(m, t): (lo, hi) for m, t, lo, hi in bs.query(
        demo.db, "SELECT d.metric, d.aspect_type, d.low, d.high FROM threshold_drafts d JOIN users u ON u.id = "
                 "d.user_id WHERE u.username = ?", (username,))}


def active_cutoffs(demo) -> dict:
    return {(m, t): (lo, hi) for m, t, lo, hi in bs.query(
        demo.db, "SELECT t.metric, t.aspect_type, t.low, t.high FROM thresholds t JOIN threshold_sets s "
                 "ON s.version = t.version WHERE s.active = 1")}


def wait_draft(demo, key, predicate) -> tuple[float, float]:
    """The researcher's stored draft of ``key`` once ``predicate`` holds for it (the slider's callback wrote it)."""
    deadline = time.monotonic() + TIMEOUT / 1000
    while True:
        got = draft(demo).get(key)
        if got is not None and predicate(got):
            return got
        assert time.monotonic() < deadline, f"draft of {key}: {got}"
        time.sleep(0.1)


def cut(x: float) -> str:
    """A cut-off as the Publish section writes it (up to 4 decimals)."""
    return f"{x:.4f}".rstrip("0").rstrip(".") if x else "0"


def thumbs(page: Page, key: str) -> list[str]:
    return [t.strip() for t in page.locator(f".st-key-{key}").get_by_test_id("stSliderThumbValue").all_inner_texts()]


# ---------------------------------------------------------------- Tune cut-offs

def test_moving_the_upper_handle_keeps_the_lower_and_publish_shows_the_new_values(researcher, demo):
    key, slider = ("bleu1", "enumerated"), "cut_bleu1_enumerated"
    low0, high0 = active_cutoffs(demo)[key]
    assert round(low0, 3) != low0, "the demo's calibrated cut-off should lie off the slider's 0.005 grid"
    page = new_page(researcher)
    open_page(page, demo, "/tuning")
    page.locator(f".st-key-{slider}").wait_for()
    # the thumbs' values are drawn a moment after the slider itself: wait for them
    expect(page.locator(f".st-key-{slider}").get_by_test_id("stSliderThumbValue")).to_have_text(
        [f"{low0:.3f}", f"{high0:.3f}"])
    assert thumbs(page, slider) == [f"{low0:.3f}", f"{high0:.3f}"]

    # keyboard: the upper handle two steps right
    upper = page.locator(f".st-key-{slider} input[type=range]").nth(1)
    upper.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    lo, hi = wait_draft(demo, key, lambda d: d[1] > high0 + 0.006)
    assert lo == low0  # exactly: not snapped to 0.065
    expect(page.locator(f".st-key-{slider}").get_by_test_id("stSliderThumbValue")).to_have_text(
        [f"{low0:.3f}", f"{hi:.3f}"])  # the lower handle where it was (both drawn by the same rerun)
    changes = page.locator(".st-key-tune_changes")
    expect(changes).to_contain_text(f"your draft {cut(low0)} – {cut(hi)}")
    page.screenshot(path=str(demo.shots / "tuning-keyboard.png"))

    # mouse: drag the upper handle to the right
    box = page.locator(f".st-key-{slider}").get_by_test_id("stSliderThumbValue").last.locator("xpath=..").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 80, y, steps=8)
    page.mouse.up()
    lo2, hi2 = wait_draft(demo, key, lambda d: d[1] > hi + 0.02)
    assert lo2 == low0
    expect(changes).to_contain_text(f"your draft {cut(low0)} – {cut(hi2)}")
    expect(page.locator(f".st-key-{slider}").get_by_test_id("stSliderThumbValue").first).to_have_text(f"{low0:.3f}")
    page.locator(APP_IDLE).wait_for(state="attached")
    bs.full_page_screenshot(page, demo.shots / "tuning-after-drag.png")

    # the lower handle moved with the keyboard: the upper keeps its (now on-grid) value, Publish follows
    lower = page.locator(f".st-key-{slider} input[type=range]").first
    lower.focus()
    page.keyboard.press("ArrowRight")
    lo3, hi3 = wait_draft(demo, key, lambda d: d[0] != low0)
    assert hi3 == hi2 and lo3 > low0
    expect(changes).to_contain_text(f"your draft {cut(lo3)} – {cut(hi2)}")

    page.locator(".st-key-discard_draft button").filter(visible=True).click()
    page.locator(".st-key-discard_ask_yes button").filter(visible=True).click()  # asked once
    deadline = time.monotonic() + TIMEOUT / 1000
    while draft(demo):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    expect(page.locator(f".st-key-{slider}").get_by_test_id("stSliderThumbValue").last).to_have_text(f"{high0:.3f}")
    expect(page.get_by_text("Your draft equals the active set")).to_be_visible()
    page.close()


def test_the_fitted_curves_of_both_designs_side_by_side_round_by_round(researcher, demo):
    """Calibration v2 on first start: the demo's adaptive + smooth campaign and, beside it, the paper's design at the
    same budget, each with its graded items, two fitted curves and the cut-offs' intervals; the round selector
    goes back to the seed round."""
    from medeval.demo.active_demo import ACTIVE_CAMPAIGN, PAPER_CAMPAIGN

    (cid,), (pid,) = (bs.query(demo.db, "SELECT id FROM campaigns WHERE name = ?", (n,))[0]
                      for n in (ACTIVE_CAMPAIGN, PAPER_CAMPAIGN))
    page = new_page(researcher)
    open_page(page, demo, "/tuning")
    choose(page, "tune_campaign", f"#{cid} {ACTIVE_CAMPAIGN}")
    choose(page, "tune_metric", "ROUGE-1")  # by its label
    choose(page, "tune_type", "enumerated")
    ours, paper = (page.locator(f".st-key-tune_curves_2_{c}") for c in (cid, pid))
    ours.scroll_into_view_if_needed()
    for chart, c, how in ((ours, cid, "smooth estimator, adaptive design"),
                          (paper, pid, "accuracy estimator, interval design")):
        expect(chart.locator(".gtitle")).to_have_text(f"#{c}: {how}, round 4")
        expect(chart.locator(".scatterlayer .trace")).to_have_count(5)  # graded CW, PC, BC; two curves
        assert chart.locator(".scatterlayer .trace path.js-line").count() >= 2  # the curves are drawn
        assert chart.locator(".scatterlayer path.point").count() == 75  # 30 in the seed round, 3 rounds of 15
        assert chart.locator(".shapelayer path").count() >= 2  # the cut-offs (and their shaded intervals)
    a, b = ours.bounding_box(), paper.bounding_box()
    assert abs(a["y"] - b["y"]) < 2 and a["x"] + a["width"] <= b["x"] + 1 and b["x"] + b["width"] <= LAPTOP["width"]
    assert min(a["height"], b["height"]) > 200 and a["width"] > 400
    page.screenshot(path=str(demo.shots / "tuning-curves.png"))
    rnd = page.locator(".st-key-curves_round input[type=range]")
    rnd.focus()
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    wait_idle(page)
    expect(ours.locator(".gtitle", has_text="round 1")).to_have_text(f"#{cid}: smooth estimator, adaptive design, "
                                                                     "round 1")
    expect(ours.locator(".gtitle")).to_have_count(1)  # the chart redrawn, not a second title over the first
    assert ours.locator(".scatterlayer path.point").count() == 30  # the seed round: 3 per interval
    assert not page.get_by_test_id("stException").count()
    page.screenshot(path=str(demo.shots / "tuning-curves-round1.png"))
    page.close()


# ---------------------------------------------------------------- Leaderboard: compare with v1 (Table 12)

def choose(page: Page, key: str, option: str) -> None:
    """Pick ``option`` (its whole text) in the select box of widget ``key`` and wait for the rerun."""
    combo = page.locator(f".st-key-{key}").get_by_role("combobox")
    if combo.input_value() == option:
        return
    combo.scroll_into_view_if_needed()
    combo.click()
    page.get_by_role("option", name=option, exact=True).click()
    expect(combo).to_have_value(option)
    wait_idle(page)


def compare_table(page: Page):
    """The dataframe after the "Compare with another version" subheader (a keyed dataframe gets no class)."""
    return page.locator('[data-testid="stElementContainer"]:has(h3:has-text("Compare with another version")) ~ '
                        '[data-testid="stElementContainer"] [data-testid="stDataFrame"]')


def test_leaderboard_compares_with_table12_and_says_why_cosine_cannot(researcher, demo):
    page = new_page(researcher)
    open_page(page, demo, "/leaderboard")
    choose(page, "lb_other", "v1 MedDisKEval Table 12")
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("Not compared on cosine: v1's cosine cut-offs are for moka-ai/m3e-base; "
                                 "these cosine scores come from use-multilingual")
    expect(main).to_contain_text("averaged over BLEU-1 and ROUGE-1 on both sides")
    table = compare_table(page)
    n_models = bs.query(demo.db, "SELECT count(*) FROM models")[0][0]
    assert bs.table_rows(table) == n_models
    cells = table.evaluate("t => [...t.querySelectorAll('td')].map(c => c.textContent.trim())")
    assert cells and not [c for c in cells if c in ("None", "")], cells
    headers = table.evaluate("t => [...t.querySelectorAll('th')].map(c => c.textContent.trim())")
    assert "total v1" in headers and "rank v1" in headers, headers
    page.get_by_text("Compare with another version").scroll_into_view_if_needed()
    page.screenshot(path=str(demo.shots / "leaderboard-compare-v1.png"))
    # cosine alone cannot be compared with v1: said, no table
    choose(page, "lb_metric", "cosine")
    expect(main).to_contain_text("v1 cannot be compared with v3 on cosine")
    expect(compare_table(page)).to_have_count(0)
    page.close()


# ---------------------------------------------------------------- each page keeps its own width

WIDTHS_JS = """() => { window.__widths = []; const e = document.querySelector('[data-testid="stMainBlockContainer"]');
  new ResizeObserver(es => es.forEach(x => window.__widths.push(Math.round(x.target.getBoundingClientRect().width))))
    .observe(e); }"""


def go(page: Page, link: str, heading: str | None = None) -> None:
    """Open a page through the sidebar navigation (the same session: what came before stays in the browser) and wait
    until its own heading is drawn and the run is over."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=link, exact=True).click()
    page.wait_for_function("t => [...document.querySelectorAll('[data-testid=\"stMain\"] h1')]"
                           ".some(h => h.textContent.trim().startsWith(t))", arg=heading or link)
    wait_idle(page)


def test_each_page_keeps_its_own_width_whatever_came_before(researcher, demo):
    page = new_page(researcher, FULL_HD)
    open_page(page, demo, "/help")
    assert main_width(page) <= NARROW_MAX
    go(page, "Leaderboard")  # narrow page, then the leaderboard through the navigation
    assert main_width(page) > WIDE_MIN
    assert not bs.tables_that_scroll(page) and not bs.page_scrolls_sideways(page)
    # a rerun of the wide page (another metric) never draws it narrow, not even for a moment
    page.evaluate(WIDTHS_JS)
    choose(page, "lb_metric", "BLEU-1")  # by its label
    assert main_width(page) > WIDE_MIN
    widths = page.evaluate("() => window.__widths")
    assert all(w > WIDE_MIN for w in widths), widths
    go(page, "Help")  # and the reverse: wide, then a narrow page
    assert main_width(page) <= NARROW_MAX
    go(page, "Tune cut-offs")
    assert main_width(page) > WIDE_MIN
    go(page, "Help")
    assert main_width(page) <= NARROW_MAX
    go(page, "Rate & compare", "Rate and compare")  # a reading screen (issue 32): the whole width
    assert main_width(page) > WIDE_MIN
    page.close()


# ---------------------------------------------------------------- New campaign: an active campaign's settings

def test_every_setting_typed_for_an_active_campaign_reaches_it(researcher, demo):
    """Issue 23 §7: settings of a web-started active campaign were silently replaced by defaults. Typed as a user
    types them -- the last one not even confirmed with Enter before the click on Create -- every one is stored.
    (Last in this module: it adds a campaign to the demo.)"""
    import json

    page = new_page(researcher)
    open_page(page, demo, "/new-campaign")
    name = page.locator(".st-key-new_name input")
    name.fill("主動校準 from the browser")
    name.press("Enter")
    wait_idle(page)
    page.get_by_role("radio", name="active rounds (narrow the cut-offs)").check(force=True)
    wait_idle(page)
    choose(page, "new_estimator", "accuracy search (the paper)")
    choose(page, "new_design", "every score interval alike (the paper)")
    typed = {"new_per_active": "3", "new_round_size": "35", "new_target": "0.08", "new_budget": "150",
             "new_explore": "0.35"}
    for key, value in typed.items():
        box = page.locator(f".st-key-{key} input")
        box.click()
        box.fill(value)  # no Enter: the click on the next field (or on Create) is what a user does next
    page.locator(".st-key-create_campaign button").click()
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text("“主動校準 from the browser” created")
    (config,) = bs.query(demo.db, "SELECT config FROM campaigns WHERE name = ?", ("主動校準 from the browser",))[0]
    cfg = json.loads(config)
    assert {k: cfg[k] for k in ("per_interval", "round_size", "target_width", "budget", "explore", "estimator",
                                "design")} == {"per_interval": 3, "round_size": 35, "target_width": 0.08,
                                               "budget": 150, "explore": 0.35, "estimator": "accuracy",
                                               "design": "interval"}
    page.close()
