"""Option letters standing alone in a response, and the groups they form ("B", "(B)", "ABD", "B、D", "B and D"):
what :mod:`medeval.stats.exam.extract` reads each candidate letter with (the rules are in
:mod:`medeval.stats.exam`).

Every reader here is linear in the length of the response: what is looked at around a letter is a few
characters (a term before or after it, the text of its option), and runs of spaces are read once.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from medeval.core.text import char_before

# after a letter, these make it part of a term, not an option: B超, A型, C反应蛋白, T细胞 ...
_TERM_AFTER = ("超", "型", "族", "群", "组", "类", "级", "波", "峰", "链", "段", "区", "细胞", "淋巴", "肽", "反应",
               "受体", "因子", "蛋白", "抗原", "抗体", "肝", "药", "物质", "点", "带", "端", "位点", "环", "值", "线",
               "管", "柱", "族维生素", "杆菌", "球菌", "病毒", "瓣", "导联", "字", "样")
_DASH_WORD = re.compile(r"-\S")  # "D-二聚体"
# a run of several letters that is a common abbreviation, not an answer, although its letters are in order
_ABBREVIATIONS = frozenset({"ACE", "BCG", "ABG", "ACD", "ADE", "BE", "AD", "CE", "DE", "EF", "AF"})
# an abbreviation-like run still counts when it stands alone ("答案：AD", "BE。")
# (the end of a line ends it too: "答案：ACE\n\n希望对您有帮助！")
_ALONE_AFTER = re.compile(r"[ \t]*+(?:$|\n|[.,;:!?。，；：！？、)\]）】\"”'’])")
# before a letter: 维生素D, 辅酶A, 蛋白C, 维他命E, vitamin D, hepatitis B, type A, group B ...
_TERM_BEFORE_RE = re.compile(r"(?:[素酶白命]|\b(?:vitamin|hepatitis|type|group|protein|factor|class|grade|stage|"
                             r"phase|lead|wave|influenza|coenzyme|immunoglobulin|plan|cluster|zone|site|chain|"
                             r"point|complex|serotype|subtype|strain|hemophilia|haemophilia))\s*$", re.I)

# (read on the 30 characters after a letter; the runs of spaces are taken whole -- ``\s*+``, no word after them
# starts with a space -- or six neighbouring ``\s*`` shared out 30 spaces in some 300,000 ways)
NEG_AFTER = re.compile(r"^\s*+[)\]）】]?\s*+(?:项|选项)?\s*+[:：]?\s*+(?:均|都|皆|也)?\s*+(?:是|为|的说法|的描述|说法|描述|明显)?\s*+"
                       r"(?:错误|错的|错|不正确|不对|不符合|不恰当|不合适|不选|不是|不能选|排除|可排除|除外|应排除|不准确|"
                       r"is\s+(?:not\s+(?:correct|right|true|the\s+answer)|incorrect|wrong|false)|"
                       r"are\s+(?:not\s+correct|incorrect|wrong|false)|can\s+be\s+(?:excluded|ruled\s+out))", re.I)
# A run of spaces before a word is taken whole (``\s*+``, possessive) where nothing after it can start with a
# space: the same matches, but a long run is read once instead of being shared out between two neighbouring
# ``\s*`` in every way (quadratic: "A" + 20,000 spaces + "x" took seconds).
_SEP = re.compile(r"\s*+(?:、|,|，|;|；|/|和|与|以及|及|或者|或|还是|\+|&|\band\b|\bor\b)\s*|[ \t]+", re.I)
# after a letter, another one in the list: spaces and a bracket, then (see _list_goes_on) the end of a sentence,
# or a separator and the next letter
_CLOSE_GAP = re.compile(r"\s*+[)\]）】]?+\s*+")
_LIST_NEXT = re.compile(r"$|[.。;；!！?？]|(?:[,，、/]|和|与|及|或)\s*+[(\[（【]?+\s*+[A-Za-z](?![A-Za-z])", re.I)
_AND_OR_NEXT = re.compile(r"(?:and|or)\s\s*+[(\[（【]?+\s*+[A-Za-z](?![A-Za-z])", re.I)
_OPEN = re.compile(r"[(\[（【]\s*")
_CLOSE = re.compile(r"\s*[)\]）】]")
_TERMINAL_LOWER = re.compile(r"[ \t]*+(?:$|\n|[.,;:!?。，；：！？)\]）】])")


def _list_goes_on(s: str, k: int) -> bool:
    r"""Does a list of letters go on after the letter ending at ``k``: what
    ``\s*[)\]）】]?\s*(?:$|[.。;；!！?？\n]|(?:[,，、/]|\s(?:and|or)\s|和|与|及|或)\s*[(\[（【]?\s*[A-Za-z](?![A-Za-z]))``
    matches, with the spaces and bracket read once: a line break among them ends the sentence, "and"/"or" needs a
    space right before it."""
    j = _CLOSE_GAP.match(s, k).end()
    if "\n" in s[k:j] or _LIST_NEXT.match(s, j):
        return True
    return j > k and s[j - 1].isspace() and _AND_OR_NEXT.match(s, j) is not None


def _list_item(s: str, k: int, spaced: bool = False, depth: int = 0) -> bool:
    """Is the letter ending at ``k``, reached over a comma or spaces, an item of the list: the list goes on after
    it (:func:`_list_goes_on`), or a comma follows it and no letter ("答案：A，B，因为……"; what starts a new clause
    is a letter followed by a word: "答案：B，A项错误").

    A list written with spaces only (``spaced``: "答案 B C E", "答案：A B，理由……") goes on over further letters
    separated by spaces up to the end of the list; the look-ahead is bounded (a list has at most a few letters),
    so a long run of letters and spaces is still read in linear time."""
    if _list_goes_on(s, k):
        return True
    j = _CLOSE_GAP.match(s, k).end()
    if _LIST_END_COMMA.match(s, j):
        return True
    if spaced and depth < 8 and j > k and s[j - 1] in " \t":
        m = _SPACED_NEXT.match(s, j)
        return bool(m) and _list_item(s, m.end(), True, depth + 1)
    return False


# a list item followed by a comma and then no letter: "A，B，因为……" (a letter after the comma is read by _LIST_NEXT)
_LIST_END_COMMA = re.compile(r"[,，、]\s*+(?![(\[（【]?\s*[A-Za-z])")
# the next item of a list written with spaces: one capital letter standing alone
_SPACED_NEXT = re.compile(r"[A-Z](?![A-Za-z0-9\-])")


def letter_ok(s: str, start: int, end: int, valid: str, lower_ok: bool, option_texts: dict | None) -> bool:
    """Is s[start:end] (a maximal run of ASCII letters) a run of option letters standing alone?"""
    run = s[start:end]
    if not run.isupper():
        if not (lower_ok and len(run) == 1 and run.upper() in valid):
            return False
        # lower case only as "(b)" or "b" followed by punctuation or the end ("the answer is a ..." is an article)
        if not (char_before(s, start) in ("(", "（", "[") or _TERMINAL_LOWER.match(s, end)):
            return False
        run = run.upper()
    if (run not in valid) if len(run) == 1 else any(c not in valid for c in run):
        return False
    if len(run) > 1 and list(run) != sorted(set(run)):
        return False
    if run in _ABBREVIATIONS and not _ALONE_AFTER.match(s, end):
        return False
    if start > 0 and (s[start - 1].isdigit() or (_may_end_term(char_before(s, start))
                                                   and _TERM_BEFORE_RE.search(s[max(0, start - 20):start]))):
        return False
    after = s[end:end + 8]  # what is looked at after the run: a few characters (the longest term is 4)
    if after[:1].isdigit() or _DASH_WORD.match(after) or after.startswith(("'s", "’s")):
        return False
    if after.startswith(_TERM_AFTER):
        if not (option_texts and len(run) == 1 and _starts_with_option_text(s, end, option_texts.get(run, ""))):
            return False
    return True


def _may_end_term(c: str) -> bool:
    """Can a term of _TERM_BEFORE_RE end with ``c`` (the last character before the letter, spaces aside)? Tells
    most letters apart without running the expression."""
    return c in "素酶白命" or (c.isascii() and c.isalpha())


def _starts_with_option_text(s: str, i: int, option_text: str) -> bool:
    """Does the text from ``i`` on start with the option's text (its first 2 to 6 letters, punctuation and case
    aside)?"""
    o = _option_head(option_text)
    return bool(o) and _squash_head(s, i, len(o)) == o


@functools.lru_cache(maxsize=256)
def _option_head(option_text: str) -> str:
    o = squash(option_text)
    return o[: max(2, min(len(o), 6))]


def _squash_head(s: str, i: int, n: int) -> str:
    """The first ``n`` characters of ``squash(s[i:])``, read from as short a stretch as gives them: the stretch
    ends before an ASCII character or a CJK ideograph, which normalisation never joins to what precedes it, so
    its squashed form is the start of the whole one's."""
    w = 16
    while True:
        j = i + w
        if j >= len(s):
            return squash(s[i:])[:n]
        if s[j].isascii() or "\u4e00" <= s[j] <= "\u9fff":
            head = squash(s[i:j])
            if len(head) >= n:
                return head[:n]
        w *= 2


def read_group(s: str, pos: int, valid: str, lower_ok: bool, option_texts: dict | None, memo: dict | None = None):
    """Letters of a group starting at ``pos`` ("B", "(B)", "ABD", "B、D", "B and D"): (letters, end) or None.
    ``memo`` keeps the groups read in one response (the leading group is read again as a statement)."""
    if memo is not None:
        key = (pos, lower_ok)
        if key not in memo:
            memo[key] = read_group(s, pos, valid, lower_ok, option_texts)
        got = memo[key]
        return got if got is None else (list(got[0]), got[1], got[2])
    letters: list[str] = []
    i = pos
    cut = None  # (letters, position) before the first comma crossed
    alt = False  # letters joined by "或"/"or": alternatives, not a set
    checked = None  # the run of letters last found to be option letters (not checked twice)
    while True:
        m = _OPEN.match(s, i)
        j = m.end() if m else i
        k = _run_end(s, j)
        if k == j or ((j, k) != checked and not letter_ok(s, j, k, valid, lower_ok, option_texts)):
            break
        letters.extend(s[j:k].upper())
        i = k
        c = _CLOSE.match(s, i)
        if c:
            i = c.end()
        for suffix in ("选项", "项"):
            if s.startswith(suffix, i):
                i += len(suffix)
                break
        sep = _SEP.match(s, i)
        if not sep or sep.end() == i:
            break
        # only continue over a separator when another letter follows it
        nxt = sep.end()
        m2 = _OPEN.match(s, nxt)
        nxt = m2.end() if m2 else nxt
        k2 = _run_end(s, nxt)
        if k2 > nxt:
            weak = s[i:sep.end()].strip() in ("", ",", "，", ";", "；")
            # over a comma or a space only a list goes on ("B, D", "A, C and D"), not a new clause ("答案：B，A项错误")
            spaced = s[i:sep.end()].strip() == ""
            if letter_ok(s, nxt, k2, valid, lower_ok, option_texts) and (not weak or _list_item(s, k2, spaced)):
                if weak and cut is None:
                    cut = (len(letters), i)
                alt = alt or bool(_ALT_SEP.search(s[i:sep.end()]))
                i = sep.end()
                checked = (nxt, k2)
                continue
        break
    if not letters:
        return None
    if cut and NEG_AFTER.match(s[i:i + 30]):  # "答案：C；A、B、D、E均不正确": the list after the comma is ruled out
        letters, i = letters[:cut[0]], cut[1]
    if len(set(letters)) > 1 and _EQUAL_AFTER.match(s[i:i + 30]):  # "A和B都有可能": equal candidates
        alt = True
    return letters, i, alt


_ALT_SEP = re.compile(r"或|还是|\bor\b", re.I)  # "B或C", "A还是C？", "B or C": alternatives
_LETTERS = re.compile(r"[A-Za-z]*")


def _run_end(s: str, i: int) -> int:
    """The end of the run of ASCII letters starting at ``i`` (``i`` when there is none)."""
    return _LETTERS.match(s, i).end()
_EQUAL_AFTER = re.compile(r"\s*+[)\]）】]?\s*+(?:两[个项者]|二者|两者)?\s*+(?:都|均|皆|也)\s*+(?:有)?(?:可能|可以|行|说得通)|"
                          r"\s*+(?:are|seem|both)\s++(?:both\s+|equally\s+)?(?:possible|plausible|likely|reasonable)",
                          re.I)


def squash(t: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", t or "")).casefold()
