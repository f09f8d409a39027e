"""Sign-in and sign-out as plain HTTP routes, mounted next to Streamlit by ``server.py`` (``st.App``).

Streamlit script code cannot set a cookie, so signing in happens here: ``POST /signin``
checks the argon2 hash (``medeval.accounts.auth.authenticate``), opens a server-side session and
sets an HttpOnly cookie that holds the signed session token: a browser-session cookie, gone when the browser
closes (shared workstations), unless "Keep me signed in on this computer" was ticked, when it lasts the session's
lifetime (``MEDEVAL_SESSION_LIFETIME``). The Streamlit script reads
that cookie on every rerun (``st.context.cookies``) and asks the database who it belongs
to, so a reload keeps you signed in and a sign-out or idle timeout ends it everywhere.

The cookie is ``SameSite=Lax``: it goes with ordinary same-site requests and top-level
links (a doctor opening a bookmarked link stays signed in), but not with cross-site
POSTs, frames, fetches or WebSockets, so another site cannot act through a doctor's
browser. ``Secure`` is set when the request came over HTTPS (terminate TLS at a proxy
that sets ``X-Forwarded-Proto``, and name that proxy in ``MEDEVAL_TRUSTED_PROXIES``: ``webui/proxy.py``).

Under load or attack: each client address has a budget of sign-in attempts (``SIGNIN_BURST``, then
one every ``SIGNIN_REFILL_S`` seconds; a successful sign-in gives its attempt back); the sign-ins run on
``SIGNIN_WORKERS`` threads of their own with at most ``SIGNIN_QUEUE`` waiting (``throttle.SigninPool``), so
a flood never takes the threads that serve the pages and check each websocket message, and one more is
refused at once (``SIGNIN_RESERVED`` of the places are kept for addresses that signed in here before);
password hashing is bounded per process; and repeated failures make that address wait
(``medeval.accounts.throttle``). The client address is the connection's, or what a trusted proxy says
(``webui/proxy.py``). Each of these answers 429 with ``Retry-After``; a database that
cannot be written (a full disk) answers 503 with a page that says so, never a 500.

Signing out is a same-site ``POST /signout`` (a GET could be triggered by any other site's link
or image); ``GET /signout`` only shows a page with a "Sign out" button, for old links.

These pages speak the reader's language (:func:`_language`): the one chosen on the sign-in page (``?lang=zh-CN`` or
``?lang=en``, its "中文 · English" links), remembered in the ``LANGUAGE_COOKIE`` for a year; else that cookie; else
``MEDEVAL_LANGUAGE`` (``auto``: the browser's ``Accept-Language``). A successful sign-in into an account that has a
language of its own writes that language into the cookie, so the pages after it (signed out, session ended) speak
it too; an account without one is left without one (the cookie's language applies in the app as well,
``webui.i18n.resolve``).
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import sqlite3
from urllib.parse import urlencode, urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from medeval.accounts import auth, throttle
from medeval.core import i18n, settings
from medeval.core.errors import MedevalError
from medeval.core.i18n import _, ngettext
from medeval.store.db import connect, pooled

from . import COOKIE_NAME, LANGUAGE_COOKIE, SIGNIN_PATH, SIGNOUT_PATH

# sign-in attempts per client address: a burst, then one more every few seconds (a success gives its one back)
SIGNIN_BURST = 10
SIGNIN_REFILL_S = 6.0
# sign-ins in progress per process: on threads of their own (as many as argon2 hashes may run at once), some waiting
SIGNIN_WORKERS = auth.HASH_GATE.slots
SIGNIN_QUEUE = 30  # a ward signing in at the same second waits a moment instead of getting 429
SIGNIN_RESERVED = 10  # of those places, kept for addresses that have signed in here before (a flood cannot take them)
# paths that are never sent to the sign-in form: Streamlit's own endpoints and assets, and the sign-in routes
# (``/media/`` has a guard of its own, ``webui/media.py``: only the session that owns a file gets it)
_OPEN_PREFIXES = ("/_stcore/", "/static/", "/media/", "/component/", "/app/static/", SIGNIN_PATH, SIGNOUT_PATH,
                  "/favicon")
_log = logging.getLogger("medeval.signin")
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600  # the sign-in page's language choice is remembered for a year

_SHELL = """<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · medeval</title>
<style>
 body{{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans CJK SC",sans-serif;background:#f6f7f9;
      margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center;color:#1f2430}}
 main{{background:#fff;padding:2rem 2.25rem;border-radius:10px;box-shadow:0 1px 4px #0002;width:min(22rem,90vw)}}
 h1{{font-size:1.35rem;margin:0 0 .25rem}} p.sub{{margin:0 0 1.25rem;color:#5b6270;font-size:.9rem}}
 label{{display:block;font-size:.85rem;margin:.9rem 0 .3rem}}
 input{{width:100%;box-sizing:border-box;padding:.55rem .6rem;font-size:1rem;border:1px solid #c5cad3;border-radius:6px}}
 label.keep{{display:flex;gap:.5rem;align-items:center;margin-top:1rem}} label.keep input{{width:auto;margin:0}}
 button{{margin-top:1.25rem;width:100%;padding:.6rem;font-size:1rem;border:0;border-radius:6px;background:#d33a2c;
        color:#fff;cursor:pointer}}
 .msg{{padding:.6rem .75rem;border-radius:6px;font-size:.9rem;margin-bottom:.5rem}}
 .err{{background:#fdecea;color:#8a1c12}} .ok{{background:#e8f5e9;color:#1b5e20}}
 .demo{{background:#fff4d6;color:#6b4e00}}
 nav.lang{{text-align:right;font-size:.85rem;color:#5b6270;margin:-.75rem -.75rem .25rem 0}}
 nav.lang a{{color:#5b6270}} nav.lang strong{{font-weight:600;color:#1f2430}}
</style></head>
<body><main>
{switch}<h1>medeval</h1><p class="sub">{sub}</p>
{messages}
{form}
</main></body></html>
"""

_SIGNIN_FORM = """<form method="post" action="{action}" autocomplete="on">
 <input type="hidden" name="next" value="{next}">
 <label for="username">{username_label}</label>
 <input id="username" name="username" autocomplete="username" required autofocus value="{username}">
 <label for="password">{password_label}</label>
 <input id="password" name="password" type="password" autocomplete="current-password" required>
 <label class="keep"><input type="checkbox" id="remember" name="remember" value="1"{remember}>
  {remember_label}</label>
 <button type="submit">{submit}</button>
</form>"""

_SIGNOUT_FORM = """<form method="post" action="{action}">
 <button type="submit" data-testid="medeval-signout-confirm">{submit}</button>
</form>"""


def _safe_next(value: str | None) -> str:
    """Only a path on this server (no open redirect to another site)."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or any(parts.path.startswith(p) for p in (SIGNIN_PATH, SIGNOUT_PATH)):
        return "/"
    return value


def _language(request: Request) -> str:
    """The language of our pages for this request: ``?lang=`` (the sign-in page's switch), else the language
    cookie (that choice, remembered; or the language of the account last signed in here), else
    ``MEDEVAL_LANGUAGE`` (``auto``: the browser's ``Accept-Language``)."""
    asked = i18n.normalize(request.query_params.get("lang"))
    if asked is not None:
        return asked
    cookie = i18n.normalize(request.cookies.get(LANGUAGE_COOKIE))
    return cookie or settings.default_language(request.headers.get("accept-language"))


def _remember_language(resp: Response, request: Request, lang: str) -> None:
    """Keep ``lang`` in the language cookie for a year (read by these pages and by the app, ``webui.i18n``)."""
    if i18n.normalize(request.cookies.get(LANGUAGE_COOKIE)) != lang:
        resp.set_cookie(LANGUAGE_COOKIE, lang, max_age=LANGUAGE_COOKIE_AGE, path="/", httponly=True,
                        samesite="lax", secure=request.url.scheme == "https")


def _switch(next_path: str) -> str:
    """The sign-in page's language links, each language named in itself; the one shown now is not a link."""
    links = []
    for lang in i18n.LANGUAGES:
        name = html.escape(i18n.NAMES[lang])
        if lang == i18n.current():
            links.append(f'<strong aria-current="true">{name}</strong>')
        else:
            query = urlencode({"lang": lang, **({"next": next_path} if next_path != "/" else {})})
            links.append(f'<a href="{SIGNIN_PATH}?{html.escape(query, quote=True)}" lang="{lang}" '
                         f'hreflang="{lang}">{name}</a>')
    return f'<nav class="lang" aria-label="Language / 语言">{" · ".join(links)}</nav>\n'


def _sentence(text: str) -> str:
    """A library's message (lower case, no full stop: the command line's style) as a sentence of the page."""
    text = text.strip()
    if not text:
        return text
    text = text[:1].upper() + text[1:]
    if text[-1] in ".。!！?？":
        return text
    return text + ("。" if i18n.current() == "zh-CN" else ".")


def _key() -> str:
    with connect(settings.db_path()) as db:
        return auth.secret_key(db)


def _session_user(request: Request):
    """The user of the request's session cookie, or None. Runs for every websocket message (webui/websocket.py):
    one connection, no migration check (the sign-in that issued the cookie has migrated the database)."""
    cookie = request.cookies.get(COOKIE_NAME)
    if not cookie:
        return None
    try:
        return _cookie_user(cookie, migrate=False)
    except sqlite3.OperationalError:  # a database without its schema yet (a cookie from before it was replaced)
        return _cookie_user(cookie, migrate=True)


def _cookie_user(cookie: str, *, migrate: bool):
    with (connect(settings.db_path()) if migrate else pooled(settings.db_path())) as db:
        token = auth.unsign_token(auth.secret_key(db), cookie)
        if token is None:
            return None
        return auth.session_user(db, token, idle_timeout=settings.idle_timeout())


def _html(*, title: str, sub: str, messages: list[tuple[str, str]], form: str, status: int,
          headers: dict | None = None, switch: str = "") -> Response:
    """One of our own small pages, in the current language; every text in ``messages`` is escaped (it may carry
    what a user typed)."""
    if settings.value("MEDEVAL_DEMO"):
        messages = [("demo", _("DEMO MODE: demo data and demo accounts (see the README)."))] + messages
    body = _SHELL.format(
        lang=i18n.current(), title=html.escape(title), sub=html.escape(sub), form=form, switch=switch,
        messages="".join(f'<div class="msg {kind}" role="alert">{html.escape(text)}</div>' for kind, text in messages))
    resp = HTMLResponse(body, status_code=status, headers=headers)
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Frame-Options"] = "DENY"
    resp.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; " \
                                              "frame-ancestors 'none'"
    return resp


def _page(*, messages: list[tuple[str, str]], next_path: str = "/", username: str = "", status: int = 200,
          retry_after: int | None = None, remember: bool = False) -> Response:
    """The sign-in form (with ``Retry-After`` when the answer is 'not now'); "keep me signed in" as it was sent."""
    form = _SIGNIN_FORM.format(action=SIGNIN_PATH, next=html.escape(next_path, quote=True),
                               username=html.escape(username, quote=True), remember=" checked" if remember else "",
                               username_label=html.escape(_("Username")), password_label=html.escape(_("Password")),
                               remember_label=html.escape(_("Keep me signed in on this computer")),
                               submit=html.escape(_("Sign in")))
    return _html(title=_("Sign in"), sub=_("Sign in to grade and review model answers."), messages=messages,
                 form=form, status=status, headers={"Retry-After": str(retry_after)} if retry_after else None,
                 switch=_switch(next_path))


def _unavailable(what: str, e: Exception) -> str:
    """A one-line reason for a 503 in the current language: what failed (``what``: already in that language, or
    "medeval") and who can fix it (the details go to the server log, in English)."""
    _log.error("%s failed: %s", what, e, exc_info=e)  # i18n: not text
    if isinstance(e, sqlite3.Error):
        reason = (_("the server's disk is full") if "full" in str(e).lower()
                  else _("the server's database cannot be read or written"))
        return _("{what} is unavailable: {reason}; tell the administrator.").format(what=what, reason=reason)
    return _("{what} is unavailable: {reason}").format(what=what, reason=e)


async def signin_form(request: Request) -> Response:
    lang = _language(request)
    with i18n.language(lang):
        messages = []
        if request.query_params.get("signed_out"):
            messages.append(("ok", _("You are signed out.")))
        if request.query_params.get("expired"):
            messages.append(("err", _("Your session ended. Sign in again to continue where you were.")))
        resp = _page(messages=messages, next_path=_safe_next(request.query_params.get("next")))
    if i18n.normalize(request.query_params.get("lang")) is not None:  # chosen on this page: remembered
        _remember_language(resp, request, lang)
    if request.cookies.get(COOKIE_NAME):
        try:
            stale = await run_in_threadpool(_session_user, request) is None
        except (sqlite3.Error, MedevalError):
            stale = False
        if stale:
            resp.delete_cookie(COOKIE_NAME, path="/")  # a stale cookie from an ended session
    return resp


def _same_origin(request: Request) -> bool:
    """A browser POSTing our own form sends Origin (or at least Referer) of this server."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if not origin:
        return True  # not a browser (curl, tests): no cross-site risk to guard against
    host = request.headers.get("host", "")
    return urlsplit(origin).netloc == host


def _client(request: Request) -> str:
    """The client's address: the connection's peer, or for a proxy named in MEDEVAL_TRUSTED_PROXIES the address
    it forwards (``webui/proxy.py`` has set ``request.client`` accordingly)."""
    return request.client.host if request.client else "unknown"


def _signin(username: str, password: str, address: str, lang: str = i18n.SOURCE) -> tuple[str, int, str | None]:
    """The signed cookie value of a new session, its lifetime in seconds and the account's own language (None:
    not chosen yet). On a sign-in thread of its own: a refusal's message is made in ``lang`` here."""
    with i18n.language(lang):
        lifetime = int(settings.session_lifetime())
        with connect(settings.db_path()) as db:
            user = auth.authenticate(db, username, password, address=address)
            return auth.sign_token(auth.secret_key(db), auth.create_session(db, user)), lifetime, user.language


def _signin_submit(limiter: throttle.AddressLimiter, pool: throttle.SigninPool, known: throttle.KnownAddresses):
    async def signin_submit(request: Request) -> Response:
        lang = _language(request)
        with i18n.language(lang):
            return await _submit(request, lang)

    async def _submit(request: Request, lang: str) -> Response:
        form = await request.form()
        username, password = str(form.get("username", "")), str(form.get("password", ""))
        next_path = _safe_next(str(form.get("next", "/")))
        remember = form.get("remember") == "1"
        if not _same_origin(request):
            return _page(messages=[("err", _("This sign-in form was sent from another site and was refused."))],
                         next_path=next_path, status=403)
        address = _client(request)
        if wait := limiter.take(address):  # before any database access or hashing
            text = ngettext("Too many sign-in attempts from this address; wait {n} second and try again.",
                            "Too many sign-in attempts from this address; wait {n} seconds and try again.",
                            wait).format(n=wait)
            return _page(messages=[("err", text)], next_path=next_path, username=username, status=429,
                         retry_after=wait, remember=remember)
        try:
            future = pool.submit(_signin, username, password, address, lang, known=address in known)
            cookie, max_age, own_language = await asyncio.wrap_future(future)
        except throttle.Busy as e:
            limiter.give_back(address)  # not this address's doing
            text = ngettext("Too many sign-in attempts at once; wait {n} second and try again.",
                            "Too many sign-in attempts at once; wait {n} seconds and try again.",
                            e.retry_after).format(n=e.retry_after)
            return _page(messages=[("err", text)], next_path=next_path, username=username, status=429,
                         retry_after=e.retry_after, remember=remember)
        except auth.Throttled as e:
            return _page(messages=[("err", _sentence(str(e)))], next_path=next_path,
                         username=username, status=429, retry_after=e.retry_after, remember=remember)
        except auth.AuthError as e:
            return _page(messages=[("err", _sentence(str(e)))], next_path=next_path,
                         username=username, status=401, remember=remember)
        except (MedevalError, sqlite3.Error) as e:
            return _page(messages=[("err", _unavailable(_("Sign-in"), e))], next_path=next_path, status=503)
        limiter.give_back(address)
        known.add(address)
        resp = RedirectResponse(next_path, status_code=303)
        # Unless asked to remember this computer, a browser-session cookie (no Max-Age, no Expires): on a shared
        # workstation closing the browser forgets it. The server ends the session on its own rules either way
        # (idle timeout, lifetime), so "keep me signed in" never outlives MEDEVAL_SESSION_LIFETIME.
        resp.set_cookie(COOKIE_NAME, cookie, max_age=max_age if remember else None, path="/", httponly=True,
                        samesite="lax", secure=request.url.scheme == "https")
        if own_language in i18n.LANGUAGES:  # the pages after this one (signed out, session ended) speak it too
            _remember_language(resp, request, own_language)
        return resp

    return signin_submit


def _signout(value: str | None) -> None:
    token = auth.unsign_token(_key(), value)
    with connect(settings.db_path()) as db:
        auth.logout(db, token)


def _signout_page(messages: list[tuple[str, str]], status: int) -> Response:
    return _html(title=_("Sign out"), sub=_("Sign out of medeval on this browser."), messages=messages,
                 form=_SIGNOUT_FORM.format(action=SIGNOUT_PATH, submit=html.escape(_("Sign out"))), status=status)


async def signout_form(request: Request) -> Response:
    """An old sign-out link (a GET, which any site can trigger): ask, with a button that POSTs."""
    if not request.cookies.get(COOKIE_NAME):
        return RedirectResponse(SIGNIN_PATH, status_code=303)
    with i18n.language(_language(request)):
        return _signout_page([], 200)


async def signout(request: Request) -> Response:
    """End the session on the server (not just in this browser) and forget the cookie: a same-site POST only."""
    with i18n.language(_language(request)):
        if not _same_origin(request):
            return _signout_page([("err", _("This sign-out was sent from another site and was refused."))], 403)
        try:
            await run_in_threadpool(_signout, request.cookies.get(COOKIE_NAME))
        except (MedevalError, sqlite3.Error) as e:
            return _signout_page([("err", _unavailable(_("Sign-out"), e))], 503)
    resp = RedirectResponse(f"{SIGNIN_PATH}?signed_out=1", status_code=303)
    resp.delete_cookie(COOKIE_NAME, path="/")
    return resp


class RequireSession:
    """ASGI middleware: a page load without a live session is sent to the sign-in form.

    This spares a signed-out browser the empty app shell; it is not the security boundary:
    the Streamlit script checks the session on every rerun, and every ``medeval`` function
    checks the role.
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or scope["path"].startswith(_OPEN_PREFIXES):
            return await self.app(scope, receive, send)
        request = Request(scope)
        if "text/html" not in request.headers.get("accept", ""):
            return await self.app(scope, receive, send)
        try:
            user = await run_in_threadpool(_session_user, request)
        except (MedevalError, sqlite3.Error) as e:
            with i18n.language(_language(request)):
                resp = _html(title=_("Unavailable"), sub="", messages=[("err", _unavailable("medeval", e))], form="",
                             status=503)
            return await resp(scope, receive, send)
        if user is None:
            path = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}" if scope.get("query_string") else "")
            query = {"next": _safe_next(path)}
            if request.cookies.get(COOKIE_NAME):
                query["expired"] = "1"
            resp = RedirectResponse(f"{SIGNIN_PATH}?{urlencode(query)}", status_code=303)
            return await resp(scope, receive, send)
        return await _with_server_address(self.app, scope, receive, send)


# Streamlit's page, opened at a page's own URL (/grade), looks for its server under that path first: it asks
# /grade/_stcore/health and /grade/_stcore/host-config, gets two 404s, and only then tries /. Telling it the server's
# address before its script runs (``window.__streamlit.BACKEND_BASE_URL``, read once when the script loads) makes
# it ask the right place first. Our own static text; the base path is the server's own setting.
_ADDRESS_JS = ("<script>window.__streamlit = Object.assign(window.__streamlit || {}, "
               "{BACKEND_BASE_URL: window.location.origin + %s});</script>")


def _address_script() -> bytes:
    import streamlit as st  # (loaded already by the server that calls this; not needed by the routes' own tests)

    base = "/" + (st.get_option("server.baseUrlPath") or "").strip("/")
    return (_ADDRESS_JS % json.dumps(base if base == "/" else base + "/").replace("</", "<\\/")).encode()


async def _with_server_address(app, scope, receive, send):
    """Pass a signed-in page load on, with the server's address written into Streamlit's HTML page (before its
    first script). The page is asked for uncompressed (it is small), so it can be read and rewritten whole."""
    scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]}
    start: dict = {}
    body: list[bytes] = []

    async def rewrite(message):
        if message["type"] == "http.response.start":
            content_type = dict(message.get("headers", [])).get(b"content-type", b"")
            if not content_type.startswith(b"text/html"):
                start["pass"] = True
                return await send(message)
            start["message"] = message
            return None
        if start.get("pass"):
            return await send(message)
        body.append(message.get("body", b""))
        if message.get("more_body"):
            return None
        page = b"".join(body)
        if b"<head>" in page:
            page = page.replace(b"<head>", b"<head>" + _address_script(), 1)
        headers = [(k, v) for k, v in start["message"].get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(page)).encode()))
        await send({**start["message"], "headers": headers})
        return await send({"type": "http.response.body", "body": page})

    return await app(scope, receive, rewrite)


def routes(limiter: throttle.AddressLimiter | None = None, pool: throttle.SigninPool | None = None) -> list[Route]:
    """The sign-in and sign-out routes; each call has its own per-address budget (``limiter``) and sign-in threads
    (``pool``)."""
    if limiter is None:
        limiter = throttle.AddressLimiter(SIGNIN_BURST, SIGNIN_REFILL_S)
    if pool is None:
        pool = throttle.SigninPool(SIGNIN_WORKERS, SIGNIN_QUEUE, reserved=SIGNIN_RESERVED)
    return [Route(SIGNIN_PATH, signin_form, methods=["GET"]),
            Route(SIGNIN_PATH, _signin_submit(limiter, pool, throttle.KnownAddresses()), methods=["POST"]),
            Route(SIGNOUT_PATH, signout_form, methods=["GET"]),
            Route(SIGNOUT_PATH, signout, methods=["POST"])]


def middleware() -> list[Middleware]:
    return [Middleware(RequireSession)]
