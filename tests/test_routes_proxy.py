"""Issue 23, item 2: X-Forwarded-For / X-Forwarded-Proto are believed only from proxies named in a setting.

The attack: uvicorn believed these headers from any peer on 127.0.0.1 -- any local process, or a proxy that
appends to the header instead of replacing it -- so a sender could claim any address, dodge the per-address
sign-in budget, spread failures over "several addresses" to lock someone's account, or fake https. Now
``webui.proxy.TrustedProxies`` applies the headers only for a peer in ``MEDEVAL_TRUSTED_PROXIES`` (empty by
default), and ``server.py`` switches uvicorn's own handling off. The address a sign-in is charged to is read
back from the audit log (``login.failed`` records it), as the throttle reads it.

The first tests drive the ASGI app (routes + middleware, as ``server.py`` stacks them) with a chosen peer; the
last ones replay the forgery against a real ``streamlit run server.py``.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlencode

import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from medeval.accounts import auth, throttle
from medeval.core import runtime, settings
from medeval.core.errors import MedevalError
from medeval.store.db import connect
from tests.test_routes import PW, _app_page, request
from webui import routes as web
from webui.proxy import TrustedProxies

LOCAL = ("127.0.0.1", 40000)  # a process on the server itself (or nginx)
PROXY_NET_PEER = ("10.0.8.3", 40000)


@pytest.fixture
def app(db_path, monkeypatch):
    from argon2 import PasswordHasher

    monkeypatch.setattr(runtime.current(), "hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))
    auth._dummy_hash.cache_clear()
    monkeypatch.delenv("MEDEVAL_TRUSTED_PROXIES", raising=False)
    with connect(db_path) as db:
        auth.add_user(db, "doc1", PW, "annotator")
    yield TrustedProxies(Starlette(routes=web.routes() + [Route("/{path:path}", _app_page)],
                                   middleware=web.middleware()))
    auth._dummy_hash.cache_clear()


def _fail(app, *, client=LOCAL, xff: str | None = None, proto: str | None = None, username="doc1"):
    headers = {}
    if xff is not None:
        headers["X-Forwarded-For"] = xff
    if proto is not None:
        headers["X-Forwarded-Proto"] = proto
    return request(app, "POST", "/signin", form={"username": username, "password": "wrong password!", "next": "/"},
                   client=client, headers=headers)


def _charged_to(db_path) -> list[str]:
    """The client address of every failed sign-in, oldest first (what the throttle and the lock-out count)."""
    with connect(db_path) as db:
        return [r[0] for r in db.conn.execute(
            "SELECT json_extract(detail, '$.address') FROM audit_log WHERE action = 'login.failed' ORDER BY id")]


def test_a_forged_x_forwarded_for_from_an_untrusted_local_peer_is_ignored(app, db_path):
    r = _fail(app, xff="203.0.113.9")
    assert r.status == 401
    assert _charged_to(db_path) == ["127.0.0.1"]


def test_a_forger_cannot_dodge_the_per_address_budget(app, db_path):
    """15 attempts, each claiming another address: the budget (10) is the peer's, so the rest are refused."""
    statuses = [_fail(app, xff=f"198.51.100.{i}", username=f"nobody{i}").status for i in range(15)]
    assert statuses == [401] * web.SIGNIN_BURST + [429] * (15 - web.SIGNIN_BURST)
    assert set(_charged_to(db_path)) == {"127.0.0.1"}


def test_a_forger_cannot_lock_a_user_out_by_claiming_several_addresses(app, db_path):
    """The lock-out needs failures from several addresses; forged ones all count as the one real peer."""
    for i in range(throttle.LOCKOUT_FAILURES + 2):
        _fail(app, xff=f"192.0.2.{i % 5}", client=("127.0.0.1", 41000 + i))
    with connect(db_path) as db:
        assert auth.locked_until(db, "doc1") is None
        assert throttle.lock_due(db, "doc1", 0) is None
    assert set(_charged_to(db_path)) == {"127.0.0.1"}
    ok = request(app, "POST", "/signin", form={"username": "doc1", "password": PW, "next": "/"},
                 client=("10.0.0.7", 5555))
    assert ok.status == 303  # the real user, from their own address, signs in


def test_a_forged_https_does_not_mark_the_cookie_secure(app):
    r = request(app, "POST", "/signin", form={"username": "doc1", "password": PW, "next": "/"}, client=LOCAL,
                headers={"X-Forwarded-Proto": "https"})
    assert r.status == 303
    assert "secure" not in r.header("set-cookie")[0].lower()


def test_a_named_proxy_is_believed(app, db_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", "127.0.0.1")
    _fail(app, xff="203.0.113.9")
    r = request(app, "POST", "/signin", form={"username": "doc1", "password": PW, "next": "/"}, client=LOCAL,
                headers={"X-Forwarded-For": "203.0.113.10", "X-Forwarded-Proto": "https"})
    assert r.status == 303 and "secure" in r.header("set-cookie")[0].lower()
    assert _charged_to(db_path) == ["203.0.113.9"]


def test_a_proxy_network_and_a_chain_of_proxies(app, db_path, monkeypatch):
    """For a trusted peer the client is the right-most address that is not itself a trusted proxy; an
    address the client put in front of the chain is not believed."""
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", "10.0.8.0/24, 127.0.0.1")
    _fail(app, client=PROXY_NET_PEER, xff="6.6.6.6, 198.51.100.7, 10.0.8.2")
    _fail(app, client=("10.0.9.1", 1), xff="203.0.113.9")  # outside the network: not a proxy of ours
    _fail(app, client=PROXY_NET_PEER)  # a trusted proxy that sent no header: the proxy's own address
    assert _charged_to(db_path) == ["198.51.100.7", "10.0.9.1", "10.0.8.3"]


def test_another_peer_than_the_named_proxy_is_not_believed(app, db_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", "10.0.8.5")
    _fail(app, xff="203.0.113.9")  # from 127.0.0.1, which is not named
    assert _charged_to(db_path) == ["127.0.0.1"]


@pytest.mark.parametrize("value, expected", [
    ("", ()), ("  ", ()), ("127.0.0.1", ("127.0.0.1",)), ("127.0.0.1, ::1", ("127.0.0.1", "::1")),
    ("10.0.8.0/24,", ("10.0.8.0/24",)), ("fd00::/8", ("fd00::/8",)),
])
def test_the_setting_parses(monkeypatch, value, expected):
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", value)
    assert settings.trusted_proxies() == expected


@pytest.mark.parametrize("value", ["*", "proxy.hospital.lan", "127.0.0.1, *", "10.0.8.0/33", "反向代理"])
def test_a_bad_setting_is_refused_with_a_clear_message(monkeypatch, value):
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", value)
    with pytest.raises(MedevalError, match="MEDEVAL_TRUSTED_PROXIES: .* is not an IP address or network"):
        settings.trusted_proxies()


# ---------------------------------------------------------------- a real server (uvicorn's own handling is off)

def _post_failed(port: int, xff: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/signin", urlencode({"username": "ann1", "password": "wrong password!", "next": "/"}),
                     {"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": xff,
                      "X-Forwarded-Proto": "https"})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def _last_failure_address(db) -> str:
    from tests import browser_support as bs

    rows = bs.query(db, "SELECT detail FROM audit_log WHERE action = 'login.failed' ORDER BY id DESC LIMIT 1")
    return json.loads(rows[0][0])["address"]


@pytest.mark.slow
@pytest.mark.parametrize("trusted, expected", [("", "127.0.0.1"), ("127.0.0.1", "203.0.113.77")])
def test_streamlit_run_server_py_believes_only_the_named_proxies(tmp_path, monkeypatch, trusted, expected):
    """uvicorn trusts X-Forwarded-For from 127.0.0.1 by default (FORWARDED_ALLOW_IPS); the real server must not."""
    from tests import browser_support as bs

    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", trusted)
    fx = bs.build_db(tmp_path)
    with bs.serving(fx, tmp_path) as server:
        assert _post_failed(server.port, "203.0.113.77") == 401
    assert _last_failure_address(fx.db) == expected


@pytest.mark.slow
def test_a_malformed_setting_stops_the_server_with_a_clear_message(tmp_path, monkeypatch):
    from tests import browser_support as bs

    monkeypatch.setenv("MEDEVAL_TRUSTED_PROXIES", "*")
    server = bs.Server(bs.build_db(tmp_path).db, tmp_path / "server.log")
    try:
        with pytest.raises(RuntimeError, match="exited"):
            server.wait_healthy(timeout=60)
        assert "MEDEVAL_TRUSTED_PROXIES: '*' is not an IP address or network" in server.log()
    finally:
        server.stop()
