"""Settled exam answers (CMB-Exam): the letters a person chose for an answer whose reading was ambiguous.

An exam is identified by its answer key (``exam``: the SHA-256 of the key file), an answer by the model and the
question id, and the response a person read by ``response_sha`` (a settlement does not carry over to another
response). ``letters`` are the option letters decided ("" = the response gives no answer). Append-only: a later
decision for the same (exam, model, question, response) supersedes the earlier one, which stays as history.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE exam_settlements (
        id INTEGER PRIMARY KEY,
        exam TEXT NOT NULL CHECK (length(exam) > 0),
        model TEXT NOT NULL,
        question TEXT NOT NULL CHECK (length(question) > 0),
        response_sha TEXT NOT NULL,
        letters TEXT NOT NULL CHECK (letters NOT GLOB '*[^A-Z]*'),
        decided_by TEXT NOT NULL,
        decided_at TEXT NOT NULL,
        note TEXT NOT NULL DEFAULT '',
        supersedes INTEGER REFERENCES exam_settlements(id)
    );
    CREATE INDEX exam_settlements_answer ON exam_settlements(exam, model, question, id);
    CREATE TRIGGER exam_settlements_no_update BEFORE UPDATE ON exam_settlements
        BEGIN SELECT RAISE(ABORT, 'exam settlements are append-only: settle again instead'); END;
    CREATE TRIGGER exam_settlements_no_delete BEFORE DELETE ON exam_settlements
        BEGIN SELECT RAISE(ABORT, 'exam settlements are append-only: settle again instead'); END
    """)
