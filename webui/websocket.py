"""The websocket guard: Streamlit's ``/_stcore/stream`` only for a live medeval session, from this server's pages.

Streamlit accepts any websocket whose ``Origin`` is "localhost" or one of the machine's addresses, with or
without a session, and then obeys every ``BackMsg`` on it -- ``clear_cache`` empties ``st.cache_data`` and
``st.cache_resource`` for every user. ``WebsocketGuard`` (an ASGI middleware, registered by ``server.py``)
sits in front of it:

* **Origin.** A websocket that names an ``Origin`` (every browser does) must come from the very host it
  connected to: the Origin's ``host[:port]`` equals the ``Host`` header, so ``http://localhost:9999`` or
  another site is refused for an app served at ``127.0.0.1:8501``. (Behind a reverse proxy, pass the
  browser's Host through: ``proxy_set_header Host $host;``.) A client that sends no Origin is not a browser,
  so no other site can be acting through it; it still needs the session below.
* **Session.** The signed session cookie must belong to a live session (``webui.routes._session_user``, the
  check the sign-in routes use). Without one the websocket is refused before it opens (close code 1008, an
  HTTP 403 to the client). A signed-out browser never gets this far: ``RequireSession`` sends its page loads
  to the sign-in form, which is a plain HTTP route.
* **A session that ends while its websocket is open** (sign-out in another tab, idle timeout, a disabled
  user) is noticed on the next message: the session is checked again before every ``BackMsg`` is passed on
  (one indexed read; ``last_seen`` is written at most every 30 s). From then on a rerun request goes through
  stripped to its page and query string -- no widget values, so no button callback or form submission runs
  under the old user, and no fragment-only rerun -- and the script shows its "your session has ended, sign
  in" screen; every other message (``clear_cache``, uploads, ``stop_script`` ...) is dropped. A check that
  fails (database locked or unreadable) strips just that message; at connection time it refuses.

* **Admin-only messages.** ``clear_cache`` (and Streamlit's ``debug_*`` messages) act on the whole server, not on
  one session: a live session passes them on only when its user is an admin (checked with the same read, so a
  role changed while the socket is open counts from the next message); anyone else's are dropped and logged.

A browser whose websocket is refused (it reconnects after its session ended) shows Streamlit's connection
error; reloading the page lands on the sign-in form (``RequireSession``, "your session ended").
"""

from __future__ import annotations

import logging
import time
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection

from .routes import _session_user

_LOGGER = logging.getLogger(__name__)
STREAM_SUFFIX = "/_stcore/stream"
POLICY_VIOLATION = 1008  # websocket close code; before the handshake uvicorn answers it with HTTP 403


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """Whether a websocket's ``Origin`` header names the host it connected to (no Origin: not a browser).

    >>> origin_allowed("http://127.0.0.1:8501", "127.0.0.1:8501"), origin_allowed(None, "127.0.0.1:8501")
    (True, True)
    >>> origin_allowed("http://localhost:9999", "127.0.0.1:8501"), origin_allowed("null", "127.0.0.1:8501")
    (False, False)
    """
    if origin is None:
        return True
    if not host:
        return False
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.netloc.lower() == host.strip().lower()


# BackMsgs that act on the whole server rather than one session: only an admin's pass
ADMIN_ONLY = frozenset({"clear_cache", "debug_disconnect_websocket", "debug_shutdown_runtime"})
UNCHECKED = object()  # what _session returns when the session could not be looked up


def _session(scope):
    """The user of the websocket's session cookie; None without a live session; ``UNCHECKED`` when it could not
    be checked (the database is unavailable or broken: the caller refuses, an unchecked socket gets nothing)."""
    try:
        return _session_user(HTTPConnection(scope))
    except Exception:
        _LOGGER.exception("Could not check the session of a websocket")
        return UNCHECKED


def _live(scope) -> bool | None:
    """Whether the websocket's session cookie belongs to a live session; None when it could not be checked."""
    user = _session(scope)
    return None if user is UNCHECKED else user is not None


def message_type(data: bytes) -> str | None:
    """The kind of a ``BackMsg`` (``rerun_script``, ``clear_cache`` ...); None when it does not parse."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    try:
        msg.ParseFromString(data)
    except Exception:
        return None
    return msg.WhichOneof("type")


def allowed(data: bytes, user) -> bool:
    """Whether a live session's user may send this message: everything, except ``ADMIN_ONLY`` kinds for a non-admin.

    >>> from medeval.accounts.auth import User
    >>> from streamlit.proto.BackMsg_pb2 import BackMsg
    >>> clear = BackMsg(clear_cache=True).SerializeToString()
    >>> allowed(clear, User(1, "doc", "annotator", True)), allowed(clear, User(2, "boss", "admin", True))
    (False, True)
    """
    return getattr(user, "role", None) == "admin" or message_type(data) not in ADMIN_ONLY


def _stripped(data: bytes) -> bytes | None:
    """What may pass of a message on a socket whose session has ended: a bare rerun request, or nothing."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    try:
        msg.ParseFromString(data)
    except Exception:
        return None
    if msg.WhichOneof("type") != "rerun_script":
        return None
    old = msg.rerun_script
    bare = BackMsg()
    bare.rerun_script.query_string = old.query_string
    bare.rerun_script.page_script_hash = old.page_script_hash
    bare.rerun_script.page_name = old.page_name
    if old.HasField("context_info"):
        bare.rerun_script.context_info.CopyFrom(old.context_info)
    return bare.SerializeToString()


class WebsocketGuard:
    """ASGI middleware: refuse a websocket from another origin or without a live session; re-check the session
    before every message it sends (see the module's docstring)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.app(scope, receive, send)
        origin = _header(scope, b"origin")
        host = _header(scope, b"host")
        reason = None
        if not origin_allowed(origin, host):
            reason = f"its Origin {origin!r} is not the host it connected to ({host!r})"
        elif not await run_in_threadpool(_live, scope):
            reason = "it has no live medeval session (sign in first)"
        if reason is not None:
            _LOGGER.warning("Refused a websocket to %s: %s", scope.get("path"), reason)
            message = await receive()  # websocket.connect
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": POLICY_VIOLATION})
            return None
        if not scope["path"].endswith(STREAM_SUFFIX):
            return await self.app(scope, receive, send)
        return await self.app(scope, _Rechecking(scope, receive), send)


class _Rechecking:
    """``receive`` for an accepted stream: each ``BackMsg`` passes only while the session is live."""

    def __init__(self, scope, receive):
        self.scope, self.inner = scope, receive
        self.ended = False  # an ended session never comes back, so it is not looked up again
        self.started = time.monotonic()

    async def __call__(self):
        while True:
            message = await self.inner()
            if message["type"] != "websocket.receive" or message.get("bytes") is None:
                return message  # connect, disconnect, and text frames (Streamlit closes the socket on those)
            if not self.ended:
                user = await run_in_threadpool(_session, self.scope)
                if user is not None and user is not UNCHECKED:
                    if allowed(message["bytes"], user):
                        return message
                    _LOGGER.warning("Dropped a %s message from %s (%s): only an admin may send it",
                                    message_type(message["bytes"]), user.username, user.role)
                    continue
                if user is None:  # (UNCHECKED: e.g. a locked database; strip just this one)
                    self.ended = True
                    _LOGGER.info("The session of an open websocket ended after %.0f s; its messages are stripped",
                                 time.monotonic() - self.started)
            data = _stripped(message["bytes"])
            if data is not None:
                return {**message, "bytes": data}


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def websocket_middleware() -> list[Middleware]:
    return [Middleware(WebsocketGuard)]
