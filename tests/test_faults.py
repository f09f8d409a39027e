"""Faults leave nothing behind: a failed import gives the disk back and sign-ins keep working; a publication or
an activation killed with ``kill -9`` leaves no half-made threshold set anywhere, and the next run completes."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medeval.accounts import auth
from medeval.core.errors import MedevalError
from medeval.engine import importer
from medeval.engine import thresholds as th
from medeval.engine.importer import import_files
from medeval.engine.metrics import EXACT_SCORER_ID
from medeval.store import aside
from medeval.store.db import connect, transaction
from tests.conftest import PYTHON, ROOT, db_dump, invoke
from tests.test_security_import import _fail_on_call, big_files

PW = "correct horse battery"


def disk(path) -> dict:
    """What the database takes on the disk: its file, its write-ahead log (0 when there is none), the pages in use."""
    wal = Path(f"{path}-wal")
    conn = sqlite3.connect(str(path))
    try:
        used = conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        conn.close()
    return {"file": Path(path).stat().st_size, "wal": wal.stat().st_size if wal.exists() else 0, "used": used}


def quiet(db) -> None:
    """Fold the log into the database file, as a database at rest is (the measure of 'as it was')."""
    assert db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0


def sign_in(db) -> str:
    return auth.create_session(db, auth.authenticate(db, "doc", PW))


@pytest.fixture
def small_db(db, small_files):
    import_files(db, **small_files)
    auth.add_user(db, "doc", PW, "annotator")
    quiet(db)
    return db


# ---------------------------------------------------------------- a failed import gives the disk back

def test_a_full_disk_in_the_last_transaction_gives_the_disk_back_and_sign_ins_work(small_db, db_path, tmp_path):
    db = small_db
    files = big_files(tmp_path / "big", 4_000, kb_copies=1)
    before, space = db_dump(db_path), disk(db_path)
    pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
    db.conn.execute(f"PRAGMA max_page_count={pages + 40}")  # SQLite's full disk: room for 40 more pages, no more
    with pytest.raises(MedevalError, match=r"^the disk is full \(database or disk is full\)"):
        import_files(db, **files)
    assert disk(db_path) == space and space["wal"] == 0  # the file, its log (empty) and the pages in use as before
    assert db_dump(db_path) == before
    assert not Path(f"{db_path}.import-aside").exists()
    assert sign_in(db)  # on the same full disk: the session row and the audit record fit in the room given back


def test_an_error_while_the_rows_are_copied_in_leaves_an_empty_log(small_db, db_path, tmp_path, monkeypatch):
    db = small_db
    files = big_files(tmp_path / "big", 4_000, kb_copies=1)
    before, space = db_dump(db_path), disk(db_path)
    db.conn.execute("PRAGMA cache_size=20")  # a small cache: the copy spills its pages into the log before the end
    seen, real = [], importer.aside.give_back

    def watch(d, **k):
        seen.append(disk(db_path)["wal"])  # the log as the failed copy left it
        return real(d, **k)

    monkeypatch.setattr(importer.aside, "give_back", watch)
    # transactions: 0 the side file's tables, 1 the kb, 2-3 the responses, 4 the copy into the database
    calls = _fail_on_call(monkeypatch, 4, sqlite3.OperationalError("disk I/O error"))
    with pytest.raises(MedevalError, match="disk I/O error"):
        import_files(db, chunk_rows=2_000, **files)
    assert len(calls) == 5 and seen[0] > 500_000  # the copy had spilled half a MB and more into the log
    assert disk(db_path) == space and db_dump(db_path) == before
    assert sign_in(db)


CHILD_FSIZE = """
import json, os, resource, signal, sys
from contextlib import contextmanager
from medeval.accounts import auth
from medeval.core.errors import MedevalError
from medeval.engine.importer import import_files
from medeval.store import aside
from medeval.store.db import connect
from tests.conftest import db_dump

path, kb, responses = sys.argv[1:4]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file that may not grow: write() fails (EFBIG), like a full disk
real = aside.attached


@contextmanager
def limited(db, side, name="aside"):  # once the rows are aside, the database's files may grow 64 KB, no more
    grown = max(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p)) + 65536
    resource.setrlimit(resource.RLIMIT_FSIZE, (grown, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    with real(db, side, name):
        yield


aside.attached = limited
out = {"before": db_dump(path)}
with connect(path) as db:
    try:
        import_files(db, kb=kb, responses=responses)
    except MedevalError as e:
        out["error"] = str(e)
    out["same"] = db_dump(path) == out.pop("before")
    out["wal"] = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
    out["file"] = os.path.getsize(path)
    out["signed_in"] = bool(auth.create_session(db, auth.authenticate(db, "doc", "correct horse battery")))
print(json.dumps(out))
"""


@pytest.mark.slow  # a process of its own, with a file size limit
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE as on Linux")
def test_a_file_that_cannot_grow_fails_the_import_and_the_disk_is_given_back(small_db, db_path, tmp_path):
    files = big_files(tmp_path / "big", 4_000, kb_copies=1)
    space = disk(db_path)
    r = subprocess.run([PYTHON, "-c", CHILD_FSIZE, str(db_path), str(files["kb"]), str(files["responses"])],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "nothing was imported" in out["error"] and out["same"]
    assert out["wal"] == 0 and out["file"] == space["file"]  # the log emptied, the file as it was
    assert out["signed_in"]


# ---------------------------------------------------------------- kill -9 during an import, a publication, an activation

SLOW_CHILD = """
import sys, time
import medeval.engine.thresholds as th
real = th.grade_db_in_tx


def slow(*a, **k):  # a slow disk: each chunk takes 20 ms more, so the kill lands between chunks
    time.sleep(0.02)
    return real(*a, **k)


th.grade_db_in_tx, th.GRADE_CHUNK = slow, 200
from medeval.cli.main import main
main(sys.argv[1:], prog_name="medeval")
"""


def scored_db(path, *, models: int = 20, entries: int = 300, text: int = 1, annotators=("doc",), campaign: int = 0,
              seed: int = 1) -> int:
    """A database of ``models`` x ``entries`` responses of about ``text`` characters with BLEU-1 / ROUGE-1 (the sets'
    tokenizer) and exact-match scores, written directly (nothing to score), graded under v1; ``annotators``, and
    with ``campaign`` items a random campaign for them (k = 1). Returns the number of scores."""
    from medeval.annotation import campaigns as cp

    rng, types = random.Random(seed), ("enumerated", "declarative", "numeric")
    body = "患者應多休息，按時服藥；若持續發熱請就醫。" * (text // 20) or "a"
    with connect(path) as db:
        with transaction(db):
            c = db.conn
            c.executemany("INSERT INTO kb_entries (id, disease, aspect, aspect_type, reference, processed) "
                          "VALUES (?, ?, ?, ?, 'r', 'r')", [(i + 1, f"D{i}", types[i % 3], types[i % 3])
                                                            for i in range(entries)])
            c.executemany("INSERT INTO models (id, name) VALUES (?, ?)", [(m + 1, f"M{m}") for m in range(models)])
            c.executemany("INSERT INTO responses (id, model_id, kb_id, raw, processed) VALUES (?, ?, ?, ?, ?)",
                          [(m * entries + i + 1, m + 1, i + 1, f"{body}{i}", body) for m in range(models)
                           for i in range(entries)])
            scores = []
            for m in range(models):
                for i in range(entries):
                    rid = m * entries + i + 1
                    if types[i % 3] == "numeric":
                        scores.append((rid, "exact_match", EXACT_SCORER_ID, float(rng.random() < 0.5)))
                    else:
                        scores += [(rid, "bleu1", th.TOKENIZER_ID, rng.random()),
                                   (rid, "rouge1", th.TOKENIZER_ID, rng.random())]
            c.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, ?, ?, ?)", scores)
        th.grade_db(db)
        for a in annotators:
            auth.add_user(db, a, PW, "annotator")
        if campaign:
            res = auth.add_user(db, "res", PW, "researcher")
            cp.create_random_campaign(db, "faults", campaign, list(annotators), k=1, seed=1, actor=res)
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return len(scores)


def run_and_kill(args: list[str], ready: str, *, timeout: float = 120.0) -> dict:
    """Start ``python -m medeval ARGS`` (its grading slowed) and ``kill -9`` it once the query ``ready`` (on its
    database, the path after ``--db``) returns a true value. Returns how long it had run."""
    path = args[args.index("--db") + 1]
    proc = subprocess.Popen([PYTHON, "-c", SLOW_CHILD, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    started, deadline = time.monotonic(), time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"it ended before the kill: {proc.returncode} {proc.communicate()}")
            conn = sqlite3.connect(path, timeout=30)
            try:
                hit = conn.execute(ready).fetchone()
            except sqlite3.OperationalError:  # not created yet
                hit = None
            finally:
                conn.close()
            if hit and hit[0]:
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)
                return {"after_s": time.monotonic() - started, "returncode": proc.returncode}
            time.sleep(0.005)
        raise AssertionError("never ready")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def versions(db) -> list[tuple[int, bool]]:
    return [(s.version, s.active) for s in th.list_sets(db)]


def graded_fully(db, version: int) -> bool:
    return all(c["graded"] == c["scored"] for c in th.coverage(db, version).values())


@pytest.mark.slow  # kills a real process
def test_a_killed_publication_leaves_no_version_and_the_next_one_takes_its_number(db_path, tmp_path):
    from medeval.calibration.cutoffs import publish_set

    scored_db(db_path)
    graded = tmp_path / "graded.csv"
    graded.write_text("metric,aspect_type,score,tier\n" + "".join(
        f"rouge1,declarative,{s},{t}\n" for s, t in ((0.1, 0), (0.2, 0), (0.4, 1), (0.5, 1), (0.8, 2), (0.9, 2))))
    with connect(db_path) as db:
        listed, audits = versions(db), len(auth.audit_rows(db))
    killed = run_and_kill(["calibrate", str(graded), "--publish", "killed", "--db", str(db_path)],
                          "SELECT count(*) FROM grades WHERE version = 2")
    assert killed["returncode"] == -signal.SIGKILL
    with connect(db_path) as db:
        # what remains: version 2 with part of its grades, building -- seen by nothing
        assert db.conn.execute("SELECT state, active FROM threshold_sets WHERE version = 2").fetchone() == ("building", 0)
        assert 0 < db.conn.execute("SELECT count(*) FROM grades WHERE version = 2").fetchone()[0]
        assert versions(db) == listed == [(1, True)] and th.active(db).version == 1
        with pytest.raises(MedevalError, match=r"no threshold set version 2 \(versions: 1\)"):
            th.load(db, 2)
        assert len(auth.audit_rows(db)) == audits  # never published
    assert [line.split()[1] for line in invoke("thresholds", "list", "--db", db_path).output.splitlines()] == ["v1"]
    assert '"version": 1' in invoke("thresholds", "export", "--db", db_path).output
    with connect(db_path) as db:  # the next publication removes it and takes its number
        v = publish_set(db, {("rouge1", "declarative"): (0.3, 0.7)}, name="rerun")
        assert v == 2 and versions(db) == [(1, False), (2, True)]
        assert th.load(db, 2).name == "rerun" and graded_fully(db, 2)
        assert db.conn.execute("SELECT count(*) FROM threshold_sets WHERE state != 'ready'").fetchone()[0] == 0
        assert [r["action"] for r in auth.audit_rows(db)][audits:] == ["thresholds.publish"]


@pytest.mark.slow  # kills a real process
def test_a_killed_activation_leaves_the_set_as_it_was_and_a_rerun_completes(db_path):
    scored_db(db_path)
    with connect(db_path) as db:
        v = th.store(db, th.ThresholdSet(name="strict", cutoffs={k: (0.4, 0.8) if k[0] != "exact_match" else (1, 1)
                                                                  for k in th.TABLE12.cutoffs}), created_by="test")
        listed = versions(db)
    killed = run_and_kill(["thresholds", "activate", str(v), "--db", str(db_path)],
                          f"SELECT count(*) FROM grades WHERE version = {v}")
    assert killed["returncode"] == -signal.SIGKILL
    with connect(db_path) as db:
        assert versions(db) == listed == [(1, True), (2, False)]  # listed as before, the old set still active
        assert db.conn.execute("SELECT state FROM threshold_sets WHERE version = 2").fetchone() == ("grading",)
        assert not graded_fully(db, 2)  # part of its grades: the next publication or activation deletes them
    out = invoke("thresholds", "activate", "2", "--db", db_path).output
    with connect(db_path) as db:
        assert versions(db) == [(1, False), (2, True)] and graded_fully(db, 2)
        n = db.conn.execute("SELECT count(*) FROM grades WHERE version = 2").fetchone()[0]
        assert f"v2 is active; {n} grades added" in out  # every grade again: the killed run's were removed first
        assert db.conn.execute("SELECT state FROM threshold_sets WHERE version = 2").fetchone() == ("ready",)


@pytest.mark.slow  # kills a real process
def test_a_killed_activation_is_cleaned_up_by_the_next_publication(db_path):
    from medeval.calibration.cutoffs import publish_set

    scored_db(db_path)
    with connect(db_path) as db:
        v = th.store(db, th.ThresholdSet(name="other", cutoffs=dict(th.TABLE12.cutoffs)), created_by="test")
    run_and_kill(["thresholds", "activate", str(v), "--db", str(db_path)],
                 f"SELECT count(*) FROM grades WHERE version = {v}")
    with connect(db_path) as db:
        assert publish_set(db, {("bleu1", "enumerated"): (0.1, 0.2)}, name="next") == 3
        assert db.conn.execute("SELECT count(*) FROM grades WHERE version = 2").fetchone()[0] == 0  # as before
        assert versions(db) == [(1, False), (2, False), (3, True)] and graded_fully(db, 3)


@pytest.mark.slow  # kills a real process
def test_a_killed_import_leaves_the_database_as_it_was(small_db, db_path, tmp_path):
    files = big_files(tmp_path / "big", 20_000, kb_copies=2)
    before = db_dump(db_path)
    side = Path(f"{db_path}.import-aside")
    proc = subprocess.Popen([PYTHON, "-m", "medeval", "import", "--db", str(db_path), "--kb", str(files["kb"]),
                             "--responses", str(files["responses"])], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (side.exists() and side.stat().st_size > 500_000):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert db_dump(db_path) == before and side.exists()  # what remains: the side file only
    with connect(db_path) as db:
        s = import_files(db, **files)  # the next import removes it and imports
        assert s.responses_added == 20_000 and not side.exists()
        assert sign_in(db)


def test_the_side_file_is_removed_whatever_happens(db, tmp_path):
    path = Path(aside.side_path(db, "job"))
    with pytest.raises(RuntimeError):
        with aside.rows(db, "job") as side:
            side.conn.execute("CREATE TABLE t (x)")
            assert path.exists()
            raise RuntimeError("boom")
    assert not path.exists()
    path.write_bytes(b"left by a killed job")
    with aside.rows(db, "job") as side:  # a killed job's file is not read: a new, empty one
        assert side.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    assert not path.exists()
    assert aside.give_back(db)  # nothing holds the log: it is emptied
    assert Path(f"{aside.side_path(db, 'job')[:-len('.job-aside')]}-wal").stat().st_size == 0


def test_an_activation_that_fails_removes_the_grades_it_began(db_path, monkeypatch):
    scored_db(db_path, models=4, entries=60)
    with connect(db_path) as db:
        v = th.store(db, th.ThresholdSet(name="other", cutoffs=dict(th.TABLE12.cutoffs)), created_by="test")
        before = db_dump(db_path)
        real = th.grade_db_in_tx
        monkeypatch.setattr(th, "GRADE_CHUNK", 50)
        monkeypatch.setattr(th, "grade_db_in_tx", lambda d, ver, **k: real(d, ver, **k) if k.get("after", 0) < 100
                            else 1 / 0)
        with pytest.raises(ZeroDivisionError):
            th.activate(db, v)
        assert db_dump(db_path) == before  # its grades deleted, the set ready again, v1 active
        monkeypatch.setattr(th, "grade_db_in_tx", real)
        assert th.activate(db, v) > 0 and th.active(db).version == v and graded_fully(db, v)


def test_one_publication_or_activation_at_a_time(db, monkeypatch):
    from medeval.store.db import job_lock

    monkeypatch.setattr(th, "BUSY_TIMEOUT_MS", 200)  # how long the second waits for the first
    with job_lock(db, "thresholds", busy="held"):
        t = time.monotonic()
        with connect(os.environ["MEDEVAL_DB"]) as other, pytest.raises(MedevalError, match="^another publication or "
                                                                                            "activation of a thresh"):
            th.activate(other, 1)
        assert time.monotonic() - t >= 0.2
    assert th.activate(db, 1) >= 0
