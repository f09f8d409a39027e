"""Streamlit's websocket (``/_stcore/stream``) against a real server: only a live session, only our own origin.

The server is ``streamlit run server.py`` (``tests/browser_support.py``); a raw websocket client
(the ``websockets`` package that Streamlit installs) talks to it as a browser would, with the
session cookie that ``POST /signin`` sets. What is checked (``webui/websocket.py``):

1. a websocket without a session (no cookie, a forged one) is refused before it opens;
2. with a live session and this server's Origin it opens, and a rerun request runs the app;
3. with a live session but another origin (another localhost port, another site) it is refused;
4. after sign-out the old cookie's websocket is refused;
5. a socket that stays open while its session ends (sign-out, idle timeout) no longer acts for the
   user: a button press sent on it saves nothing, and the app shows its signed-out screen.

The last tests check the two pure pieces (Origin against Host, the stripped rerun) without a server.
"""

from __future__ import annotations

import http.client
import time
from http.cookies import SimpleCookie
from urllib.parse import urlencode

import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.store.db import connect
from tests import browser_support as bs
from webui.websocket import _stripped, origin_allowed

websockets = pytest.importorskip("websockets")
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

# every test that starts the server is marked slow; the unit tests at the end are not

USERS = ("ws_open", "ws_origin", "ws_signout", "ws_end_signout", "ws_end_idle")  # one per test: independent
TIMEOUT_S = 30  # generous: CI machines have 2 cores
SIGNED_OUT = "You are not signed in, or your session has ended."  # app.py's signed-out screen


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The browser tests' small database plus annotators of our own (a campaign each), and a running server."""
    folder = tmp_path_factory.mktemp("ws")
    fx = bs.build_db(folder)
    with connect(fx.db) as db:
        res = auth.get_user(db, "res1")
        for i, name in enumerate(USERS):
            auth.add_user(db, name, bs.PASSWORD, "annotator")
            fx.campaigns[name] = cp.create_random_campaign(db, f"ws test {name}", 4, [name], k=1, seed=i, actor=res)
    with bs.serving(fx, folder):
        yield fx


# ---------------------------------------------------------------- helpers

def _http(app, method: str, path: str, *, body: str | None = None, cookie: str | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", app.server.port, timeout=TIMEOUT_S)
    headers = {"Content-Type": "application/x-www-form-urlencoded"} if body is not None else {}
    if cookie:
        headers["Cookie"] = f"medeval_session={cookie}"
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp
    finally:
        conn.close()


def sign_in(app, username: str) -> str:
    """The session cookie's value from ``POST /signin`` (the real route, as a browser's form sends it)."""
    resp = _http(app, "POST", "/signin", body=urlencode({"username": username, "password": bs.PASSWORD, "next": "/"}))
    assert resp.status == 303, resp.status
    jar = SimpleCookie()
    for header in resp.headers.get_all("Set-Cookie"):
        jar.load(header)
    return jar["medeval_session"].value


def sign_out(app, cookie: str) -> None:
    """``POST /signout`` (the sign-out button's form) ends the session on the server."""
    resp = _http(app, "POST", "/signout", body="", cookie=cookie)
    assert resp.status == 303, resp.status


def open_ws(app, cookie: str | None, origin: str | None = "same"):
    """A websocket to the stream, as a browser on ``origin`` would open it (``same``: the server's own URL)."""
    headers = {"Cookie": f"medeval_session={cookie}"} if cookie else {}
    return ws_connect(f"ws://127.0.0.1:{app.server.port}/_stcore/stream", origin=app.url if origin == "same" else origin,
                      additional_headers=headers, proxy=None, open_timeout=TIMEOUT_S, compression=None)


def refused(app, cookie: str | None, origin: str | None = "same") -> bool:
    """Whether the server refuses the websocket's handshake (HTTP 403); an opened one is closed again."""
    try:
        ws = open_ws(app, cookie, origin)
    except InvalidStatus as e:
        assert e.response.status_code == 403, e.response.status_code
        return True
    ws.close()
    return False


def rerun(ws, widgets: dict[str, bool] | None = None, *, timeout_s: float = TIMEOUT_S) -> list[ForwardMsg]:
    """Send a rerun request for "/" (with button presses: widget id -> trigger); the ForwardMsgs until it is drawn."""
    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_script_hash = ""
    for wid, value in (widgets or {}).items():
        w = msg.rerun_script.widget_states.widgets.add()
        w.id, w.trigger_value = wid, value
    ws.send(msg.SerializeToString())
    got, deadline = [], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        fwd = ForwardMsg()
        fwd.ParseFromString(ws.recv(timeout=timeout_s))
        got.append(fwd)
        # "/" is a hidden home page that switches to the role's first page: one run ends early for the next
        if fwd.WhichOneof("type") == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return got
    raise AssertionError("the script did not finish")


def buttons(msgs: list[ForwardMsg]) -> dict[str, str]:
    """Widget id -> label of the buttons a run drew."""
    return {m.delta.new_element.button.id: m.delta.new_element.button.label for m in msgs
            if m.WhichOneof("type") == "delta" and m.delta.new_element.WhichOneof("type") == "button"}


def shown(msgs: list[ForwardMsg]) -> str:
    return "\n".join(str(m.delta.new_element) for m in msgs if m.WhichOneof("type") == "delta")


def grades(app, username: str) -> int:
    return len(bs.annotations(app.db, username))


def grade_button(msgs: list[ForwardMsg]) -> str:
    """The id of the first tier button of the item on screen (keys ``grade_<item>_<tier>``, app_pages/grade.py)."""
    ids = [wid for wid in buttons(msgs) if "-grade_" in wid]
    assert ids, f"no grade button on screen:\n{shown(msgs)[:2000]}"
    return ids[0]


# ---------------------------------------------------------------- 1. no session

@pytest.mark.slow
def test_websocket_without_a_session_is_refused(app):
    assert refused(app, None)
    assert refused(app, "forged.cookie-value")
    # a copied cookie from another server (signed with another key) is no better than none
    assert refused(app, auth.sign_token("another-key", "some-token"))


# ---------------------------------------------------------------- 2. a live session, our origin

@pytest.mark.slow
def test_websocket_with_a_session_and_our_origin_runs_the_app(app):
    cookie = sign_in(app, "ws_open")
    with open_ws(app, cookie) as ws:
        msgs = rerun(ws)
    kinds = {m.WhichOneof("type") for m in msgs}
    assert {"new_session", "delta", "script_finished"} <= kinds, kinds
    assert grade_button(msgs)  # the annotator's Grade page, drawn for this user
    assert SIGNED_OUT not in shown(msgs)
    with open_ws(app, cookie, origin=None) as ws:  # a client that is not a browser sends no Origin
        assert "new_session" in {m.WhichOneof("type") for m in rerun(ws)}


# ---------------------------------------------------------------- 3. another origin

@pytest.fixture(scope="module")
def origin_cookie(app):
    return sign_in(app, "ws_origin")


@pytest.mark.slow
@pytest.mark.parametrize("origin", ["http://localhost:{other}", "http://127.0.0.1:{other}", "http://localhost:{port}",
                                    "http://evil.example", "null"])
def test_websocket_from_another_origin_is_refused(app, origin_cookie, origin):
    cookie = origin_cookie
    other = bs.free_port()
    assert not refused(app, cookie)  # the cookie itself is fine
    assert refused(app, cookie, origin.format(other=other, port=app.server.port))


# ---------------------------------------------------------------- 4. after sign-out

@pytest.mark.slow
def test_websocket_with_a_signed_out_cookie_is_refused(app):
    cookie = sign_in(app, "ws_signout")
    assert not refused(app, cookie)
    sign_out(app, cookie)
    assert refused(app, cookie)


# ---------------------------------------------------------------- 5. the session ends while the socket is open

def _end_idle(app, username: str) -> None:
    """As if the session had been idle for two days (the server runs with MEDEVAL_IDLE_TIMEOUT=86400)."""
    import sqlite3

    conn = sqlite3.connect(app.db, timeout=30)
    try:
        with conn:
            conn.execute("UPDATE sessions SET last_seen = last_seen - 2 * 86400 WHERE user_id = ?",
                         (bs.user_id(app.db, username),))
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("user, how", [("ws_end_signout", "sign-out"), ("ws_end_idle", "idle timeout")])
def test_open_websocket_stops_acting_once_its_session_ends(app, user, how):
    cookie = sign_in(app, user)
    with open_ws(app, cookie) as ws:
        first = rerun(ws)
        # a press of a tier button on this socket saves a grade while the session is live ...
        after_first = rerun(ws, {grade_button(first): True})
        assert grades(app, user) == 1
        if how == "sign-out":
            sign_out(app, cookie)  # e.g. from another tab: this socket stays open
        else:
            _end_idle(app, user)
        # ... and nothing once it has ended: no button callback runs under the old user
        after_end = rerun(ws, {grade_button(after_first): True})
        assert grades(app, user) == 1, f"a button press after the {how} was saved"
        assert SIGNED_OUT in shown(after_end)
        assert not buttons(after_end)
    assert refused(app, cookie)


# ---------------------------------------------------------------- the pure pieces

@pytest.mark.parametrize("origin, host, ok", [
    ("http://127.0.0.1:8501", "127.0.0.1:8501", True),
    ("https://Annot.Hospital.lan", "annot.hospital.lan", True),  # host names are case-insensitive
    (None, "127.0.0.1:8501", True),  # not a browser: the session cookie is still required
    ("http://localhost:8501", "127.0.0.1:8501", False),  # another name for the same machine is another origin
    ("http://127.0.0.1:9999", "127.0.0.1:8501", False),
    ("http://annot.hospital.lan.evil.example", "annot.hospital.lan", False),
    ("null", "127.0.0.1:8501", False),  # a sandboxed frame or a file:// page
    ("ftp://127.0.0.1:8501", "127.0.0.1:8501", False),
    ("http://127.0.0.1:8501", None, False),
    ("http://127.0.0.1:8501", "", False),
])
def test_origin_must_name_the_host_it_connected_to(origin, host, ok):
    assert origin_allowed(origin, host) is ok


def test_an_ended_session_passes_only_a_bare_rerun():
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string, state.page_script_hash, state.page_name = "campaign=3", "abc123", "grade"
    state.fragment_id = "frag-1"
    state.is_auto_rerun = True
    state.context_info.timezone = "Asia/Shanghai"
    w = state.widget_states.widgets.add()
    w.id, w.trigger_value = "$$ID-123-grade_7_1", True
    out = BackMsg()
    out.ParseFromString(_stripped(msg.SerializeToString()))
    bare = out.rerun_script
    assert out.WhichOneof("type") == "rerun_script"
    assert (bare.query_string, bare.page_script_hash, bare.page_name) == ("campaign=3", "abc123", "grade")
    assert bare.context_info.timezone == "Asia/Shanghai"
    assert not bare.widget_states.widgets  # no button press, no form submission, no callback
    assert bare.fragment_id == "" and not bare.is_auto_rerun  # a full run: app.py checks the session again

    for kind in ("clear_cache", "stop_script", "app_heartbeat", "load_git_info"):
        other = BackMsg()
        setattr(other, kind, True)
        assert _stripped(other.SerializeToString()) is None, kind
    assert _stripped(b"\xff\xff not a protobuf") is None
