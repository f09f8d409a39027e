"""A threshold set's state, so that a publication or an activation killed half-way leaves nothing anyone sees.

``threshold_sets.state``:

* ``building`` -- a publication's new set while its grades are written in short transactions: listed nowhere,
  loaded by no reader, never active. The publication's last transaction makes it ``ready`` (and active). A
  publication killed before that leaves a ``building`` set with part of its grades: the next publication or
  activation (one at a time per database, under an OS lock that dies with its holder) deletes it and its grades,
  so its number is free again.
* ``grading`` -- a listed set that had no grades when an activation began to grade it. A killed activation leaves
  it ``grading``: the next publication or activation deletes the grades it had begun and makes it ``ready`` again,
  as it was. (A set that already had grades is not marked: the grades an activation adds to it are each correct,
  as after any interrupted ``medeval grade --version``.)
* ``ready`` -- every set before this migration, and every set stored whole.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script


def up(db: sqlite_utils.Database) -> None:
    run_script(db, "ALTER TABLE threshold_sets ADD COLUMN state TEXT NOT NULL DEFAULT 'ready' "
                   "CHECK (state IN ('building', 'grading', 'ready'))")
