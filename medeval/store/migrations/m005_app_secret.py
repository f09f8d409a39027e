"""The generated key that signs session cookies (when MEDEVAL_SECRET_KEY is not set).

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE app_secret (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        secret TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX audit_log_action ON audit_log(action, target)
    """)
