"""Helpers for the real-browser tests (``tests/test_browser.py``): a small database, the server, sign-in.

The database is built in a second or two (lexical scores only, no embedding model); every
annotator gets a campaign of their own, so the tests do not depend on each other's grades.
The server is ``streamlit run server.py`` on a free port, exactly as ``scripts/start.sh`` runs it.
"""

from __future__ import annotations

import contextlib

import csv
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"

# every browser test module: ``pytestmark = bs.browser_marks()``
def browser_marks() -> list:
    """The marks of a browser test module: browser, slow, and skipped with the fix when Chromium is missing."""
    import pytest

    return [pytest.mark.browser, pytest.mark.slow,
            pytest.mark.skipif(not Path(CHROMIUM).exists(),
                               reason=f"{CHROMIUM} is missing: run scripts/install-browser.sh")]


PASSWORD = "browser-test-pass"  # >= 10 characters, shared by every test account
XSS_TEXT = '<img src=x onerror="window.__xss=1"><b>bold</b> **md**'
TIMEOUT_MS = 30_000  # generous: CI machines have 2 cores

# one annotator per test that changes grading state, so the tests are independent of their order
ANNOTATORS = ("doc_login", "doc_keys", "doc_resume", "doc_double", "doc_change", "doc_flag", "doc_logout",
              "doc_access", "doc_burst", "doc_xss")  # doc_xss last: its campaign is the newest

# a knowledge base of 3 diseases x 4 aspects and 2 models: 24 responses, enough for a few items each
_KB = [
    ("感冒", "Primary Symptoms", "咳嗽;打喷嚏;流鼻涕;发热"),
    ("感冒", "Medications", "对乙酰氨基酚;布洛芬"),
    ("感冒", "Physical Examinations", "咽部充血，扁桃体无肿大"),
    ("感冒", "Severity Level", "4"),
    ("流行性感冒", "Primary Symptoms", "高热;头痛;肌肉酸痛;乏力"),
    ("流行性感冒", "Medications", "奥司他韦;对乙酰氨基酚"),
    ("流行性感冒", "Physical Examinations", "体温升高，咽部充血"),
    ("流行性感冒", "Severity Level", "3"),
    ("急性支气管炎", "Primary Symptoms", "咳嗽;咳痰;胸闷"),
    ("急性支气管炎", "Medications", "氨溴索;右美沙芬"),
    ("急性支气管炎", "Physical Examinations", "双肺呼吸音粗，可闻及散在干湿啰音"),
    ("急性支气管炎", "Severity Level", "3"),
]
_ANSWERS = {
    "ModelA": ["咳嗽、流涕和发烧", "布洛芬", "咽部充血", "危重等级为4级", "高热、头痛", "奥司他韦", "体温升高",
               "3级", "咳嗽、咳痰", "氨溴索", "呼吸音粗", "三级"],
    "ModelB": ["骨折", "无", "建议就医", "二级", "乏力", "多喝水", "咽部正常", "5", "胸闷", "抗生素", "正常",
               XSS_TEXT],
}
XSS_MODEL, XSS_DISEASE, XSS_ASPECT = "ModelB", "急性支气管炎", "Severity Level"


@dataclass
class Fixture:
    db: Path
    campaigns: dict[str, int] = field(default_factory=dict)  # annotator -> their campaign id
    xss_item: int | None = None
    url: str = ""  # of the running server (set by the test module)
    server: "Server | None" = None


def build_db(folder: Path) -> Fixture:
    """Import, score (lexical metrics), add users and one campaign per annotator; pre-grade doc_xss."""
    from medeval.accounts import auth
    from medeval.annotation import campaigns as cp
    from medeval.store.db import connect
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db

    folder.mkdir(parents=True, exist_ok=True)
    kb, responses, models = folder / "kb.csv", folder / "responses.csv", folder / "models.csv"
    with open(kb, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["disease", "aspect", "reference"])
        w.writerows(_KB)
    with open(responses, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "disease", "aspect", "response"])
        for model, answers in _ANSWERS.items():
            for (disease, aspect, _), answer in zip(_KB, answers):
                w.writerow([model, disease, aspect, answer])
    models.write_text("model,backbone,kind\nModelA,,general\nModelB,ModelA,medical\n", encoding="utf-8")

    fx = Fixture(folder / "browser.db")
    with connect(fx.db) as db:
        import_files(db, kb=kb, responses=responses, models=models)
        score_db(db, metrics=("bleu1", "rouge1", "exact_match"))
        auth.add_user(db, "admin1", PASSWORD, "admin")
        res = auth.add_user(db, "res1", PASSWORD, "researcher")
        n_scored = db.conn.execute("SELECT count(DISTINCT response_id) FROM scores").fetchone()[0]
        assert n_scored >= 12, n_scored
        for i, name in enumerate(ANNOTATORS):
            auth.add_user(db, name, PASSWORD, "annotator")
            fx.campaigns[name] = cp.create_random_campaign(db, f"browser test {name}", 6 if name != "doc_xss" else
                                                           n_scored, [name], k=1, seed=i, actor=res)
        # doc_xss: answer (through the library) every item ordered before the hostile response, so it is next
        xss_rid = db.conn.execute(
            "SELECT r.id FROM responses r JOIN models m ON m.id = r.model_id JOIN kb_entries k ON k.id = r.kb_id "
            "WHERE m.name = ? AND k.disease = ? AND k.aspect = ?", (XSS_MODEL, XSS_DISEASE, XSS_ASPECT)).fetchone()[0]
        assert db.conn.execute("SELECT raw FROM responses WHERE id = ?", (xss_rid,)).fetchone()[0] == XSS_TEXT
        doc = auth.get_user(db, "doc_xss")
        cid = fx.campaigns["doc_xss"]
        fx.xss_item = db.conn.execute("SELECT id FROM campaign_items WHERE campaign_id = ? AND response_id = ?",
                                      (cid, xss_rid)).fetchone()[0]
        while (iid := cp.next_item(db, doc, cid)) != fx.xss_item:
            assert iid is not None
            cp.submit_grade(db, doc, iid, tier=1, client_token=f"setup-{iid}")
    return fx


def _module_fixture(func):
    import pytest

    return pytest.fixture(scope="module")(func)


@_module_fixture
def playwright():
    """Playwright for one browser test module (``from tests.browser_support import browser, playwright``):
    pytest-playwright's lives for the whole session and keeps an asyncio loop marked as running in the main
    thread, so every later ``asyncio.run()`` fails (tests/test_routes.py)."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    yield pw
    pw.stop()


@_module_fixture
def browser(playwright):
    """Debian's Chromium, headless, for one browser test module."""
    b = playwright.chromium.launch(**LAUNCH_ARGS)
    yield b
    b.close()


def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run server.py`` on a free port, with its own database; always stopped by ``stop``."""

    def __init__(self, db: Path, log: Path, *, demo: bool = True):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "MEDEVAL_DB": str(db), "MEDEVAL_DEMO": "1" if demo else "0",
               "MEDEVAL_IDLE_TIMEOUT": "86400", "MEDEVAL_SECRET_KEY": "", "PYTHONUNBUFFERED": "1"}
        self.log_path = log
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "server.py", "--server.headless=true",
             "--server.address=127.0.0.1", f"--server.port={self.port}", "--browser.gatherUsageStats=false",
             "--server.fileWatcherType=none", "--server.runOnSave=false"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def wait_healthy(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server did not become healthy in {timeout:.0f} s:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


@contextlib.contextmanager
def serving(fx, folder: Path, *, db: Path | None = None):
    """A running server on ``fx.db`` (or ``db``) for the ``with`` block, however it ends: ``fx.url`` and
    ``fx.server`` are set on ``fx`` (an object with attributes) -- the module fixtures of the browser tests."""
    server = Server(db or fx.db, folder / "server.log", demo=True)
    try:
        server.wait_healthy()
        if fx is not None:
            fx.url, fx.server = server.url, server
        yield server
    finally:
        server.stop()


def query(db: Path, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows from a new, read-only connection (what the server committed, nothing cached)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def user_id(db: Path, username: str) -> int:
    return query(db, "SELECT id FROM users WHERE username = ?", (username,))[0][0]


def annotations(db: Path, username: str) -> list[tuple]:
    """(id, item_id, tier, skipped, flagged, note, supersedes, client_token) of a user, oldest first."""
    return query(db, "SELECT id, item_id, tier, skipped, flagged, note, supersedes, client_token "
                     "FROM grade_annotations WHERE user_id = ? ORDER BY id", (user_id(db, username),))


def state(db: Path, username: str, campaign_id: int):
    """``medeval.annotation.campaigns.grading_state`` of a user, read from the database now."""
    from medeval.accounts import auth
    from medeval.annotation import campaigns as cp
    from medeval.store.db import connect

    with connect(db, migrate=False) as d:
        return cp.grading_state(d, auth.get_user(d, username), campaign_id)


# ---------------------------------------------------------------- the demo database, screen fit (first-start tests)

LAUNCH_ARGS = {"executable_path": CHROMIUM, "headless": True,
               "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--disable-dev-shm-usage"]}


def build_demo_db(folder: Path, *, english: bool = True) -> Path:
    """The demo database built exactly as ``scripts/start.sh`` builds it on first start (a subprocess); with
    ``english`` every account then reads the interface in English, the words these tests look for (the demo gives
    its clinicians Chinese: ``english=False`` keeps that)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "annotations.db"
    res = subprocess.run([sys.executable, "-m", "medeval", "demo", "--db", str(db)], cwd=ROOT, capture_output=True,
                         text=True, encoding="utf-8", env={**os.environ, "PYTHONIOENCODING": "utf-8"}, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f"`medeval demo` failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}")
    if english:
        from tests.conftest import english_accounts

        english_accounts(db)
    return db


def demo_password(username: str) -> str:
    from medeval.demo.build import DEMO_ACCOUNTS

    return {u: p for u, p, _ in DEMO_ACCOUNTS}[username]


# Every st.dataframe whose columns do not all fit: Streamlit 1.67 draws it with glide-data-grid, whose
# ".dvn-scroller" is the element that scrolls (the dataframe's own box does not). A table hidden in a closed
# expander is not measured.
TABLE_FIT_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].flatMap((df, i) => {
  const s = df.querySelector('.dvn-scroller');
  if (!s || s.clientWidth === 0) return [];
  if (s.scrollWidth <= s.clientWidth + 1) return [];
  const heads = [...df.querySelectorAll('th[role="columnheader"]')].map(th => th.textContent);
  return [{table: i, scrollWidth: s.scrollWidth, clientWidth: s.clientWidth, columns: heads}];
})"""

# Whether every shown st.dataframe has its grid (".dvn-scroller") drawn; one in a closed expander is not drawn.
# True once the page's elements have stopped changing for 300 ms (Streamlit reports "notRunning" a frame or two
# before React has mounted the run's last elements); polled by wait_for_function.
SETTLED_JS = """() => {
  const now = [...document.querySelectorAll('[data-testid="stElementContainer"], .dvn-scroller, .main-svg')].length;
  const w = window.__medevalSettle || (window.__medevalSettle = {n: -1, t: 0});
  if (w.n !== now) { w.n = now; w.t = performance.now(); return false; }
  return performance.now() - w.t > 300;
}"""

TABLES_DRAWN_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')]
  .every(df => !df.checkVisibility() || (df.closest('details') && !df.closest('details').open)
               || df.querySelector('.dvn-scroller'))"""


def wait_settled(page) -> None:
    """The script has run to the end (idle, nothing stale, no running indicator), every table and chart on the page
    is drawn and nothing has been added for a moment."""
    from playwright.sync_api import expect

    idle = '[data-testid="stApp"][data-test-script-state="notRunning"]'
    page.locator(idle).wait_for(state="attached")
    expect(page.locator('[data-stale="true"]')).to_have_count(0)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)
    page.evaluate("() => { window.__medevalSettle = null; }")
    page.wait_for_function(SETTLED_JS, polling=100)
    page.locator(idle).wait_for(state="attached")
    page.wait_for_function(TABLES_DRAWN_JS)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
                           ".every(c => c.querySelector('.main-svg'))")


def tables_that_scroll(page) -> list[dict]:
    """The dataframes on ``page`` that scroll sideways (columns hidden at this width), with their column names."""
    return page.evaluate(TABLE_FIT_JS)


def page_scrolls_sideways(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth > window.innerWidth")


def table_rows(locator) -> int:
    """Data rows of one st.dataframe (glide-data-grid's accessible table counts the header row too)."""
    locator.locator('table[role="grid"]').wait_for(state="attached")
    return int(locator.locator('table[role="grid"]').get_attribute("aria-rowcount")) - 1


def full_page_screenshot(page, path: Path, **kw) -> None:
    """A screenshot of the whole page: Streamlit scrolls an inner element, so the viewport is made as tall as the
    page for the shot (``full_page=True`` alone stops at the viewport) and then restored."""
    size = page.viewport_size
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
                           "[data-testid=\"stAppViewContainer\"]')].map(e => e.scrollHeight), window.innerHeight)")
    page.set_viewport_size({"width": size["width"], "height": min(int(height), 12_000)})
    try:
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        page.screenshot(path=str(path), full_page=True, **kw)
    finally:
        page.set_viewport_size(size)


# ---------------------------------------------------------------- the Grade page's key guard (webui/grade_screen.py)

GRADE_KEYS_READY_JS = """() => {
  const ready = document.body.dataset.gradeReady;
  const firsts = [...document.querySelectorAll('[class*="st-key-grade_"]')].filter(
    (el) => [...el.classList].some((c) => /^st-key-grade_.+_0$/.test(c)));
  return !!ready && firsts.length === 1 && firsts[0].classList.contains('st-key-grade_' + ready + '_0');
}"""


def wait_grade_keys(page) -> None:
    """The Grade page's item on screen takes grade keys: it has been shown for ``webui.grade_screen.SETTLE_MS``
    (a key pressed sooner is dropped, so a test must wait for this before pressing 1 / 2 / 3 / S)."""
    page.wait_for_function(GRADE_KEYS_READY_JS)


def open_sidebar(page) -> None:
    """Unfold the sidebar where the page starts with it folded (the reading screens, issue 32), as a user does with
    the arrow at the top left; nothing where it is open."""
    button = page.get_by_test_id("stExpandSidebarButton")
    if button.count() and button.is_visible():
        button.click()
    # slid in: its content's left edge at the window's (the sidebar slides from the left when it opens)
    page.wait_for_function("() => { const s = document.querySelector('[data-testid=\"stSidebarContent\"]');"
                           " return s && Math.abs(s.getBoundingClientRect().left) < 1; }")
