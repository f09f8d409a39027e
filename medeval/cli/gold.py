"""Gold items of a tier-grading campaign: ``gold add|import|list|retire|settings|results --campaign N``."""

from __future__ import annotations

import json

import click

from medeval.cli.base import db_option, friendly
from medeval.store.db import connect

campaign_option = click.option("--campaign", "campaign_id", type=int, required=True, help="campaign id")


@click.group("gold")
def gold_grp():
    """Gold items (expected tier known): qualification rounds and hidden checks of annotators."""


@gold_grp.command("add")
@db_option
@campaign_option
@click.option("--response", "response_id", type=int, required=True, help="the response id (a scored response)")
@click.option("--tier", required=True, help="the expected tier: 0/1/2 or CW/PC/BC")
@click.option("--reason", required=True, help="the guideline's one-line reason (shown after a failed qualification)")
@friendly
def gold_add(db_path, campaign_id, response_id, tier, reason):
    """Mark one response as a gold item of the campaign."""
    from medeval.annotation import gold_items as gi

    with connect(db_path) as db:
        gid = gi.mark_gold(db, campaign_id, response_id, tier, reason, actor=None)
    click.echo(f"gold item {gid}: response {response_id}, expected {gi.TIER_NAMES[gi.parse_tier(tier)]}")


@gold_grp.command("import")
@db_option
@campaign_option
@click.argument("path", type=click.Path(dir_okay=False))
@friendly
def gold_import(db_path, campaign_id, path):
    """Mark the gold items of a CSV (disease, aspect, model, expected_tier, reason); all or nothing."""
    from medeval.annotation import gold_items as gi

    with connect(db_path) as db:
        n = gi.import_gold_csv(db, campaign_id, path, actor=None)
    click.echo(f"imported {n} gold items into campaign {campaign_id}")


@gold_grp.command("list")
@db_option
@campaign_option
@friendly
def gold_list(db_path, campaign_id):
    """The campaign's gold items (retired ones marked)."""
    from medeval.annotation import gold_items as gi

    with connect(db_path) as db:
        items = gi.list_gold(db, campaign_id, actor=None)
    if not items:
        click.echo(f"campaign {campaign_id} has no gold items; add some with `medeval gold import`")
    for g in items:
        click.echo(f"{g.id}\t{g.disease}\t{g.aspect}\t{g.model}\t{gi.TIER_NAMES[g.expected_tier]}\t{g.reason}"
                   + ("\t(retired)" if g.retired else ""))


@gold_grp.command("retire")
@db_option
@campaign_option
@click.option("--gold", "gold_id", type=int, required=True, help="the gold item's id (see `gold list`)")
@friendly
def gold_retire(db_path, campaign_id, gold_id):
    """Retire a gold item (kept in the history, no longer handed out or counted)."""
    from medeval.annotation import gold_items as gi

    with connect(db_path) as db:
        gi.unmark_gold(db, campaign_id, gold_id, actor=None)
    click.echo(f"gold item {gold_id} retired")


@gold_grp.command("settings")
@db_option
@campaign_option
@click.option("--set", "pairs", multiple=True, metavar="NAME=VALUE",
              help="change a setting (repeatable): qualification_required, qualification_items, pass_mark, retries, "
                   "hidden_share, feedback, alert_threshold")
@friendly
def gold_settings(db_path, campaign_id, pairs):
    """Show the campaign's gold settings, or change some with --set NAME=VALUE."""
    from medeval.annotation import gold_items as gi
    from medeval.core.errors import MedevalError

    values = {}
    for p in pairs:
        name, eq, value = p.partition("=")
        if not eq:
            raise MedevalError(f"--set {p[:40]!r}: write NAME=VALUE, e.g. --set pass_mark=0.75")
        values[name.strip()] = value.strip()
    with connect(db_path) as db:
        s = gi.set_settings(db, campaign_id, values, actor=None) if values else (
            gi.require_gold_campaign(db, campaign_id) and gi.get_settings(db, campaign_id))
    for k, v in s.items():
        click.echo(f"{k} = {v}\t# {gi.SETTINGS_HELP[k]}")


@gold_grp.command("results")
@db_option
@campaign_option
@click.option("--json", "as_json", is_flag=True, help="everything as JSON")
@friendly
def gold_results(db_path, campaign_id, as_json):
    """Per annotator: qualification attempts, hidden-gold accuracy over time and the alert flag."""
    from medeval.annotation.gold_results import gold_accuracy

    with connect(db_path) as db:
        r = gold_accuracy(db, campaign_id, actor=None)
    if as_json:
        click.echo(json.dumps(r, indent=2, ensure_ascii=False))
        return
    click.echo(f"campaign {campaign_id}: {r['gold_items']} gold items, alert below {r['threshold']:.0%}")
    for a in r["annotators"]:
        attempts = ", ".join(f"#{t['attempt']} {t['correct']}/{t['items']}" + (" passed" if t["passed"] else "")
                             for t in a["attempts"]) or "none"
        acc = "-" if a["accuracy"] is None else f"{a['accuracy']:.0%}"
        trend = " ".join(f"{b['accuracy']:.0%}" for b in a["blocks"]) or "-"
        click.echo(f"{a['annotator']}\tqualification: {a['qualification']} ({attempts})\thidden: "
                   f"{a['hidden_correct']}/{a['hidden_answered']} = {acc}\tover time: {trend}"
                   + ("\tFLAGGED" if a["flagged"] else ""))


COMMANDS = (gold_grp,)
