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

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlite_utils

from medeval.core import settings
from medeval.core.errors import MedevalError
from medeval.store.migrate import migrate_db

BUSY_TIMEOUT_MS = 30_000


def _open(path: str | Path) -> sqlite3.Connection:
    path = str(path)
    if path != ":memory:":
        parent = Path(path).expanduser().resolve().parent
        if not parent.exists():
            raise MedevalError(f"cannot open database {path}: folder {parent} does not exist")
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


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
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """Run a block in ``BEGIN IMMEDIATE`` on an open connection; commit, or roll back on any error."""
    conn = db.conn
    if conn.in_transaction:
        raise MedevalError("nested write transaction (internal error)")
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


@contextmanager
def write_tx(path: str | Path | None = None) -> Iterator[sqlite_utils.Database]:
    """A new connection, one ``BEGIN IMMEDIATE`` transaction, closed afterwards."""
    with connect(path) as db, transaction(db):
        yield db
