"""Command-line scoring of answer files: fact-check verification (SDAK) and exam accuracy (CMB-Exam), with the
review of ambiguous exam answers. Commands: ``factcheck``, ``exam-score`` and ``exam-review`` (list, settle) to the
``medeval`` group. Only the exam review and ``exam-score --db`` use a database."""

from __future__ import annotations

from pathlib import Path

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, friendly

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
              help="also write one CSV row per question (extracted letters, status, reason, settled letters, CMB's "
                   "reading) to this file")
@click.option("--db", "db_path", default=None, metavar="PATH",
              help="apply the answers settled by hand in this database (medeval exam-review); without it every "
                   "ambiguous answer is unsettled")
@friendly
def exam_score_cmd(answers, key, fmt, details, db_path):
    """Exam accuracy (CMB-Exam): extract the chosen options from each response and score exact matches.

    ANSWERS is JSONL: id, response [model]. KEY is the CMB-Exam question list (JSON): id, answer
    (e.g. "BD"), option {letter: text} (optional; enables matching option text), exam_type/category,
    exam_class/subcategory, exam_subject/subject, question_type (all optional). A response that does not
    determine its choice is counted as ambiguous, never guessed (settle them with `medeval exam-review`).
    Figures, each named: accuracy_settled, accuracy_ambiguous_wrong, accuracy_cmb_regex (CMB's own reading)
    and accuracy_macro (CMB's: mean of subcategory means per category, then of the categories), overall, per
    category and subcategory; the JSON carries their definitions. The ambiguous count goes to stderr.
    """
    from medeval.stats.exam import details_csv, render, score_files

    actor = local_actor()
    if db_path:
        from medeval.annotation import exam_review as er
        from medeval.store.db import connect

        exam = er.load(answers, key)
        with connect(db_path) as db:
            results = er.score(db, exam, actor=actor)
    else:
        results = score_files(answers, key)
    if details:
        Path(details).write_text(details_csv(results), encoding="utf-8")
        click.echo(f"wrote {details}", err=True)
    for r in results:
        d = r.to_dict()
        if d["ambiguous"]:
            click.echo(f"{(r.model + ': ') if r.model else ''}{d['ambiguous']} ambiguous answer(s), {d['unsettled']} "
                       f"unsettled (counted wrong in accuracy_settled); list them with `medeval exam-review list`",
                       err=True)
    click.echo(render(results, fmt), nl=False)


@click.group("exam-review")
def exam_review_grp():
    """Settle ambiguous exam answers by hand: list them, pick the letters (stored with who decided)."""


def _plain(text: str, cut: int = 0) -> str:
    t = " ".join(str(text).split())
    return t if not cut or len(t) <= cut else t[:cut - 1] + "…"


@exam_review_grp.command("list")
@click.argument("answers", type=click.Path(dir_okay=False))
@click.argument("key", type=click.Path(dir_okay=False))
@db_option
@click.option("--json", "as_json", is_flag=True, help="one JSON object per answer instead of the table")
@friendly
def exam_review_list(answers, key, db_path, as_json):
    """The ambiguous answers of ANSWERS against KEY: model, question, why, the candidates, the latest decision."""
    import json

    from medeval.annotation import exam_review as er
    from medeval.store.db import connect

    actor = local_actor()
    exam = er.load(answers, key)
    with connect(db_path) as db:
        items = er.review_list(db, exam, actor=actor)
    if as_json:
        for it in items:
            d = it.decision
            click.echo(json.dumps({"model": it.model, "question": it.question, "response": it.response,
                                   "reason": it.reason, "candidates": it.candidates, "options": it.valid,
                                   "settled": None if d is None else d.letters,
                                   "decided_by": None if d is None else d.decided_by,
                                   "decided_at": None if d is None else d.decided_at}, ensure_ascii=False))
        return
    click.echo(f"exam {exam.exam}: {len(items)} ambiguous answer(s), "
               f"{sum(it.decision is None for it in items)} unsettled")
    for it in items:
        d = it.decision
        state = "unsettled" if d is None else f"settled {d.letters or 'none'} by {d.decided_by} {d.decided_at}"
        click.echo(f"- model {it.model or '-'} question {it.question} [{state}] options {it.valid}; "
                   f"{it.reason}\n    response: {_plain(it.response, 200)}")


@exam_review_grp.command("settle")
@click.argument("answers", type=click.Path(dir_okay=False))
@click.argument("key", type=click.Path(dir_okay=False))
@click.option("--question", "-q", required=True, help="question id")
@click.option("--model", "-m", default="", help="model name ('' when the answers file has no model column)")
@click.option("--letters", "-l", required=True, help="the option letters the response chooses, e.g. B or BD; "
                                                       "'none' when it gives no answer")
@click.option("--note", default="", help="why (kept with the decision)")
@db_option
@friendly
def exam_review_settle(answers, key, question, model, letters, note, db_path):
    """Settle one ambiguous answer: the letters a person reads in it (a later decision supersedes)."""
    from medeval.annotation import exam_review as er
    from medeval.store.db import connect

    actor = local_actor()
    exam = er.load(answers, key)
    with connect(db_path) as db:
        sid = er.settle(db, exam, model, question, letters, note=note, actor=actor)
        d = [x for x in er.decisions(db, exam.exam, actor=actor) if x.id == sid][0]
    click.echo(f"settled question {question} of model {model or '-'}: {d.letters or 'no answer'} (decision {sid}"
               + (f", supersedes {d.supersedes}" if d.supersedes else "") + ")")


COMMANDS = (factcheck_cmd, exam_score_cmd, exam_review_grp)
