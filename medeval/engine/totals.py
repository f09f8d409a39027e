"""The paper's model-level arithmetic: tier shares, total score (0·CW + 5·PC + 10·BC) and level.

Pure functions of tier counts, shared by the tier report (``medeval.reports.tier_report``) and the live
tuning workspace (``medeval.calibration.tuning``), so both compute a leaderboard the same way.

Shares and totals are computed exactly from the integer tier counts (``fractions.Fraction``) and only then
turned into floats, so a total that is exactly 3.5 is 3.5, not 3.4999999999999996 (what adding the float
shares gives for some counts); the level compares the total with its bands by the package's one rule
(:mod:`medeval.engine.cutoff_rule`: after rounding to 9 decimals, a total on a band's bound reaches it).

**Levels are medeval's bands, not the paper's.** MedDisKEval (§4.2.2, Table 4) "categorize[s] LLMs into four
levels based on these total scores" but states no cut-offs: Table 4 only shows which of its 12 models fell in
which level. The bands are a setting, ``MEDEVAL_LEVEL_BANDS`` (default ``3.5,3.0,2.0``: level 1 from 3.5,
level 2 from 3.0, level 3 from 2.0, level 4 below). The defaults are round numbers inside the gaps between
Table 4's groups -- level 1 (4.00) vs level 2 (3.14 ... 3.00): a bound in (3.14, 4.00]; level 2 vs level 3
(2.75 ... 2.20): in (2.75, 3.00]; level 3 vs level 4 (1.84): in (1.84, 2.20] -- so they reproduce Table 4's
grouping of its models (:func:`table4_gaps`, :func:`reproduces_table4`; tested), and nothing more: any bounds
in those gaps would too.
"""

from __future__ import annotations

import functools
from fractions import Fraction

from medeval.core import settings
from medeval.core.errors import MedevalError
from medeval.core.i18n import _
from medeval.engine.cutoff_rule import reaches
from medeval.engine.registry import report_metrics

LEVEL_SETTING = "MEDEVAL_LEVEL_BANDS"
DEFAULT_LEVEL_BANDS = (3.5, 3.0, 2.0)

# MedDisKEval Table 4 as printed: (model, total score to 2 decimals, level)
TABLE4 = (("GPT-3.5 Turbo", 4.00, 1), ("Vicuna-7B", 3.14, 2), ("Baichuan-7B", 3.10, 2), ("HuatuoGPT-7B", 3.02, 2),
          ("PULSE-7B", 3.00, 2), ("DoctorGLM-6B", 2.75, 3), ("ChatGLM-6B", 2.70, 3), ("BianQue2-6B", 2.41, 3),
          ("LLaMA-7B", 2.36, 3), ("ChatDoctor-7B", 2.26, 3), ("BenTsao-7B", 2.20, 3), ("BLOOMZ-7B", 1.84, 4))


@functools.lru_cache(maxsize=16)
def parse_level_bands(raw: str) -> tuple[float, ...]:
    """``"3.5,3.0,2.0"`` -> (3.5, 3.0, 2.0): the setting's own parser (``settings``' declaration of
    ``MEDEVAL_LEVEL_BANDS``: 1 to 9 decreasing totals in [0, 10]), its refusal said in the bands' words."""
    try:
        return settings.setting(LEVEL_SETTING).parse(raw)
    except MedevalError:
        raise settings.level_bands_refusal(raw) from None


def level_bands() -> tuple[float, ...]:
    """The lower bound of each level's total score, best level first (``MEDEVAL_LEVEL_BANDS``, read now)."""
    return parse_level_bands(settings.get(LEVEL_SETTING))


def level(total: float, bands: tuple[float, ...] | None = None) -> int:
    """Level 1 (best) to ``len(bands) + 1`` of a total score; a total on a band's bound reaches that level.

    >>> level(4.00), level(3.00), level(2.20), level(1.84), level(3.4999999999999996)
    (1, 2, 3, 4, 1)
    """
    bands = level_bands() if bands is None else bands
    for i, bound in enumerate(bands):
        if reaches(total, bound):
            return i + 1
    return len(bands) + 1


def _num(x: float) -> str:
    s = f"{x:.2f}".rstrip("0")
    return s + "0" if s.endswith(".") else s


def levels_text(bands: tuple[float, ...] | None = None) -> str:
    """``≥ 3.5 → 1, ≥ 3.0 → 2, ≥ 2.0 → 3, else 4``."""
    bands = level_bands() if bands is None else bands
    return _("{bands}, else {level}").format(
        bands=_(", ").join(f"≥ {_num(b)} → {i}" for i, b in enumerate(bands, start=1)), level=len(bands) + 1)


def table4_gaps() -> list[tuple[float, float]]:
    """Per boundary between Table 4's levels k and k+1: (highest total of level k+1, lowest total of level k).

    A bound ``b`` reproduces that boundary of the paper's grouping when ``highest < b <= lowest``.
    """
    levels = sorted({lvl for _m, _t, lvl in TABLE4})
    return [(max(t for _m, t, lv in TABLE4 if lv == k + 1), min(t for _m, t, lv in TABLE4 if lv == k))
            for k in levels[:-1]]


def reproduces_table4(bands: tuple[float, ...] | None = None) -> bool:
    """Do ``bands`` put each of Table 4's models (its printed total) in the level the paper gives it?"""
    bands = level_bands() if bands is None else bands
    return all(level(total, bands) == lvl for _m, total, lvl in TABLE4)


def levels_source_text(bands: tuple[float, ...] | None = None) -> str:
    """Where the level bands come from, in a sentence, for a report's methods paragraph."""
    bands = level_bands() if bands is None else bands
    gaps = ", ".join(f"({lo:.2f}, {hi:.2f}]" for lo, hi in table4_gaps())
    if reproduces_table4(bands):
        return _("medeval's own level bands (setting {setting}), not the paper's: MedDisKEval's Table 4 puts its 12 "
                 "models into four levels without stating cut-offs; these bounds lie in the gaps between its groups "
                 "({gaps}) and so reproduce its grouping").format(setting=LEVEL_SETTING, gaps=gaps)
    return _("medeval's own level bands (setting {setting}), not the paper's: MedDisKEval's Table 4 puts its 12 "
             "models into four levels without stating cut-offs; these bounds do not reproduce its grouping (bounds "
             "in {gaps} would)").format(setting=LEVEL_SETTING, gaps=gaps)


def total_score(shares):
    """0·CW + 5·PC + 10·BC of the shares (floats give a float, Fractions an exact Fraction)."""
    return 0 * shares[0] + 5 * shares[1] + 10 * shares[2]


def _shares(counts: dict[int, int]) -> tuple[Fraction, Fraction, Fraction] | None:
    n = sum(counts.values())
    if n == 0:
        return None
    return tuple(Fraction(counts.get(t, 0), n) for t in (0, 1, 2))  # type: ignore[return-value]


def summarise(counts_by_metric: dict[str, dict[int, int]]) -> dict:
    """Shares and total score per report metric, and averaged over the metrics present (with the level).

    Exact arithmetic on the counts; the shares and totals returned are the floats nearest the exact values.
    """
    bands = level_bands()
    per_metric, exact = {}, []
    for m in report_metrics() + (("exact_match",) if "exact_match" in counts_by_metric else ()):
        s = _shares(counts_by_metric.get(m, {}))
        if s is not None:
            exact.append(s)
        per_metric[m] = None if s is None else {
            "n": sum(counts_by_metric[m].values()),
            "completely_wrong": float(s[0]), "partially_correct": float(s[1]), "basically_correct": float(s[2]),
            "total_score": float(total_score(s))}
    if exact:
        avg = tuple(sum((s[k] for s in exact), Fraction(0)) / len(exact) for k in range(3))
        total = float(total_score(avg))
        averaged = {"metrics": [m for m, v in per_metric.items() if v],
                    "completely_wrong": float(avg[0]), "partially_correct": float(avg[1]),
                    "basically_correct": float(avg[2]), "total_score": total, "level": level(total, bands)}
    else:
        averaged = None
    return {"per_metric": per_metric, "averaged": averaged}
