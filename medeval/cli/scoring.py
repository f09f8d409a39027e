"""Scoring data: ``init``, ``import``, ``score``, ``grade``, ``report`` and ``export``."""

from __future__ import annotations

import sys

import click

from medeval.cli.base import db_option, emit, friendly, language_option, setting_option, warn_ungraded
from medeval.store.db import connect
from medeval.store.migrate import applied_count


@click.command("init")
@db_option
@friendly
def init_cmd(db_path):
    """Create the database (or bring its schema up to date)."""
    with connect(db_path) as db:
        n = applied_count(db)
    click.echo(f"{db_path}: schema up to date ({n} migrations)")



@click.command("import")
@db_option
@click.option("--kb", type=click.Path(dir_okay=False), help="knowledge base: disease, aspect, reference [aspect_type, disease_en]")
@click.option("--responses", type=click.Path(dir_okay=False), help="model responses: model, disease, aspect, response")
@click.option("--models", type=click.Path(dir_okay=False), help="models: model, backbone, kind (general|medical)")
@friendly
def import_cmd(db_path, kb, responses, models):
    """Import a knowledge base, models and responses (CSV, JSONL or JSON); all or nothing."""
    from medeval.engine.importer import import_files

    with connect(db_path) as db:
        s = import_files(db, kb=kb, responses=responses, models=models)
    for line in s.lines():
        click.echo(line)
    if not s.changed:
        click.echo("nothing changed (everything was already imported)")



@click.command("score")
@db_option
@click.option("--metrics", default="bleu1,rouge1,cosine,exact_match", show_default=True,
              help="comma-separated metrics to compute: the built-ins, or a plugin metric's name (MEDEVAL_PLUGINS, "
                   "docs/metrics.md)")
@setting_option("MEDEVAL_EMBEDDING_MODEL")
@setting_option("MEDEVAL_BATCH_SIZE")
@setting_option("MEDEVAL_EMBEDDING_DEVICE")
@setting_option("MEDEVAL_EMBEDDING_WORKERS", raw=True)  # embeddings.resolve_workers checks it (range per CPU count)
@setting_option("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", "t2s")
@click.option("--no-progress", is_flag=True, help="no progress bar")
@click.option("--grade/--no-grade", default=True, show_default=True, help="grade new scores under the active threshold set")
@friendly
def score_cmd(db_path, metrics, embedding_model, batch_size, device, workers, t2s, no_progress, grade):
    """Score every response not yet scored, in chunks (resumable after an interrupt)."""
    from tqdm import tqdm

    from medeval.engine import thresholds as th
    from medeval.engine.embeddings import resolve_device, resolve_workers
    from medeval.engine.scoring import score_db

    workers = resolve_workers(workers)  # a bad value is refused before the database is opened
    if batch_size is not None:  # the project's one-line error, not click's usage error (issue 23 §7)
        from medeval.core.limits import check_number

        check_number(batch_size, what="--batch-size", low=1, integer=True)
    device = resolve_device(device, check="cosine" in metrics)
    bar = tqdm(total=0, unit="resp", disable=no_progress, file=sys.stderr, dynamic_ncols=True)

    def total(n):
        bar.total = n
        bar.refresh()

    with connect(db_path) as db:
        s = score_db(db, metrics=[m for m in metrics.split(",") if m.strip()], embedding_model=embedding_model,
                     batch_size=batch_size, progress=bar.update, total_callback=total, device=device, workers=workers,
                     t2s=t2s)
        bar.close()
        click.echo(f"{s.responses_seen} responses checked, {s.scores_added} scores added"
                   + (f"; embeddings: {s.embeddings_computed} computed, {s.embeddings_cached} from cache "
                      f"({s.embedding_model})" if s.embedding_model else ""))
        if grade:
            v, n = th.grade_db(db)
            click.echo(f"{n} grades added under threshold set v{v}")
            warn_ungraded(db, v)




@click.command("grade")
@db_option
@click.option("--version", "version", type=int, default=None, help="threshold-set version (default: the active one)")
@friendly
def grade_cmd(db_path, version):
    """Grade all scores into tiers under a threshold set (default: the active one)."""
    from medeval.engine import thresholds as th

    with connect(db_path) as db:
        v, n = th.grade_db(db, version)
        click.echo(f"{n} grades added under threshold set v{v}")
        warn_ungraded(db, v)



@click.command("report")
@db_option
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="md", show_default=True)
@click.option("--version", "version", type=int, default=None, help="threshold-set version (default: the active one)")
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@language_option
@friendly
def report_cmd(db_path, fmt, version, out, language):
    """Per model: tier shares, total score and level; per aspect; Welch's t-test vs backbone. --language: the
    Markdown's words and the notes (JSON and CSV keep their English field names)."""
    from medeval.core.i18n import language as in_language
    from medeval.reports.tier_report import build_report, render

    with connect(db_path) as db, in_language(language):
        text = render(build_report(db, version), fmt)
    emit(text, out)



@click.command("export")
@db_option
@click.option("--what", type=click.Choice(["scores"]), default="scores", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["csv"]), default="csv", show_default=True)
@click.option("--version", "version", type=int, default=None, help="threshold-set version for tiers (default: active)")
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@friendly
def export_cmd(db_path, what, fmt, version, out):
    """Export one row per response and metric: score, tier and threshold version."""
    from medeval.reports.tier_report import export_scores

    with connect(db_path) as db:
        if out:
            with open(out, "w", encoding="utf-8", newline="") as f:
                n = export_scores(db, f, version)
            click.echo(f"wrote {n} rows to {out}", err=True)
        else:
            export_scores(db, sys.stdout, version)


COMMANDS = (init_cmd, import_cmd, score_cmd, grade_cmd, report_cmd, export_cmd,)
