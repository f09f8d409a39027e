"""One item model: every item of every campaign is named by (family, gold, id), written by :func:`add` and read
through the view ``items`` (m025) -- the counterpart of :mod:`medeval.annotation.answer_rows` for answers.

An item is a tier campaign's scored response (``response_id``, its sampling ``strata``) or a task campaign's
``source`` key and JSON ``payload``; a gold item adds its ``expected`` answer (an int tier, or the task's
canonical JSON), the ``reason``, ``created_by`` and ``created_at``, and can be retired (no longer handed out).
Each family keeps its typed table (``campaign_items``, ``task_items``, ``gold_items``, ``task_gold_items``) and
its ids, which the audit log, adjudications and exports name; m025 says why it is a view and not one table.

Callers write inside their ``BEGIN IMMEDIATE`` (:func:`medeval.store.db.transaction`).
"""

from __future__ import annotations

import sqlite_utils

from medeval.annotation.answer_rows import TASK_FAMILY, TIER_FAMILY

# (family, gold) -> the family's table and, for each column of the item model it has, the table's column
_TABLES = {
    (TIER_FAMILY, False): ("campaign_items", {"response_id": "response_id", "strata": "strata"}),
    (TASK_FAMILY, False): ("task_items", {"source": "source", "payload": "payload"}),
    (TIER_FAMILY, True): ("gold_items", {"response_id": "response_id", "expected": "expected_tier",
                                         "reason": "reason", "created_by": "created_by", "created_at": "created_at"}),
    (TASK_FAMILY, True): ("task_gold_items", {"source": "source", "payload": "payload", "expected": "expected",
                                              "reason": "reason", "created_by": "created_by",
                                              "created_at": "created_at"}),
}
_RETIRED = {TIER_FAMILY: "gold_retired", TASK_FAMILY: "task_gold_retired"}
# built once: creating a campaign adds its items one by one, thousands of them
_INSERT = {key: f"INSERT INTO {table} (campaign_id, {', '.join(cols.values())}) "
                f"VALUES ({', '.join('?' * (len(cols) + 1))})" for key, (table, cols) in _TABLES.items()}


def _table(family: str, gold: bool) -> tuple[str, dict[str, str]]:
    try:
        return _TABLES[(family, bool(gold))]
    except KeyError:
        raise ValueError(f"no item family {family!r} (tier or task)") from None


def add(db: sqlite_utils.Database, family: str, campaign_id: int, *, gold: bool = False, **values) -> int:
    """Write one item of ``family`` (gold or not) to the campaign; returns its id, its family's next.

    ``values`` are the item model's columns the family has, every one of them: ``response_id`` and ``strata``
    (tier), ``source`` and ``payload`` (task); a gold item also ``expected``, ``reason``, ``created_by`` and
    ``created_at``. A missing or foreign column is a programming error (ValueError), never a guess."""
    _, columns = _table(family, gold)
    if set(values) != set(columns):
        missing, foreign = sorted(set(columns) - set(values)), sorted(set(values) - set(columns))
        raise ValueError(f"a {'gold ' if gold else ''}{family} item has the columns {sorted(columns)}"
                         + (f"; missing {missing}" if missing else "") + (f"; not its own {foreign}" if foreign else ""))
    return db.conn.execute(_INSERT[(family, bool(gold))], [campaign_id] + [values[k] for k in columns]).lastrowid


def gold_retired(db: sqlite_utils.Database, family: str, campaign_id: int, gold_id: int) -> bool | None:
    """Is the campaign's gold item ``gold_id`` retired? None when the campaign has no such gold item."""
    _table(family, True)
    row = db.conn.execute("SELECT retired_at IS NOT NULL FROM items WHERE family = ? AND gold = 1 AND id = ? "
                          "AND campaign_id = ?", (family, gold_id, campaign_id)).fetchone()
    return None if row is None else bool(row[0])


def retire(db: sqlite_utils.Database, family: str, gold_id: int, *, retired_by: str, retired_at: str) -> None:
    """Retire a gold item: it is no longer handed out; its answers stay (append-only, so once only)."""
    _table(family, True)
    db.conn.execute(f"INSERT INTO {_RETIRED[family]} (gold_id, retired_by, retired_at) VALUES (?, ?, ?)",
                    (gold_id, retired_by, retired_at))


def active_gold_ids(db: sqlite_utils.Database, family: str, campaign_id: int) -> list[int]:
    """The ids of the campaign's gold items of ``family`` that are not retired, in id order."""
    _table(family, True)
    return [r[0] for r in db.conn.execute(
        "SELECT id FROM items WHERE family = ? AND gold = 1 AND campaign_id = ? AND retired_at IS NULL ORDER BY id",
        (family, campaign_id))]
