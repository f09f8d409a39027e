"""The command line starts light: its command list is a table (``medeval.cli.main.COMMANDS``), a command's module is
imported when that command runs, and the heavy libraries load only in the commands that use them (the figures:
``bench/bench_startup.py``)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import sqlite3
import subprocess
import sys
import time

import click
import pytest
from click.testing import CliRunner

import medeval.cli
from medeval.accounts import auth
from medeval.accounts.policy import local_actor
from medeval.annotation import campaigns as cp
from medeval.cli import opening
from medeval.cli.main import COMMANDS, main
from medeval.core import runtime
from medeval.core.runtime import Runtime
from medeval.store.db import connect
from medeval.store.migrate import Migrations, applied_count
from tests.conftest import ROOT

HEAVY = ("scipy", "pandas", "torch", "sentence_transformers")
# what a command that only reads the database leaves out too: sqlite-utils and the numpy it imports
READER_HEAVY = (*HEAVY, "sqlite_utils", "numpy")


def _loaded_after(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    probe = code + f"\nimport sys, json; print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # fresh interpreters
def test_importing_the_command_line_loads_no_heavy_library():
    assert _loaded_after("import medeval.cli.main") == []


@pytest.mark.slow  # fresh interpreters
@pytest.mark.parametrize("argv", [["--help"], ["settings"], ["users", "--help"], ["campaign", "list", "--help"]])
def test_light_commands_load_no_heavy_library(argv):
    run = (f"import sys; sys.argv = ['medeval', *{argv!r}]\nfrom medeval.cli.main import main\n"
           "try:\n    main()\nexcept SystemExit:\n    pass")
    assert _loaded_after(run) == []


def _run_main(argv: list[str]) -> str:
    return (f"import sys; sys.argv = ['medeval', *{argv!r}]\nfrom medeval.cli.main import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code")


@pytest.mark.slow  # fresh interpreters
@pytest.mark.parametrize("argv", [["users", "list"], ["campaign", "list"]])
def test_listing_commands_load_neither_sqlite_utils_nor_a_heavy_library(tmp_path, argv):
    db_path = tmp_path / "up-to-date.db"
    with connect(db_path):  # created and migrated here: the command finds it up to date
        pass
    assert _loaded_after(_run_main([*argv, "--db", str(db_path)]), READER_HEAVY) == []


def _campaign(db_path, name: str, kind: str = "bucket_grading", status: str = "open") -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("INSERT INTO campaigns (name, kind, config, report, created_by, created_at, status) "
                     "VALUES (?, ?, '{}', '{}', 'cli:test', '2026-01-02T03:04:05Z', ?)", (name, kind, status))


def test_listing_commands_read_an_up_to_date_database_without_sqlite_utils_and_print_the_same(tmp_path):
    db_path = tmp_path / "d.db"
    with connect(db_path) as db:
        auth.add_user(db, "doc", "a-long-enough-password", "annotator", actor=local_actor(), language="zh-CN")
        auth.add_user(db, "boss", "a-long-enough-password", "admin", actor=local_actor())
        db.conn.execute("INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, 'x', "
                        "'login.locked_out', 'doc', '{}')", (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),))
    _campaign(db_path, "first")
    _campaign(db_path, "second", kind="random_validation", status="closed")
    _campaign(db_path, "a task", kind="rubric")  # a task campaign: not listed here
    with opening.reading(db_path) as db:
        assert type(db) is opening.Reading  # up to date: a plain sqlite3 connection
        with connect(db_path) as full:
            assert auth.list_users(db, actor=local_actor()) == auth.list_users(full, actor=local_actor())
            assert list(auth.locked_users(db, actor=local_actor())) == ["doc"]
            assert cp.list_campaigns(db, actor=local_actor()) == cp.list_campaigns(full, actor=local_actor())
    users = CliRunner().invoke(main, ["users", "list", "--db", str(db_path)])
    assert users.exit_code == 0
    assert users.output == "boss\tadmin\tactive\tdefault\ndoc\tannotator\tactive\tzh-CN\tlocked\n"
    campaigns = CliRunner().invoke(main, ["campaign", "list", "--db", str(db_path)])
    assert campaigns.exit_code == 0 and campaigns.output == (
        "1\tfirst\tbucket_grading\t0 items\topen\t2026-01-02T03:04:05Z\n"
        "2\tsecond\trandom_validation\t0 items\tclosed\t2026-01-02T03:04:05Z\n")


def test_reading_opens_the_connection_as_the_store_does(tmp_path):
    db_path = tmp_path / "d.db"
    with connect(db_path) as full, opening.reading(db_path) as db:
        assert type(db) is opening.Reading
        for pragma in ("busy_timeout", "foreign_keys", "synchronous", "journal_size_limit", "journal_mode"):
            assert db.conn.execute(f"PRAGMA {pragma}").fetchone() == full.conn.execute(f"PRAGMA {pragma}").fetchone()
        assert db.conn.isolation_level is None and full.conn.isolation_level is None


def test_reading_a_database_not_up_to_date_brings_it_up_to_date_first(tmp_path):
    """A database that is not there, short of a migration or not in WAL mode is opened (and migrated) by the store,
    as these commands always did."""
    every = Migrations.discover()
    new = tmp_path / "new.db"
    result = CliRunner().invoke(main, ["users", "list", "--db", str(new)])
    assert result.exit_code == 0 and result.output == ""
    with opening.reading(new) as db:
        assert type(db) is opening.Reading and applied_count(db) == len(every)

    old = tmp_path / "old.db"
    with runtime.use(Runtime("older code", migrations=Migrations(every.items[:3]))), connect(old) as db:
        assert applied_count(db) == 3
    with opening.reading(old) as db:
        assert type(db) is not opening.Reading and applied_count(db) == len(every)
    with sqlite3.connect(old) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    with opening.reading(old) as db:
        assert type(db) is not opening.Reading
        assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    with runtime.use(Runtime("older code", migrations=Migrations(every.items[:3]))):
        with opening.reading(old) as db:  # a runtime's own migrations are the ones it checks
            assert type(db) is opening.Reading

    missing = tmp_path / "no-such-folder" / "d.db"
    result = CliRunner().invoke(main, ["campaign", "list", "--db", str(missing)])
    assert result.exit_code == 1 and "folder" in result.output and "does not exist" in result.output


def test_the_campaigns_package_still_offers_every_name_and_module():
    """It imports its modules when a name is first used (listing needs only ``status``): each name it lists is
    there, the defining module's own, and so are its modules, as when it imported them all at once."""
    from medeval.annotation import gold, guidelines
    from medeval.annotation.campaigns import assignment, grading, sampling, status

    assert set(cp.__all__) == set(cp._WHERE)
    homes = {"assignment": assignment, "grading": grading, "guidelines": guidelines, "sampling": sampling,
             "status": status, "gold": gold}
    for name in cp.__all__:
        assert getattr(cp, name) is getattr(homes[cp._WHERE[name]], name), name
    assert (cp.assignment, cp.grading, cp.sampling, cp.status) == (assignment, grading, sampling, status)
    assert set(cp.__all__) <= set(dir(cp))
    with pytest.raises(AttributeError):
        cp.no_such_name


@pytest.mark.slow  # fresh interpreters
def test_a_command_that_needs_scipy_still_gets_it(tmp_path):
    ratings = tmp_path / "r.csv"
    ratings.write_text("item,rater,value\n" + "".join(f"{i},{r},{(i + j) % 3}\n" for i in range(6) for j, r in enumerate("ab")),
                       encoding="utf-8")
    run = (f"import sys; sys.argv = ['medeval', 'agreement', {str(ratings)!r}, '--level', 'ordinal']\n"
           "from medeval.cli.main import main\ntry:\n    main()\nexcept SystemExit:\n    pass")
    assert "scipy" in _loaded_after(run)


def test_the_table_lists_every_command_with_its_own_help():
    """Each command module's COMMANDS is in the table under its module, with the one-line help it has itself."""
    defined = {}
    for info in pkgutil.iter_modules(medeval.cli.__path__):
        if info.name == "main":  # (the table itself)
            continue
        module = importlib.import_module(f"medeval.cli.{info.name}")
        for cmd in getattr(module, "COMMANDS", ()):
            defined[cmd.name] = (info.name, cmd.get_short_help_str(limit=10 ** 6))
    assert defined == COMMANDS


def test_help_lists_the_commands_as_click_would_and_unknown_commands_are_refused():
    out = CliRunner().invoke(main, ["--help"]).output
    listed = [line.split()[0] for line in out.split("Commands:", 1)[1].splitlines() if line.strip()]
    assert listed == sorted(COMMANDS)
    real = click.Group(commands=[main.get_command(click.Context(main), n) for n in COMMANDS])
    with click.Context(real, terminal_width=140, max_content_width=140) as ctx:
        assert out.split("Commands:", 1)[1].rstrip() == real.get_help(ctx).split("Commands:", 1)[1].rstrip()
    bad = CliRunner().invoke(main, ["scroe"])
    assert bad.exit_code == 2 and "No such command 'scroe'" in bad.output
