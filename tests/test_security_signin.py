"""Issue 12: sign-in under attack, sign-out across sites, session lifetime, what the audit log keeps.

Each problem is replayed as it was found, through the real ASGI routes (``tests.test_routes.request``
with a client address of our choosing) or the library. Password hashing is replaced by a cheap or a
counting hasher where a test needs many hashes; the production argon2 cost is unchanged.
"""

import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
from argon2 import PasswordHasher
from argon2.exceptions import VerifyMismatchError
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.routing import Route

from medeval.accounts import auth, throttle
from medeval.cli import main as cli_main
from medeval.core import runtime, settings
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.store.db import connect
from tests.test_routes import HTML, PW, _app_page, request
from webui import COOKIE_NAME
from webui import routes as web

STRANGER = ("203.0.113.9", 4444)
REAL_USER = ("10.0.0.7", 5555)


@pytest.fixture
def cheap_hasher(monkeypatch):
    """argon2 at the lowest cost, so tests that need dozens of hashes stay fast (production cost is unchanged)."""
    monkeypatch.setattr(runtime.current(), "hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))
    auth._dummy_hash.cache_clear()
    yield
    auth._dummy_hash.cache_clear()


class CountingHasher:
    """Counts verifications in flight at once (each holds on a moment so that overlapping ones would show)."""

    def __init__(self):
        self.lock, self.in_flight, self.peak, self.calls = threading.Lock(), 0, 0, 0

    def verify(self, stored, password):
        with self.lock:
            self.in_flight += 1
            self.calls += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(0.05)
            raise VerifyMismatchError()
        finally:
            with self.lock:
                self.in_flight -= 1

    def hash(self, password):
        return "$argon2id$v=19$m=8,t=1,p=1$fake$fake"

    def check_needs_rehash(self, stored):
        return False


@pytest.fixture
def counting_hasher(monkeypatch):
    h = CountingHasher()
    monkeypatch.setattr(runtime.current(), "hasher", h)
    auth._dummy_hash.cache_clear()
    yield h
    auth._dummy_hash.cache_clear()


def _make_app(limiter=None):
    return Starlette(routes=web.routes(limiter=limiter) + [Route("/{path:path}", _app_page)],
                     middleware=web.middleware())


@pytest.fixture
def app(db_path, cheap_hasher):
    with connect(db_path) as db:
        auth.add_user(db, "admin1", PW + "#", "admin")
        auth.add_user(db, "doc1", PW, "annotator")
    return _make_app()


def _sign_in(app, username="doc1", password=PW, client=REAL_USER, **kw):
    return request(app, "POST", "/signin", form={"username": username, "password": password, "next": "/"},
                   client=client, **kw)


def _retry_after(r) -> int:
    values = r.header("retry-after")
    assert values, "a 429 must say when to retry"
    return int(values[0])


# ------------------------------------------------------------------ 2. sign-in can exhaust memory

def test_forty_concurrent_sign_ins_hash_at_most_two_at_once(db_path, counting_hasher):
    """40 anonymous sign-ins at once (unknown usernames, 40 addresses): never more than 2 argon2 hashes in flight."""
    app = _make_app()
    with ThreadPoolExecutor(max_workers=40) as pool:
        results = list(pool.map(lambda i: _sign_in(app, f"nobody{i}", "guess guess guess",
                                                   client=(f"198.51.100.{i + 1}", 1000 + i)), range(40)))
    assert counting_hasher.calls > 0
    assert counting_hasher.peak <= auth.HASH_GATE.slots == 2
    assert {r.status for r in results} <= {401, 429}
    for r in results:
        if r.status == 429:  # busy: a clear page and when to come back, never a 500
            assert _retry_after(r) >= 1 and "wait" in r.body


def test_one_address_gets_429_after_its_budget(db_path, counting_hasher):
    """40 concurrent sign-ins from one address: only its budget reaches the hasher, the rest get 429 at once."""
    clock = [1000.0]
    limiter = throttle.AddressLimiter(capacity=10, refill_s=6, clock=lambda: clock[0])
    app = _make_app(limiter)
    with ThreadPoolExecutor(max_workers=40) as pool:
        results = list(pool.map(lambda i: _sign_in(app, f"nobody{i}", "guess guess guess", client=STRANGER),
                                range(40)))
    statuses = sorted(r.status for r in results)
    assert statuses == [401] * 10 + [429] * 30
    assert counting_hasher.calls == 10  # the 30 refused ones cost no hash
    refused = next(r for r in results if r.status == 429)
    assert "Too many sign-in attempts from this address; wait 6 seconds" in refused.body
    assert _retry_after(refused) == 6 and refused.header("cache-control") == ["no-store"]
    # another address is not affected, and the budget comes back with time
    assert _sign_in(app, "nobody-else", "guess guess guess", client=REAL_USER).status == 401
    clock[0] += 6
    later = _sign_in(app, "nobody-later", "guess guess guess", client=STRANGER)
    assert later.status == 401, later.body


def test_address_limiter_refills_and_forgets():
    clock = [0.0]
    lim = throttle.AddressLimiter(capacity=2, refill_s=10, clock=lambda: clock[0], max_addresses=3)
    assert lim.take("a") == 0 and lim.take("a") == 0
    assert lim.take("a") == 10  # seconds until the next attempt
    clock[0] = 4
    assert lim.take("a") == 6
    lim.give_back("a")  # a successful sign-in does not use up the budget
    assert lim.take("a") == 0
    for name in "bcdefg":  # memory stays bounded under many addresses
        lim.take(name)
    assert len(lim) <= 3


def test_hash_gate_refuses_when_busy():
    gate = throttle.HashGate(slots=1, wait_s=0.01)
    held = gate.slot()
    held.__enter__()  # the only slot is taken
    with pytest.raises(throttle.Busy, match="wait") as e, gate.slot():
        pass
    held.__exit__(None, None, None)
    assert e.value.retry_after >= 1
    with gate.slot():  # released again
        pass


# ------------------------------------------------------------------ 3. anyone can lock out a real user

def test_ten_failures_from_a_stranger_do_not_lock_out_the_real_user(app, db_path):
    statuses = [_sign_in(app, password="wrong password", client=STRANGER).status for _ in range(10)]
    assert statuses == [401] * auth.BACKOFF_AFTER + [429] * (10 - auth.BACKOFF_AFTER)
    refused = _sign_in(app, client=STRANGER)  # that address waits, even with the right password
    assert refused.status == 429 and "wait" in refused.body and _retry_after(refused) >= 1
    ok = _sign_in(app, client=REAL_USER)  # the real user, from another address, signs in
    assert ok.status == 303 and ok.cookie()[COOKIE_NAME].value
    with connect(db_path) as db:
        rows = auth.audit_rows(db)
    assert "login.locked_out" not in [r["action"] for r in rows]
    assert STRANGER[0] in rows[-3]["detail"]  # the audit record says where the attempts came from


def test_backoff_doubles_and_a_success_resets_it(db, cheap_hasher):
    auth.add_user(db, "doc1", PW, "annotator")
    t = 1_000_000.0
    for _ in range(auth.BACKOFF_AFTER):
        with pytest.raises(auth.AuthError, match="wrong username or password"):
            auth.authenticate(db, "doc1", "wrong password", address="a", now=t)
    waits = []
    for _ in range(3):
        with pytest.raises(auth.Throttled) as e:
            auth.authenticate(db, "doc1", PW, address="a", now=t)
        waits.append(e.value.retry_after)
        t += e.value.retry_after  # wait as told, then fail once more
        with pytest.raises(auth.AuthError, match="wrong username or password"):
            auth.authenticate(db, "doc1", "wrong password", address="a", now=t)
    assert waits == [auth.BACKOFF_BASE_S, 2 * auth.BACKOFF_BASE_S, 4 * auth.BACKOFF_BASE_S]
    with pytest.raises(auth.Throttled):
        auth.authenticate(db, "doc1", PW, address="a", now=t)
    t += 8 * auth.BACKOFF_BASE_S
    assert auth.authenticate(db, "doc1", PW, address="a", now=t).username == "doc1"
    with pytest.raises(auth.AuthError, match="wrong username or password"):  # a success starts afresh
        auth.authenticate(db, "doc1", "wrong password", address="a", now=t)


def _distributed_attack(db, username="doc1", t=None):
    """LOCKOUT_FAILURES failed sign-ins for ``username``, BACKOFF_AFTER from each of several addresses."""
    t = time.time() if t is None else t
    n = 0
    for a in range(auth.LOCKOUT_ADDRESSES + 1):
        for _ in range(auth.BACKOFF_AFTER):
            if n == auth.LOCKOUT_FAILURES:
                return
            with pytest.raises(auth.AuthError):
                auth.authenticate(db, username, "wrong password", address=f"192.0.2.{a}", now=t)
            n += 1


def test_failures_from_several_addresses_lock_the_username_until_an_admin_unlocks(db, cheap_hasher):
    admin = auth.add_user(db, "admin1", PW + "#", "admin")
    doc = auth.add_user(db, "doc1", PW, "annotator")
    assert auth.LOCKOUT_ADDRESSES >= 3 and auth.LOCKOUT_FAILURES >= 20
    t = float(int(time.time()))  # unlock() acts now, so the attack is now too
    _distributed_attack(db, t=t)
    with pytest.raises(auth.Throttled, match="locked") as e:  # the real user too, from a fresh address
        auth.authenticate(db, "doc1", PW, address="10.0.0.7", now=t)
    assert 0 < e.value.retry_after <= auth.LOCKOUT_WINDOW_S
    assert auth.locked_until(db, "doc1", now=t) == pytest.approx(t + auth.LOCKOUT_WINDOW_S, abs=1)
    actions = [r["action"] for r in auth.audit_rows(db)]
    assert actions.count("login.locked_out") == 1  # one record an admin sees
    with pytest.raises(PermissionDenied):
        auth.unlock(db, "doc1", actor=doc)
    assert auth.unlock(db, "doc1", actor=admin) is True
    assert auth.locked_until(db, "doc1", now=t) is None
    assert auth.authenticate(db, "doc1", PW, address="10.0.0.7", now=t).username == "doc1"
    assert auth.unlock(db, "doc1", actor=admin) is False  # nothing to unlock
    assert next(r for r in auth.audit_rows(db) if r["action"] == "user.unlock")["actor"] == "admin1"
    # the lock also ends by itself when its time is over
    _distributed_attack(db, t=t + 1)
    assert auth.locked_until(db, "doc1", now=t + 1) is not None
    assert auth.locked_until(db, "doc1", now=t + 2 + auth.LOCKOUT_WINDOW_S) is None


def test_reset_password_on_the_command_line_unlocks(db, db_path, cheap_hasher):
    auth.add_user(db, "doc1", PW, "annotator")
    _distributed_attack(db, t=time.time())
    with pytest.raises(auth.Throttled, match="locked"):
        auth.authenticate(db, "doc1", PW, address="10.0.0.7")
    res = CliRunner().invoke(cli_main, ["users", "reset-password", "doc1", "--db", str(db_path)],
                             input="a brand new passphrase\n", catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert auth.authenticate(db, "doc1", "a brand new passphrase", address="10.0.0.7").username == "doc1"


def test_cli_unlock(db, db_path, cheap_hasher):
    auth.add_user(db, "doc1", PW, "annotator")
    _distributed_attack(db, t=time.time())
    res = CliRunner().invoke(cli_main, ["users", "unlock", "doc1", "--db", str(db_path)], catch_exceptions=False)
    assert res.exit_code == 0 and "unlocked" in res.output
    assert auth.authenticate(db, "doc1", PW, address="10.0.0.7").username == "doc1"
    res = CliRunner().invoke(cli_main, ["users", "unlock", "nobody", "--db", str(db_path)])
    assert res.exit_code == 1 and "Error: no user 'nobody'" in res.output


def test_a_locked_username_gets_429_over_http(app, db_path):
    with connect(db_path) as db:
        _distributed_attack(db, t=time.time())
    r = _sign_in(app, client=REAL_USER)
    assert r.status == 429 and "locked" in r.body and "administrator" in r.body and not r.header("set-cookie")
    assert _retry_after(r) > 60


# ------------------------------------------------------------------ 10a. sign-out only by a same-site POST

def test_a_cross_site_get_signout_does_not_end_the_session(app, db_path):
    value = _sign_in(app).cookie()[COOKIE_NAME].value
    r = request(app, "GET", "/signout", cookie=value, headers={**HTML, "referer": "https://evil.example/x"})
    assert r.status == 200 and not r.header("set-cookie")
    assert 'method="post"' in r.body and 'action="/signout"' in r.body  # an old link shows a Sign out button
    assert request(app, "GET", "/", cookie=value, headers=HTML).status == 200  # still signed in
    with connect(db_path) as db:
        assert db.conn.execute("SELECT ended_at FROM sessions").fetchone()[0] is None


def test_a_post_signout_from_another_site_is_refused(app, db_path):
    value = _sign_in(app).cookie()[COOKIE_NAME].value
    r = request(app, "POST", "/signout", cookie=value, form={}, headers={"origin": "https://evil.example"})
    assert r.status == 403 and "another site" in r.body and not r.header("set-cookie")
    assert request(app, "GET", "/", cookie=value, headers=HTML).status == 200
    ok = request(app, "POST", "/signout", cookie=value, form={}, headers={"origin": "http://testserver"})
    assert ok.status == 303 and ok.location == "/signin?signed_out=1"
    assert request(app, "GET", "/", cookie=value, headers=HTML).status == 303


def test_get_signout_without_a_session_goes_to_the_sign_in_form(app):
    r = request(app, "GET", "/signout", headers=HTML)
    assert r.status == 303 and r.location.startswith("/signin")


# ------------------------------------------------------------------ 10b. an absolute session lifetime

def test_a_session_older_than_its_lifetime_ends_even_when_active(db):
    doc = auth.add_user(db, "doc1", PW, "annotator")
    token = auth.create_session(db, doc)
    t0 = db.conn.execute("SELECT created_at FROM sessions").fetchone()[0]
    t = t0
    while t + 1500 < t0 + 3600:  # busy all along: the idle clock never runs out
        t += 1500
        assert auth.session_user(db, token, idle_timeout=1800, lifetime=3600, now=t).username == "doc1"
    assert auth.session_user(db, token, idle_timeout=1800, lifetime=3600, now=t0 + 3601) is None
    row = db.conn.execute("SELECT ended_at, end_reason FROM sessions").fetchone()
    assert row[0] is not None and row[1] == "lifetime"
    assert auth.session_user(db, token, idle_timeout=10**9, lifetime=10**9, now=t0 + 3602) is None  # ended for good
    assert "session.lifetime" in [r["action"] for r in auth.audit_rows(db)]


def test_the_lifetime_comes_from_the_setting(db, monkeypatch):
    doc = auth.add_user(db, "doc1", PW, "annotator")
    token = auth.create_session(db, doc)
    t0 = db.conn.execute("SELECT created_at FROM sessions").fetchone()[0]
    assert settings.session_lifetime() == 43200
    monkeypatch.setenv("MEDEVAL_SESSION_LIFETIME", "600")
    assert settings.session_lifetime() == 600
    assert auth.session_user(db, token, idle_timeout=10**6, now=t0 + 599).username == "doc1"
    assert auth.session_user(db, token, idle_timeout=10**6, now=t0 + 601) is None
    for bad in ("abc", "0", "-5"):
        monkeypatch.setenv("MEDEVAL_SESSION_LIFETIME", bad)
        with pytest.raises(MedevalError, match="MEDEVAL_SESSION_LIFETIME must be a positive number"):
            settings.session_lifetime()


def test_an_old_session_is_sent_to_sign_in_over_http(app, db_path, monkeypatch):
    value = _sign_in(app).cookie()[COOKIE_NAME].value
    with connect(db_path) as db:  # signed in 13 hours ago, active a minute ago
        db.conn.execute("UPDATE sessions SET created_at = created_at - 13 * 3600, last_seen = last_seen - 60")
    r = request(app, "GET", "/grade", cookie=value, headers=HTML)
    assert r.status == 303 and "expired=1" in r.location
    with connect(db_path) as db:
        assert db.conn.execute("SELECT end_reason FROM sessions").fetchone()[0] == "lifetime"


# ------------------------------------------------------------------ 10c. no raw unknown username in the audit log

def test_a_password_typed_as_username_is_not_logged_in_clear(app, db_path):
    typed = "Tr0ub4dor&3-mine"
    assert _sign_in(app, username=typed, password="").status == 401
    assert _sign_in(app, username=typed.upper(), password="x", client=STRANGER).status == 401
    with connect(db_path) as db:
        rows = [r for r in auth.audit_rows(db) if r["action"] == "login.failed"]
        label = auth.unknown_user_label(db, typed)
    dump = repr(rows)
    assert typed not in dump and typed.upper() not in dump and typed.lower() not in dump
    assert label.startswith("unknown user ") and len(label) == len("unknown user ") + 12
    assert [(r["actor"], r["target"]) for r in rows] == [(label, label)] * 2  # repeated attempts correlate


# ------------------------------------------------------------------ 7. a full disk gives 503, not 500

def test_a_full_disk_gives_503_not_500(app, db_path, monkeypatch):
    def full(db, user):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(auth, "create_session", full)
    r = _sign_in(app)
    assert r.status == 503 and not r.header("set-cookie")
    assert "Sign-in is unavailable: the server&#x27;s disk is full; tell the administrator" in r.body


def _read_only(real_connect):
    """``connect`` whose connections refuse every write (as a read-only or failing disk would)."""
    @contextmanager
    def read_only(*a, **kw):
        with real_connect(*a, **kw) as d:
            d.conn.execute("PRAGMA query_only = 1")
            try:
                yield d
            finally:
                d.conn.execute("PRAGMA query_only = 0")  # a pooled connection goes back to the pool writable

    return read_only


def test_a_database_that_cannot_be_written_gives_503(app, db_path, monkeypatch):
    with connect(db_path) as db:
        before = db.conn.execute("SELECT count(*) FROM audit_log").fetchone()[0]
    monkeypatch.setattr(web, "connect", _read_only(web.connect))
    r = _sign_in(app, password="wrong password")  # its audit record cannot be written
    assert r.status == 503 and "Sign-in is unavailable" in r.body and "tell the administrator" in r.body
    with connect(db_path) as db:
        assert db.conn.execute("SELECT count(*) FROM audit_log").fetchone()[0] == before


def test_a_page_load_on_a_database_that_cannot_be_written_gives_503(app, db_path, monkeypatch):
    value = _sign_in(app).cookie()[COOKIE_NAME].value
    with connect(db_path) as db:  # the next page load must write last_seen
        db.conn.execute("UPDATE sessions SET last_seen = last_seen - 600")
    monkeypatch.setattr(web, "connect", _read_only(web.connect))
    monkeypatch.setattr(web, "pooled", _read_only(web.pooled))  # the page-load check takes a pooled connection
    r = request(app, "GET", "/grade", cookie=value, headers=HTML)
    assert r.status == 503 and "cannot be read or written; tell the administrator" in r.body


# ------------------------------------------------------------------ the Users page: Unlock

@pytest.mark.slow  # AppTest runs the whole Users page
def test_users_page_unlocks_a_locked_user(db_path, cheap_hasher):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT
    from webui.page import TEST_TOKEN_KEY

    with connect(db_path) as db:
        admin = auth.add_user(db, "admin1", PW + "#", "admin")
        auth.add_user(db, "doc1", PW, "annotator")
        _distributed_attack(db, t=time.time())
        token = auth.create_session(db, admin)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state[TEST_TOKEN_KEY] = token
    at.run()
    assert not at.exception and at.title[0].value == "Users & audit"
    at.selectbox(key="edit_user").set_value("doc1").run()
    assert any("locked" in c.value for c in at.caption)
    at.button(key="unlock_user").click().run()
    assert not at.exception and any("doc1 unlocked" in s.value for s in at.success)
    with connect(db_path) as db:
        assert auth.locked_until(db, "doc1") is None
        assert auth.authenticate(db, "doc1", PW, address="10.0.0.7").username == "doc1"
