"""The command line starts light: its command list is a table (``medeval.cli.main.COMMANDS``), a command's module is
imported when that command runs, and the heavy libraries load only in the commands that use them (the figures:
``bench/bench_startup.py``)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

import medeval.cli
from medeval.cli.main import COMMANDS, main
from tests.conftest import ROOT

HEAVY = ("scipy", "pandas", "torch", "sentence_transformers")


def _loaded_after(code: str) -> list[str]:
    probe = code + f"\nimport sys, json; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
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
