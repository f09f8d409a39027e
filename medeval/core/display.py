"""Figures and table cells as people read them: the one rule for percentages, the one mark for a missing figure,
and no Python value (``None``, ``[]``, ``True``) or code name (``not_required``) in front of a reader.

Every share a page, a report or a table shows as a percentage is written here, with one decimal ("32.7%", "80.0%",
"100.0%"), so "32.7%" never stands next to "29.28%" or "33%". A confidence level ("95% CI") is the name of an
interval, not a measured share, and is written as such. Tables keep their shares as numbers, so they sort as
numbers: a page shows such a column through :data:`PERCENT_FORMAT` on :func:`percent_points`, the same rule.
Machine-readable exports (CSV, JSON) keep their values and field names as they are: they are read by programs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from medeval.core.i18n import N_, _

PERCENT_DECIMALS = 1
MISSING = "—"
"""What a page or report writes for a figure that is not there (never "None", "nan" or an empty list)."""

PERCENT_FORMAT = f"%.{PERCENT_DECIMALS}f%%"
"""A table column's printf format for :func:`percent_points` values: the same rule as :func:`percent`."""


def is_missing(value) -> bool:
    """Nothing to show: ``None``, NaN, an empty or blank text, an empty list or dict.

    >>> [is_missing(v) for v in (None, float("nan"), "", "  ", [], {}, 0, 0.0, False, "0")]
    [True, True, True, True, True, True, False, False, False, False]
    """
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple, dict, set)):
        return not value
    return False


def percent(share: float | None) -> str:
    """A share (0.327) as a percentage with one decimal ("32.7%"); a missing share is :data:`MISSING`.

    >>> percent(0.327), percent(0.29284), percent(0.8), percent(1), percent(0), percent(None)
    ('32.7%', '29.3%', '80.0%', '100.0%', '0.0%', '—')
    """
    if is_missing(share):
        return MISSING
    return f"{float(share) * 100:.{PERCENT_DECIMALS}f}%"


def percent_points(share: float | None) -> float | None:
    """A share (0.327) in percentage points (32.7), for a table column shown with :data:`PERCENT_FORMAT`.

    >>> percent_points(0.327), percent_points(None)
    (32.7, None)
    """
    return None if is_missing(share) else round(float(share) * 100, 10)


TOKENS = {"ci95": "95% CI", "n": "n"}
"""Parts of code names that read differently in words."""


def words(name: str) -> str:
    """A code name in words: ``not_required`` → "not required", ``campaign.add_items`` → "campaign: add items".

    For names no table of labels covers (a setting a plugin added, an audit action); a known name has its own
    label where it is defined (metrics: ``medeval.engine.registry.label``).

    >>> words("not_required"), words("campaign.add_items"), words("login"), words("low_ci95")
    ('not required', 'campaign: add items', 'login', 'low 95% CI')
    """
    return ": ".join(" ".join(TOKENS.get(w, w) for w in part.split("_")).strip() for part in str(name).split("."))


def value_text(value, *, label=None) -> str:
    """One value in words: a list as "a, b", yes/no for a truth value, :data:`MISSING` for nothing, a mapping as
    "key: value; ..." (its keys in :func:`words`); ``label(x)`` names each item of a list or a single value.

    >>> value_text(["bleu1", "cosine"], label=str.upper), value_text(True), value_text(None), value_text(0.1)
    ('BLEU1, COSINE', 'yes', '—', '0.1')
    >>> value_text({"address": "local", "from": None, "ok": False})
    'address: local; from: —; ok: no'
    """
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if is_missing(value):
        return MISSING
    if isinstance(value, Mapping):
        return "; ".join(f"{words(k)}: {value_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v, label=label) for v in value)
    return str(label(value) if label else value)


TIER_NAMES = {0: N_("Completely Wrong"), 1: N_("Partially Correct"), 2: N_("Basically Correct")}
"""The tiers as a page names them (``medeval.engine.thresholds.TIERS``, marked for the catalogue)."""

ASPECT_TYPE_NAMES = {"enumerated": N_("enumerated"), "declarative": N_("declarative"), "numeric": N_("numeric"),
                     "enumerated+declarative": N_("enumerated+declarative"), "all": N_("all")}
"""The aspect types (and the pooled groups of "Clinicians vs the machine") as a page names them; the values stored
and exported stay the identifiers."""


def tier_name(tier: int | None) -> str:
    """A tier code (0, 1, 2) by its name in the reader's language ("Completely Wrong"); nothing: :data:`MISSING`.

    >>> tier_name(2), tier_name(None)
    ('Basically Correct', '—')
    """
    return MISSING if tier is None else _(TIER_NAMES[int(tier)])


def aspect_type_name(aspect_type: str) -> str:
    """An aspect type (``enumerated``) in the reader's language; one not listed, as it is.

    >>> aspect_type_name("declarative"), aspect_type_name("enumerated+declarative"), aspect_type_name("other")
    ('declarative', 'enumerated+declarative', 'other')
    """
    return _(ASPECT_TYPE_NAMES[aspect_type]) if aspect_type in ASPECT_TYPE_NAMES else str(aspect_type)


def drop_empty_columns(rows: Iterable[Mapping], *, keep: Iterable[str] = ()) -> list[dict]:
    """The rows without the columns that are empty (:func:`is_missing`) in every row: a column with nothing in it
    says nothing. With no rows, nothing is dropped; nor are the columns in ``keep`` (a chart of no points).

    >>> drop_empty_columns([{"a": 1, "b": None, "c": ""}, {"a": 2, "b": None, "c": "x"}])
    [{'a': 1, 'c': ''}, {'a': 2, 'c': 'x'}]
    """
    rows = [dict(r) for r in rows]
    keys = list(dict.fromkeys(k for r in rows for k in r))
    keep = set(keep)
    empty = {k for k in keys if k not in keep and all(is_missing(r.get(k)) for r in rows)} if rows else set()
    return [{k: v for k, v in r.items() if k not in empty} for r in rows]
