"""Gold items: one mechanism for tier grading and task campaigns -- the items, the qualification round, hidden
gold in the queue, gold answers kept apart from the real ones, and the accuracy figures.

A gold item is something a researcher knows the answer to: a scored response with an expected tier (tier
grading) or a task item with expected answers to some of its questions (rubric, preference, AccR). The flow is
written once and asks a :class:`Backend` what differs between the two families (:data:`TIER`, :data:`TASK`).

The modules, by meaning: ``settings`` (which campaigns take gold items, their gold settings, the active items,
the seed), ``items`` (tier gold items; retiring either family's), ``task_items`` (task gold items), ``backends``
(the :class:`Backend` interface and the tier family), ``task_backend`` (the task family), ``qualification``
(attempts, pass mark, review), ``hidden`` (the seeded hidden plan, the item due now, display ids), ``answers``
(the guards and recording of a gold answer), ``results`` (accuracy over time, the methods sentence). This
package re-exports their public names: callers write ``from medeval.annotation import gold`` and
``gold.<name>``.
"""

from __future__ import annotations

# (any order works: medeval.annotation.campaigns, which the task modules' imports reach while this package loads,
# takes the qualification's names from here only when they are first used -- tests/test_gold_package.py)
from medeval.annotation.gold.settings import (
    DEFAULTS,
    EDITING_ROLES,
    GOLD_KINDS,
    GOLD_MAX,
    SETTINGS_HELP,
    TIER_CODES,
    TIER_NAMES,
    active_gold_ids,
    check_settings,
    get_settings,
    gold_family,
    require_gold_campaign,
    set_settings,
)
from medeval.annotation.gold.items import (
    TIER_CSV_COLUMNS,
    GoldItem,
    find_responses,
    gold_item,
    import_gold_csv,
    list_gold,
    mark_gold,
    parse_tier,
    retire_task_gold,
    unmark_gold,
)
from medeval.annotation.gold.backends import TIER, Backend, StaleGoldAnswer
from medeval.annotation.gold.qualification import (
    QualificationPending,
    QualificationState,
    qualification_state,
    require_qualified,
    review,
    start_attempt,
)
from medeval.annotation.gold.hidden import (
    display_id,
    hidden_counts,
    hidden_due,
    hidden_now,
    hidden_plan,
    hidden_skipped,
    revisit_queue,
)
from medeval.annotation.gold.task_items import (
    TASK_CSV_COLUMNS,
    TaskGoldItem,
    candidates,
    check_expected,
    describe,
    gold_blocks,
    gold_questions,
    import_task_gold_csv,
    list_task_gold,
    mark_task_gold,
    task_gold_item,
    task_type,
)
from medeval.annotation.gold.task_backend import (
    TASK,
    TaskBackend,
    describe_on_screen,
    layout_for,
    matches,
    on_screen,
)
from medeval.annotation.gold.answers import (
    check_turn,
    gold_current,
    gold_token,
    gold_view,
    latest_hidden_id,
    parse_ref,
    recent_hidden,
    submit_gold,
)
from medeval.annotation.gold.results import (
    BLOCK,
    QUALIFICATION_WORDS,
    RESULTS_LABELS,
    gold_accuracy,
    methods_sentence,
    qualification_words,
    results_caption,
    results_rows,
)

__all__ = [
    # settings
    "DEFAULTS", "EDITING_ROLES", "GOLD_KINDS", "GOLD_MAX", "SETTINGS_HELP", "TIER_CODES", "TIER_NAMES",
    "active_gold_ids", "check_settings", "get_settings", "gold_family", "require_gold_campaign", "set_settings",
    # items
    "TIER_CSV_COLUMNS", "GoldItem", "find_responses", "gold_item", "import_gold_csv", "list_gold", "mark_gold",
    "parse_tier", "retire_task_gold", "unmark_gold",
    "TASK_CSV_COLUMNS", "TaskGoldItem", "candidates", "check_expected", "describe", "gold_blocks",
    "gold_questions", "import_task_gold_csv", "list_task_gold", "mark_task_gold", "task_gold_item", "task_type",
    # backends
    "TASK", "TIER", "Backend", "StaleGoldAnswer", "TaskBackend", "describe_on_screen", "layout_for", "matches",
    "on_screen",
    # the flow
    "QualificationPending", "QualificationState", "qualification_state", "require_qualified", "review",
    "start_attempt", "display_id", "hidden_counts", "hidden_due", "hidden_now", "hidden_plan", "hidden_skipped",
    "revisit_queue",
    "check_turn", "gold_current", "gold_token", "gold_view", "latest_hidden_id", "parse_ref", "recent_hidden",
    "submit_gold",
    "BLOCK", "QUALIFICATION_WORDS", "RESULTS_LABELS", "gold_accuracy", "methods_sentence", "qualification_words", "results_caption",
    "results_rows",
]
