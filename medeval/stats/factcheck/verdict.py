"""The verdict a fact-check response starts with (support, refute, or none: hedged, contradictory,
missing): :func:`parse_verdict`; the rules are in :mod:`medeval.stats.factcheck`, the patterns in
:mod:`medeval.stats.factcheck.patterns`."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from medeval.core.chinese import to_simplified
from medeval.stats.factcheck import patterns as P

SUPPORT = "support"
REFUTE = "refute"
LABELS = (SUPPORT, REFUTE)
STATUSES = ("verdict", "hedged", "contradictory", "no_verdict", "empty")


@dataclass(frozen=True)
class Verdict:
    """The verdict at the start of one response.

    ``label`` is ``"support"`` (the model says the claim is correct), ``"refute"``
    (incorrect) or ``None``; ``status`` says why: ``verdict``; ``hedged`` (a qualified
    answer: "部分正确", "正确，但不完全", "True only in part"); ``contradictory`` (two
    opposite verdicts: "正确/错误", "Yes, this is incorrect", a self-correction "正确。不，
    应该是错误的"); ``no_verdict`` (the response does not start with one) or ``empty``.
    ``matched`` is the text that decided; ``lead`` is, for a hedged answer that starts with a
    verdict word ("正确，但不完全"), that word's label -- what a reader of the first word only
    would take (see ``hedged="lead"`` in :func:`medeval.stats.factcheck.score_items`).
    """

    label: str | None
    status: str
    matched: str = ""
    lead: str | None = None

    @property
    def followed(self) -> bool:
        """True when the response starts with a verdict, 'correct' or 'incorrect' (SDAK §4.2.2)."""
        return self.label is not None


def normalise(text: str) -> str:
    """NFKC, traditional -> simplified (OpenCC), lower case, straight apostrophes; an underscore is markdown
    emphasis ("__True__"), read as a space so that the word before it still ends ("true" + "_" is no word)."""
    return (to_simplified(unicodedata.normalize("NFKC", text)).lower().replace("’", "'").replace("‘", "'")
            .replace("_", " "))


def _strip_filler(s: str, claim: str | None) -> str:
    """Drop leading filler, quotes and a restated claim, repeatedly."""
    for _ in range(12):
        before = s
        u = P.UNTICKED_OPTION_RE.match(s)
        if u:
            s = s[u.end():]  # "[ ] 正确 [x] 错误": the unticked option is not the answer
        s = s[P.SKIP_NO_QUOTES.match(s).end():]
        q = P.QUOTE_RE.match(s)
        if q and len(q.group(1)) > 3 and not _starts_with_verdict(q.group(1)):
            s = s[q.end():]  # a quoted restatement of the claim, e.g. “……”这一说法是正确的
            continue
        s = s[P.SKIP.match(s).end():]
        if claim and s.startswith(claim):
            s = s[len(claim):]
            continue
        m = P.FILLER_RE.match(s)
        if m and m.end() > 0:
            s = s[m.end():]
        t = P.TEMPLATE_RE.match(s)
        if t:
            s = s[t.end():]  # the prompt's option list that the answer fills in: "正确/错误：正确"
        if s == before:
            break
    return s[P.SKIP.match(s).end():]


def _starts_with_verdict(s: str) -> bool:
    s = s[P.SKIP.match(s).end():]
    return bool(P.HEDGE_RE.match(s) or P.VERDICT_RE.match(s))


def _verdict_at(s: str) -> tuple[str | None, str, int]:
    """(label, matched text, end) of the verdict ``s`` starts with; ``"X的说法"`` read as X, ``"正确的说法是…"``
    (what would be right) as no verdict."""
    m = P.VERDICT_RE.match(s)
    if not m:
        return None, "", 0
    label = REFUTE if m.lastgroup.startswith("r") else SUPPORT
    end = m.end()
    sf = P.SHUOFA_RE.match(s, end)
    if sf:
        if P.SHUOFA_INTRO_RE.match(s, sf.end()):
            return None, "", 0  # "正确的说法是：……" introduces a correction: not a verdict on the claim
        end = sf.end()
    return label, s[m.start():end], end


def _second_verdict(rest: str, label: str, matched: str) -> "Verdict | None":
    """A hedge or an opposite verdict right after the first one, or a self-correction soon after."""
    for pat in (P.POST_HEDGE_ANY_RE,) + ((P.POST_HEDGE_SUPPORT_RE,) if label == SUPPORT else ()):
        h = pat.match(rest)
        if h:
            return Verdict(None, "hedged", (matched + rest[:h.end()]).strip(), lead=label)
    if P.UNTICKED_RE.match(rest):
        return None  # "[x] 正确 [ ] 错误": the other option, left unticked, is not a second verdict
    after = _strip_filler(rest[P.JOIN_RE.match(rest).end():], None)
    label2, matched2, _ = _verdict_at(after)
    if label2 is not None and label2 != label:
        return Verdict(None, "contradictory", f"{matched} / {matched2}")
    window = rest[:P.CORRECTION_WINDOW]
    for c in P.CORRECTION_RE.finditer(window):
        tail = _strip_filler(rest[c.end():], None)
        label2, matched2, _ = _verdict_at(tail)
        if label2 is not None and label2 != label:
            return Verdict(None, "contradictory", f"{matched} / {c.group(0)} {matched2}")
    return None


def parse_verdict(response: str | None, claim: str | None = None) -> Verdict:
    """The verdict a response *starts* with: support, refute, or none (hedged, contradictory, missing).

    Traditional Chinese is read as simplified; leading filler ("嗯，", "好的，", "作为AI助手，", "Sure,",
    "答案：", "这个说法是", "The statement is") is skipped. ``claim`` (optional) lets a response that
    restates the claim first ("尾胰癌会导致腹痛，这个说法是正确的") still count as starting with a verdict.

    >>> [parse_verdict(t).label for t in ["正確。", "錯誤，因為……", "不正确", "嗯，这个说法是对的", "对于这个问题……"]]
    ['support', 'refute', 'refute', 'support', None]
    >>> [parse_verdict(t).label for t in ["这是错误的说法。", "Incorrect —", "No, it is not.", "Correctly, ..."]]
    ['refute', 'refute', 'refute', None]
    >>> parse_verdict("正确，但不完全。").status, parse_verdict("正确，但不完全。").lead
    ('hedged', 'support')
    >>> parse_verdict("正确/错误").status, parse_verdict("正确。不，应该是错误的。").status
    ('contradictory', 'contradictory')
    """
    if response is None or not str(response).strip():
        return Verdict(None, "empty")
    s = normalise(str(response))
    c = normalise(claim).strip().rstrip("。.!！;；") if claim else None
    s = _strip_filler(s, c or None)
    if not s:
        return Verdict(None, "no_verdict")
    h = P.HEDGE_RE.match(s)
    if h:
        return Verdict(None, "hedged", h.group(0))
    label, matched, end = _verdict_at(s)
    if label is None:
        return Verdict(None, "no_verdict", s[:20])
    second = _second_verdict(s[end:], label, matched.strip())
    return second or Verdict(label, "verdict", matched.strip())
