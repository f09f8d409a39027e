"""Issue 23 probe: every role against every page, by URL and by websocket message, on a real server.

Each role's user signs in (``POST /signin``) and asks for every page of the app: once as a page load
(``GET /<page>``: only Streamlit's HTML shell, the same for every path, since a page's content comes over the
websocket), and once as the browser asks for a page over the websocket (a ``rerun_script`` BackMsg naming the
page). ``app.py`` builds each role's navigation, so a page outside it must not run: Streamlit answers
``page_not_found`` and runs the role's first page instead. What ran is read from the ``navigation``
ForwardMsg (the page it ran). The data layer checks the role again (``require_role``; its own tests).
"""

from __future__ import annotations

import time

import pytest

from medeval.accounts import auth
from medeval.store.db import connect
from tests import browser_support as bs
from tests.test_security_websocket import _http, open_ws, sign_in

from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

pytestmark = pytest.mark.slow  # a real server

PAGES = ("grade", "annotate", "help", "adjudicate", "campaigns", "agreement", "tuning", "leaderboard", "task-results",
         "exam", "new-campaign", "new-task", "users")
ALLOWED = {"annotator": {"grade", "annotate", "help"}, "adjudicator": {"adjudicate", "help"},
           "researcher": set(PAGES) - {"users"}, "admin": set(PAGES)}
FIRST = {"annotator": "grade", "adjudicator": "adjudicate", "researcher": "campaigns", "admin": "users"}
USERS = {"annotator": "doc_access", "adjudicator": "adj_roles", "researcher": "res1", "admin": "admin1"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("roles")
    fx = bs.build_db(folder)
    with connect(fx.db) as db:
        auth.add_user(db, "adj_roles", bs.PASSWORD, "adjudicator")
    with bs.serving(fx, folder):
        yield fx


def _ask_for(ws, page: str) -> tuple[list[str], bool, list[str]]:
    """Ask for ``page`` as the browser does; (the pages that ran, whether page_not_found came, exceptions)."""
    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_script_hash = ""
    msg.rerun_script.page_name = page
    ws.send(msg.SerializeToString())
    ran, not_found, exceptions, deadline = [], False, [], time.monotonic() + 60
    while time.monotonic() < deadline:
        fwd = ForwardMsg()
        fwd.ParseFromString(ws.recv(timeout=60))
        kind = fwd.WhichOneof("type")
        if kind == "navigation":
            paths = {p.page_script_hash: p.url_pathname.strip("/") for p in fwd.navigation.app_pages}
            ran.append(paths.get(fwd.navigation.page_script_hash, "?"))
        elif kind == "page_not_found":
            not_found = True
        elif kind == "delta" and fwd.delta.new_element.WhichOneof("type") == "exception":
            exceptions.append(fwd.delta.new_element.exception.message)
        elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return ran, not_found, exceptions
    raise AssertionError(f"{page}: the script did not finish")


@pytest.mark.parametrize("role", list(USERS))
def test_a_role_reaches_its_own_pages_and_no_other(app, role):
    cookie = sign_in(app, USERS[role])
    for page in PAGES:  # the page shell only: no data in it, for any role
        assert _http(app, "GET", f"/{page}", cookie=cookie).status == 200
    outcome = {}
    with open_ws(app, cookie) as ws:
        for page in PAGES:
            ran, not_found, exceptions = _ask_for(ws, page)
            assert not exceptions, (page, exceptions)
            outcome[page] = (ran[-1] if ran else None, not_found)
    expected = {page: (page, False) if page in ALLOWED[role] else (FIRST[role], True) for page in PAGES}
    assert outcome == expected
