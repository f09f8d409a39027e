"""The option letters a free-text exam response chooses: :func:`extract_answer`, and CMB's own
regular expression (:func:`cmb_match_choice`) as the baseline; the rules are in :mod:`medeval.stats.exam`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from medeval.core.chinese import to_simplified
from medeval.core.i18n import N_, _
from medeval.stats.exam.groups import read_group
from medeval.stats.exam.reading import (REVISION, WORD_START, Said, echoed, fmt, last_choice, leading, line_answers,
                                        negated, norm, option_text, phrase_choices, revised_statements, standalone,
                                        statements)

DEFAULT_LETTERS = "ABCDEFG"  # when the key gives no options (CMB's answer file has none); CMB reads A-G too
# "ambiguous": the response does not determine a choice (equal candidates, alternatives, contradictory finals, no
# option at all); "none": the response is empty; "unanswered": no response line for the question
METHODS = ("answer_phrase", "leading", "statement", "single_letter", "option_text", "ambiguous", "none",
           "unanswered")



# ------------------------------------------------------------------ CMB's own extraction (the baseline)

_CMB_RE = re.compile(r"(答案|正确选项)(?:是|：|为|应该是|应该为)(.*?)(。|\.|$)", re.S)


def cmb_match_choice(text: str, multi: bool) -> str:
    """CMB's extraction, re-implemented for comparison (``match_choice`` + ``extract_ans`` of
    FreedomIntelligence/CMB ``src/utils.py``): letters A-G after "答案是/正确选项为…" up to the
    first full stop, else every capital A-G in the text; the first letter only for a
    single-choice question.

    >>> cmb_match_choice("答案是B，因为……", multi=False), cmb_match_choice("ECG示ST段抬高，选D", multi=True)
    ('B', 'ECGD')
    """
    option = "ABCDEFG"
    res = _CMB_RE.search(text or "")
    if res:
        choice = "".join(x for x in res.group(2) if x in option)
    else:
        choice = "".join(i for i in (text or "") if i in option)
    if len(choice) > 1 and not multi:
        choice = choice[0]
    return choice


# ------------------------------------------------------------------ our extraction


@dataclass(frozen=True)
class Extraction:
    """Letters read from a response (sorted, e.g. ``"BD"``; ``""`` for none), how, a note (for ``ambiguous``
    the reason) and, for ``ambiguous``, the candidate letters the response names (a reviewer's starting point)."""

    letters: str
    method: str
    note: str = ""
    candidates: str = ""

    @property
    def status(self) -> str:
        """``answered``, ``ambiguous`` (needs a person: never a guessed letter), ``none`` or ``unanswered``."""
        if self.method in ("ambiguous", "none", "unanswered"):
            return self.method
        return "answered"




def extract_answer(response: str | None, options: str | dict | None = None, multi: bool | None = None) -> Extraction:
    """The option letters a response chooses (see the module notes for the rules and their order).

    ``options`` is the question's option dict (letter -> text), or a string of the
    valid letters; without it, A-G. ``multi``: False for a single-answer question (several letters are then
    ``ambiguous``, never cut to one), True for a multiple-answer one, None when the key does not say.

    >>> [extract_answer(t, "ABCDE").letters for t in ["答案：D", "The answer is (B)", "ABD", "B. 急性阑尾炎", "不选A，选C"]]
    ['D', 'B', 'ABD', 'B', 'C']
    >>> e = extract_answer("考虑原发性肺结核", {"A": "小叶型肺炎", "C": "继发性肺结核", "D": "原发性肺结核"})
    >>> e.letters, e.method
    ('D', 'option_text')
    >>> extract_answer("答案是A。等等，应该选C。", "ABCDE").letters, extract_answer("答案 B C E", "ABCDE").letters
    ('C', 'BCE')
    >>> extract_answer("答案：B D", "ABCDE", multi=False).note
    'several letters for a single-answer question (B, D)'
    """
    if isinstance(options, dict):
        option_texts = {str(k).strip().upper(): str(v) for k, v in options.items()}
        valid = "".join(sorted(option_texts))
    else:
        option_texts = None
        valid = (options or DEFAULT_LETTERS).upper()
    s = norm(to_simplified(str(response or "")))
    if option_texts:
        option_texts = {k: to_simplified(v) for k, v in option_texts.items()}
    if not s.strip():
        return Extraction("", "none", "empty response")
    got = _read(s, valid, option_texts, multi)
    if multi is False and len(got.letters) > 1:
        return Extraction("", "ambiguous", f"several letters for a single-answer question "
                                           f"({', '.join(got.letters)})", got.letters)
    return got


_BARE_LINE = re.compile(r"^[ \t(（\[>#*\-]*+([a-z])[ \t.。)）\]]*+$", re.M)
# a character that asks or hedges: worth looking for hedged letters after a choice only where one occurs
_HEDGE_CHAR = re.compile(r"[吗么呢吧?]")
# what introduces a list of answers in a sentence: "的是A、B、D", "包括A、C", "are A, C and D"
_LIST_BEFORE = re.compile(rf"(?:是|为|有|包括|[:：]|{WORD_START}(?:are|include|includes))\s*$", re.I)


def _read(s: str, valid: str, option_texts, multi: bool | None = None) -> Extraction:
    """The reading of a normalised, non-empty response: first the choices it commits to (answer phrases, letters
    alone on a line, conclusions after a revision word) and the last of them; without any, per-option statements,
    letters standing alone, option texts."""
    memo: dict = {}
    echo = echoed(s) if "\n" in s or " " in s else frozenset()
    said = phrase_choices(s, valid, option_texts)
    lead = leading(s, valid, option_texts, memo, echo)
    lines = line_answers(s, valid, option_texts, memo, echo) if "\n" in s else []
    if lead:
        lines.insert(0, Said(lead[1], lead[1], lead[2], fmt(lead[0]), "commit"))
    if lines:
        known = {c.at for c in said}
        said = sorted(said + [c for c in lines if c.at not in known], key=lambda c: c.at)
    commits = [c for c in said if c.kind == "commit"]
    rev = REVISION.search(s, commits[-1].end) if commits else None
    concluded = revised_statements(s, rev.end(), valid, option_texts, memo, echo) if rev else []
    if concluded:
        known = {c.at for c in said}
        said = sorted(said + [c for c in concluded if c.at not in known], key=lambda c: c.at)
        commits = [c for c in said if c.kind == "commit"]
    if commits and _HEDGE_CHAR.search(s, commits[-1].end):
        # a letter asked about after the choice ("A。等等，是C吧？"), not reached by an answer phrase
        asked: list = []
        standalone(s, valid, option_texts, echo, asked)
        known = {c.at for c in said}
        said = sorted(said + [Said(st, st, en, letter, "hedge") for letter, st, en in asked if st not in known],
                      key=lambda c: c.at)
    got = last_choice(s, said)
    if got:
        letters, why, which = got
        if why:
            return Extraction("", "ambiguous", why, fmt(letters))
        method = "leading" if which in lines else "statement" if which in concluded else "answer_phrase"
        return Extraction(fmt(letters), method)
    # a line that is one lower-case letter ("b.", "## 回答\n\nb.\n\n希望对您有帮助！"), the same on every such line
    bare = {x.upper() for x in _BARE_LINE.findall(s)}
    if len(bare) == 1 and bare <= set(valid):
        return Extraction(bare.pop(), "leading")

    asked = []
    singles = standalone(s, valid, option_texts, echo, asked)
    positive, negative, alternatives = statements(s, singles, valid, option_texts, memo)
    if positive - negative:
        return Extraction(fmt(positive - negative), "statement")
    plain = [(letter, st) for letter, st, en in singles if letter not in negative and not negated(s, st, en)]
    chosen = {letter for letter, st in plain} | (alternatives - negative)
    # a letter asked about or hedged counts as a candidate unless a plain one comes after it ("是B吧？不，是C" -> C)
    last_plain = max((st for _, st in plain), default=-1)
    hedged = {c.letters for c in said if c.kind == "hedge" and c.at > last_plain}
    hedged |= {letter for letter, st, en in asked if st > last_plain}
    hedged = set(fmt("".join(hedged))) - negative
    if hedged - chosen:
        cands = fmt("".join(chosen | hedged))
        return Extraction("", "ambiguous", f"a question or hedge, not a choice ({', '.join(fmt(hedged))})", cands)
    if len(chosen) == 1:
        return Extraction(fmt(chosen), "single_letter")
    if len(chosen) > 1 and multi and not alternatives and plain:
        # a multiple-answer question answered by one list in a sentence: "可引起发热的是A、B、D。"
        first = min(st for _, st in plain)
        g = read_group(s, first, valid, False, option_texts, memo)
        if g and not g[2] and set(g[0]) == chosen and _LIST_BEFORE.search(s, max(0, first - 8), first):
            return Extraction(fmt(chosen), "single_letter")
    if len(chosen) > 1:
        return Extraction("", "ambiguous", f"several options named, none stated as the choice "
                                           f"({', '.join(sorted(chosen))})", fmt(chosen))
    if option_texts:
        keep = option_text(s, {k: v for k, v in option_texts.items() if k not in negative})
        if len(keep) == 1:
            return Extraction(keep[0], "option_text")
        if len(keep) > 1:
            return Extraction("", "ambiguous", f"the texts of several options ({', '.join(sorted(keep))})",
                              fmt(keep))
    return Extraction("", "ambiguous", "no option letter or option text found")


# The reasons above are data (the details CSV and JSON keep them in English); a page shows them in its reader's
# language through these patterns, one per reason the extraction gives, its variable part carried over.
_REASONS = (
    (re.compile(r"empty response"), N_("empty response")),
    (re.compile(r"no response in the answers file"), N_("no response in the answers file")),
    (re.compile(r"no option letter or option text found"), N_("no option letter or option text found")),
    (re.compile(r"several options named, none stated as the choice \((?P<x>[^)]*)\)"),
     N_("several options named, none stated as the choice ({x})")),
    (re.compile(r"the texts of several options \((?P<x>[^)]*)\)"), N_("the texts of several options ({x})")),
    (re.compile(r"alternatives, not a choice \((?P<x>[^)]*)\)"), N_("alternatives, not a choice ({x})")),
    (re.compile(r"contradictory final answers \((?P<x>[^)]*)\) with no correction between them"),
     N_("contradictory final answers ({x}) with no correction between them")),
    (re.compile(r"conflicting choices \((?P<x>[^)]*)\) with no revision between them"),
     N_("conflicting choices ({x}) with no revision between them")),
    (re.compile(r"a question or hedge, not a choice \((?P<x>[^)]*)\)"), N_("a question or hedge, not a choice ({x})")),
    (re.compile(r"several letters for a single-answer question \((?P<x>[^)]*)\)"),
     N_("several letters for a single-answer question ({x})")),
)


def reason_text(reason: str | None) -> str:
    """A stored extraction reason as the current language says it (unknown text is shown as it is).

    >>> reason_text("several options named, none stated as the choice (A, C)")
    'several options named, none stated as the choice (A, C)'
    """
    text = str(reason or "")
    for pattern, template in _REASONS:
        m = pattern.fullmatch(text)
        if m:
            return _(template).format(x=(m.groupdict().get("x") or "").replace(" or ", _(" or ")))
    return text
