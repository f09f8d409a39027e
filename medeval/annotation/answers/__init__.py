"""One answer model and one submit path for every family of annotation (issue 25 §1, Argilla's Response).

``model`` (:class:`Answer`: a status -- submitted, skipped, flagged -- and a typed value: a tier, or a map of
task questions to values), ``guards`` (assigned, campaign open, guidelines acknowledged, qualified, not stale,
idempotent by client token: one function each), ``stores`` (each family's reads and words; every family writes a
row of the one table ``answers``, :mod:`medeval.annotation.answer_rows`), ``flow`` (:func:`submit`). ``campaigns.submit_answer``,
``tasks.answer`` and ``tasks.flag`` are thin wrappers over this path; a gold item's answer takes it too (a
``stores.GoldStore`` of the family, then ``gold.submit_gold``).
"""

from __future__ import annotations

from medeval.annotation.answer_input import StaleAnswer
from medeval.annotation.answers.guards import ANY, StaleGrade
from medeval.annotation.answers.model import FLAGGED, SKIPPED, STATUSES, SUBMITTED, Answer
from medeval.annotation.answers.flow import store_for, submit, submit_item, submit_ref
from medeval.annotation.answers.stores import TASK_STORE, TIER_STORE

__all__ = ["ANY", "Answer", "FLAGGED", "SKIPPED", "STATUSES", "SUBMITTED", "StaleAnswer", "StaleGrade",
           "TASK_STORE", "TIER_STORE", "store_for", "submit", "submit_item", "submit_ref"]
