"""Gold items of a campaign: ``gold candidates|add|add-task|import|list|retire|settings|results --campaign N``.

Tier-grading campaigns take responses with an expected tier (``add``); task campaigns (rubric, preference, AccR)
take items of their data with expected answers in the item's canonical layout (``candidates``, ``add-task``).
``import``, ``list``, ``retire``, ``settings`` and ``results`` work on both, by the campaign.
"""

from __future__ import annotations

import json
import unicodedata

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, friendly
from medeval.core.display import percent
from medeval.store.db import connect

campaign_option = click.option("--campaign", "campaign_id", type=int, required=True, help="campaign id")
CANDIDATES_MAX = 1000


def _plain(text, cut: int = 0, *, one_line: bool = True) -> str:
    """Data or user text made safe for a terminal: no control characters; one line (whitespace collapsed) unless
    ``one_line`` is False; cut to ``cut`` characters with "…" when ``cut``."""
    s = "".join(ch if ch == "\n" or unicodedata.category(ch)[0] != "C" else " " for ch in str(text))
    s = " ".join(s.split()) if one_line else "\n".join(" ".join(line.split()) for line in s.splitlines())
    return s if not cut or len(s) <= cut else s[:cut - 1].rstrip() + "…"


def _family(db, campaign_id: int) -> str:
    from medeval.annotation import gold

    return gold.gold_family(db, campaign_id)[0]


@click.group("gold")
def gold_grp():
    """Gold items (expected answer known): qualification rounds and hidden checks of annotators.

    Tier-grading campaigns: `gold add` (a response and its expected tier). Task campaigns (rubric, preference,
    AccR): `gold candidates`, then `gold add-task` (an item and its expected answers). Both: `gold import`,
    `list`, `retire`, `settings`, `results`.
    """


@gold_grp.command("add")
@db_option
@campaign_option
@click.option("--response", "response_id", type=int, required=True, help="the response id (a scored response)")
@click.option("--tier", required=True, help="the expected tier: 0/1/2 or CW/PC/BC")
@click.option("--reason", required=True, help="the guideline's one-line reason (shown after a failed qualification)")
@friendly
def gold_add(db_path, campaign_id, response_id, tier, reason):
    """Mark one response as a gold item of a tier-grading campaign."""
    from medeval.annotation import gold

    actor = local_actor()
    with connect(db_path) as db:
        gid = gold.mark_gold(db, campaign_id, response_id, tier, reason, actor=actor)
    click.echo(f"gold item {gid}: response {response_id}, expected {gold.TIER_NAMES[gold.parse_tier(tier)]}")


def _summary(payload: dict) -> str:
    """One line saying what a task item is about: its question or claim (and for a comparison, A and B)."""
    text = _plain(payload.get("question") or payload.get("claim") or payload.get("title") or "", 60)
    a, b = payload.get("a"), payload.get("b")
    if isinstance(a, dict) and isinstance(b, dict):
        text += f" (A: {_plain(a.get('source', ''), 40)}, B: {_plain(b.get('source', ''), 40)})"
    elif payload.get("model"):
        text += f" (model: {_plain(payload['model'], 40)})"
    return text


def _answers(q) -> str:
    if all(o.label == o.value for o in q.options):
        return ", ".join(o.value for o in q.options)
    return ", ".join(f"{o.value} = {o.label}" for o in q.options)


@gold_grp.command("candidates")
@db_option
@campaign_option
@click.option("--contains", default="", help="only items whose source contains this text (case-insensitive)")
@click.option("--limit", type=int, default=50, show_default=True, help=f"list at most this many (1 to {CANDIDATES_MAX})")
@click.option("--source", default=None, help="show this item in full (what to read) and its questions")
@friendly
def gold_candidates(db_path, campaign_id, contains, limit, source):
    """Task campaigns: the items that can become gold items, and the questions an expected answer names.

    Lists each item's source and what it is about, then the questions of the first one (or of --source) with
    their ids and answers, in the canonical layout: responses in the data's order (r1:..., judge:...); in a
    comparison, left = A = the data's first output, right = B. Write them as `gold add-task --expect ID=ANSWER`
    or as rows of the `gold import` CSV.
    """
    from medeval.annotation import gold
    from medeval.core.errors import MedevalError

    actor = local_actor()
    if not 1 <= limit <= CANDIDATES_MAX:
        raise MedevalError(f"--limit {limit}: list between 1 and {CANDIDATES_MAX} items; --contains TEXT narrows")
    with connect(db_path) as db:
        _c, t = gold.task_type(db, campaign_id)
        if source is None:
            items = gold.candidates(db, campaign_id, contains=contains, limit=limit, actor=actor)
        else:
            items = [s for s in gold.candidates(db, campaign_id, limit=10 ** 9, actor=actor) if s.source == source]
            if not items:
                raise MedevalError(f"{_plain(source, 80)!r} cannot become a gold item of campaign {campaign_id} (a real "
                                   "item, gold already, or not in its data); `medeval gold candidates` lists those that can")
    if not items:
        click.echo(f"campaign {campaign_id} ({t.name}): " + (f"no item whose source contains {_plain(contains)!r} can "
                   "become a gold item" if contains else "every item of its data is a real item or a gold item already"))
        return
    if source is None:
        click.echo(f"campaign {campaign_id} ({t.name}): {len(items)} item(s) that can become gold items"
                   + (" (--limit shows more, --contains narrows)" if len(items) >= limit else ""))
        for s in items:
            click.echo(f"{_plain(s.source)}\t{_summary(s.payload)}")
        click.echo("")
    else:
        for b in gold.gold_blocks(t, items[0].payload):
            click.echo(_plain(b.label) + (f" (part {b.part}: shown once the earlier parts are answered)"
                                          if b.part > 1 else ""))
            click.echo("\n".join("    " + line for line in _plain(b.text, one_line=False).splitlines() or [""]))
        click.echo("")
    click.echo(f"questions of {_plain(items[0].source)} (write --expect ID=ANSWER, or CSV rows "
               "source,question,expected,reason):")
    for q in gold.gold_questions(t, items[0].payload):
        click.echo(f"  {q.id}\t{q.target} · {q.criterion}: {_answers(q)}")


def _expectations(pairs) -> dict:
    from medeval.core.errors import MedevalError

    out = {}
    for p in pairs:
        qid, eq, value = p.partition("=")
        qid, value = qid.strip(), value.strip()
        if not eq or not qid or not value:
            raise MedevalError(f"--expect {_plain(p, 40)!r}: write QUESTION=ANSWER, e.g. --expect knowledge=left; "
                               "`medeval gold candidates --source S` lists the item's questions")
        if qid in out:
            raise MedevalError(f"--expect names question {_plain(qid, 60)!r} twice; give each question once")
        out[qid] = value
    return out


@gold_grp.command("add-task")
@db_option
@campaign_option
@click.option("--source", required=True, help="the item's source (see `gold candidates`)")
@click.option("--expect", "pairs", multiple=True, required=True, metavar="QUESTION=ANSWER",
              help="an expected answer (repeatable): the question id and the answer's value, label or key, e.g. "
                   "r1:knowledge=5 or knowledge=left (left = A, the data's first output)")
@click.option("--reason", required=True, help="the guideline's one-line reason (shown after a failed qualification)")
@friendly
def gold_add_task(db_path, campaign_id, source, pairs, reason):
    """Task campaigns: mark one item of the campaign's data as a gold item with its expected answers."""
    from medeval.annotation import gold

    actor = local_actor()
    expected = _expectations(pairs)
    with connect(db_path) as db:
        gid = gold.mark_task_gold(db, campaign_id, source, expected, reason, actor=actor)
        _c, t = gold.task_type(db, campaign_id)
        g = gold.task_gold_item(db, gid)
    click.echo(f"gold item {gid}: {_plain(g.source)}")
    for line in gold.describe(t, g.payload, g.expected):
        click.echo(f"  expected: {_plain(line)}")


@gold_grp.command("import")
@db_option
@campaign_option
@click.argument("path", type=click.Path(dir_okay=False))
@friendly
def gold_import(db_path, campaign_id, path):
    """Mark the gold items of a CSV; all or nothing.

    Tier-grading campaign: columns disease, aspect, model, expected_tier, reason (one row per item). Task
    campaign: columns source, question, expected, reason (one row per expected answer; an item's reason on at
    least one of its rows; ids as `gold candidates` lists them).
    """
    from medeval.annotation import gold

    actor = local_actor()
    with connect(db_path) as db:
        if _family(db, campaign_id) == "task":
            n = gold.import_task_gold_csv(db, campaign_id, path, actor=actor)
        else:
            n = gold.import_gold_csv(db, campaign_id, path, actor=actor)
    click.echo(f"imported {n} gold items into campaign {campaign_id}")


@gold_grp.command("list")
@db_option
@campaign_option
@friendly
def gold_list(db_path, campaign_id):
    """The campaign's gold items (retired ones marked)."""
    from medeval.annotation import gold

    actor = local_actor()
    with connect(db_path) as db:
        if _family(db, campaign_id) == "task":
            _c, t = gold.task_type(db, campaign_id)
            rows = [(g.id, _plain(g.source), _plain("; ".join(gold.describe(t, g.payload, g.expected))),
                     _plain(g.reason), g.retired) for g in gold.list_task_gold(db, campaign_id, actor=actor)]
            how = "`medeval gold add-task` or `medeval gold import`"
        else:
            rows = [(g.id, g.disease, g.aspect, g.model, gold.TIER_NAMES[g.expected_tier], g.reason, g.retired)
                    for g in gold.list_gold(db, campaign_id, actor=actor)]
            how = "`medeval gold import`"
    if not rows:
        click.echo(f"campaign {campaign_id} has no gold items; add some with {how}")
    for *cells, retired in rows:
        click.echo("\t".join(map(str, cells)) + ("\t(retired)" if retired else ""))


@gold_grp.command("retire")
@db_option
@campaign_option
@click.option("--gold", "gold_id", type=int, required=True, help="the gold item's id (see `gold list`)")
@friendly
def gold_retire(db_path, campaign_id, gold_id):
    """Retire a gold item (kept in the history, no longer handed out or counted)."""
    from medeval.annotation import gold

    actor = local_actor()
    with connect(db_path) as db:
        if _family(db, campaign_id) == "task":
            gold.retire_task_gold(db, campaign_id, gold_id, actor=actor)
        else:
            gold.unmark_gold(db, campaign_id, gold_id, actor=actor)
    click.echo(f"gold item {gold_id} retired")


@gold_grp.command("settings")
@db_option
@campaign_option
@click.option("--set", "pairs", multiple=True, metavar="NAME=VALUE",
              help="change a setting (repeatable): qualification_required, qualification_items, pass_mark, retries, "
                   "hidden_share, feedback, alert_threshold, score_tolerance (task campaigns: how far a 1-5 score "
                   "may be from the expected one, 0 to 4)")
@friendly
def gold_settings(db_path, campaign_id, pairs):
    """Show the campaign's gold settings, or change some with --set NAME=VALUE (tier and task campaigns)."""
    from medeval.annotation import gold
    from medeval.core.errors import MedevalError

    actor = local_actor()
    values = {}
    for p in pairs:
        name, eq, value = p.partition("=")
        if not eq:
            raise MedevalError(f"--set {_plain(p, 40)!r}: write NAME=VALUE, e.g. --set pass_mark=0.75")
        values[name.strip()] = value.strip()
    with connect(db_path) as db:
        s = gold.set_settings(db, campaign_id, values, actor=actor) if values else (
            gold.require_gold_campaign(db, campaign_id, "any") and gold.get_settings(db, campaign_id))
    for k, v in s.items():
        click.echo(f"{k} = {v}\t# {gold.SETTINGS_HELP[k]}")


@gold_grp.command("results")
@db_option
@campaign_option
@click.option("--json", "as_json", is_flag=True, help="everything as JSON")
@friendly
def gold_results(db_path, campaign_id, as_json):
    """Per annotator: qualification attempts, hidden-gold accuracy over time and the alert flag."""
    from medeval.annotation import gold

    actor = local_actor()
    with connect(db_path) as db:
        backend = gold.TASK if _family(db, campaign_id) == "task" else gold.TIER
        r = gold.gold_accuracy(db, campaign_id, actor=actor, backend=backend)
    if as_json:
        click.echo(json.dumps(r, indent=2, ensure_ascii=False))
        return
    click.echo(f"campaign {campaign_id}: {r['gold_items']} gold items, alert below {percent(r['threshold'])}")
    for a in r["annotators"]:
        attempts = ", ".join(f"#{t['attempt']} {t['correct']}/{t['items']}" + (" passed" if t["passed"] else "")
                             for t in a["attempts"]) or "none"
        acc = "-" if a["accuracy"] is None else percent(a["accuracy"])
        trend = " ".join(percent(b["accuracy"]) for b in a["blocks"]) or "-"
        click.echo(f"{a['annotator']}\tqualification: {a['qualification']} ({attempts})\thidden: "
                   f"{a['hidden_correct']}/{a['hidden_answered']} = {acc}\tover time: {trend}"
                   + ("\tFLAGGED" if a["flagged"] else ""))


COMMANDS = (gold_grp,)
