"""Issue 12, point 1 (and 7): an import, a regrade or a publication must not block annotators.

An import validates and post-processes outside any write transaction and writes in short
chunks under an import batch that stays invisible until one last short transaction; a failed
write leaves the database exactly as it was and says why in one line.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import uuid
from pathlib import Path

import pytest

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.core.errors import MedevalError
from medeval.engine import importer
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.reports.tier_report import build_report
from medeval.store import db as mdb
from medeval.store.db import connect
from tests.conftest import db_dump

PW = "correct horse battery"
LEXICAL = ["bleu1", "rouge1", "exact_match"]


def big_files(folder, n_responses: int, kb_copies: int = 10, seed: int = 7) -> dict:
    """The demo knowledge base under ``kb_copies`` renamed copies, and ``n_responses`` responses of new models."""
    from medeval.demo.generate import generate_responses, load_kb

    folder.mkdir(parents=True, exist_ok=True)
    kb = load_kb()
    answers: dict[int, list[str]] = {}
    for j, r in enumerate(generate_responses(kb)):
        answers.setdefault(j % len(kb), []).append(r["response"])
    entries = [(f"{r['disease']}-{c:03d}", r["aspect"], r["reference"], i)
               for c in range(kb_copies) for i, r in enumerate(kb)]
    rng = random.Random(seed)
    with open(folder / "kb.jsonl", "w", encoding="utf-8") as f:
        for d, a, ref, _ in entries:
            f.write(json.dumps({"disease": d, "aspect": a, "reference": ref}, ensure_ascii=False) + "\n")
    with open(folder / "responses.jsonl", "w", encoding="utf-8") as f:
        for k in range(n_responses):
            d, a, _, i = entries[k % len(entries)]
            f.write(json.dumps({"model": f"Big-{k // len(entries):03d}", "disease": d, "aspect": a,
                                "response": rng.choice(answers[i]) + f" ({k})"}, ensure_ascii=False) + "\n")
    return {"kb": folder / "kb.jsonl", "responses": folder / "responses.jsonl"}


@pytest.fixture
def campaign_db(db_path, small_files):
    """The small data set scored, an annotator and a researcher, and a random campaign of all 8 responses."""
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=LEXICAL)
        res = auth.add_user(db, "res", PW, "researcher")
        auth.add_user(db, "doc", PW, "annotator")
        cid = cp.create_random_campaign(db, "during import", 8, ["doc"], k=1, seed=1, actor=res)
    return db_path, cid


def visible(path) -> tuple[int, set[str]]:
    """What readers see: responses that scoring would score, and the models the leaderboard lists."""
    with connect(path) as db:
        n = db.conn.execute(f"SELECT count(*) FROM responses r WHERE {importer.visible_responses('r')}").fetchone()[0]
        return n, frozenset(r["model"] for r in build_report(db)["models"])


@pytest.mark.slow  # imports 60,000 generated responses while an annotator grades
def test_an_import_lets_annotators_grade_meanwhile(campaign_db, tmp_path):
    path, cid = campaign_db
    files = big_files(tmp_path / "big", 60_000)
    done = threading.Event()
    errors: list[str] = []
    tokens: list[str] = []
    result = {}

    def run_import():
        try:
            with connect(path) as db:
                result["summary"] = import_files(db, **files)
        except Exception as e:  # noqa: BLE001 - asserted below
            errors.append(f"import: {e!r}")
        finally:
            done.set()

    def grade():
        with connect(path) as db:
            user = auth.get_user(db, "doc")
            items = [r for (r,) in db.conn.execute(
                "SELECT item_id FROM assignments WHERE campaign_id = ? ORDER BY position", (cid,))]
        i = 0
        while not done.is_set() or i < 20:
            token = uuid.uuid4().hex
            try:
                with connect(path) as db:
                    db.conn.execute("PRAGMA busy_timeout=1000")  # an annotator waits at most 1 s, then fails
                    cp.submit_grade(db, user, items[i % len(items)], tier=i % 3, client_token=token)
                tokens.append(token)
            except Exception as e:  # noqa: BLE001 - asserted below
                errors.append(f"grade {i}: {e!r}")
            i += 1

    threads = [threading.Thread(target=run_import), threading.Thread(target=grade)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert result["summary"].responses_added == 60_000 and result["summary"].kb_added == 5760
    with connect(path) as db:
        stored = [t for (t,) in db.conn.execute("SELECT client_token FROM grade_annotations")]
        assert sorted(stored) == sorted(tokens) and len(set(stored)) == len(stored)  # each grade stored once
        assert db.conn.execute("SELECT count(*) FROM responses").fetchone()[0] == 60_008
        assert db.conn.execute("SELECT count(*) FROM import_batches WHERE state = 'staging'").fetchone()[0] == 0


@pytest.mark.slow  # scores and reports between the chunks of an import
def test_readers_never_see_a_partial_import(campaign_db, tmp_path, monkeypatch):
    """Between the import's write transactions, scoring, the leaderboard and sampling see nothing of it."""
    path, _ = campaign_db
    files = big_files(tmp_path / "big", 3_000, kb_copies=1)
    before = visible(path)
    seen, real = [], importer.transaction

    def watched(db):
        seen.append(visible(path))
        with connect(path) as other:  # another process scores meanwhile: nothing of the batch is scored
            other.conn.execute("PRAGMA busy_timeout=1000")
            assert score_db(other, metrics=LEXICAL).scores_added == 0
            assert len(cp.sample_buckets(other, cp.BucketConfig(metrics=("rouge1",), aspect_types=("enumerated",),
                                                                per_interval=100, k=1, seed=1))[0]) <= 8
        return real(db)

    monkeypatch.setattr(importer, "transaction", watched)
    with connect(path) as db:
        s = import_files(db, chunk_rows=500, **files)
    assert s.responses_added == 3_000 and len(seen) >= 8  # the batch row, kb chunks, 6 response chunks, the flip
    assert all(x == before for x in seen)
    n, models = visible(path)
    assert n == before[0] + 3_000 and models == before[1] | {"Big-000", "Big-001", "Big-002", "Big-003",
                                                              "Big-004", "Big-005"}


def _fail_on_call(monkeypatch, k: int, error: BaseException):
    """The importer's k-th write transaction (0-based) fails with ``error`` after its block ran."""
    calls, real = [], importer.transaction

    class Failing:
        def __init__(self, db):
            self.db, self.n = db, len(calls)
            calls.append(self.n)
            self.tx = real(db)

        def __enter__(self):
            return self.tx.__enter__()

        def __exit__(self, *exc):
            if exc[0] is None and self.n == k:
                self.tx.__exit__(type(error), error, None)
                raise error
            return self.tx.__exit__(*exc)

    monkeypatch.setattr(importer, "transaction", Failing)
    return calls


@pytest.mark.parametrize("where", ["last staging chunk", "final flip"])
def test_an_import_failing_at_the_end_leaves_the_database_as_it_was(db, db_path, small_files, tmp_path,
                                                                    monkeypatch, where):
    import_files(db, **small_files)
    score_db(db, metrics=LEXICAL)
    files = big_files(tmp_path / "big", 1_200, kb_copies=1)
    before = db_dump(db_path)
    # transactions: 0 the batch, 1-2 the kb (576 rows), 3-5 the responses (500, 500, 200), 6 the flip
    k = 5 if where == "last staging chunk" else 6
    calls = _fail_on_call(monkeypatch, k, sqlite3.OperationalError("disk I/O error"))
    with pytest.raises(MedevalError) as e:
        import_files(db, chunk_rows=500, **files)
    assert calls[:k + 1] == list(range(k + 1))
    msg = str(e.value)
    assert "\n" not in msg and "disk I/O error" in msg and "nothing was imported" in msg
    assert db_dump(db_path) == before
    monkeypatch.undo()
    assert import_files(db, **files).responses_added == 1_200  # and the same import then works


def test_a_full_disk_is_named_and_nothing_is_imported(db, db_path, small_files, tmp_path):
    import_files(db, **small_files)
    files = big_files(tmp_path / "big", 4_000, kb_copies=1)
    before = db_dump(db_path)
    pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
    db.conn.execute(f"PRAGMA max_page_count={pages + 40}")  # SQLite's view of a full disk, on this connection
    with pytest.raises(MedevalError) as e:
        import_files(db, **files)
    msg = str(e.value)
    assert msg.startswith("the disk is full (database or disk is full): free space")
    assert msg.endswith("run the import again; nothing was imported") and "\n" not in msg
    assert "rollback" not in msg
    assert db_dump(db_path) == before


def test_a_killed_import_stays_invisible_and_the_next_import_removes_it(db, db_path, small_files, tmp_path,
                                                                        monkeypatch):
    from medeval.store import aside

    import_files(db, **small_files)
    score_db(db, metrics=LEXICAL)
    files = big_files(tmp_path / "big", 1_000, kb_copies=1)
    before, shown = db_dump(db_path), visible(db_path)
    # killed in its final transaction, after every chunk was written aside: no clean-up ran (as after kill -9)
    monkeypatch.setattr(aside, "_remove", lambda path: None)
    calls = _fail_on_call(monkeypatch, 6, KeyboardInterrupt())  # 0 side tables, 1-2 kb, 3-5 responses, 6 flip
    with pytest.raises(KeyboardInterrupt):
        import_files(db, chunk_rows=400, **files)
    assert len(calls) == 7
    side = Path(f"{db_path}.import-aside")
    assert side.exists()  # every row of it is there, in the side file: nothing in the database
    assert db_dump(db_path) == before and visible(db_path) == shown
    assert score_db(db, metrics=LEXICAL).scores_added == 0
    monkeypatch.undo()
    s = import_files(db, **files)  # removes the abandoned side file, then imports
    assert s.responses_added == 1_000 and s.kb_added == 576 and not side.exists()
    assert db.conn.execute("SELECT count(*) FROM responses").fetchone()[0] == 8 + 1_000
    assert db.conn.execute("SELECT state FROM import_batches ORDER BY id").fetchall() == [("done",), ("done",)]


def test_a_staging_batch_that_an_older_version_left_is_removed_by_the_next_import(db, db_path, small_files,
                                                                                  tmp_path):
    """Before rows were written aside, a killed import left invisible ``staging`` rows in the database."""
    import_files(db, **small_files)
    before = db_dump(db_path)
    with mdb.transaction(db):
        b = db.conn.execute("INSERT INTO import_batches (state, started_at, first_kb_id, first_response_id) "
                            "VALUES ('staging', 'then', 100, 100)").lastrowid
        db.conn.execute("INSERT INTO kb_entries (id, disease, aspect, aspect_type, reference, processed, batch) "
                        "VALUES (100, 'x', 'Medications', 'enumerated', 'a', 'a', ?)", (b,))
        db.conn.execute("INSERT INTO responses (id, model_id, kb_id, raw, processed, batch) VALUES (100, 1, 100, "
                        "'a', 'a', ?)", (b,))
    assert db_dump(db_path) != before
    assert import_files(db, **small_files).responses_unchanged == 8  # nothing new: the abandoned rows are gone
    assert db_dump(db_path) == before


def test_one_import_at_a_time(db, db_path, small_files, tmp_path):
    with mdb.job_lock(db, "import", busy="busy"):
        with connect(db_path) as other, pytest.raises(MedevalError, match="another import into this database is "
                                                                          "running: wait for it to finish"):
            import_files(other, **small_files)
    assert import_files(db, **small_files).responses_added == 8
