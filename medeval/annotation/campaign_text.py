"""A campaign in words, for the pages and reports: its kind, and its configuration as settings a researcher reads.

The stored configuration keeps its field names (``per_interval``, ``threshold_version``): the command line, the JSON
export and the code read them. On a page the same configuration is a table of settings and values in words.

The labels are English marked ``N_()``; :func:`kind_label` and :func:`config_rows` give them in the current language
(``medeval.core.i18n``: the signed-in person's on a page, English on the command line and in a ``with
language("en")`` block).
"""

from __future__ import annotations

from medeval.core.display import value_text, words
from medeval.core.i18n import N_, _
from medeval.engine import registry

KIND_LABELS = {"bucket_grading": N_("Score-interval buckets (calibration)"),
               "random_validation": N_("Random sample (validation)"),
               "active_calibration": N_("Active rounds (calibration)")}
"""The grading campaigns' kinds in words; a task campaign's kind is its task type's title."""
SHORT_KIND_LABELS = {"bucket_grading": N_("calibration buckets"), "random_validation": N_("validation sample"),
                     "active_calibration": N_("active calibration")}
"""The same in a table's column, where a laptop's width holds every column."""

SETTING_LABELS = {
    "metrics": N_("metrics"), "aspect_types": N_("aspect types"), "width": N_("interval width"),
    "per_interval": N_("items per interval"), "k": N_("annotators per item (k)"), "seed": N_("seed"),
    "annotators": N_("annotators"), "threshold_version": N_("active threshold set when created"), "n": N_("items"),
    "validates_version": N_("threshold set it validates"),
    "calibration_campaigns": N_("calibration campaigns kept apart"),
    "allow_overlap": N_("may share items with calibration"),
    "excluded_responses": N_("responses left out (calibration's)"), "round_size": N_("items per round"),
    "target_width": N_("target width of the cut-offs' intervals"), "budget": N_("item budget"),
    "explore": N_("share drawn at random (exploration)"), "criterion": N_("criterion"),
    "estimator": N_("cut-off estimator"), "design": N_("design"), "task": N_("task"), "dataset": N_("data set"),
    "rubric": N_("rubric"), "judge": N_("judge rated afterwards"), "max_items": N_("questions (0: all)"),
    "compare": N_("compared"), "per_model": N_("items per model"), "pool": N_("drawn from"),
    "criteria": N_("criteria"),
}


ASPECT_TYPE_NAMES = {"enumerated": N_("enumerated"), "declarative": N_("declarative"), "numeric": N_("numeric")}
"""The aspect types in words (the stored values stay the ids)."""
SAMPLING_NAMES = {"interval": N_("by score interval (the paper)"), "active": N_("active rounds (narrow the cut-offs)")}
"""How a new tier-grading campaign samples (New campaign's choice)."""
ESTIMATOR_NAMES = {"smooth": N_("smooth curves (recommended)"), "accuracy": N_("accuracy search (the paper)")}
"""An active campaign's cut-off estimators as New campaign offers them."""
DESIGN_NAMES = {"adaptive": N_("adaptive (where a grade narrows the cut-offs most)"),
                "active": N_("where the cut-offs' bootstrap has mass"),
                "interval": N_("every score interval alike (the paper)")}
"""Where an active campaign's later rounds are drawn, as New campaign offers them and its configuration says."""
VALUE_NAMES = {"aspect_types": ASPECT_TYPE_NAMES, "design": DESIGN_NAMES,
               "estimator": {"smooth": N_("smooth curves"), "accuracy": N_("accuracy search (the paper)")},
               "criterion": {"accuracy": N_("accuracy")}}
"""Settings whose values are code names, in words (a value not named stays as stored)."""


def kind_label(kind: str, *, short: bool = False) -> str:
    """A campaign's kind in words: "Score-interval buckets (calibration)" ("calibration buckets" ``short``), a task
    type's title."""
    if kind in KIND_LABELS:
        return _((SHORT_KIND_LABELS if short else KIND_LABELS)[kind])
    from medeval.annotation.tasks import registry as tasks

    return _(tasks.get(kind).title) if tasks.is_task_kind(kind) else words(kind)


def _value(key: str, value) -> str:
    if key in ("threshold_version", "validates_version") and isinstance(value, int):
        return f"v{value}"
    if key == "calibration_campaigns" and isinstance(value, list):
        return value_text([f"#{c}" for c in value])
    if key in VALUE_NAMES:
        names = VALUE_NAMES[key]
        return value_text(value, label=lambda v: _(names[v]) if v in names else v)
    label = registry.label if key == "metrics" else kind_label if key == "task" else None
    return value_text(value, label=label)


def config_rows(config: dict) -> list[dict]:
    """The configuration as rows of (setting, value) in words, in the stored order.

    >>> config_rows({"metrics": ["bleu1", "cosine"], "per_interval": 4, "threshold_version": 2, "seed": 7})
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'setting': 'metrics', 'value': 'BLEU-1, cosine'}, {'setting': 'items per interval', 'value': '4'},
     {'setting': 'active threshold set when created', 'value': 'v2'}, {'setting': 'seed', 'value': '7'}]
    """
    return [{"setting": _(SETTING_LABELS[k]) if k in SETTING_LABELS else words(k), "value": _value(k, v)}
            for k, v in config.items()]


COLUMN_LABELS = {"setting": N_("setting"), "value": N_("value")}
"""The headers of :func:`config_rows` on a page (``webui.tables.dataframe(labels=...)``)."""

PROGRESS_LABELS = {"annotator": N_("annotator"), "progress": N_("progress"), "done": N_("done"),
                   "assigned": N_("assigned"), "skipped": N_("skipped"), "flagged": N_("flagged"),
                   "not fully shown": N_("not fully shown"), "not measured": N_("not measured")}
"""The headers of a campaign's progress per annotator on a page (Campaigns, Task results)."""
