"""Tokenisation for lexical metrics on Chinese and English medical text.

NFKC, lowercase, then tokens (``cjk-med-v2``):

* one token per CJK character;
* one per Latin word (a letter, then letters and digits: ``hba1c``, ``t2dm``) or number (decimals kept
  whole: ``10.5``); a number directly followed by letters is split from them, so a unit is its own token
  ("90mmHg" -> ``90``, ``mmhg``; "5mg" -> ``5``, ``mg``);
* one per Greek letter (both cases; NFKC folds the micro sign µ U+00B5 into μ), except that μ directly
  followed by Latin letters is one unit token ("5μg" -> ``5``, ``μg``; "μmol/L" -> ``μmol``, ``l``): μg is
  not g, and "TNF-α" is not "TNF-β";
* one per comparison or unit symbol ``≥ ≤ < > ± % °`` (NFKC turns ℃ into ``°c``, full-width ＞ and ％ into
  > and %), so "HbA1c≥6.5%" differs from "HbA1c<6.5%";
* everything else (other punctuation, ×, /, -) is dropped. Superscripts become ``^digit`` before NFKC so
  that 10⁹/L is not "109".

On text without Greek letters, those symbols, and digits glued to letters, the tokens are exactly those of
the first tokenizer (``cjk-char-v1``, which dropped the symbols and kept "90mmhg" whole):
``tests/test_medical_tokens.py`` compares the two, and ROUGE-1/BLEU-1 stay identical to rouge-score/nltk
given this tokenizer (``tests/test_metrics.py``). rouge-score's default tokenizer keeps only ``[a-z0-9]``
and so scores every Chinese pair as 0 -- never use it for Chinese.

Traditional Chinese: before tokenising, lexical scoring turns traditional characters into simplified ones
with OpenCC (``t2s``; setting ``MEDEVAL_TRADITIONAL_TO_SIMPLIFIED``, on by default): "高血壓" and "高血压" are
the same knowledge. :func:`tokenize` itself never converts; :func:`scoring_tokenizer` gives the function
scoring uses and :func:`scorer_id` its id.

The id (:data:`TOKENIZER_BASE`, plus ``+t2s`` when OpenCC is on: :func:`scorer_id`; :data:`TOKENIZER_ID`
under the default settings) is stored with every lexical score and every threshold set: cut-offs calibrated under one tokenizer do not transfer to another.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

from medeval.core import settings
from medeval.core.i18n import N_, _
from medeval.core.chinese import to_simplified, traditional_gate

TOKENIZER_BASE = "cjk-med-v2"
"""The tokenizer proper (the rules above)."""
T2S_SUFFIX = "+t2s"
TOKENIZER_ID = TOKENIZER_BASE + T2S_SUFFIX
"""The lexical scorer id under the default settings (OpenCC t2s on, then the tokenizer): what lexical scores carry
and what a threshold set records (``engine/thresholds.py``: Table 12 and every set built here)."""
DEFAULT_SCORER_ID = TOKENIZER_ID  # the name engine/thresholds.py imports
PREVIOUS_TOKENIZER_IDS = ("cjk-char-v1",)
"""Ids of earlier tokenizers whose scores older databases may hold (kept, never re-labelled)."""

# 10⁹/L must not become "109": superscripts turn into "^digit" before NFKC
_SUPER = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻")
SUPERSCRIPTS = str.maketrans({s: "^" + d for s, d in zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")})

SYMBOLS = "≥≤<>±%°"
"""Comparison and unit symbols kept as tokens (after NFKC)."""
GREEK = "\u03ac-\u03ce"
"""Lower-case Greek letters (with tonos and final sigma) -- what lowercasing leaves of any Greek letter."""

_TOKEN_RE = re.compile(
    r"[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002a6df]"  # a CJK character
    r"|[a-z][a-z0-9]*(?:\.[0-9]+)?"  # a Latin word (hba1c)
    r"|[0-9]+(?:\.[0-9]+)?"  # a number; letters after it start a new token (90mmhg -> 90, mmhg)
    r"|μ[a-z]+"  # μ + a Latin unit: one token (μg, μmol)
    rf"|[{GREEK}{SYMBOLS}]"  # a Greek letter or a kept symbol
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
    """Tokens of ``text``: CJK characters, Latin words, numbers (split from units), Greek letters, ≥ ≤ < > ± % °.

    >>> tokenize("主要症状为咳嗽、流涕和发烧")
    ['主', '要', '症', '状', '为', '咳', '嗽', '流', '涕', '和', '发', '烧']
    >>> tokenize("CRP 升高, WBC 10.5×10⁹/L")
    ['crp', '升', '高', 'wbc', '10.5', '10', '9', 'l']
    >>> tokenize("HbA1c≥6.5%, BP 140/90mmHg, 5µg, TNF-α, β受体, 38.5℃")
    ['hba1c', '≥', '6.5', '%', 'bp', '140', '90', 'mmhg', '5', 'μg', 'tnf', 'α', 'β', '受', '体', '38.5', '°', 'c']
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


_gate: list = []  # chinese.traditional_gate().search, set by scoring_tokenizer


def _tokenize_simplified(text: str) -> list[str]:
    if text and _gate[0](text):  # only text holding a character t2s could change goes through OpenCC
        text = to_simplified(text)
    return tokenize(text)


def traditional_to_simplified(value: bool | str | None = None) -> bool:
    """Is OpenCC's traditional -> simplified conversion on? ``value`` overrides the setting
    ``MEDEVAL_TRADITIONAL_TO_SIMPLIFIED`` (1/0, true/false, on/off, yes/no); anything else is an error."""
    return settings.value("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", value)  # the bool setting's parser


def scoring_tokenizer(t2s: bool | str | None = None) -> Callable[[str], list[str]]:
    """The tokenizer lexical scoring uses: :func:`tokenize`, after OpenCC t2s when that is on (default: the setting)."""
    if not traditional_to_simplified(t2s):
        return tokenize
    if not _gate:
        _gate.append(traditional_gate().search)
    return _tokenize_simplified


def scorer_id(t2s: bool | str | None = None) -> str:
    """The scorer id of lexical scores: ``cjk-med-v2+t2s`` with OpenCC on, ``cjk-med-v2`` without.

    >>> scorer_id(True), scorer_id(False)
    ('cjk-med-v2+t2s', 'cjk-med-v2')
    """
    return TOKENIZER_BASE + T2S_SUFFIX if traditional_to_simplified(t2s) else TOKENIZER_BASE


# Each scorer's tokens in a sentence (English marked for the catalogue: a report in Chinese says it in Chinese),
# without and with the traditional-to-simplified step
_DESCRIPTIONS = {
    "cjk-char-v1": (N_("tokens: one per CJK character and one per Latin word or number (decimals kept whole); "
                       "punctuation and symbols dropped, numbers not split from units; no traditional-to-simplified "
                       "conversion"),) * 2,
    TOKENIZER_BASE: (N_("tokens: one per CJK character, Latin words, numbers split from units (decimals kept whole), "
                        "Greek letters and ≥ ≤ < > ± % ° kept as tokens; traditional Chinese not converted"),
                     N_("tokens: one per CJK character, Latin words, numbers split from units (decimals kept whole), "
                        "Greek letters and ≥ ≤ < > ± % ° kept as tokens; traditional Chinese converted to simplified "
                        "with OpenCC (t2s)")),
}


def describe(tokenizer_id: str) -> str:
    """One sentence on a lexical scorer id, for a report's methods paragraph (in the current language).

    >>> describe("cjk-med-v2+t2s")  # doctest: +ELLIPSIS
    'tokens: one per CJK character, ..., Greek letters and ≥ ≤ < > ± % ° kept as tokens; traditional Chinese converted to simplified with OpenCC (t2s).'
    """
    tid = str(tokenizer_id or "").strip()
    base, t2s = (tid[: -len(T2S_SUFFIX)], True) if tid.endswith(T2S_SUFFIX) else (tid, False)
    texts = _DESCRIPTIONS.get(base)
    if texts is None:
        return _("tokens: tokenizer {id} (not one of medeval's; its rules are not known here).").format(
            id=tid or _("(unknown)"))
    return _("{sentence}.").format(sentence=_(texts[t2s]))


class Tokenizer:
    """Object form for ``rouge_score.rouge_scorer.RougeScorer(tokenizer=...)``: the scoring tokenizer
    (OpenCC t2s per ``t2s``, default the setting), with its :func:`scorer_id` as ``id``."""

    def __init__(self, t2s: bool | str | None = None):
        self._tokenize = scoring_tokenizer(t2s)
        self.id = scorer_id(t2s)

    def tokenize(self, text: str) -> list[str]:
        return self._tokenize(text)
