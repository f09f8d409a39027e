"""``demo``: build the demo database (DEMO DATA -- NOT CLINICAL ADVICE)."""

from __future__ import annotations

import sys
import tempfile

import click

from medeval.cli.base import db_option, friendly, setting_option
from medeval.store.db import connect


@click.command("demo")
@db_option
@setting_option("MEDEVAL_EMBEDDING_MODEL")
@setting_option("MEDEVAL_EMBEDDING_DEVICE")
@click.option("--keep-files", type=click.Path(file_okay=False), default=None,
              help="also keep the generated demo files (kb.csv, models.csv, responses.jsonl) in this folder")
@friendly
def demo_cmd(db_path, embedding_model, device, keep_files):
    """Build the demo database: import, score and grade the demo data set (DEMO, not clinical advice)."""
    from tqdm import tqdm

    from medeval.demo.build import DEMO_ACCOUNTS, build_demo
    from medeval.engine.embeddings import resolve_device

    device = resolve_device(device)  # checked before the database is opened
    with connect(db_path) as db, tempfile.TemporaryDirectory() as tmp:
        bar = tqdm(unit="resp", file=sys.stderr, desc="scoring demo")
        s = build_demo(db, keep_files or tmp, embedding_model=embedding_model, device=device, progress=bar.update)
        bar.close()
    for line in s["import"]:
        click.echo(line)
    click.echo(f"{s['scores_added']} scores; Table 12 threshold set v{s['threshold_version']} "
               f"(cosine: {s['embedding_model']}, provisional)")
    if s.get("tasks"):
        click.echo("demo task campaigns (doctor2 and doctor3 have answered; doctor1's work is left to try): "
                   + ", ".join(f"{cid} {name!r}" for name, cid in s["tasks"]["campaigns"].items()))
    if s.get("clinicians"):
        c = s["clinicians"]
        click.echo(f"{len(c['clinicians'])} SIMULATED clinicians ({', '.join(c['clinicians'])}; no sign-in) graded "
                   + ", ".join(f"{cid} {name!r}" for name, cid in c["campaigns"].items())
                   + f"; threshold set v{c['version']} calibrated on their grades"
                   + (" (active)" if c["active"] else ""))
    click.echo(f"demo campaign {s['campaign']}; demo accounts (DEMO ONLY): "
               + ", ".join(f"{u} ({r})" for u, _, r in DEMO_ACCOUNTS) + " -- passwords in the README")


COMMANDS = (demo_cmd,)
