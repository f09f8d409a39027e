"""Active calibration campaigns: one row per (campaign, round, metric, aspect type) -- the cut-offs and their 95%
intervals on what was graded when the round was drawn, how many items it added, and why a stratum stopped.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE TABLE calibration_rounds (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        round INTEGER NOT NULL CHECK (round >= 1),
        metric TEXT NOT NULL,
        aspect_type TEXT NOT NULL,
        n_graded INTEGER NOT NULL,
        low REAL,
        high REAL,
        low_ci_lo REAL,
        low_ci_hi REAL,
        high_ci_lo REAL,
        high_ci_hi REAL,
        items_added INTEGER NOT NULL,
        stop TEXT CHECK (stop IS NULL OR stop IN ('target', 'budget', 'pool')),
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (campaign_id, round, metric, aspect_type)
    )
    """)
