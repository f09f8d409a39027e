"""Storage: migrations, WAL, and real concurrent writers on one SQLite file."""

import sqlite3
import threading

from medeval import db as mdb


def test_migrations_are_idempotent_and_recorded(db_path):
    with mdb.connect(db_path) as d:
        names = [r[0] for r in d.conn.execute("SELECT name FROM _migrations ORDER BY name")]
        assert names == sorted(n for n, _ in mdb.MIGRATIONS)
        assert mdb.migrate_db(d) == []
        assert d.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    expected = {"kb_entries", "models", "responses", "scores", "embeddings", "threshold_sets", "thresholds", "grades"}
    conn = sqlite3.connect(str(db_path))
    assert expected <= {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_failed_transaction_rolls_back(db):
    try:
        with mdb.transaction(db):
            db.conn.execute("INSERT INTO models (name, kind) VALUES ('X', 'general')")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert db.conn.execute("SELECT count(*) FROM models").fetchone()[0] == 0


def test_schema_rejects_bad_rows(db):
    import pytest

    with pytest.raises(sqlite3.IntegrityError):
        db.conn.execute("INSERT INTO models (name, kind) VALUES ('X', 'alien')")
    with pytest.raises(sqlite3.IntegrityError):
        db.conn.execute("INSERT INTO thresholds VALUES (1, 'bleu1', 'enumerated', 0.5, 0.1)")


def test_many_concurrent_writers_no_lost_write_no_lock_error(db_path):
    """24 threads, each with its own connections, write 20 rows each in BEGIN IMMEDIATE transactions."""
    with mdb.connect(db_path):
        pass
    errors, barrier = [], threading.Barrier(24)

    def worker(i):
        try:
            barrier.wait()
            for j in range(20):
                with mdb.write_tx(db_path) as d:
                    n = d.conn.execute("SELECT count(*) FROM models").fetchone()[0]
                    d.conn.execute("INSERT INTO models (name, kind, backbone) VALUES (?, 'general', ?)",
                                   (f"m{i}-{j}", str(n)))
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with mdb.connect(db_path) as d:
        rows = d.conn.execute("SELECT backbone FROM models").fetchall()
    assert len(rows) == 480
    # each transaction saw all earlier commits: the counts it read are exactly 0..479 (serialised writes)
    assert sorted(int(r[0]) for r in rows) == list(range(480))


def test_missing_folder_is_a_clear_error(tmp_path):
    import pytest

    from medeval.errors import MedevalError

    with pytest.raises(MedevalError, match="does not exist"):
        with mdb.connect(tmp_path / "nope" / "x.db"):
            pass
