"""First start, as a newcomer meets it (issue 14): the demo database that ``scripts/start.sh`` builds, a real
browser, every page.

One demo build (``python -m medeval demo``, a subprocess, as start.sh runs it) and one server (demo mode) for the
module; the researcher signs in once and every test opens tabs in that browser context. Checks:

* the researcher sees results on every work page, never an empty state (the pages' own "nothing to show"
  sentences, listed below from ``app_pages/``), and each page shows what the walkthrough promises;
* at 1366x768 and 1920x1080 every table shows all its columns (no sideways scrolling inside the grid) and no page
  scrolls sideways; long Chinese texts wrap inside the column; a full-page screenshot of every page at each size
  goes to pytest's temporary folder;
* researcher pages are wide, and so is the annotator's Grade screen (the sidebar folded, texts side by side);
* no page of any role asks another host or gets a 4xx;
* the "Start here" panel hides for good for the user who hid it, and only for them.

``MEDEVAL_DOCS_SCREENSHOTS=1`` also writes the README's screenshots to ``docs/`` (JPEG, 1366x768); without it
nothing in the repository is written. Waits are for page states (30 s limits), never fixed sleeps.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests import browser_support as bs  # noqa: E402
from tests.browser_support import browser, playwright  # noqa: E402,F401 (module fixtures)

pytestmark = bs.browser_marks()

TIMEOUT = bs.TIMEOUT_MS
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
SIZES = {"1366x768": {"width": 1366, "height": 768}, "1920x1080": {"width": 1920, "height": 1080}}
LAPTOP = SIZES["1366x768"]
DOCS = bs.ROOT / "docs"
WRITE_DOCS = os.environ.get("MEDEVAL_DOCS_SCREENSHOTS") == "1"

# The sentences the pages show when they have nothing to show (grep st.info / st.caption / st.warning in
# app_pages/*.py), each with the page file that says it; test_the_empty_state_list_is_the_pages_own checks that
# every one is still there, so a reworded page makes this list fail rather than go quietly stale.
EMPTY_STATES = {
    "No campaigns yet": ("campaigns.py", "dashboard.py"),
    "No grades yet": ("dashboard.py",),
    "No item has two different tiers": ("dashboard.py",),
    "No clinicians' grades for this metric and type": ("tuning.py",),
    "Nothing is graded under this version yet": ("leaderboard.py",),
    "for this choice yet": ("leaderboard.py",),
    "No medical model with a backbone": ("leaderboard.py",),
    "Only one threshold-set version exists": ("leaderboard.py",),
    "No rating, preference or fact-check campaign yet": ("task_results.py",),
    "No answers yet": ("task_results.py",),
    "There are no active users to assign work to": ("new_campaign.py", "new_task.py"),
    "No cases or fact-check answers are imported yet": ("new_task.py",),
    "nothing to choose from": ("new_task.py",),
    "No grading work is assigned to you yet": ("grade.py",),
    "No rating, preference or fact-check work is assigned to you yet": ("annotate.py",),
}
# The researcher's own work pages (Grade and Rate & compare are the annotators' screens: the demo assigns the
# researcher no work there, so they rightly say so; Help is the README).
WORK_PAGES = ("campaigns", "agreement", "tuning", "leaderboard", "task-results", "new-campaign", "new-task")
METRIC_TYPES = [(m, t) for m in ("bleu1", "rouge1", "cosine") for t in ("enumerated", "declarative")]

expect.set_options(timeout=TIMEOUT)


# ---------------------------------------------------------------- fixtures

class Demo:
    url: str
    db: Path
    shots: Path
    task_campaigns: list[int]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo database built as start.sh builds it, and the server in demo mode (stopped however tests end)."""
    from medeval.annotation.tasks import REGISTRY

    folder = tmp_path_factory.mktemp("firststart")
    d = Demo()
    d.db = bs.build_demo_db(folder)
    d.shots = folder / "screens"
    d.shots.mkdir()
    d.task_campaigns = [cid for cid, kind in bs.query(d.db, "SELECT id, kind FROM campaigns ORDER BY id")
                        if kind in REGISTRY]
    with bs.serving(d, folder):
        yield d


@pytest.fixture(scope="module")
def researcher(browser, demo):
    """A browser context with the researcher signed in (one sign-in for the module)."""
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    sign_in(page, demo, "researcher")
    page.close()
    yield context
    context.close()


def new_page(context, size=LAPTOP) -> Page:
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.set_default_navigation_timeout(TIMEOUT)
    page.set_viewport_size(size)
    return page


# ---------------------------------------------------------------- helpers



def wait_ready(page: Page) -> None:
    """The script has run to the end (title drawn, idle, nothing stale, no running indicator), every table and
    chart on the page is drawn and nothing has been added for a moment."""
    # a page's title, the compact one-item screens' heading, the grading screen's progress bar or Adjudicate's item
    # choice (those two reading screens have no title: the texts get the height)
    page.locator('[data-testid="stMain"] h1, [data-testid="stMain"] h3, '
                 '[data-testid="stMain"] [data-testid="stProgress"], [data-testid="stMain"] .st-key-adj_item'
                 ).first.wait_for()
    bs.wait_settled(page)


def open_page(page: Page, demo, path: str) -> None:
    page.goto(demo.url + path)
    wait_ready(page)


def sign_in(page: Page, demo, username: str, *, shot: str | None = None) -> None:
    page.goto(demo.url + "/")
    page.wait_for_url(re.compile(r"/signin\?"))
    page.fill("#username", username)
    page.fill("#password", bs.demo_password(username))
    if shot:
        docs_shot(page, shot)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/signin" not in url)
    wait_ready(page)


def docs_shot(page: Page, name: str) -> None:
    """A README screenshot in docs/ (viewport only, JPEG), only with MEDEVAL_DOCS_SCREENSHOTS=1."""
    if WRITE_DOCS:
        DOCS.mkdir(exist_ok=True)
        page.screenshot(path=str(DOCS / f"{name}.jpg"), type="jpeg", quality=70)


def nav_paths(page: Page) -> list[str]:
    """The pages in the sidebar navigation, as URL paths without the slash."""
    hrefs = page.evaluate("() => [...document.querySelectorAll('[data-testid=\"stSidebarNav\"] a')]"
                          ".map(a => new URL(a.href).pathname)")
    return [h.strip("/") for h in hrefs]


def main_text(page: Page) -> str:
    return page.get_by_test_id("stMain").inner_text()


def empty_states(page: Page) -> list[str]:
    text = main_text(page).lower()
    return [p for p in EMPTY_STATES if p.lower() in text]


def errors(page: Page) -> list[str]:
    return [*page.get_by_test_id("stException").all_inner_texts(),
            *page.get_by_test_id("stAlertContentError").all_inner_texts()]


def table_after(page: Page, heading: str):
    """The first st.dataframe after the subheader ``heading`` (on the same level of the page)."""
    return page.locator(f'[data-testid="stElementContainer"]:has(h3:has-text("{heading}")) ~ '
                        '[data-testid="stElementContainer"] [data-testid="stDataFrame"]').first


def metric_value(page: Page, label: str) -> str:
    box = page.get_by_test_id("stMetric").filter(has=page.get_by_test_id("stMetricLabel").filter(has_text=label))
    return box.first.get_by_test_id("stMetricValue").inner_text().strip()


def choose(page: Page, key: str, option: str) -> None:
    """Pick ``option`` in the select box (a combo box in Streamlit 1.67) of widget ``key``."""
    combo = page.locator(f".st-key-{key}").get_by_role("combobox")
    if combo.input_value() == option:
        return
    combo.click()
    page.get_by_role("option", name=option, exact=True).click()
    expect(combo).to_have_value(option)


def open_expanders(page: Page) -> None:
    closed = page.locator('[data-testid="stExpander"] details:not([open]) > summary')
    while closed.count():
        closed.first.click()
    page.wait_for_function(bs.TABLES_DRAWN_JS)


def main_column(page: Page) -> dict:
    """The main block's box and its content box (inside the padding)."""
    return page.evaluate("""() => { const e = document.querySelector('[data-testid="stMainBlockContainer"]');
      const r = e.getBoundingClientRect(), s = getComputedStyle(e);
      return {width: r.width, left: r.left + parseFloat(s.paddingLeft), right: r.right - parseFloat(s.paddingRight)}; }""")


# ---------------------------------------------------------------- what each page must show

def check_campaigns(page: Page, demo, failures: list[str]) -> None:
    if bs.table_rows(page.get_by_test_id("stDataFrame").first) < 3:  # the campaign list (keyed tables get no class)
        failures.append("campaigns: fewer than 3 campaigns listed (the demo round and the clinicians' two)")
    docs_shot(page, "campaigns")


def check_agreement(page: Page, demo, failures: list[str]) -> None:
    text = main_text(page)
    if "95% CI" not in text:
        failures.append("agreement: no 95% CI shown")
    try:
        n = bs.table_rows(table_after(page, "Each annotator"))
        if n < 4:
            failures.append(f"agreement: the 'Each annotator' table has {n} rows, expected >= 4")
    except Exception as e:  # noqa: BLE001 -- reported with the rest
        failures.append(f"agreement: no 'Each annotator' table ({type(e).__name__})")
    if page.get_by_test_id("stMetric").count() < 3:
        failures.append("agreement: the panel shows fewer than 3 statistics")
    if not page.get_by_test_id("stExpander").filter(has_text=re.compile(r"Item \d+ · range")).count():
        failures.append("agreement: no widest disagreements listed")
    if "Clinicians vs the machine" not in text or not table_after(page, "Clinicians vs the machine").count():
        failures.append("agreement: no 'Clinicians vs the machine' table")
    flagged = page.get_by_test_id("stAlertContentWarning").filter(has_text="Gold accuracy below the alert threshold")
    if "Gold items" not in text or not flagged.count() or "sim_clin_d" not in flagged.first.inner_text():
        failures.append("agreement: no gold accuracy section with the drifting clinician flagged")
    docs_shot(page, "agreement")


def check_tuning(page: Page, demo, failures: list[str]) -> None:
    from medeval.engine.registry import label

    docs_shot(page, "tuning")
    for metric, atype in METRIC_TYPES:
        choose(page, "tune_metric", label(metric))  # the select box shows each metric by its label
        choose(page, "tune_type", atype)
        page.locator(f".st-key-cut_{metric}_{atype}").wait_for()  # the slider of this pair: the rerun has drawn it
        wait_ready(page)
        found = empty_states(page)
        points = page.locator('[data-testid="stPlotlyChart"] .scatterlayer path.point').count()
        n = metric_value(page, "Graded examples") if not found else "0"
        if found or not n.isdigit() or int(n) < 1 or points < 1:
            failures.append(f"tuning {metric}/{atype}: graded examples {n!r}, points drawn {points}, says {found}")


def check_leaderboard(page: Page, demo, failures: list[str]) -> None:
    try:
        if bs.table_rows(table_after(page, "Compare with another version")) < 2:
            failures.append("leaderboard: the version comparison has fewer than 2 models")
    except Exception as e:  # noqa: BLE001
        failures.append(f"leaderboard: no version comparison table ({type(e).__name__})")
    docs_shot(page, "leaderboard")


def check_task_results(page: Page, demo, failures: list[str]) -> None:
    if len(demo.task_campaigns) < 3:
        failures.append(f"task results: {len(demo.task_campaigns)} task campaigns in the demo, expected 3")
    for n, cid in enumerate(demo.task_campaigns):
        if n:
            open_page(page, demo, f"/task-results?campaign={cid}")
        found, errs = empty_states(page), errors(page)
        tables = page.get_by_test_id("stDataFrame").count()
        answers = metric_value(page, "Answers recorded")
        if found or errs or tables < 2 or answers in ("", "0"):
            failures.append(f"task results #{cid}: {tables} tables, {answers!r} answers, says {found} {errs}")
        if n == 0:
            docs_shot(page, "task-results")


CHECKS = {"campaigns": check_campaigns, "agreement": check_agreement, "tuning": check_tuning,
          "leaderboard": check_leaderboard, "task-results": check_task_results}


# ---------------------------------------------------------------- tests

def test_the_empty_state_list_is_the_pages_own():
    for phrase, files in EMPTY_STATES.items():
        for name in files:
            assert phrase in (bs.ROOT / "app_pages" / name).read_text(encoding="utf-8"), (phrase, name)


def test_researcher_sees_results_on_every_page(researcher, demo):
    page = new_page(researcher)
    open_page(page, demo, "/campaigns")
    nav = nav_paths(page)
    assert set(WORK_PAGES) <= set(nav), nav
    failures: list[str] = []
    for path in WORK_PAGES:
        if path != "campaigns":
            open_page(page, demo, f"/{path}")
        found, errs = empty_states(page), errors(page)
        if found or errs:
            failures.append(f"{path}: says {found} {errs}")
        if path in CHECKS:
            CHECKS[path](page, demo, failures)
    page.close()
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("size", list(SIZES))
def test_every_table_fits_the_screen(researcher, demo, size):
    page = new_page(researcher, SIZES[size])
    open_page(page, demo, "/campaigns")
    paths = [f"/{p}" for p in nav_paths(page)]
    paths += [f"/task-results?campaign={cid}" for cid in demo.task_campaigns[:-1]]  # the newest is the default
    failures: list[str] = []
    for path in paths:
        open_page(page, demo, path)
        open_expanders(page)
        for t in bs.tables_that_scroll(page):
            failures.append(f"{path}: table {t['table']} scrolls sideways ({t['scrollWidth']} px in "
                            f"{t['clientWidth']} px): {t['columns']}")
        if bs.page_scrolls_sideways(page):
            failures.append(f"{path}: the page scrolls sideways")
        name = re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")
        bs.full_page_screenshot(page, demo.shots / f"{size}-{name}.png")
    page.close()
    assert not failures, f"(screenshots: {demo.shots})\n" + "\n".join(failures)


# For one st.text: whether it scrolls or overflows sideways, its width on one line (a hidden copy that does not
# wrap, same font) and how many lines it takes.
TEXT_FIT_JS = """e => {
  const cs = getComputedStyle(e), r = e.getBoundingClientRect();
  const probe = document.createElement('span');
  probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre;font:' + cs.font;
  probe.textContent = e.textContent;
  document.body.appendChild(probe);
  const oneLine = probe.getBoundingClientRect().width;
  probe.remove();
  const line = parseFloat(cs.lineHeight) || 1.6 * parseFloat(cs.fontSize);
  return {sw: e.scrollWidth, cw: e.clientWidth, right: r.right, oneLine, lines: Math.round(r.height / line),
          text: e.textContent.slice(0, 40)};
}"""


def test_long_chinese_texts_wrap_inside_the_column(researcher, demo):
    """Every graded demo campaign's disagreements: each text stays inside the column; a long one wraps.

    On a 1024-px screen (the smallest laptop the app is for): the demo's texts are short clinical statements
    (up to ~60 characters), which a 1366-px screen may show on one line -- here the longer ones need two."""
    page = new_page(researcher, {"width": 1024, "height": 768})
    campaigns = [c for (c,) in bs.query(demo.db, "SELECT id FROM campaigns WHERE kind IN ('bucket_grading', "
                                                 "'random_validation', 'active_calibration') ORDER BY id")]
    wrapped = seen = 0
    for cid in campaigns:
        open_page(page, demo, f"/agreement?campaign={cid}")
        disagreements = page.get_by_test_id("stExpander").filter(has_text=re.compile(r"Item \d+ · range"))
        if not disagreements.count():
            continue  # e.g. the demo doctors' round, not graded yet
        open_expanders(page)
        col = main_column(page)
        boxes = page.locator('[class*="st-key-dis_"]')
        expect(boxes.first).to_be_visible()
        for i in range(boxes.count()):
            seen += 1
            box = boxes.nth(i).bounding_box()
            assert box["x"] >= col["left"] - 1 and box["x"] + box["width"] <= col["right"] + 1, (cid, box, col)
            fit = boxes.nth(i).get_by_test_id("stText").evaluate(TEXT_FIT_JS)
            assert fit["sw"] <= fit["cw"] + 1 and fit["right"] <= box["x"] + box["width"] + 1, (cid, fit)  # not cut
            if fit["oneLine"] > box["width"]:  # too long for one line: it must take several
                assert fit["lines"] >= 2, (cid, fit)
                wrapped += 1
    assert seen, "no disagreement to open"
    assert wrapped, "no disagreement text is long enough to need wrapping: the check proved nothing"
    page.close()


def pass_qualification(page: Page, demo, username: str) -> None:
    """Start the demo round's qualification and answer its gold items as expected (read from the database)."""
    import json

    page.locator(".st-key-qualification_start button").filter(visible=True).click()
    expect(page.get_by_test_id("stProgress")).to_contain_text("Qualification item 1 of")  # the attempt is stored
    wait_ready(page)
    (ids,) = bs.query(demo.db, "SELECT a.gold_ids FROM gold_attempts a JOIN users u ON u.id = a.user_id WHERE "
                      "u.username = ? ORDER BY a.attempt DESC LIMIT 1", (username,))[0]
    ids = json.loads(ids)
    for n, gold_id in enumerate(ids):
        expect(page.get_by_test_id("stProgress")).to_contain_text(f"Qualification item {n + 1} of {len(ids)}")
        tier = bs.query(demo.db, "SELECT expected_tier FROM gold_items WHERE id = ?", (gold_id,))[0][0]
        bs.wait_grade_keys(page)  # a new item takes keys after webui.grade_screen.SETTLE_MS (issue 22)
        page.keyboard.press(str(tier + 1))  # the grade's key, as an annotator types it
        wait_ready(page)
    page.locator(".st-key-qualification_continue button").filter(visible=True).click()
    wait_ready(page)


def test_grade_screen_takes_the_width_side_by_side(browser, researcher, demo):
    """The reading screen (issue 32 §1): the whole width with the sidebar folded, reference and answer side by side,
    every text of the demo whole on screen at 1366x768."""
    context = browser.new_context(viewport=LAPTOP)
    try:
        page = new_page(context)
        # signed in as sign_in() does, but the first screen is the guidelines' (no title, no progress bar yet)
        page.goto(demo.url + "/")
        page.wait_for_url(re.compile(r"/signin\?"))
        page.fill("#username", "doctor1")
        page.fill("#password", bs.demo_password("doctor1"))
        docs_shot(page, "signin")
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/signin" not in url)
        page.locator(".st-key-guidelines_ack button").filter(visible=True).wait_for()
        page.locator(APP_IDLE).wait_for(state="attached")
        expect(page).to_have_url(re.compile(r"/grade"))
        assert not empty_states(page) and not errors(page), main_text(page)
        page.locator(".st-key-guidelines_ack button").filter(visible=True).click()
        wait_ready(page)
        pass_qualification(page, demo, "doctor1")  # the demo round starts with a qualification (gold items)
        expect(page.get_by_test_id("stProgress")).to_be_visible()
        bs.wait_grade_keys(page)
        docs_shot(page, "grade")
        assert main_column(page)["width"] > 1200  # the sidebar folded, the page wide
        ref, ans = (page.locator(f".st-key-{k}").bounding_box() for k in ("item_reference", "item_response"))
        assert abs(ref["y"] - ans["y"]) < 2 and ans["x"] > ref["x"] + ref["width"]  # side by side
        whole = page.evaluate("() => [...document.querySelectorAll('.st-key-item_reference, .st-key-item_response')]"
                              ".every(b => b.scrollHeight <= b.clientHeight)")
        assert whole and page.locator(".st-key-gradekeys").bounding_box()["y"] < LAPTOP["height"]
    finally:
        context.close()
    page = new_page(researcher)
    open_page(page, demo, "/leaderboard")
    assert main_column(page)["width"] > 1000
    page.close()


# the demo's accounts that can sign in, one per role (doctor2: an annotator with work done)
ROLES = ("admin", "researcher", "doctor2", "senior1")


@pytest.mark.parametrize("username", ROLES)
def test_no_page_asks_another_host_or_gets_a_4xx(browser, demo, username):
    """Nothing leaves the server (issue 32 §7): every page of the role's navigation, opened at its own URL, asks
    only the app's own host, and no request gets a 4xx or 5xx (a hospital network has no internet)."""
    from urllib.parse import urlsplit

    context = browser.new_context(viewport=LAPTOP)
    outside, failed = [], []
    own = urlsplit(demo.url).netloc
    context.on("request", lambda r: urlsplit(r.url).scheme in ("http", "https", "ws", "wss")
               and urlsplit(r.url).netloc != own and outside.append(r.url))
    context.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    try:
        page = new_page(context)
        sign_in(page, demo, username)
        paths = nav_paths(page)
        assert paths, "no navigation"
        for path in paths:
            open_page(page, demo, "/" + path)
            page.wait_for_timeout(300)  # late requests of the page (icons, fonts) are counted too
        assert not outside, outside
        assert not failed, failed
    finally:
        context.close()


def test_start_here_panel_hides_for_good_for_that_user_only(browser, researcher, demo):
    page = new_page(researcher)
    open_page(page, demo, "/campaigns")
    panel = page.locator(".st-key-start_here_campaigns")
    expect(panel).to_contain_text("Start here")
    panel.get_by_role("button", name="Got it, hide this").click()
    expect(panel).to_have_count(0)
    wait_ready(page)
    page.reload()
    wait_ready(page)
    expect(page.get_by_role("heading", name="Campaigns")).to_be_visible()
    expect(page.locator(".st-key-start_here_campaigns")).to_have_count(0)
    page.close()

    context = browser.new_context(viewport=LAPTOP)  # another user still gets it
    try:
        page = new_page(context)
        sign_in(page, demo, "admin")
        open_page(page, demo, "/campaigns")
        expect(page.locator(".st-key-start_here_campaigns")).to_contain_text("Start here")
    finally:
        context.close()


def test_active_rounds_on_first_start_narrow_and_draw_the_next_round(researcher, demo):
    """The demo's active campaign: the intervals shaded on the chart, their widths round by round, and the next
    round drawn with the button (last in this module: it adds items to the demo's active campaign)."""
    from medeval.demo.active_demo import ACTIVE_CAMPAIGN

    (cid, items_before), = bs.query(demo.db, "SELECT c.id, count(ci.id) FROM campaigns c JOIN campaign_items ci "
                                             "ON ci.campaign_id = c.id WHERE c.name = ?", (ACTIVE_CAMPAIGN,))
    (rounds_before,) = bs.query(demo.db, "SELECT count(DISTINCT round) FROM calibration_rounds WHERE campaign_id = ?",
                                (cid,))[0]
    page = new_page(researcher)
    open_page(page, demo, "/tuning")
    choose(page, "tune_campaign", f"#{cid} {ACTIVE_CAMPAIGN}")
    choose(page, "tune_metric", "ROUGE-1")  # by its label
    choose(page, "tune_type", "enumerated")
    wait_ready(page)
    expect(page.get_by_text("Active rounds", exact=True)).to_be_visible()
    expect(page.get_by_text(re.compile(r"Shaded: each cut-off's 95% interval"))).to_be_visible()
    # the widths chart has one point per round drawn so far, for each cut-off
    widths = page.locator(".st-key-tune_widths .scatterlayer path.point")
    assert widths.count() >= 2 * (rounds_before + 1) - 2, widths.count()
    assert not empty_states(page) and not errors(page), main_text(page)
    page.locator(".st-key-next_round button").click()
    wait_ready(page)
    expect(page.get_by_text(re.compile(r"Round \d+ drawn: \d+ items added"))).to_be_visible()
    (items_after,) = bs.query(demo.db, "SELECT count(*) FROM campaign_items WHERE campaign_id = ?", (cid,))[0]
    assert items_after > items_before
    # drawn again at once: the new round is not answered yet, which the page says plainly
    page.locator(".st-key-next_round button").click()
    wait_ready(page)
    expect(page.get_by_test_id("stAlertContentError")).to_contain_text("not fully answered")
    page.close()
