"""Bucket-grading campaigns: interval sampling, assignment to exactly k annotators, blind items, grades.

Follows MedDisKEval section 3.2.2 ("How thresholds are calibrated"): pool all
models' scores per (metric, aspect type), split the score range into intervals
(default width 0.1) and sample a fixed number per interval (default 10).
Sampling is reproducible from the stored seed; intervals with fewer responses
than asked for are reported, not silently skipped.

Assignment is decided when the campaign is created: every item goes to exactly
``k`` of the chosen annotators (balanced, seeded), each annotator in an order of
their own. "Never more than k" and "never the same item twice" are therefore
properties of the stored assignment (a primary key), not of timing, however
many annotators submit at once.

Grades are append-only: a change adds a row that supersedes the previous one;
a resubmission with the same client token adds nothing.

The modules: ``sampling`` (intervals and the seeded sample), ``assignment`` (creating a
campaign: annotators, exactly-k assignment, storage), ``grading`` (the annotator's side: blind
items, next item, grades) and ``status`` (the researcher's side: open/closed, listing, progress,
review). This package re-exports their names, so ``campaigns.submit_grade`` and the like keep working.
"""

from __future__ import annotations

# Each name this package offers, by the module that defines it, imported when first used (PEP 562) rather than when
# the package is: its modules reach gold, the task types, numpy and sqlite-utils, and a command that only lists
# campaigns (``medeval campaign list``: ``status``) starts without them. A module's names are bound together when
# one of them is first used, as its ``from ... import`` here once bound them. Gold's qualification names are looked
# up at each use, so importing this package never needs gold's names while gold itself may still be loading -- the
# task modules gold imports reach this package.
_NAMES = {
    "assignment": ("annotator_choices", "balanced_plan", "create_bucket_campaign", "create_random_campaign"),
    "grading": ("SNIPPET_CHARS", "TIER_GUIDE", "BlindItem", "GivenGrade", "GradingState", "StaleGrade", "blind_item",
                "grading_state", "my_answers", "my_campaigns", "next_item", "progress", "recent_grades", "snippet",
                "submit_answer", "submit_grade", "tier_label"),
    "guidelines": ("GuidelinesPending", "acknowledge", "needs_acknowledgement"),
    "sampling": ("BucketConfig", "check_bucket_config", "intervals", "sample_buckets", "validation_pool"),
    "status": ("GRADES_CSV_COLUMNS", "GRADING_KINDS", "campaign_progress", "current_grades", "grades_csv",
               "grades_signature", "item_count", "list_campaigns", "require_grading", "review_item",
               "set_campaign_status"),
    "gold": ("QualificationPending", "qualification_state", "start_attempt"),
}
_WHERE = {name: module for module, names in _NAMES.items() for name in names}


def _module(where: str):
    # each import spelled out, so the architecture test reads them as it read the imports at the top before; as
    # `import a.b as m`, since `from a import b` would ask this package's __getattr__ for b first
    if where == "assignment":
        import medeval.annotation.campaigns.assignment as module
    elif where == "grading":
        import medeval.annotation.campaigns.grading as module
    elif where == "guidelines":
        import medeval.annotation.guidelines as module
    elif where == "sampling":
        import medeval.annotation.campaigns.sampling as module
    elif where == "status":
        import medeval.annotation.campaigns.status as module
    else:
        import medeval.annotation.gold as module
    return module


def __getattr__(name: str):
    if name in ("assignment", "grading", "sampling", "status"):  # a module of the package, as after an eager import
        return _module(name)
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _module(_WHERE[name])
    if _WHERE[name] == "gold":
        return getattr(module, name)
    globals().update({n: getattr(module, n) for n in _NAMES[_WHERE[name]]})
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | {"assignment", "grading", "sampling", "status"})


__all__ = [
    "QualificationPending",
    "qualification_state",
    "start_attempt",
    "submit_answer",
    "GuidelinesPending",
    "acknowledge",
    "needs_acknowledgement",
    "BucketConfig",
    "check_bucket_config",
    "intervals",
    "sample_buckets",
    "validation_pool",
    "annotator_choices",
    "balanced_plan",
    "create_bucket_campaign",
    "create_random_campaign",
    "TIER_GUIDE",
    "tier_label",
    "BlindItem",
    "blind_item",
    "next_item",
    "progress",
    "StaleGrade",
    "submit_grade",
    "GivenGrade",
    "GradingState",
    "my_answers", "recent_grades", "snippet", "SNIPPET_CHARS",
    "my_campaigns",
    "grading_state",
    "set_campaign_status",
    "review_item",
    "current_grades",
    "grades_csv",
    "grades_signature",
    "item_count",
    "GRADES_CSV_COLUMNS",
    "GRADING_KINDS",
    "require_grading",
    "list_campaigns",
    "campaign_progress",
]
