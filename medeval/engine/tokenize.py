"""Tokenisation for lexical metrics on Chinese and English medical text.

One normalisation, then tokens (``cjk-med-v3``). Every lexical path goes through :func:`normalize`, in this
one order: knowledge-base references and model answers, with or without a matched prompt pattern (post-processing,
``engine/postprocess.py``, normalises through it, and :func:`tokenize` applies it again, which changes nothing:
``normalize(normalize(t)) == normalize(t)``). So the same text gives the same tokens whichever path stored it. (The
texts embedded for cosine are the stored texts: an answer kept whole is embedded as written.)

**Normalisation** (:func:`normalize`), in order:

1. superscripts: a run directly after a digit is an exponent and becomes ``^`` + its digits ("10¹²" ->
   "10^12", as an answer writes it; NFKC alone would make it "1012"); any other run is written plainly
   ("cm³" -> "cm3", "Mg²⁺" -> "Mg2+", "Cl⁻" -> "Cl-"), as the same unit or ion is written without them;
2. circled, parenthesised and full-stop numbers (① ⑴ ⒈ ❶ ➀ ⓫ ㉑ …) are list markers, not content: each becomes a
   line break (NFKC would make ③ the number 3);
3. full-width punctuation, then NFKC (full-width letters, digits, ＋ － ＞ ％ fold to ASCII; ℃ -> °C;
   subscripts -> digits: H₂O = H2O, CO₂ = CO2);
4. variants fold into one symbol: ≧ ⩾ -> ≥, ≦ ⩽ -> ≤; the minus sign −, the hyphens ‐ ‑ and ➖ -> "-", ➕ -> "+";
   ⇧ ⇑ ⬆ ↗ -> ↑ and ⇩ ⇓ ⬇ ↘ -> ↓ (a direction is the finding, not the arrow's style);
5. spellings fold: ">=" -> ≥, "<=" -> ≤, "+/-" and "(+-)" -> ±; a caret between a letter and a digit or sign
   goes ("cm^3" = "cm3" = "cm³"); "x", "X", "*" or "×" between a number and "10^" is the multiplication sign
   ("100 x 10^9/L" = "100×10⁹/L").

**Tokens**, after lowercasing the normalised text:

* one token per CJK character;
* one per Latin word (a letter, then letters and digits: ``hba1c``, ``t2dm``, ``mg2``) or number (decimals
  kept whole: ``10.5``); a number directly followed by letters is split from them, so a unit is its own token
  ("90mmHg" -> ``90``, ``mmhg``; "5mg" -> ``5``, ``mg``); an exponent's caret is dropped ("10^9" -> ``10``, ``9``);
* one per Greek letter (both cases; NFKC folds the micro sign µ U+00B5 into μ), except that μ directly
  followed by Latin letters is one unit token ("5μg" -> ``5``, ``μg``; "μmol/L" -> ``μmol``, ``l``): μg is
  not g, and "TNF-α" is not "TNF-β";
* one per comparison or unit symbol ``≥ ≤ < > ± % °``, so "HbA1c≥6.5%" differs from "HbA1c<6.5%";
* polarity and direction markers, each run one token (its length is the grade: "+++" is not "+"):

  - ``+``, ``++``, ``+++`` …: every plus ("尿蛋白(+)", "HER2+", "Mg2+"); brackets around it are dropped, so
    "(+)" and "+" are the same token;
  - ``↑`` / ``↓`` (and ``↑↑``): every arrow;
  - ``-`` only where a minus marks a finding or a sign, never where it joins two words or numbers:
    (a) it ends a word or a bracket -- after a letter, digit, CJK character, Greek letter, "(", "[", "/", ":",
    "%", "°" or ")", and followed by neither a word character nor an opening bracket ("(-)", "阴性(-)",
    "ER-/PR-", "HBsAg-、", "尿糖:-", "(ANA)-"; not the range "(+)-(++)");
    (b) it stands alone after one space, with text before it on its line, and ends the clause (end of text or
    line, or , ; . : ) ] 、 。 ! ? / | next: "HBsAg −");
    (c) it is a sign: directly before a digit, after the start of the text, a space, an opening bracket,
    one of ``: = ≥ ≤ < > ~ 〜 , ; / ^ 、`` or one of 为 是 值 约 达 至 到 ("T值为-2.5", "BE -3", "≤-2.5", "10^-3");
  - so a hyphen inside a name or a range gives no token: "TNF-α", "COVID-19", "IL-6", "β-内酰胺", "抗-HBs",
    "2-3天", "3个月-6个月", "5%-10%", and a markdown bullet ("- 咳嗽") or rule ("---") neither;
* everything else (other punctuation, ×, /, ^, other arrows, markdown) is dropped.

Departures a reader may notice: "(+)" and "阳性" are different tokens (a marker is not translated into a
word); "2+" (a dipstick grade written with a digit) is ``2``, ``+``, not ``++``; ASCII list numbers ("1.", "2)")
stay number tokens, as they cannot be told from content; a hyphen ending an English word before a space
("pre- and post-") is read as a minus; a markdown quote's ">" is the comparison token. And, as for any unigram
metric, which marker belongs to which test is not seen: "HBsAg(+)，抗-HBs(-)" and "HBsAg(-)，抗-HBs(+)" have the
same tokens.

On text without Greek letters, those symbols and markers, superscripts, circled numbers and digits glued to
letters, the tokens are exactly those of the first tokenizer (``cjk-char-v1``, which dropped the symbols and
kept "90mmhg" whole): ``tests/test_medical_tokens.py`` compares the two, ``tests/test_symbol_tokens.py`` holds
the markers' table and the path-identity and metamorphic properties, and ROUGE-1/BLEU-1 stay identical to
rouge-score/nltk given this tokenizer (``tests/test_metrics.py``). rouge-score's default tokenizer keeps only
``[a-z0-9]`` and so scores every Chinese pair as 0 -- never use it for Chinese.

Traditional Chinese: lexical scoring turns traditional characters into simplified ones with OpenCC (``t2s``;
setting ``MEDEVAL_TRADITIONAL_TO_SIMPLIFIED``, on by default) after normalising: "高血壓" and "高血压" are the
same knowledge. :func:`tokenize` itself never converts; :func:`scoring_tokenizer` gives the function scoring
uses and :func:`scorer_id` its id.

The id (:data:`TOKENIZER_BASE`, plus ``+t2s`` when OpenCC is on: :func:`scorer_id`; :data:`TOKENIZER_ID`
under the default settings) is stored with every lexical score and every threshold set: cut-offs calibrated
under one tokenizer do not transfer to another. Scores under an earlier id (:data:`PREVIOUS_TOKENIZER_IDS`)
are kept as history; migration ``m030_table12_symbol_tokens`` moves the built-in Table 12 set to this one.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

from medeval.core import settings
from medeval.core.i18n import N_, _
from medeval.core.chinese import to_simplified, traditional_gate

TOKENIZER_BASE = "cjk-med-v3"
"""The tokenizer proper (the rules above)."""
T2S_SUFFIX = "+t2s"
TOKENIZER_ID = TOKENIZER_BASE + T2S_SUFFIX
"""The lexical scorer id under the default settings (OpenCC t2s on, then the tokenizer): what lexical scores carry
and what a threshold set records (``engine/thresholds.py``: Table 12 and every set built here)."""
DEFAULT_SCORER_ID = TOKENIZER_ID  # the name engine/thresholds.py imports
PREVIOUS_TOKENIZER_IDS = ("cjk-char-v1", "cjk-med-v2")
"""Ids of earlier tokenizers whose scores older databases may hold (kept, never re-labelled)."""

_SUPER = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻")
SUPERSCRIPTS = str.maketrans({s: "^" + d for s, d in zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")})
"""Each superscript as ``^`` + its character (post-processing's severity levels read numbers with it)."""
_SUPER_PLAIN = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SUPER_RUN_RE = re.compile("([0-9０-９]?)([⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+)")


def _super_run(m: re.Match) -> str:
    # after a digit an exponent (10¹² -> 10^12); after anything else a unit's or an ion's digits (cm³ -> cm3)
    return (m.group(1) + "^" if m.group(1) else "") + m.group(2).translate(_SUPER_PLAIN)


def _numbered_markers() -> str:
    ranges = ((0x2460, 0x24FF), (0x2776, 0x2793), (0x3251, 0x325F), (0x32B1, 0x32BF))
    out = []
    for lo, hi in ranges:
        for c in range(lo, hi + 1):
            name = unicodedata.name(chr(c), "")
            if any(w in name for w in ("DIGIT", "NUMBER")):  # not the circled letters Ⓐ ⓐ of 0x24B6-0x24E9
                out.append(chr(c))
    return "".join(out)


LIST_NUMBERS = _numbered_markers()
"""Circled, parenthesised, full-stop and dingbat numbers: list markers, each turned into a line break."""
_LIST_BREAKS = str.maketrans({c: "\n" for c in LIST_NUMBERS})

FOLDS = {"≧": "≥", "⩾": "≥", "≦": "≤", "⩽": "≤", "−": "-", "‐": "-", "➖": "-", "➕": "+",
         "⇧": "↑", "⇑": "↑", "⬆": "↑", "↗": "↑", "⇩": "↓", "⇓": "↓", "⬇": "↓", "↘": "↓"}
"""Symbol variants (after NFKC) and the one symbol each is read as."""
_FOLD_TABLE = str.maketrans(FOLDS)

_SEQ_RE = re.compile(r"(?P<ge>>=)|(?P<le><=)|(?P<pm>\+/-|(?<=\()\+-(?=\)))|(?<=[A-Za-z])\^+(?=[0-9+-])"
                     r"|(?<=[0-9])[ \t]*[xX×*][ \t]*(?=10\^)(?P<times>)")


def _seq(m: re.Match) -> str:
    if m.group("ge"):
        return "≥"
    if m.group("le"):
        return "≤"
    if m.group("pm"):
        return "±"
    return "×" if m.group("times") is not None else ""


# What can make a text that NFKC leaves unchanged still change here: a variant or a list number that NFKC keeps, a
# caret, or a spelling of step 5. Text with none of them and NFKC-normal is returned as it is (the common case); the
# rare characters are one class search, the spellings substring tests (several times faster than one regex for all).
_RARE_RE = re.compile("[" + re.escape("".join(FOLDS) + LIST_NUMBERS) + r"^]")
_has_rare = _RARE_RE.search
_has_super = re.compile("[" + "".join(sorted(_SUPER)) + "]").search
_has_before_nfkc = re.compile("[" + "".join(sorted(_SUPER)) + re.escape(LIST_NUMBERS) + "]").search


def _has_spelling(text: str) -> bool:
    """Does ``text`` hold a spelling that step 5 folds (>=, <=, +/-, (+-)? Substring tests, cheapest first."""
    return ("=" in text and (">=" in text or "<=" in text)) or ("+" in text and ("+/-" in text or "(+-" in text))


def _has_special(text: str) -> bool:
    return bool(_has_rare(text) or _has_spelling(text))


# Full-width punctuation common in Chinese text. NFKC maps each of these to exactly this one ASCII
# character (its compatibility decomposition), so NFKC(text with them replaced) == NFKC(text); the
# replacement is a cheap str.replace and often leaves the text already normalised, which skips
# NFKC's slow path. tests/test_metrics.py checks both claims for every entry.
WIDE_PUNCTUATION = (("，", ","), ("；", ";"), ("：", ":"), ("（", "("), ("）", ")"))

_normalize = unicodedata.normalize
_is_normalized = unicodedata.is_normalized


def normalize(text: str) -> str:
    """The one normalisation every lexical path applies (the module docstring's steps 1-5); idempotent.

    >>> normalize("PLT 100×10⁹/L，Mg²⁺ ≧ 1.2"), normalize("①咳嗽②发热"), normalize("尿糖（－），HbA1c >= 6.5％")
    ('PLT 100×10^9/L,Mg2+ ≥ 1.2', '\\n咳嗽\\n发热', '尿糖(-),HbA1c ≥ 6.5%')
    """
    if not text:
        return ""
    if not _is_normalized("NFKC", text):
        if _has_before_nfkc(text):  # a superscript or a list number: every step
            return _all_steps(text)
        for wide, ascii_ in WIDE_PUNCTUATION:  # steps 1 and 2 have nothing to do: step 3 alone
            text = text.replace(wide, ascii_)
        text = _normalize("NFKC", text)
    return _all_steps(text) if _has_rare(text) or _has_spelling(text) else text


def _all_steps(text: str) -> str:
    """Steps 1-5 on the whole text, repeated until nothing changes (one round for any realistic text; a combining
    mark next to a removed caret may need another)."""
    for _round in range(3):
        if _has_super(text):
            text = _SUPER_RUN_RE.sub(_super_run, text)
        text = text.translate(_LIST_BREAKS)
        for wide, ascii_ in WIDE_PUNCTUATION:
            text = text.replace(wide, ascii_)
        text = _normalize("NFKC", text).translate(_FOLD_TABLE)
        text = _SEQ_RE.sub(_seq, text)
        if _is_normalized("NFKC", text):
            break
    return text


_CJK = r"\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002a6df"
SYMBOLS = "≥≤<>±%°"
"""Comparison and unit symbols kept as tokens (after normalising)."""
GREEK = "\u03ac-\u03ce"
"""Lower-case Greek letters (with tonos and final sigma) -- what lowercasing leaves of any Greek letter."""
_WORD = rf"a-z0-9{GREEK}μ{_CJK}"  # what a hyphen joins
_CLAUSE_END = r"[ \t]*(?:[\n,;.:)\]、。!?/|]|\Z)"
_SIGN_AFTER = r"\s(\[:=≥≤<>~〜,;/^、为是值约达至到"

_TOKEN_RE = re.compile(
    rf"[{_CJK}]"  # a CJK character
    r"|[a-z][a-z0-9]*(?:\.[0-9]+)?"  # a Latin word (hba1c)
    r"|[0-9]+(?:\.[0-9]+)?"  # a number; letters after it start a new token (90mmhg -> 90, mmhg)
    r"|μ[a-z]+"  # μ + a Latin unit: one token (μg, μmol)
    rf"|[{GREEK}{SYMBOLS}]"  # a Greek letter or a kept symbol
    r"|\+\+*|↑↑*|↓↓*"  # a plus or an arrow, a run as one token (written x x*: "x+" would cost every text a tenth)
    r"|-(?:"  # a minus, where it marks a finding or a sign:
    rf"(?<=[{_WORD}(\[/:%°)]-)-*(?![{_WORD}(\[-])"  # (a) ending a word or a bracket: (-), ER-, 尿糖:-
    rf"|(?<=\S[ \t]-)-*(?={_CLAUSE_END})"  # (b) alone after a space, ending the clause: HBsAg -
    rf"|(?:(?<=^-)|(?<=[{_SIGN_AFTER}]-))(?=[0-9]))"  # (c) a sign: -2.5, T值为-2.5, 10^-3
)

_findall = _TOKEN_RE.findall


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` (normalised first): CJK characters, Latin words, numbers (split from units), Greek letters,
    ≥ ≤ < > ± % °, and the polarity and direction markers + - ↑ ↓.

    >>> tokenize("主要症状为咳嗽、流涕和发烧")
    ['主', '要', '症', '状', '为', '咳', '嗽', '流', '涕', '和', '发', '烧']
    >>> tokenize("CRP 升高, WBC 10.5×10⁹/L")
    ['crp', '升', '高', 'wbc', '10.5', '10', '9', 'l']
    >>> tokenize("HbA1c≥6.5%, BP 140/90mmHg, 5µg, TNF-α, β受体, 38.5℃")
    ['hba1c', '≥', '6.5', '%', 'bp', '140', '90', 'mmhg', '5', 'μg', 'tnf', 'α', 'β', '受', '体', '38.5', '°', 'c']
    >>> tokenize("尿蛋白(++)，尿糖(－)，血钾↓，ER-/HER2+，T值≦−2.5")
    ['尿', '蛋', '白', '++', '尿', '糖', '-', '血', '钾', '↓', 'er', '-', 'her2', '+', 't', '值', '≤', '-', '2.5']
    """
    if not text:
        return []
    return _findall(normalize(text).lower())


_gate: list = []  # [t2s gate, t2s gate or a rare character of normalize] (searches), set by scoring_tokenizer


def _tokenize_simplified(text: str) -> list[str]:
    if not text:
        return []
    if _is_normalized("NFKC", text) and not _gate[1](text) and not _has_spelling(text):
        return _findall(text.lower())  # the common case: nothing to normalise, nothing OpenCC would change
    # normalise, then OpenCC (it converts what NFKC made of compatibility ideographs), then the tokens
    text = normalize(text)
    if _gate[0](text):  # only text holding a character t2s could change goes through OpenCC
        return _findall(normalize(to_simplified(text)).lower())
    return _findall(text.lower())


def traditional_to_simplified(value: bool | str | None = None) -> bool:
    """Is OpenCC's traditional -> simplified conversion on? ``value`` overrides the setting
    ``MEDEVAL_TRADITIONAL_TO_SIMPLIFIED`` (1/0, true/false, on/off, yes/no); anything else is an error."""
    return settings.value("MEDEVAL_TRADITIONAL_TO_SIMPLIFIED", value)  # the bool setting's parser


def scoring_tokenizer(t2s: bool | str | None = None) -> Callable[[str], list[str]]:
    """The tokenizer lexical scoring uses: :func:`tokenize`, after OpenCC t2s when that is on (default: the setting)."""
    if not traditional_to_simplified(t2s):
        return tokenize
    if not _gate:
        gate = traditional_gate()
        assert gate.pattern.startswith("[") and gate.pattern.endswith("]")  # one character class
        _gate.extend((gate.search, re.compile(gate.pattern[:-1] + _RARE_RE.pattern[1:]).search))
    return _tokenize_simplified


def scorer_id(t2s: bool | str | None = None) -> str:
    """The scorer id of lexical scores: ``cjk-med-v3+t2s`` with OpenCC on, ``cjk-med-v3`` without.

    >>> scorer_id(True), scorer_id(False)
    ('cjk-med-v3+t2s', 'cjk-med-v3')
    """
    return TOKENIZER_BASE + T2S_SUFFIX if traditional_to_simplified(t2s) else TOKENIZER_BASE


# Each scorer's tokens in a sentence (English marked for the catalogue: a report in Chinese says it in Chinese),
# without and with the traditional-to-simplified step
_DESCRIPTIONS = {
    "cjk-char-v1": (N_("tokens: one per CJK character and one per Latin word or number (decimals kept whole); "
                       "punctuation and symbols dropped, numbers not split from units; no traditional-to-simplified "
                       "conversion"),) * 2,
    "cjk-med-v2": (N_("tokens: one per CJK character, Latin words, numbers split from units (decimals kept whole), "
                      "Greek letters and ≥ ≤ < > ± % ° kept as tokens; traditional Chinese not converted"),
                   N_("tokens: one per CJK character, Latin words, numbers split from units (decimals kept whole), "
                      "Greek letters and ≥ ≤ < > ± % ° kept as tokens; traditional Chinese converted to simplified "
                      "with OpenCC (t2s)")),
    TOKENIZER_BASE: (N_("tokens: one per CJK character, Latin words, numbers split from units (decimals kept whole), "
                        "Greek letters, ≥ ≤ < > ± % ° and the markers + - ↑ ↓ kept as tokens (a minus only where it "
                        "marks a finding or a sign, not in a hyphenated name or a range); one normalisation on every "
                        "path (superscripts, circled list numbers, ≧ as ≥); traditional Chinese not converted"),
                     N_("tokens: one per CJK character, Latin words, numbers split from units (decimals kept whole), "
                        "Greek letters, ≥ ≤ < > ± % ° and the markers + - ↑ ↓ kept as tokens (a minus only where it "
                        "marks a finding or a sign, not in a hyphenated name or a range); one normalisation on every "
                        "path (superscripts, circled list numbers, ≧ as ≥); traditional Chinese converted to "
                        "simplified with OpenCC (t2s)")),
}


def describe(tokenizer_id: str) -> str:
    """One sentence on a lexical scorer id, for a report's methods paragraph (in the current language).

    >>> describe("cjk-med-v3+t2s")  # doctest: +ELLIPSIS
    'tokens: one per CJK character, ..., Greek letters, ≥ ≤ < > ± % ° and the markers + - ↑ ↓ kept as tokens ...; traditional Chinese converted to simplified with OpenCC (t2s).'
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
