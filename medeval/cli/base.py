"""What every command module shares: the ``--db`` option, clean errors, output to a file or stdout, passwords."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from medeval.core import settings
from medeval.core.errors import MedevalError

_CLICK_TYPES = {"int": click.INT, "float": click.FLOAT}


def setting_option(name: str, *param_decls: str, raw: bool = False, **attrs):
    """A ``click.option`` built from the setting's declaration (``medeval.core.settings``): its option name, its
    environment variable (option > environment > default), its default, its type and its help, which ends
    ``[env var: VARIABLE; default: D]``. ``param_decls`` adds a parameter name (``"t2s"``); ``raw=True`` hands
    the command the text as given, for a setting the library checks with a message of its own (``--workers``,
    whose range depends on the CPU count); choices are always passed as text, for the library's own message."""
    s = settings.setting(name)
    if not s.option:
        raise ValueError(f"setting {name} has no CLI option")
    flag = s.type == "bool"
    default = s.parse(s.default) if flag else s.default
    kwargs = dict(envvar=name, default=default, show_envvar=True, help=settings.plain(s.help),
                  show_default=s.shown_default or True)
    if not flag and not raw and s.type in _CLICK_TYPES:
        kwargs["type"] = _CLICK_TYPES[s.type]
    kwargs.update(attrs)
    return click.option(s.option, *param_decls, **kwargs)


def db_option(f):
    return setting_option("MEDEVAL_DB", "db_path")(f)


REPORT_LANGUAGES = ("en", "zh-CN")  # medeval.core.i18n.LANGUAGES (spelled out: --help needs no Babel import)


def _report_language(ctx, param, value):
    for choice in REPORT_LANGUAGES:
        if value.lower() == choice.lower():
            return choice
    raise click.BadParameter(f"{value!r} is not one of {', '.join(REPORT_LANGUAGES)}")


def language_option(f):
    """``--language en|zh-CN``: the language of a report's words (headings, notes, methods, CSV headers); English
    by default, as papers are written."""
    return click.option("--language", "language", default="en", show_default=True, metavar="[en|zh-CN]",
                        callback=_report_language,
                        help="the report's language: headings, notes, the methods paragraph, CSV headers")(f)


def emit(text: str, out: str | None) -> None:
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
            click.echo("Interrupted. An import keeps nothing (run it again); score and grade keep the chunks they "
                       "finished (run the command again to continue).", err=True)
            sys.exit(130)
    return wrapper


def read_password(confirm: bool = True) -> str:
    """The new password from standard input: a hidden prompt on a terminal, else the first line."""
    if sys.stdin.isatty():
        return click.prompt("Password", hide_input=True, confirmation_prompt=confirm)
    line = sys.stdin.readline()
    if not line:
        raise MedevalError("no password on standard input (pipe it in, e.g. `printf '%s\\n' \"$PW\" | ...`)")
    return line.rstrip("\r\n")


def warn_ungraded(db, version):
    from medeval.engine import thresholds as th

    ts = th.load(db, version)
    cov = th.coverage(db, version)
    c = cov.get("cosine")
    if c and c["scored"] and c["graded"] < c["scored"]:
        click.echo(f"note: {c['scored'] - c['graded']} cosine scores are not graded: threshold set v{version} is for "
                   f"{ts.embedding_model}. Import cut-offs calibrated for your embedding model, or "
                   f"`medeval thresholds adopt {version} --embedding-model ID` to use them provisionally.", err=True)
    from medeval.engine.registry import BUILTINS

    for metric, c in sorted(cov.items()):  # a plugin metric the set cannot grade yet (docs/metrics.md)
        if metric not in BUILTINS and c["scored"] and c["graded"] < c["scored"]:
            why = (f"is for its scorer {ts.scorer_for(metric)}" if any(m == metric for m, _ in ts.cutoffs)
                   else f"has no {metric} cut-offs")
            click.echo(f"note: {c['scored'] - c['graded']} {metric} scores are not graded: threshold set v{version} "
                       f"{why}. Calibrate them from clinicians' tiers (`medeval calibrate ... --publish NAME`).",
                       err=True)
