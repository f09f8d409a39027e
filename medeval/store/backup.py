"""A consistent copy of the database while the app runs (``medeval backup DEST``), checked before it is kept.

SQLite's online backup API copies the database page by page. The copy runs in steps of ``STEP_PAGES`` pages,
all inside one read transaction of the source connection: every step copies the same snapshot (were a new
snapshot taken between steps, SQLite would start the copy again whenever someone committed meanwhile, and a
busy app would never let it finish), and in WAL mode a reader holds no lock that a writer waits for, so
annotators keep grading while it runs (the write-ahead log only grows until the copy ends). The snapshot's
row count of every table and its migrations are read in the same transaction.

The copy is written to a hidden file beside DEST (``.DEST.part-PID``; one left by a killed backup is removed by
the next), then checked -- ``PRAGMA integrity_check``, the same migrations, the same row count in every table as
the snapshot -- and only then renamed to DEST, so DEST is always a whole, checked copy: an existing DEST is
replaced only with ``force``, and only by a checked copy.
"""

from __future__ import annotations

import errno
import getpass
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from medeval.core.errors import MedevalError
from medeval.store.db import database_file

STEP_PAGES = 1024
"""Pages copied per step of the backup API (4 MiB with SQLite's default page size)."""
ROOM_MARGIN = 1.05
"""A copy is started only when the destination's disk has this much more room than the copy's size."""


@dataclass
class BackupReport:
    source: str
    dest: str
    pages: int
    page_size: int
    seconds: float
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows at the snapshot (the copy has the same)
    migrations: list[str] = field(default_factory=list)
    integrity: str = "ok"

    @property
    def size(self) -> int:
        return self.pages * self.page_size

    def lines(self) -> list[str]:
        return [f"backed up {self.source} to {self.dest}: {self.size / 1e6:.1f} MB ({self.pages} pages) in "
                f"{self.seconds:.2f} s",
                f"checked: integrity {self.integrity}; {len(self.migrations)} migrations, the newest "
                f"{self.migrations[-1] if self.migrations else 'none'}; {len(self.rows)} tables, "
                f"{sum(self.rows.values())} rows, each table's count as in the snapshot"]


def _destination(source: str, dest: str | Path, force: bool) -> Path:
    """DEST, or MedevalError saying in words why it cannot take a copy."""
    out = Path(dest).expanduser()
    if out.is_dir():
        raise MedevalError(f"cannot back up to {out}: it is a folder; give the file to write, e.g. "
                           f"{out / ('medeval-' + time.strftime('%Y-%m-%d') + '.db')}")
    folder = out.parent.resolve()
    if not folder.is_dir():
        raise MedevalError(f"cannot back up to {out}: folder {folder} does not exist (create it first)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise MedevalError(f"cannot back up to {out}: folder {folder} is not writable by this user "
                           f"({getpass.getuser()})")
    if out.exists():
        if os.path.samefile(out, source):
            raise MedevalError(f"cannot back up to {out}: that is the database itself")
        if not force:
            raise MedevalError(f"{out} exists: give --force to replace it (it is replaced only once the new copy "
                               "is checked)")
    return out


def _remove(path: Path) -> None:
    for p in (path, Path(f"{path}-journal"), Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every system lets a folder be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_abandoned(out: Path) -> None:
    """Remove the part files of copies to ``out`` whose process is gone (a backup killed half-way)."""
    for part in out.parent.glob(f".{out.name}.part-*"):
        try:
            os.kill(int(part.name.rsplit("-", 1)[1]), 0)
        except (ValueError, ProcessLookupError):
            _remove(part)
        except PermissionError:  # another user's live process
            pass


def _no_room(error: BaseException) -> bool:
    return (isinstance(error, OSError) and error.errno == errno.ENOSPC) or \
        getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(error)


def _snapshot(conn: sqlite3.Connection) -> tuple[dict[str, int], list[str]]:
    """Every table's row count and the migrations applied, as one read transaction sees them."""
    tables = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    rows = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    migrations = [n for (n,) in conn.execute("SELECT name FROM _migrations ORDER BY name")] \
        if "_migrations" in rows else []
    return rows, migrations


def _check(path: Path, rows: dict[str, int], migrations: list[str]) -> str:
    """The copy's integrity, migrations and row counts against the snapshot's; MedevalError on a difference."""
    conn = sqlite3.connect(str(path))
    try:
        integrity = "; ".join(r[0] for r in conn.execute("PRAGMA integrity_check"))
        if integrity != "ok":
            raise MedevalError(f"the copy failed SQLite's integrity check ({integrity[:200]}): it was not kept")
        got, got_migrations = _snapshot(conn)
    finally:
        conn.close()
    if got_migrations != migrations:
        raise MedevalError("the copy's migrations differ from the database's: it was not kept")
    differ = [f"{t} ({got.get(t)} rows, not {n})" for t, n in rows.items() if got.get(t) != n]
    if differ or set(got) != set(rows):
        raise MedevalError(f"the copy's tables differ from the snapshot's: {', '.join(differ) or 'other tables'}; "
                           "it was not kept")
    return integrity


def backup(db: sqlite_utils.Database, dest: str | Path, *, force: bool = False, step_pages: int = STEP_PAGES,
           sleep: float = 0.0) -> BackupReport:
    """Copy the database ``db`` to the file ``dest`` from one snapshot, check the copy, keep it (module docstring).

    MedevalError, with nothing written to ``dest``: no such folder, not writable, ``dest`` exists (without
    ``force``), not enough room, or a copy that fails its checks. ``sleep``: seconds between steps."""
    source = database_file(db)
    if source is None:
        raise MedevalError("an in-memory database has no file to back up")
    out = _destination(source, dest, force)
    conn = db.conn
    if conn.in_transaction:
        raise MedevalError("cannot back up inside a transaction (internal error)")
    _remove_abandoned(out)
    tmp = out.parent / f".{out.name}.part-{os.getpid()}"
    started = time.perf_counter()
    conn.execute("BEGIN")  # one read snapshot for the counts and every step of the copy
    try:
        rows, migrations = _snapshot(conn)
        pages, page_size = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size"))
        free = shutil.disk_usage(out.parent).free
        if pages * page_size * ROOM_MARGIN > free:
            raise MedevalError(f"not enough room in {out.parent.resolve()} for the copy: it needs about "
                               f"{pages * page_size / 1e6:.1f} MB, {free / 1e6:.1f} MB are free")
        _remove(tmp)
        target = sqlite3.connect(str(tmp))
        try:
            conn.backup(target, pages=step_pages, sleep=sleep)
        finally:
            target.close()
    except (sqlite3.Error, OSError) as e:
        _remove(tmp)
        if _no_room(e):
            raise MedevalError(f"no room left in {out.parent.resolve()} for the copy ({e}): free space there and "
                               f"run it again; {out} was not written") from e
        raise MedevalError(f"the copy could not be made ({e}); {out} was not written") from e
    except BaseException:
        _remove(tmp)
        raise
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
    try:
        integrity = _check(tmp, rows, migrations)
        os.replace(tmp, out)
        _sync_folder(out.parent)
    except BaseException:
        _remove(tmp)
        raise
    return BackupReport(source=source, dest=str(out), pages=pages, page_size=page_size,
                        seconds=time.perf_counter() - started, rows=rows, migrations=migrations, integrity=integrity)
