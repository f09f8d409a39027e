"""Command line: ``python -m medeval COMMAND``. Library errors become clean messages and exit code 1.

Every command is listed in :data:`COMMANDS` with the module of its group (one module per command group, each with
the ``COMMANDS`` it defines). A command's module is imported only when that command runs (or its own help is asked
for): ``python -m medeval --help`` and a light command start without the libraries the others need (scipy, pandas,
the embedding models); ``bench/bench_startup.py`` measures it.
"""

from __future__ import annotations

import importlib

import click
from click.formatting import HelpFormatter
from click.utils import make_default_short_help

COMMANDS: dict[str, tuple[str, str]] = {
    "agreement": ("agreement", "Inter-rater agreement of a long-format ratings file (item, rater, value): alpha, "
                               "ICC, kappas, Spearman."),
    "audit": ("users", "Export the append-only audit log (logins, failed logins, account and data changes)."),
    "backup": ("backup", "Copy the database to the file DEST from one consistent snapshot, while the app keeps "
                         "running."),
    "calibrate": ("calibrate", "Cut-offs per (metric, aspect type) that best reproduce the clinicians' tiers."),
    "campaign": ("campaigns", "Grading campaigns for clinicians: create (bucket or random), list, progress, close, "
                              "reopen."),
    "datasets": ("cases", "List the datasets of cases and fact-check claims with their counts."),
    "demo": ("demo", "Build the demo database: import, score and grade the demo data set (DEMO, not clinical "
                     "advice)."),
    "exam-review": ("files", "Settle ambiguous exam answers by hand: list them, pick the letters (stored with who "
                             "decided)."),
    "exam-score": ("files", "Exam accuracy (CMB-Exam): extract the chosen options from each response and score exact "
                            "matches."),
    "export": ("scoring", "Export one row per response and metric: score, tier and threshold version."),
    "factcheck": ("files", "Score fact-check answers (SDAK): Instruction Following Rate, Factual Accuracy, error "
                           "types."),
    "gold": ("gold", "Gold items (expected answer known): qualification rounds and hidden checks of annotators."),
    "grade": ("scoring", "Grade all scores into tiers under a threshold set (default: the active one)."),
    "guidelines": ("guidelines", "The guidelines annotators read before grading a campaign (every version is kept)."),
    "i18n": ("i18n_cmd", "The web app's translations: extract marked strings, compile catalogues, check them "
                         "(medeval/locale)."),
    "import": ("scoring", "Import a knowledge base, models and responses (CSV, JSONL or JSON); all or nothing."),
    "import-cases": ("cases", "Import clinical cases, model responses and judges' assessments into a dataset; all or "
                              "nothing."),
    "import-factcheck": ("cases", "Import fact-check claims and model responses (id, type, label, claim, response "
                                  "[model]); all or nothing."),
    "init": ("scoring", "Create the database (or bring its schema up to date)."),
    "judge-agreement": ("judge", "Judge vs clinicians: Spearman/Pearson, Accuracy 2-tuple/triple, win rates, model "
                                 "rankings, and Pearson/Spearman per criterion."),
    "report": ("scoring", "Per model: tier shares, total score and level; per aspect; Welch's t-test vs backbone."),
    "report-agreement": ("agreement", "Agreement report of a campaign: report.html (offline), report.pdf, "
                                      "summary.json and CSVs."),
    "report-leaderboard": ("leaderboard", "Leaderboard report: tier shares (Figure 5), ranking (Table 4), per aspect "
                                          "(Table 5), Welch's t-tests."),
    "score": ("scoring", "Score every response not yet scored, in chunks (resumable after an interrupt)."),
    "settings": ("settings_cmd", "List every setting: its value now (from the environment or its default), checked."),
    "task": ("task_campaigns", "Rating, preference and fact-check verification campaigns (task types: rubric, "
                               "preference, accr)."),
    "thresholds": ("thresholds", "List, export, import, activate and adopt versioned tier threshold sets."),
    "users": ("users", "Manage accounts: add, list, set-role, set-language, reset-password, unlock, disable, enable "
                       "(passwords from stdin)."),
}
"""Each command: the module (under ``medeval.cli``) that defines it, and its one-line help as ``--help`` lists it
(``tests/test_cli_startup.py`` checks that each equals the command's own, so they cannot drift apart)."""


class LazyGroup(click.Group):
    """A group whose commands are imported when one is used; its command list comes from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(f"medeval.cli.{COMMANDS[cmd_name][0]}")
        return next(c for c in module.COMMANDS if c.name == cmd_name)

    def format_commands(self, ctx: click.Context, formatter: HelpFormatter) -> None:
        # as click.Group lists its commands, from the table: listing them imports none
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        with formatter.section("Commands"):
            formatter.write_dl([(n, make_default_short_help(COMMANDS[n][1], limit)) for n in names])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 140,
                                              "terminal_width": 140})
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


if __name__ == "__main__":  # pragma: no cover
    main()
