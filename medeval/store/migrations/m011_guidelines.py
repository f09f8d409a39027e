"""Campaign guidelines: every version kept (append-only), each annotator's acknowledgements, and the
guideline version on screen recorded with each grade and task answer.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE campaign_guidelines (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        version INTEGER NOT NULL CHECK (version >= 1),
        text TEXT NOT NULL,
        definitions TEXT NOT NULL,
        examples TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (campaign_id, version)
    );
    CREATE TRIGGER campaign_guidelines_no_update BEFORE UPDATE ON campaign_guidelines
        BEGIN SELECT RAISE(ABORT, 'guideline versions are append-only'); END;
    CREATE TRIGGER campaign_guidelines_no_delete BEFORE DELETE ON campaign_guidelines
        BEGIN SELECT RAISE(ABORT, 'guideline versions are append-only'); END;
    CREATE TABLE guideline_acks (
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL,
        version INTEGER NOT NULL,
        acknowledged_at TEXT NOT NULL,
        PRIMARY KEY (user_id, campaign_id, version),
        FOREIGN KEY (campaign_id, version) REFERENCES campaign_guidelines(campaign_id, version)
    );
    ALTER TABLE grade_annotations ADD COLUMN guideline_version INTEGER;
    ALTER TABLE task_answers ADD COLUMN guideline_version INTEGER
    """)
