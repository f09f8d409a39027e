"""Hidden and qualification gold answers of tier campaigns record the guidelines' version on screen, as real
grades (m010) and task gold answers (m015) already do: ``gold_answers.guideline_version``.

A reviewer reading why an annotator missed a gold item needs the version of the guidelines the annotator had
confirmed when answering it. Rows written before this migration keep NULL (the version was not recorded).

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, "ALTER TABLE gold_answers ADD COLUMN guideline_version INTEGER")
