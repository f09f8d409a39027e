"""Gold items of task campaigns (rubric, preference, AccR): frozen items with expected answers, retirements,
and the annotators' answers to them.

A task gold item is a task item (the same frozen JSON payload a real item has) that is *not* a real item of
its campaign, with the expected answer of some or all of its questions (``expected``: JSON, keyed by the
question ids and values of the item as drawn in the canonical layout -- responses in the data's order, A on the
left) and the guideline's reason. Answers live in ``task_gold_answers``, apart from ``task_answers``, so no
result or agreement statistic can count them; each row keeps the annotator's layout, which maps what they saw
back to the canonical ids. The settings and qualification attempts share ``gold_settings``/``gold_attempts``
with tier-grading campaigns (a campaign is one or the other).

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE task_gold_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        source TEXT NOT NULL,
        payload TEXT NOT NULL,
        expected TEXT NOT NULL,
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (campaign_id, source)
    );
    CREATE TABLE task_gold_retired (
        gold_id INTEGER PRIMARY KEY REFERENCES task_gold_items(id),
        retired_by TEXT NOT NULL,
        retired_at TEXT NOT NULL
    );
    CREATE TABLE task_gold_answers (
        id INTEGER PRIMARY KEY,
        gold_id INTEGER NOT NULL REFERENCES task_gold_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        question TEXT NOT NULL,
        value TEXT,
        skipped INTEGER NOT NULL DEFAULT 0,
        mode TEXT NOT NULL CHECK (mode IN ('qualification', 'hidden')),
        attempt INTEGER,
        layout TEXT NOT NULL,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES task_gold_answers(id),
        guideline_version INTEGER,
        created_at REAL NOT NULL,
        UNIQUE (user_id, client_token),
        CHECK ((mode = 'qualification') = (attempt IS NOT NULL))
    );
    CREATE INDEX task_gold_answers_user ON task_gold_answers(user_id, gold_id, id);
    CREATE TRIGGER task_gold_items_no_update BEFORE UPDATE ON task_gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;
    CREATE TRIGGER task_gold_items_no_delete BEFORE DELETE ON task_gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;
    CREATE TRIGGER task_gold_retired_no_update BEFORE UPDATE ON task_gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;
    CREATE TRIGGER task_gold_retired_no_delete BEFORE DELETE ON task_gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;
    CREATE TRIGGER task_gold_answers_no_update BEFORE UPDATE ON task_gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;
    CREATE TRIGGER task_gold_answers_no_delete BEFORE DELETE ON task_gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END
    """)
