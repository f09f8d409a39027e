"""Storage: migrations, WAL, and real concurrent writers on one SQLite file."""

import sqlite3
import threading
from pathlib import Path

from medeval.core import runtime
from medeval.core.runtime import Runtime
from medeval.store import db as mdb
from medeval.store import migrate


def test_migrations_are_idempotent_and_recorded(db_path):
    with mdb.connect(db_path) as d:
        names = [r[0] for r in d.conn.execute("SELECT name FROM _migrations ORDER BY name")]
        assert names == sorted(n for n, _ in migrate.migrations())
        assert migrate.migrate_db(d) == []
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


def test_a_write_that_fails_on_a_full_disk_raises_that_error_not_a_rollback_error(db):
    """Issue 12 point 7: SQLite rolls back itself on a full disk; the transaction must not hide that."""
    import pytest

    pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
    db.conn.execute(f"PRAGMA max_page_count={pages}")  # a full disk, as SQLite sees it
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        with mdb.transaction(db):
            db.conn.executemany("INSERT INTO models (name, kind) VALUES (?, 'general')",
                                [(f"model {i} " + "x" * 500,) for i in range(2000)])
    assert not db.conn.in_transaction
    assert db.conn.execute("SELECT count(*) FROM models").fetchone()[0] == 0
    msg = mdb.write_failure(sqlite3.OperationalError("database or disk is full"))
    assert msg.startswith("the disk is full (database or disk is full): free space")


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

    from medeval.core.errors import MedevalError

    with pytest.raises(MedevalError, match="does not exist"):
        with mdb.connect(tmp_path / "nope" / "x.db"):
            pass


# ---------------------------------------------------------------- the schema and its migrations

SCHEMA = Path(__file__).resolve().parent / "data" / "schema.sql"
MIGRATION_NAMES = ["m001_core", "m002_table12", "m003_users_sessions_audit", "m004_campaigns", "m005_app_secret",
                   "m006_threshold_drafts", "m007_cases", "m008_tasks", "m009_import_batches", "m010_user_hints",
                   "m011_guidelines", "m012_calibration_rounds", "m013_adjudication", "m014_gold",
                   "m015_task_gold"]
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m016_exam_settlements"])  # issue 21: settled exam answers
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m017_judge_criterion_scores"])  # issue 21: per-criterion judge scores
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m018_table12_tokenizer"])  # issue 21: Table 12 under cjk-med-v2+t2s
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m020_scores_metric_scorer"])  # issue 23: scorers by index
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m021_latest_grade_annotations"])  # issue 25: the latest grade, a view
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m022_gold_guideline_version"])  # issue 25: gold answers record guidelines
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m023_answers"])  # issue 25: one table of answers, the old names views
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m024_item_assignments"])  # issue 25: one table of assignments
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m025_items"])  # issue 25: one item model (the view items)
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m026_fully_shown"])  # issue 32: whether the screen showed the whole text
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m027_adjudication_fully_shown"])  # issue 32: adjudications too
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m028_threshold_set_state"])  # a killed publication leaves no set seen
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m029_user_language"])  # each account's interface language
MIGRATION_NAMES = sorted(MIGRATION_NAMES + ["m030_table12_symbol_tokens"])  # Table 12 under cjk-med-v3+t2s


def schema_text(path) -> str:
    """sqlite_master of a database, in the format of tests/data/schema.sql (without its header)."""
    conn = sqlite3.connect(str(path))
    try:
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
                            "AND sql IS NOT NULL ORDER BY type, name").fetchall()
    finally:
        conn.close()
    return "".join(f"-- {t} {n}\n{s.strip()};\n\n" for t, n, s in rows)


def test_a_new_database_has_exactly_the_recorded_schema(db_path):
    # the layered move (issue 11) moved every migration; an existing annotations.db must find the same schema
    with mdb.connect(db_path):
        pass
    recorded = SCHEMA.read_text(encoding="utf-8")
    recorded = recorded.split("\n\n", 1)[1]  # after the header
    assert schema_text(db_path) == recorded


def test_migrations_are_discovered_by_name_in_order():
    # the names are what _migrations records in existing databases: they never change
    assert [name for name, _ in migrate.migrations()] == MIGRATION_NAMES


def test_a_database_with_every_migration_applied_is_left_alone(db_path):
    with mdb.connect(db_path) as d:
        d.conn.execute("CREATE TABLE marker (x)")
        before = [tuple(r) for r in d.conn.execute("SELECT name, applied_at FROM _migrations ORDER BY name")]
    with mdb.connect(db_path) as d:
        assert [tuple(r) for r in d.conn.execute("SELECT name, applied_at FROM _migrations ORDER BY name")] == before
        assert d.conn.execute("SELECT count(*) FROM marker").fetchone()[0] == 0


def test_a_failing_migration_leaves_the_database_unchanged(db_path, monkeypatch):
    with mdb.connect(db_path, migrate=False) as d:
        d.conn.execute("PRAGMA journal_mode=WAL")

    def broken(db):
        db.conn.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk I/O error")

    with runtime.use(Runtime(migrations=migrate.Migrations([*migrate.migrations()[:3], ("m004_broken", broken)]))):
        try:
            with mdb.connect(db_path):
                raise AssertionError("the broken migration should have raised")
        except sqlite3.OperationalError:
            pass
    conn = sqlite3.connect(str(db_path))
    assert not conn.execute("SELECT name FROM sqlite_master WHERE name IN ('half_done', 'kb_entries', '_migrations')"
                            ).fetchall()


def test_table12_migration_matches_the_engine_constant(db):
    # m002 writes the values out (a migration is history); they must equal thresholds.TABLE12
    from medeval.engine import thresholds as th

    v1 = th.load(db, 1)
    t = th.TABLE12
    assert (v1.name, v1.cutoffs, v1.tokenizer, v1.embedding_model, v1.provenance, v1.created_by, v1.active) == \
        (t.name, t.cutoffs, t.tokenizer, t.embedding_model, t.provenance, t.created_by, True)


if __name__ == "__main__":  # python tests/test_db.py --write-schema: record the schema after a new migration
    import sys
    import tempfile

    if sys.argv[1:] == ["--write-schema"]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "schema.db"
            with mdb.connect(path):
                pass
            header = SCHEMA.read_text(encoding="utf-8").split("\n\n", 1)[0]
            SCHEMA.write_text(header + "\n\n" + schema_text(path), encoding="utf-8")
            print(f"wrote {SCHEMA}")
