"""Each researcher's unpublished cut-offs on the Tune cut-offs page.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE threshold_drafts (
        user_id INTEGER NOT NULL REFERENCES users(id),
        metric TEXT NOT NULL,
        aspect_type TEXT NOT NULL,
        low REAL NOT NULL,
        high REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (user_id, metric, aspect_type),
        CHECK (low <= high)
    )
    """)
