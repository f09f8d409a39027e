"""medeval: align automated evaluation of medical LLMs with clinicians' judgement.

A library (no Streamlit import); the command line is ``python -m medeval`` and the web app's
pages (``app_pages/``) are thin scripts over it. See ``ARCHITECTURE.md`` for the data flow.

Layers
------
Each folder of ``medeval/`` is one layer, listed here from the bottom up. **A module may import
from its own layer and from the layers before it, never from a later one** -- and no two modules
import each other, directly or round a loop. ``tests/test_architecture.py`` parses every import
(those inside functions too) and fails on an upward import or a cycle.

``core``
    errors, settings (declared once with their help), reading tables from CSV/JSON/JSONL files.
``store``
    SQLite: a new connection per operation, ``BEGIN IMMEDIATE`` write transactions, and the
    schema's numbered migrations (``store/migrations/``, discovered by name).
``stats``
    agreement statistics (ICC, kappas, alpha, Spearman), judge agreement, preference models,
    fact-check and exam scoring: pure functions of their inputs, no database.
``accounts``
    users, roles, password hashing, server-side sessions, the audit log; ``policy.authorize`` is how
    every layer above enforces permissions in the data layer (every action declared once in ``policy``).
``engine``
    the scoring engine: aspects, tokenizer, post-processing, metrics, embeddings, import,
    scoring, threshold sets and tiers, the paper's total score and level.
``annotation``
    grading campaigns (sampling, exactly-k assignment, append-only grades), cases and judge
    rationales, and the task types (rubric, preference, AccR).
``calibration``
    clinicians' grades turned into cut-offs (calibrate, publish), clinicians vs machine
    (validation), and the live tuning workspace.
``reports``
    the tier report and leaderboard, the agreement dashboard, offline HTML/PDF reports.
``demo``
    the demo data set and simulated clinicians (the project's own writing).
``cli``
    ``python -m medeval``: one module per command group, registered in ``cli/main.py``.

Plugins
-------
``medeval.register_metric(name=..., label=..., score=..., aspect_types=(...), scorer_id=..., describe=...)``
registers a metric (:func:`medeval.engine.registry.register_metric`); ``medeval.load_plugins()`` loads the
``medeval.metrics`` entry points and the modules of ``MEDEVAL_PLUGINS`` once, at start
(:func:`medeval.engine.plugins.load_plugins`). Both are imported when first used, so ``import medeval`` stays
light. See ``docs/metrics.md``.
"""

__version__ = "0.1.0"

from medeval.core import startup as _startup

_startup.install()  # sqlite-utils without pandas (medeval.core.startup says why)

LAYERS = ("core", "store", "stats", "accounts", "engine", "annotation", "calibration", "reports", "demo", "cli")


def __getattr__(name: str):
    """``register_metric`` and ``load_plugins``, imported on first use."""
    if name == "register_metric":
        from medeval.engine.registry import register_metric

        return register_metric
    if name == "load_plugins":
        from medeval.engine.plugins import load_plugins

        return load_plugins
    raise AttributeError(f"module 'medeval' has no attribute {name!r}")
