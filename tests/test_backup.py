"""``medeval backup DEST``: a consistent, checked copy of the database while annotators write to it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.cli import main as cli_main
from medeval.core.errors import MedevalError
from medeval.engine.importer import import_files
from medeval.engine.scoring import score_db
from medeval.store import backup as mb
from medeval.store.db import connect
from tests.conftest import PYTHON, ROOT, db_dump, invoke

PW = "correct horse battery"


@pytest.fixture
def graded_db(db_path, small_files):
    """The small data set scored, an annotator with a campaign of all 8 responses, and a few grades."""
    with connect(db_path) as db:
        import_files(db, **small_files)
        score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
        res = auth.add_user(db, "res", PW, "researcher")
        doc = auth.add_user(db, "doc", PW, "annotator")
        cid = cp.create_random_campaign(db, "backup", 8, ["doc"], k=1, seed=1, actor=res)
        items = [r for (r,) in db.conn.execute(
            "SELECT item_id FROM assignments WHERE campaign_id = ? ORDER BY position", (cid,))]
        for i, item in enumerate(items[:3]):
            cp.submit_grade(db, doc, item, tier=i % 3, client_token=f"t{i}")
    return db_path


def test_a_backup_is_a_whole_checked_copy(graded_db, tmp_path):
    dest = tmp_path / "copies" / "medeval.db"
    dest.parent.mkdir()
    with connect(graded_db, migrate=False) as db:
        report = mb.backup(db, dest)
    assert report.integrity == "ok" and report.rows["answers"] == 3 and report.migrations[-1].startswith("m0")
    assert db_dump(dest) == db_dump(graded_db)
    assert sorted(os.listdir(dest.parent)) == ["medeval.db"]  # no part file, no journal, no log left
    with connect(dest) as copy:  # a restore: medeval opens it as it is
        assert copy.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == 3
    assert report.lines()[0].startswith(f"backed up {graded_db} to {dest}: ")


def test_the_command_refuses_to_overwrite_without_force(graded_db, tmp_path):
    dest = tmp_path / "b.db"
    out = invoke("backup", dest, "--db", graded_db).output
    assert "backed up" in out and "integrity ok" in out and "each table's count as in the snapshot" in out
    first = dest.stat().st_mtime_ns
    r = CliRunner().invoke(cli_main, ["backup", str(dest), "--db", str(graded_db)])
    assert r.exit_code == 1 and f"Error: {dest} exists: give --force to replace it" in r.output
    assert dest.stat().st_mtime_ns == first
    assert "backed up" in invoke("backup", dest, "--db", graded_db, "--force").output


def test_a_part_file_left_by_a_killed_backup_is_removed_by_the_next(graded_db, tmp_path):
    dest = tmp_path / "b.db"
    dead = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f".b.db.part-{int(dead.stdout)}"
    left.write_bytes(b"half a copy")
    with connect(graded_db, migrate=False) as db:
        mb.backup(db, dest)
    assert dest.exists() and not left.exists() and not list(tmp_path.glob(".b.db.part-*"))


@pytest.mark.parametrize("case", ["no folder", "a folder", "not writable", "the database", "no room", "no database"])
def test_clear_errors_and_nothing_written(case, graded_db, tmp_path, monkeypatch):
    dest, says = tmp_path / "b.db", None
    if case == "no folder":
        dest, says = tmp_path / "missing" / "b.db", f"folder {tmp_path / 'missing'} does not exist"
    elif case == "a folder":
        dest, says = tmp_path, "it is a folder; give the file to write"
    elif case == "not writable":
        folder = tmp_path / "ro"
        folder.mkdir()
        dest, says = folder / "b.db", f"folder {folder} is not writable by this user"
        if os.geteuid() == 0:  # root writes anywhere: what the folder's permissions say is asked of the system
            real = os.access
            monkeypatch.setattr(mb.os, "access", lambda p, mode: False if Path(p) == folder else real(p, mode))
        else:
            folder.chmod(0o500)
    elif case == "the database":
        dest, says = graded_db, "that is the database itself"
    elif case == "no room":
        monkeypatch.setattr(mb.shutil, "disk_usage", lambda p: type("U", (), {"free": 10_000})())
        says = "not enough room in"
    if case == "no database":
        r = CliRunner().invoke(cli_main, ["backup", str(dest), "--db", str(tmp_path / "none.db")])
        assert r.exit_code == 1 and f"no database at {tmp_path / 'none.db'}" in r.output
        assert not (tmp_path / "none.db").exists()
        return
    before = db_dump(graded_db)
    with connect(graded_db, migrate=False) as db, pytest.raises(MedevalError) as e:
        mb.backup(db, dest, force=case == "the database")
    assert says in str(e.value) and "\n" not in str(e.value)
    assert db_dump(graded_db) == before
    if case not in ("a folder", "the database"):
        assert not dest.exists()
    assert not [p for p in tmp_path.rglob(".*part*")]


CHILD_FULL = """
import resource, signal, sys
from medeval.core.errors import MedevalError
from medeval.store.backup import backup
from medeval.store.db import connect

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
with connect(sys.argv[1], migrate=False) as db:
    db.conn.execute("SELECT count(*) FROM answers").fetchone()  # the database opened: from now on no file may
    resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))  # pass 20 KB
    try:
        backup(db, sys.argv[2])
    except MedevalError as e:
        print(e)
"""


@pytest.mark.slow  # a process of its own, with a file size limit
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE as on Linux")
def test_a_copy_that_cannot_be_written_whole_leaves_nothing(graded_db, tmp_path):
    dest = tmp_path / "out" / "b.db"
    dest.parent.mkdir()
    r = subprocess.run([PYTHON, "-c", CHILD_FULL, str(graded_db), str(dest)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("the copy could not be made (") and f"{dest} was not written" in r.stdout
    assert os.listdir(dest.parent) == []


WRITER = """
import sys, time
from pathlib import Path
from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.store.db import connect

path, stop = sys.argv[1], Path(sys.argv[2])
with connect(path) as db:
    doc = auth.get_user(db, "doc")
    items = [r for (r,) in db.conn.execute("SELECT item_id FROM assignments ORDER BY position")]
n = 0
while not stop.exists():
    with connect(path) as db:
        cp.submit_grade(db, doc, items[n % len(items)], tier=n % 3, client_token=f"w{n}")
    n += 1
print(n)
"""


@pytest.mark.slow  # another process grades while the copy is made
def test_a_backup_while_another_process_grades_holds_exactly_its_snapshot(graded_db, tmp_path):
    stop, dest = tmp_path / "stop", tmp_path / "b.db"
    writer = subprocess.Popen([PYTHON, "-c", WRITER, str(graded_db), str(stop)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        while sqlite3.connect(str(graded_db)).execute("SELECT count(*) FROM answers").fetchone()[0] < 20:
            assert writer.poll() is None, writer.communicate()
            time.sleep(0.01)
        with connect(graded_db, migrate=False) as db:  # one page a step, with pauses: the copy spans many commits
            report = mb.backup(db, dest, step_pages=1, sleep=0.002)
        time.sleep(0.2)
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    written = int(out)
    copy, source = dict(db_dump(dest)), dict(db_dump(graded_db))
    assert report.pages > 50 and 3 < report.rows["answers"] < 3 + written  # taken while the grades went on
    for table, rows in copy.items():  # each table as the snapshot held it: its count, rows the database has
        assert len(rows) == report.rows[table], table
        assert table == "sqlite_sequence" or set(rows) <= set(source[table]), table  # (a counter: it moved on)
    conn = sqlite3.connect(str(graded_db))
    first = [repr(r) for r in conn.execute("SELECT * FROM answers ORDER BY id LIMIT ?", (report.rows["answers"],))]
    conn.close()
    assert copy["answers"] == sorted(first)  # answers are only appended: the snapshot is their first n, whole
    with connect(dest) as restored:
        assert restored.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert restored.conn.execute("SELECT count(*) FROM grade_annotations").fetchone()[0] == report.rows["answers"]
