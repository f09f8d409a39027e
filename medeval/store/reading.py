"""A plain sqlite3 connection to an up-to-date database, for commands that only read (``users list``,
``campaign list``): importing sqlite-utils (numpy with it) took most of their start-up, and these read through the
connection alone. The connection is opened as :mod:`medeval.store.db` opens one; a database that is not there yet,
not in WAL mode, or short of a migration of this code's gets None here, and the caller opens it with
``store.db.connect``, which brings it up to date first.
"""

from __future__ import annotations

import os
import pkgutil
import sqlite3

from medeval.core import runtime

# store.db's connection settings (``_open``, ``_reset``), spelled out so reading needs no sqlite-utils import;
# tests/test_cli_startup.py checks that the two open connections alike
BUSY_TIMEOUT_MS = 30_000
_PRAGMAS = (f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}", "PRAGMA foreign_keys=ON", "PRAGMA synchronous=NORMAL",
            f"PRAGMA journal_size_limit={4 * 1024 * 1024}")


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


def open_if_up_to_date(path: str) -> sqlite3.Connection | None:
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
