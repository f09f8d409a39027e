"""Command-line scoring of the task types that need no database: fact-check verification (SDAK) and exam
accuracy (CMB-Exam). Commands: ``factcheck`` and ``exam-score`` to the ``medeval`` group."""

from __future__ import annotations

from pathlib import Path

import click

from medeval.cli.base import friendly

FORMATS = click.Choice(["json", "csv", "md"])


@click.command("factcheck")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
@click.option("--details", type=click.Path(dir_okay=False), default=None,
              help="also write one CSV row per claim (parsed verdict, status, item error) to this file")
@click.option("--hedged", type=click.Choice(["not_followed", "lead"]), default="not_followed", show_default=True,
              help="how a hedged answer (部分正确, 正确，但不完全) counts: not_followed, or lead (a hedge starting with "
                   "a verdict word counts as that verdict); hedged answers are counted in the output either way")
@friendly
def factcheck_cmd(file, fmt, details, hedged):
    """Score fact-check answers (SDAK): Instruction Following Rate, Factual Accuracy, error types.

    FILE is JSONL, one claim per line: id (shared by the two claims of an item), type (atomic type),
    label (support = factual claim, refute = counterfactual claim), claim, response [model].
    JSON output: ifr, fact_acc, fact_acc_followed, counts, errors (NotFollow, Sycophancy, Safety,
    Misinterpretation), n_hedged_items, claims.statuses (verdict, hedged, contradictory, no_verdict,
    empty), definitions (how hedged and two-verdict answers count) and the same per type; with several
    models, {"models": {name: ...}}.
    """
    from medeval.stats.factcheck import details_csv, render, score_file

    results = score_file(file, hedged)
    if details:
        Path(details).write_text(details_csv(results), encoding="utf-8")
        click.echo(f"wrote {details}", err=True)
    click.echo(render(results, fmt), nl=False)


@click.command("exam-score")
@click.argument("answers", type=click.Path(dir_okay=False))
@click.argument("key", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=FORMATS, default="json", show_default=True)
@click.option("--details", type=click.Path(dir_okay=False), default=None,
              help="also write one CSV row per question (extracted letters, how, CMB's reading) to this file")
@friendly
def exam_score_cmd(answers, key, fmt, details):
    """Exam accuracy (CMB-Exam): extract the chosen options from each response and score exact matches.

    ANSWERS is JSONL: id, response [model]. KEY is the CMB-Exam question list (JSON): id, answer
    (e.g. "BD"), option {letter: text} (optional; enables matching option text), exam_type/category,
    exam_class/subcategory, exam_subject/subject, question_type (all optional). Accuracy overall, per
    category and subcategory; the same answers read by CMB's own regular expression for comparison.
    """
    from medeval.stats.exam import details_csv, render, score_files

    results = score_files(answers, key)
    if details:
        Path(details).write_text(details_csv(results), encoding="utf-8")
        click.echo(f"wrote {details}", err=True)
    click.echo(render(results, fmt), nl=False)


COMMANDS = (factcheck_cmd, exam_score_cmd,)
