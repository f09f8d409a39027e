"""The process's state in explicit objects (medeval.core.runtime, issue 25 §5): the connection pool, the migrations,
the password hasher and the embedding backends belong to a Runtime that the entry points create at start-up, and
two runtimes side by side share none of them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from medeval.accounts import auth, passwords
from medeval.cli.main import main
from medeval.core import runtime
from medeval.core.errors import MedevalError
from medeval.core.runtime import Runtime
from medeval.engine import embeddings
from medeval.engine.embeddings import EmbeddingBackends
from medeval.store import db as store
from medeval.store import migrate
from medeval.store.db import connect, pooled
from tests.conftest import ROOT

PW = "correct horse battery"


def _params(db, username: str) -> str:
    stored = db.conn.execute("SELECT password_hash FROM users WHERE username = ?", (username,)).fetchone()[0]
    return stored.split("$")[3]


def _applied(path) -> list[str]:
    with connect(path, migrate=False) as d:
        return [n for (n,) in d.conn.execute("SELECT name FROM _migrations ORDER BY name")]


@pytest.fixture
def no_runtime(monkeypatch):
    """A process that has installed no runtime yet (the holder is put back afterwards)."""
    monkeypatch.setattr(runtime, "_current", None)


def test_two_runtimes_side_by_side_share_no_pool(tmp_path):
    path = str(tmp_path / "a.db")
    with connect(path):
        pass
    a, b = Runtime("a"), Runtime("b")
    with runtime.use(a):
        with pooled(path) as d:
            from_a = d.conn
        assert store.pool() is a.pool
    with runtime.use(b):
        with pooled(path) as d:
            assert d.conn is not from_a  # b's pool has no idle connection: a new one
            from_b = d.conn
        assert store.pool() is b.pool
    assert a.pool is not b.pool
    with runtime.use(a), pooled(path) as d:
        assert d.conn is from_a  # a's idle connection is still a's
    with runtime.use(b), pooled(path) as d:
        assert d.conn is from_b
    a.pool.clear()
    b.pool.clear()


def test_two_runtimes_side_by_side_share_no_migrations(tmp_path):
    first_three = migrate.Migrations(migrate.migrations()[:3])
    old, new = Runtime("old code", migrations=first_three), Runtime("today")
    with runtime.use(old):
        with connect(tmp_path / "old.db"):
            pass
        assert migrate.discovered() is first_three
    with runtime.use(new):
        with connect(tmp_path / "new.db"):
            pass
        assert migrate.discovered() is not first_three and len(migrate.discovered()) > 3
    assert _applied(tmp_path / "old.db") == [name for name, _ in first_three]
    assert _applied(tmp_path / "new.db") == [name for name, _ in new.migrations] == sorted(
        name for name, _ in new.migrations)
    assert "m013_adjudication" in _applied(tmp_path / "new.db")


def test_two_runtimes_side_by_side_share_no_hasher(db, monkeypatch):
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", "test-only")
    suite, web = Runtime("tests"), Runtime("web app")
    with runtime.use(web):
        auth.use_production_hashing()
        auth.add_user(db, "web1", PW, "annotator")
    with runtime.use(suite):
        auth.add_user(db, "cli1", PW, "annotator")
        assert passwords.hasher() is suite.hasher
    assert suite.hasher is not web.hasher
    assert (web.production_hashing, suite.production_hashing) == (True, False)
    assert (web.hasher.profile(), suite.hasher.profile()) == ("production", "test-only")
    assert _params(db, "web1") == "m=65536,t=3,p=4"
    assert _params(db, "cli1") == "m=8,t=1,p=1"
    with runtime.use(suite):  # either verifies anywhere: a hash carries its parameters
        assert auth.authenticate(db, "web1", PW).username == "web1"


def test_two_runtimes_side_by_side_share_no_embedding_backends():
    fake = object()
    a, b = Runtime("a", embeddings=EmbeddingBackends({"fake-model": fake})), Runtime("b")
    with runtime.use(a):
        assert embeddings.get_backend("fake-model", "cpu") is fake
    with runtime.use(b):
        assert embeddings.backends() is b.embeddings is not a.embeddings
        assert "fake-model" not in b.embeddings.loaded
        with pytest.raises(MedevalError, match="neither a built-in model"):  # b would have to load it: no such model
            embeddings.get_backend("fake-model", "cpu")


def test_use_puts_the_previous_runtime_back_even_after_an_error():
    before = runtime.current()
    other = Runtime("other")
    with pytest.raises(RuntimeError), runtime.use(other):
        assert runtime.current() is other
        raise RuntimeError("boom")
    assert runtime.current() is before


def test_but_keeps_the_other_parts_and_replaces_the_named_one():
    base = Runtime("base")
    pool, hasher = store.ConnectionPool(), object()
    base.pool = pool
    changed = base.but(hasher=hasher)
    assert changed is not base and changed.pool is pool and changed.hasher is hasher and base.hasher is None
    assert changed._lock is not base._lock


def test_the_default_runtime_is_made_once_on_first_use(no_runtime):
    first = runtime.current()
    assert first.name == "default" and runtime.default() is first and runtime.current() is first
    assert not first.production_hashing


def test_the_command_line_starts_its_runtime_and_keeps_a_callers(no_runtime, tmp_path):
    res = CliRunner().invoke(main, ["settings"])
    assert res.exit_code == 0, res.output
    assert runtime.current().name == "command line"  # a process with none gets the command line's
    mine = Runtime("a test's")
    with runtime.use(mine):
        res = CliRunner().invoke(main, ["settings"])
        assert res.exit_code == 0, res.output
        assert runtime.current() is mine  # an in-process caller keeps its own


def test_a_misnamed_migration_module_is_refused(tmp_path, monkeypatch):
    package = tmp_path / "medeval_test_badmigrations"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "m001_first.py").write_text("def up(db):\n    pass\n")
    (package / "second.py").write_text("def up(db):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MedevalError, match="second: a migration module is named mNNN_what"):
        migrate.Migrations.discover("medeval_test_badmigrations")
    (package / "second.py").unlink()
    (package / "m001_again.py").write_text("def up(db):\n    pass\n")
    with pytest.raises(MedevalError, match="m001_again and m001_first share a number|m001_first and m001_again"):
        migrate.Migrations.discover("medeval_test_badmigrations")


CHECK = ("import runpy; runpy.run_path('server.py'); from medeval.core import runtime; "
         "from medeval.accounts import passwords; r = runtime.current(); "
         "print('runtime:', r.name, r.production_hashing, passwords.hasher().profile(), r.hasher is passwords.hasher())")


@pytest.mark.slow  # starts a Python process
def test_the_web_app_start_creates_a_production_hashing_runtime(tmp_path):
    env = {**os.environ, "MEDEVAL_PASSWORD_HASH_PROFILE": "test-only", "MEDEVAL_DB": str(tmp_path / "a.db"),
           "MEDEVAL_PLUGINS": "", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "runtime: web app True production True" in out.stdout


def test_close_closes_the_idle_connections_and_folds_the_log_back(tmp_path):
    """``Runtime.close`` (the web app's shutdown): the pool's idle connections are closed, and the last one
    closing checkpoints the write-ahead log into the database file, so one file is left to back up."""
    path = tmp_path / "a.db"
    with connect(path):
        pass
    rt = Runtime("closing")
    with runtime.use(rt):
        with pooled(path) as d:
            d.conn.execute("CREATE TABLE t (x)")
            d.conn.execute("INSERT INTO t VALUES (1)")
            d.conn.commit()
            held = d.conn
        assert rt.pool is not None and (tmp_path / "a.db-wal").exists()
        rt.close()
        assert rt.pool is None and rt.embeddings is None
        with pytest.raises(Exception, match="closed"):
            held.execute("SELECT 1")
        assert not (tmp_path / "a.db-wal").exists()
        rt.close()  # idempotent
        with pooled(path) as d:  # a part used again is made again
            assert d.conn.execute("SELECT x FROM t").fetchone() == (1,)
        assert rt.pool is not None
        rt.close()


def test_the_closing_lifespan_closes_the_current_runtime_when_the_server_stops():
    import asyncio

    closed = []

    class Probe(Runtime):
        def close(self):
            closed.append(self.name)

    async def serve():
        async with runtime.closing(object()):
            assert closed == []  # nothing at start

    with runtime.use(Probe("web app")):
        asyncio.run(serve())
    assert closed == ["web app"]


@pytest.mark.slow
def test_the_web_app_closes_its_runtime_when_the_server_stops(tmp_path):
    """server.py hands Streamlit's app the closing lifespan (st.App keeps it as ``_user_lifespan``), run after the
    media guard's registry is installed (``webui.media.owning``)."""
    check = ("import runpy; ns = runpy.run_path('server.py'); from medeval.core import runtime; "
             "print('closing:', ns['app']._user_lifespan.wrapped is runtime.closing)")
    env = {**os.environ, "MEDEVAL_DB": str(tmp_path / "a.db"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "closing: True" in out.stdout
