"""One table of assignments (issue 25, section 1): which annotator answers which item, at which place of their
queue, for both families -- ``item_assignments``, with ``family`` ('tier' or 'task') and, for a task item, the
``layout`` (the order of its responses, left/right) this annotator sees. Before, two tables held them:
``assignments`` (tier grading) and ``task_assignments``.

* An item keeps its family's id (``campaign_items`` or ``task_items``); a trigger checks the item exists in its
  family and campaign, as the old foreign keys required (one column cannot refer to two tables).
* A ``WITHOUT ROWID`` table: a row is found by its key (item, annotator, family) with every column. An annotator's
  queue in a campaign is read from the index ``item_assignments_queue`` (campaign, annotator, family, position,
  item) alone: through the unique (campaign, annotator, position) index the views' family term cost a row lookup
  per assignment (``bench_gold_timing.py``).
* Assignments are fixed when a campaign is created (exactly k per item, stored up front): the table refuses
  changes and deletions, as nothing in the product ever made one.
* The two old names stay, as views with the columns they had; inserting through them goes to the table. Their
  family term is marked ``likely()`` for the planner, as m023's views are.
* ``answers``' check that a real answer's item is assigned (m023) now reads this table, one index seek.

Existing rows are copied as they are (an assignment has no id of its own). All in the runner's one transaction.

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script

TABLE = """
    CREATE TABLE item_assignments (
        family TEXT NOT NULL CHECK (family IN ('tier', 'task')),
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        position INTEGER NOT NULL,
        layout TEXT,
        PRIMARY KEY (item_id, user_id, family),
        UNIQUE (campaign_id, user_id, position),
        CHECK ((family = 'task') = (layout IS NOT NULL))
    ) WITHOUT ROWID;
    CREATE INDEX item_assignments_queue ON item_assignments(campaign_id, user_id, family, position, item_id);
    INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, layout)
        SELECT 'tier', item_id, user_id, campaign_id, position, NULL FROM assignments;
    INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, layout)
        SELECT 'task', item_id, user_id, campaign_id, position, layout FROM task_assignments;
    DROP TABLE assignments;
    DROP TABLE task_assignments;
    CREATE TRIGGER item_assignments_no_update BEFORE UPDATE ON item_assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;
    CREATE TRIGGER item_assignments_no_delete BEFORE DELETE ON item_assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;
    CREATE TRIGGER item_assignments_item_exists BEFORE INSERT ON item_assignments
        WHEN NOT CASE NEW.family
            WHEN 'tier' THEN EXISTS (SELECT 1 FROM campaign_items i
                                     WHERE i.id = NEW.item_id AND i.campaign_id = NEW.campaign_id)
            WHEN 'task' THEN EXISTS (SELECT 1 FROM task_items i
                                     WHERE i.id = NEW.item_id AND i.campaign_id = NEW.campaign_id)
            ELSE 1
        END
        BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: an assignment names no item of its campaign'); END;
    CREATE VIEW assignments AS
        SELECT item_id, user_id, campaign_id, position FROM item_assignments WHERE likely(family = 'tier');
    CREATE VIEW task_assignments AS
        SELECT item_id, user_id, campaign_id, position, layout FROM item_assignments WHERE likely(family = 'task');
    CREATE TRIGGER assignments_insert INSTEAD OF INSERT ON assignments BEGIN
        INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, layout)
        VALUES ('tier', NEW.item_id, NEW.user_id, NEW.campaign_id, NEW.position, NULL); END;
    CREATE TRIGGER task_assignments_insert INSTEAD OF INSERT ON task_assignments BEGIN
        INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, layout)
        VALUES ('task', NEW.item_id, NEW.user_id, NEW.campaign_id, NEW.position, NEW.layout); END;
    DROP TRIGGER answers_item_exists;
    CREATE TRIGGER answers_item_exists BEFORE INSERT ON answers
        WHEN NOT CASE
            WHEN NEW.gold = 0 AND NEW.family IN ('tier', 'task') THEN EXISTS (SELECT 1 FROM item_assignments a
                WHERE a.item_id = NEW.item_id AND a.user_id = NEW.user_id AND a.family = NEW.family
                AND a.campaign_id = NEW.campaign_id)
            WHEN NEW.family = 'tier' AND NEW.gold = 1 THEN EXISTS (SELECT 1 FROM gold_items g
                WHERE g.id = NEW.item_id AND g.campaign_id = NEW.campaign_id)
            WHEN NEW.family = 'task' AND NEW.gold = 1 THEN EXISTS (SELECT 1 FROM task_gold_items g
                WHERE g.id = NEW.item_id AND g.campaign_id = NEW.campaign_id)
            ELSE 1
        END
        BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: an answer names an item that is not assigned'); END
"""

_REFUSE = """
    CREATE TRIGGER {view}_no_update INSTEAD OF UPDATE ON {view}
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;
    CREATE TRIGGER {view}_no_delete INSTEAD OF DELETE ON {view}
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END
"""


def up(db: sqlite_utils.Database) -> None:
    db.conn.execute("PRAGMA defer_foreign_keys = ON")  # (checked at COMMIT)
    run_script(db, TABLE)
    run_script(db, ";\n".join(_REFUSE.format(view=v) for v in ("assignments", "task_assignments")))
