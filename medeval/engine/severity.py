"""The Severity Level of an answer (MedDisKEval 3.2.1: the numeric aspect, scored by exact match).

:func:`severity_level` reads "二级", "Ⅱ级", "II级", "level II", "grade 3" as one level (numerals from
:mod:`medeval.core.chinese`), the level word first or, with ``MEDEVAL_SEVERITY_READING=first-number``, the paper's
first number; a range ("三至四级", "3-4级", "level 2 or 3") is no single level: no number, status ``range``,
exact match 0 (``medeval.engine.scoring.severity_ranges`` counts them).
"""

from __future__ import annotations

import re
import unicodedata

from medeval.core.chinese import CHINESE_DIGITS, MAX_DIGITS, parse_int
from medeval.core.settings import value as _setting
from medeval.engine.tokenize import SUPERSCRIPTS as _SUPERSCRIPTS

RANGE = "range"
"""Status of a Severity Level answer that names a range of levels ("三至四级"): no single number."""

# Text is NFKC-normalised and lowercased first, so "Ⅱ" is "ii" and "３" is "3".
# An Arabic number starts where a run of digits starts and takes the whole run (possessive): a search no longer
# reads a long run of digits again from each of its digits (quadratic), and no match changes -- what follows a
# number is never a digit. Runs of spaces before a word are taken whole for the same reason.
# Chinese numerals: the one table, medeval.core.chinese, less 两/兩, a count ("两级", "兩級": two levels), never a level
_CN_NUM = "[" + "".join(sorted(set(CHINESE_DIGITS) - set("两兩"))) + "]"
_NUM = rf"(?:(?<!\d)\d++(?:\.\d++)?|{_CN_NUM}{{1,3}}|(?<![a-z])[ivx]{{1,4}}(?![a-z]))"
_AFTER = r"\s*+(?:级|級|等|度|类|類|期)"  # traditional 級 and 類 too: "Ⅱ級" is level 2, not the number after it
# 第 before a numeral is a level ("第二级", "第3"), not before a time or a count ("病程第3天", "第二胎")
_ORDINAL = rf"第(?!\s*+(?:\d++|{_CN_NUM}{{1,3}})\s*+(?:天|日|周|週|月|年|小时|小時|次|个|個|胎|产|產|代|步|点|點|条|條|例|位))"
_BEFORE = rf"(?:level|grade|class|stage|severity|等[级級]|[级級][别別]|分[级級]|{_ORDINAL})\s*+(?:为|是|:|of|is|=)?\s*+"
_SEP = r"\s*+(?:至|到|~|〜|-|–|—|或者|或是|或|和|与|、|/|\bto\b|\bor\b|\band\b)\s*+"
_RANGE_RE = re.compile(rf"({_NUM})(?:{_AFTER})?{_SEP}(?:{_BEFORE})?({_NUM}){_AFTER}"
                       rf"|{_BEFORE}({_NUM})(?:{_AFTER})?{_SEP}(?:{_BEFORE})?({_NUM})")
_LEVEL_RE = re.compile(rf"({_NUM}){_AFTER}|{_BEFORE}({_NUM})")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_BARE_RANGE_RE = re.compile(r"(\d+)\s*(?:至|到|~|〜|-|–|—|或|or|to)\s*(\d+)(?![\d.])(?!\s*(?:天|日|周|月|年|岁|小时|次|个|"
                            r"mg|ml|g\b|kg|cm|mm|%|/|\^|×|x\b))")


_UNREADABLE = "unreadable"  # a level mention whose number is too long to be a level


def _too_long(token: str) -> bool:
    """An Arabic number with more than ``MAX_DIGITS`` digits before its decimal point is no level (float() makes
    400 nines ``inf``); Chinese and Roman numerals are at most 4 characters."""
    return len(token.partition(".")[0]) > MAX_DIGITS


def _value(token: str) -> float | None:
    """A numeral read with the package's one table (Arabic, Chinese up to 99, Roman)."""
    try:
        return float(token)
    except ValueError:
        v = parse_int(token)
        return None if v is None else float(v)


SEVERITY_READINGS = ("level-word", "first-number")


def severity_level(text: str, reading: str | None = None) -> tuple[float | None, str | None]:
    """(level, status) of a Severity Level answer: ``(2.0, None)`` for one level, ``(None, "range")`` when the
    answer names a range or a choice of levels, ``(None, "no_number")`` when it names none.

    ``reading`` (default: the setting ``MEDEVAL_SEVERITY_READING``) is one of :data:`SEVERITY_READINGS`:

    * ``level-word`` (medeval's): the first level mention decides -- a numeral before 级/等/度/类/期 or after
      level/grade/等级 (Arabic, Chinese or Roman: "Ⅱ级", "II级", "level II") --, so a duration or a score named
      before the level is passed over ("48小时内出现休克，属于一级" is 1, "APACHE II评分25分，危重等级2级" is 2);
      without any level mention, the first Arabic number ("3").
    * ``first-number`` (the paper's rule, MedDisKEval 3.2.1: "the initial number within the text"): the first
      number decides, an Arabic number anywhere or a level mention, whichever comes first (48, 25).

    Roman numerals count only next to a level word, so "I think" is not level 1 in either reading, and a range of
    levels is ``range`` in both. A number with more than ``MAX_DIGITS`` digits (:mod:`medeval.core.chinese`) is no
    level: when it decides, the answer has ``no_number``.

    >>> severity_level("危重等级为Ⅱ级"), severity_level("grade 3"), severity_level("三至四级")
    ((2.0, None), (3.0, None), (None, 'range'))
    >>> severity_level("level 2 or 3"), severity_level("无法判断")
    ((None, 'range'), (None, 'no_number'))
    >>> severity_level("48小时内出现休克，属于一级", "level-word"), severity_level("48小时内出现休克，属于一级", "first-number")
    ((1.0, None), (48.0, None))
    """
    if reading is None:
        reading = _setting("MEDEVAL_SEVERITY_READING")
    elif reading not in SEVERITY_READINGS:
        raise ValueError(f"reading must be one of {', '.join(SEVERITY_READINGS)}, not {reading!r}")
    t = unicodedata.normalize("NFKC", (text or "").translate(_SUPERSCRIPTS)).lower()
    found = []  # (start, its level: a number, None for a range, or _UNREADABLE) of each level mention
    r = _RANGE_RE.search(t)
    if r:
        a, b = (r.group(1), r.group(2)) if r.group(1) is not None else (r.group(3), r.group(4))
        if _too_long(a) or _too_long(b):
            found.append((r.start(), _UNREADABLE))
        elif (va := _value(a)) is not None and (vb := _value(b)) is not None:
            found.append((r.start(), None if va != vb else va))
    m = _LEVEL_RE.search(t)
    if m:
        token = m.group(1) if m.group(1) is not None else m.group(2)
        v = _UNREADABLE if _too_long(token) else _value(token)
        if v is not None:
            found.append((m.start(), v))
    n = _NUMBER_RE.search(t) if reading == "first-number" or not found else None
    if found and n is not None and n.start() < min(f[0] for f in found):
        found = []  # the paper's reading: an Arabic number before the first level mention decides
    if found:  # the first level mention decides; a range starting at the same place wins
        value = min(found, key=lambda f: (f[0], f[1] is not None))[1]
        if value is _UNREADABLE:
            return None, "no_number"
        return (None, RANGE) if value is None else (value, None)
    # no level mention before it: the first Arabic number ("3"), unless it opens a range ("3-4")
    if not n or _too_long(n.group(0)):
        return None, "no_number"
    b = _BARE_RANGE_RE.match(t, n.start())
    if b and float(b.group(1)) != float(b.group(2)) and max(float(b.group(1)), float(b.group(2))) <= 10:
        return None, RANGE
    return float(n.group(0)), None


def first_number(text: str) -> float | None:
    """The level of a numeric answer (:func:`severity_level`); None when it has none or names a range.

    >>> first_number("危重等级：３级")
    3.0
    >>> first_number("属于二级") , first_number("无法判断"), first_number("3-4级")
    (2.0, None, None)
    """
    return severity_level(text)[0]
