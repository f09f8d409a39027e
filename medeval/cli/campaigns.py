"""Tier-grading campaigns: ``campaign create|create-random|list|progress|close|reopen|machine-agreement``."""

from __future__ import annotations

import json

import click

from medeval.cli.base import db_option, friendly
from medeval.store.db import connect


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
@click.option("--per-interval", type=click.IntRange(1), default=10, show_default=True, help="items sampled per interval")
@click.option("--k", type=click.IntRange(1), default=3, show_default=True, help="annotators per item")
@click.option("--seed", type=int, default=0, show_default=True, help="sampling and assignment seed (stored)")
@friendly
def campaign_create(db_path, name, annotators, metrics, aspect_types, width, per_interval, k, seed):
    """Sample items per score interval and assign each to exactly k annotators."""
    from medeval.annotation import campaigns as cp

    cfg = cp.BucketConfig(tuple(m.strip() for m in metrics.split(",") if m.strip()),
                          tuple(t.strip() for t in aspect_types.split(",") if t.strip()), width, per_interval, k, seed)
    with connect(db_path) as db:
        cid = cp.create_bucket_campaign(db, name, cfg, [a.strip() for a in annotators.split(",") if a.strip()],
                                        actor=None)
        p = cp.campaign_progress(db, cid, actor=None)
    n = sum(a["assigned"] for a in p["annotators"]) // k
    click.echo(f"campaign {cid}: {n} items, {k} annotators each")
    for r in p["short_intervals"]:
        click.echo(f"  short interval {r['metric']}/{r['aspect_type']} {r['interval']}: "
                   f"{r['available']} available, {r['sampled']} sampled", err=True)



@campaign_grp.command("create-random")
@db_option
@click.option("--name", required=True)
@click.option("--annotators", required=True, help="comma-separated usernames")
@click.option("--n", type=click.IntRange(1), default=150, show_default=True, help="responses drawn at random")
@click.option("--k", type=click.IntRange(1), default=3, show_default=True, help="annotators per item")
@click.option("--seed", type=int, default=0, show_default=True, help="sampling and assignment seed (stored)")
@friendly
def campaign_create_random(db_path, name, annotators, n, k, seed):
    """Draw a random validation sample (the paper's 150 items) and assign each to exactly k annotators."""
    from medeval.annotation import campaigns as cp

    with connect(db_path) as db:
        cid = cp.create_random_campaign(db, name, n, [a.strip() for a in annotators.split(",") if a.strip()],
                                        k=k, seed=seed, actor=None)
    click.echo(f"campaign {cid}: {n} items, {k} annotators each")



@campaign_grp.command("list")
@db_option
@friendly
def campaign_list(db_path):
    """List campaigns."""
    from medeval.annotation import campaigns as cp

    with connect(db_path) as db:
        for c in cp.list_campaigns(db, actor=None):
            click.echo(f"{c['id']}\t{c['name']}\t{c['kind']}\t{c['items']} items\t{c['status']}\t{c['created_at']}")



@campaign_grp.command("progress")
@db_option
@click.argument("campaign_id", type=int)
@friendly
def campaign_progress_cmd(db_path, campaign_id):
    """Progress per annotator and per bucket, as JSON."""
    from medeval.annotation import campaigns as cp

    with connect(db_path) as db:
        click.echo(json.dumps(cp.campaign_progress(db, campaign_id, actor=None), ensure_ascii=False, indent=2))



@campaign_grp.command("close")
@db_option
@click.argument("campaign_id", type=int)
@friendly
def campaign_close(db_path, campaign_id):
    """Close a campaign: no more grades or changes (audited; `reopen` undoes it)."""
    _campaign_status(db_path, campaign_id, "closed")



def _campaign_status(db_path, campaign_id: int, status: str) -> None:
    from medeval.annotation import campaigns as cp

    with connect(db_path) as db:
        cp.set_campaign_status(db, campaign_id, status, actor=None)
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
@click.option("--version", "version", type=int, default=None, help="threshold-set version (default: the active one)")
@friendly
def campaign_machine_agreement(db_path, campaign_id, version):
    """Spearman of the clinicians' consensus tier vs each metric's score and tier (JSON)."""
    from medeval.calibration.validation import machine_agreement

    with connect(db_path) as db:
        click.echo(json.dumps(machine_agreement(db, campaign_id, version=version, actor=None), indent=2))


COMMANDS = (campaign_grp,)
