"""Annotation task types beyond tier grading: a registry, and the storage and flow they share.

A task type is one module in this package (``rubric``, ``pairwise``, ``accr``) that subclasses
:class:`TaskType`, listed in ``builtin.BUILTIN_TYPES`` (the pages' order); ``builtin.register_builtin()``, called
once at the end of this file, registers them (importing a type's module registers nothing). It declares

* its **settings** (what a researcher chooses when creating a campaign),
* how to **build items** from imported data (each item a JSON payload stored with the campaign,
  so later imports never change what was annotated),
* a per-annotator **layout** drawn from the campaign's stored seed (response order, left/right),
* the **screen**: the blocks of text an annotator sees and the questions they answer, each
  with its options and the key that gives each option; questions come in numbered **parts**,
  and a part is shown and accepted only once every question of the earlier parts has an
  answer (the two-part protocol of AutoMedEval: responses first, then the judge),
* its **results**: sections of tables and numbers, including the agreement statistics that fit
  its scale.

Everything else lives here, once for every type: campaigns with exactly ``k`` annotators per
item (balanced, seeded, stored up front), the blind view (sources and models never leave the
library for an annotator), append-only answers with history (a change supersedes, a
resubmission with the same client token is ignored), skipping, progress and results.
The one annotation page (``app_pages/annotate.py``) and the results page draw any registered
type from these declarations, so a new type touches no page.

The modules: ``registry`` (the declarations, :class:`TaskType`, :func:`register`, :func:`get`), ``builtin``
(the built-in types and :func:`register_builtin`),
``campaigns`` (preview, creation with its assignment, lookup and listing), ``answering`` (the
annotator's view and answers, skips and flags), ``reporting`` (answers, flags, progress and
results for researchers), and one module per task type; ``common`` holds what the types share.
This package re-exports their names, so ``tasks.create_campaign`` and the like keep working.
"""

from __future__ import annotations

from medeval.annotation.tasks.answering import (
    ANNOTATING_ROLES,
    FLAG,
    SKIP,
    GivenAnswer,
    ItemView,
    StaleAnswer,
    TaskState,
    answer,
    flag,
    flag_item,
    item_view,
    last_answer,
    my_answers,
    my_task_campaigns,
    submit_answer,
    task_state,
)
from medeval.annotation.guidelines import GuidelinesPending, acknowledge, needs_acknowledgement
from medeval.annotation.tasks.campaigns import campaign, create_campaign, item_count, preview, task_campaigns
from medeval.annotation.tasks.registry import (
    REGISTRY,
    AnswerRow,
    Block,
    ItemSpec,
    Option,
    Question,
    Section,
    Setting,
    TaskType,
    get,
    is_task_kind,
    register,
)
from medeval.annotation.tasks.reporting import (
    ANSWERS_CSV_COLUMNS,
    answers,
    answers_csv,
    campaign_progress,
    flags,
    results,
)

__all__ = [
    "GuidelinesPending",
    "acknowledge",
    "needs_acknowledgement",
    "ANNOTATING_ROLES",
    "SKIP",
    "FLAG",
    "Option",
    "Question",
    "Block",
    "Setting",
    "ItemSpec",
    "Section",
    "AnswerRow",
    "TaskType",
    "REGISTRY",
    "register",
    "register_builtin",
    "BUILTIN_TYPES",
    "get",
    "is_task_kind",
    "preview",
    "create_campaign",
    "campaign",
    "item_count",
    "task_campaigns",
    "ItemView",
    "TaskState",
    "GivenAnswer",
    "my_answers",
    "last_answer",
    "item_view",
    "my_task_campaigns",
    "task_state",
    "StaleAnswer",
    "submit_answer",
    "answer",
    "flag",
    "answers",
    "answers_csv",
    "ANSWERS_CSV_COLUMNS",
    "flag_item",
    "flags",
    "campaign_progress",
    "results",
    "rubric",
    "pairwise",
    "accr",
    "common",
    "state",
]

from medeval.annotation.tasks import rubric  # noqa: E402,I001
from medeval.annotation.tasks import pairwise  # noqa: E402,I001
from medeval.annotation.tasks import accr  # noqa: E402,I001
from medeval.annotation.tasks import common  # noqa: E402,I001
from medeval.annotation.tasks import state  # noqa: E402,I001
from medeval.annotation.tasks.builtin import BUILTIN_TYPES, register_builtin  # noqa: E402,I001

register_builtin()  # the one place the built-in task types are registered, in the order the pages list them
