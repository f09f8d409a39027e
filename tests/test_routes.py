"""The sign-in routes and the page-load guard, called as a real ASGI app (no server, no browser).

A tiny ASGI client stands in for httpx (not installed): it sends one request through
Starlette's routing and middleware and collects the status, headers and body.
"""

import asyncio
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from medeval.accounts import auth
from medeval.store.db import connect
from webui import COOKIE_NAME
from webui.routes import _safe_next, middleware, routes

PW = "correct horse battery"


async def _app_page(request):
    return PlainTextResponse("the app shell")


@pytest.fixture
def app(db_path):
    with connect(db_path) as db:
        auth.add_user(db, "doc1", PW, "annotator")
    return Starlette(routes=routes() + [Route("/{path:path}", _app_page)], middleware=middleware())


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body.decode()

    def header(self, name):
        return [v for k, v in self.headers if k == name]

    @property
    def location(self):
        return self.header("location")[0]

    def cookie(self):
        jar = SimpleCookie()
        for v in self.header("set-cookie"):
            jar.load(v)
        return jar


def request(app, method, path, *, form=None, cookie=None, headers=None, client=("127.0.0.1", 1234)) -> Response:
    body = urlencode(form).encode() if form is not None else b""
    path, _, query = path.partition("?")
    hdrs = [(b"host", b"testserver")] + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    if form is not None:
        hdrs.append((b"content-type", b"application/x-www-form-urlencoded"))
    if cookie:
        hdrs.append((b"cookie", f"{COOKIE_NAME}={cookie}".encode()))
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "query_string": query.encode(),
             "headers": hdrs, "scheme": "http", "server": ("testserver", 80), "client": client,
             "root_path": "", "http_version": "1.1", "asgi": {"version": "3.0"}}
    sent, out = [False], {"status": None, "headers": [], "body": b""}

    async def receive():
        if sent[0]:
            return {"type": "http.disconnect"}
        sent[0] = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = [(k.decode().lower(), v.decode()) for k, v in message["headers"]]
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    asyncio.run(app(scope, receive, send))
    return Response(out["status"], out["headers"], out["body"])


HTML = {"accept": "text/html,application/xhtml+xml"}


def _sign_in(app, username="doc1", password=PW, next_path="/"):
    return request(app, "POST", "/signin", form={"username": username, "password": password, "next": next_path})


def test_a_page_load_without_a_session_goes_to_the_sign_in_form(app):
    r = request(app, "GET", "/grade?x=1", headers=HTML)
    assert r.status == 303
    loc = urlsplit(r.location)
    assert loc.path == "/signin" and parse_qs(loc.query) == {"next": ["/grade?x=1"]}
    form = request(app, "GET", r.location)
    assert form.status == 200 and 'name="password"' in form.body and 'value="/grade?x=1"' in form.body
    assert "DENY" in form.header("x-frame-options")
    # assets and Streamlit's own endpoints are not redirected (they hold no data)
    assert request(app, "GET", "/_stcore/health", headers=HTML).status == 200
    assert request(app, "GET", "/static/js/index.js").status == 200


def test_wrong_password_gives_401_and_no_cookie(app, db_path):
    r = _sign_in(app, password="wrong password")
    assert r.status == 401 and not r.header("set-cookie")
    assert "Wrong username or password" in r.body and 'value="doc1"' in r.body
    r = _sign_in(app, username="nobody")
    assert r.status == 401 and "Wrong username or password" in r.body  # same answer for unknown users
    with connect(db_path) as db:
        assert [a["action"] for a in auth.audit_rows(db)][-2:] == ["login.failed", "login.failed"]
        assert PW not in str(auth.audit_rows(db)) and "wrong password" not in str(auth.audit_rows(db))


def test_sign_in_sets_a_signed_httponly_cookie_and_the_page_loads(app, db_path):
    r = _sign_in(app, next_path="/grade")
    assert r.status == 303 and r.location == "/grade"
    morsel = r.cookie()[COOKIE_NAME]
    assert morsel["httponly"] and morsel["samesite"].lower() == "lax" and morsel["path"] == "/"
    assert not morsel["secure"]  # plain http here; set when the request came over https
    value = morsel.value
    with connect(db_path) as db:
        token = auth.unsign_token(auth.secret_key(db), value)
        assert auth.session_user(db, token).username == "doc1"
        # only the token's hash is stored
        assert not db.conn.execute("SELECT 1 FROM sessions WHERE token_hash = ?", (token,)).fetchone()
    page = request(app, "GET", "/grade", cookie=value, headers=HTML)
    assert page.status == 200 and page.body == "the app shell"
    # a tampered cookie is rejected before any lookup
    tampered = value[:-2] + ("AA" if not value.endswith("AA") else "BB")
    assert request(app, "GET", "/grade", cookie=tampered, headers=HTML).status == 303


def test_the_cookie_outlives_the_browser_only_when_asked(app, db_path, monkeypatch):
    """Shared workstations: a browser-session cookie (no Max-Age, no Expires) unless "Keep me signed in on this
    computer" is ticked; the server's own rules (lifetime, idle timeout) hold either way."""
    form = request(app, "GET", "/signin").body
    assert 'name="remember"' in form and "Keep me signed in on this computer" in form
    assert 'value="1">' in form and "checked" not in form  # unticked by default

    plain = _sign_in(app)
    assert plain.status == 303
    raw = plain.header("set-cookie")[0].lower()
    assert "max-age" not in raw and "expires" not in raw and "httponly" in raw
    kept = request(app, "POST", "/signin", form={"username": "doc1", "password": PW, "next": "/", "remember": "1"})
    morsel = kept.cookie()[COOKIE_NAME]
    assert kept.status == 303 and int(morsel["max-age"]) == 43200  # MEDEVAL_SESSION_LIFETIME's default, 12 h
    assert morsel["httponly"] and morsel["samesite"].lower() == "lax"

    # a refused attempt gives the form back with the box as it was sent
    again = request(app, "POST", "/signin", form={"username": "doc1", "password": "wrong password", "remember": "1"})
    assert again.status == 401 and 'value="1" checked>' in again.body
    assert "checked" not in _sign_in(app, password="wrong password").body

    # the browser-session cookie's session still ends on the server after its lifetime, however active
    value = plain.cookie()[COOKIE_NAME].value
    assert request(app, "GET", "/", cookie=value, headers=HTML).status == 200
    monkeypatch.setenv("MEDEVAL_SESSION_LIFETIME", "60")
    with connect(db_path) as db:
        db.conn.execute("UPDATE sessions SET created_at = created_at - 120")
        db.conn.commit()
    assert "expired=1" in request(app, "GET", "/", cookie=value, headers=HTML).location


def test_sign_out_ends_the_session_on_the_server(app, db_path):
    value = _sign_in(app).cookie()[COOKIE_NAME].value
    r = request(app, "POST", "/signout", cookie=value, form={}, headers={"origin": "http://testserver"})
    assert r.status == 303 and r.location == "/signin?signed_out=1"
    assert r.cookie()[COOKIE_NAME].value == ""  # told to forget it
    # the old cookie is dead even if a copy is replayed
    again = request(app, "GET", "/", cookie=value, headers=HTML)
    assert again.status == 303 and "expired=1" in again.location
    with connect(db_path) as db:
        assert db.conn.execute("SELECT end_reason FROM sessions").fetchone()[0] == "logout"
    assert "You are signed out" in request(app, "GET", "/signin?signed_out=1").body


def test_an_idle_session_is_ended(app, db_path, monkeypatch):
    value = _sign_in(app).cookie()[COOKIE_NAME].value
    with connect(db_path) as db:
        db.conn.execute("UPDATE sessions SET last_seen = last_seen - 3600")
        db.conn.commit()
    monkeypatch.setenv("MEDEVAL_IDLE_TIMEOUT", "1800")
    r = request(app, "GET", "/", cookie=value, headers=HTML)
    assert r.status == 303 and "expired=1" in r.location
    assert "Your session ended" in request(app, "GET", r.location, cookie=value).body
    with connect(db_path) as db:
        assert db.conn.execute("SELECT end_reason FROM sessions").fetchone()[0] == "idle timeout"


def test_cross_site_form_posts_are_refused(app):
    r = request(app, "POST", "/signin", form={"username": "doc1", "password": PW},
                headers={"origin": "https://evil.example"})
    assert r.status == 403 and not r.header("set-cookie")
    ok = request(app, "POST", "/signin", form={"username": "doc1", "password": PW},
                 headers={"origin": "http://testserver"})
    assert ok.status == 303


@pytest.mark.parametrize("given, expected", [
    ("/grade", "/grade"), ("/campaigns?x=1", "/campaigns?x=1"), ("https://evil.example/", "/"),
    ("//evil.example/", "/"), ("/\\evil.example", "/"), ("", "/"), (None, "/"), ("grade", "/"),
    ("/signout", "/"), ("/signin?next=/x", "/"),
])
def test_next_is_always_a_local_path(given, expected):
    assert _safe_next(given) == expected


def test_repeated_failures_make_that_address_wait(app, db_path):
    for _ in range(auth.BACKOFF_AFTER):
        assert _sign_in(app, password="wrong password").status == 401
    r = _sign_in(app)  # even the right password, from this address
    assert r.status == 429 and "too many failed sign-ins" in r.body.lower() and not r.header("set-cookie")
    # the wait counts from the last failure, so a slow machine may already have used a few seconds of it
    assert auth.BACKOFF_BASE_S - 10 <= int(r.header("retry-after")[0]) <= auth.BACKOFF_BASE_S
    with connect(db_path) as db:
        last = auth.audit_rows(db)[-1]
    assert last["action"] == "login.refused" and '"backoff"' in last["detail"]
