"""Every download of every page goes through the session (``webui/media.py``), in a real browser on the demo data.

One demo build (``python -m medeval demo``, as start.sh builds it) and one server for the module. For the admin
and the researcher, page by page through the role's navigation: sign in (without "keep me signed in": a
browser-session cookie), open the page, every tab and expander, click every download button and read the file's
``/media/...`` URL from the download (Playwright's ``download.url``), and every picture's (``img[src*="/media/"]``,
the Help page's screenshots, which the browser itself must have been served). Each URL is fetched outside the
browser as soon as it is offered (a file made on click lives only until the second rerun after it, and every click
reruns the page):

* with no cookie, with a doctor's cookie, with the other role's cookie, with a second session of the same user:
  403 each time;
* with the owner's live cookie: 200, the very bytes the browser saved, ``Cache-Control: no-store`` and
  ``Referrer-Policy: no-referrer``;

and, once the page is done, for the files Streamlit still keeps:

* (the researcher) after the role was changed to annotator, with the session still live: 403; back to
  researcher: 200;
* after the owner signed out (the app's own "Sign out"; the next page signs in again): 403.

Waits are for page states (``tests/browser_support.wait_settled``) and downloads, never fixed sleeps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path

import pytest

pytest.importorskip("playwright")
requests = pytest.importorskip("requests")
from playwright.sync_api import Page, expect  # noqa: E402
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError  # noqa: E402

from medeval.accounts import auth  # noqa: E402
from medeval.store.db import connect  # noqa: E402
from tests import browser_support as bs  # noqa: E402
from tests.browser_support import browser, playwright  # noqa: E402,F401 (module fixtures)
from webui import COOKIE_NAME  # noqa: E402
from webui import pages as site  # noqa: E402

pytestmark = bs.browser_marks()

DOWNLOAD_TIMEOUT_MS = 180_000  # a report's zip renders its PDF with Chromium on the server: slow on 2 shared cores
ACCOUNTS = {"admin": "admin", "researcher": "researcher", "doctor1": "annotator"}  # demo username -> role
expect.set_options(timeout=bs.TIMEOUT_MS)


@dataclass
class Demo:
    url: str
    db: Path


@dataclass
class Offered:
    page: str
    label: str  # the download button's label, or "image"
    url: str  # the /media/... URL, absolute
    body: bytes | None  # what the browser saved (None for a picture)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("downloads")
    db = bs.build_demo_db(folder)
    with bs.serving(None, folder, db=db) as server:
        yield Demo(server.url, db)


def sign_in_http(demo: Demo, username: str) -> str:
    """A new session's cookie value, from the real ``POST /signin``."""
    r = requests.post(demo.url + "/signin", data={"username": username, "password": bs.demo_password(username),
                                                  "next": "/"}, allow_redirects=False, timeout=60)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    jar = SimpleCookie()
    jar.load(r.headers["set-cookie"])
    return jar[COOKIE_NAME].value


def fetch(url: str, cookie: str | None):
    return requests.get(url, cookies={COOKIE_NAME: cookie} if cookie else None, allow_redirects=False, timeout=60)


def _sign_in_browser(page: Page, demo: Demo, username: str) -> str:
    page.goto(demo.url + "/")
    page.wait_for_url(re.compile(r"/signin\?"))
    expect(page.locator("#remember")).not_to_be_checked()  # unticked by default
    page.fill("#username", username)
    page.fill("#password", bs.demo_password(username))
    page.click("button[type=submit]")
    page.wait_for_url(lambda u: "/signin" not in u)
    bs.wait_settled(page)
    (cookie,) = [c for c in page.context.cookies() if c["name"] == COOKIE_NAME]
    assert cookie["expires"] == -1, cookie  # a browser-session cookie: closing the browser forgets it
    return cookie["value"]


def _open_expanders(page: Page) -> None:
    closed = page.locator('[data-testid="stExpander"] details:not([open]) > summary').filter(visible=True)
    while closed.count():
        closed.first.click()
    bs.wait_settled(page)


def _download(page: Page, button, reopen):
    """The file a download button gives. A click that lands while the page is still rerunning from the previous one
    can be lost with the button it hit (nothing is downloaded): then the page is let settle and the button clicked
    again, within DOWNLOAD_TIMEOUT_MS in all."""
    tries = 4
    for attempt in range(tries):
        try:
            if not _enabled_soon(button):
                # every widget greyed out for seconds: the page lost its connection (the fresh-clone CI saw it
                # once, under load); open the page again, as a user would, and click the button anew
                page.reload()
                bs.wait_settled(page)
                reopen()  # the tab and the expanders the button was in
            with page.expect_download(timeout=DOWNLOAD_TIMEOUT_MS // tries) as info:
                button.click(timeout=DOWNLOAD_TIMEOUT_MS // tries)
            return info.value
        except PlaywrightTimeoutError:
            if attempt == tries - 1:
                raise
            bs.wait_settled(page)


def _enabled_soon(button, seconds: float = 10) -> bool:
    """Whether ``button`` is (or within ``seconds`` becomes) enabled."""
    try:
        expect(button).to_be_enabled(timeout=seconds * 1000)
        return True
    except AssertionError:
        return False


def _downloads_here(page: Page, path: str, check, reopen=lambda: None) -> list[Offered]:
    """Click every download button on screen; each file is checked (``check``) as soon as it is saved: a file made
    on click lives until the second rerun after it (Streamlit's clean-up), and each click reruns the page."""
    found = []
    buttons = page.locator('[data-testid="stDownloadButton"] button').filter(visible=True)
    # by label, not by place: a rerun can redraw the buttons in another order (an empty table's disabled one)
    labels = [b.inner_text().strip() for b in buttons.all() if not b.is_disabled()]  # (an empty table: no CSV)
    for label in labels:
        button = buttons.filter(has_text=label).first
        download = _download(page, button, reopen)
        assert download.failure() is None, (path, label, download.failure())
        found.append(Offered(path, label, download.url, Path(download.path()).read_bytes()))
        check(found[-1:])
        bs.wait_settled(page)  # the click reruns the page
    return found


def _offered_on(page: Page, demo: Demo, path: str, check) -> list[Offered]:
    """Every download and picture of one page (every tab, every expander opened), each checked when it comes."""
    offered: list[Offered] = []
    page.goto(f"{demo.url}/{path}")
    # the page's run has begun (before it, a loaded machine shows an empty page that looks settled), then ended
    page.locator('[data-testid="stMain"] [data-testid="stElementContainer"]').first.wait_for()
    bs.wait_settled(page)
    tabs = page.get_by_role("tab").filter(visible=True)
    for t in range(max(tabs.count(), 1)):
        def reopen(t=t) -> None:
            if tabs.count():
                tabs.nth(t).click()
                bs.wait_settled(page)
            _open_expanders(page)

        reopen()
        offered += _downloads_here(page, path, check, reopen)
    images = page.locator('img[src*="/media/"]')
    for i in range(images.count()):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        # the browser itself was served the picture (with the session's cookie)
        page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=img.element_handle())
        offered.append(Offered(path, "image", img.evaluate("(img) => img.src"), None))
        check(offered[-1:])
    return offered


def _refused(offered: list[Offered], cookies: dict[str, str | None]) -> None:
    for o in offered:
        for who, cookie in cookies.items():
            r = fetch(o.url, cookie)
            assert r.status_code == 403, (o.page, o.label, who, r.status_code)
            assert r.headers["cache-control"] == "no-store"
            assert o.body is None or len(o.body) < 8 or o.body not in r.content


def _served_to_the_owner(offered: list[Offered], cookie: str) -> None:
    for o in offered:
        r = fetch(o.url, cookie)
        assert r.status_code == 200, (o.page, o.label, r.status_code, r.text[:200])
        if o.body is not None:
            assert r.content == o.body, (o.page, o.label)
            assert r.headers["content-disposition"].startswith("attachment")
        assert r.headers["cache-control"] == "no-store" and r.headers["referrer-policy"] == "no-referrer"


def _still_kept(offered: list[Offered], cookie: str) -> list[Offered]:
    """The files Streamlit still keeps (a file made on click is gone two reruns later: its URL answers nothing)."""
    return [o for o in offered if fetch(o.url, cookie).status_code == 200]


def _sign_out_browser(page: Page) -> None:
    bs.open_sidebar(page)
    page.get_by_test_id("medeval-signout").click()
    page.wait_for_url(re.compile(r"/signin\?signed_out=1"))


@pytest.mark.parametrize("username", ["admin", "researcher"])
def test_every_download_is_served_only_to_the_session_that_opened_it(demo, browser, username):
    role = ACCOUNTS[username]
    other = "researcher" if username == "admin" else "admin"
    strangers = {"no cookie": None, "doctor1": sign_in_http(demo, "doctor1"), other: sign_in_http(demo, other),
                 f"{username}, another session": sign_in_http(demo, username)}
    context = browser.new_context(viewport={"width": 1366, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(bs.TIMEOUT_MS)
    offered: list[Offered] = []
    cookie = None
    try:
        for p in site.for_role(role):
            if cookie is None:
                cookie = _sign_in_browser(page, demo, username)

            def check(files, owner=cookie):  # as soon as a file is offered: others refused, its owner served
                _refused(files, strangers)
                _served_to_the_owner(files, owner)

            here = _offered_on(page, demo, p.url_path, check)
            if not here:
                continue
            offered += here
            kept = _still_kept(here, cookie)
            assert kept, p.url_path
            if username == "researcher" and p.roles and "annotator" not in p.roles:
                # a role changed while the session stays live counts at once
                with connect(demo.db, migrate=False) as db:
                    auth.set_role(db, username, "annotator")
                try:
                    _refused(kept, {"the owner, now an annotator": cookie})
                finally:
                    with connect(demo.db, migrate=False) as db:
                        auth.set_role(db, username, "researcher")
                _served_to_the_owner(kept, cookie)
            _sign_out_browser(page)  # the app's own "Sign out": the session ends, its files are no longer served
            _refused(kept, {"the owner, signed out": cookie})
            cookie = None
        print(f"{username}: {len(offered)} files:", sorted({(o.page, o.label) for o in offered}))
        labels = {o.label for o in offered}
        expected = {"admin": {"Download the whole audit log (CSV)", "Download current grades (CSV)",
                              "Leaderboard (CSV)", "Report (zip: HTML, PDF, …)", "image"},
                    "researcher": {"Download current grades (CSV)", "Leaderboard (CSV)", "Answers (CSV)",
                                   "Everything (zip: HTML, PDF, JSON, CSV)", "image"}}[username]
        assert expected <= labels, expected - labels
        with_files = {"campaigns", "agreement", "leaderboard", "task-results", "exam", "help"} | (
            {"users"} if username == "admin" else set())
        assert {o.page for o in offered} == with_files, {o.page for o in offered} ^ with_files
        assert all("/media/" in o.url for o in offered), [o.url for o in offered if "/media/" not in o.url]
    finally:
        context.close()
