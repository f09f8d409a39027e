"""Cases, case questions and model responses, judges' assessments and scores, fact claims.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE cases (
        id INTEGER PRIMARY KEY,
        dataset TEXT NOT NULL,
        case_key TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        UNIQUE (dataset, case_key)
    );
    CREATE TABLE case_questions (
        id INTEGER PRIMARY KEY,
        case_id INTEGER NOT NULL REFERENCES cases(id),
        position INTEGER NOT NULL CHECK (position >= 1),
        question TEXT NOT NULL,
        reference TEXT NOT NULL,
        UNIQUE (case_id, position)
    );
    CREATE TABLE case_responses (
        id INTEGER PRIMARY KEY,
        question_id INTEGER NOT NULL REFERENCES case_questions(id),
        model TEXT NOT NULL,
        response TEXT NOT NULL,
        UNIQUE (question_id, model)
    );
    CREATE TABLE judge_assessments (
        id INTEGER PRIMARY KEY,
        question_id INTEGER NOT NULL REFERENCES case_questions(id),
        judge TEXT NOT NULL,
        rationale TEXT NOT NULL,
        models TEXT NOT NULL,
        UNIQUE (question_id, judge)
    );
    CREATE TABLE judge_scores (
        assessment_id INTEGER NOT NULL REFERENCES judge_assessments(id),
        model TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (assessment_id, model)
    ) WITHOUT ROWID;
    CREATE TABLE fact_claims (
        id INTEGER PRIMARY KEY,
        dataset TEXT NOT NULL,
        item_key TEXT NOT NULL,
        type TEXT NOT NULL,
        label TEXT NOT NULL CHECK (label IN ('support', 'refute')),
        claim TEXT NOT NULL,
        model TEXT NOT NULL,
        response TEXT NOT NULL,
        UNIQUE (dataset, model, item_key, label)
    )
    """)
