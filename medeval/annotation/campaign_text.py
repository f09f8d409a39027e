"""A campaign in words, for the pages and reports: its kind, and its configuration as settings a researcher reads.

The stored configuration keeps its field names (``per_interval``, ``threshold_version``): the command line, the JSON
export and the code read them. On a page the same configuration is a table of settings and values in words.
"""

from __future__ import annotations

from medeval.core.display import value_text, words
from medeval.engine import registry

KIND_LABELS = {"bucket_grading": "Score-interval buckets (calibration)",
               "random_validation": "Random sample (validation)",
               "active_calibration": "Active rounds (calibration)"}
"""The grading campaigns' kinds in words; a task campaign's kind is its task type's title."""
SHORT_KIND_LABELS = {"bucket_grading": "calibration buckets", "random_validation": "validation sample",
                     "active_calibration": "active calibration"}
"""The same in a table's column, where a laptop's width holds every column."""

SETTING_LABELS = {
    "metrics": "metrics", "aspect_types": "aspect types", "width": "interval width",
    "per_interval": "items per interval", "k": "annotators per item (k)", "seed": "seed", "annotators": "annotators",
    "threshold_version": "active threshold set when created", "n": "items",
    "validates_version": "threshold set it validates", "calibration_campaigns": "calibration campaigns kept apart",
    "allow_overlap": "may share items with calibration", "excluded_responses": "responses left out (calibration's)",
    "round_size": "items per round", "target_width": "target width of the cut-offs' intervals",
    "budget": "item budget", "explore": "share drawn at random (exploration)", "criterion": "criterion",
    "estimator": "cut-off estimator", "design": "design", "task": "task", "dataset": "data set", "rubric": "rubric",
    "judge": "judge rated afterwards", "max_items": "questions (0: all)", "compare": "compared",
    "per_model": "items per model", "pool": "drawn from", "criteria": "criteria",
}


def kind_label(kind: str, *, short: bool = False) -> str:
    """A campaign's kind in words: "Score-interval buckets (calibration)" ("calibration buckets" ``short``), a task
    type's title."""
    if kind in KIND_LABELS:
        return (SHORT_KIND_LABELS if short else KIND_LABELS)[kind]
    from medeval.annotation.tasks import registry as tasks

    return tasks.get(kind).title if tasks.is_task_kind(kind) else words(kind)


def _value(key: str, value) -> str:
    if key in ("threshold_version", "validates_version") and isinstance(value, int):
        return f"v{value}"
    if key == "calibration_campaigns" and isinstance(value, list):
        return value_text([f"#{c}" for c in value])
    label = registry.label if key == "metrics" else kind_label if key == "task" else None
    return value_text(value, label=label)


def config_rows(config: dict) -> list[dict]:
    """The configuration as rows of (setting, value) in words, in the stored order.

    >>> config_rows({"metrics": ["bleu1", "cosine"], "per_interval": 4, "threshold_version": 2, "seed": 7})
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'setting': 'metrics', 'value': 'BLEU-1, cosine'}, {'setting': 'items per interval', 'value': '4'},
     {'setting': 'active threshold set when created', 'value': 'v2'}, {'setting': 'seed', 'value': '7'}]
    """
    return [{"setting": SETTING_LABELS.get(k, words(k)), "value": _value(k, v)} for k, v in config.items()]
