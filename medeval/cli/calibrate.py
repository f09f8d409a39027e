"""``calibrate``: cut-offs from clinicians' grades (a file or a campaign), optionally published."""

from __future__ import annotations

import json

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, friendly
from medeval.core.errors import MedevalError
from medeval.core.limits import BOOT_MAX, check_name, check_number, check_seed
from medeval.store.db import connect


@click.command("calibrate")
@click.argument("graded", required=False, type=click.Path(dir_okay=False))
@click.option("--campaign", "campaign_id", type=int, default=None,
              help="calibrate from a campaign in the database instead of a GRADED file")
@db_option
@click.option("--criterion", type=click.Choice(["kappa", "accuracy", "spearman"]), default="kappa",
              show_default=True, help="what the cut-offs maximise (kappa: quadratic-weighted Cohen's kappa)")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="json", show_default=True)
@click.option("--n-boot", type=int, default=200, show_default=True,
              help="bootstrap resamples for the spread of the criterion and the stability of the cut-offs")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the bootstrap")
@click.option("--consensus", type=click.Choice(["lower-median", "majority", "adjudicated", "median"]),
              default="lower-median", show_default=True,
              help="an item's expert tier from its annotators' tiers: the lower median (the lower of the two middle "
                   "tiers, always a tier someone gave; 'median' is accepted for it: a cut-off needs a tier, so the "
                   "mean of the middle two cannot be meant), the most frequent tier (ties: lower median), or the "
                   "adjudicated tier where there is one (else the lower median; needs --campaign); recorded with "
                   "--publish")
@click.option("--estimator", type=click.Choice(["smooth", "search"]), default=None,
              help="smooth: a psychometric curve per cut-off, the cut-off where it crosses 0.5 (calibration v2); "
                   "search: the exhaustive search maximising --criterion. Default: the estimator an active "
                   "campaign records (smooth for new ones), else search; recorded with --publish")
@click.option("--publish", "publish_name", default=None,
              help="also store the cut-offs as a new threshold-set version with this name, activate it and regrade "
                   "(atomic; strata not calibrated keep the active set's cut-offs)")
@friendly
def calibrate_cmd(graded, campaign_id, db_path, criterion, fmt, n_boot, seed, consensus, estimator, publish_name):
    """Cut-offs per (metric, aspect type) that best reproduce the clinicians' tiers.

    GRADED has columns metric, aspect_type, score, tier (0/1/2) and optionally item (rows of one
    item, one per annotator, are combined into their consensus tier: --consensus).
    """
    from medeval.calibration.cutoffs import calibrate_rows, campaign_rows
    from medeval.calibration.graded_file import read_graded

    if consensus == "lower-median":  # the calibration's own name for it (recorded in publications as "median")
        consensus = "median"
    actor = local_actor()
    if (graded is None) == (campaign_id is None):
        raise click.UsageError("give either a GRADED file or --campaign ID")
    n_boot = check_number(n_boot, what="--n-boot", low=0, high=BOOT_MAX, integer=True)
    seed = check_seed(seed, what="--seed")
    if publish_name is not None:
        publish_name = check_name(publish_name, what="--publish (the threshold set's name)")
    if graded is not None and consensus == "adjudicated":
        raise MedevalError("--consensus adjudicated needs the campaign's adjudications: give --campaign ID instead "
                           "of a file, or choose lower-median or majority")
    if graded is not None:
        rows = read_graded(graded)
    else:
        with connect(db_path) as db:
            rows = campaign_rows(db, campaign_id, consensus=consensus)
        if not rows:
            raise MedevalError(f"campaign {campaign_id} has no grades yet")
    if estimator is None and campaign_id is not None:  # an active campaign's own estimator (issue 24)
        from medeval.calibration.designs import campaign_estimator

        with connect(db_path) as db:
            estimator = campaign_estimator(db, campaign_id)
    if estimator == "smooth":
        from medeval.calibration.designs import calibrate_rows as by_estimator

        calibrations = by_estimator(rows, estimator="smooth", rng=seed, consensus=consensus)
    else:
        calibrations = calibrate_rows(rows, criterion=criterion, n_boot=n_boot, rng=seed, consensus=consensus)
    results = [c.to_dict() for c in calibrations]
    if publish_name is not None:
        from medeval.calibration.cutoffs import campaign_source, publish

        with connect(db_path) as db:
            source = campaign_source(db, campaign_id) if campaign_id is not None else {"file": str(graded)}
            design = None
            if campaign_id is not None:
                from medeval.calibration.rounds import design_provenance

                design = design_provenance(db, campaign_id)
            version = publish(db, calibrations, name=publish_name, source=source, consensus=consensus, actor=actor,
                              design=design)
        click.echo(f"published threshold set v{version} ({publish_name}) and made it active", err=True)
    if fmt == "json":
        click.echo(json.dumps(results, indent=2))
        return
    head = ["metric", "aspect_type", "low", "high", "criterion", "value", "n", "value_ci95", "stable_share",
            "undefined_reason"]
    lines = []
    for r in results:
        b = r["bootstrap"]
        why = r["undefined_reason"] or "; ".join(  # a boundary the grades leave undetermined: said, not left blank
            f"{w} cut-off undetermined ({code}): the base set's is kept on --publish"
            for w, code in (b.get("undetermined") or {}).items()) or None
        cells = [r["metric"], r["aspect_type"], *(r["cut_offs"] or [None, None]), r["criterion"], r["value"], r["n"],
                 b.get("value_ci95"), b.get("stable_share"), why]
        lines.append(["" if c is None else (f"{c:.4f}" if isinstance(c, float) else
                                             (" to ".join(f"{x:.3f}" for x in c) if isinstance(c, list) else str(c)))
                      for c in cells])
    if fmt == "csv":
        import io

        from medeval.core import csvsafe

        buf = io.StringIO()
        w = csvsafe.writer(buf)
        w.writerow(head)
        w.writerows(lines)
        click.echo(buf.getvalue(), nl=False)
    else:
        click.echo("| " + " | ".join(head) + " |")
        click.echo("|" + "---|" * len(head))
        for cells in lines:
            click.echo("| " + " | ".join(cells) + " |")


COMMANDS = (calibrate_cmd,)
