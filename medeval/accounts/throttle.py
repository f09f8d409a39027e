"""What stands between a flood of sign-ins and the server: limits on password hashing and on failures.

Three guards, from the cheapest:

* :class:`AddressLimiter` -- a token bucket per client address (in this process's memory): a burst of
  sign-in attempts, then one more every few seconds. The web routes ask it before anything else.
* :class:`SigninPool` -- the web sign-ins run on a couple of threads of their own, never on the threads that
  serve pages and check every websocket message (a flood of sign-ins once filled those, and grading waited
  seconds behind the queue); a few more may wait for them, and beyond that a sign-in is refused at once as
  :class:`Busy`, with the seconds the queue takes to clear.
* :class:`HashGate` -- at most a couple of argon2 hashes at once in this process. One hash takes 64 MiB
  and a core for a moment; forty at once took the server from 385 MiB to 2 GiB. A sign-in that cannot
  get a slot in time is refused as :class:`Busy` (the page says when to try again).
* The lock-out, read from the audit log (``login.failed`` records carry the client address): after
  ``BACKOFF_AFTER`` failures for one username from one address, that address waits ``BACKOFF_BASE_S``
  seconds, doubling with each further failure. Other addresses are not affected, so a stranger cannot
  lock a known user out. Only when the failures for one username within ``LOCKOUT_WINDOW_S`` come from
  ``LOCKOUT_ADDRESSES`` or more addresses and number ``LOCKOUT_FAILURES`` or more is the username locked
  for everyone (recorded as ``login.locked_out``), until the window has passed or an admin unlocks it or
  resets the password (``user.unlock``, ``user.reset_password``).

This module only reads the database; ``medeval.accounts.auth`` writes the records.
"""

from __future__ import annotations

import calendar
import math
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from medeval.core.errors import MedevalError
from medeval.core.i18n import ngettext

BACKOFF_AFTER = 5  # failures for one username from one address before that address must wait
BACKOFF_BASE_S = 30  # the first wait; it doubles with each further failure (at most LOCKOUT_WINDOW_S)
LOCKOUT_FAILURES = 20  # failures for one username within the window ...
LOCKOUT_ADDRESSES = 3  # ... from at least this many addresses lock the username for everyone
LOCKOUT_WINDOW_S = 15 * 60
_ISO = "%Y-%m-%dT%H:%M:%SZ"
_RESETS = ("user.unlock", "user.reset_password")  # an admin's action ends a lock and the backoffs


class Busy(MedevalError):
    """Too many sign-ins at once; ``retry_after`` says in how many seconds to try again."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


def _busy(retry: int) -> str:
    return ngettext("too many sign-ins at once: wait {n} second and try again",
                    "too many sign-ins at once: wait {n} seconds and try again", retry).format(n=retry)


def whole_seconds(s: float) -> int:
    return max(1, math.ceil(s - 1e-9))


class HashGate:
    """At most ``slots`` password hashes at a time in this process; a caller waits up to ``wait_s`` for one."""

    def __init__(self, slots: int = 2, wait_s: float = 10.0):
        self.slots, self.wait_s = slots, wait_s
        self._sem = threading.BoundedSemaphore(slots)

    @contextmanager
    def slot(self) -> Iterator[None]:
        if not self._sem.acquire(timeout=self.wait_s):
            retry = whole_seconds(self.wait_s)
            raise Busy(_busy(retry), retry)
        try:
            yield
        finally:
            self._sem.release()


def lowest_cpu_priority() -> bool:
    """Give the calling thread (and the threads it starts, such as argon2's lanes) the lowest CPU priority.

    On Linux the nice value belongs to a thread and is inherited by the threads it creates, so a sign-in's
    argon2 hash (about 1.5 cores for 0.1-0.2 s; it runs its 4 lanes on threads of its own) takes only the CPU
    that the page threads and the event loop leave; under load a sign-in slows down and the queue fills, which
    refuses more with 429, instead of every grade waiting for the hashes. Elsewhere nothing changes
    (False). Lowering one's own priority needs no privilege.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except OSError:
        return False
    return True


class SigninPool:
    """Sign-ins on ``workers`` threads of their own; at most ``queue`` more wait; one more is :class:`Busy` at once.

    The last ``reserved`` places of the queue are kept for ``known`` sign-ins (the web routes: from an address
    that has signed in successfully before), so a flood from new addresses cannot keep the people who work
    here out: it fills the queue up to ``workers + queue - reserved`` and is refused beyond that.

    ``submit`` returns a ``concurrent.futures.Future`` (await it with ``asyncio.wrap_future``); a queued one that
    is cancelled (the client went away) never runs. The ``Retry-After`` of a refusal is the time the work in
    hand takes at the recent pace (a moving average of the sign-ins' durations).
    """

    def __init__(self, workers: int = 2, queue: int = 8, *, reserved: int = 0, typical_s: float = 0.25):
        if workers < 1 or queue < 0 or not 0 <= reserved <= queue:
            raise ValueError("a sign-in pool needs at least one worker, a queue of 0 or more and at most the queue "
                             "reserved")
        self.workers, self.queue, self.reserved = workers, queue, reserved
        self._lock = threading.Lock()
        self._admitted = 0  # running or waiting
        self._mean_s = typical_s
        self._executor: ThreadPoolExecutor | None = None  # started on first use

    def submit(self, fn: Callable, *args, known: bool = False) -> Future:
        with self._lock:
            if self._admitted >= self.workers + self.queue - (0 if known else self.reserved):
                retry = whole_seconds(self._admitted / self.workers * self._mean_s)
                raise Busy(_busy(retry), retry)
            self._admitted += 1
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="medeval-signin",
                                                    initializer=lowest_cpu_priority)
            executor = self._executor
        try:
            future = executor.submit(self._timed, fn, args)
        except BaseException:
            self._release(None)
            raise
        future.add_done_callback(self._release)
        return future

    def _timed(self, fn: Callable, args: tuple):
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            with self._lock:
                self._mean_s = 0.8 * self._mean_s + 0.2 * (time.perf_counter() - t0)

    def _release(self, _future) -> None:
        with self._lock:
            self._admitted -= 1

    def __len__(self) -> int:
        """Sign-ins running or waiting now."""
        return self._admitted


class KnownAddresses:
    """Client addresses that have signed in successfully in this process (the most recent ``max_addresses``)."""

    def __init__(self, max_addresses: int = 10_000):
        self.max_addresses = max_addresses
        self._lock = threading.Lock()
        self._seen: OrderedDict[str, None] = OrderedDict()

    def add(self, address: str) -> None:
        with self._lock:
            self._seen[address] = None
            self._seen.move_to_end(address)
            while len(self._seen) > self.max_addresses:
                self._seen.popitem(last=False)

    def __contains__(self, address: str) -> bool:
        with self._lock:
            return address in self._seen

    def __len__(self) -> int:
        return len(self._seen)


class AddressLimiter:
    """A token bucket per client address: ``capacity`` attempts at once, then one every ``refill_s`` seconds.

    Thread-safe; it remembers at most ``max_addresses`` addresses (the least recently seen are forgotten).
    """

    def __init__(self, capacity: int = 10, refill_s: float = 6.0, *, clock: Callable[[], float] | None = None,
                 max_addresses: int = 10_000):
        self.capacity, self.refill_s, self.max_addresses = capacity, refill_s, max_addresses
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address -> (tokens, as of)

    def _tokens(self, address: str, now: float) -> float:
        tokens, since = self._buckets.get(address, (float(self.capacity), now))
        return min(float(self.capacity), tokens + max(0.0, now - since) / self.refill_s)

    def take(self, address: str) -> int:
        """0 when ``address`` may try now (one attempt is used up), else the seconds until it may."""
        with self._lock:
            now = self._clock()
            tokens = self._tokens(address, now)
            allowed = tokens >= 1
            self._buckets[address] = (tokens - 1 if allowed else tokens, now)
            self._buckets.move_to_end(address)
            while len(self._buckets) > self.max_addresses:
                self._buckets.popitem(last=False)
            return 0 if allowed else whole_seconds((1 - tokens) * self.refill_s)

    def give_back(self, address: str) -> None:
        """Return an attempt (a successful sign-in does not count against the address)."""
        with self._lock:
            if address in self._buckets:
                now = self._clock()
                self._buckets[address] = (min(float(self.capacity), self._tokens(address, now) + 1), now)

    def __len__(self) -> int:
        return len(self._buckets)


def iso(t: float) -> str:
    return time.strftime(_ISO, time.gmtime(t))


def _epoch(at: str) -> float:
    return float(calendar.timegm(time.strptime(at, _ISO)))


def _last_id(db, actions: tuple[str, ...], target: str, address: str | None = None) -> int:
    sql = (f"SELECT max(id) FROM audit_log WHERE action IN ({', '.join('?' * len(actions))}) AND target = ?")
    args: list = [*actions, target]
    if address is not None:
        sql += " AND json_extract(detail, '$.address') = ?"
        args.append(address)
    return db.conn.execute(sql, args).fetchone()[0] or 0


def locked_until(db, target: str, now: float) -> float | None:
    """When the lock on ``target`` (a username) ends, or None when it is not locked."""
    row = db.conn.execute("SELECT id, at FROM audit_log WHERE action = 'login.locked_out' AND target = ? "
                          "ORDER BY id DESC LIMIT 1", (target,)).fetchone()
    if row is None or _last_id(db, _RESETS, target) > row[0]:
        return None
    until = _epoch(row[1]) + LOCKOUT_WINDOW_S
    return until if until > now else None


def backoff_wait(db, target: str, address: str, now: float) -> int:
    """Seconds ``address`` must still wait before it may try ``target`` again (0: it may try now).

    Counts this address's failures for this username within the window, since its last successful
    sign-in and since an admin last unlocked the username or reset its password.
    """
    since = max(_last_id(db, _RESETS, target), _last_id(db, ("login",), target, address))
    n, last = db.conn.execute(
        "SELECT count(*), max(at) FROM audit_log WHERE action = 'login.failed' AND target = ? AND id > ? "
        "AND at >= ? AND json_extract(detail, '$.address') = ?",
        (target, since, iso(now - LOCKOUT_WINDOW_S), address)).fetchone()
    if n < BACKOFF_AFTER:
        return 0
    wait = min(BACKOFF_BASE_S * 2 ** (n - BACKOFF_AFTER), LOCKOUT_WINDOW_S)
    left = _epoch(last) + wait - now
    return whole_seconds(left) if left > 0 else 0


def lock_due(db, target: str, now: float) -> dict | None:
    """The evidence for locking ``target`` now (failures, addresses), or None when it is not (yet) due."""
    since = max(_last_id(db, _RESETS + ("login.locked_out",), target), 0)
    rows = db.conn.execute(
        "SELECT json_extract(detail, '$.address') FROM audit_log WHERE action = 'login.failed' AND target = ? "
        "AND id > ? AND at >= ?", (target, since, iso(now - LOCKOUT_WINDOW_S))).fetchall()
    addresses = sorted({r[0] for r in rows if r[0] is not None})
    if len(rows) >= LOCKOUT_FAILURES and len(addresses) >= LOCKOUT_ADDRESSES:
        return {"failures": len(rows), "addresses": addresses[:20], "minutes": LOCKOUT_WINDOW_S // 60}
    return None


def locked_targets(db, now: float) -> dict[str, float]:
    """Every username locked now, with when its lock ends."""
    rows = db.conn.execute("SELECT DISTINCT target FROM audit_log WHERE action = 'login.locked_out' AND at >= ?",
                           (iso(now - LOCKOUT_WINDOW_S),)).fetchall()
    out = {}
    for (target,) in rows:
        until = locked_until(db, target, now)
        if until is not None:
            out[target] = until
    return out
