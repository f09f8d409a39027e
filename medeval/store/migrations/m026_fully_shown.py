"""Every answer records whether the annotator's screen showed every text of the item in full when it was given:
``answers.fully_shown`` (1: every text was whole on screen, or each long one was scrolled to its end; 0: not; NULL:
not known -- an answer written before this migration, by the command line or the library, or from a screen that
does not measure, such as a change made from the list of one's answers).

A grade is worth what the doctor read: the campaign report counts the answers given without the whole text.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, "ALTER TABLE answers ADD COLUMN fully_shown INTEGER CHECK (fully_shown IN (0, 1))")
