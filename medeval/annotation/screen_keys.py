"""The keys a screen's widgets carry for the items on it (issue 23 §3: nothing on a page tells a gold item from a
real one). A page keys an item's buttons, boxes and forms by :func:`screen_key` of the item's opaque reference
(``i:<item>``, ``h:<gold>``, ``q:<gold>:<attempt>``; see :func:`medeval.annotation.gold.parse_ref`), never by an id."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable

import sqlite_utils

from medeval.accounts.auth import User


def screen_key(db: sqlite_utils.Database, user: User, ref: str, space: str = "tier") -> str:
    """The key a screen's widgets carry for the item of opaque reference ``ref`` (real or gold, tier or task):
    12 hex digits of an HMAC under the database's secret of (space, annotator, ref) -- the same on every rerun,
    different for every annotator, and nothing in it (range, order, form) tells a gold item from a real one or
    gives an item's id away."""
    return keyer(db, user, space)(ref)


def keyer(db: sqlite_utils.Database, user: User, space: str = "tier") -> Callable[[str], str]:
    """:func:`screen_key` for many references of one annotator: the database's secret read once."""
    row = db.conn.execute("SELECT secret FROM app_secret WHERE id = 1").fetchone()
    secret = (row[0] if row else "").encode()
    return lambda ref: "k" + hmac.new(secret, f"{space}|{user.id}|{ref}".encode(), hashlib.sha256).hexdigest()[:12]
