"""Command line: ``python -m medeval COMMAND``. Library errors become clean messages and exit code 1.

Every command is registered here, from the ``COMMANDS`` of its group's module (one module per command
group); a new command group is a module with ``COMMANDS`` added to :data:`GROUPS`.
"""

from __future__ import annotations

import click

from medeval.cli import (
    agreement,
    backup,
    calibrate,
    campaigns,
    cases,
    demo,
    files,
    gold,
    guidelines,
    i18n_cmd,
    judge,
    leaderboard,
    scoring,
    settings_cmd,
    task_campaigns,
    thresholds,
    users,
)

GROUPS = (scoring, thresholds, demo, calibrate, agreement, users, campaigns, cases, judge, files, task_campaigns,
          leaderboard, guidelines, gold, settings_cmd, backup, i18n_cmd)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 140, "terminal_width": 140})
@click.version_option(package_name=None, version=__import__("medeval").__version__)
def main():
    """medeval: score medical LLM answers against a knowledge base and grade them into tiers."""
    from medeval.core import runtime
    from medeval.core.errors import MedevalError
    from medeval.engine.plugins import load_plugins

    runtime.start("command line")  # this process's state (medeval.core.runtime); in-process callers keep theirs
    try:
        load_plugins()  # the metric plugins, once per process: entry points and MEDEVAL_PLUGINS (docs/metrics.md)
    except MedevalError as e:
        raise click.ClickException(str(e)) from None  # "Error: ..." and exit code 1


for _group in GROUPS:
    for _command in _group.COMMANDS:
        main.add_command(_command)

if __name__ == "__main__":  # pragma: no cover
    main()
