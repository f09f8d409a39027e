#!/usr/bin/env python
"""Probe: faults leave nothing behind (docs/SECURITY.md, "Faults: kill -9, a full disk, backups").

    .venv/bin/python bench/probe_faults.py                       # every part; about 2-3 minutes
    .venv/bin/python bench/probe_faults.py --only full-disk --json bench/out/faults.json

* ``import-load``: an import of 20,000 responses while 2 processes grade as fast as they can: how long its last
  transaction (the rows copied in from the side file) holds the write lock, and the graders' latency.
* ``import-kill``: ``medeval import`` of 20,000 responses killed with SIGKILL once its side file holds 1 MB; what
  remains, then the same import again.
* ``publish-kill`` / ``activate-kill``: ``medeval calibrate --publish`` / ``medeval thresholds activate`` on a
  database of 60,000 scored responses, killed with SIGKILL once a third of the new version's grades are written;
  what remains (the rows, the version list as ``thresholds list`` prints it), then a rerun.
* ``full-disk``: a real full disk -- a tmpfs of 64 MB (root only: ``mount``), filled but for a few MB -- under an
  import of 20,000 responses; the files and free space before and after, a sign-in, a checkpoint.
* ``backup``: ``medeval backup`` of a database of 60,000 responses (about 90 MB) while 4 processes grade as fast
  as they can; how long, the rows, and the writers' latency during the copy against before it.

Prints JSON; exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("MEDEVAL_PASSWORD_HASH_PROFILE", "test-only")

from bench.benchlib import loadavg, log  # noqa: E402
from medeval.accounts import auth  # noqa: E402
from medeval.engine.importer import import_files  # noqa: E402
from medeval.store.db import connect  # noqa: E402
from tests.conftest import KB_CSV, MODELS_CSV, RESP_CSV, db_dump  # noqa: E402
from tests.test_security_import import big_files  # noqa: E402

PW = "correct horse battery"
PY = sys.executable
FAILED: list[str] = []


def check(ok: bool, what: str) -> bool:
    if not ok:
        FAILED.append(what)
    return ok


def sizes(path: Path) -> dict:
    out = {s or "db": (Path(f"{path}{s}").stat().st_size if Path(f"{path}{s}").exists() else None)
           for s in ("", "-wal", "-shm")}
    out["free"] = shutil.disk_usage(path.parent).free
    return out


def small_db(path: Path, files: Path) -> dict:
    files.mkdir(parents=True, exist_ok=True)
    small = {}
    for k, text in (("kb", KB_CSV), ("responses", RESP_CSV), ("models", MODELS_CSV)):
        (files / f"{k}.csv").write_text(text, encoding="utf-8")
        small[k] = files / f"{k}.csv"
    with connect(path) as db:
        import_files(db, **small)
        auth.add_user(db, "doc", PW, "annotator")
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return big_files(files / "big", 20_000, kb_copies=2)


def sign_in(db) -> str:
    try:
        auth.create_session(db, auth.authenticate(db, "doc", PW))
        return "ok"
    except Exception as e:  # noqa: BLE001 - reported
        return f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------- kill -9 during an import

def import_kill(work: Path) -> dict:
    path = work / "import.db"
    big = small_db(path, work / "files")
    before = db_dump(path)
    side = Path(f"{path}.import-aside")
    t0 = time.monotonic()
    proc = subprocess.Popen([PY, "-m", "medeval", "import", "--db", str(path), "--kb", str(big["kb"]),
                             "--responses", str(big["responses"])], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    while not (side.exists() and side.stat().st_size > 1_000_000) and proc.poll() is None:
        time.sleep(0.005)
    side_at_kill = side.stat().st_size if side.exists() else None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    out = {"killed_after_s": round(time.monotonic() - t0, 2), "side_file_at_kill": side_at_kill,
           "database_unchanged": db_dump(path) == before, "left": sorted(p.name for p in work.iterdir()
                                                                          if p.name.startswith("import.db"))}
    check(out["database_unchanged"], "import-kill: the database changed")
    t = time.perf_counter()
    with connect(path) as db:
        s = import_files(db, **big)
        out["rerun"] = {"seconds": round(time.perf_counter() - t, 2), "responses_added": s.responses_added,
                        "side_file_left": side.exists(), "sign_in": sign_in(db)}
    check(s.responses_added == 20_000 and not side.exists(), "import-kill: the rerun")
    return out


# ---------------------------------------------------------------- kill -9 during a publication or an activation

def scored_db(path: Path) -> int:
    """60,000 responses of about 300 characters, 100,000 scores graded under v1, a campaign of 400 items for a1..a4."""
    from tests.test_faults import scored_db as build

    return build(path, models=40, entries=1500, text=300, annotators=("a1", "a2", "a3", "a4"), campaign=400)


def threshold_kill(work: Path, which: str) -> dict:
    from medeval.calibration.cutoffs import publish_set
    from medeval.engine import thresholds as th

    path = work / f"{which}.db"
    n_scores = scored_db(path)
    if which == "publish":
        graded = work / "graded.csv"
        graded.write_text("metric,aspect_type,score,tier\n" + "".join(
            f"rouge1,declarative,{s},{t}\n" for s, t in ((0.1, 0), (0.2, 0), (0.4, 1), (0.5, 1), (0.8, 2), (0.9, 2))))
        args = ["calibrate", str(graded), "--publish", "killed"]
    else:
        with connect(path) as db:
            th.store(db, th.ThresholdSet(name="strict", cutoffs=dict(th.TABLE12.cutoffs)), created_by="probe")
        args = ["thresholds", "activate", "2"]
    listed = subprocess.run([PY, "-m", "medeval", "thresholds", "list", "--db", str(path)], cwd=ROOT,
                            capture_output=True, text=True).stdout.splitlines()
    t0 = time.monotonic()
    proc = subprocess.Popen([PY, "-m", "medeval", *args, "--db", str(path)], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    watch = sqlite3.connect(str(path), timeout=30)
    while proc.poll() is None and watch.execute("SELECT count(*) FROM grades WHERE version = 2").fetchone()[0] \
            < n_scores // 3:
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_s = time.monotonic() - t0
    columns = [r[1] for r in watch.execute("PRAGMA table_info(threshold_sets)")]
    row = watch.execute(f"SELECT {'state' if 'state' in columns else 'NULL'}, active FROM threshold_sets "
                        "WHERE version = 2").fetchone()
    graded = watch.execute("SELECT count(*) FROM grades WHERE version = 2").fetchone()[0]
    watch.close()
    after = subprocess.run([PY, "-m", "medeval", "thresholds", "list", "--db", str(path)], cwd=ROOT,
                           capture_output=True, text=True).stdout.splitlines()
    out = {"scores": n_scores, "killed_after_s": round(killed_s, 2), "returncode": proc.returncode,
           "version_2_row": row, "version_2_grades_left": graded, "list_before": listed, "list_after": after}
    check(after == listed, f"{which}-kill: the version list changed")
    t = time.perf_counter()
    with connect(path) as db:
        if which == "publish":
            v = publish_set(db, {("rouge1", "declarative"): (0.3, 0.7)}, name="rerun")
        else:
            v = 2
            th.activate(db, 2)
        cov = th.coverage(db, v)
        out["rerun"] = {"version": v, "seconds": round(time.perf_counter() - t, 2),
                        "active": th.active(db).version, "graded_fully": all(c["graded"] == c["scored"]
                                                                             for c in cov.values()),
                        "listed": [(ts.version, ts.name) for ts in th.list_sets(db)],
                        "not_ready": db.conn.execute("SELECT count(*) FROM threshold_sets WHERE state != 'ready'"
                                                     ).fetchone()[0] if "state" in columns else None}
    check(out["rerun"]["version"] == 2 and out["rerun"]["graded_fully"] and not out["rerun"]["not_ready"],
          f"{which}-kill: the rerun")
    return out


# ---------------------------------------------------------------- a full disk during an import

def _mark_copy(run: dict, path: Path):
    """Record whether the import reached its last transaction (the rows copied in) and how big its side file was
    then; returns what puts the code back."""
    try:
        from medeval.store import aside
    except ImportError:  # the code before rows were written aside
        return lambda: None
    real = aside.attached

    def marked(db, side, name="aside"):
        run["copy_started_with_side_file"] = Path(f"{path}.import-aside").stat().st_size
        return real(db, side, name)

    aside.attached = marked
    return lambda: setattr(aside, "attached", real)


def full_disk(work: Path, free_kb: tuple[int, ...] = (2_048, 5_500)) -> dict:
    mnt = work / "disk"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], capture_output=True).returncode:
        return {"skipped": "mounting a tmpfs needs root"}
    out = {}
    try:
        for kb in free_kb:
            for p in mnt.iterdir():
                p.unlink()
            path = mnt / "full.db"
            big = small_db(path, work / f"files-{kb}")
            before_rows = db_dump(path)
            filler = mnt / "filler"
            with open(filler, "wb") as f:
                f.write(b"\0" * (shutil.disk_usage(mnt).free - kb * 1024))
            run = {"before": sizes(path)}
            undo = _mark_copy(run, path)
            t = time.perf_counter()
            with connect(path) as db:
                try:
                    import_files(db, **big)
                    run["import"] = "imported"
                except Exception as e:  # noqa: BLE001 - reported
                    run["import"] = str(e)
                finally:
                    undo()
                run["import_s"] = round(time.perf_counter() - t, 2)
                run["after_import"] = sizes(path)
                run["rows_unchanged"] = db_dump(path) == before_rows
                run["sign_in"] = sign_in(db)
                try:
                    run["checkpoint"] = db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                except sqlite3.Error as e:
                    run["checkpoint"] = str(e)
                run["after_sign_in"] = sizes(path)
            run["closed"] = sizes(path)
            filler.unlink()
            check(run["sign_in"] == "ok" and run["rows_unchanged"], f"full-disk {kb} KB free: sign-in or rows")
            out[f"{kb}_kb_free"] = run
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    return out


# ---------------------------------------------------------------- a backup while annotators grade

WRITER = """
import json, sys, time
from medeval.accounts import auth
from medeval.annotation import campaigns as cp
from medeval.store.db import pooled
path, who, until = sys.argv[1], sys.argv[2], float(sys.argv[3])
with pooled(path) as db:
    user = auth.get_user(db, who)
    items = [r for (r,) in db.conn.execute("SELECT item_id FROM assignments a JOIN users u ON u.id = a.user_id "
                                           "WHERE u.username = ? ORDER BY position", (who,))]
out, n = [], 0
while time.time() < until:
    t = time.time()
    with pooled(path) as db:
        cp.submit_grade(db, user, items[n % len(items)], tier=n % 3, client_token=f"{who}-{n}")
    out.append((t, time.time() - t))
    n += 1
print(json.dumps(out))
"""


def _wait_for(path: Path, writers: list, n: int, settle: float = 3.0) -> None:
    """Until all ``n`` writers are grading, then ``settle`` seconds more (the figures before)."""
    watch = sqlite3.connect(str(path), timeout=30)
    while watch.execute("SELECT count(DISTINCT user_id) FROM answers").fetchone()[0] < n:
        if any(w.poll() is not None for w in writers):
            raise SystemExit(f"a writer failed: {[w.communicate() for w in writers]}")
        time.sleep(0.05)
    watch.close()
    time.sleep(settle)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round((len(s) - 1) * q / 100)))] if s else float("nan")


def latency(values: list[float]) -> dict:
    return {"n": len(values), "p50": round(pct(values, 50), 2), "p95": round(pct(values, 95), 2),
            "max": round(max(values, default=float("nan")), 1)}


def backup_load(work: Path) -> dict:
    from medeval.store.backup import backup

    path, dest = work / "backup.db", work / "copy" / "medeval.db"
    dest.parent.mkdir()
    scored_db(path)
    until = time.time() + 15
    writers = [subprocess.Popen([PY, "-c", WRITER, str(path), a, str(until)], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for a in ("a1", "a2", "a3", "a4")]
    _wait_for(path, writers, 4)
    start = time.time()
    with connect(path, migrate=False) as db:
        report = backup(db, dest)
    end = time.time()
    outs = [w.communicate() for w in writers]
    if any(w.returncode for w in writers):
        raise SystemExit(f"a writer failed: {outs}")
    done = [json.loads(o) for o, _ in outs]
    during = [lat * 1e3 for rows in done for t, lat in rows if start <= t + lat and t <= end]
    before = [lat * 1e3 for rows in done for t, lat in rows if t + lat < start]
    after = [lat * 1e3 for rows in done for t, lat in rows if t > end]
    with connect(dest) as copy:
        ok = copy.conn.execute("PRAGMA integrity_check").fetchone()[0]
        answers = copy.conn.execute("SELECT count(*) FROM answers").fetchone()[0]
    out = {"size_mb": round(report.size / 1e6, 1), "seconds": round(report.seconds, 2), "tables": len(report.rows),
           "rows": sum(report.rows.values()), "answers_in_snapshot": report.rows["answers"],
           "answers_in_copy": answers, "copy_integrity": ok,
           "grades_by_4_writers": sum(len(r) for r in done),
           "writers_ms_before": latency(before), "writers_ms_during": latency(during),
           "writers_ms_after": latency(after)}
    check(ok == "ok" and answers == report.rows["answers"] and len(during) > 0, "backup: copy or writers")
    return out


def import_load(work: Path) -> dict:
    """An import of 20,000 responses while 2 annotators grade as fast as they can: how long the last transaction
    (the rows copied in) holds the write lock, and what the graders wait."""
    from contextlib import contextmanager

    try:
        from medeval.store import aside
    except ImportError:  # the code before rows were written aside: no such transaction to time
        aside = None
    path = work / "load.db"
    scored_db(path)
    big = big_files(work / "big", 20_000, kb_copies=2)
    real, copy = getattr(aside, "attached", None), {"seconds": float("nan")}

    @contextmanager
    def timed(db, side, name="aside"):
        t = time.perf_counter()
        with real(db, side, name):
            yield
        copy["seconds"] = time.perf_counter() - t

    if aside:
        aside.attached = timed
    until = time.time() + 15
    writers = [subprocess.Popen([PY, "-c", WRITER, str(path), a, str(until)], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for a in ("a1", "a2")]
    _wait_for(path, writers, 2)
    start = time.time()
    with connect(path) as db:
        s = import_files(db, **big)
    end = time.time()
    if aside:
        aside.attached = real
    outs = [w.communicate() for w in writers]
    rows = [r for o, _ in outs for r in json.loads(o)]
    during = [lat * 1e3 for t, lat in rows if start <= t + lat and t <= end]
    before = [lat * 1e3 for t, lat in rows if t + lat < start]
    out = {"import_s": round(end - start, 2), "responses_added": s.responses_added,
           "copy_transaction_ms": round(copy["seconds"] * 1e3, 1),
           "graders_ms_before": latency(before), "graders_ms_during": latency(during)}
    check(s.responses_added == 20_000, "import-load: the import")
    return out


PARTS = {"import-load": import_load, "import-kill": import_kill, "publish-kill": lambda w: threshold_kill(w, "publish"),
         "activate-kill": lambda w: threshold_kill(w, "activate"), "full-disk": full_disk, "backup": backup_load}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(PARTS), help="comma-separated parts: " + ", ".join(PARTS))
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()
    out = {"load_before": loadavg(), "cpus": os.cpu_count(), "sqlite": sqlite3.sqlite_version}
    with tempfile.TemporaryDirectory(prefix="probe-faults-") as tmp:
        for name in args.only.split(","):
            log(f"{name} ...")
            (Path(tmp) / name).mkdir()
            out[name] = PARTS[name](Path(tmp) / name)
    out["load_after"], out["failed"] = loadavg(), FAILED
    text = json.dumps(out, indent=2, ensure_ascii=False, default=str)
    print(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text, encoding="utf-8")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
