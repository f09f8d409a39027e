"""Tier-grading campaigns: ``campaign create|create-random|next-round|rounds|list|progress|close|reopen|machine-agreement``."""

from __future__ import annotations

import json

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, friendly
from medeval.cli.opening import connect, reading


@click.group("campaign")
def campaign_grp():
    """Grading campaigns for clinicians: create (bucket or random), list, progress, close, reopen."""



@campaign_grp.command("create")
@db_option
@click.option("--name", required=True)
@click.option("--annotators", required=True, help="comma-separated usernames")
@click.option("--metrics", default="bleu1,rouge1,cosine", show_default=True)
@click.option("--aspect-types", default="enumerated,declarative", show_default=True)
@click.option("--width", type=float, default=0.1, show_default=True, help="score interval width")
@click.option("--per-interval", type=int, default=10, show_default=True, help="items sampled per interval")
@click.option("--k", type=int, default=3, show_default=True, help="annotators per item")
@click.option("--seed", type=int, default=0, show_default=True, help="sampling and assignment seed (stored)")
@click.option("--sampling", type=click.Choice(["interval", "active"]), default="interval", show_default=True,
              help="interval: the paper's fixed number per score interval; active: a seed round of --per-interval "
                   "per interval, then rounds drawn where the cut-offs are uncertain (`campaign next-round`)")
@click.option("--round-size", type=int, default=20, show_default=True,
              help="active: items per (metric, aspect type) in each later round")
@click.option("--target-width", type=float, default=0.05, show_default=True,
              help="active: a stratum stops when both cut-offs' 95%% intervals are at most this wide")
@click.option("--budget", type=int, default=300, show_default=True,
              help="active: items per (metric, aspect type) at most")
@click.option("--explore", type=float, default=0.2, show_default=True,
              help="active: share of each round spread over the whole score range")
@click.option("--criterion", type=click.Choice(["kappa", "accuracy", "spearman"]), default=None,
              help="active: the calibration criterion of the rounds (default: accuracy, see the README)")
@click.option("--estimator", type=click.Choice(["smooth", "accuracy"]), default="smooth", show_default=True,
              help="active: smooth (psychometric curves, each cut-off where its curve crosses 0.5) or accuracy (the "
                   "paper's search for the pair that maximises --criterion)")
@click.option("--design", type=click.Choice(["adaptive", "active", "interval"]), default="adaptive",
              show_default=True, help="active: where later rounds are drawn -- adaptive (where a grade most narrows "
                                      "the cut-offs), active (where their bootstrap has mass) or interval (the paper's)")
@friendly
def campaign_create(db_path, name, annotators, metrics, aspect_types, width, per_interval, k, seed, sampling,
                    round_size, target_width, budget, explore, criterion, estimator, design):
    """Sample items per score interval (or an active seed round) and assign each to exactly k annotators."""
    from medeval.annotation import campaigns as cp

    actor = local_actor()
    metric_list = tuple(m.strip() for m in metrics.split(",") if m.strip())
    type_list = tuple(t.strip() for t in aspect_types.split(",") if t.strip())
    people = [a.strip() for a in annotators.split(",") if a.strip()]
    if sampling == "active":
        from medeval.annotation.campaigns import assignment, sampling as smp

        source = click.get_current_context().get_parameter_source("per_interval")
        if source == click.core.ParameterSource.DEFAULT:
            per_interval = 2  # a seed round: a few per interval
        acfg = smp.ActiveConfig(metric_list, type_list, width, per_interval, round_size, target_width, budget,
                                explore, criterion or smp.ACTIVE_DEFAULT_CRITERION, k, seed, estimator, design)
        with connect(db_path) as db:
            cid = assignment.create_active_campaign(db, name, acfg, people, actor=actor)
            n = cp.item_count(db, cid)
        click.echo(f"campaign {cid}: seed round of {n} items, {k} annotators each (estimator {estimator}, design "
                   f"{design}); when it is graded, "
                   f"`medeval campaign next-round --campaign {cid}` draws the next round")
        return
    cfg = cp.BucketConfig(metric_list, type_list, width, per_interval, k, seed)
    with connect(db_path) as db:
        cid = cp.create_bucket_campaign(db, name, cfg, people, actor=actor)
        p = cp.campaign_progress(db, cid, actor=actor)
    n = sum(a["assigned"] for a in p["annotators"]) // k
    click.echo(f"campaign {cid}: {n} items, {k} annotators each")
    for r in p["short_intervals"]:
        click.echo(f"  short interval {r['metric']}/{r['aspect_type']} {r['interval']}: "
                   f"{r['available']} available, {r['sampled']} sampled", err=True)



@campaign_grp.command("create-random")
@db_option
@click.option("--name", required=True)
@click.option("--annotators", required=True, help="comma-separated usernames")
@click.option("--n", type=int, default=150, show_default=True, help="responses drawn at random")
@click.option("--k", type=int, default=3, show_default=True, help="annotators per item")
@click.option("--seed", type=int, default=0, show_default=True, help="sampling and assignment seed (stored)")
@click.option("--version", "version", type=int, default=None,
              help="the threshold-set version the sample validates (default: the active one)")
@click.option("--allow-overlap", is_flag=True, default=False,
              help="keep items of the campaigns whose grades calibrated that set (left out by default; recorded)")
@friendly
def campaign_create_random(db_path, name, annotators, n, k, seed, version, allow_overlap):
    """Draw a random validation sample (the paper's 150 items) and assign each to exactly k annotators.

    Items of the campaigns that calibrated the validated threshold set are left out unless --allow-overlap.
    """
    from medeval.annotation import campaigns as cp
    from medeval.calibration.validation import overlap

    actor = local_actor()
    with connect(db_path) as db:
        cid = cp.create_random_campaign(db, name, n, [a.strip() for a in annotators.split(",") if a.strip()],
                                        k=k, seed=seed, actor=actor, version=version, allow_overlap=allow_overlap)
        ov = overlap(db, cid, version=version)
    click.echo(f"campaign {cid}: {n} items, {k} annotators each")
    click.echo(f"  overlap with calibration: {ov['text']}")



@campaign_grp.command("list")
@db_option
@friendly
def campaign_list(db_path):
    """List campaigns."""
    from medeval.annotation import campaigns as cp

    actor = local_actor()
    with reading(db_path) as db:  # reads only: no sqlite-utils to import when the database is up to date
        for c in cp.list_campaigns(db, actor=actor):
            click.echo(f"{c['id']}\t{c['name']}\t{c['kind']}\t{c['items']} items\t{c['status']}\t{c['created_at']}")



@campaign_grp.command("progress")
@db_option
@click.argument("campaign_id", type=int)
@friendly
def campaign_progress_cmd(db_path, campaign_id):
    """Progress per annotator and per bucket, as JSON."""
    from medeval.annotation import campaigns as cp

    actor = local_actor()
    with connect(db_path) as db:
        click.echo(json.dumps(cp.campaign_progress(db, campaign_id, actor=actor), ensure_ascii=False, indent=2))



@campaign_grp.command("close")
@db_option
@click.argument("campaign_id", type=int)
@friendly
def campaign_close(db_path, campaign_id):
    """Close a campaign: no more grades or changes (audited; `reopen` undoes it)."""
    _campaign_status(db_path, campaign_id, "closed")



def _campaign_status(db_path, campaign_id: int, status: str) -> None:
    from medeval.annotation import campaigns as cp

    actor = local_actor()
    with connect(db_path) as db:
        cp.set_campaign_status(db, campaign_id, status, actor=actor)
    click.echo(f"campaign {campaign_id} {status}")



@campaign_grp.command("reopen")
@db_option
@click.argument("campaign_id", type=int)
@friendly
def campaign_reopen(db_path, campaign_id):
    """Open a closed campaign again (audited)."""
    _campaign_status(db_path, campaign_id, "open")



@campaign_grp.command("machine-agreement")
@db_option
@click.argument("campaign_id", type=int)
@click.option("--version", "version", type=int, default=None,
              help="threshold-set version (default: the one a validation campaign validates, else the active one)")
@friendly
def campaign_machine_agreement(db_path, campaign_id, version):
    """Spearman of the clinicians' consensus tier vs each metric's score and tier (JSON rows, each with its n).

    BLEU-1, ROUGE-1 and cosine rows cover enumerated and declarative items; numeric items have an exact_match row;
    average is the mean of the three metric tiers. The overlap with the calibration campaigns goes to stderr.
    """
    from medeval.calibration.validation import machine_agreement, overlap

    actor = local_actor()
    with connect(db_path) as db:
        rows = machine_agreement(db, campaign_id, version=version, actor=actor)
        ov = overlap(db, campaign_id, version=version)
    click.echo(json.dumps(rows, indent=2))
    click.echo(f"overlap with calibration: {ov['text']}", err=True)


@campaign_grp.command("next-round")
@db_option
@click.option("--campaign", "campaign_id", type=int, required=True, help="an active calibration campaign")
@friendly
def campaign_next_round(db_path, campaign_id):
    """Draw an active campaign's next round where the cut-offs are uncertain (the last round must be answered)."""
    from medeval.calibration import rounds

    actor = local_actor()
    with connect(db_path) as db:
        out = rounds.next_round(db, campaign_id, actor=actor)
    click.echo(f"campaign {campaign_id}: round {out['round']} adds {out['items']} items (estimator "
               f"{out['estimator']}, design {out['design']})")
    for s in out["strata"]:
        click.echo(f"  {s['metric']}/{s['aspect_type']}: {s['items_added']} items")
    for s in out["stopped"]:
        click.echo(f"  {s['metric']}/{s['aspect_type']}: stopped ({rounds.STOP_TEXT[s['stop']]})")


def _fmt(v, spec=".3f") -> str:
    return "-" if v is None else format(v, spec)


@campaign_grp.command("rounds")
@db_option
@click.option("--campaign", "campaign_id", type=int, required=True, help="an active calibration campaign")
@friendly
def campaign_rounds(db_path, campaign_id):
    """An active campaign's rounds: per stratum the cut-offs and 95% intervals when each round was drawn, and now."""
    from medeval.calibration import rounds

    actor = local_actor()
    with connect(db_path) as db:
        history = rounds.round_history(db, campaign_id, actor=actor)
        st = rounds.round_status(db, campaign_id, actor=actor)
    click.echo("round\tstratum\tgraded\tlow\tlow 95% CI\thigh\thigh 95% CI\twidths\tadded\tstop")
    for r in history:
        click.echo(f"{r['round']}\t{r['metric']}/{r['aspect_type']}\t{r['n_graded']}\t{_fmt(r['low'])}\t"
                   f"{_fmt(r['low_ci_lo'])}-{_fmt(r['low_ci_hi'])}\t{_fmt(r['high'])}\t"
                   f"{_fmt(r['high_ci_lo'])}-{_fmt(r['high_ci_hi'])}\t{_fmt(r['low_width'])}/{_fmt(r['high_width'])}"
                   f"\t{r['items_added']}\t{r['stop'] or '-'}")
    state = "answered" if st["last_round_complete"] else f"{st['missing']} answers missing"
    click.echo(f"now (round {st['round']}, {state}; target width {st['target_width']}, estimator {st['estimator']}"
               f"{', criterion ' + st['criterion'] if st['estimator'] == 'accuracy' else ''}, design {st['design']}):")
    for s in st["strata"]:
        cut, lo, hi, w = s["cut_offs"] or [None, None], s["low_ci95"] or [None, None], s["high_ci95"] or [None, None], \
            s["widths"] or [None, None]
        click.echo(f"now\t{s['metric']}/{s['aspect_type']}\t{s['n_graded']}\t{_fmt(cut[0])}\t{_fmt(lo[0])}-"
                   f"{_fmt(lo[1])}\t{_fmt(cut[1])}\t{_fmt(hi[0])}-{_fmt(hi[1])}\t{_fmt(w[0])}/{_fmt(w[1])}\t"
                   f"{s['items']}\t{s['stop'] or '-'}")


COMMANDS = (campaign_grp,)
