"""The one table every answer is written to, ``answers`` (m023), and the one statement that writes it.

Every family's answer -- a tier grade, a task question's value, a skip, a flag, and the gold items' answers of
both -- is a row: its ``campaign_id``, ``family`` ('tier' or 'task') and ``gold`` (0/1) say whose ``item_id``
it names; ``status`` is the :class:`medeval.annotation.answers.Answer`'s (submitted, skipped, flagged) and
``value`` its typed value (an int tier, or a task question's value; None when nothing was answered); a flag's
words are in ``note``. The old tables' names (``grade_annotations``, ``task_answers``, ``gold_answers``,
``task_gold_answers``) are views of it, which the family readers query.

Callers have run the guards (:mod:`medeval.annotation.answers.guards`) inside their ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

import sqlite_utils

TIER_FAMILY, TASK_FAMILY = "tier", "task"
TIER_QUESTION = "tier"  # the question of a tier grade (a task answer's is the question id; state.SKIP, state.FLAG)


def status_of(*, skipped: bool, flagged: bool) -> str:
    """An answer's status from a screen's (skipped, flagged): a flag wins (it may come with a grade, or none)."""
    return "flagged" if flagged else "skipped" if skipped else "submitted"


_INSERT = ("INSERT INTO answers (campaign_id, family, gold, item_id, user_id, question, value, status, note, mode, "
           "attempt, layout, client_token, supersedes, guideline_version, created_at, fully_shown) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def insert(db: sqlite_utils.Database, *, campaign_id: int, family: str, item_id: int, user_id: int, question: str,
           value, status: str, client_token: str, created_at: float, note: str | None = None,
           supersedes: int | None = None, guideline_version: int | None = None, gold: bool = False,
           mode: str | None = None, attempt: int | None = None, layout: str | None = None,
           fully_shown: bool | None = None) -> int:
    """Append one answer row; returns its id. The table's checks refuse a row no family could have written
    (a tier outside 0/1/2, a skip with a value, a gold answer without its mode, an item not assigned).
    ``fully_shown``: whether the screen showed the item's whole text (None: not known; m026)."""
    cur = db.conn.execute(_INSERT, (campaign_id, family, int(gold), item_id, user_id, question, value, status, note,
                                    mode, attempt, layout, client_token, supersedes, guideline_version, created_at,
                                    None if fully_shown is None else int(fully_shown)))
    return cur.lastrowid


def answered_in(db: sqlite_utils.Database, user_id: int, campaign_id: int) -> bool:
    """Has this annotator written any answer in this campaign (a grade, a task answer, a skip, a flag, a gold
    answer)? One index seek (``answers_campaign_user``)."""
    return db.conn.execute("SELECT EXISTS (SELECT 1 FROM answers WHERE campaign_id = ? AND user_id = ?)",
                           (campaign_id, user_id)).fetchone()[0] == 1


def saved(db: sqlite_utils.Database, family: str, user_id: int, client_token: str, *, gold: bool = False) -> int | None:
    """The id of the row this annotator's ``client_token`` already wrote in this family (a resend), or None."""
    row = db.conn.execute("SELECT id FROM answers WHERE user_id = ? AND family = ? AND gold = ? AND client_token = ?",
                          (user_id, family, int(gold), client_token)).fetchone()
    return row[0] if row else None
