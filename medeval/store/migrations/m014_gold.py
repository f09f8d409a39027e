"""Gold items and qualification: gold responses with their expected tier per campaign, retirements,
per-campaign gold settings (versioned), qualification attempts and the annotators' gold answers.

Everything here is append-only: a gold item is retired by a row of ``gold_retired`` (never changed or
deleted), a settings change adds a version, a changed gold answer adds a row that supersedes the last.
Gold answers live apart from ``grade_annotations``, so no agreement statistic or calibration can count them.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE gold_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        response_id INTEGER NOT NULL REFERENCES responses(id),
        expected_tier INTEGER NOT NULL CHECK (expected_tier IN (0, 1, 2)),
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (campaign_id, response_id)
    );
    CREATE TABLE gold_retired (
        gold_id INTEGER PRIMARY KEY REFERENCES gold_items(id),
        retired_by TEXT NOT NULL,
        retired_at TEXT NOT NULL
    );
    CREATE TABLE gold_settings (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        version INTEGER NOT NULL CHECK (version >= 1),
        settings TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (campaign_id, version)
    );
    CREATE TABLE gold_attempts (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        attempt INTEGER NOT NULL CHECK (attempt >= 1),
        gold_ids TEXT NOT NULL,
        pass_mark REAL NOT NULL,
        started_at REAL NOT NULL,
        PRIMARY KEY (campaign_id, user_id, attempt)
    );
    CREATE TABLE gold_answers (
        id INTEGER PRIMARY KEY,
        gold_id INTEGER NOT NULL REFERENCES gold_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        tier INTEGER CHECK (tier IN (0, 1, 2)),
        skipped INTEGER NOT NULL DEFAULT 0,
        flagged INTEGER NOT NULL DEFAULT 0,
        note TEXT,
        mode TEXT NOT NULL CHECK (mode IN ('qualification', 'hidden')),
        attempt INTEGER,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES gold_answers(id),
        created_at REAL NOT NULL,
        UNIQUE (user_id, client_token),
        CHECK ((mode = 'qualification') = (attempt IS NOT NULL))
    );
    CREATE INDEX gold_answers_user ON gold_answers(user_id, gold_id, id);
    CREATE TRIGGER gold_items_no_update BEFORE UPDATE ON gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;
    CREATE TRIGGER gold_items_no_delete BEFORE DELETE ON gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;
    CREATE TRIGGER gold_retired_no_update BEFORE UPDATE ON gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;
    CREATE TRIGGER gold_retired_no_delete BEFORE DELETE ON gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;
    CREATE TRIGGER gold_settings_no_update BEFORE UPDATE ON gold_settings
        BEGIN SELECT RAISE(ABORT, 'gold settings are append-only: save a new version'); END;
    CREATE TRIGGER gold_attempts_no_update BEFORE UPDATE ON gold_attempts
        BEGIN SELECT RAISE(ABORT, 'qualification attempts are append-only'); END;
    CREATE TRIGGER gold_answers_no_update BEFORE UPDATE ON gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;
    CREATE TRIGGER gold_answers_no_delete BEFORE DELETE ON gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END
    """)
