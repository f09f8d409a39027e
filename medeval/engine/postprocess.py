"""Post-processing of model answers (MedDisKEval section 3.2.1, Appendix D).

1. :func:`extract_answer` -- take the answer part out of patterns the prompt
   invites ("<disease>的<aspect>为/包括 ...", "<aspect> of <disease> is/include ...");
   the response is left unchanged when no pattern matches.
2. Enumerated aspects: :func:`split_entities` into a list (a rule-based
   splitter; :data:`ENTITY_EXTRACTORS` lets a model-based extractor replace it),
   then joined with spaces for scoring.
3. Numeric aspect: :func:`first_number` (None when the text has no number;
   "二级" counts as 2).

"None"/"无" answers are kept as what they are. The raw text is always kept
next to the processed one.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Callable

from medeval.engine.aspects import BY_NAME, DECLARATIVE, ENUMERATED, NUMERIC, Aspect
from medeval.engine.tokenize import SUPERSCRIPTS as _SUPERSCRIPTS

_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_CN_LEVEL_RE = re.compile(r"([零一二两三四五六七八九十])\s*(?:级|等|度|类)")
NONE_ANSWERS = {"无", "没有", "暂无", "none", "none.", "n/a", "无。", "不详", "nil"}


@dataclass(frozen=True)
class Processed:
    text: str  # what is scored (entities joined with spaces for enumerated aspects)
    entities: tuple[str, ...] = ()
    number: float | None = None
    note: str | None = None  # 'pattern', 'no_number', 'none_answer', 'empty'


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "")


def _aspect_names(aspect: Aspect) -> list[str]:
    names = [aspect.name_zh, aspect.name, *aspect.aliases]
    return sorted({n for n in names if n}, key=len, reverse=True)


_ZH_VERBS = "为|是|包括|有|主要有|主要包括|一般为|通常为"
_EN_VERBS = "is|are|includes?|include"


@functools.lru_cache(maxsize=1024)
def _names_alternation(aspect: Aspect) -> str:
    return "|".join(re.escape(_norm(n)) for n in _aspect_names(aspect))


@functools.lru_cache(maxsize=1024)
def _zh_after_disease(alt: str) -> re.Pattern:
    """"<disease>的<aspect>为/包括 …" from just after the disease name: one pattern per aspect, any disease."""
    return re.compile(rf"\s*的\s*(?:常见|主要)?\s*(?:{alt})\s*(?:{_ZH_VERBS})\s*[:：]?\s*(.+)", re.S)


@functools.lru_cache(maxsize=1 << 14)
def _en_pattern(disease: str, alt: str) -> re.Pattern:
    """"<aspect> of <disease> is/include …" (any case): compiled once per (disease, aspect) that needs it."""
    return re.compile(rf"(?:the\s+)?(?:common\s+|main\s+)?(?:{alt})\s+(?:of|for)\s+{re.escape(disease)}\s+"
                      rf"(?:{_EN_VERBS})\s*:?\s*(.+)", re.S | re.I)


def extract_answer(response: str, disease: str, aspect: Aspect) -> tuple[str, bool]:
    """Return (answer part, matched?) for the prompt patterns; the whole response when none matches.

    The first pattern that finds a match decides (a match whose answer part is blank falls through to
    the next pattern). Written for speed at knowledge-base scale -- thousands of (disease, aspect)
    pairs, where ``re``'s 512-pattern cache overflowed and every response recompiled its patterns --
    and equal, answer for answer, to searching the two patterns built for each call
    (``tests/test_postprocess.py`` compares them):

    * the Chinese pattern begins with the disease name, so its leftmost match is the first place the
      name occurs from which the rest of the pattern (compiled once per aspect) matches;
    * the English pattern contains the name (any case), "of"/"for" and a verb, so it is compiled and
      searched only when the answer contains all of them.
    """
    text = _norm(response).strip()
    if not text:
        return "", False
    d = _norm(disease).strip()
    folded = text.casefold()
    if d not in text and d.casefold() not in folded:  # both patterns need the disease name
        return (response or "").strip(), False
    alt = _names_alternation(aspect)
    rest, i = _zh_after_disease(alt), text.find(d)
    while i != -1:
        m = rest.match(text, i + len(d))
        if m:
            if m.group(1).strip():
                return m.group(1).strip(), True
            break  # the leftmost match decides, as a search would
        i = text.find(d, i + 1)
    if ("of" in folded or "for" in folded) and any(v in folded for v in ("is", "are", "include")):
        m = _en_pattern(d, alt).search(text)
        if m and m.group(1).strip():
            return m.group(1).strip(), True
    return (response or "").strip(), False


_SEP_RE = re.compile(r"(?:[;；、,，。!！?？\t/|·•]|\.(?=\s|$))+")
_CONJ_RE = re.compile(r"以及|及|和|与|或|\band\b|\bor\b")
_LEAD_RE = re.compile(r"^\s*(?:\(?\d+[.)、)）]|[①-⑳]|[-*•]|[a-z][.)])\s*", re.I)
_TRAIL_RE = re.compile(r"(?:等等|等)$")


def split_entities(text: str) -> list[str]:
    """Rule-based entity splitter for enumerated aspects.

    Splits on list punctuation and on conjunctions (和/及/以及/与/或, and/or)
    where both sides keep at least two characters, strips list markers and a
    trailing 等, removes duplicates (first occurrence wins).

    >>> split_entities("主要症状为咳嗽、流涕和发烧等。")
    ['主要症状为咳嗽', '流涕', '发烧']
    >>> split_entities("1. 阿莫西林\\n2. 头孢克肟")
    ['阿莫西林', '头孢克肟']
    """
    out: list[str] = []
    lines = [_LEAD_RE.sub("", _norm(_LEAD_RE.sub("", line))) for line in re.split(r"[\r\n]+", text or "")]
    for part in (p for line in lines for p in _SEP_RE.split(line)):
        part = _LEAD_RE.sub("", part).strip(" \"'“”‘’「」()（）[]【】:：")
        if not part:
            continue
        pieces = _split_conj(part)
        for p in pieces:
            p = _TRAIL_RE.sub("", p.strip()).strip()
            if p and p not in out:
                out.append(p)
    return out


def _split_conj(part: str) -> list[str]:
    for m in _CONJ_RE.finditer(part):
        left, right = part[: m.start()].strip(), part[m.end():].strip()
        if len(left) >= 2 and len(right) >= 2:
            return [left] + _split_conj(right)
    return [part] if part else []


def first_number(text: str) -> float | None:
    """First number in ``text`` (superscripts mapped before NFKC; 二级 -> 2); None if there is none.

    >>> first_number("危重等级：３级")
    3.0
    >>> first_number("属于二级") , first_number("无法判断")
    (2.0, None)
    """
    t = unicodedata.normalize("NFKC", (text or "").translate(_SUPERSCRIPTS))
    m = _NUMBER_RE.search(t)
    c = _CN_LEVEL_RE.search(t)
    if m and (not c or m.start() <= c.start()):
        return float(m.group(0))
    if c:
        return float(_CN_DIGITS[c.group(1)])
    return None


EntityExtractor = Callable[[str], list[str]]
ENTITY_EXTRACTORS: dict[str, EntityExtractor] = {"rules": split_entities}


def process(response: str, disease: str, aspect: Aspect | str, *, extractor: str = "rules",
            is_reference: bool = False) -> Processed:
    """Post-process one answer (or, with ``is_reference``, a knowledge-base reference: no pattern extraction)."""
    if isinstance(aspect, str):
        aspect = BY_NAME[aspect]
    raw = response or ""
    if is_reference:
        answer, matched = _norm(raw).strip(), False
    else:
        answer, matched = extract_answer(raw, disease, aspect)
    note = "pattern" if matched else None
    if not answer.strip():
        return Processed("", note="empty")
    if answer.strip().lower().rstrip("。.") in {a.rstrip("。.") for a in NONE_ANSWERS}:
        if aspect.type == NUMERIC:
            return Processed("", number=None, note="no_number")
        return Processed("无", entities=("无",), note="none_answer")
    if aspect.type == NUMERIC:
        n = first_number(answer)
        if n is None or math.isnan(n):
            return Processed("", number=None, note="no_number")
        return Processed(_fmt_number(n), number=n, note=note)
    if aspect.type == ENUMERATED:
        ents = ENTITY_EXTRACTORS[extractor](answer)
        return Processed(" ".join(ents), entities=tuple(ents), note=note)
    assert aspect.type == DECLARATIVE
    return Processed(answer.strip(), note=note)


def _fmt_number(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else repr(float(n))
