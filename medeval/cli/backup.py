"""``python -m medeval backup DEST``: a checked copy of the database while the app runs."""

from __future__ import annotations

from pathlib import Path

import click

from medeval.cli.base import db_option, friendly
from medeval.core.errors import MedevalError
from medeval.store.db import connect, resolve_path


@click.command("backup")
@click.argument("dest", type=click.Path())
@db_option
@click.option("--force", is_flag=True, help="replace DEST if it exists (only once the new copy is checked)")
@friendly
def backup_cmd(dest, db_path, force):
    """Copy the database to the file DEST from one consistent snapshot, while the app keeps running.

    The copy is checked (SQLite's integrity check, the same migrations, every table's row count as in the
    snapshot) before it is kept; annotators keep grading meanwhile. Restore: stop the app, then put the copy in
    place of the database file (or point MEDEVAL_DB at it).
    """
    from medeval.store.backup import backup

    path = resolve_path(db_path)
    if path == ":memory:" or not Path(path).is_file():
        raise MedevalError(f"no database at {path}: give --db PATH (or set MEDEVAL_DB)")
    with connect(path, migrate=False) as db:  # a copy is taken as the database is, never changed first
        report = backup(db, dest, force=force)
    for line in report.lines():
        click.echo(line)


COMMANDS = (backup_cmd,)
