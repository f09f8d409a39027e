"""An adjudication records, like every answer (m026), whether the adjudicator's screen showed the reference and the
model's answer in full when the final tier was saved: ``adjudications.fully_shown`` (1: both whole on screen, or each
long one scrolled to its end; 0: not; NULL: not known -- an adjudication from before this migration, the command
line or the library).

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, "ALTER TABLE adjudications ADD COLUMN fully_shown INTEGER CHECK (fully_shown IN (0, 1))")
