"""Issue 23 §5 in a real browser: no dataframe offers Streamlit's own "Download as CSV" (it writes formula cells raw),
and the Leaderboard's exports -- the project's CSV writer -- neutralise a model named ``=HYPERLINK(...)``.

One server for the module on a small database of its own: the test data set with the good model renamed to a
formula (and the medical model's backbone with it, so the t-test table names it too), scored and graded, and a
researcher. Waits are for page states, never fixed sleeps.
"""

from __future__ import annotations

import csv
import io
import re
import tomllib

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

from medeval.accounts import auth  # noqa: E402
from medeval.engine import thresholds as th  # noqa: E402
from medeval.engine.importer import import_files  # noqa: E402
from medeval.engine.scoring import score_db  # noqa: E402
from medeval.store.db import connect  # noqa: E402
from tests import browser_support as bs  # noqa: E402
from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, ROOT  # noqa: E402

pytestmark = bs.browser_marks()

APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
EVIL = '=HYPERLINK("http://evil.example/x","醫師請點此")'
QUOTED = '"' + EVIL.replace('"', '""') + '"'  # as a CSV field


def test_the_app_config_turns_the_built_in_data_export_off():
    """The one switch for every dataframe of every page (Grade, Annotate and Tune cut-offs included)."""
    conf = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert conf["client"]["disableDataExport"] is True


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser-safe-export")
    texts = {"kb": KB_CSV, "responses": RESP_CSV.replace("ModelA", QUOTED),
             "models": MODELS_CSV.replace("ModelA", QUOTED)}
    files = {}
    for name, text in texts.items():
        files[name] = folder / f"{name}.csv"
        files[name].write_text(text, encoding="utf-8")
    db_path = folder / "export.db"
    with connect(db_path) as db:
        import_files(db, **files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        th.grade_db(db)
        auth.add_user(db, "res", bs.PASSWORD, "researcher")
        assert db.conn.execute("SELECT count(*) FROM models WHERE name = ?", (EVIL,)).fetchone()[0] == 1
    with bs.serving(None, folder, db=db_path) as server:
        yield {"url": server.url, "db": db_path}


@pytest.fixture(scope="module")
def page(app):
    pw = sync_playwright().start()
    browser = pw.chromium.launch(executable_path=bs.CHROMIUM, headless=True,
                                 args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
    context = browser.new_context(viewport={"width": 1366, "height": 900}, accept_downloads=True)
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


def download(page: Page, label: str) -> list[list[str]]:
    with page.expect_download() as info:
        page.get_by_role("button", name=label).click()
    return list(csv.reader(io.StringIO(open(info.value.path(), encoding="utf-8").read())))


def test_leaderboard_has_no_toolbar_download_and_its_exports_neutralise_formulas(app, page):
    page.goto(app["url"] + "/leaderboard")
    page.wait_for_url(re.compile(r"/signin\?"))
    page.fill("#username", "res")
    page.fill("#password", bs.PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/leaderboard"))
    wait_idle(page)
    tables = page.locator('[data-testid="stDataFrame"]')
    expect(tables.first).to_be_visible()
    for i in range(tables.count()):  # the ranking and the t-tests: the toolbar shows, without the download
        tables.nth(i).hover()
        toolbar = page.locator('[data-testid="stElementToolbar"]').filter(visible=True)
        expect(toolbar.get_by_role("button", name="Search")).not_to_have_count(0)
        expect(page.get_by_role("button", name="Download as CSV")).to_have_count(0)
    # the project's exports: the formula is text with a quote in front, never a cell a spreadsheet runs
    for label, column in (("Leaderboard (CSV)", "model"), ("t-tests (CSV)", "backbone")):
        rows = download(page, label)
        header, body = rows[0], rows[1:]
        cells = [r[header.index(column)] for r in body]
        assert "'" + EVIL in cells, (label, cells)
        assert not any(c.startswith(("=", "+", "@")) for r in body for c in r), (label, body)
