"""Opening the database from a command: :func:`connect` for every command, :func:`reading` for one that only reads.

``medeval.store.db`` hands out a ``sqlite_utils.Database``, and importing sqlite-utils (numpy with it) took most of
the start-up of a command that only lists something (``users list``, ``campaign list``; ``bench/bench_startup.py``).
So a command module imports store.db only when a command opens the database through :func:`connect`, and a command
that only reads, and whose library functions read through the open database's ``conn`` alone, opens it with
:func:`reading`: a plain sqlite3 connection with store.db's settings (:mod:`medeval.store.reading`), when the
database is up to date. A database
that is not there yet, not in WAL mode, or short of a migration of this code's is opened by store.db's ``connect``,
which brings it up to date first -- exactly what the command did before.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from medeval.core import settings
from medeval.store.reading import Reading, open_if_up_to_date


def connect(db_path):
    """``medeval.store.db.connect(db_path)`` (the schema brought up to date first), imported when it is used."""
    from medeval.store.db import connect as store_connect

    return store_connect(db_path)


@contextmanager
def reading(db_path) -> Iterator[Reading]:
    """The database ``db_path`` (default ``MEDEVAL_DB``) for a command that only reads: a :class:`Reading` when it
    is up to date, else what :func:`connect` opens."""
    path = str(db_path) if db_path not in (None, "") else settings.db_path()
    conn = open_if_up_to_date(path)
    if conn is None:
        with connect(path) as db:
            yield db
        return
    try:
        yield Reading(conn)
    finally:
        conn.close()
