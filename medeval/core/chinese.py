"""Chinese text helpers shared by the whole package: traditional → simplified, and numerals.

* :func:`to_simplified` -- traditional Chinese to simplified with OpenCC (PyPI ``opencc``, the maintained
  converter; its ``t2s`` configuration). "高血壓" and "高血压" are the same knowledge, and a verdict written
  "說法正確" is the same verdict as "说法正确". Text without any CJK character is returned unchanged without
  calling the converter.
* :data:`NUMERALS` -- the one table of Chinese and Roman numerals (一..十, 两, 〇/零, the Roman numerals
  Ⅰ..Ⅻ and ⅰ..ⅻ); :func:`numeral_value` and :func:`parse_int` read them, :func:`chinese_numeral` writes one.
  Every parser of the package (severity levels, judge scores and counts, answer positions) and the demo's
  answers take their numerals from here.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

# Chinese numerals (simplified and traditional forms: 兩 is 两 written traditionally) and the Unicode Roman
# numerals, upper and lower case. NFKC turns "Ⅱ" into "II", so parsers that normalise first also accept ASCII
# Roman numerals through ROMAN_ASCII.
CHINESE_DIGITS: dict[str, int] = {
    "〇": 0, "零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5,
    "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
}
ROMAN: dict[str, int] = {
    **{c: i + 1 for i, c in enumerate("ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫ")},
    **{c: i + 1 for i, c in enumerate("ⅰⅱⅲⅳⅴⅵⅶⅷⅸⅹⅺⅻ")},
}
ROMAN_ASCII: dict[str, int] = {
    "I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10,
    "XI": 11, "XII": 12,
}
NUMERALS: dict[str, int] = {**CHINESE_DIGITS, **ROMAN}
MAX_DIGITS = 18
"""The longest Arabic number the package's readers take as a count, level or position (a quintillion): a longer
run of digits is no number a person wrote -- float() turns 400 nines into ``inf``, int() refuses 5,000 digits."""

# A character class of every single-character numeral, for regular expressions.
NUMERAL_CLASS = "[" + "".join(sorted(NUMERALS)) + "]"
CHINESE_DIGIT_CLASS = "[" + "".join(CHINESE_DIGITS) + "]"
"""The Chinese numerals alone (零 to 十, simplified and traditional), for list markers and counts in Chinese text."""
_CN_INT_RE = re.compile(r"^(?:([一二两兩三四五六七八九])?(十))?([〇零一二两兩三四五六七八九])?$")

_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")
_lock = threading.Lock()

# Code points where OpenCC's t2s dictionaries have keys (ideographs, the compatibility ideographs of its
# normalisation step): scanned once per process to find the characters t2s changes on their own.
_SCAN_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2EBEF),
                (0x2F800, 0x2FA1F), (0x30000, 0x3134F))
# Characters t2s never changes on their own but changes inside a phrase of its TSPhrases dictionary (回覆 -> 回复,
# 深沈 -> 深沉). Not a conversion table -- OpenCC does every conversion -- only the rest of the gate that lets text
# without any character t2s could change skip the converter; tests/test_medical_tokens.py checks it against
# OpenCC's own dictionaries (every entry that changes text holds a character of the gate).
PHRASE_ONLY = "哩坏沈甦瞭藉衹覆"
_gate: list = []


def traditional_gate() -> re.Pattern:
    """A character class of every character whose presence can make t2s change a text (built on first use, ~0.1 s)."""
    if not _gate:
        conv = _converter()
        with _lock:
            if not _gate:
                chars = {ch for lo, hi in _SCAN_RANGES for cp in range(lo, hi + 1)
                         if conv.convert(ch := chr(cp)) != ch}
                bmp = "".join(sorted(ch for ch in chars | set(PHRASE_ONLY) if ord(ch) <= 0xFFFF))
                # re matches a class of BMP characters by table lookup, but a class holding any astral one by a
                # linear scan (25 us a text): any astral character sends the text to the converter instead
                _gate.append(re.compile("[" + bmp + "\U00010000-\U0010FFFF]"))
    return _gate[0]


@lru_cache(maxsize=1)
def _converter():
    import opencc  # imported on first use: a process that never meets Chinese text never loads it

    return opencc.OpenCC("t2s")


def to_simplified(text: str) -> str:
    """``text`` with traditional Chinese characters turned into simplified ones (OpenCC ``t2s``).

    >>> to_simplified("高血壓的說法正確")
    '高血压的说法正确'
    >>> to_simplified("TNF-α ≥ 6.5%")
    'TNF-α ≥ 6.5%'
    """
    if not text or not _CJK_RE.search(text) or not traditional_gate().search(text):
        return text  # nothing t2s could change: the converter is skipped (the common case, and fast)
    conv = _converter()
    with _lock:  # OpenCC objects are not documented as thread-safe; a call takes microseconds
        return conv.convert(text)


def has_cjk(text: str) -> bool:
    """True when ``text`` holds at least one CJK ideograph."""
    return bool(text) and _CJK_RE.search(text) is not None


def numeral_value(ch: str) -> int | None:
    """Value of one numeral character (Chinese or Roman), or of an ASCII Roman numeral; None otherwise.

    >>> numeral_value("三"), numeral_value("Ⅱ"), numeral_value("ⅳ"), numeral_value("IV"), numeral_value("x7")
    (3, 2, 4, 4, None)
    """
    if ch in NUMERALS:
        return NUMERALS[ch]
    return ROMAN_ASCII.get(ch.upper()) if ch.isascii() and ch.isalpha() else None


def parse_int(text: str) -> int | None:
    """An integer written in Arabic digits (at most ``MAX_DIGITS``), Chinese numerals up to 99 (十二, 二十, 二十五) or
    Roman numerals.

    >>> [parse_int(s) for s in ("4", "四", "十", "十二", "二十五", "Ⅲ", "III", "二三", "", "9" * 19)]
    [4, 4, 10, 12, 25, 3, 3, None, None, None]
    """
    text = text.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return int(text) if len(text) <= MAX_DIGITS else None
    if len(text) == 1 or text.isascii():
        return numeral_value(text)
    m = _CN_INT_RE.match(text)
    if not m or not any(m.groups()):
        return None
    tens_digit, ten, unit = m.groups()
    value = 0
    if ten:
        value = 10 * (CHINESE_DIGITS[tens_digit] if tens_digit else 1)
    if unit:
        value += CHINESE_DIGITS[unit]
    return value


_WRITTEN = {v: c for c, v in CHINESE_DIGITS.items() if c not in "〇两兩"}  # 0..10: 零, 一 ... 十 (二, not 两)


def chinese_numeral(n: int) -> str:
    """The usual Chinese numeral of 0..10 (the inverse of :func:`numeral_value` for them).

    >>> "".join(chinese_numeral(n) for n in range(11))
    '零一二三四五六七八九十'
    """
    if n not in _WRITTEN:
        raise ValueError(f"chinese_numeral: {n!r} is not an integer from 0 to 10")
    return _WRITTEN[n]
