"""Rating tables and results: the items x raters :class:`RatingTable` every statistic reads, the
:class:`Estimate` every statistic returns, and the helpers they share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from medeval.core.errors import MedevalError
from medeval.core.limits import BOOT_MAX, check_number, check_seed

LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Estimate:
    name: str
    value: float | None
    ci95: tuple[float, float] | None
    n_items: int
    n_raters: int
    n_pairable: int
    missing: str
    undefined_reason: str | None = None
    extra: dict = field(default_factory=dict)
    method: str = ""

    @property
    def defined(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict:
        return {"name": self.name, "value": self.value, "ci95": list(self.ci95) if self.ci95 else None,
                "n_items": self.n_items, "n_raters": self.n_raters, "n_pairable": self.n_pairable,
                "missing": self.missing, "undefined_reason": self.undefined_reason, "method": self.method,
                **({"extra": self.extra} if self.extra else {})}


def _f(x) -> float:
    return float(x)


class RatingTable:
    """Ratings as an items x raters float matrix, NaN = missing."""

    def __init__(self, values: np.ndarray, items: Sequence | None = None, raters: Sequence | None = None,
                 labels: Sequence | None = None):
        values = np.asarray(values, dtype=float)
        if values.ndim != 2:
            raise MedevalError("ratings must be a 2-D items x raters table")
        self.values = values
        self.items = list(items) if items is not None else list(range(values.shape[0]))
        self.raters = list(raters) if raters is not None else list(range(values.shape[1]))
        self.labels = list(labels) if labels is not None else None  # category labels when values are codes

    @classmethod
    def from_matrix(cls, matrix, items=None, raters=None) -> "RatingTable":
        m = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
        return cls(m, items, raters)

    @classmethod
    def from_long(cls, rows: Iterable[tuple], categories: Sequence | None = None) -> "RatingTable":
        """From ``(item, rater, value)`` rows; a blank/None value is missing.

        With ``categories`` (an ordered category set), values may be labels; they are
        stored as their position in ``categories`` and the labels kept in ``.labels``.
        """
        cells: dict[tuple, object] = {}
        items: dict = {}
        raters: dict = {}
        for row in rows:
            item, rater, value = row
            key = (item, rater)
            if key in cells:
                raise MedevalError(f"rater {rater!r} rated item {item!r} twice; keep one rating per item and rater")
            items.setdefault(item, len(items))
            raters.setdefault(rater, len(raters))
            cells[key] = value
        if not cells:
            raise MedevalError("no ratings")
        cat_index = None
        if categories is not None:
            cat_index = {}
            for i, c in enumerate(categories):
                cat_index[str(c).strip()] = i
                try:
                    cat_index.setdefault(_num_key(float(c)), i)
                except (TypeError, ValueError):
                    pass
        m = np.full((len(items), len(raters)), np.nan)
        for (item, rater), value in cells.items():
            if value is None or (isinstance(value, str) and not value.strip()) or (
                    isinstance(value, float) and math.isnan(value)):
                continue
            if cat_index is not None:
                key = str(value).strip()
                idx = cat_index.get(key)
                if idx is None:
                    try:
                        idx = cat_index.get(_num_key(float(key)))
                    except ValueError:
                        idx = None
                if idx is None:
                    raise MedevalError(f"value {value!r} (item {item!r}, rater {rater!r}) is not one of the "
                                       f"declared categories {list(categories)}")
                m[items[item], raters[rater]] = idx
                continue
            try:
                m[items[item], raters[rater]] = float(value)
            except (TypeError, ValueError):
                raise MedevalError(f"value {value!r} (item {item!r}, rater {rater!r}) is not a number; "
                                   f"declare the categories to use labels") from None
        if cat_index is not None:
            return cls(m, list(items), list(raters), labels=list(categories))
        return cls(m, list(items), list(raters))

    @property
    def n_items(self) -> int:
        return self.values.shape[0]

    @property
    def n_raters(self) -> int:
        return self.values.shape[1]

    def category_values(self) -> np.ndarray | None:
        """Numeric values of the categories when the table holds codes of numeric labels."""
        if self.labels is None:
            return None
        try:
            return np.array([float(x) for x in self.labels])
        except (TypeError, ValueError):
            return None


def _num_key(x: float) -> str:
    return f"num:{x!r}"


def _undefined(name, t: RatingTable, n_pairable, missing, reason, method="") -> Estimate:
    return Estimate(name, None, None, t.n_items, t.n_raters, n_pairable, missing, reason, {}, method)


def check_bootstrap(n_boot, rng):
    """``(n_boot, rng)`` checked: resamples a whole number in [0, BOOT_MAX]; ``rng`` None, a Generator or a seed
    (a whole number in [0, SEED_MAX]). A bad value is an InputError naming the limit, before any work is done."""
    n_boot = check_number(n_boot, what="n_boot", low=0, high=BOOT_MAX, integer=True)
    if rng is not None and not isinstance(rng, np.random.Generator):
        rng = check_seed(rng, what="seed")
    return n_boot, rng


def _rng(rng) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
