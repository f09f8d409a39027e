"""A judge's per-criterion scores of each response (CMB-Clin §5: Fluency, Relevance, Completeness, Proficiency),
beside its overall score in ``judge_scores``. ``criterion`` is the name as imported (NFKC, spaces collapsed);
``id`` keeps the order the criteria were imported in; names are compared case-insensitively with the clinicians' rubric criteria when agreement is computed.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE judge_criterion_scores (
        id INTEGER PRIMARY KEY,
        assessment_id INTEGER NOT NULL REFERENCES judge_assessments(id),
        model TEXT NOT NULL,
        criterion TEXT NOT NULL,
        score REAL NOT NULL,
        UNIQUE (assessment_id, model, criterion)
    );
    """)
