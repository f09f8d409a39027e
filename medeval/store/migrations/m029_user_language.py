"""Each account's interface language: ``users.language``, ``zh-CN`` or ``en``; NULL until the person (or an admin)
chooses, when ``MEDEVAL_LANGUAGE`` decides.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, "ALTER TABLE users ADD COLUMN language TEXT CHECK (language IS NULL OR language IN ('zh-CN', 'en'))")
