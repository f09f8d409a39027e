"""``settings``: every setting's current value, checked, or the README's settings table."""

from __future__ import annotations

import os

import click

from medeval.cli.base import friendly
from medeval.core import settings
from medeval.core.errors import MedevalError


@click.command("settings")
@click.option("--markdown", is_flag=True,
              help="print the README's settings table (Markdown) from the declarations instead")
@friendly
def settings_cmd(markdown):
    """List every setting: its value now (from the environment or its default), checked."""
    if markdown:
        click.echo(settings.markdown_table(), nl=False)
        return
    bad = []
    for s in settings.SETTINGS:
        raw = os.environ.get(s.name)
        source = "environment" if raw not in (None, "") else "default"
        try:
            s.parse(raw)
        except MedevalError as e:
            bad.append(str(e))
        shown = ("(set)" if source == "environment" else "(not set)") if s.secret \
            else (raw if source == "environment" else s.default)
        click.echo(f"{s.name}={shown}\t# {source}" + (f"; option {s.option}" if s.option else ""))
    if bad:
        raise MedevalError(f"{len(bad)} setting(s) not valid: " + "; ".join(bad))


COMMANDS = (settings_cmd,)
