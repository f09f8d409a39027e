"""Adjudication: the ``adjudicator`` role (a senior clinician) and the append-only adjudications table.

SQLite cannot change a CHECK constraint in place, so ``users`` is rebuilt inside the runner's one
transaction, following SQLite's documented procedure for schema changes (create the new table, copy,
drop the old, rename, recreate its indexes and triggers). ``PRAGMA foreign_keys`` cannot be switched
off inside a transaction, so the referencing rows (sessions, assignments, grades, ...) stay checked:
``PRAGMA defer_foreign_keys`` defers the checks to COMMIT, and the rows are put back *after* the
rename -- dropping ``users`` counts a pending violation for every row that refers to a user, and
re-inserting each user under the name ``users`` counts them off again, so the commit finds none
(copying before the rename would leave the count standing and the commit would fail).

A migration is history: never edit one that has shipped; add the next number instead. Data is
written as literals, not from today's constants (``auth.ROLES`` may grow again).
"""

from __future__ import annotations

import sqlite_utils

from medeval.core.errors import MedevalError
from medeval.store.migrate import run_script

USERS_V2 = """CREATE TABLE users_new (
        id INTEGER PRIMARY KEY,
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('annotator','researcher','admin','adjudicator')),
        active INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL
    )"""
COLUMNS = "id, username, password_hash, role, active, created_at"


def _refuse_actions(db: sqlite_utils.Database) -> None:
    """Dropping ``users`` runs an implicit DELETE: a referencing key with an ON DELETE action would act on it."""
    tables = [r[0] for r in db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for t in tables:
        for fk in db.conn.execute(f"PRAGMA foreign_key_list([{t}])"):
            if fk[2] == "users" and (fk[6] or "NO ACTION").upper() != "NO ACTION":
                raise MedevalError(f"m013: {t}.{fk[3]} refers to users with ON DELETE {fk[6]}; the users table "
                                   "cannot be rebuilt safely (internal error)")


def _rebuild_users(db: sqlite_utils.Database) -> None:
    conn = db.conn
    _refuse_actions(db)
    # the indexes and triggers on users other than its automatic ones, recreated after the rename
    extras = [sql for (sql,) in conn.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = 'users' AND type IN ('index', 'trigger') "
        "AND sql IS NOT NULL ORDER BY type, name")]
    conn.execute("PRAGMA defer_foreign_keys = ON")  # until COMMIT; it resets itself there
    conn.execute(f"CREATE TEMP TABLE m013_users_copy AS SELECT {COLUMNS} FROM users")
    conn.execute(USERS_V2)
    conn.execute("DROP TABLE users")
    conn.execute("ALTER TABLE users_new RENAME TO users")
    conn.execute(f"INSERT INTO users ({COLUMNS}) SELECT {COLUMNS} FROM temp.m013_users_copy ORDER BY id")
    conn.execute("DROP TABLE temp.m013_users_copy")
    for sql in extras:
        conn.execute(sql)


def up(db: sqlite_utils.Database) -> None:
    _rebuild_users(db)
    run_script(db, """
    CREATE TABLE adjudications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        item_id INTEGER NOT NULL REFERENCES campaign_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        tier INTEGER NOT NULL CHECK (tier IN (0, 1, 2)),
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
        supersedes INTEGER REFERENCES adjudications(id),
        created_at REAL NOT NULL
    );
    CREATE INDEX adjudications_item ON adjudications(item_id, id);
    CREATE TRIGGER adjudications_no_update BEFORE UPDATE ON adjudications
        BEGIN SELECT RAISE(ABORT, 'adjudications are append-only: record a new one instead'); END;
    CREATE TRIGGER adjudications_no_delete BEFORE DELETE ON adjudications
        BEGIN SELECT RAISE(ABORT, 'adjudications are append-only: record a new one instead'); END
    """)
