"""Reading per-response scores out of a judge's free-text rationale, in English and Chinese (simplified or
traditional); the patterns are in :mod:`medeval.annotation.cases.judge_patterns`, tables in
:mod:`medeval.annotation.cases.judge_tables`."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from medeval.annotation.cases import judge_patterns as jp
from medeval.annotation.cases.judge_tables import tables
from medeval.annotation.cases.judge_reading import (FIX_HINT, Fix, Sentences, Spans, correction, fix_target, is_score,
                                                   list_item, number, owner, pos_of, position)
from medeval.core.chinese import to_simplified
from medeval.core.errors import InputError


@dataclass(frozen=True)
class ScoreReading:
    """What a rationale says: ``scores`` ``{position: score}`` (1-based), ``unassigned`` the score phrases that
    name no single response (left out, never given to a guessed one), ``scale`` the one scale written: the
    denominator of a score ("4/5" -> 5.0) or the scale stated apart ("满分10分", "10分制", "(out of 10)", "on a
    scale of 1-10" -> 10.0); None when none is. ``corrections`` says which scores the judge corrected and to what
    ("response 1: 4 -> 5 ('改为5分')"): the corrected score is the one in ``scores``."""

    scores: dict[int, float]
    unassigned: tuple[str, ...]
    scale: float | None
    corrections: tuple[str, ...] = ()



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
    corrections: list[str] = []
    sent = Sentences(s)
    # the judge's scale written apart from a score ("满分10分", "10分制", "(out of 10)"): recorded like the "/10" of
    # "8/10", and its number is never read as a score
    low = s.lower()
    for m in jp.SCALE_RE.finditer(s) if any(w in low for w in jp.SCALE_GATE_WORDS) else ():
        g = next(k for k in jp.SCALE_GROUPS if m.group(k) is not None)
        value = jp.SCALE_NUMERALS.get(m.group(g)) or float(m.group(g))
        if math.isfinite(value) and value > 0:
            dens.setdefault(value, m.group(0).strip())
        sent.scales.add(m.start(g), m.end(g))

    def put(positions, what: str, m: re.Match) -> None:
        score = number(m.group("num"))
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

    def replace(pos: int, what: str, m: re.Match) -> None:
        """A corrected score: the new one replaces the one given before (a later repetition must agree with it)."""
        seen = found.pop(pos, None)
        put([pos], what, m)
        if pos not in found:  # the new number is no number (a run of digits float() reads as inf): keep the old
            if seen is not None:
                found[pos] = seen
            return
        if seen is not None and seen[0] != found[pos][0]:
            corrections.append(f"response {pos}: {seen[0]:g} -> {found[pos][0]:g} ({what!r})")

    # (start, end, kind, positions or count, match): kind "label" (positions), "owner" (its section's), "every"
    events: list[tuple[int, int, str, object, re.Match]] = []
    t_events, t_spans, t_unassigned = tables(s, pos_of)
    unassigned += t_unassigned
    events += [(a, b, "label", p, m) for a, b, p, m in t_events]
    taken = Spans(len(s))
    for a, b in t_spans:
        taken.add(a, b)
    # corrections that name their response first ("更正：医生1应为5分", "Doctor 1 revised to 5"): their numbers are
    # read by nothing else; those that name none ("改为5分", "→ 5") once every other reading is known (below)
    loose: list[tuple[re.Match, Fix]] = []
    if any(w in low for w in jp.FIX_GATE_WORDS):
        for m in sorted([*jp.CORRECTION_VERB_RE.finditer(s), *jp.CORRECTION_RE.finditer(s)], key=lambda x: x.start()):
            fix = correction(s, m, sent)
            if fix is None:
                continue
            if fix.pos is None:
                loose.append((m, fix))
            elif taken.free(m.start(), m.end()):
                taken.add(m.start(), m.end())
                events.append((m.start(), m.end(), "fix", fix, m))
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
        elif is_score(s, m, sent):
            taken.add(chain.start(), m.end())
            pos = [pos_of(t) if t.group("bare") is None else position(t.group("bare"))
                   for t in jp.CHAIN_TOKEN_RE.finditer(chain.group())]
            events.append((chain.start(), m.end(), "label", pos, m))
    for m in jp.EVERY_RE.finditer(s):
        if (taken.free(m.start(), m.end()) and chains.free(m.start(), m.end())
                and not jp.MENTION_RE.search(m.group(0)) and is_score(s, m, sent)):
            cnt = m.group("cnt") or m.group("cnt2") or m.group("cnt3")
            count = (int(cnt) if cnt.isdigit() else jp.COUNTS[cnt.lower()]) if cnt else None
            taken.add(m.start(), m.end())
            events.append((m.start(), m.end(), "every", count, m))
    to_refs = set()
    for m in jp.SCORE_TO_RE.finditer(s):
        if taken.free(m.start(), m.end()) and (m.group("unit") or not list_item(s, m, sent)):
            to_refs.add(m.start("p1") if m.group("p1") else m.end() - 1)
            events.append((m.start(), m.end(), "label", [pos_of(m)], m))
            taken.add(m.start(), m.end())
    labelled = taken.copy()
    for m in jp.SCORE_RE.finditer(s):
        if (taken.free(m.start(), m.end()) and (m.group("p1") is None or m.start("p1") not in to_refs)
                and is_score(s, m, sent, labelled=True)):
            events.append((m.start(), m.end(), "label", [pos_of(m)], m))
            labelled.add(m.start(), m.end())
    # a score line must end its sentence ("Score: 4 (Doctor 1), 3 (Doctor 2)" names its own); a score given in
    # words its clause ("医生1较好，给4分，医生2较差，给2分")
    for rx, clause in ((jp.LINE_RE, False), (jp.GIVE_RE, True)):
        for m in rx.finditer(s):
            if labelled.free(m.start(), m.end()) and is_score(s, m, sent):
                labelled.add(m.start(), m.end())
                if sent.names_none_after(m.end(), clause):
                    events.append((m.start(), m.end(), "owner", None, m))
                else:
                    unassigned.append(m.group(0).strip())
    if loose:
        # a correction that names no response: "改打5分" is also read as a score given in words ("打5分"), and is the
        # correction; a number another reading gives to a named response ("should be 4 points for Doctor 1") is not
        given = {e[4].start("num"): k for k, e in enumerate(events) if e[2] == "owner"}
        dropped = set()
        for m, fix in loose:
            k = given.get(m.start("num"))
            if k is not None:
                dropped.add(k)
            elif not labelled.free(m.start("num"), m.end("num")):
                continue
            events.append((m.start(), m.end(), "fix", fix, m))
        events = [e for k, e in enumerate(events) if k not in dropped]
    last = 0
    prev = None  # (the positions the last score went to, where it ends): what a correction naming none corrects
    for start, end, kind, arg, m in sorted(events, key=lambda e: e[0]):
        what = s[start:end].strip()
        if kind == "fix":
            if arg.several:
                shown = s[start:end + 12].strip()
                raise InputError(f"the rationale corrects a score to more than one value: {shown!r}",
                                 fix=FIX_HINT.replace("name the response in the correction", "give one score"))
            if arg.pos is not None:
                how, pos = "fix", arg.pos
            else:
                how, pos = fix_target(s, sent, arg, what, start, prev, found)
            if how == "owner":
                pos = owner(s, last, start, sent) if sent.names_none_after(end, True) else None
                how = "fix" if pos is not None else "unassigned"
            if how == "fix":
                replace(pos, what, m)
                prev = ((pos,), end)
            elif how == "unassigned":
                unassigned.append(what)
                prev = ((), end)
            if how != "skip":
                last = max(last, end)
            continue
        if kind == "label":
            put(arg, what, m)
            prev = (tuple(arg), end)
        elif kind == "owner":
            pos = owner(s, last, start, sent)
            if pos is not None:
                put([pos], what, m)
                prev = ((pos,), end)
            else:
                unassigned.append(what)
                prev = ((), end)
        else:
            n = n_responses if arg is None else arg
            if n is not None and n_responses is not None and n == n_responses:
                put(range(1, n + 1), what, m)
                prev = (tuple(range(1, n + 1)), end)
            else:
                unassigned.append(what)
                prev = ((), end)
        last = max(last, end)
    if len(dens) > 1:
        shown = " and ".join(repr(w) for w in dens.values())
        raise InputError(f"the rationale mixes score scales: {shown}",
                         fix="give every score on one scale, or give the scores in a 'scores' column")
    scale = next(iter(dens)) if dens else None
    above = [(p, v) for p, (v, _) in sorted(found.items()) if scale is not None and v > scale]
    if above:
        raise InputError(f"the rationale gives response {above[0][0]} {above[0][1]:g}, above its scale of {scale:g} "
                         f"({dens[scale]!r})", fix="correct the rationale, or give the scores in a 'scores' column")
    return ScoreReading({p: v for p, (v, _) in sorted(found.items())}, tuple(unassigned), scale, tuple(corrections))


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

    * **Corrections**: a score the judge changes ("医生1：4分，改为5分", "修正为", "调整为", "更正为", "下调为", "4分→5分",
      "~~4分~~ 5分", "Doctor 1: 4, revised to 5", "adjusted to", "actually 5", "更正：医生1应为5分", "I revised Doctor 2's
      score to 4") is read as the corrected score, and :attr:`ScoreReading.corrections` says so. An explicit change
      (改为, 修正为, revised to ...) names its response or corrects the score just before it -- in the same sentence,
      or in a later one when the text between names that response or it is the only one scored so far; a weaker
      word (应为, should be, actually, →) counts only right after that score or with a score unit. A correction that
      does not say which response's score it replaces (after several responses' scores, or after a score they
      share) or gives more than one score ("改为4或5分") raises :class:`InputError` saying so -- never the first
      score silently; a ``scores`` column is then the way to give the scores.
    * **Scale**: "满分10分", "（满分10分）", "10分制", "百分制", "(out of 10)", "scores are out of 10", "on a scale of
      1-10", "a 5-point scale" record the scale like the "/10" of "8/10"; their number is never a score ("医生1：满分10
      分" gives no score) and may stand between a label and its score ("医生1（满分10分）：8分").

    The same score repeated is fine; two different scores for one response without a correction, scores on
    different scales ("4/5" and "8/10", "满分10分" and "4/5") or a score above the written scale raise
    :class:`InputError`. Matching is linear in the length of the text.

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
