"""Command line: ``python -m medeval COMMAND``. Library errors become clean messages and exit code 1."""

from __future__ import annotations

import functools
import json
import sys
import tempfile
from pathlib import Path

import click

from . import settings
from .db import connect
from .errors import MedevalError

DB_HELP = f"SQLite database file [env MEDEVAL_DB; default {settings.get('MEDEVAL_DB')}]"


def db_option(f):
    return click.option("--db", "db_path", envvar="MEDEVAL_DB", default=lambda: settings.db_path(),
                        show_default="annotations.db", help=DB_HELP)(f)


def _emit(text: str, out: str | None) -> None:
    """Write ``text`` to the file ``out``, or to standard output."""
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}", err=True)
    else:
        click.echo(text, nl=False)


def friendly(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except MedevalError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted; finished chunks are saved. Run the command again to continue.", err=True)
            sys.exit(130)
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 140, "terminal_width": 140})
@click.version_option(package_name=None, version=__import__("medeval").__version__)
def main():
    """medeval: score medical LLM answers against a knowledge base and grade them into tiers."""


@main.command("init")
@db_option
@friendly
def init_cmd(db_path):
    """Create the database (or bring its schema up to date)."""
    with connect(db_path) as db:
        n = db.conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]
    click.echo(f"{db_path}: schema up to date ({n} migrations)")


@main.command("import")
@db_option
@click.option("--kb", type=click.Path(dir_okay=False), help="knowledge base: disease, aspect, reference [aspect_type, disease_en]")
@click.option("--responses", type=click.Path(dir_okay=False), help="model responses: model, disease, aspect, response")
@click.option("--models", type=click.Path(dir_okay=False), help="models: model, backbone, kind (general|medical)")
@friendly
def import_cmd(db_path, kb, responses, models):
    """Import a knowledge base, models and responses (CSV, JSONL or JSON); all or nothing."""
    from .importer import import_files

    with connect(db_path) as db:
        s = import_files(db, kb=kb, responses=responses, models=models)
    for line in s.lines():
        click.echo(line)
    if not s.changed:
        click.echo("nothing changed (everything was already imported)")


@main.command("score")
@db_option
@click.option("--metrics", default="bleu1,rouge1,cosine,exact_match", show_default=True,
              help="comma-separated metrics to compute")
@click.option("--embedding-model", envvar="MEDEVAL_EMBEDDING_MODEL", default=None,
              help="use-multilingual (default), minilm, or a local sentence-transformers directory [env MEDEVAL_EMBEDDING_MODEL]")
@click.option("--batch-size", envvar="MEDEVAL_BATCH_SIZE", type=click.IntRange(1), default=None,
              help="responses per committed chunk [env MEDEVAL_BATCH_SIZE; default 2000]")
@click.option("--no-progress", is_flag=True, help="no progress bar")
@click.option("--grade/--no-grade", default=True, show_default=True, help="grade new scores under the active threshold set")
@friendly
def score_cmd(db_path, metrics, embedding_model, batch_size, no_progress, grade):
    """Score every response not yet scored, in chunks (resumable after an interrupt)."""
    from tqdm import tqdm

    from . import thresholds as th
    from .scoring import score_db

    batch_size = batch_size or int(settings.get("MEDEVAL_BATCH_SIZE"))
    bar = tqdm(total=0, unit="resp", disable=no_progress, file=sys.stderr, dynamic_ncols=True)

    def total(n):
        bar.total = n
        bar.refresh()

    with connect(db_path) as db:
        s = score_db(db, metrics=[m for m in metrics.split(",") if m.strip()], embedding_model=embedding_model,
                     batch_size=batch_size, progress=bar.update, total_callback=total)
        bar.close()
        click.echo(f"{s.responses_seen} responses checked, {s.scores_added} scores added"
                   + (f"; embeddings: {s.embeddings_computed} computed, {s.embeddings_cached} from cache "
                      f"({s.embedding_model})" if s.embedding_model else ""))
        if grade:
            v, n = th.grade_db(db)
            click.echo(f"{n} grades added under threshold set v{v}")
            _warn_ungraded(db, v)


def _warn_ungraded(db, version):
    from . import thresholds as th

    ts = th.load(db, version)
    cov = th.coverage(db, version)
    c = cov.get("cosine")
    if c and c["scored"] and c["graded"] < c["scored"]:
        click.echo(f"note: {c['scored'] - c['graded']} cosine scores are not graded: threshold set v{version} is for "
                   f"{ts.embedding_model}. Import cut-offs calibrated for your embedding model, or "
                   f"`medeval thresholds adopt {version} --embedding-model ID` to use them provisionally.", err=True)


@main.command("grade")
@db_option
@click.option("--version", "version", type=int, default=None, help="threshold-set version (default: the active one)")
@friendly
def grade_cmd(db_path, version):
    """Grade all scores into tiers under a threshold set (default: the active one)."""
    from . import thresholds as th

    with connect(db_path) as db:
        v, n = th.grade_db(db, version)
        click.echo(f"{n} grades added under threshold set v{v}")
        _warn_ungraded(db, v)


@main.group("thresholds")
def thresholds_grp():
    """List, export, import, activate and adopt versioned tier threshold sets."""


@thresholds_grp.command("list")
@db_option
@friendly
def th_list(db_path):
    """List threshold-set versions (* marks the active one)."""
    from . import thresholds as th

    with connect(db_path) as db:
        for ts in th.list_sets(db):
            click.echo(f"{'*' if ts.active else ' '} v{ts.version}  {ts.name}  [cosine: {ts.embedding_model}; "
                       f"tokenizer: {ts.tokenizer}]  {ts.created_at} by {ts.created_by}")


@thresholds_grp.command("export")
@db_option
@click.argument("version", type=int, required=False)
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@friendly
def th_export(db_path, version, out):
    """Export a threshold set as JSON (default: the active one)."""
    from . import thresholds as th

    with connect(db_path) as db:
        ts = th.load(db, version) if version is not None else th.active(db)
    text = ts.to_json() + "\n"
    _emit(text, out)


@thresholds_grp.command("import")
@db_option
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--activate", is_flag=True, help="make it the active set and regrade")
@click.option("--by", "created_by", default=lambda: __import__("getpass").getuser(), help="who imports it (provenance)")
@friendly
def th_import(db_path, file, activate, created_by):
    """Import a threshold set from JSON as a new version."""
    from . import thresholds as th

    ts = th.read_file(file)
    with connect(db_path) as db:
        v = th.store(db, ts, created_by=created_by)
        click.echo(f"imported {file} as v{v}")
        if activate:
            n = th.activate(db, v)
            click.echo(f"v{v} is active; {n} grades added")


@thresholds_grp.command("activate")
@db_option
@click.argument("version", type=int)
@friendly
def th_activate(db_path, version):
    """Make a version active and grade every score under it (atomic)."""
    from . import thresholds as th

    with connect(db_path) as db:
        n = th.activate(db, version)
        click.echo(f"v{version} is active; {n} grades added")
        _warn_ungraded(db, version)


@thresholds_grp.command("adopt")
@db_option
@click.argument("version", type=int)
@click.option("--embedding-model", required=True, help="model id of the cosine scores (see `medeval export`, column scorer)")
@click.option("--activate", is_flag=True, help="make the copy active and regrade")
@click.option("--by", "created_by", default=lambda: __import__("getpass").getuser(), help="who adopts it (provenance)")
@friendly
def th_adopt(db_path, version, embedding_model, activate, created_by):
    """Copy a set for another embedding model, marked provisional (not calibrated for it)."""
    from . import thresholds as th

    with connect(db_path) as db:
        v = th.adopt(db, version, embedding_model, created_by=created_by, activate_it=activate)
        click.echo(f"v{v}: copy of v{version} for {embedding_model} (provisional){'; active' if activate else ''}")


@main.command("report")
@db_option
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="md", show_default=True)
@click.option("--version", "version", type=int, default=None, help="threshold-set version (default: the active one)")
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@friendly
def report_cmd(db_path, fmt, version, out):
    """Per model: tier shares, total score and level; per aspect; Welch's t-test vs backbone."""
    from .report import build_report, render

    with connect(db_path) as db:
        text = render(build_report(db, version), fmt)
    _emit(text, out)


@main.command("export")
@db_option
@click.option("--what", type=click.Choice(["scores"]), default="scores", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["csv"]), default="csv", show_default=True)
@click.option("--version", "version", type=int, default=None, help="threshold-set version for tiers (default: active)")
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@friendly
def export_cmd(db_path, what, fmt, version, out):
    """Export one row per response and metric: score, tier and threshold version."""
    from .report import export_scores

    with connect(db_path) as db:
        if out:
            with open(out, "w", encoding="utf-8", newline="") as f:
                n = export_scores(db, f, version)
            click.echo(f"wrote {n} rows to {out}", err=True)
        else:
            export_scores(db, sys.stdout, version)


@main.command("demo")
@db_option
@click.option("--embedding-model", envvar="MEDEVAL_EMBEDDING_MODEL", default=None, help="embedding model for cosine")
@click.option("--keep-files", type=click.Path(file_okay=False), default=None,
              help="also keep the generated demo files (kb.csv, models.csv, responses.jsonl) in this folder")
@friendly
def demo_cmd(db_path, embedding_model, keep_files):
    """Build the demo database: import, score and grade the demo data set (DEMO, not clinical advice)."""
    from tqdm import tqdm

    from .demo import DEMO_ACCOUNTS, build_demo

    with connect(db_path) as db, tempfile.TemporaryDirectory() as tmp:
        bar = tqdm(unit="resp", file=sys.stderr, desc="scoring demo")
        s = build_demo(db, keep_files or tmp, embedding_model=embedding_model, progress=bar.update)
        bar.close()
    for line in s["import"]:
        click.echo(line)
    click.echo(f"{s['scores_added']} scores; active threshold set v{s['threshold_version']} "
               f"(cosine: {s['embedding_model']}, provisional)")
    if s.get("tasks"):
        click.echo("demo task campaigns (doctor2 and doctor3 have answered; doctor1's work is left to try): "
                   + ", ".join(f"{cid} {name!r}" for name, cid in s["tasks"]["campaigns"].items()))
    click.echo(f"demo campaign {s['campaign']}; demo accounts (DEMO ONLY): "
               + ", ".join(f"{u} ({r})" for u, _, r in DEMO_ACCOUNTS) + " -- passwords in the README")


@main.command("calibrate")
@click.argument("graded", required=False, type=click.Path(dir_okay=False))
@click.option("--campaign", "campaign_id", type=int, default=None,
              help="calibrate from a campaign in the database instead of a GRADED file")
@db_option
@click.option("--criterion", type=click.Choice(["kappa", "accuracy", "spearman"]), default="kappa",
              show_default=True, help="what the cut-offs maximise (kappa: quadratic-weighted Cohen's kappa)")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="json", show_default=True)
@click.option("--n-boot", type=click.IntRange(0), default=200, show_default=True,
              help="bootstrap resamples for the spread of the criterion and the stability of the cut-offs")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the bootstrap")
@click.option("--publish", "publish_name", default=None,
              help="also store the cut-offs as a new threshold-set version with this name, activate it and regrade "
                   "(atomic; strata not calibrated keep the active set's cut-offs)")
@friendly
def calibrate_cmd(graded, campaign_id, db_path, criterion, fmt, n_boot, seed, publish_name):
    """Cut-offs per (metric, aspect type) that best reproduce the clinicians' tiers.

    GRADED has columns metric, aspect_type, score, tier (0/1/2) and optionally item (rows of one
    item, one per annotator, are combined into their median tier).
    """
    from .calibration import calibrate_rows, campaign_rows, read_graded

    if (graded is None) == (campaign_id is None):
        raise click.UsageError("give either a GRADED file or --campaign ID")
    if graded is not None:
        rows = read_graded(graded)
    else:
        with connect(db_path) as db:
            rows = campaign_rows(db, campaign_id)
        if not rows:
            raise MedevalError(f"campaign {campaign_id} has no grades yet")
    calibrations = calibrate_rows(rows, criterion=criterion, n_boot=n_boot, rng=seed)
    results = [c.to_dict() for c in calibrations]
    if publish_name is not None:
        from .calibration import campaign_source, publish

        with connect(db_path) as db:
            source = campaign_source(db, campaign_id) if campaign_id is not None else {"file": str(graded)}
            version = publish(db, calibrations, name=publish_name, source=source)
        click.echo(f"published threshold set v{version} ({publish_name}) and made it active", err=True)
    if fmt == "json":
        click.echo(json.dumps(results, indent=2))
        return
    head = ["metric", "aspect_type", "low", "high", "criterion", "value", "n", "value_ci95", "stable_share",
            "undefined_reason"]
    lines = []
    for r in results:
        b = r["bootstrap"]
        cells = [r["metric"], r["aspect_type"], *(r["cut_offs"] or [None, None]), r["criterion"], r["value"], r["n"],
                 b.get("value_ci95"), b.get("stable_share"), r["undefined_reason"]]
        lines.append(["" if c is None else (f"{c:.4f}" if isinstance(c, float) else
                                             (" to ".join(f"{x:.3f}" for x in c) if isinstance(c, list) else str(c)))
                      for c in cells])
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(head)
        w.writerows(lines)
        click.echo(buf.getvalue(), nl=False)
    else:
        click.echo("| " + " | ".join(head) + " |")
        click.echo("|" + "---|" * len(head))
        for cells in lines:
            click.echo("| " + " | ".join(cells) + " |")


@main.command("report-agreement")
@db_option
@click.option("--campaign", "campaign_id", type=int, required=True, help="campaign id (see `campaign list`)")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="folder to write into")
@click.option("--pdf/--no-pdf", default=True, show_default=True, help="also print report.pdf with headless Chromium")
@click.option("--n-boot", type=click.IntRange(0), default=1000, show_default=True, help="bootstrap resamples for CIs")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the bootstrap")
@friendly
def report_agreement_cmd(db_path, campaign_id, out_dir, pdf, n_boot, seed):
    """Agreement report of a campaign: report.html (offline), report.pdf, summary.json and CSVs."""
    from .agreement_report import write_report
    from .dashboard import campaign_agreement

    with connect(db_path) as db:
        s = campaign_agreement(db, campaign_id, actor=None, n_boot=n_boot, seed=seed)
    for name, path in write_report(s, out_dir, pdf=pdf).items():
        click.echo(f"{name}\t{path}")


@main.command("agreement")
@click.argument("ratings", type=click.Path(dir_okay=False))
@click.option("--level", type=click.Choice(["nominal", "ordinal", "interval", "ratio"]), required=True,
              help="level of measurement of the values")
@click.option("--categories", default=None, help="ordered category set, comma-separated (e.g. 0,1,2)")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="json", show_default=True)
@click.option("--n-boot", type=click.IntRange(0), default=1000, show_default=True, help="bootstrap resamples for CIs")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the bootstrap")
@friendly
def agreement_cmd(ratings, level, categories, fmt, n_boot, seed):
    """Inter-rater agreement of a long-format ratings file (item, rater, value): alpha, ICC, kappas, Spearman."""
    from .agreement import read_long, render_summary, summarise

    cats = [c.strip() for c in categories.split(",")] if categories else None
    s = summarise(read_long(ratings), level, cats, n_boot=n_boot, rng=seed)
    click.echo(render_summary(s, fmt), nl=False)


def _read_password(confirm: bool = True) -> str:
    """The new password from standard input: a hidden prompt on a terminal, else the first line."""
    if sys.stdin.isatty():
        return click.prompt("Password", hide_input=True, confirmation_prompt=confirm)
    line = sys.stdin.readline()
    if not line:
        raise MedevalError("no password on standard input (pipe it in, e.g. `printf '%s\\n' \"$PW\" | ...`)")
    return line.rstrip("\r\n")


@main.group("users")
def users_grp():
    """Manage accounts: add, list, set-role, reset-password, disable, enable (passwords from stdin)."""


@users_grp.command("add")
@db_option
@click.argument("username")
@click.option("--role", type=click.Choice(["annotator", "researcher", "admin"]), required=True)
@friendly
def users_add(db_path, username, role):
    """Add a user; the password is read from standard input, never from an argument."""
    from . import auth

    password = _read_password()
    with connect(db_path) as db:
        u = auth.add_user(db, username, password, role)
    click.echo(f"added {u.username} ({u.role})")


@users_grp.command("list")
@db_option
@friendly
def users_list(db_path):
    """List users with their role and whether they are active."""
    from . import auth

    with connect(db_path) as db:
        for u in auth.list_users(db):
            click.echo(f"{u.username}\t{u.role}\t{'active' if u.active else 'disabled'}")


@users_grp.command("set-role")
@db_option
@click.argument("username")
@click.argument("role", type=click.Choice(["annotator", "researcher", "admin"]))
@friendly
def users_set_role(db_path, username, role):
    """Change a user's role."""
    from . import auth

    with connect(db_path) as db:
        u = auth.set_role(db, username, role)
    click.echo(f"{u.username} is now {u.role}")


@users_grp.command("reset-password")
@db_option
@click.argument("username")
@friendly
def users_reset_password(db_path, username):
    """Set a new password (from standard input) and end the user's sessions."""
    from . import auth

    password = _read_password()
    with connect(db_path) as db:
        auth.reset_password(db, username, password)
    click.echo(f"password of {username} reset; their sessions are ended")


@users_grp.command("disable")
@db_option
@click.argument("username")
@friendly
def users_disable(db_path, username):
    """Disable a user and end their sessions (their annotations stay)."""
    from . import auth

    with connect(db_path) as db:
        auth.disable(db, username)
    click.echo(f"{username} is disabled")


@users_grp.command("enable")
@db_option
@click.argument("username")
@friendly
def users_enable(db_path, username):
    """Let a disabled user sign in again."""
    from . import auth

    with connect(db_path) as db:
        auth.enable(db, username)
    click.echo(f"{username} is enabled")


@main.command("audit")
@db_option
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@friendly
def audit_cmd(db_path, fmt, out):
    """Export the append-only audit log (logins, failed logins, account and data changes)."""
    import csv
    import io

    from . import auth

    with connect(db_path) as db:
        rows = auth.audit_rows(db)
    if fmt == "json":
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    else:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=auth.AUDIT_COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        text = buf.getvalue()
    _emit(text, out)


@main.group("campaign")
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
    from . import campaigns as cp

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
    from . import campaigns as cp

    with connect(db_path) as db:
        cid = cp.create_random_campaign(db, name, n, [a.strip() for a in annotators.split(",") if a.strip()],
                                        k=k, seed=seed, actor=None)
    click.echo(f"campaign {cid}: {n} items, {k} annotators each")


@campaign_grp.command("list")
@db_option
@friendly
def campaign_list(db_path):
    """List campaigns."""
    from . import campaigns as cp

    with connect(db_path) as db:
        for c in cp.list_campaigns(db, actor=None):
            click.echo(f"{c['id']}\t{c['name']}\t{c['kind']}\t{c['items']} items\t{c['status']}\t{c['created_at']}")


@campaign_grp.command("progress")
@db_option
@click.argument("campaign_id", type=int)
@friendly
def campaign_progress_cmd(db_path, campaign_id):
    """Progress per annotator and per bucket, as JSON."""
    from . import campaigns as cp

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
    from . import campaigns as cp

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
    from .validation import machine_agreement

    with connect(db_path) as db:
        click.echo(json.dumps(machine_agreement(db, campaign_id, version=version, actor=None), indent=2))


# commands of the other task types live in their own modules
from .cli_cases import register as _register_cases  # noqa: E402
from .cli_judge import register as _register_judge  # noqa: E402
from .cli_task_campaigns import register as _register_task_campaigns  # noqa: E402
from .cli_tasks import register as _register_tasks  # noqa: E402

_register_cases(main)
_register_judge(main)
_register_tasks(main)
_register_task_campaigns(main)

if __name__ == "__main__":  # pragma: no cover
    main()
