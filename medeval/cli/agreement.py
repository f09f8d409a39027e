"""Agreement statistics: ``agreement`` (any ratings file) and ``report-agreement`` (a campaign's HTML/PDF report)."""

from __future__ import annotations

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, friendly, language_option
from medeval.core.limits import BOOT_MAX, check_number, check_seed
from medeval.store.db import connect


def _bootstrap(n_boot, seed) -> tuple[int, int]:
    """The options checked with their names (the library checks them again, for callers other than the CLI)."""
    return (check_number(n_boot, what="--n-boot", low=0, high=BOOT_MAX, integer=True),
            check_seed(seed, what="--seed"))


@click.command("agreement")
@click.argument("ratings", type=click.Path(dir_okay=False))
@click.option("--level", type=click.Choice(["nominal", "ordinal", "interval", "ratio"]), required=True,
              help="level of measurement of the values")
@click.option("--categories", default=None, help="ordered category set, comma-separated (e.g. 0,1,2)")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="json", show_default=True)
@click.option("--n-boot", type=int, default=1000, show_default=True,
              help=f"bootstrap resamples for CIs (0 to {BOOT_MAX})")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the bootstrap (0 to 2^32 - 1)")
@friendly
def agreement_cmd(ratings, level, categories, fmt, n_boot, seed):
    """Inter-rater agreement of a long-format ratings file (item, rater, value): alpha, ICC, kappas, Spearman."""
    from medeval.stats.agreement import read_long, render_summary, summarise

    n_boot, seed = _bootstrap(n_boot, seed)
    cats = [c.strip() for c in categories.split(",")] if categories else None
    s = summarise(read_long(ratings), level, cats, n_boot=n_boot, rng=seed)
    click.echo(render_summary(s, fmt), nl=False)


@click.command("report-agreement")
@db_option
@click.option("--campaign", "campaign_id", type=int, required=True, help="campaign id (see `campaign list`)")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="folder to write into")
@click.option("--pdf/--no-pdf", default=True, show_default=True, help="also print report.pdf with headless Chromium")
@click.option("--n-boot", type=int, default=1000, show_default=True,
              help=f"bootstrap resamples for CIs (0 to {BOOT_MAX})")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the bootstrap (0 to 2^32 - 1)")
@click.option("--consensus", type=click.Choice(["lower-median", "mean-of-middle", "majority", "adjudicated", "median"]),
              default="lower-median", show_default=True,
              help="the clinicians' tier per item for 'clinicians vs the machine' (agreement statistics always use "
                   "the raw grades): lower-median (the lower of the two middle tiers, as calibrate), mean-of-middle "
                   "(x.5 when an even panel splits evenly), majority or adjudicated; a bare 'median' is refused as "
                   "ambiguous")
@language_option
@friendly
def report_agreement_cmd(db_path, campaign_id, out_dir, pdf, n_boot, seed, consensus, language):
    """Agreement report of a campaign: report.html (offline), report.pdf, summary.json and CSVs."""
    from medeval.core import i18n
    from medeval.reports.agreement_report import write_report
    from medeval.reports.dashboard import campaign_agreement

    from medeval.calibration.validation import AMBIGUOUS_MEDIAN
    from medeval.core.errors import MedevalError

    if consensus == "median":  # it meant the mean of the middle two here, the lower median in calibrate: say which
        raise MedevalError(AMBIGUOUS_MEDIAN)
    actor = local_actor()
    n_boot, seed = _bootstrap(n_boot, seed)
    with i18n.language(language):  # the statistics' names and the methods paragraph are words of the report too
        with connect(db_path) as db:
            s = campaign_agreement(db, campaign_id, actor=actor, n_boot=n_boot, seed=seed, consensus=consensus)
        paths = write_report(s, out_dir, pdf=pdf)
    for name, path in paths.items():
        click.echo(f"{name}\t{path}")


COMMANDS = (agreement_cmd, report_agreement_cmd,)
