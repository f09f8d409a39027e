"""The connection pool of the web app's short operations (medeval.store.db.pooled / ConnectionPool)."""

from __future__ import annotations

import os
import sqlite3
import threading

import pytest

from medeval.core import runtime
from medeval.store import db as store
from medeval.store.db import ConnectionPool, connect, pooled, transaction


@pytest.fixture()
def path(tmp_path):
    p = str(tmp_path / "pool.db")
    with connect(p) as d:  # migrated, like the app's database
        d.conn.execute("CREATE TABLE t (x INTEGER)")
    with runtime.use(runtime.current().but(pool=ConnectionPool())) as rt:  # a pool of the test's own
        yield p
        rt.pool.clear()


def test_a_connection_is_reused_for_the_next_operation_on_the_same_file(path):
    with pooled(path) as d:
        first = d.conn
    with pooled(path) as d:
        assert d.conn is first
        assert d.conn.execute("SELECT count(*) FROM _migrations").fetchone()[0] > 0


def test_nested_operations_get_different_connections(path):
    with pooled(path) as a, pooled(path) as b:
        assert a.conn is not b.conn


def test_a_transaction_left_open_is_rolled_back_before_reuse(path):
    with pooled(path) as d:
        d.conn.execute("BEGIN IMMEDIATE")
        d.conn.execute("INSERT INTO t VALUES (1)")
        conn = d.conn
    assert not conn.in_transaction
    with connect(path) as d:
        assert d.conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0  # nothing of it was committed
    with pooled(path) as d:  # and the write lock is free again
        with transaction(d):
            d.conn.execute("INSERT INTO t VALUES (2)")
    with connect(path) as d:
        assert d.conn.execute("SELECT x FROM t").fetchall() == [(2,)]


def test_settings_an_operation_changed_are_restored(path):
    with pooled(path) as d:
        d.conn.execute("PRAGMA foreign_keys=OFF")  # as the importer does for its staging
        d.conn.execute("PRAGMA busy_timeout=5")
    with pooled(path) as d:
        assert d.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert d.conn.execute("PRAGMA busy_timeout").fetchone()[0] == store.BUSY_TIMEOUT_MS


def test_a_connection_closed_by_its_user_is_not_reused(path):
    with pooled(path) as d:
        closed = d.conn
        closed.close()
    with pooled(path) as d:
        assert d.conn is not closed
        d.conn.execute("SELECT 1")


def test_a_file_deleted_and_created_again_gets_a_new_connection(path):
    with pooled(path) as d:
        old = d.conn
    os.remove(path)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    with connect(path) as d:
        d.conn.execute("CREATE TABLE fresh (y)")
    with pooled(path) as d:
        assert d.conn is not old
        assert d.conn.execute("SELECT name FROM sqlite_master WHERE name IN ('t', 'fresh')").fetchall() == [("fresh",)]


def test_writes_of_other_connections_are_seen(path):
    with pooled(path) as d:
        assert d.conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    with connect(path) as other, transaction(other):
        other.conn.execute("INSERT INTO t VALUES (7)")
    with pooled(path) as d:
        assert d.conn.execute("SELECT x FROM t").fetchall() == [(7,)]


def test_at_most_size_idle_connections_are_kept_least_recent_file_first(tmp_path):
    pool = ConnectionPool(size=3)
    paths = []
    for i in range(3):
        p = str(tmp_path / f"f{i}.db")
        sqlite3.connect(p).close()
        paths.append(p)
    taken = [(p, *pool.take(p)) for p in (paths[0], paths[0], paths[1], paths[2])]
    for p, conn, ident in taken:
        pool.give(p, conn, ident)
    first = taken[0][1]
    with pytest.raises(sqlite3.ProgrammingError):  # the oldest file's oldest connection was closed
        first.execute("SELECT 1")
    assert sum(len(v) for v in pool._idle.values()) == 3
    pool.clear()


def test_memory_databases_are_never_pooled():
    with pooled(":memory:") as d:
        d.conn.execute("CREATE TABLE x (a)")
    with pooled(":memory:") as d:
        assert d.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def test_concurrent_operations_never_share_a_connection(path):
    in_use: set[int] = set()
    clash = []
    lock = threading.Lock()

    def work():
        for _ in range(200):
            with pooled(path) as d:
                with lock:
                    if id(d.conn) in in_use:
                        clash.append(id(d.conn))
                    in_use.add(id(d.conn))
                d.conn.execute("SELECT count(*) FROM t").fetchone()
                with lock:
                    in_use.discard(id(d.conn))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert clash == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_child_does_not_use_the_parents_connections(path):
    with pooled(path) as d:
        parent_conn = d.conn
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            with pooled(path) as d:
                os.write(w, b"same" if d.conn is parent_conn else b"new")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(r, 10) == b"new"
    with pooled(path) as d:
        assert d.conn is parent_conn  # the parent's pool is untouched
