"""Each user's dismissed "start here" tips (the pages' first-visit panels).

One row per (user, hint) the user chose to hide; deleting a user's rows shows every tip again.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE user_hints (
        user_id INTEGER NOT NULL REFERENCES users(id),
        hint TEXT NOT NULL,
        dismissed_at TEXT NOT NULL,
        PRIMARY KEY (user_id, hint)
    )
    """)
