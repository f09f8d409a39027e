"""Reading per-response scores out of a judge's free-text rationale, in English and Chinese."""

from __future__ import annotations

import math
import re
import unicodedata

from medeval.core.errors import InputError

_LABEL_WORDS = (r"doctors?|physicians?|responses?|assistants?|answers?|models?|candidates?|outputs?|replies|reply"
                r"|systems?|ai|bots?|chatbots?|students?")
_LABEL_ZH = r"医生|医师|大夫|回答|回复|答复|答案|模型|助手|候选|助理|应答|学生"
_ZH_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUM = r"(?:\d+(?:\.\d+)?)"
_LABEL = rf"(?:(?<![a-z])(?:{_LABEL_WORDS})|{_LABEL_ZH})"
_POS = r"(?:\d+|[一二三四五六七八九十])(?![\d.]\d)"
_PREFIX = r"\s*(?:(?:#|no\.?|编号|第)\s*)?"  # one way to read each space: no backtracking blow-up
# what may stand between a label and its score: separators, markdown and score words -- nothing else, so
# "Doctor 1 said the dose is 5 mg" is not a score
_FILL_WORD = (r"'s|’s|s'|的|score[sd]?|rating|rated|gets?|got|receives?|received|earns?|earned|deserves?|is given"
              r"|was given|is|was|total|overall|final|points?|of"
              r"|最终|最后|综合|总|得分|评分|分数|打分|分值|获得|得到|给予|可得|打|给|得|为|是|计")
_FILL_CHARS = r"[\s*_`#\[\]()【】（）<>:=\-–—→|,]"
_FILL = rf"(?:{_FILL_CHARS}|{_FILL_WORD})*?"
_SCORE = rf"(?P<num>{_NUM}|[一二两三四五六七八九十](?=\s*分))"
_UNIT = r"(?P<unit>\s*(?:\*\*)?\s*(?:/\s*\d+(?:\.\d+)?|out of \d+(?:\.\d+)?|points?\b|pts?\b|分(?!钟|之|析|别|期|级|型|泌|布|娩|化|裂|离|为|成)))?"
# a number followed by one of these is a measurement, not a score
_NOT_SCORE = re.compile(r"[a-z]|[.,]\d|\s*-?\s*(?:%|‰|°|℃|mg|μg|ug|mcg|ml|kg|mmol|mmhg|cm|mm|iu|u/|g\b|l\b|x\b"
                        r"|times?\b|years?\b|days?\b|weeks?\b|months?\b|hours?\b|h\b|minutes?\b|min\b"
                        r"|次|岁|天|日|周|月|年|小时|分钟|秒|毫|克|升|片|粒|支|倍|例|项|条|个|点|种)")
# any mention of a response: "Doctor 1", "Response #2", "医生一", "第2号回答"
_MENTION_RE = re.compile(rf"{_LABEL}{_PREFIX}(?P<pos>{_POS})(?:\s*号)?")
# label, score words, score: "Doctor 1: 4 points", "医生1得分：4分"
_SCORE_RE = re.compile(rf"{_LABEL}{_PREFIX}(?P<pos>{_POS})(?:\s*号)?{_FILL}{_SCORE}{_UNIT}")
# several labels sharing one score: "Doctor 1 and Doctor 2 both get 4 points", "Doctors 1 and 2: 4",
# "医生1和医生2均为4分", "医生1、2均得4分"; a bare number after a comma is not a label ("Response 1, 2, 3")
_REF0 = rf"{_LABEL}{_PREFIX}{_POS}(?:\s*号)?"
_JOIN = r"\s*(?:,(?:\s*and\b)?|and\b|&|和|与|及|以及|跟|、|/)\s*"
_JOIN_AND = r"\s*(?:,\s*)?(?:and\b|&|和|与|及|以及|跟|、)\s*"
# (found whole with finditer, then the shared score at its end: linear however long the chain)
_REF0S = rf"{_REF0}(?:'s|’s)?"
_CHAIN_RE = re.compile(rf"{_REF0S}(?:{_JOIN}{_REF0S}|{_JOIN_AND}{_POS}(?:\s*号)?)+")
_SHARED_WORD = r"(?:are|were|both|each|all)\s+given|both|each|all|equally|are|were|均|都|皆|各|同样|同为|也|亦"
_SHARED_RE = re.compile(rf"(?:{_FILL_CHARS}|{_SHARED_WORD}|{_FILL_WORD})*?{_SCORE}{_UNIT}")
# "... 4 and 3 points respectively", "分别为4分和3分": one score each, not a shared one
_RESPECTIVELY = re.compile(r"respectively|分别|依次|\A\s*(?:\*\*)?\s*(?:and|or|&|和|与|、|,|/|vs\.?)\s*\d")
# a score with no label of its own, alone on a line or starting a sentence: "Score: 4", "**Rating**: 4/5",
# "得分：4分", "评分：4"; it belongs to the response the section before it is about (see _owner)
_LINE_RE = re.compile(
    r"(?:^|(?<=[.。;；!！?？,，]))[ \t>*_#\-•]*"
    r"(?:(?:(?:final|overall|total)\s+)?(?:score|rating)(?![a-z])|(?:最终|综合|总)?(?:得分|评分|分数|打分)|总分)"
    rf"[\s*_]*(?:[:=]|is\b|为|是)?[\s*_]*{_SCORE}{_UNIT}", re.M)
# the rest of a sentence (a decimal point does not end it)
_SENTENCE_REST = re.compile(r"(?:[^\n.;；。!！?？]|\.\d)*")
# a mention that heads a section: first on its line (after markdown, a bullet or a list number) ...
_HEAD_BEFORE = re.compile(r"[\s>*_#\-•\[【(]*(?:\d+[.)、]\s*)?[\s*_#\[【(]*")
# ... or followed by nothing but a colon or the end of its line: "Doctor 1:", "**Response 2**", "医生1的回答："
_HEAD_AFTER = re.compile(r"[ \t*_\]】)]*(?:(?:'s|’s)\s+(?:response|answer|reply)|的(?:回答|回复|答复))?"
                         r"[ \t*_\]】)]*(?::|\n|\Z)")
# what may stand between a list-item-looking "4." and a following label or the end of its line
_SKIP_AFTER_STOP = " \t*_#.,;。，；\"'“”‘’「」『』[]【】()"


def _num(s: str) -> float:
    return float(_ZH_NUM[s]) if s in _ZH_NUM else float(s)


def _list_item(s: str, m: re.Match) -> bool:
    """Whether the number *m* read is a list item ("Doctor 1: 1. Accurate diagnosis 2. ...") rather than a score.

    Only a number directly followed by ".", "、" or ")" can be one (a ")" closing a "(" of the match
    counts only in "(1)", right round the number). What follows the stop decides: the end of the line or text ("Doctor 1: 4.") or
    another label ("Doctor 1: 4. Doctor 2: 3.") makes it a score; text makes it a list item when the
    number is 1 (a list starts there) or the next item (the number plus one, same stop) follows before
    the next label -- "Doctor 1: 4. The answer is accurate." stays a score. Called only when there is
    no score unit: "Doctor 1: 1 point. Poor" is a score.
    """
    i = m.end()
    while i < len(s) and s[i] in "*_":
        i += 1
    if i >= len(s) or s[i] not in ".、)":
        return False
    if s[i] == ")" and m.group(0).count("(") > m.group(0).count(")"):
        if s[:m.start("num")].rstrip()[-1:] != "(":
            return False  # "Response 1 (score: 4) is ...": a parenthesis, not a list
        # "Doctor 1 (1) accurate (2) ...": a list item numbered "(1)"
    j = i + 1
    while j < len(s) and s[j] in _SKIP_AFTER_STOP:
        j += 1
    if j >= len(s) or s[j] in "\r\n" or _MENTION_RE.match(s, j):
        return False
    n = m.group("num")
    if n == "1":
        return True
    if not n.isdigit():
        return False
    nxt = _MENTION_RE.search(s, j)
    item = re.compile(rf"(?<![\d.]){int(n) + 1}{re.escape(s[i])}(?!\d)")
    return bool(item.search(s, j, nxt.start() if nxt else len(s)))


# a score written before its label: "4 (Doctor 1), 3 (Doctor 2)" -- the number after the label is not its score
_SCORE_BEFORE = re.compile(r"\d(?:\s*(?:\*\*)?\s*(?:/\s*\d+|points?|pts?|分))?\s*[(\[【]\s*\Z")


def _is_score(s: str, m: re.Match, *, labelled: bool = False) -> bool:
    """Whether *m* (a match ending in _SCORE and _UNIT) reads a score, not a measurement or a list item;
    *labelled*: it starts with its label, which must not follow a score ("4 (Doctor 1)")."""
    if labelled and _SCORE_BEFORE.search(s, max(0, m.start() - 20), m.start()):
        return False
    if m.group("unit"):
        return True
    return not _NOT_SCORE.match(s, m.end()) and not _list_item(s, m)


def _owner(s: str, start: int, end: int) -> int | None:
    """The response a label-less score line at *end* is about: the section ``s[start:end]`` (since the previous
    score) must mention a response, and every mention from its last heading on (or from its first mention
    when none heads a line) must name the same one; otherwise it is ambiguous and ``None``."""
    ms = list(_MENTION_RE.finditer(s, start, end))
    if not ms:
        return None
    heads = [k for k, mt in enumerate(ms) if _HEAD_AFTER.match(s, mt.end())
             or _HEAD_BEFORE.fullmatch(s, s.rfind("\n", 0, mt.start()) + 1, mt.start())]
    first = heads[-1] if heads else 0
    pos = {int(_num(mt.group("pos"))) for mt in ms[first:]}
    return pos.pop() if len(pos) == 1 else None


def parse_judge_scores(text: str) -> dict[int, float]:
    """Per-response scores written in a judge's rationale: ``{position: score}`` (position 1-based).

    A score is a label (Doctor, Response, Assistant, Answer, Model ...; 医生, 回答,
    模型, 助手 ...) with the response's number, then only separators, markdown and
    score words (gets, score, 得分, 评分, 为 ...), then a number, optionally with a
    unit (points, 分, /5, out of 5). A number followed by a unit of measure (mg, %,
    次, 岁 ...) is not a score, so "Doctor 1 said the dose is 5 mg" counts for
    nothing. Full-width characters are read as ASCII (NFKC). The same score repeated
    is fine; two different scores for one response raise :class:`InputError`.

    * List items are not scores: a number without a unit directly followed by ".",
      "、" or ")" and then more text on the same line ("Doctor 1: 1. Accurate
      diagnosis 2. ...", "医生1：1、诊断正确") is a numbered list if it is 1 or the next
      item follows ("Doctor 1: 3. Dose 4. Follow-up"). The end of the line or text, or
      another label, after the stop makes it a score ("Doctor 1: 4.", "Doctor 1: 4.
      Doctor 2: 3."); so does a unit ("Doctor 1: 1 point. Poor").
    * Several labels joined by and/,/和/与/、 share the score after them ("Doctor 1
      and Doctor 2 both get 4 points", "Doctors 1 and 2: 4", "医生1和医生2均为4分") --
      unless it is one of several ("4 and 3 points respectively", "分别为4分、3分").
    * A score line without a label ("Score: 4", "**Rating**: 4/5", "得分：4分",
      "评分：4"), starting a line or a sentence, belongs to the response the text
      since the previous score is about: every label from the last one that heads a
      line (or from the first, if none does) must name that response, and nothing
      after the number in its sentence may be a label. "Doctor 1:\\n1. ...\\nScore: 4"
      gives Doctor 1 a 4; "Doctor 1:\\nUnlike Doctor 2 ...\\nScore: 4" gives nothing.
      A later summary ("Scores: Doctor 1: 4 points") must agree with it.
    * A label in brackets after a number ("4 (Doctor 1), 3 (Doctor 2)") gives nothing:
      its score comes before it, and the number after it belongs to the next label.

    >>> parse_judge_scores("Doctor 1: 5 points. Doctor 2 gets 4 points.")
    {1: 5.0, 2: 4.0}
    >>> parse_judge_scores("医生1：5分；医生2得分：3分")
    {1: 5.0, 2: 3.0}
    >>> parse_judge_scores("**Response 2**: 4/5, Response 1: 3.5")
    {1: 3.5, 2: 4.0}
    >>> parse_judge_scores("Doctor 1 said the dose is 5 mg. Score: Doctor 1: 4 points")
    {1: 4.0}
    >>> parse_judge_scores("医生１：５分")
    {1: 5.0}
    >>> parse_judge_scores("Doctor 1: 1. Accurate diagnosis 2. Clear plan\\nScore: 4\\nDoctor 2: 3.")
    {1: 4.0, 2: 3.0}
    >>> parse_judge_scores("医生1和医生2均为4分")
    {1: 4.0, 2: 4.0}
    """
    s = unicodedata.normalize("NFKC", text or "").lower()
    found: dict[int, tuple[float, str]] = {}

    def put(positions, start: int, m: re.Match) -> None:
        score = _num(m.group("num"))
        if not math.isfinite(score):
            return
        what = s[start:m.end()].strip()
        for pos in positions:
            seen = found.get(pos)
            if seen is not None and seen[0] != score:
                raise InputError(
                    f"the rationale gives response {pos} two different scores: {seen[1]!r} and {what!r}",
                    fix="correct the rationale, or give the scores in a 'scores' column ({\"model\": score, ...})")
            found.setdefault(pos, (score, what))

    # (start, end, positions or None for a score line, match of the score)
    events: list[tuple[int, int, list[int] | None, re.Match]] = []
    taken: list[tuple[int, int]] = []  # shared scores, and "respectively" groups that no label may take alone
    for chain in _CHAIN_RE.finditer(s):
        m = _SHARED_RE.match(s, chain.end())
        if m is None:
            continue
        if _RESPECTIVELY.search(_SENTENCE_REST.match(s, m.end()).group()):
            taken.append((chain.start(), m.end()))
        elif _is_score(s, m):
            taken.append((chain.start(), m.end()))
            events.append((chain.start(), m.end(), [int(_num(p)) for p in re.findall(_POS, chain.group())], m))
    for m in _SCORE_RE.finditer(s):
        if all(m.end() <= a or m.start() >= b for a, b in taken) and _is_score(s, m, labelled=True):
            events.append((m.start(), m.end(), [int(_num(m.group("pos")))], m))
    labelled = [(a, b) for a, b, _, _ in events]
    for m in _LINE_RE.finditer(s):
        if (all(m.end() <= a or m.start() >= b for a, b in labelled) and _is_score(s, m)
                and not _MENTION_RE.search(_SENTENCE_REST.match(s, m.end()).group())):
            events.append((m.start(), m.end(), None, m))
    last = 0
    for start, end, positions, m in sorted(events, key=lambda e: e[0]):
        if positions is None:
            pos = _owner(s, last, start)
            if pos is not None:
                put([pos], start, m)
        else:
            put(positions, start, m)
        last = max(last, end)
    return {p: v for p, (v, _) in sorted(found.items())}
