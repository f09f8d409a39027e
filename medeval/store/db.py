"""SQLite storage: connections and write transactions (the schema: ``medeval.store.migrate``).

Rules (see shared/notes/streamlit.md section 4):

* a **new connection per operation** -- never keep one in a cache or in session state;
* WAL journal and a generous ``busy_timeout``;
* every write runs in ``BEGIN IMMEDIATE`` (sqlite-utils' default deferred
  transaction fails with "database is locked" under concurrent writers).

Functions elsewhere in the library take a :class:`sqlite_utils.Database`
(opened by :func:`connect` or :func:`write_tx`), not a path.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlite_utils

from medeval.core import runtime, settings
from medeval.core.errors import MedevalError
from medeval.store.migrate import migrate_db

BUSY_TIMEOUT_MS = 30_000
WAL_KEPT_BYTES = 4 * 1024 * 1024
"""What the write-ahead log is cut back to when it is reset after a checkpoint (``journal_size_limit``; about one
automatic checkpoint's worth): a big transaction, or a failed one, does not keep its room on the disk for good."""


def _open(path: str | Path) -> sqlite3.Connection:
    path = str(path)
    if path != ":memory:":
        parent = Path(path).expanduser().resolve().parent
        if not parent.exists():
            raise MedevalError(f"cannot open database {path}: folder {parent} does not exist")
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    _reset(conn)
    return conn


def _reset(conn: sqlite3.Connection) -> None:
    """The connection settings every operation starts from (an operation may have changed them)."""
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA journal_size_limit={WAL_KEPT_BYTES}")


class ConnectionPool:
    """Idle connections to reuse, one operation at a time, for the web app's many short operations.

    Opening a connection costs about 0.8 ms of CPU here: SQLite parses the whole schema (tables, indexes,
    the append-only triggers) on a new connection's first statement. A grade key runs three short
    operations (the session check, the save, the next item), so the app takes its connections from this
    pool: an operation still has a connection to itself from start to end (taken, then given back), starts
    from the standard settings (:func:`_reset`) and never inside a transaction (one left open is rolled
    back, a closed or broken connection is dropped). A connection is reused only for the same file: the
    file's identity (device, inode) is checked when one is taken, so a database deleted and created again
    at the same path gets new connections (a pooled connection keeps the old inode from being reused).
    At most ``size`` idle connections are kept in all, the least recently used file's first to go; a
    forked child starts with an empty pool (connections must not cross ``fork``). In-memory databases are
    never pooled.
    """

    def __init__(self, size: int = 16):
        self.size = size
        self._idle: OrderedDict[str, list[tuple[sqlite3.Connection, tuple[int, int]]]] = OrderedDict()
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._inherited: list = []  # a parent's connections after fork: kept, never used nor closed here

    @staticmethod
    def _identity(path: str) -> tuple[int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def _check_pid(self) -> None:
        if os.getpid() != self._pid:
            self._inherited.append(self._idle)
            self._idle, self._pid = OrderedDict(), os.getpid()

    def take(self, path: str) -> tuple[sqlite3.Connection, tuple[int, int] | None]:
        ident = self._identity(path)
        stale = []
        with self._lock:
            self._check_pid()
            idle = self._idle.get(path)
            found = None
            while idle:
                conn, was = idle.pop()
                if was == ident:
                    found = conn
                    break
                stale.append(conn)
        for conn in stale:
            conn.close()
        if found is not None:
            try:
                _reset(found)
                return found, ident
            except sqlite3.Error:
                found.close()
        conn = _open(path)
        return conn, ident if ident is not None else self._identity(path)

    def give(self, path: str, conn: sqlite3.Connection, ident: tuple[int, int] | None) -> None:
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:  # closed by its user, or broken: not reused
            conn.close()
            return
        if ident is None or path == ":memory:":
            conn.close()
            return
        drop = []
        with self._lock:
            self._check_pid()
            self._idle.setdefault(path, []).append((conn, ident))
            self._idle.move_to_end(path)
            while sum(len(v) for v in self._idle.values()) > self.size:
                oldest = next(iter(self._idle))
                drop.append(self._idle[oldest].pop(0)[0])
                if not self._idle[oldest]:
                    del self._idle[oldest]
        for c in drop:
            c.close()

    def clear(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, OrderedDict()
        for conns in idle.values():
            for conn, _ in conns:
                conn.close()


def pool() -> ConnectionPool:
    """The current runtime's connection pool (``medeval.core.runtime``: the web app's, made at its start; a
    default one for everyone else), made on first use."""
    return runtime.current().part("pool", lambda _: ConnectionPool())


def resolve_path(path: str | Path | None) -> str:
    return str(path) if path not in (None, "") else settings.db_path()


@contextmanager
def connect(path: str | Path | None = None, *, migrate: bool = True) -> Iterator[sqlite_utils.Database]:
    """Open the database for one operation (read, or writes done via :func:`transaction`).

    The schema is brought up to date first (idempotent and cheap once applied).
    """
    path = resolve_path(path)
    conn = _open(path)
    try:
        db = sqlite_utils.Database(conn)
        if migrate:
            migrate_db(db)
        yield db
    finally:
        conn.close()


@contextmanager
def pooled(path: str | Path | None = None) -> Iterator[sqlite_utils.Database]:
    """Like ``connect(path, migrate=False)``, with the connection taken from the runtime's pool (:func:`pool`) and
    given back.

    For the web app's short operations on a migrated database (a page's reads and saves, the session
    check of every websocket message). The operation has the connection to itself; nothing of it is kept
    but the open connection (see :class:`ConnectionPool`)."""
    path = resolve_path(path)
    if path == ":memory:":
        with connect(path, migrate=False) as db:
            yield db
        return
    connections = pool()
    conn, ident = connections.take(path)
    try:
        yield sqlite_utils.Database(conn)
    finally:
        connections.give(path, conn, ident)


@contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """Run a block in ``BEGIN IMMEDIATE`` on an open connection; commit, or roll back on any error.

    The error that ended the block (or the COMMIT) is the one raised, never a failure of the ROLLBACK.
    Keep the block short: other writers (an annotator's grade key) wait for it; long jobs write in
    chunks of their own transactions (see ``engine/importer.py``).
    """
    conn = db.conn
    if conn.in_transaction:
        raise MedevalError("nested write transaction (internal error)")
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled the transaction back itself (a full disk, an I/O error): a
        # second ROLLBACK would raise "cannot rollback - no transaction is active" and hide the cause.
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the original error below says what went wrong
        raise


@contextmanager
def write_tx(path: str | Path | None = None) -> Iterator[sqlite_utils.Database]:
    """A new connection, one ``BEGIN IMMEDIATE`` transaction, closed afterwards."""
    with connect(path) as db, transaction(db):
        yield db


def database_file(db: sqlite_utils.Database) -> str | None:
    """The file of the main database, or None for an in-memory one."""
    for _, name, file in db.conn.execute("PRAGMA database_list"):
        if name == "main":
            return file or None
    return None


@contextmanager
def job_lock(db: sqlite_utils.Database, job: str, *, busy: str, wait: float = 0.0) -> Iterator[None]:
    """Hold an exclusive lock named ``job`` on this database file while the block runs; else MedevalError(busy)
    (after waiting up to ``wait`` seconds for the holder to finish).

    An OS lock (``flock``) on ``<database>.<job>-lock``: the system drops it when the holder
    exits, even when killed, so whatever a killed holder left behind can be recognised as
    abandoned by the next holder. In-memory databases (one connection) need no lock.
    """
    file = database_file(db)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock (one writer at a time is then up to the user)
        fcntl = None
    if file is None or fcntl is None:
        yield
        return
    fd = os.open(f"{file}.{job}-lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise MedevalError(busy) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def write_failure(error: sqlite3.Error) -> str:
    """What a failed write means for the user, in words (the cause, then SQLite's own text)."""
    text = str(error)
    code = getattr(error, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_FULL or "disk is full" in text or "database or disk is full" in text:
        return f"the disk is full ({text}): free space on the disk that holds the database"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in text:
        return f"the database stayed busy ({text}): wait until other writers finish"
    if code == sqlite3.SQLITE_READONLY or "readonly" in text:
        return f"the database cannot be written ({text}): check the file's permissions"
    return f"the database could not be written ({text}): fix the cause"
