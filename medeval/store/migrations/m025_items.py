"""One item model (issue 25, section 1): the view ``items`` shows every item of every campaign -- a tier
campaign's items and gold items, a task campaign's items and gold items -- as one row shape, and the items of
all four families are fixed once written.

``items`` columns: ``family`` ('tier' or 'task') and ``gold`` (0/1), the family's ``id``, ``campaign_id``; what
the item is -- a scored response and its sampling ``strata`` (tier), or a ``source`` key and its JSON
``payload`` (task); for a gold item its ``expected`` answer (an INTEGER tier 0-2, or the task's canonical JSON
TEXT), the ``reason``, who marked it and when, and ``retired_by``/``retired_at`` (NULL while it is handed out).
``answers`` (m023) and ``item_assignments`` (m024) name an item the same way: (family, gold, id).

* ``expected`` is written ``+gi.expected_tier`` and ``+tg.expected``, without affinity: a tier stays an INTEGER
  and a task's answer TEXT when a join materialises the view (SQLite would otherwise give the column one
  affinity for all four arms, and a tier would read back as '2').
* Each arm's table has an alias of its own (``ci``, ``ti``, ``gi``, ``tg``), so a query plan says which family's
  table it reads. A read's terms are pushed into each arm; an arm whose family or gold term is false is skipped.

Why a view over the four typed tables, not one table:

* An item's id is its family's, and history names it: the append-only audit log (``task_item:12``, gold ids),
  ``adjudications``, ``gold_attempts.gold_ids`` and every export. One table keeps those ids only under a
  (family, gold, id) key, so nothing could refer to it by a foreign key.
* The shipped m013 creates ``adjudications`` with a foreign key to ``campaign_items``; SQLite reports "foreign key
  mismatch" for a key that names a view, so ``campaign_items`` stays a table for every database m013 may yet
  meet (``tests/test_adjudication.py`` applies it after all later migrations).
* Each family's columns are checked by its own table (a tier item has a scored response, a task item a source);
  one table would trade those NOT NULLs for CHECKs on combinations of columns.

``medeval.annotation.item_rows`` is the one module that writes items and retirements, and reads the view.

``campaign_items`` and ``task_items`` gain the append-only triggers gold items already had: nothing in the
product changes or deletes an item (answers and assignments name it).

A migration is history: never edit one that has shipped; add the next number instead."""

from __future__ import annotations

import sqlite_utils

from medeval.store.migrate import run_script

VIEW = """
    CREATE VIEW items (family, gold, id, campaign_id, response_id, strata, source, payload, expected, reason,
                       created_by, created_at, retired_by, retired_at) AS
        SELECT 'tier', 0, ci.id, ci.campaign_id, ci.response_id, ci.strata, NULL, NULL, NULL, NULL, NULL, NULL,
               NULL, NULL FROM campaign_items ci
        UNION ALL
        SELECT 'task', 0, ti.id, ti.campaign_id, NULL, NULL, ti.source, ti.payload, NULL, NULL, NULL, NULL, NULL,
               NULL FROM task_items ti
        UNION ALL
        SELECT 'tier', 1, gi.id, gi.campaign_id, gi.response_id, NULL, NULL, NULL, +gi.expected_tier, gi.reason,
               gi.created_by, gi.created_at, gr.retired_by, gr.retired_at
        FROM gold_items gi LEFT JOIN gold_retired gr ON gr.gold_id = gi.id
        UNION ALL
        SELECT 'task', 1, tg.id, tg.campaign_id, NULL, NULL, tg.source, tg.payload, +tg.expected, tg.reason,
               tg.created_by, tg.created_at, tr.retired_by, tr.retired_at
        FROM task_gold_items tg LEFT JOIN task_gold_retired tr ON tr.gold_id = tg.id
"""

_FIXED = """
    CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, 'items are fixed once written: answers and assignments name them'); END;
    CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, 'items are fixed once written: answers and assignments name them'); END
"""


def up(db: sqlite_utils.Database) -> None:
    run_script(db, VIEW)
    run_script(db, ";\n".join(_FIXED.format(table=t) for t in ("campaign_items", "task_items")))
