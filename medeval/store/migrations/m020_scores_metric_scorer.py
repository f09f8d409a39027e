"""An index of the scores by (metric, scorer) (issue 22's leftover, issue 23).

Which scorers produced a metric's scores (the Leaderboard's "why not compared", the reports' scorer notes) was a
scan of every score (``SELECT DISTINCT scorer FROM scores WHERE metric = ?``: about 2.3 million rows at the paper's
scale, on every page view); with this index each distinct scorer is one index seek
(:func:`medeval.reports.leaderboard.scorers`), and counting a set's tiers in memory reads one metric's scores from
it, not the whole table.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, "CREATE INDEX IF NOT EXISTS scores_metric_scorer ON scores(metric, scorer)")
