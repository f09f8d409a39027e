"""``python -m medeval i18n update|compile|check``: the interface catalogue's upkeep (Babel; medeval/locale)."""

from __future__ import annotations

import click

from medeval.cli.base import friendly


@click.group("i18n")
def i18n_grp():
    """The web app's translations: extract marked strings, compile catalogues, check them (medeval/locale)."""


@i18n_grp.command("update")
@friendly
def i18n_update():
    """Extract every marked string (babel.cfg) into medeval/locale/medeval.pot and merge it into each language's
    .po: new strings appear untranslated, removed ones go. Then translate the empty entries and run check."""
    from medeval.core import catalogue

    for lang, left in catalogue.update().items():
        click.echo(f"{catalogue.po_file(lang).relative_to(catalogue.ROOT)}: {left} entries to translate")


@i18n_grp.command("compile")
@friendly
def i18n_compile():
    """Write each language's .mo from its .po (the install runs this; fuzzy entries are left out)."""
    from medeval.core import catalogue

    for path in catalogue.compile_all():
        click.echo(f"wrote {path.relative_to(catalogue.ROOT)}")


@i18n_grp.command("check")
@friendly
def i18n_check():
    """Fail (exit 1) when a string a page shows is not marked, or a catalogue entry is missing, empty, fuzzy, has
    other placeholders than its English text, or leaves the glossary's term (medeval/locale/glossary.tsv)."""
    from medeval.core import catalogue

    problems = catalogue.check_all()
    for p in problems:
        click.echo(str(p))
    if problems:
        raise click.ClickException(f"{len(problems)} problems in the interface catalogue")
    click.echo("the catalogue is complete: every marked string translated, placeholders and glossary kept")


COMMANDS = (i18n_grp,)
