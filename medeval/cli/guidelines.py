"""A campaign's guidelines: ``guidelines show|set --campaign N``."""

from __future__ import annotations

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, friendly
from medeval.store.db import connect


@click.group("guidelines")
def guidelines_grp():
    """The guidelines annotators read before grading a campaign (every version is kept)."""


@guidelines_grp.command("show")
@db_option
@click.option("--campaign", "campaign_id", type=int, required=True, help="campaign id")
@click.option("--version", type=int, default=None, help="an earlier version (default: the latest)")
@friendly
def guidelines_show(db_path, campaign_id, version):
    """Print the guidelines: text, definitions and worked examples."""
    from medeval.annotation import guidelines as gl

    with connect(db_path) as db:
        g = gl.get_version(db, campaign_id, version) if version is not None else gl.current(db, campaign_id)
        if g is None:
            gl.default_definitions(db, campaign_id)  # (an unknown campaign says so)
            click.echo(f"campaign {campaign_id} has no guidelines yet; add them with "
                       f"`python -m medeval guidelines set --campaign {campaign_id} --file guidelines.md`")
            return
    click.echo(f"# guidelines of campaign {campaign_id}, version {g.version} ({g.created_by}, {g.created_at})\n")
    click.echo(g.text.rstrip() + "\n")
    if g.definitions:
        click.echo("## definitions")
        for d in g.definitions:
            click.echo(f"- {d['key']} · {d['name']}: {d['meaning']}")
    if g.examples:
        click.echo("\n## examples")
        for e in g.examples:
            click.echo(f"- [{e['aspect_type']}] {e['tier']}: {e['answer']} -- {e['why']}")


@guidelines_grp.command("set")
@db_option
@click.option("--campaign", "campaign_id", type=int, required=True, help="campaign id")
@click.option("--file", "text_file", type=click.Path(dir_okay=False), default=None,
              help="the guidelines text (Markdown, UTF-8); default: keep the latest version's text")
@click.option("--examples", "examples_file", type=click.Path(dir_okay=False), default=None,
              help="worked examples: CSV with the columns aspect_type, answer, tier, why; default: keep the latest")
@friendly
def guidelines_set(db_path, campaign_id, text_file, examples_file):
    """Save a new version of the guidelines (annotators acknowledge it before their next item)."""
    from pathlib import Path

    from medeval.annotation import guidelines as gl
    from medeval.core.errors import InputError

    actor = local_actor()
    if text_file is None and examples_file is None:
        raise InputError("nothing to set", fix="give --file guidelines.md and/or --examples examples.csv")
    text = None
    if text_file is not None:
        try:
            text = Path(text_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read it as UTF-8 text ({e.__class__.__name__})", file=text_file,
                             fix="give a readable UTF-8 Markdown file") from None
    examples = gl.examples_from_file(examples_file) if examples_file is not None else None
    with connect(db_path) as db:
        last = gl.current(db, campaign_id)
        text = text if text is not None else (last.text if last else "")
        examples = examples if examples is not None else (list(last.examples) if last else [])
        version = gl.set_guidelines(db, campaign_id, text, examples=examples, actor=actor, file=examples_file)
    click.echo(f"campaign {campaign_id}: guidelines version {version}")


COMMANDS = (guidelines_grp,)
