"""The store's write transaction (:func:`medeval.store.db.transaction`), imported when a write first needs it.

``medeval.store.db`` imports sqlite-utils, and with it numpy: most of the start-up of a command that only reads
accounts (``medeval users list``). The accounts' reads take the open database they are given and need neither, so
``auth`` and ``cookies`` write through :func:`transaction` here instead of importing store.db when they load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parameter's type only
    import sqlite_utils


def transaction(db: sqlite_utils.Database):
    """``medeval.store.db.transaction(db)``: ``BEGIN IMMEDIATE`` on the open connection, committed or rolled back."""
    from medeval.store.db import transaction as store_transaction

    return store_transaction(db)
