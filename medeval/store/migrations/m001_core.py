"""The scoring engine's tables: knowledge base, models, responses, scores, the embedding cache, threshold sets and grades.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE kb_entries (
        id INTEGER PRIMARY KEY,
        disease TEXT NOT NULL,
        disease_en TEXT,
        aspect TEXT NOT NULL,
        aspect_type TEXT NOT NULL CHECK (aspect_type IN ('enumerated','declarative','numeric')),
        reference TEXT NOT NULL,
        processed TEXT NOT NULL,
        UNIQUE (disease, aspect)
    );
    CREATE TABLE models (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        backbone TEXT,
        kind TEXT NOT NULL DEFAULT 'general' CHECK (kind IN ('general','medical'))
    );
    CREATE TABLE responses (
        id INTEGER PRIMARY KEY,
        model_id INTEGER NOT NULL REFERENCES models(id),
        kb_id INTEGER NOT NULL REFERENCES kb_entries(id),
        raw TEXT NOT NULL,
        processed TEXT NOT NULL,
        note TEXT,
        UNIQUE (model_id, kb_id)
    );
    CREATE INDEX responses_kb ON responses(kb_id);
    CREATE TABLE scores (
        response_id INTEGER NOT NULL REFERENCES responses(id),
        metric TEXT NOT NULL,
        scorer TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (response_id, metric, scorer)
    ) WITHOUT ROWID;
    CREATE TABLE embeddings (
        model_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model_id, text_hash)
    ) WITHOUT ROWID;
    CREATE TABLE threshold_sets (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        tokenizer TEXT NOT NULL,
        embedding_model TEXT NOT NULL,
        provenance TEXT NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 0
    );
    CREATE UNIQUE INDEX threshold_sets_one_active ON threshold_sets(active) WHERE active = 1;
    CREATE TABLE thresholds (
        version INTEGER NOT NULL REFERENCES threshold_sets(version),
        metric TEXT NOT NULL,
        aspect_type TEXT NOT NULL,
        low REAL NOT NULL,
        high REAL NOT NULL,
        CHECK (low <= high),
        PRIMARY KEY (version, metric, aspect_type)
    ) WITHOUT ROWID;
    CREATE TABLE grades (
        response_id INTEGER NOT NULL REFERENCES responses(id),
        metric TEXT NOT NULL,
        version INTEGER NOT NULL REFERENCES threshold_sets(version),
        scorer TEXT NOT NULL,
        tier INTEGER NOT NULL CHECK (tier IN (0,1,2)),
        PRIMARY KEY (version, response_id, metric)
    ) WITHOUT ROWID;
    """)
