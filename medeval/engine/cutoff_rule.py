"""How a value meets a cut-off: the one comparison rule of medeval (issue 21, "scores exactly on a cut-off").

A value *reaches* a cut-off when ``round(value, DECIMALS) >= round(cut, DECIMALS)``, with Python's correctly
rounded ``round`` and ``DECIMALS = 9``. Tiers (:func:`medeval.engine.thresholds.tier` and its SQL), the
calibration search and its bootstrap, the tuning workspace's live counts, the active-sampling intervals and
stopping rule, and the level bands of total scores (:mod:`medeval.engine.totals`) all compare this way.

Why: floating point puts a value that is mathematically on a cut-off a hair below it. ROUGE-1 F1 =
2PR/(P+R) is 0.7499999999999999 for P = 3/5, R = 1 (Table 12's ROUGE-1 enumerated cut-off is 0.75), and a
total score of exactly 3.5 comes out 3.4999999999999996 from some tier shares. The paper's intervals are
half-open, [0.75, 1], so a score on a cut-off belongs to the upper tier. Stored scores are never rounded:
they stay identical to rouge-score's (and sacrebleu's) values; only the comparison rounds.

SQL and sorted arrays compare raw scores with :func:`reach_bound` (the smallest float that reaches a
cut-off), which agrees with :func:`reaches` for every float. SQLite's ``ROUND(x, 9)`` is not used: it
rounds a 15-significant-digit decimal text half away from zero and disagrees with Python's ``round`` on
values near a half-way point (``tests/test_cutoff_exact.py`` shows such values).
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal

import numpy as np

DECIMALS = 9
"""Scores, cut-offs, totals and widths are compared after rounding to this many decimals (see the module doc).

Nine decimals absorb floating-point error (about 1e-16 on a 0-1 score) and stay far below any real
difference between scores computed from token counts (at least 1/(n_1 * n_2) for texts of n tokens)."""


def canonical(value: float) -> float:
    """``value`` as compared with a cut-off: rounded to :data:`DECIMALS` decimals (never stored)."""
    return round(float(value), DECIMALS)


def canonical_array(values) -> np.ndarray:
    """:func:`canonical` of every element, exactly as Python's ``round`` (numpy's ``round`` is not correctly
    rounded near half-way points, so those few are redone one by one)."""
    a = np.asarray(values, dtype=float)
    out = np.round(a, DECIMALS)
    scaled = a * 10.0 ** DECIMALS
    frac = np.abs(scaled - np.floor(scaled) - 0.5)
    redo = ~np.isfinite(scaled) | (np.abs(a) > 1e3) | (frac < 1e-4)
    if redo.any():
        out[redo] = [round(float(x), DECIMALS) for x in a[redo]]
    return out


def reaches(value: float, cut: float) -> bool:
    """Does ``value`` reach ``cut``: ``canonical(value) >= canonical(cut)`` (a value on a cut-off reaches it)."""
    return canonical(value) >= canonical(cut)


@functools.lru_cache(maxsize=4096)
def reach_bound(cut: float) -> float:
    """The smallest float that reaches ``cut``: ``x >= reach_bound(cut)`` exactly when :func:`reaches` (x, cut).

    What SQL (``s.score < ?``) and sorted arrays (``np.searchsorted``) compare raw scores with, so they give
    the same tiers as :func:`tier` without rounding each score. ``round`` is monotone, so the bound is the
    float next to the half-way point ``canonical(cut) - 0.5e-DECIMALS``.
    """
    c = canonical(cut)
    if not math.isfinite(c):
        return c
    b = float(Decimal(repr(c)) - Decimal(5) / Decimal(10) ** (DECIMALS + 1))
    while canonical(math.nextafter(b, -math.inf)) >= c:
        b = math.nextafter(b, -math.inf)
    while canonical(b) < c:
        b = math.nextafter(b, math.inf)
    return b
