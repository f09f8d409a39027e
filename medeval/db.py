"""SQLite storage: connections, write transactions and code-defined migrations.

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
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import sqlite_utils

from . import settings
from .errors import MedevalError

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


# ---------------------------------------------------------------- migrations

Migration = Callable[[sqlite_utils.Database], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_core(db: sqlite_utils.Database) -> None:
    _run_script(db, """
    CREATE TABLE kb_entries (
        id INTEGER PRIMARY KEY,
        disease TEXT NOT NULL,
        disease_en TEXT,
        aspect TEXT NOT NULL,
        aspect_type TEXT NOT NULL CHECK (aspect_type IN ('enumerated','declarative','numeric')),
        reference TEXT NOT NULL,
        processed TEXT NOT NULL,
        UNIQUE (disease, aspect)
    );
    CREATE TABLE models (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        backbone TEXT,
        kind TEXT NOT NULL DEFAULT 'general' CHECK (kind IN ('general','medical'))
    );
    CREATE TABLE responses (
        id INTEGER PRIMARY KEY,
        model_id INTEGER NOT NULL REFERENCES models(id),
        kb_id INTEGER NOT NULL REFERENCES kb_entries(id),
        raw TEXT NOT NULL,
        processed TEXT NOT NULL,
        note TEXT,
        UNIQUE (model_id, kb_id)
    );
    CREATE INDEX responses_kb ON responses(kb_id);
    CREATE TABLE scores (
        response_id INTEGER NOT NULL REFERENCES responses(id),
        metric TEXT NOT NULL,
        scorer TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (response_id, metric, scorer)
    ) WITHOUT ROWID;
    CREATE TABLE embeddings (
        model_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model_id, text_hash)
    ) WITHOUT ROWID;
    CREATE TABLE threshold_sets (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        tokenizer TEXT NOT NULL,
        embedding_model TEXT NOT NULL,
        provenance TEXT NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 0
    );
    CREATE UNIQUE INDEX threshold_sets_one_active ON threshold_sets(active) WHERE active = 1;
    CREATE TABLE thresholds (
        version INTEGER NOT NULL REFERENCES threshold_sets(version),
        metric TEXT NOT NULL,
        aspect_type TEXT NOT NULL,
        low REAL NOT NULL,
        high REAL NOT NULL,
        CHECK (low <= high),
        PRIMARY KEY (version, metric, aspect_type)
    ) WITHOUT ROWID;
    CREATE TABLE grades (
        response_id INTEGER NOT NULL REFERENCES responses(id),
        metric TEXT NOT NULL,
        version INTEGER NOT NULL REFERENCES threshold_sets(version),
        scorer TEXT NOT NULL,
        tier INTEGER NOT NULL CHECK (tier IN (0,1,2)),
        PRIMARY KEY (version, response_id, metric)
    ) WITHOUT ROWID;
    """)


def _run_script(db: sqlite_utils.Database, script: str) -> None:
    # not conn.executescript(): it COMMITs the migration's open transaction first
    for statement in script.split(";\n"):
        if statement.strip():
            db.conn.execute(statement)


def migrate_db(db: sqlite_utils.Database) -> list[str]:
    """Apply pending migrations, each in its own ``BEGIN IMMEDIATE`` transaction. Returns the names applied."""
    from . import auth, campaigns, cases, tasks, thresholds, tuning  # noqa: F401  (register their migrations)

    conn = db.conn
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:  # another connection holds a lock; WAL is set by whoever migrated first
            pass
    have = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='_migrations'")}
    if have:
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
        if all(name in done for name, _ in MIGRATIONS):
            return []
    applied = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
        for name, fn in sorted(MIGRATIONS):
            if name in done:
                continue
            fn(db)
            conn.execute("INSERT INTO _migrations VALUES (?, ?)",
                         (name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
            applied.append(name)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return applied
