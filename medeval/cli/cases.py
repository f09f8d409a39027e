"""Command line for clinical cases, responses, judges' assessments and fact-check claims (``medeval.annotation.cases``).

Commands: ``import-cases``, ``import-factcheck`` and ``datasets`` to the ``medeval`` group.
"""

from __future__ import annotations

import json

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, friendly
from medeval.store.db import connect

_COUNT_KEYS = ("cases", "questions", "responses", "models", "judges", "judgements", "fact_items", "fact_claims")


def _summary_lines(s: dict) -> list[str]:
    out = [f"dataset {s['dataset']}"]
    for what in ("cases", "questions", "responses", "judgements", "items", "claims"):
        if f"{what}_added" in s:
            out.append(f"{what}: {s[what + '_added']} added, {s[what + '_present']} already present")
    if not any(v for k, v in s.items() if k.endswith("_added")):
        out.append("nothing changed (everything was already imported)")
    return out


def datasets_markdown(rows: list[dict]) -> str:
    """The :func:`medeval.annotation.cases.datasets` rows as a Markdown table."""
    if not rows:
        return "No datasets yet: import some with `medeval import-cases` or `medeval import-factcheck`.\n"
    lines = ["| dataset | " + " | ".join(k.replace("_", " ") for k in _COUNT_KEYS) + " |",
             "|---|" + "---:|" * len(_COUNT_KEYS)]
    for r in rows:
        lines.append(f"| {r['dataset']} | " + " | ".join(str(r[k]) for k in _COUNT_KEYS) + " |")
    return "\n".join(lines) + "\n"


@click.command("import-cases")
@db_option
@click.option("--dataset", required=True, help="name of the dataset to add to (e.g. cmb-clin)")
@click.option("--cases", type=click.Path(dir_okay=False),
              help="cases: CMB-Clin JSON (id, title, description, QA_pairs [{question, answer|solution}]) or a "
                   "table case, question, reference [title, description, position]")
@click.option("--responses", type=click.Path(dir_okay=False),
              help="responses: case, question (1-based number in the case), model, response")
@click.option("--judgements", type=click.Path(dir_okay=False),
              help="judges' assessments: case, question, judge, rationale and scores ({model: score}, or "
                   "{model: {criterion: score}} per criterion) and/or models (the order the judge saw the responses "
                   "in; scores then read from the rationale); per-criterion scores may also be columns "
                   "score_<criterion> ({model: score})")
@friendly
def import_cases_cmd(db_path, dataset, cases, responses, judgements):
    """Import clinical cases, model responses and judges' assessments into a dataset; all or nothing."""
    from medeval.annotation.cases import import_cases

    actor = local_actor()
    with connect(db_path) as db:
        s = import_cases(db, dataset, cases=cases, responses=responses, judgements=judgements, actor=actor)
    click.echo("\n".join(_summary_lines(s)))


@click.command("import-factcheck")
@db_option
@click.option("--dataset", required=True, help="name of the dataset to add to")
@click.argument("file", type=click.Path(dir_okay=False))
@friendly
def import_factcheck_cmd(db_path, dataset, file):
    """Import fact-check claims and model responses (id, type, label, claim, response [model]); all or nothing.

    A file without a model column is stored under the model name "default".
    """
    from medeval.annotation.cases import import_fact_claims

    actor = local_actor()
    with connect(db_path) as db:
        s = import_fact_claims(db, dataset, file, actor=actor)
    click.echo("\n".join(_summary_lines(s)))
    click.echo(f"models: {', '.join(s['models'])}")


@click.command("datasets")
@db_option
@click.option("--format", "fmt", type=click.Choice(["json", "md"]), default="json", show_default=True)
@friendly
def datasets_cmd(db_path, fmt):
    """List the datasets of cases and fact-check claims with their counts."""
    from medeval.annotation.cases import datasets

    with connect(db_path) as db:
        rows = datasets(db)
    if fmt == "json":
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        click.echo(datasets_markdown(rows), nl=False)


COMMANDS = (import_cases_cmd, import_factcheck_cmd, datasets_cmd,)
