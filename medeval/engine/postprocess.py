"""Post-processing of model answers (MedDisKEval section 3.2.1, Appendix D).

1. :func:`extract_answer` -- take the answer part out of patterns the prompt
   invites ("<disease>的<aspect>为/包括 ...", "<aspect> of <disease> is/include ...");
   when none matches, :func:`strip_lead_in` removes a lead-in naming the aspect without
   the disease ("主要症状为…", "该病的常见症状有以下几种：…", "The main symptoms include …");
   the response is left unchanged when neither matches.
2. Enumerated aspects: :func:`split_entities` into the entities a clinician reader lists (a rule-based
   splitter that leaves out doses, asides, hedges, qualifiers, headings and pleasantries;
   :data:`ENTITY_EXTRACTORS` lets a model-based extractor replace it), then joined with spaces for scoring.
3. Numeric aspect (Severity Level): :func:`severity_level` -- "二级", "Ⅱ级", "II级", "level II",
   "grade 3" read as one level (numerals from :mod:`medeval.core.chinese`), the level word first or, with
   ``MEDEVAL_SEVERITY_READING=first-number``, the paper's first number; a range ("三至四级",
   "3-4级", "level 2 or 3") is no single level: no number, note ``range``, exact match 0
   (``medeval.engine.scoring.severity_ranges`` counts them).

"None"/"无" answers are kept as what they are. The raw text is always kept
next to the processed one.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Callable

from medeval.core.chinese import CHINESE_DIGIT_CLASS, to_simplified
from medeval.engine.aspects import BY_NAME, DECLARATIVE, ENUMERATED, NUMERIC, Aspect
from medeval.engine.entity_rules import (CLOSING_EN_RE, CLOSING_ZH_FIRST, CLOSING_ZH_RE, ENDS, FLAT_ASIDE_RE, RULES_FIRST,
                                         RULES_LAST, WORD_RE, entity, labels_read, without_asides)
from medeval.engine.severity import RANGE, SEVERITY_READINGS, first_number, severity_level  # noqa: F401  (re-exported)
from medeval.engine.tokenize import normalize as _normalize

NONE_ANSWERS = {"无", "没有", "暂无", "none", "none.", "n/a", "无。", "不详", "nil"}


@dataclass(frozen=True)
class Processed:
    text: str  # what is scored (entities joined with spaces for enumerated aspects)
    entities: tuple[str, ...] = ()
    number: float | None = None
    note: str | None = None  # 'pattern', 'lead_in', 'no_number', 'range', 'none_answer', 'empty'


def _norm(text: str) -> str:
    # the tokenizer's one normalisation (NFKC and what must come before it): a reference, an extracted answer and
    # an answer kept whole then give the same tokens
    return _normalize(text or "")


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


# "/" separates ("咳嗽/发热") except inside a unit ("5mg/kg/d", "3次/日")
_SEP_RE = re.compile(r"(?:[;；、,，。!！?？\t|·•]|\.(?=\s|$)"
                     r"|(?<![\da-zμ次])/|/(?!\s*+(?:kg|m2|d|h|日|天|次|周|小时|day|dose|min)(?![a-z])))+", re.I)
_LINES_RE = re.compile(r"[\r\n]+")
_CONJ_RE = re.compile(r"以及|及|和|与|或|\band\b|\bor\b")
# list markers: "1.", "(2)", "③", bullets ("-", "*", "+", "•"), a quote ">", "a)", "一、", "(二)"
_LEAD_RE = re.compile(r"^\s*(?:\(?\d+[.)、)）](?!\d)|[①-⑳]|[-*•+>]|[a-z][.)]"
                      rf"|{CHINESE_DIGIT_CLASS}{{1,3}}[、.]|\({CHINESE_DIGIT_CLASS}{{1,3}}\))\s*", re.I)
_INLINE_MARK_RE = re.compile(r"(?:(?<=\s)|(?<=[。；;:]))\(?\d{1,2}[.、)）](?!\d)")  # "1. 咳嗽 2. 发热" on one line
_CIRCLED_RE = re.compile(r"[①-⑳]")  # before NFKC, which turns ③ into 3
# "咳嗽(更正:干咳)": the entity before "(更正" / "(correction" is replaced by what the brackets give (see _corrected)
_CORRECTION_OPEN_RE = re.compile(r"\(\s*+(?:更正|纠正|应为|正确为|correction)", re.I)
_PAREN_RE = re.compile(r"[()]")
_ENTITY_STOPS = frozenset("、,;。")  # with white space: where the entity before a correction starts


def split_entities(text: str) -> list[str]:
    """Rule-based entity splitter for enumerated aspects: the entities a reader lists, in order, each once.

    Splits on list punctuation and on conjunctions (和/及/以及/与/或, and/or) where both sides keep at least two
    characters, and on a colon after a label ("对症治疗：退热"); strips list markers, markdown, a trailing 等, and
    what is no entity (``docs/FIDELITY.md`` lists the rules with examples): headings, notes and intro labels
    ("主要包括："), bracketed asides ("头孢类（如头孢呋辛）"), doses, frequencies and routes after a drug
    ("0.5g bid po"), hedges ("可能是…吧", "maybe"), qualifiers before a finding ("少数患者还会出现黄疸": 黄疸) and
    closing pleasantries or advice ("祝您早日康复", "如有不适请及时就医"). Duplicates are removed (first occurrence
    wins).

    >>> split_entities("主要症状为咳嗽、流涕和发烧等。")
    ['主要症状为咳嗽', '流涕', '发烧']
    >>> split_entities("1. 阿莫西林 0.5g tid\\n2. 头孢类（如头孢呋辛）\\n祝您早日康复！")
    ['阿莫西林', '头孢类']
    """
    out: list[str] = []
    seen: set[str] = set()  # out as a set: a membership test per piece on a list was quadratic in the pieces
    text = _INLINE_MARK_RE.sub("\n", _norm(_CIRCLED_RE.sub("\n", text or "")))
    if "(" in text:
        text = _corrected(text)  # "咳嗽（更正：干咳）": the corrected entity
    if "**" in text or "__" in text:  # markdown bold ("**咳嗽**") marks an entity, it is not part of it
        text = text.replace("**", "").replace("__", "")
    for line in _LINES_RE.split(text):
        line = _LEAD_RE.sub("", _norm(_LEAD_RE.sub("", line)))
        if not line or line[0] == "#":  # a markdown heading ("### 常用药物") names the list, it is not in it
            continue
        if "(" in line or ")" in line:
            line = FLAT_ASIDE_RE.sub("", line)
            if "(" in line or ")" in line:  # nested, unpaired, or a polarity: the full pass
                line = without_asides(line)
        for segment in (labels_read(line) if ":" in line else (line,)):
            for part in _SEP_RE.split(segment):
                part = _LEAD_RE.sub("", part).strip(ENDS)
                if not part or (not CLOSING_ZH_FIRST.isdisjoint(part) and CLOSING_ZH_RE.search(part)) \
                        or (" " in part and CLOSING_EN_RE.search(part)) \
                        or part.lower().rstrip(".") in ("etc", "and so on", "等", "等等"):
                    continue  # advice ("具体请咨询医生"), pleasantries ("祝您早日康复") and "etc." are not entities
                for p in _split_conj(part):
                    p = p.strip()
                    if p and (p[0] in RULES_FIRST or p[-1] in RULES_LAST or "等" in p):  # most pieces need no rule
                        p = entity(p)
                    if p and p not in seen and (p[0].isalnum() or WORD_RE.search(p)):
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
