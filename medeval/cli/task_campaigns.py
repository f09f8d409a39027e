"""``medeval task ...``: campaigns of the annotation task types in :mod:`medeval.annotation.tasks` (rubric rating with the
judge's assessment, double-blind preference, fact-check reasons)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from medeval.accounts.policy import local_actor
from medeval.annotation import tasks
from medeval.cli.base import db_option, friendly, language_option
from medeval.core.errors import InputError, MedevalError
from medeval.core.limits import check_json_text, load_json_limited
from medeval.store.db import connect


def _value(raw: str):
    """A --set value written as JSON (a number), else the text as given; the library checks it."""
    try:
        return load_json_limited(raw, "the --set value")
    except InputError:
        return raw


def _render_md(r: dict) -> str:
    out = [f"# {r['campaign']['name']} ({r['task']})", "",
           f"{r['progress']['items_complete']} of {r['progress']['items']} items done by all "
           f"{r['progress']['k']} annotators.", ""]
    for sec in r["sections"]:
        out += [f"## {sec['title']}", ""]
        if sec["text"]:
            out += [sec["text"], ""]
        for name, rows in sec["tables"].items():
            if not rows:
                continue
            cols = list(dict.fromkeys(k for row in rows for k in row))
            out += [f"**{name}**", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
            for row in rows:
                out.append("| " + " | ".join(_cell(row.get(c)) for c in cols) + " |")
            out.append("")
    return "\n".join(out)


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v).replace("|", "\\|").replace("\n", " ")


@click.group("task")
def task_grp():
    """Rating, preference and fact-check verification campaigns (task types: rubric, preference, accr)."""


@task_grp.command("types")
@db_option
@friendly
def types_cmd(db_path):
    """The task types and their settings (the choices come from the data in the database)."""
    with connect(db_path) as db:
        for t in tasks.REGISTRY.values():
            click.echo(f"{t.name}\t{t.title}\n  {t.description}")
            for s in t.settings(db):
                choices = f" ({', '.join(map(str, s.choices))})" if s.choices else ""
                click.echo(f"  --set {s.name}=...  {s.label}{choices}; default {s.default!r}")


@task_grp.command("create")
@db_option
@click.option("--type", "task", required=True, help="rubric, preference or accr (see `medeval task types`)")
@click.option("--name", required=True)
@click.option("--annotators", required=True, help="comma-separated usernames")
@click.option("--k", type=int, default=2, show_default=True, help="annotators per item")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="a setting of the task type, e.g. --set dataset=cmb --set judge=gpt-4 (repeatable)")
@click.option("--criteria", type=click.Path(exists=True, dir_okay=False),
              help="rubric only: a JSON list of criteria {key, name, question, anchors: [five texts]}")
@friendly
def create_cmd(db_path, task, name, annotators, k, seed, sets, criteria):
    """Create a task campaign: build its items, assign each to exactly k annotators (seeded)."""
    actor = local_actor()
    config = {}
    for s in sets:
        if "=" not in s:
            raise MedevalError(f"--set {s!r}: write NAME=VALUE")
        key, raw = s.split("=", 1)
        config[key.strip()] = _value(raw.strip()) if key.strip() in ("max_items", "per_model") else raw.strip()
    if criteria:
        try:
            text = Path(criteria).read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise MedevalError(f"{criteria}: not a UTF-8 JSON list of criteria ({e})") from None
        check_json_text(text, "the criteria file", file=criteria)
        try:
            config["criteria"] = json.loads(text)
        except json.JSONDecodeError as e:
            raise MedevalError(f"{criteria}: not a UTF-8 JSON list of criteria ({e})") from None
    with connect(db_path) as db:
        cid = tasks.create_campaign(db, task, name, annotators.split(","), k=k, seed=seed, config=config,
                                    actor=actor)
        n = tasks.item_count(db, cid)
    click.echo(f"campaign {cid}: {n} items, {k} annotators each")


@task_grp.command("list")
@db_option
@friendly
def list_cmd(db_path):
    """List task campaigns."""
    actor = local_actor()
    with connect(db_path) as db:
        for c in tasks.task_campaigns(db, actor=actor):
            click.echo(f"{c['id']}\t{c['name']}\t{c['kind']}\t{c['items']} items\t{c['status']}")


@task_grp.command("results")
@db_option
@click.argument("campaign_id", type=int)
@click.option("--format", "fmt", type=click.Choice(["json", "md", "answers-csv"]), default="json",
              show_default=True)
@friendly
def results_cmd(db_path, campaign_id, fmt):
    """A task campaign's results (JSON or Markdown), or every current answer as CSV."""
    actor = local_actor()
    with connect(db_path) as db:
        if fmt == "answers-csv":
            tasks.campaign(db, campaign_id)
            click.echo(tasks.answers_csv(tasks.answers(db, campaign_id, actor=actor)), nl=False)
            return
        r = tasks.results(db, campaign_id, actor=actor)
    click.echo(json.dumps(r, ensure_ascii=False, indent=2, default=str) if fmt == "json" else _render_md(r))


@task_grp.command("report")
@db_option
@click.option("--campaign", "campaign_id", type=int, required=True, help="task campaign id (see `task list`)")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="folder to write into")
@click.option("--pdf/--no-pdf", default=True, show_default=True, help="also print report.pdf with headless Chromium")
@language_option
@friendly
def report_cmd(db_path, campaign_id, out_dir, pdf, language):
    """A task campaign's report: report.html (offline, with a methods paragraph), report.pdf, results.json, CSVs."""
    from medeval.core import i18n
    from medeval.reports.task_report import build, write_report

    actor = local_actor()
    with i18n.language(language):  # the sections' titles and texts are words of the report too
        with connect(db_path) as db:
            r = build(db, campaign_id, actor=actor)  # the results with their gold part
        paths = write_report(r, out_dir, pdf=pdf)
    for name, path in paths.items():
        click.echo(f"{name}\t{path}")


COMMANDS = (task_grp,)
