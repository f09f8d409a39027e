"""Import batches: an import writes its rows in short transactions, invisible until its batch is done.

``import_batches`` has one row per import that wrote something. Its knowledge-base entries and
responses carry the batch id; while the batch is ``staging`` they are invisible (nothing scores a
response of a staging batch, so no score, grade, sample or report reaches it), and one short
transaction that sets ``state = 'done'`` makes the whole import visible at once. A killed import
leaves a ``staging`` batch that the next import deletes (``first_kb_id``/``first_response_id``: where
its rows start, so the delete walks the rowids instead of the whole table). Rows imported before
this migration have ``batch`` NULL and are visible.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE import_batches (
        id INTEGER PRIMARY KEY,
        state TEXT NOT NULL CHECK (state IN ('staging', 'done')),
        started_at TEXT NOT NULL,
        finished_at TEXT,
        first_kb_id INTEGER NOT NULL,
        first_response_id INTEGER NOT NULL,
        summary TEXT
    );
    ALTER TABLE kb_entries ADD COLUMN batch INTEGER REFERENCES import_batches(id);
    ALTER TABLE responses ADD COLUMN batch INTEGER REFERENCES import_batches(id)
    """)
