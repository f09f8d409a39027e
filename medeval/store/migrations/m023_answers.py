"""One table of answers (issue 25, section 1): every answer of every family -- a tier grade, a task question's
value, a skip, a flag, and the gold items' answers of both -- is a row of ``answers``, with a ``status``
(submitted, skipped, flagged) and a typed ``value`` (an INTEGER tier 0/1/2 for a grade, the question's TEXT value
for a task question; NULL when nothing was answered). Before, four tables held them: ``grade_annotations``,
``task_answers``, ``gold_answers`` and ``task_gold_answers``.

* ``family`` ('tier' or 'task') and ``gold`` (0/1) say whose item ``item_id`` names: a campaign item, a task
  item, a gold item or a task gold item (each keeps its own ids). ``campaign_id`` is the item's campaign, so
  "what did this annotator answer in this campaign" is one index seek, whatever the family.
* ``question`` is ``'tier'`` for a grade and the question id for a task answer ('' an item-level skip, '#flag'
  a flag). A flag's words are in ``note``.
* ``mode``/``attempt`` (a gold item's qualification or hidden answer) and ``layout`` (a task gold item's order
  on screen) are NULL for the real answers.
* Append-only as before: a change adds a row whose ``supersedes`` names the row it replaces.

The four old names stay, as views with the columns they had, so a researcher's SQL (and the readers that are
clearer over one family) keep working; inserting into a view goes to ``answers`` (``INSTEAD OF`` triggers), and
updating or deleting through one is refused with the old messages. ``latest_grade_annotations`` (m021) is
recreated over the new ``grade_annotations``. The assignment (real answers) or gold item (gold answers) an
answer names must exist, as the old foreign keys required: a trigger checks it, since one column cannot refer
to four tables.

Existing rows are copied: grades keep their ids; the other three families' ids (and their ``supersedes``) are
shifted past the largest id so far, one family after the other. Nothing outside a table referred to its answer
ids. All in the runner's one transaction: a failure leaves the database as it was.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.core.errors import MedevalError
from medeval.store.migrate import run_script

ANSWERS = """
    CREATE TABLE answers (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        family TEXT NOT NULL CHECK (family IN ('tier', 'task')),
        gold INTEGER NOT NULL DEFAULT 0 CHECK (gold IN (0, 1)),
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id),
        question TEXT NOT NULL,
        value,
        status TEXT NOT NULL CHECK (status IN ('submitted', 'skipped', 'flagged')),
        note TEXT,
        mode TEXT CHECK (mode IN ('qualification', 'hidden')),
        attempt INTEGER,
        layout TEXT,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES answers(id),
        guideline_version INTEGER,
        created_at REAL NOT NULL,
        UNIQUE (user_id, family, gold, client_token),
        CHECK ((gold = 1) = (mode IS NOT NULL)),
        CHECK (mode IS NULL OR (mode = 'qualification') = (attempt IS NOT NULL)),
        CHECK (family = 'task' OR (question = 'tier' AND (value IS NULL OR value IN (0, 1, 2)))),
        CHECK (status != 'skipped' OR value IS NULL)
    );
    CREATE TRIGGER answers_no_update BEFORE UPDATE ON answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
    CREATE TRIGGER answers_no_delete BEFORE DELETE ON answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;
    CREATE TRIGGER answers_item_exists BEFORE INSERT ON answers
        WHEN NOT CASE
            WHEN NEW.family = 'tier' AND NEW.gold = 0 THEN EXISTS (SELECT 1 FROM assignments a
                WHERE a.item_id = NEW.item_id AND a.user_id = NEW.user_id AND a.campaign_id = NEW.campaign_id)
            WHEN NEW.family = 'task' AND NEW.gold = 0 THEN EXISTS (SELECT 1 FROM task_assignments a
                WHERE a.item_id = NEW.item_id AND a.user_id = NEW.user_id AND a.campaign_id = NEW.campaign_id)
            WHEN NEW.family = 'tier' AND NEW.gold = 1 THEN EXISTS (SELECT 1 FROM gold_items g
                WHERE g.id = NEW.item_id AND g.campaign_id = NEW.campaign_id)
            WHEN NEW.family = 'task' AND NEW.gold = 1 THEN EXISTS (SELECT 1 FROM task_gold_items g
                WHERE g.id = NEW.item_id AND g.campaign_id = NEW.campaign_id)
            ELSE 1
        END
        BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: an answer names an item that is not assigned'); END
"""

# One index finds an (item, annotator)'s answers in a family, newest last, whichever family: the old tables'
# (item_id, user_id, id) and (user_id, gold_id, id) with (family, gold) before the id, so the newest id is one
# seek. An annotator's answers in one family use the unique index (user_id, family, gold, client_token). The old index
# names went with the old tables.
INDEXES = """
    CREATE INDEX answers_item ON answers(item_id, user_id, family, gold, id);
    CREATE INDEX answers_campaign_user ON answers(campaign_id, user_id)
"""

# The old tables' columns, in their order, as views (a tier's ``skipped``: no value; a task flag's ``value``: its note).
# ``likely()`` tells SQLite's planner that a view's family/gold terms keep most rows (it has no statistics): without it
# the planner took them for selective filters and chose to walk every answer of the database in item order for the
# adjudication queue's query (ORDER BY item_id) instead of seeking the campaign's items; with it every query reading
# the views has the plan it had over the old tables (EXPLAIN QUERY PLAN of 2,333 statements the tests run, compared
# before and after), and the terms still constrain the index seeks.
VIEWS = """
    CREATE VIEW grade_annotations AS
        SELECT id, item_id, user_id, value AS tier, value IS NULL AS skipped, status = 'flagged' AS flagged, note,
               client_token, supersedes, created_at, guideline_version
        FROM answers WHERE likely(family = 'tier') AND likely(gold = 0);
    CREATE VIEW task_answers AS
        SELECT id, item_id, user_id, question,
               CASE WHEN status = 'flagged' THEN note ELSE CAST(value AS TEXT) END AS value,
               status = 'skipped' AS skipped, client_token, supersedes, created_at, guideline_version
        FROM answers WHERE likely(family = 'task') AND likely(gold = 0);
    CREATE VIEW gold_answers AS
        SELECT id, item_id AS gold_id, user_id, value AS tier, value IS NULL AS skipped, status = 'flagged' AS flagged,
               note, mode, attempt, client_token, supersedes, created_at, guideline_version
        FROM answers WHERE likely(family = 'tier') AND likely(gold = 1);
    CREATE VIEW task_gold_answers AS
        SELECT id, item_id AS gold_id, user_id, question,
               CASE WHEN status = 'flagged' THEN note ELSE CAST(value AS TEXT) END AS value,
               status = 'skipped' AS skipped, mode, attempt, layout, client_token, supersedes, guideline_version,
               created_at
        FROM answers WHERE likely(family = 'task') AND likely(gold = 1);
    CREATE VIEW latest_grade_annotations AS
        SELECT g.* FROM grade_annotations g
        WHERE g.id = (SELECT max(a.id) FROM answers a WHERE a.family = 'tier' AND a.gold = 0
                      AND a.item_id = g.item_id AND a.user_id = g.user_id)
"""

# How a tier row's (tier, skipped, flagged) and a task row's (question, value, skipped) become (status, value, note).
_TIER_STATUS = ("CASE WHEN coalesce({p}flagged, 0) THEN 'flagged' WHEN coalesce({p}skipped, 0) OR {p}tier IS NULL "
                "THEN 'skipped' ELSE 'submitted' END")
_TIER_VALUE = "CASE WHEN coalesce({p}skipped, 0) THEN NULL ELSE {p}tier END"
_TASK_STATUS = ("CASE WHEN {p}question = '#flag' THEN 'flagged' WHEN coalesce({p}skipped, 0) THEN 'skipped' "
                "ELSE 'submitted' END")
_TASK_VALUE = "CASE WHEN {p}question = '#flag' OR coalesce({p}skipped, 0) THEN NULL ELSE {p}value END"
_TASK_NOTE = "CASE WHEN {p}question = '#flag' THEN {p}value END"

# Old-style inserts (a researcher's script, a test's fixture) through the views.
INSERTS = f"""
    CREATE TRIGGER grade_annotations_insert INSTEAD OF INSERT ON grade_annotations BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note,
                             client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM campaign_items WHERE id = NEW.item_id), 'tier', 0, NEW.item_id,
                NEW.user_id, 'tier', {_TIER_VALUE.format(p='NEW.')}, {_TIER_STATUS.format(p='NEW.')}, NEW.note,
                NEW.client_token, NEW.supersedes, NEW.guideline_version, NEW.created_at); END;
    CREATE TRIGGER task_answers_insert INSTEAD OF INSERT ON task_answers BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note,
                             client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM task_items WHERE id = NEW.item_id), 'task', 0, NEW.item_id,
                NEW.user_id, NEW.question, {_TASK_VALUE.format(p='NEW.')}, {_TASK_STATUS.format(p='NEW.')},
                {_TASK_NOTE.format(p='NEW.')}, NEW.client_token, NEW.supersedes, NEW.guideline_version,
                NEW.created_at); END;
    CREATE TRIGGER gold_answers_insert INSTEAD OF INSERT ON gold_answers BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note, mode,
                             attempt, client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM gold_items WHERE id = NEW.gold_id), 'tier', 1, NEW.gold_id,
                NEW.user_id, 'tier', {_TIER_VALUE.format(p='NEW.')}, {_TIER_STATUS.format(p='NEW.')}, NEW.note,
                NEW.mode, NEW.attempt, NEW.client_token, NEW.supersedes, NEW.guideline_version, NEW.created_at); END;
    CREATE TRIGGER task_gold_answers_insert INSTEAD OF INSERT ON task_gold_answers BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note, mode,
                             attempt, layout, client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM task_gold_items WHERE id = NEW.gold_id), 'task', 1, NEW.gold_id,
                NEW.user_id, NEW.question, {_TASK_VALUE.format(p='NEW.')}, {_TASK_STATUS.format(p='NEW.')},
                {_TASK_NOTE.format(p='NEW.')}, NEW.mode, NEW.attempt, NEW.layout, NEW.client_token, NEW.supersedes,
                NEW.guideline_version, NEW.created_at); END
"""

_REFUSE = """
    CREATE TRIGGER {view}_no_update INSTEAD OF UPDATE ON {view}
        BEGIN SELECT RAISE(ABORT, '{words} are append-only'); END;
    CREATE TRIGGER {view}_no_delete INSTEAD OF DELETE ON {view}
        BEGIN SELECT RAISE(ABORT, '{words} are append-only'); END
"""
REFUSALS = ";\n".join(_REFUSE.format(view=v, words=w) for v, w in (
    ("grade_annotations", "annotations"), ("task_answers", "annotations"), ("gold_answers", "gold answers"),
    ("task_gold_answers", "gold answers")))

# Copying the old rows: (table, campaign join, columns of answers, their values from the old row ``o``).
_COPIES = (
    ("grade_annotations", "campaign_items", "o.item_id",
     "'tier', 0, o.item_id, o.user_id, 'tier', {v}, {s}, o.note, NULL, NULL, NULL"),
    ("task_answers", "task_items", "o.item_id",
     "'task', 0, o.item_id, o.user_id, o.question, {tv}, {ts}, {tn}, NULL, NULL, NULL"),
    ("gold_answers", "gold_items", "o.gold_id",
     "'tier', 1, o.gold_id, o.user_id, 'tier', {v}, {s}, o.note, o.mode, o.attempt, NULL"),
    ("task_gold_answers", "task_gold_items", "o.gold_id",
     "'task', 1, o.gold_id, o.user_id, o.question, {tv}, {ts}, {tn}, o.mode, o.attempt, o.layout"),
)
_COLUMNS = ("id, campaign_id, family, gold, item_id, user_id, question, value, status, note, mode, attempt, layout, "
            "client_token, supersedes, guideline_version, created_at")


def _copy(db: sqlite_utils.Database) -> None:
    conn = db.conn
    for table, items, item, values in _COPIES:
        shift = 0 if table == "grade_annotations" else conn.execute(
            "SELECT coalesce(max(id), 0) FROM answers").fetchone()[0]
        values = values.format(v=_TIER_VALUE.format(p="o."), s=_TIER_STATUS.format(p="o."),
                               tv=_TASK_VALUE.format(p="o."), ts=_TASK_STATUS.format(p="o."),
                               tn=_TASK_NOTE.format(p="o."))
        conn.execute(f"INSERT INTO answers ({_COLUMNS}) SELECT o.id + {shift}, i.campaign_id, {values}, "
                     f"o.client_token, o.supersedes + {shift}, o.guideline_version, o.created_at "
                     f"FROM {table} o JOIN {items} i ON i.id = {item} ORDER BY o.id")
        left = conn.execute(f"SELECT count(*) FROM {table} o WHERE NOT EXISTS (SELECT 1 FROM {items} i "
                            f"WHERE i.id = {item})").fetchone()[0]
        if left:  # the old foreign key made this impossible; refuse rather than lose rows
            raise MedevalError(f"m023: {left} row(s) of {table} name no item; nothing was changed (internal error)")


def up(db: sqlite_utils.Database) -> None:
    conn = db.conn
    conn.execute("PRAGMA defer_foreign_keys = ON")  # the old tables' self-references go with them; checked at COMMIT
    run_script(db, ANSWERS)
    _copy(db)
    conn.execute("DROP VIEW latest_grade_annotations")
    for table in ("grade_annotations", "task_answers", "gold_answers", "task_gold_answers"):
        conn.execute(f"DROP TABLE {table}")  # (its indexes with it)
    run_script(db, INDEXES)
    run_script(db, VIEWS)
    run_script(db, INSERTS)
    run_script(db, REFUSALS)
