"""``python -m medeval judge-agreement FILE``: judge vs clinicians (AutoMedEval §4.3, CMB-Clin §5.3)."""

from __future__ import annotations

import click

from medeval.cli.base import friendly


@click.command("judge-agreement")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="json", show_default=True)
@friendly
def judge_agreement_cmd(file, fmt):
    """Judge vs clinicians: Spearman/Pearson, Accuracy 2-tuple/triple, win rates, model rankings, and
    Pearson/Spearman per criterion.

    FILE (CSV, TSV, JSONL or JSON) has the columns case, model, judge_score,
    human_score and optionally rater (then one row per rater and response; the
    clinicians' score of a response is the mean over its raters, and the
    judge_score must repeat on each of its rows). Per-criterion scores (CMB-Clin:
    fluency, relevance, completeness, proficiency) go in optional columns
    judge_<criterion> and human_<criterion> (e.g. judge_fluency, human_fluency);
    each criterion gets Pearson and Spearman with 95% CIs and n, or "no
    clinicians' ratings" when only the judge scores it. Cases with a single response are left
    out and reported on standard error.
    """
    from medeval.stats.judge import read_judge_file, render, summarise

    s = summarise(read_judge_file(file))
    for w in s["warnings"]:
        click.echo(f"warning: {w}", err=True)
    click.echo(render(s, fmt), nl=False)


COMMANDS = (judge_agreement_cmd,)
