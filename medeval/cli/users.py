"""Accounts: ``users add|list|set-role|set-language|reset-password|unlock|disable|enable`` and ``audit``."""

from __future__ import annotations

import json

import click

from medeval.accounts.policy import local_actor
from medeval.cli.base import db_option, emit, friendly, read_password
from medeval.cli.opening import connect, reading
from medeval.core import settings

# the roles a user can have: medeval.accounts.auth.ROLES (spelled out so `--help` needs no argon2 import; a test
# checks that the two agree). adjudicator: a senior clinician who settles disagreements (the Adjudicate page)
ROLE_CHOICES = ("annotator", "researcher", "admin", "adjudicator")
# the interface languages: medeval.core.i18n.LANGUAGES (spelled out for the same reason; the same test checks them)
LANGUAGE_CHOICES = ("zh-CN", "en")


def _language(ctx, param, value):
    """zh-CN or en, any case (click's case-insensitive choice would print and return them lower-cased)."""
    if value is None:
        return None
    for choice in LANGUAGE_CHOICES:
        if value.lower() == choice.lower():
            return choice
    raise click.BadParameter(f"{value!r} is not one of {', '.join(LANGUAGE_CHOICES)}")


def _test_only_hash_warning() -> None:
    if settings.password_hash_profile() == "test-only":
        click.echo("warning: MEDEVAL_PASSWORD_HASH_PROFILE=test-only: the password was hashed with test-only argon2 "
                   "parameters (the web app re-hashes it at its next sign-in); unset it for real accounts", err=True)


@click.group("users")
def users_grp():
    """Manage accounts: add, list, set-role, set-language, reset-password, unlock, disable, enable (passwords from stdin)."""



@users_grp.command("add")
@db_option
@click.argument("username")
@click.option("--role", type=click.Choice(ROLE_CHOICES), required=True)
@click.option("--language", metavar="[zh-CN|en]", default=None, callback=_language,
              help="the web app's language for this person (default: MEDEVAL_LANGUAGE's until they choose)")
@friendly
def users_add(db_path, username, role, language):
    """Add a user; the password is read from standard input, never from an argument."""
    from medeval.accounts import auth

    actor = local_actor()
    password = read_password()
    with connect(db_path) as db:
        u = auth.add_user(db, username, password, role, actor=actor, language=language)
    click.echo(f"added {u.username} ({u.role}" + (f", {u.language})" if u.language else ")"))
    _test_only_hash_warning()



@users_grp.command("list")
@db_option
@friendly
def users_list(db_path):
    """List users with their role, whether they are active, their language ('default': MEDEVAL_LANGUAGE's) and
    'locked' when locked out."""
    from medeval.accounts import auth

    actor = local_actor()
    with reading(db_path) as db:  # reads only: no sqlite-utils to import when the database is up to date
        locked = auth.locked_users(db, actor=actor)
        for u in auth.list_users(db, actor=actor):
            click.echo(f"{u.username}\t{u.role}\t{'active' if u.active else 'disabled'}"
                       f"\t{u.language or 'default'}" + ("\tlocked" if u.username in locked else ""))



@users_grp.command("set-role")
@db_option
@click.argument("username")
@click.argument("role", type=click.Choice(ROLE_CHOICES))
@friendly
def users_set_role(db_path, username, role):
    """Change a user's role."""
    from medeval.accounts import auth

    actor = local_actor()
    with connect(db_path) as db:
        u = auth.set_role(db, username, role, actor=actor)
    click.echo(f"{u.username} is now {u.role}")



@users_grp.command("set-language")
@db_option
@click.argument("username")
@click.argument("language", metavar="zh-CN|en", callback=_language)
@friendly
def users_set_language(db_path, username, language):
    """Set the language a user sees the web app in (zh-CN or en); they can change it in the app's sidebar."""
    from medeval.accounts import auth

    actor = local_actor()
    with connect(db_path) as db:
        u = auth.set_language(db, username, language, actor=actor)
    click.echo(f"{u.username} now sees the web app in {u.language}")


@users_grp.command("reset-password")
@db_option
@click.argument("username")
@friendly
def users_reset_password(db_path, username):
    """Set a new password (from standard input) and end the user's sessions."""
    from medeval.accounts import auth

    actor = local_actor()
    password = read_password()
    with connect(db_path) as db:
        auth.reset_password(db, username, password, actor=actor)
    click.echo(f"password of {username} reset; their sessions are ended")
    _test_only_hash_warning()



@users_grp.command("unlock")
@db_option
@click.argument("username")
@friendly
def users_unlock(db_path, username):
    """End the lock-out of a username after failed sign-ins from several addresses (reset-password does too)."""
    from medeval.accounts import auth

    actor = local_actor()
    with connect(db_path) as db:
        was_locked = auth.unlock(db, username, actor=actor)
    click.echo(f"{username} is unlocked" if was_locked else f"{username} was not locked; nothing to do")



@users_grp.command("disable")
@db_option
@click.argument("username")
@friendly
def users_disable(db_path, username):
    """Disable a user and end their sessions (their annotations stay)."""
    from medeval.accounts import auth

    actor = local_actor()
    with connect(db_path) as db:
        auth.disable(db, username, actor=actor)
    click.echo(f"{username} is disabled")



@users_grp.command("enable")
@db_option
@click.argument("username")
@friendly
def users_enable(db_path, username):
    """Let a disabled user sign in again."""
    from medeval.accounts import auth

    actor = local_actor()
    with connect(db_path) as db:
        auth.enable(db, username, actor=actor)
    click.echo(f"{username} is enabled")



@click.command("audit")
@db_option
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), help="write to this file instead of standard output")
@friendly
def audit_cmd(db_path, fmt, out):
    """Export the append-only audit log (logins, failed logins, account and data changes)."""
    from medeval.accounts import auth
    from medeval.core.csvsafe import csv_text

    actor = local_actor()
    with connect(db_path) as db:
        rows = auth.audit_rows(db, actor=actor)
    if fmt == "json":
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    else:
        text = csv_text(rows, header=auth.AUDIT_COLUMNS)
    emit(text, out)


COMMANDS = (users_grp, audit_cmd,)
