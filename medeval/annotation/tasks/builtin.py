"""The built-in task types, in the order the pages list them, and the one call that registers them.

A type module (``rubric``, ``pairwise``, ``accr``) only defines its :class:`~medeval.annotation.tasks.registry.TaskType`
subclass; importing it registers nothing. :func:`register_builtin` puts every class of :data:`BUILTIN_TYPES` in
the registry; the package's ``__init__`` calls it once, so ``tasks.get("rubric")`` works wherever the package is
imported. Adding a type: write its module, then add its class here (where it should appear on the pages).
"""

from __future__ import annotations

from medeval.annotation.tasks.accr import AccuracyReliability
from medeval.annotation.tasks.pairwise import Preference
from medeval.annotation.tasks.registry import TaskType, register
from medeval.annotation.tasks.rubric import RubricRating

BUILTIN_TYPES: tuple[type[TaskType], ...] = (RubricRating, Preference, AccuracyReliability)


def register_builtin() -> tuple[str, ...]:
    """Register the built-in task types (again: nothing changes); their names, in page order."""
    for cls in BUILTIN_TYPES:
        register(cls)
    return tuple(cls.name for cls in BUILTIN_TYPES)
