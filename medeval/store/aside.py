"""Rows written aside: a long job's rows go to a side file first, so that a job that fails leaves nothing behind.

A long write job (an import) writes its rows into ``<database>.<job>-aside``, a second SQLite file next to the
database, in as many transactions as it likes and without holding the database's write lock; one last
transaction on the database then copies them in (``INSERT ... SELECT`` from the side file, :func:`attached`)
and commits, or fails and is rolled back whole. The side file is removed in every case (:func:`rows`), and a
killed job's is removed by the next holder of the job's lock.

Why not write the rows into the database in chunks and delete them on a failure: on a full disk the delete
cannot be written either -- deleting rows writes about as many pages to the write-ahead log as inserting them
did (1.8 MB of log to delete a batch of 1.6 MB, measured) --, so the rows' pages stay committed, every
checkpoint then needs room the disk no longer has, the log cannot be emptied and each later write (a sign-in)
fails. A transaction that is rolled back leaves only uncommitted frames in the log, which a TRUNCATE
checkpoint drops without writing them (:func:`give_back`), and the side file's removal frees the rest.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from contextlib import contextmanager
from typing import Iterator

import sqlite_utils

from medeval.store.db import database_file

GIVE_BACK_WAIT_MS = 1000
"""How long a TRUNCATE checkpoint waits for readers: it keeps new writers waiting meanwhile (SQLite's rule), so
only briefly; a log it could not empty now is cut to ``journal_size_limit`` at its next reset."""


def side_path(db: sqlite_utils.Database, job: str) -> str | None:
    """Where ``job``'s side file of this database lies (None for an in-memory database: a temporary file then)."""
    file = database_file(db)
    return f"{file}.{job}-aside" if file else None


def _remove(path: str) -> None:
    for p in (path, f"{path}-journal", f"{path}-wal", f"{path}-shm"):
        try:
            os.remove(p)
        except FileNotFoundError:
            pass


@contextmanager
def rows(db: sqlite_utils.Database, job: str) -> Iterator[sqlite_utils.Database]:
    """A new, empty side file for ``job``'s rows, open for the block and removed after it, whatever happens.

    Call it holding ``job``'s lock (:func:`medeval.store.db.job_lock`): a side file found at the path is a killed
    job's and is removed first. The side file keeps its rollback journal in memory and is not synced: it is thrown
    away on any failure, so it needs neither."""
    path = side_path(db, job)
    if path is None:
        fd, path = tempfile.mkstemp(prefix=f"medeval-{job}-", suffix=".aside")
        os.close(fd)
    _remove(path)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA synchronous=OFF")
        yield sqlite_utils.Database(conn)
    finally:
        conn.close()
        _remove(path)


@contextmanager
def attached(db: sqlite_utils.Database, side: sqlite_utils.Database, name: str = "aside") -> Iterator[None]:
    """The side file ``side`` attached to ``db`` as schema ``name`` for the block (outside any transaction: SQLite
    attaches and detaches only there)."""
    file = database_file(side)
    db.conn.execute("ATTACH DATABASE ? AS " + name, (file,))
    try:
        yield
    finally:
        if db.conn.in_transaction:  # the block's own transaction ends first; never leave one open here
            db.conn.execute("ROLLBACK")
        try:
            db.conn.execute("DETACH DATABASE " + name)
        except sqlite3.Error:  # a committed copy is not undone by this: the side file goes with the connection
            pass


def give_back(db: sqlite_utils.Database, *, wait_ms: int = GIVE_BACK_WAIT_MS) -> bool:
    """Copy the write-ahead log into the database and cut it to 0 bytes (a TRUNCATE checkpoint), so that a failed
    job's uncommitted pages take no room on the disk; True when the log is empty. Never raises: a reader holding
    an old snapshot, or a disk too full for the copy, leaves the log as it is (False)."""
    conn = db.conn
    if database_file(db) is None or conn.in_transaction:
        return False
    old = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    try:
        conn.execute(f"PRAGMA busy_timeout={int(wait_ms)}")
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return busy == 0
    except sqlite3.Error:
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout={old}")
