"""``report-leaderboard``: the leaderboard of a threshold-set version as an offline HTML report, its PDF and CSVs."""

from __future__ import annotations

import click

from medeval.cli.base import db_option, friendly, language_option
from medeval.store.db import connect


@click.command("report-leaderboard")
@db_option
@click.option("--version", "version", type=int, default=None,
              help="threshold-set version (see `thresholds list`); default: the active one")
@click.option("--compare", type=int, default=None, help="another version to show how the ranking moves")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="folder to write into")
@click.option("--pdf/--no-pdf", default=True, show_default=True, help="also print report.pdf with headless Chromium")
@language_option
@friendly
def report_leaderboard_cmd(db_path, version, compare, out_dir, pdf, language):
    """Leaderboard report: tier shares (Figure 5), ranking (Table 4), per aspect (Table 5), Welch's t-tests."""
    from medeval.core import i18n
    from medeval.reports.leaderboard_report import build, write_report

    with i18n.language(language):
        with connect(db_path) as db:
            data = build(db, version, compare=compare)
        paths = write_report(data, out_dir, pdf=pdf)
    for name, path in paths.items():
        click.echo(f"{name}\t{path}")


COMMANDS = (report_leaderboard_cmd,)
