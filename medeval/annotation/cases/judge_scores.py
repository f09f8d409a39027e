"""Reading per-response scores out of a judge's free-text rationale, in English and Chinese (simplified or
traditional); the patterns are in :mod:`medeval.annotation.cases.judge_patterns`, tables in
:mod:`medeval.annotation.cases.judge_tables`."""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from dataclasses import dataclass

from medeval.annotation.cases import judge_patterns as jp
from medeval.annotation.cases.judge_tables import tables
from medeval.core.chinese import MAX_DIGITS, parse_int, to_simplified
from medeval.core.errors import InputError
from medeval.core.text import char_before


@dataclass(frozen=True)
class ScoreReading:
    """What a rationale says: ``scores`` ``{position: score}`` (1-based), ``unassigned`` the score phrases that
    name no single response (left out, never given to a guessed one), ``scale`` the one denominator written
    ("4/5" -> 5.0; None when none is)."""

    scores: dict[int, float]
    unassigned: tuple[str, ...]
    scale: float | None


def _int(p: str) -> int:
    if p.isascii() and p.isalpha():
        return ord(p.upper()) - ord("A") + 1  # "Response B"
    if p.isdecimal():
        return int(p)  # any script's digits ("医生٣"); at most MAX_DIGITS of them (judge_patterns.POS)
    v = parse_int(p)
    if v is None:  # pragma: no cover - the patterns only let numerals through
        raise ValueError(p)
    return v


def _pos_of(m: re.Match, tag: str = "1") -> int:
    p = m.group("p" + tag) or m.group("z" + tag)
    return _int(p) if p else jp.ORDINALS[m.group("o" + tag).lower()]


def _num(s: str) -> float:
    return float(s) if s[0].isdigit() else float(parse_int(s))


def _list_item(s: str, m: re.Match, sent: "_Sentences") -> bool:
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


def _is_score(s: str, m: re.Match, sent: "_Sentences", *, labelled: bool = False) -> bool:
    """Whether *m* (a match ending in SCORE and UNIT) reads a score, not a measurement or a list item;
    *labelled*: it starts with its label, which must not follow a score ("4 (Doctor 1)")."""
    if labelled and jp.SCORE_BEFORE.search(s, max(0, m.start() - 20), m.start()):
        return False
    if m.group("unit"):
        return True
    return not jp.NOT_SCORE.match(s, m.end()) and not _list_item(s, m, sent)


def _owner(s: str, start: int, end: int, sent: "_Sentences") -> int | None:
    """The response a label-less score at *end* is about: the section ``s[start:end]`` (since the previous
    score) must mention a response, and every mention from its last heading on (or from its first mention
    when none heads a line) must name the same one; otherwise it is ambiguous and ``None``."""
    ms = list(jp.MENTION_RE.finditer(s, start, end))
    if not ms:
        return None
    heads = [k for k, mt in enumerate(ms) if jp.HEAD_AFTER.match(s, mt.end()) or sent.heads_line(mt.start())]
    first = heads[-1] if heads else 0
    pos = {_pos_of(mt) for mt in ms[first:]}
    return pos.pop() if len(pos) == 1 else None


class _Spans:
    """Stretches of the text already read (a byte per character): whether a new match overlaps one is a scan
    in C, not a loop over every earlier match."""

    def __init__(self, n: int):
        self.mask = bytearray(n + 1)

    def add(self, a: int, b: int) -> None:
        self.mask[a:b] = b"\x01" * (b - a)

    def free(self, a: int, b: int) -> bool:
        return self.mask.find(1, a, b) == -1

    def copy(self) -> "_Spans":
        c = _Spans(0)
        c.mask = bytearray(self.mask)
        return c


class _Sentences:
    """Where each sentence ends and where the mentions start, found once, so that asking about the rest of a
    sentence costs a binary search (many scores in one long sentence stay linear); likewise, found on first use,
    where every mention (overlapping ones too), list number and line starts."""

    def __init__(self, s: str):
        self.s = s
        self.ends = [m.start() for m in jp.SENTENCE_END.finditer(s)]
        self.clause_ends = [m.start() for m in jp.CLAUSE_END.finditer(s)]
        self.mentions = [m.start() for m in jp.MENTION_RE.finditer(s)]
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


def read_judge_scores(text: str, n_responses: int | None = None) -> ScoreReading:
    """Per-response scores written in a judge's rationale, with the scores that name no response.

    See :func:`parse_judge_scores` for what is read. ``n_responses`` (how many responses the judge saw) lets
    "both get 4", "所有回答均为4分" and "三位医生均为4分" give every response that score -- only when the count
    the judge writes ("both" = 2, "三位" = 3) is that number; without it they are unassigned.
    """
    s = to_simplified(unicodedata.normalize("NFKC", text or ""))
    found: dict[int, tuple[float, str]] = {}
    dens: dict[float, str] = {}
    unassigned: list[str] = []
    sent = _Sentences(s)

    def put(positions, what: str, m: re.Match) -> None:
        score = _num(m.group("num"))
        den = m.group("den") or m.group("den2")
        if not math.isfinite(score) or (den is not None and not math.isfinite(float(den))):
            return  # a run of digits too long to be a number (float() reads it as inf): no score
        if den is not None:
            dens.setdefault(float(den), what)
        for pos in positions:
            seen = found.get(pos)
            if seen is not None and seen[0] != score:
                raise InputError(
                    f"the rationale gives response {pos} two different scores: {seen[1]!r} and {what!r}",
                    fix="correct the rationale, or give the scores in a 'scores' column ({\"model\": score, ...})")
            found.setdefault(pos, (score, what))

    # (start, end, kind, positions or count, match): kind "label" (positions), "owner" (its section's), "every"
    events: list[tuple[int, int, str, object, re.Match]] = []
    t_events, t_spans, t_unassigned = tables(s, _pos_of)
    unassigned += t_unassigned
    events += [(a, b, "label", p, m) for a, b, p, m in t_events]
    taken = _Spans(len(s))
    for a, b in t_spans:
        taken.add(a, b)
    chains = taken.copy()
    for chain in jp.CHAIN_RE.finditer(s):
        if not taken.free(chain.start(), chain.end()):
            continue
        chains.add(chain.start(), chain.end())
        m = jp.SHARED_RE.match(s, chain.end())
        if m is None:
            continue
        if jp.RESPECTIVELY.search(sent.rest(m.end())):
            taken.add(chain.start(), m.end())
        elif _is_score(s, m, sent):
            taken.add(chain.start(), m.end())
            pos = [_pos_of(t) if t.group("bare") is None else _int(t.group("bare"))
                   for t in jp.CHAIN_TOKEN_RE.finditer(chain.group())]
            events.append((chain.start(), m.end(), "label", pos, m))
    for m in jp.EVERY_RE.finditer(s):
        if (taken.free(m.start(), m.end()) and chains.free(m.start(), m.end())
                and not jp.MENTION_RE.search(m.group(0)) and _is_score(s, m, sent)):
            cnt = m.group("cnt") or m.group("cnt2") or m.group("cnt3")
            count = (int(cnt) if cnt.isdigit() else jp.COUNTS[cnt.lower()]) if cnt else None
            taken.add(m.start(), m.end())
            events.append((m.start(), m.end(), "every", count, m))
    to_refs = set()
    for m in jp.SCORE_TO_RE.finditer(s):
        if taken.free(m.start(), m.end()) and (m.group("unit") or not _list_item(s, m, sent)):
            to_refs.add(m.start("p1") if m.group("p1") else m.end() - 1)
            events.append((m.start(), m.end(), "label", [_pos_of(m)], m))
            taken.add(m.start(), m.end())
    labelled = taken.copy()
    for m in jp.SCORE_RE.finditer(s):
        if (taken.free(m.start(), m.end()) and (m.group("p1") is None or m.start("p1") not in to_refs)
                and _is_score(s, m, sent, labelled=True)):
            events.append((m.start(), m.end(), "label", [_pos_of(m)], m))
            labelled.add(m.start(), m.end())
    # a score line must end its sentence ("Score: 4 (Doctor 1), 3 (Doctor 2)" names its own); a score given in
    # words its clause ("医生1较好，给4分，医生2较差，给2分")
    for rx, clause in ((jp.LINE_RE, False), (jp.GIVE_RE, True)):
        for m in rx.finditer(s):
            if labelled.free(m.start(), m.end()) and _is_score(s, m, sent):
                labelled.add(m.start(), m.end())
                if sent.names_none_after(m.end(), clause):
                    events.append((m.start(), m.end(), "owner", None, m))
                else:
                    unassigned.append(m.group(0).strip())
    last = 0
    for start, end, kind, arg, m in sorted(events, key=lambda e: e[0]):
        what = s[start:end].strip()
        if kind == "label":
            put(arg, what, m)
        elif kind == "owner":
            pos = _owner(s, last, start, sent)
            if pos is not None:
                put([pos], what, m)
            else:
                unassigned.append(what)
        else:
            n = n_responses if arg is None else arg
            if n is not None and n_responses is not None and n == n_responses:
                put(range(1, n + 1), what, m)
            else:
                unassigned.append(what)
        last = max(last, end)
    if len(dens) > 1:
        shown = " and ".join(repr(w) for w in dens.values())
        raise InputError(f"the rationale mixes score scales: {shown}",
                         fix="give every score on one scale, or give the scores in a 'scores' column")
    return ScoreReading({p: v for p, (v, _) in sorted(found.items())}, tuple(unassigned),
                        next(iter(dens)) if dens else None)


def parse_judge_scores(text: str, n_responses: int | None = None) -> dict[int, float]:
    """Per-response scores written in a judge's rationale: ``{position: score}`` (position 1-based).

    The text is read NFKC-normalised (full-width characters as ASCII) and in simplified Chinese (OpenCC,
    :func:`medeval.core.chinese.to_simplified`), so "醫生1的回答…給5分" reads as "医生1的回答…给5分". A response is
    named by a label (Doctor, Response, Assistant, Answer, Model ...; 医生, 回答, 模型, 助手 ...) with its number
    ("Doctor 1", "医生一", "回答二"), its capital letter ("Response B" = 2), or an ordinal ("第二个回答", "the
    first response"). Scores are numbers or Chinese numerals before 分 ("五分"; "十分全面" is "very complete").

    * **Labelled**: the label, then only separators, markdown and score words (gets, score, deserves a, 得分,
      评分, 为 ...), then the score, optionally with a unit (points, 分, /5, /10, out of 10): "Doctor 1: 4
      points", "医生1得分：4分", "Response B deserves a 3/5", "I'd give Doctor 1 a 4". Or the score, then "to" /
      "for" and the label: "I give 4 points to Doctor 1". A number followed by a unit of measure (mg, %, 次,
      岁 ...) is not a score ("Doctor 1 said the dose is 5 mg").
    * **Its section's**: a score line ("Score: 4", "**Rating**: 4/5", "得分：4分") or a score given in words
      ("给5分", "我给4分", "给它打4分", "I'd give it 5", "deserves a 3/5") with no label of its own belongs
      to the response the text since the previous score is about: every label from the last one that heads
      a line (or from the first, if none does) must name that response, and nothing after the number in its
      sentence may be a label. "医生1的回答较全面，给5分" gives response 1 a 5; "医生1较好，医生2较差，给4分"
      names two and gives nothing (the score is *unassigned*, see :func:`read_judge_scores`).
    * **Shared**: several labels joined by and/,/和/与/、 share the score after them ("Doctor 1 and Doctor 2
      both get 4 points", "医生1和医生2均为4分") -- unless it is one of several ("4 and 3 points respectively",
      "分别为4分、3分"). "Both get 4", "两位医生均为4分", "all responses score 4" give every response the score
      only with ``n_responses`` and a count that matches it.
    * **Tables**: Markdown tables, one row or one column per response (see
      :mod:`medeval.annotation.cases.judge_tables`).
    * **Not scores**: list items ("Doctor 1: 1. Accurate diagnosis 2. ...": a number without a unit followed
      by "." and more text is a list item if it is 1 or the next item follows; the end of the line, another
      label or a unit after it makes it a score), and a number after a label in brackets ("4 (Doctor 1), 3
      (Doctor 2)": the score comes before it).

    The same score repeated is fine; two different scores for one response, or scores on different scales
    ("4/5" and "8/10"), raise :class:`InputError`. Matching is linear in the length of the text.

    >>> parse_judge_scores("Doctor 1: 5 points. Doctor 2 gets 4 points.")
    {1: 5.0, 2: 4.0}
    >>> parse_judge_scores("医生1的回答较全面，给5分；对于医生2的回答，我给4分。")
    {1: 5.0, 2: 4.0}
    >>> parse_judge_scores("醫生1的回答較全面，給五分")
    {1: 5.0}
    >>> parse_judge_scores("Response A: 4/5. Response B deserves a 3/5")
    {1: 4.0, 2: 3.0}
    >>> parse_judge_scores("Both are accurate; both get 4.", n_responses=2)
    {1: 4.0, 2: 4.0}
    >>> parse_judge_scores("医生1较好，医生2较差，给4分")
    {}
    """
    return read_judge_scores(text, n_responses).scores
