"""Tokenisation for lexical metrics on Chinese and English text.

NFKC, lowercase, then one token per CJK character and one per Latin word or
number (decimals kept whole); punctuation is dropped. rouge-score's default
tokenizer keeps only ``[a-z0-9]`` and so scores every Chinese pair as 0 --
never use it for Chinese.

The tokenizer has an id (:data:`TOKENIZER_ID`) that is stored with every lexical
score and every threshold set: cut-offs calibrated under one tokenizer do not
transfer to another.
"""

from __future__ import annotations

import re
import unicodedata

TOKENIZER_ID = "cjk-char-v1"

# 10⁹/L must not become "109": superscripts turn into "^digit" before NFKC
_SUPER = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻")
SUPERSCRIPTS = str.maketrans({s: "^" + d for s, d in zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")})

_TOKEN_RE = re.compile(
    r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002a6df]|[a-z0-9]+(?:\.[0-9]+)?"
)


_SUPER_RE = re.compile("[" + "".join(sorted(_SUPER)) + "]")

# Full-width punctuation common in Chinese text. NFKC maps each of these to exactly this one ASCII
# character (its compatibility decomposition), so NFKC(text with them replaced) == NFKC(text); the
# replacement is a cheap str.replace and often leaves the text already normalised, which skips
# NFKC's slow path. tests/test_metrics.py checks both claims for every entry.
WIDE_PUNCTUATION = (("，", ","), ("；", ";"), ("：", ":"), ("（", "("), ("）", ")"))

_normalize = unicodedata.normalize
_is_normalized = unicodedata.is_normalized
_findall = _TOKEN_RE.findall
_has_super = _SUPER_RE.search


def tokenize(text: str) -> list[str]:
    """Tokens of ``text``: CJK characters, Latin words and numbers.

    >>> tokenize("主要症状为咳嗽、流涕和发烧")
    ['主', '要', '症', '状', '为', '咳', '嗽', '流', '涕', '和', '发', '烧']
    >>> tokenize("CRP 升高, WBC 10.5×10⁹/L")
    ['crp', '升', '高', 'wbc', '10.5', '10', '9', 'l']
    """
    if not text:
        return []
    if not _is_normalized("NFKC", text):  # superscripts are never NFKC-normal, so they are only looked for here
        if _has_super(text):
            text = text.translate(SUPERSCRIPTS)
        for wide, ascii_ in WIDE_PUNCTUATION:
            text = text.replace(wide, ascii_)
        text = _normalize("NFKC", text)
    return _findall(text.lower())


class Tokenizer:
    """Object form for ``rouge_score.rouge_scorer.RougeScorer(tokenizer=...)``."""

    id = TOKENIZER_ID

    def tokenize(self, text: str) -> list[str]:
        return tokenize(text)
