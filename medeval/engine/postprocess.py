"""Post-processing of model answers (MedDisKEval section 3.2.1, Appendix D).

1. :func:`extract_answer` -- take the answer part out of patterns the prompt
   invites ("<disease>的<aspect>为/包括 ...", "<aspect> of <disease> is/include ...");
   when none matches, :func:`strip_lead_in` removes a lead-in naming the aspect without
   the disease ("主要症状为…", "该病的常见症状有以下几种：…", "The main symptoms include …");
   the response is left unchanged when neither matches.
2. Enumerated aspects: :func:`split_entities` into a list (a rule-based
   splitter; :data:`ENTITY_EXTRACTORS` lets a model-based extractor replace it),
   then joined with spaces for scoring.
3. Numeric aspect (Severity Level): :func:`severity_level` -- "二级", "Ⅱ级", "II级", "level II",
   "grade 3" read as one level (numerals from :mod:`medeval.core.chinese`); a range ("三至四级",
   "3-4级", "level 2 or 3") is no single level: no number, note ``range``, exact match 0
   (``medeval.engine.scoring.severity_ranges`` counts them).

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

from medeval.core.chinese import CHINESE_DIGITS, MAX_DIGITS, parse_int, to_simplified
from medeval.engine.aspects import BY_NAME, DECLARATIVE, ENUMERATED, NUMERIC, Aspect
from medeval.engine.tokenize import SUPERSCRIPTS as _SUPERSCRIPTS

RANGE = "range"
"""Post-processing note of a Severity Level answer that names a range of levels ("三至四级"): no single number."""
NONE_ANSWERS = {"无", "没有", "暂无", "none", "none.", "n/a", "无。", "不详", "nil"}


@dataclass(frozen=True)
class Processed:
    text: str  # what is scored (entities joined with spaces for enumerated aspects)
    entities: tuple[str, ...] = ()
    number: float | None = None
    note: str | None = None  # 'pattern', 'lead_in', 'no_number', 'range', 'none_answer', 'empty'


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
    # a run of spaces before a word is read once (possessive ``\s*+``, see the lead-ins below): the same matches
    return re.compile(rf"\s*+的\s*+(?:常见|主要)?\s*+(?:{alt})\s*+(?:{_ZH_VERBS})\s*[:：]?\s*(.+)", re.S)


@functools.lru_cache(maxsize=1 << 14)
def _en_pattern(disease: str, alt: str) -> re.Pattern:
    """"<aspect> of <disease> is/include …" (any case): compiled once per (disease, aspect) that needs it."""
    return re.compile(rf"(?:the\s++)?(?:common\s++|main\s++)?(?:{alt})\s++(?:of|for)\s++{re.escape(disease)}\s++"
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


# Lead-ins naming the aspect without the disease (MedDisKEval App. D: the answer is what follows
# "<disease>的<aspect>为/包括"; a model often writes the same lead-in with "该病", another name, or none).
# A run of spaces followed by a word is taken whole (``\s*+``, possessive): nothing after it can start with a
# space, so the matches are the ones plain ``\s*`` gives, but a long run of spaces is read once instead of being
# shared out between two neighbouring ``\s*`` in every possible way (quadratic, minutes at 20,000 characters).
_HEDGE = r"(?:[^，,。；;：:\n]{1,15}[，,]\s*+|(?:i\s+think|i\s+believe|generally|typically|usually)\s++)?"
_ZH_SUBJECT = r"(?:[^，,。；;：:\n]{0,20}?的\s*+|(?:该病|本病|此病|该疾病|本疾病|这种病|它)\s*+)?"
_ZH_QUAL = r"(?:建议|推荐)?(?:最常见的|最主要的|最常见|最主要|常见的|主要的|典型的|常见|主要|典型|一般|临床)?"
_ZH_LEAD_VERB = (r"\s*+(?:主要|通常|一般|常|多|可|临床上?)?\s*+(?:包括|包含|表现为|常见的有|可见|有|为|是|如下)"
                 r"\s*(?:以下几种|以下几类|以下几个|以下几点|以下|如下几种|如下)?\s*[:：,，]?"
                 r"|\s*[:：]")
_EN_QUAL = r"(?:the\s++)?(?:most\s++)?(?:common|main|primary|typical|key|major|usual|principal)?\s*+"
# "of <up to 60 characters>" before the verb: the words end before a space ((?<!\s): ending on a space would only
# repeat a shorter choice); or, with nothing but spaces after "of", a non-newline space inside them (what the
# plain ``\s+[^:：\n]{1,60}?\s+`` also accepts) -- without the 60 x run-length retries of the plain form
_EN_OF = r"(?:of|for|in|with)(?:\s++[^:：\n]{1,60}?(?<!\s)\s++|\s\n*+[^\S\n]\s++)"
_EN_LEAD_VERB = (rf"\s++(?:{_EN_OF})?(?:(?:may|can|typically|usually|generally|often|"
                 r"mainly|commonly)\s++)?(?:is|are|include|includes|including|consists?\s+of)(?:\s+the\s+following)?"
                 r"\s*:?|\s*:")


@functools.lru_cache(maxsize=64)
def _lead_in_re(aspect: Aspect) -> re.Pattern:
    alt = _names_alternation(aspect)
    # symptoms: "患者常表现为…" names no aspect but is the same lead-in
    shows = (r"|(?:患者|病人)?\s*+(?:常|多|主要|可|通常|一般)?\s*+表现为\s*[:：]?" if aspect.name.endswith("Symptoms")
             else "")
    return re.compile(rf"^\s*+{_HEDGE}(?:{_ZH_SUBJECT}{_ZH_QUAL}\s*+(?:{alt})(?:异常结果|结果|所见|异常)?"
                      rf"(?:{_ZH_LEAD_VERB}){shows}"
                      rf"|{_EN_QUAL}(?:{alt})(?:{_EN_LEAD_VERB})"
                      rf"|以下(?:是|为)[^：:\n]{{0,20}}?(?:{alt})[^：:\n]{{0,6}}[:：])\s*", re.I)


@functools.lru_cache(maxsize=64)
def _mention_re(aspect: Aspect) -> re.Pattern:
    """Does a text name the aspect at all (any width: NFKC folds full-width letters, so they are checked too)?"""
    names = [n for n in _aspect_names(aspect)]
    names += [n.translate(_FULL_WIDTH) for n in names if n.isascii()]
    return re.compile("|".join(re.escape(n) for n in names) + "|表现为|以下", re.I)


_FULL_WIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}
_LIST_INTRO_RE = re.compile(r"^(?:以下几种|以下几类|以下几个|以下几点|以下|如下几种|如下)\s*[:：]\s*")


def strip_lead_in(answer: str, aspect: Aspect) -> tuple[str, bool]:
    """(answer without a lead-in that names ``aspect``, stripped?). Answers without one are unchanged.

    >>> strip_lead_in("主要症状为咳嗽、流涕和发烧", BY_NAME["Primary Symptoms"])
    ('咳嗽、流涕和发烧', True)
    >>> strip_lead_in("The main symptoms include cough and fever.", BY_NAME["Primary Symptoms"])
    ('cough and fever.', True)
    >>> strip_lead_in("咳嗽、流涕", BY_NAME["Primary Symptoms"])
    ('咳嗽、流涕', False)
    """
    if not _mention_re(aspect).search(to_simplified((answer or "")[:80])):  # cheap: most answers name no aspect
        return (answer or "").strip(), False
    text = _norm(answer).strip()
    simple = to_simplified(text)  # "體格檢查：" is the lead-in "体格检查："
    m = _lead_in_re(aspect).match(simple if len(simple) == len(text) else text)
    if m and text[m.end():].strip():
        return text[m.end():].strip(), True
    return (answer or "").strip(), False


_SEP_RE = re.compile(r"(?:[;；、,，。!！?？\t/|·•]|\.(?=\s|$))+")
_CONJ_RE = re.compile(r"以及|及|和|与|或|\band\b|\bor\b")
_LEAD_RE = re.compile(r"^\s*(?:\(?\d+[.)、)）]|[①-⑳]|[-*•]|[a-z][.)])\s*", re.I)
_INLINE_MARK_RE = re.compile(r"(?:(?<=\s)|(?<=[。；;:]))\(?\d{1,2}[.、)）](?!\d)")  # "1. 咳嗽 2. 发热" on one line
_CIRCLED_RE = re.compile(r"[①-⑳]")  # before NFKC, which turns ③ into 3
# "咳嗽(更正:干咳)": the entity before "(更正" / "(correction" is replaced by what the brackets give (see _corrected)
_CORRECTION_OPEN_RE = re.compile(r"\(\s*+(?:更正|纠正|应为|正确为|correction)", re.I)
_PAREN_RE = re.compile(r"[()]")
_ENTITY_STOPS = frozenset("、,;。")  # with white space: where the entity before a correction starts
_TRAIL_RE = re.compile(r"(?:等等|等)(?:症状|表现|疾病|并发症|药物|检查|部位|科室|手术|人群|情况)?$")
_ADVICE_RE = re.compile(r"咨询医生|咨询专业|遵医嘱|及时就医|请就医|尽早就医|仅供参考|以医生|consult\s+(?:a|your)\s+"
                        r"(?:doctor|physician)|seek\s+medical", re.I)


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
    seen: set[str] = set()  # out as a set: a membership test per piece on a list was quadratic in the pieces
    text = _INLINE_MARK_RE.sub("\n", _norm(_CIRCLED_RE.sub("\n", text or "")))
    if "(" in text:
        text = _corrected(text)  # "咳嗽（更正：干咳）": the corrected entity
    lines = [_LEAD_RE.sub("", _norm(_LEAD_RE.sub("", line))) for line in re.split(r"[\r\n]+", text)]
    for part in (p for line in lines for p in _SEP_RE.split(line)):
        part = _LEAD_RE.sub("", part).strip(" \"'“”‘’「」()（）[]【】:：")
        if not part or _ADVICE_RE.search(part) or part.lower().rstrip(".") in ("etc", "and so on", "等", "等等"):
            continue  # advice ("具体请咨询医生") and "etc." are not entities
        pieces = _split_conj(part)
        for p in pieces:
            p = _TRAIL_RE.sub("", p.strip()).strip()
            if p and p not in seen:
                seen.add(p)
                out.append(p)
    return out


def _corrected(text: str) -> str:
    r"""``text`` with each corrected entity replaced by its correction: "咳嗽(更正:干咳)" -> "干咳".

    What ``re.sub(r"[^\s、,;。]+?\s*\(\s*(?:更正|纠正|应为|正确为|correction)\s*[:：]?\s*([^()]+?)\s*\)", r"\1",
    text, flags=re.I)`` gives, in one pass (that expression read a long run, "((((..." say, again from each of its
    characters): each "(更正" is found once, it ends at the next bracket, and the entity is the run of characters
    other than spaces and 、,;。 just before it, from the end of the previous replacement on.
    """
    out, pos = [], 0
    for k in _CORRECTION_OPEN_RE.finditer(text):
        if k.start() < pos:
            continue
        close = _PAREN_RE.search(text, k.end())
        if close is None or close.group() != ")":
            continue
        body = _correction_body(text[k.end():close.start()])
        end = k.start()
        while end > pos and text[end - 1].isspace():
            end -= 1
        start = end
        while start > pos and not text[start - 1].isspace() and text[start - 1] not in _ENTITY_STOPS:
            start -= 1
        if body is None or start == end:
            continue
        out += [text[pos:start], body]
        pos = close.end()
    return "".join(out) + text[pos:] if out else text


def _correction_body(inside: str) -> str | None:
    r"""The group ``\s*[:：]?\s*([^()]+?)\s*`` reads in ``inside`` (between "更正" and ")"), None for none: the
    text after spaces and a colon, trailing spaces cut; with only spaces and a colon there, the last one of them."""
    rest = inside.lstrip()
    if rest[:1] in (":", "："):
        after = rest[1:].lstrip()
        return after.rstrip() if after else rest[-1]  # the colon, or the last space after it
    if rest:
        return rest.rstrip()
    return inside[-1] if inside else None


def _split_conj(part: str) -> list[str]:
    """``part`` cut at each conjunction with at least two characters on both sides (spaces around them aside): the
    first such conjunction cuts, then the rest is cut the same way. In one pass over ``part`` -- the rest is neither
    copied nor searched again from its start, which made a long run of 和 quadratic (and a recursion per piece)."""
    right = part.rstrip()
    last = len(right[:-1].rstrip()) - 1  # the second-last character that is not a space: a cut must end by it
    out, start = [], 0
    while True:
        cut = None
        for m in _CONJ_RE.finditer(part, start):
            if m.end() > last:
                break  # one character or none would be left on the right, here and at every later conjunction
            if len(part[start:m.start()].strip()) >= 2:
                cut = m
                break
        if cut is None:
            break
        out.append(part[start:cut.start()].strip())
        start = cut.end()
    rest = part[start:].strip() if out else part
    return out + [rest] if rest else out


# Severity levels. Text is NFKC-normalised and lowercased first, so "Ⅱ" is "ii" and "３" is "3".
# An Arabic number starts where a run of digits starts and takes the whole run (possessive): a search no longer
# reads a long run of digits again from each of its digits (quadratic), and no match changes -- what follows a
# number is never a digit. Runs of spaces before a word are taken whole for the same reason.
_CN_NUM = "[" + "".join(sorted(CHINESE_DIGITS)) + "]"  # the one table, medeval.core.chinese
_NUM = rf"(?:(?<!\d)\d++(?:\.\d++)?|{_CN_NUM}{{1,3}}|(?<![a-z])[ivx]{{1,4}}(?![a-z]))"
_AFTER = r"\s*+(?:级|等|度|类|期)"
_BEFORE = r"(?:level|grade|class|stage|severity|等级|级别|分级|第)\s*+(?:为|是|:|of|is|=)?\s*+"
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


def severity_level(text: str) -> tuple[float | None, str | None]:
    """(level, status) of a Severity Level answer: ``(2.0, None)`` for one level, ``(None, "range")`` when the
    answer names a range or a choice of levels, ``(None, "no_number")`` when it names none.

    The first level mention decides: a numeral before 级/等/度/类/期 or after level/grade/等级 (Arabic,
    Chinese or Roman -- "Ⅱ级", "II级", "level II"); without any, the first Arabic number ("3"). Roman
    numerals count only next to such a word, so "I think" is not level 1. A number with more than ``MAX_DIGITS``
    digits (:mod:`medeval.core.chinese`) is no level: when it decides, the answer has ``no_number``.

    >>> severity_level("危重等级为Ⅱ级"), severity_level("grade 3"), severity_level("三至四级")
    ((2.0, None), (3.0, None), (None, 'range'))
    >>> severity_level("level 2 or 3"), severity_level("无法判断")
    ((None, 'range'), (None, 'no_number'))
    """
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
    if found:  # the first level mention decides; a range starting at the same place wins
        value = min(found, key=lambda f: (f[0], f[1] is not None))[1]
        if value is _UNREADABLE:
            return None, "no_number"
        return (None, RANGE) if value is None else (value, None)
    n = _NUMBER_RE.search(t)  # no level word: the first Arabic number ("3"), unless it opens a range ("3-4")
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


EntityExtractor = Callable[[str], list[str]]
ENTITY_EXTRACTORS: dict[str, EntityExtractor] = {"rules": split_entities}


_NONE_KEYS = frozenset(a.rstrip("。.") for a in NONE_ANSWERS)


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
    if not is_reference and not matched:
        answer, lead = strip_lead_in(answer, aspect)
        note = "lead_in" if lead else None
    if matched:  # "<disease>的症状主要有以下几种：1. …": the list starts after the colon
        answer = _LIST_INTRO_RE.sub("", answer) or answer
    if not answer.strip():
        return Processed("", note="empty")
    if answer.strip().lower().rstrip("。.") in _NONE_KEYS:
        if aspect.type == NUMERIC:
            return Processed("", number=None, note="no_number")
        return Processed("无", entities=("无",), note="none_answer")
    if aspect.type == NUMERIC:
        n, status = severity_level(answer)
        if n is None or not math.isfinite(n):
            return Processed("", number=None, note=status or "no_number")
        return Processed(_fmt_number(n), number=n, note=note)
    if aspect.type == ENUMERATED:
        ents = ENTITY_EXTRACTORS[extractor](answer)
        return Processed(" ".join(ents), entities=tuple(ents), note=note)
    assert aspect.type == DECLARATIVE
    return Processed(answer.strip(), note=note)


def _fmt_number(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else repr(float(n))
