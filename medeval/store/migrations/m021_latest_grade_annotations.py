"""The latest grade of each (item, annotator), defined once: the view ``latest_grade_annotations``.

Grades are append-only (a change adds a row that supersedes the previous one), so "what an annotator answers
now" is the row with the highest id of its (item, annotator). Nine queries wrote that as the same correlated
subquery; they read this view instead. SQLite flattens the view into the query that reads it, so the plan is
the one the subquery had: the newest id comes from the index ``grade_annotations_item`` (item_id, user_id, id)
of m004, one index seek per row (``bench/bench_latest_grades.py`` times it on 100,000 grades).

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, """
    CREATE VIEW latest_grade_annotations AS
        SELECT g.* FROM grade_annotations g
        WHERE g.id = (SELECT max(g2.id) FROM grade_annotations g2
                      WHERE g2.item_id = g.item_id AND g2.user_id = g.user_id)
    """)
