"""The pieces a judge's rationale is read with: sentences and the spans already read, which response a score
belongs to, and the corrections a judge writes ("改为5分", "revised to 4"): what
:func:`medeval.annotation.cases.judge_scores.read_judge_scores` puts together."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from medeval.annotation.cases import judge_patterns as jp
from medeval.core.chinese import MAX_DIGITS, parse_int
from medeval.core.errors import InputError
from medeval.core.text import char_before

def position(p: str) -> int:
    if p.isascii() and p.isalpha():
        return ord(p.upper()) - ord("A") + 1  # "Response B"
    if p.isdecimal():
        return int(p)  # any script's digits ("医生٣"); at most MAX_DIGITS of them (judge_patterns.POS)
    v = parse_int(p)
    if v is None:  # pragma: no cover - the patterns only let numerals through
        raise ValueError(p)
    return v


def pos_of(m: re.Match, tag: str = "1") -> int:
    p = m.group("p" + tag) or m.group("z" + tag)
    return position(p) if p else jp.ORDINALS[m.group("o" + tag).lower()]


def number(s: str) -> float:
    return float(s) if s[0].isdigit() else float(parse_int(s))


def list_item(s: str, m: re.Match, sent: "Sentences") -> bool:
    """Whether the number *m* read is a list item ("Doctor 1: 1. Accurate diagnosis 2. ...") rather than a score.

    Only a number directly followed by ".", "、" or ")" can be one (a ")" closing a "(" of the match
    counts only in "(1)", right round the number). What follows the stop decides: the end of the line or text ("Doctor 1: 4.") or
    another label ("Doctor 1: 4. Doctor 2: 3.") makes it a score; text makes it a list item when the
    number is 1 (a list starts there) or the next item (the number plus one, same stop) follows before
    the next label -- "Doctor 1: 4. The answer is accurate." stays a score. Called only when there is
    no score unit: "Doctor 1: 1 point. Poor" is a score.
    """
    i = _MARKS.match(s, m.end()).end()
    if i >= len(s) or s[i] not in ".、)":
        return False
    if s[i] == ")" and m.group(0).count("(") > m.group(0).count(")"):
        if char_before(s, m.start("num")) != "(":
            return False  # "Response 1 (score: 4) is ...": a parenthesis, not a list
        # "Doctor 1 (1) accurate (2) ...": a list item numbered "(1)"
    j = _SKIP_AFTER_STOP.match(s, i + 1).end()
    if j >= len(s) or s[j] in "\r\n" or jp.MENTION_RE.match(s, j):
        return False
    n = m.group("num")
    if n == "1":
        return True
    if not n.isdigit() or len(n) > MAX_DIGITS:
        return False  # a run of digits that long numbers no list
    return sent.has_item(str(int(n) + 1), s[i], j, sent.next_mention(j))


_MARKS = re.compile(r"[*_]*")
_SKIP_AFTER_STOP = re.compile("[" + re.escape(jp.SKIP_AFTER_STOP) + "]*")


def is_score(s: str, m: re.Match, sent: "Sentences", *, labelled: bool = False) -> bool:
    """Whether *m* (a match ending in SCORE and UNIT) reads a score, not a measurement, a list item or the number of
    a scale ("满分10分"); *labelled*: it starts with its label, which must not follow a score ("4 (Doctor 1)")."""
    if not sent.scales.free(m.start("num"), m.end("num")):
        return False
    if labelled and jp.SCORE_BEFORE.search(s, max(0, m.start() - 20), m.start()):
        return False
    if m.group("unit"):
        return True
    return not jp.NOT_SCORE.match(s, m.end()) and not list_item(s, m, sent)


def owner(s: str, start: int, end: int, sent: "Sentences") -> int | None:
    """The response a label-less score at *end* is about: the section ``s[start:end]`` (since the previous
    score) must mention a response, and every mention from its last heading on (or from its first mention
    when none heads a line) must name the same one; otherwise it is ambiguous and ``None``."""
    ms = list(jp.MENTION_RE.finditer(s, start, end))
    if not ms:
        return None
    heads = [k for k, mt in enumerate(ms) if jp.HEAD_AFTER.match(s, mt.end()) or sent.heads_line(mt.start())]
    first = heads[-1] if heads else 0
    pos = {pos_of(mt) for mt in ms[first:]}
    return pos.pop() if len(pos) == 1 else None


@dataclass(frozen=True)
class Fix:
    """A score corrected in the rationale ("改为5分", "revised to 5", "医生1应为5分", "4分→5分"): ``pos`` the
    response it names (None when it names none), ``strong`` an explicit change (改为, 修正为, revised to ...)
    rather than a weaker word (应为, should be, actually, →, a struck-out score), ``unit`` a score unit is written
    ("5分", "5 points", "5/10"), ``closes`` the number ends its clause ("revised to 5."), ``several`` it gives
    more than one score ("改为4或5分")."""

    pos: int | None
    strong: bool
    unit: bool
    closes: bool
    several: bool


def correction(s: str, m: re.Match, sent: "Sentences") -> Fix | None:
    """The correction *m* (a match of ``jp.CORRECTION_RE``) reads, or None when it is a plain score (no marker and
    no heading) or no score at all (a measurement, a list item, a scale)."""
    g = m.groupdict()
    named = bool(g["p1"] or g["z1"] or g["o1"])
    head = "strong" if g.get("hs") else "weak" if g.get("hw") else None
    mark = "strong" if g.get("strong") else "weak" if g.get("weak") else None
    if mark is None and head is None:
        return None
    unit, closes = bool(g["unit"]), bool(jp.FIX_CLOSES.match(s, m.end()))
    if not is_score(s, m, sent, labelled=named) or (named and not (unit or closes)):
        return None  # a measurement, a list item, a scale; a response's number in passing ("changed to 2 tablets")
    return Fix(pos_of(m) if named else None, "strong" in (mark, head), unit, closes,
                bool(jp.FIX_RANGE.match(s, m.end())))


FIX_HINT = ("name the response in the correction (e.g. '医生2修正为4分' / 'Doctor 2: revised to 4'), or give the scores "
             "in a 'scores' column ({\"model\": score, ...}), which is used instead of reading the rationale")


def fix_target(s: str, sent: "Sentences", fix: Fix, what: str, start: int, prev,
                found: dict) -> tuple[str, int | None]:
    """What a correction that names no response corrects: ``("fix", position)``; ``("owner", None)`` when no score
    comes before it (it is then its section's score, like "给5分"); ``("unassigned", None)`` when the score before
    it names no response or a weak word follows a section about several; ``("skip", None)`` when the number is no
    corrected score (a weak word far from the score it would replace, without a unit: "the dose should be 5").
    Raises :class:`InputError` when the correction does not say which response's score it replaces."""
    adjacent = prev is not None and jp.FIX_ADJACENT.fullmatch(s, prev[1], start)
    if not (fix.unit or (fix.strong and fix.closes) or adjacent):
        return "skip", None
    if prev is None:
        return "owner", None
    prev_pos, prev_end = prev
    between = {pos_of(mt) for mt in jp.MENTION_RE.finditer(s, prev_end, start)}
    if between - set(prev_pos):
        named = owner(s, prev_end, start, sent)
        if named is not None:
            return "fix", named
        if not fix.strong:
            return "unassigned", None
        raise InputError(f"the rationale corrects a score ({what!r}) but does not say which response's: the text "
                         f"before it is about responses {', '.join(map(str, sorted(between)))}", fix=FIX_HINT)
    if not prev_pos:
        return "unassigned", None
    if len(prev_pos) > 1:
        raise InputError(f"the rationale corrects a score ({what!r}) that responses "
                         f"{', '.join(map(str, prev_pos))} share, and does not say which response's", fix=FIX_HINT)
    p = prev_pos[0]
    if not (sent.end(prev_end) >= start or p in between or set(found) == {p}):
        raise InputError(f"the rationale corrects a score ({what!r}) in a new sentence after scoring responses "
                         f"{', '.join(map(str, sorted(found)))}, and does not say which response's", fix=FIX_HINT)
    return "fix", p


class Spans:
    """Stretches of the text already read (a byte per character): whether a new match overlaps one is a scan
    in C, not a loop over every earlier match."""

    def __init__(self, n: int):
        self.mask = bytearray(n + 1)

    def add(self, a: int, b: int) -> None:
        self.mask[a:b] = b"\x01" * (b - a)

    def free(self, a: int, b: int) -> bool:
        return self.mask.find(1, a, b) == -1

    def copy(self) -> "Spans":
        c = Spans(0)
        c.mask = bytearray(self.mask)
        return c


class Sentences:
    """Where each sentence ends and where the mentions start, found once, so that asking about the rest of a
    sentence costs a binary search (many scores in one long sentence stay linear); likewise, found on first use,
    where every mention (overlapping ones too), list number and line starts."""

    def __init__(self, s: str):
        self.s = s
        self.ends = [m.start() for m in jp.SENTENCE_END.finditer(s)]
        self.clause_ends = [m.start() for m in jp.CLAUSE_END.finditer(s)]
        self.mentions = [m.start() for m in jp.MENTION_RE.finditer(s)]
        self.scales = Spans(len(s))  # the numbers of scale phrases ("满分10分"): never a score
        self._starts: list[int] | None = None
        self._items: tuple[dict, dict] | None = None
        self._lines: list[int] | None = None
        self._heads: dict[int, tuple[int, int, int]] = {}

    def next_mention(self, i: int) -> int:
        """Where ``jp.MENTION_RE.search(s, i)`` finds a mention (``len(s)`` when it finds none)."""
        if self._starts is None:
            self._starts = [m.start() for m in jp.MENTION_AT.finditer(self.s)]
        k = bisect.bisect_left(self._starts, i)
        return self._starts[k] if k < len(self._starts) else len(self.s)

    def has_item(self, number: str, stop: str, i: int, end: int) -> bool:
        r"""Does list number ``number`` + ``stop`` ("3.") stand in ``s[i:end]``, not glued to a digit before or
        after it -- what ``re.compile(rf"(?<![\d.]){number}{re.escape(stop)}(?!\d)").search(s, i, end)`` finds,
        looked up in an index of every list number instead of searched for again from each score."""
        if self._items is None:
            free: dict[tuple[str, str], list[int]] = {}
            glued: dict[tuple[str, str], set[int]] = {}
            for m in jp.ITEM.finditer(self.s):
                if self.s[m.end():m.end() + 1].isdecimal():  # (?!\d) holds only where s is cut just after it
                    glued.setdefault(m.groups(), set()).add(m.start())
                else:
                    free.setdefault(m.groups(), []).append(m.start())
            self._items = free, glued
        free, glued = self._items
        width = len(number) + 1
        at = free.get((number, stop), [])
        k = bisect.bisect_left(at, i)
        if k < len(at) and at[k] + width <= end:
            return True
        return end - width >= i and end - width in glued.get((number, stop), ())

    def heads_line(self, i: int) -> bool:
        """Is everything from the start of ``i``'s line to ``i`` markdown, a bullet or a list number (``"**"``,
        ``"- "``, ``"2. "``): ``jp.HEAD_BEFORE.fullmatch`` of that stretch, with each line's start read once for
        all the mentions on it."""
        if self._lines is None:
            self._lines = [m.start() for m in re.finditer("\n", self.s)]
        k = bisect.bisect_left(self._lines, i)
        start = self._lines[k - 1] + 1 if k else 0
        if start not in self._heads:
            marks = jp.HEAD_MARKS.match(self.s, start).end()
            number = jp.HEAD_NUMBER.match(self.s, marks)
            tail = jp.HEAD_TAIL.match(self.s, number.end()).end() if number else -1
            self._heads[start] = (marks, number.end() if number else -1, tail)
        marks, number_end, tail = self._heads[start]
        return i <= marks or number_end <= i <= tail

    def end(self, i: int, clause: bool = False) -> int:
        ends = self.clause_ends if clause else self.ends
        k = bisect.bisect_left(ends, i)
        return ends[k] if k < len(ends) else len(self.s)

    def names_none_after(self, i: int, clause: bool = False) -> bool:
        """No mention of a response between ``i`` and the end of its sentence (or clause)."""
        k = bisect.bisect_left(self.mentions, i)
        return k == len(self.mentions) or self.mentions[k] >= self.end(i, clause)

    def rest(self, i: int, limit: int = 200) -> str:
        """The rest of the sentence from ``i`` (at most ``limit`` characters: "respectively" comes soon)."""
        return self.s[i:min(self.end(i), i + limit)]
