"""Grading campaigns: sampled items, exactly-k assignments, append-only grade annotations.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        config TEXT NOT NULL,
        report TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','closed'))
    );
    CREATE TABLE campaign_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        response_id INTEGER NOT NULL REFERENCES responses(id),
        strata TEXT NOT NULL,
        UNIQUE (campaign_id, response_id)
    );
    CREATE TABLE assignments (
        item_id INTEGER NOT NULL REFERENCES campaign_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        position INTEGER NOT NULL,
        PRIMARY KEY (item_id, user_id),
        UNIQUE (campaign_id, user_id, position)
    );
    CREATE TABLE grade_annotations (
        id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        tier INTEGER CHECK (tier IN (0, 1, 2)),
        skipped INTEGER NOT NULL DEFAULT 0,
        flagged INTEGER NOT NULL DEFAULT 0,
        note TEXT,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES grade_annotations(id),
        created_at REAL NOT NULL,
        FOREIGN KEY (item_id, user_id) REFERENCES assignments(item_id, user_id),
        UNIQUE (user_id, client_token)
    );
    CREATE INDEX grade_annotations_item ON grade_annotations(item_id, user_id, id);
    CREATE TRIGGER grade_annotations_no_update BEFORE UPDATE ON grade_annotations
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
    CREATE TRIGGER grade_annotations_no_delete BEFORE DELETE ON grade_annotations
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END
    """)
