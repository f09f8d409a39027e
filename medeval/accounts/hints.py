"""Per-user "start here" tips: which ones a user has hidden, hide one, show them all again.

The acting :class:`~medeval.accounts.auth.User` is the only user whose tips a call reads or
changes: there is no parameter naming another user, so nobody can hide or restore someone
else's tips. A tip is named by a short identifier chosen by the page (``campaigns``,
``grade``); anything else is refused with a :class:`MedevalError`.
"""

from __future__ import annotations

import re
import time

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.core.errors import MedevalError
from medeval.store.db import transaction

MAX_HINT_LENGTH = 40
_HINT_RE = re.compile(r"[a-z][a-z0-9_-]*")


def check_hint(hint: str) -> str:
    """``hint`` if it is a short identifier (lowercase letter first, then letters, digits, ``_`` or ``-``)."""
    if not isinstance(hint, str) or len(hint) > MAX_HINT_LENGTH or not _HINT_RE.fullmatch(hint):
        shown = repr(hint)[:MAX_HINT_LENGTH + 10]
        raise MedevalError(f"a tip's name is 1-{MAX_HINT_LENGTH} characters: lowercase letters, digits, _ and -, "
                           f"starting with a letter (got {shown}): use a name such as 'campaigns'")
    return hint


def is_dismissed(db: sqlite_utils.Database, user: User, hint: str) -> bool:
    """Whether ``user`` has hidden the tip ``hint``."""
    authorize(user, "hints.own", db=db)
    row = db.conn.execute("SELECT 1 FROM user_hints WHERE user_id = ? AND hint = ?",
                          (user.id, check_hint(hint))).fetchone()
    return row is not None


def dismiss(db: sqlite_utils.Database, user: User, hint: str) -> None:
    """Hide the tip ``hint`` for ``user`` (again: no change)."""
    authorize(user, "hints.own", db=db)
    hint = check_hint(hint)
    with transaction(db):
        db.conn.execute("INSERT OR IGNORE INTO user_hints (user_id, hint, dismissed_at) VALUES (?, ?, ?)",
                        (user.id, hint, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))


def restore(db: sqlite_utils.Database, user: User) -> int:
    """Show every tip to ``user`` again. Returns how many hidden tips came back."""
    authorize(user, "hints.own", db=db)
    with transaction(db):
        return db.conn.execute("DELETE FROM user_hints WHERE user_id = ?", (user.id,)).rowcount
