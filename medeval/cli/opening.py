"""Opening the database from a command: :func:`connect` for every command, :func:`reading` for one that only reads.

``medeval.store.db`` hands out a ``sqlite_utils.Database``, and importing sqlite-utils (numpy with it) took most of
the start-up of a command that only lists something (``users list``, ``campaign list``; ``bench/bench_startup.py``).
So a command module imports store.db only when a command opens the database through :func:`connect`, and a command
that only reads, and whose library functions read through the open database's ``conn`` alone, opens it with
:func:`reading`: a plain sqlite3 connection with store.db's settings, when the database is up to date. A database
that is not there yet, not in WAL mode, or short of a migration of this code's is opened by store.db's ``connect``,
which brings it up to date first -- exactly what the command did before.
"""

from __future__ import annotations

import os
import pkgutil
import sqlite3
from contextlib import contextmanager
from typing import Iterator

from medeval.core import runtime, settings

# store.db's connection settings (``_open``, ``_reset``), spelled out so reading needs no sqlite-utils import;
# tests/test_cli_startup.py checks that the two open connections alike
BUSY_TIMEOUT_MS = 30_000
_PRAGMAS = (f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}", "PRAGMA foreign_keys=ON", "PRAGMA synchronous=NORMAL",
            f"PRAGMA journal_size_limit={4 * 1024 * 1024}")


def connect(db_path):
    """``medeval.store.db.connect(db_path)`` (the schema brought up to date first), imported when it is used."""
    from medeval.store.db import connect as store_connect

    return store_connect(db_path)


class Reading:
    """An open database for functions that only read it through its ``conn`` (a ``sqlite_utils.Database``'s)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn


def _migration_names() -> list[str]:
    """The migrations this code has: the current runtime's when it holds them (a test's own), else the modules of
    ``medeval.store.migrations`` by name, as ``store.migrate`` discovers them (without importing them)."""
    own = runtime.current().migrations
    if own is not None:
        return [name for name, _ in own]
    import medeval.store.migrations as package

    return [info.name for info in pkgutil.iter_modules(package.__path__)]


def _up_to_date(conn: sqlite3.Connection) -> bool:
    """Whether ``store.migrate.migrate_db`` would find nothing to do: WAL mode and every migration recorded."""
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        return False
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='_migrations'").fetchone():
        return False
    done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    return all(name in done for name in _migration_names())


def _open_if_up_to_date(path: str) -> sqlite3.Connection | None:
    """A connection to ``path`` as store.db makes one, when the database is up to date; else None (and anything
    SQLite says against the file is left to store.db's ``connect``, which says it as before)."""
    if path == ":memory:" or not os.path.isfile(path):
        return None
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        for pragma in _PRAGMAS:
            conn.execute(pragma)
        if _up_to_date(conn):
            return conn
    except sqlite3.Error:
        pass
    except BaseException:
        conn.close()
        raise
    conn.close()
    return None


@contextmanager
def reading(db_path) -> Iterator[Reading]:
    """The database ``db_path`` (default ``MEDEVAL_DB``) for a command that only reads: a :class:`Reading` when it
    is up to date, else what :func:`connect` opens."""
    path = str(db_path) if db_path not in (None, "") else settings.db_path()
    conn = _open_if_up_to_date(path)
    if conn is None:
        with connect(path) as db:
            yield db
        return
    try:
        yield Reading(conn)
    finally:
        conn.close()
