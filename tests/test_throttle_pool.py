"""Issue 23, item 1: a flood of sign-ins must not stall grading, and a full queue answers 429 + Retry-After at once.

The cause, reproduced: ``POST /signin`` ran its argon2 check with ``run_in_threadpool``, on the same pool of
threads (anyio's default limiter, 40 per event loop) that serves the page loads and checks the session of
every websocket message (``webui/websocket.py``). With two hashes allowed at a time and each waiting up to
10 s for one, 60-100 concurrent sign-ins took every thread: a grade's per-message check waited behind them
(seconds), and the 429 came only after the 10 s wait. Now the sign-ins run on a pool of their own
(``throttle.SigninPool``: as many threads as hashes may run, at most ``SIGNIN_QUEUE`` waiting), and one more
is refused at once. The last ``SIGNIN_RESERVED`` places are kept for addresses that have signed in before, so
a flood from new addresses does not keep the people who work here out.

The tests hold every password check on an event, so what is in flight is known exactly (no timing is
asserted; the figures are in bench/bench_signin_flood.py).
"""

from __future__ import annotations

import asyncio
import threading
from urllib.parse import urlencode

import anyio.to_thread
import pytest
from argon2.exceptions import VerifyMismatchError
from starlette.applications import Starlette
from starlette.routing import Route

from medeval.accounts import auth, throttle
from medeval.core import runtime
from medeval.store.db import connect
from tests.test_routes import PW, Response, _app_page
from webui import routes as web

HELD_S = 30  # a held check is released by the test long before this; it only keeps a broken test from hanging


class HeldHasher:
    """argon2 stand-in whose checks wait until ``gate`` is set (then only ``PW`` matches); counts those waiting."""

    def __init__(self):
        self.gate, self.lock, self.waiting, self.calls = threading.Event(), threading.Lock(), 0, 0

    def verify(self, stored, password):
        with self.lock:
            self.waiting += 1
            self.calls += 1
        try:
            self.gate.wait(HELD_S)
            if password != PW:
                raise VerifyMismatchError()
            return True
        finally:
            with self.lock:
                self.waiting -= 1

    def hash(self, password):
        return "$argon2id$v=19$m=8,t=1,p=1$ZmFrZXNhbHQ$ZmFrZWhhc2g"

    def check_needs_rehash(self, stored):
        return False


@pytest.fixture
def held(monkeypatch, db_path):
    h = HeldHasher()
    with connect(db_path) as db:
        auth.add_user(db, "doc1", PW, "annotator")
    monkeypatch.setattr(runtime.current(), "hasher", h)
    auth._dummy_hash.cache_clear()
    yield h
    h.gate.set()
    auth._dummy_hash.cache_clear()


async def _post_signin(app, username: str, password: str, client: tuple[str, int]) -> Response:
    """One ``POST /signin`` through the ASGI app, on the running event loop (tests.test_routes.request, async)."""
    body = urlencode({"username": username, "password": password, "next": "/"}).encode()
    scope = {"type": "http", "method": "POST", "path": "/signin", "raw_path": b"/signin", "query_string": b"",
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/x-www-form-urlencoded")],
             "scheme": "http", "server": ("testserver", 80), "client": client, "root_path": "",
             "http_version": "1.1", "asgi": {"version": "3.0"}}
    sent, out = [False], {"status": None, "headers": [], "body": b""}

    async def receive():
        if sent[0]:
            await asyncio.sleep(3600)  # no disconnect while the answer is awaited
        sent[0] = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = [(k.decode().lower(), v.decode()) for k, v in message["headers"]]
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return Response(out["status"], out["headers"], out["body"])


def _app(pool=None):
    return Starlette(routes=web.routes(pool=pool) + [Route("/{path:path}", _app_page)], middleware=web.middleware())


async def _until(predicate, what: str, timeout_s: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, f"not within {timeout_s:.0f} s: {what}"
        await asyncio.sleep(0.01)


def test_a_flood_of_100_sign_ins_leaves_the_page_threads_free_and_the_rest_get_429_at_once(held):
    """100 sign-ins from 100 new addresses while every password check hangs: none of them holds one of the threads
    that pages and websocket checks use; the pool takes them up to its reserve, the rest are refused now."""
    app = _app()
    admitted = web.SIGNIN_WORKERS + web.SIGNIN_QUEUE - web.SIGNIN_RESERVED

    async def main():
        limiter = anyio.to_thread.current_default_thread_limiter()
        tasks = [asyncio.create_task(_post_signin(app, f"nobody{i}", "guess guess guess", (f"198.51.100.{i}", 1000)))
                 for i in range(100)]
        await _until(lambda: held.waiting == web.SIGNIN_WORKERS and sum(t.done() for t in tasks) == 100 - admitted,
                     "the sign-ins beyond the queue are refused while the admitted ones are still in hand")
        # the refusals came while every admitted sign-in is still in hand: no one waited for a slot
        refused = [t.result() for t in tasks if t.done()]
        busy_threads = limiter.borrowed_tokens  # page threads taken by the sign-ins in flight (was 40 of 40)
        # what a grade's per-message session check needs: a page thread, at once
        page_work = await asyncio.wait_for(anyio.to_thread.run_sync(lambda: "checked"), 5)
        held.gate.set()
        return refused, busy_threads, page_work, await asyncio.gather(*tasks)

    refused, busy_threads, page_work, everything = asyncio.run(main())
    assert busy_threads == 0 and page_work == "checked"
    assert len(refused) == 100 - admitted
    for r in refused:
        assert r.status == 429
        retry = int(r.header("retry-after")[0])
        assert retry >= 1 and f"Too many sign-in attempts at once; wait {retry} seconds" in r.body
    statuses = sorted(r.status for r in everything)
    assert statuses == [401] * admitted + [429] * (100 - admitted)
    assert held.calls == admitted  # a refused sign-in costs no hash


def test_during_a_flood_an_address_that_signed_in_before_is_queued_and_a_new_one_refused(held):
    """A doctor at their usual workstation (it signed in earlier) gets one of the reserved places and gets in
    once the checks move; a stranger's new address gets 429 like the flood."""
    app = _app()
    held.gate.set()
    assert asyncio.run(_post_signin(app, "doc1", PW, ("10.0.0.7", 1))).status == 303  # this morning
    held.gate.clear()
    flood_size = web.SIGNIN_WORKERS + web.SIGNIN_QUEUE  # more than the flood may take

    async def main():
        flood = [asyncio.create_task(_post_signin(app, f"bot{i}", "guess guess guess", (f"203.0.113.{i}", 1)))
                 for i in range(flood_size)]
        await _until(lambda: sum(t.done() for t in flood) == web.SIGNIN_RESERVED, "the flood is refused at the reserve")
        stranger = await _post_signin(app, "doc1", PW, ("198.51.100.200", 2))  # a new address: no reserved place
        doctor = asyncio.create_task(_post_signin(app, "doc1", PW, ("10.0.0.7", 3)))
        await asyncio.sleep(0.2)
        queued = not doctor.done()  # admitted, waiting its turn (a refusal would be back at once)
        held.gate.set()
        return stranger, queued, await doctor, await asyncio.gather(*flood)

    stranger, queued, doctor, flood = asyncio.run(main())
    assert stranger.status == 429 and stranger.header("retry-after")
    assert queued and doctor.status == 303 and doctor.header("set-cookie")
    assert sorted(r.status for r in flood) == [401] * (flood_size - web.SIGNIN_RESERVED) + [429] * web.SIGNIN_RESERVED


def test_a_real_user_gets_in_once_the_flood_has_passed(held):
    """The flood's refusals are 'not now', not a lock: the same server signs a real user in afterwards."""
    pool = throttle.SigninPool(workers=1, queue=0)
    app = _app(pool)

    async def main():
        first = asyncio.create_task(_post_signin(app, "nobody", "guess guess guess", ("198.51.100.1", 1)))
        await _until(lambda: held.waiting == 1, "the first sign-in is being checked")
        second = await _post_signin(app, "doc1", PW, ("10.0.0.7", 2))  # a doctor during the flood: busy
        held.gate.set()
        return await first, second

    first, second = asyncio.run(main())
    assert (first.status, second.status) == (401, 429)
    assert second.header("retry-after") and len(pool) == 0
    ok = asyncio.run(_post_signin(app, "doc1", PW, ("10.0.0.7", 2)))
    assert ok.status == 303 and ok.header("set-cookie")


def test_the_pool_refuses_beyond_its_queue_and_a_cancelled_wait_frees_its_place():
    pool = throttle.SigninPool(workers=1, queue=2, typical_s=0.5)
    gate = threading.Event()
    running = pool.submit(gate.wait, HELD_S)
    waiting = [pool.submit(lambda: "late") for _ in range(2)]
    assert len(pool) == 3
    with pytest.raises(throttle.Busy, match=r"too many sign-ins at once: wait \d+ seconds") as e:
        pool.submit(lambda: "one too many")
    assert e.value.retry_after == 2  # 3 in hand / 1 worker x 0.5 s, rounded up
    assert waiting[1].cancel()  # the client went away while it waited: it never runs ...
    assert len(pool) == 2
    extra = pool.submit(lambda: "in its place")  # ... and its place is free again
    gate.set()
    assert running.result(HELD_S) is True
    assert waiting[0].result(HELD_S) == "late" and extra.result(HELD_S) == "in its place"
    assert len(pool) == 0


def test_an_exception_in_a_sign_in_reaches_the_caller_and_frees_the_place():
    pool = throttle.SigninPool(workers=1, queue=0)

    def fails():
        raise auth.AuthError("wrong username or password")

    with pytest.raises(auth.AuthError):
        pool.submit(fails).result(HELD_S)
    assert len(pool) == 0
    assert pool.submit(lambda: 7).result(HELD_S) == 7


def test_the_reserve_is_for_known_sign_ins_only():
    pool = throttle.SigninPool(workers=1, queue=3, reserved=2)
    gate = threading.Event()
    held = [pool.submit(gate.wait, HELD_S), pool.submit(lambda: "new")]  # 1 running + 1 waiting: the reserve is left
    with pytest.raises(throttle.Busy):
        pool.submit(lambda: "another new address")
    held += [pool.submit(lambda: "known", known=True) for _ in range(2)]  # the two reserved places
    with pytest.raises(throttle.Busy):
        pool.submit(lambda: "known, one too many", known=True)
    gate.set()
    assert [f.result(HELD_S) for f in held] == [True, "new", "known", "known"]


def test_known_addresses_are_bounded_and_recent():
    known = throttle.KnownAddresses(max_addresses=3)
    for a in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.1", "10.0.0.4"):
        known.add(a)
    assert len(known) == 3 and "10.0.0.1" in known and "10.0.0.2" not in known  # the least recent is forgotten


@pytest.mark.parametrize("workers, queue, reserved", [(0, 8, 0), (2, -1, 0), (2, 4, 5), (2, 4, -1)])
def test_a_pool_needs_a_worker_and_a_queue(workers, queue, reserved):
    with pytest.raises(ValueError, match="at least one worker"):
        throttle.SigninPool(workers, queue, reserved=reserved)
