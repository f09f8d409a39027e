"""Issue 23, item 6: only an admin may send ``clear_cache`` (it empties every user's caches) over the websocket.

The attack: a signed-in annotator opens Streamlit's websocket (their session is live, so the guard lets it
open) and sends a ``clear_cache`` BackMsg. ``webui.websocket.WebsocketGuard`` is driven here as a real ASGI
middleware in front of a recording app that stands in for Streamlit: what reaches the recorder is what
Streamlit would obey. The session cookie is a real one (``auth.create_session`` + ``sign_token``) in a real
database, so the role comes from the same lookup the guard does for every message.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from medeval.accounts import auth
from medeval.store.db import connect
from webui import COOKIE_NAME
from webui.websocket import ADMIN_ONLY, WebsocketGuard, allowed, message_type

PW = "correct horse battery staple"
HOST = "annot.hospital.lan"


def _msg(kind: str) -> bytes:
    msg = BackMsg()
    if kind == "rerun_script":
        msg.rerun_script.query_string = "campaign=3&病人=張三"
        msg.rerun_script.page_script_hash = "abc"
        w = msg.rerun_script.widget_states.widgets.add()
        w.id, w.trigger_value = "$$ID-1-grade_7_1", True
    elif kind == "stop_script":
        msg.stop_script = True
    else:
        setattr(msg, kind, True)
    return msg.SerializeToString()


class Recorder:
    """Stands in for Streamlit: accepts the socket and records every BackMsg it is given."""

    def __init__(self):
        self.got: list[str | None] = []

    async def __call__(self, scope, receive, send):
        while True:
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
            elif message["type"] == "websocket.receive":
                self.got.append(message_type(message["bytes"]))
            else:
                return


def _drive(cookie: str | None, frames: list[bytes]) -> list[str | None]:
    """Open the stream with ``cookie`` and send ``frames``; the kinds of BackMsg that got through to Streamlit."""
    app = Recorder()
    guard = WebsocketGuard(app)
    headers = [(b"host", HOST.encode()), (b"origin", f"https://{HOST}".encode())]
    if cookie:
        headers.append((b"cookie", f"{COOKIE_NAME}={cookie}".encode()))
    scope = {"type": "websocket", "path": "/_stcore/stream", "headers": headers, "scheme": "wss",
             "client": ("10.1.2.3", 5555), "server": (HOST, 443), "query_string": b"", "subprotocols": ["streamlit"]}
    queue = [{"type": "websocket.connect"}] + [{"type": "websocket.receive", "bytes": f} for f in frames] + \
            [{"type": "websocket.disconnect", "code": 1000}]
    sent = []

    async def receive():
        return queue.pop(0)

    async def send(message):
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    assert sent and sent[0]["type"] == "websocket.accept", sent
    return app.got


def _cookie(db, username: str) -> str:
    return auth.sign_token(auth.secret_key(db), auth.create_session(db, auth.get_user(db, username)))


@pytest.fixture
def cookies(db):
    for name, role in (("doc1", "annotator"), ("adj1", "adjudicator"), ("res1", "researcher"), ("boss", "admin")):
        auth.add_user(db, name, PW, role)
    return {name: _cookie(db, name) for name in ("doc1", "adj1", "res1", "boss")}


@pytest.mark.parametrize("who", ["doc1", "adj1", "res1"])
def test_a_non_admins_clear_cache_is_dropped_and_the_rest_passes(cookies, who, caplog):
    frames = [_msg("rerun_script"), _msg("clear_cache"), _msg("app_heartbeat"), _msg("clear_cache"),
              _msg("stop_script"), _msg("rerun_script")]
    with caplog.at_level(logging.WARNING, logger="webui.websocket"):
        got = _drive(cookies[who], frames)
    assert got == ["rerun_script", "app_heartbeat", "stop_script", "rerun_script"]
    dropped = [r.getMessage() for r in caplog.records if "Dropped a clear_cache" in r.getMessage()]
    assert len(dropped) == 2 and who in dropped[0], dropped


def test_an_admins_clear_cache_is_obeyed(cookies):
    got = _drive(cookies["boss"], [_msg("clear_cache"), _msg("rerun_script")])
    assert got == ["clear_cache", "rerun_script"]


def test_a_role_changed_while_the_socket_is_open_counts_from_the_next_message(db, cookies):
    """The role is read with the session on every message, not remembered from the handshake."""
    admin2 = auth.add_user(db, "admin2", PW, "admin")
    cookie = _cookie(db, "admin2")
    assert _drive(cookie, [_msg("clear_cache")]) == ["clear_cache"]
    auth.set_role(db, "admin2", "annotator", actor=auth.get_user(db, "boss"))
    assert admin2.role == "admin"
    assert _drive(cookie, [_msg("clear_cache"), _msg("rerun_script")]) == ["rerun_script"]


def test_server_wide_debug_messages_are_admin_only_too(cookies):
    frames = [_msg(k) for k in sorted(ADMIN_ONLY)]
    assert _drive(cookies["doc1"], frames) == []
    assert _drive(cookies["boss"], frames) == sorted(ADMIN_ONLY)


def test_a_session_that_ends_drops_clear_cache_even_from_an_admin(db, cookies):
    token = auth.unsign_token(auth.secret_key(db), cookies["boss"])
    auth.logout(db, token)
    # a socket opened with an ended session is refused before it opens (close 1008): nothing reaches Streamlit
    app = Recorder()
    sent = []
    queue = [{"type": "websocket.connect"}, {"type": "websocket.receive", "bytes": _msg("clear_cache")}]

    async def receive():
        return queue.pop(0)

    async def send(m):
        sent.append(m)

    scope = {"type": "websocket", "path": "/_stcore/stream", "client": ("10.1.2.3", 1), "query_string": b"",
             "headers": [(b"host", HOST.encode()), (b"cookie", f"{COOKIE_NAME}={cookies['boss']}".encode())]}
    asyncio.run(WebsocketGuard(app)(scope, receive, send))
    assert sent == [{"type": "websocket.close", "code": 1008}] and app.got == []


def test_allowed_and_message_type_on_odd_input():
    assert message_type(b"\xff\xff not a protobuf") is None
    assert allowed(b"\xff\xff not a protobuf", None)  # not ours to judge: Streamlit cannot parse it either
    assert not allowed(_msg("clear_cache"), None)
    assert not allowed(_msg("clear_cache"), auth.User(1, "admin", "annotator", True))  # the role counts, not the name
