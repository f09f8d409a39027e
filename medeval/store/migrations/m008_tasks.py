"""Task campaigns: frozen task items, assignments with each annotator's layout, append-only answers.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE task_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        source TEXT NOT NULL,
        payload TEXT NOT NULL,
        UNIQUE (campaign_id, source)
    );
    CREATE TABLE task_assignments (
        item_id INTEGER NOT NULL REFERENCES task_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        position INTEGER NOT NULL,
        layout TEXT NOT NULL,
        PRIMARY KEY (item_id, user_id),
        UNIQUE (campaign_id, user_id, position)
    );
    CREATE TABLE task_answers (
        id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        question TEXT NOT NULL,
        value TEXT,
        skipped INTEGER NOT NULL DEFAULT 0,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES task_answers(id),
        created_at REAL NOT NULL,
        FOREIGN KEY (item_id, user_id) REFERENCES task_assignments(item_id, user_id),
        UNIQUE (user_id, client_token)
    );
    CREATE INDEX task_answers_item ON task_answers(item_id, user_id, id);
    CREATE TRIGGER task_answers_no_update BEFORE UPDATE ON task_answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
    CREATE TRIGGER task_answers_no_delete BEFORE DELETE ON task_answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END
    """)
