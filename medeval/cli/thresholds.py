"""Threshold sets: ``thresholds list|export|import|activate|adopt``."""

from __future__ import annotations

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, emit, friendly, warn_ungraded
from medeval.store.db import connect


@click.group("thresholds")
def thresholds_grp():
    """List, export, import, activate and adopt versioned tier threshold sets."""



@thresholds_grp.command("list")
@db_option
@friendly
def th_list(db_path):
    """List threshold-set versions (* marks the active one)."""
    from medeval.engine import thresholds as th

    with connect(db_path) as db:
        for ts in th.list_sets(db):
            click.echo(f"{'*' if ts.active else ' '} v{ts.version}  {ts.name}  [cosine: {ts.embedding_model}; "
                       f"tokenizer: {ts.tokenizer}]  {ts.created_at} by {ts.created_by}")



@thresholds_grp.command("export")
@db_option
@click.argument("version", type=int, required=False)
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@friendly
def th_export(db_path, version, out):
    """Export a threshold set as JSON (default: the active one)."""
    from medeval.engine import thresholds as th

    with connect(db_path) as db:
        ts = th.load(db, version) if version is not None else th.active(db)
    text = ts.to_json() + "\n"
    emit(text, out)



@thresholds_grp.command("import")
@db_option
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--activate", is_flag=True, help="make it the active set and regrade")
@click.option("--by", "created_by", default=lambda: __import__("getpass").getuser(), help="who imports it (provenance)")
@friendly
def th_import(db_path, file, activate, created_by):
    """Import a threshold set from JSON as a new version."""
    from medeval.engine import thresholds as th

    actor = local_actor()
    ts = th.read_file(file)
    with connect(db_path) as db:
        v = th.store(db, ts, created_by=created_by)
        click.echo(f"imported {file} as v{v}")
        if activate:
            n = th.activate(db, v, actor=actor)
            click.echo(f"v{v} is active; {n} grades added")



@thresholds_grp.command("activate")
@db_option
@click.argument("version", type=int)
@friendly
def th_activate(db_path, version):
    """Make a version active and grade every score under it (atomic)."""
    from medeval.engine import thresholds as th

    actor = local_actor()
    with connect(db_path) as db:
        n = th.activate(db, version, actor=actor)
        click.echo(f"v{version} is active; {n} grades added")
        warn_ungraded(db, version)



@thresholds_grp.command("adopt")
@db_option
@click.argument("version", type=int)
@click.option("--embedding-model", required=True, help="model id of the cosine scores (see `medeval export`, column scorer)")
@click.option("--activate", is_flag=True, help="make the copy active and regrade")
@click.option("--by", "created_by", default=lambda: __import__("getpass").getuser(), help="who adopts it (provenance)")
@friendly
def th_adopt(db_path, version, embedding_model, activate, created_by):
    """Copy a set for another embedding model, marked provisional (not calibrated for it)."""
    from medeval.engine import thresholds as th

    with connect(db_path) as db:
        v = th.adopt(db, version, embedding_model, created_by=created_by, activate_it=activate)
        click.echo(f"v{v}: copy of v{version} for {embedding_model} (provisional){'; active' if activate else ''}")


COMMANDS = (thresholds_grp,)
