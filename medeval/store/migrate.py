"""Apply the schema's migrations (``medeval/store/migrations/mNNN_*.py``), discovered by name.

Each migration module defines ``up(db)``; the runner imports the modules by name, so the store
layer never imports the layers whose tables they create, and ``_migrations`` records the names
applied. Adding a table: write the next-numbered module (copy ``m006_threshold_drafts.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sqlite3
import time
from typing import Callable

import sqlite_utils

from medeval.core import runtime
from medeval.core.errors import MedevalError

Migration = Callable[[sqlite_utils.Database], None]
PACKAGE = "medeval.store.migrations"
_NAME = re.compile(r"m(\d{3})_[a-z0-9_]+")


def run_script(db: sqlite_utils.Database, script: str) -> None:
    """Run ``;``-separated statements inside the caller's open transaction.

    Not ``conn.executescript()``: that COMMITs the migration's open transaction first.
    """
    for statement in script.split(";\n"):
        if statement.strip():
            db.conn.execute(statement)


class Migrations:
    """The schema's migrations as ``(name, up)``, in order of their numbers: discovered once, then fixed.

    The current runtime keeps one (``medeval.core.runtime``; :func:`discovered`); a test gives its own runtime a
    list of its own (``Runtime(migrations=Migrations([...]))``) to migrate a database as older code did."""

    def __init__(self, items):
        self.items: tuple[tuple[str, Migration], ...] = tuple(items)

    @classmethod
    def discover(cls, package_name: str = PACKAGE) -> Migrations:
        """Every ``mNNN_what`` module of ``package_name``; a misnamed module or a shared number is an error."""
        package = importlib.import_module(package_name)
        found, numbers = [], {}
        for info in pkgutil.iter_modules(package.__path__):
            m = _NAME.fullmatch(info.name)
            if not m:
                raise MedevalError(f"{package_name}.{info.name}: a migration module is named mNNN_what (internal error)")
            if m.group(1) in numbers:
                raise MedevalError(f"migrations {numbers[m.group(1)]} and {info.name} share a number (internal error)")
            numbers[m.group(1)] = info.name
            found.append((info.name, importlib.import_module(f"{package_name}.{info.name}").up))
        return cls(sorted(found))

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def discovered() -> Migrations:
    """The current runtime's migrations (:meth:`Migrations.discover`, on first use)."""
    return runtime.current().part("migrations", lambda _: Migrations.discover())


def migrations() -> list[tuple[str, Migration]]:
    """Every migration as ``(name, up)``, in order of its number; found once per runtime."""
    return list(discovered().items)


def applied_count(db: sqlite_utils.Database) -> int:
    """How many migrations the database has had (``_migrations``'s rows; 0 before the first)."""
    if not db.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='_migrations'").fetchone():
        return 0
    return db.conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]


def migrate_db(db: sqlite_utils.Database) -> list[str]:
    """Apply pending migrations, all in one ``BEGIN IMMEDIATE`` transaction. Returns the names applied."""
    conn = db.conn
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:  # another connection holds a lock; WAL is set by whoever migrated first
            pass
    todo = migrations()
    have = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name='_migrations'")}
    if have:
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
        if all(name in done for name, _ in todo):
            return []
    applied = []
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
        for name, up in todo:
            if name in done:
                continue
            up(db)
            conn.execute("INSERT INTO _migrations VALUES (?, ?)",
                         (name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
            applied.append(name)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return applied
