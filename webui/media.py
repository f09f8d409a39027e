"""Downloads and images only for the session that asked for them: Streamlit's ``/media/...`` behind its owner.

Streamlit publishes every file a page offers -- ``st.download_button``'s reports, zips and CSV exports, the audit
log, ``st.image``'s pictures -- at ``/media/<id>.<ext>`` and serves it to whoever asks, with or without a cookie,
also after its owner signed out; the id is a hash of the content, and the URL lands in any proxy's access log.
So the URL alone must be worth nothing:

* **Who owns a file.** :func:`install` (``server.py``'s lifespan, once Streamlit's runtime exists) wraps the
  runtime's ``MediaFileManager`` so that each file is recorded with its owner when a page puts it up (``add``, in
  the page's script thread): the Streamlit session, the medeval session (the token hash of the user ``app.py``
  resolved for this run from the websocket's cookie), that user and the page (``webui.pages``). A download made
  on click (a callable given to ``st.download_button``) is registered during the run as a placeholder with its
  owner; the file the click makes (``execute_deferred``, on a worker thread with no script context) takes the
  placeholder's owner. Two sessions offering the same content share the one file, and both own it.
* **How long.** A claim lasts while Streamlit keeps the file, not just the current run: Streamlit forgets which
  session shows a file at the start of every run and keeps a download one run longer, so that a click that comes
  during a rerun still works; claims follow Streamlit's own clean-up (``remove_orphaned_files``), and a Streamlit
  session that shuts down gives its claims up.
* **The check.** :class:`MediaGuard` (an ASGI middleware, registered by ``server.py``) answers every request under
  ``/media/`` itself unless the request's session cookie is a live medeval session (``webui.routes._session_user``:
  not signed out, not idle, not past its lifetime, the user not disabled) that is the very session that owns the
  file, of the same user, whose role may open the page that offered it now (a role changed since counts): anything
  else is a 403 (404 is not used, so a stranger cannot tell a live file from none). A file served carries
  ``Cache-Control: no-store`` (no copy in the browser's or a proxy's cache) and ``Referrer-Policy: no-referrer``.

When a session ends its files are no longer served (the liveness check), even while Streamlit still holds them
for another session or for its one-run grace. A refusal is said in the reader's language: the account's own, else
the sign-in page's (``webui.routes._language``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable

from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from medeval.core import i18n
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _

from . import pages
from .routes import _language, _session_user

_LOGGER = logging.getLogger(__name__)
MEDIA_DIR = "/media/"  # Streamlit's media route, under server.baseUrlPath
_OWNERS_ATTR = "medeval_owners"  # where install() leaves the registry on the media manager
SERVED_HEADERS = ((b"cache-control", b"no-store"), (b"referrer-policy", b"no-referrer"),
                  (b"x-content-type-options", b"nosniff"))
REFUSED = N_("This file is offered only to the session that opened its page. Open the page again and download it "
             "there.")
UNREADABLE = N_("The server's database cannot be read; try again, or tell the administrator.")


@dataclass(frozen=True)
class Owner:
    """Who put a file up: a Streamlit session (a browser tab), the medeval session behind it (the token hash), its
    user and the page (``webui.pages`` URL path)."""

    streamlit_session: str
    session: str
    user_id: int
    page: str | None


def file_id(name: str) -> str:
    """The id in a media URL that Streamlit's storage made (``/media/<id>.<ext>`` -> ``<id>``).

    >>> file_id("/media/3f2a.csv"), file_id("/media/3f2a")
    ('3f2a', '3f2a')
    """
    return os.path.splitext(name.rpartition("/")[2])[0]


class MediaOwners:
    """Which sessions own which media files (one per server process, on its ``MediaFileManager``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, dict[str, Owner]] = {}  # file id -> {Streamlit session id: owner}
        self._deferred: dict[str, Owner] = {}  # placeholder id of a made-on-click download -> owner

    def claim(self, fid: str, owner: Owner) -> None:
        with self._lock:
            self._files.setdefault(fid, {})[owner.streamlit_session] = owner

    def claim_deferred(self, placeholder: str, owner: Owner) -> None:
        with self._lock:
            self._deferred[placeholder] = owner

    def deferred_owner(self, placeholder: str) -> Owner | None:
        with self._lock:
            return self._deferred.get(placeholder)

    def owners(self, fid: str) -> list[Owner]:
        with self._lock:
            return list(self._files.get(fid, {}).values())

    def forget_session(self, streamlit_session: str) -> None:
        """A Streamlit session that shut down: its claims go (another session's claim on a shared file stays)."""
        with self._lock:
            for fid in list(self._files):
                self._files[fid].pop(streamlit_session, None)
                if not self._files[fid]:
                    del self._files[fid]
            for placeholder in [p for p, o in self._deferred.items() if o.streamlit_session == streamlit_session]:
                del self._deferred[placeholder]

    def prune(self, stored: Callable[[str], bool], deferred: Callable[[str], bool]) -> None:
        """Drop the claims on files Streamlit no longer keeps (``stored``) and on placeholders it dropped."""
        with self._lock:
            for fid in [f for f in self._files if not stored(f)]:
                del self._files[fid]
            for placeholder in [p for p in self._deferred if not deferred(p)]:
                del self._deferred[placeholder]

    def allows(self, fid: str, user) -> bool:
        """Whether ``user`` (of a live session, ``auth.session_user``) may have the file: one of its owners is this
        very session of this user, on a page the user's role may open now."""
        for owner in self.owners(fid):
            if owner.session != getattr(user, "session", None) or owner.user_id != user.id:
                continue
            page = pages.BY_URL.get(owner.page or "")
            if page is not None and (not page.roles or user.role in page.roles):
                return True
        return False

    def __len__(self) -> int:
        with self._lock:
            return len(self._files)


def _current_owner() -> Owner | None:
    """The owner of what the running page script puts up now; None outside a script run or without a signed-in
    user (such a file is never served)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from . import page as ui

    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    user = ui.user()  # resolved by app.py for this run, from this websocket's cookie
    if user is None or not getattr(user, "session", None):
        return None
    info = ctx.pages_manager.get_pages().get(ctx.page_script_hash) or {}
    return Owner(ctx.session_id, user.session, user.id, info.get("url_pathname"))


def install(manager=None, *, owner_of: Callable[[], Owner | None] = _current_owner) -> MediaOwners:
    """Record the owner of every file ``manager`` (default: the running Streamlit runtime's) is given from now on,
    as ``owner_of`` says it while the file is put up; the registry, kept on the manager (installing twice changes
    nothing)."""
    if manager is None:
        from streamlit import runtime

        manager = runtime.get_instance().media_file_mgr
    existing = getattr(manager, _OWNERS_ATTR, None)
    if existing is not None:
        return existing
    owners = MediaOwners()
    add, add_deferred, execute_deferred = manager.add, manager.add_deferred, manager.execute_deferred
    remove_orphaned_files, clear_session_refs = manager.remove_orphaned_files, manager.clear_session_refs

    def owned_add(*args, **kwargs) -> str:
        url = add(*args, **kwargs)
        if (owner := owner_of()) is not None:
            owners.claim(file_id(url), owner)
        return url

    def owned_add_deferred(*args, **kwargs) -> str:
        placeholder = add_deferred(*args, **kwargs)
        if (owner := owner_of()) is not None:
            owners.claim_deferred(placeholder, owner)
        return placeholder

    def owned_execute_deferred(placeholder: str) -> str:
        # the owner is read first: making the file can take seconds (a report's PDF), and the rerun that the click
        # also starts drops the placeholder meanwhile
        owner = owners.deferred_owner(placeholder)
        url = execute_deferred(placeholder)
        if owner is not None:
            owners.claim(file_id(url), owner)
        return url

    def owned_remove_orphaned_files() -> None:
        remove_orphaned_files()
        # (Streamlit keeps no public list of its placeholders; without it they are kept until their session ends)
        deferred = getattr(manager, "_deferred_callables", None)
        owners.prune(lambda fid: manager.read_file(fid) is not None,
                     (lambda p: p in deferred) if isinstance(deferred, dict) else (lambda p: True))

    def owned_clear_session_refs(session_id: str | None = None) -> None:
        clear_session_refs(session_id)
        if session_id is not None:  # a session shutting down (a run clears its own refs without naming itself)
            owners.forget_session(session_id)

    if not manager.can_read_files:  # a storage plugged in by a host serves its files itself, past this guard
        raise RuntimeError("medeval's media guard needs Streamlit's in-memory media storage")
    manager.add, manager.add_deferred, manager.execute_deferred = owned_add, owned_add_deferred, owned_execute_deferred
    manager.remove_orphaned_files, manager.clear_session_refs = owned_remove_orphaned_files, owned_clear_session_refs
    setattr(manager, _OWNERS_ATTR, owners)
    return owners


def installed() -> MediaOwners | None:
    """The running Streamlit runtime's registry, or None (no runtime, or :func:`install` has not run)."""
    from streamlit import runtime

    if not runtime.exists():
        return None
    return getattr(runtime.get_instance().media_file_mgr, _OWNERS_ATTR, None)


def owning(lifespan: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A server lifespan that installs the registry (Streamlit's runtime has started before ``st.App`` runs a user
    lifespan) and then runs ``lifespan``."""

    @asynccontextmanager
    async def owning_lifespan(app) -> AsyncIterator[Any]:
        install()
        async with lifespan(app) as state:
            yield state

    owning_lifespan.wrapped = lifespan  # what it runs after installing (tests/test_runtime.py reads it)
    return owning_lifespan


def _media_prefix() -> str:
    import streamlit as st

    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{MEDIA_DIR}" if base else MEDIA_DIR


def _refused(status: int, text: str, request: Request, user=None) -> PlainTextResponse:
    """A refusal: ``text`` (a message id) in the language of ``user`` (the account's own), else of the request."""
    own = getattr(user, "language", None)
    with i18n.language(own if own in i18n.LANGUAGES else _language(request)):
        text = _(text)
    return PlainTextResponse(text, status_code=status, headers={"Cache-Control": "no-store",
                                                                "Referrer-Policy": "no-referrer"})


class MediaGuard:
    """ASGI middleware: a ``/media/`` request is passed to Streamlit only for the live session that owns the file
    (see the module's docstring); ``owners`` and ``prefix`` default to the running server's."""

    def __init__(self, app, owners: MediaOwners | None = None, prefix: str | None = None):
        self.app, self._owners, self._prefix = app, owners, prefix

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self._prefix is None:
            self._prefix = _media_prefix()
        path = scope["path"]
        root = scope.get("root_path") or ""
        if root and path.startswith(root):
            path = path[len(root):]
        if not path.startswith(self._prefix):
            return await self.app(scope, receive, send)
        fid = os.path.splitext(path[len(self._prefix):])[0]  # as Streamlit's storage reads the name
        request = Request(scope)
        try:
            user = await run_in_threadpool(_session_user, request)
        except (MedevalError, sqlite3.Error) as e:
            _LOGGER.error("Could not check the session of a media request: %s", e)  # i18n: not text
            return await _refused(503, UNREADABLE, request)(scope, receive, send)
        owners = self._owners if self._owners is not None else installed()
        if owners is None:
            _LOGGER.error(  # i18n: not text (the server's log)
                "Refused a media file: the media guard is not installed (server.py's lifespan)")
            return await _refused(403, REFUSED, request, user)(scope, receive, send)
        if user is None or not owners.allows(fid, user):
            _LOGGER.warning("Refused media file %s to %s", fid,  # i18n: not text
                            "a request without a live session" if user is None else f"{user.username} ({user.role})")
            return await _refused(403, REFUSED, request, user)(scope, receive, send)
        return await self.app(scope, receive, _with_headers(send))


def _with_headers(send):
    names = {k for k, _ in SERVED_HEADERS}

    async def sending(message):
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
            message = {**message, "headers": headers + list(SERVED_HEADERS)}
        return await send(message)

    return sending


def media_middleware() -> list[Middleware]:
    return [Middleware(MediaGuard)]
