"""The option letters a free-text exam response chooses: :func:`extract_answer`, and CMB's own
regular expression (:func:`cmb_match_choice`) as the baseline; the rules are in :mod:`medeval.stats.exam`."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from medeval.core.chinese import to_simplified
from medeval.core.i18n import N_, _
from medeval.stats.exam.groups import NEG_AFTER, letter_ok, read_group, squash

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


_MARKDOWN = re.compile(r"\*\*|__|`")

_NEG_BEFORE = re.compile(r"(?:不选|不应选|不能选|不可选|不应该选|不会选|不是|并非|而非|而不是|排除|除了|除|非|"
                         r"\bnot|\bexcept|\brather than|\bexclude|\bexcluding|\bnor)\s*(?:选项|选|option|choice)?\s*"
                         r"[(\[（【]?\s*$", re.I)
_POS_AFTER = re.compile(r"^\s*+[)\]）】]?\s*+(?:项|选项)?\s*+[:：]?\s*+(?:均|都|皆|也)?\s*+(?:是|为)?\s*+"
                        r"(?:正确答案|正确|对的|对(?![于此比待应照抗])|符合题意|最符合|符合|最佳|最恰当|最合适|当选|入选|"
                        r"is\s+(?:the\s+)?(?:correct|right|best|true)|are\s+(?:the\s+)?(?:correct|right))", re.I)

_CN_STRONG = (r"(?:最终|正确|最佳|标准|参考)?答案(?:应该?是|应该?为|应选|是|为|选|选择|应是)?|"
              r"(?:正确|最佳)选项(?:应该?是|应该?为|是|为)?|"
              r"(?:故|所以|因此|因而|综上所述|综上|本题)[,，]?\s*(?:本题)?(?:应该?)?(?:选择|选)(?:答案)?|"
              r"(?:更|最|还是|比较)?倾向于?(?:选择|选)?|首选|(?:只|仅)剩下?|剩下的?(?:只有|是|为)?|"
              r"(?:更|最)有?可能(?:是|为|选)?")
_CN_WEAK = r"(?:应该?|可以?|我)?(?:选择|选)(?:答案)?|(?:我的)?选择是|应该?是|应为"
_EN_STRONG = (r"\b(?:the\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?answers?\s*(?:is|are|would\s+be|should\s+be|"
              r"will\s+be)?|\b(?:i\s+)?(?:lean|am\s+leaning|'m\s+leaning)\s+(?:towards?|to)|"
              r"\b(?:leaves?|leaving)\s+(?:only\s+)?|\b(?:more|most)\s+likely\s+(?:is\s+|to\s+be\s+)?|"
              r"\bi\s+(?:would\s+|'d\s+)?prefer|\b(?:the\s+)?(?:correct|best|right)\s+(?:options?|choices?)\s*(?:is|are)?")
_EN_WEAK = r"\bi\s*(?:would\s+|will\s+|'d\s+)?(?:choose|select|pick|go\s+with)|\b(?:choose|select)"
_PHRASES = [(re.compile(p, re.I), strength, english) for p, strength, english in (
    (_CN_STRONG, 2, True), (_EN_STRONG, 2, True), (_CN_WEAK, 1, False), (_EN_WEAK, 1, True))]
_AFTER_PHRASE = re.compile(r"\s*[】\])）]?\s*[:：=]?\s*(?:是|为)?\s*(?:options?|choices?|选项)?\s*", re.I)
def _norm(text: str) -> str:
    return _MARKDOWN.sub("", unicodedata.normalize("NFKC", text or ""))


# a letter asked about, not stated: "答案是A吗？", "Is it A?"
_QUESTION_AFTER = re.compile(r"\s*+[)\]）】]?+\s*+(?:吗|么|呢|\?)")
# words between two final answers that make the later one a correction, not a contradiction
_CORRECTION = re.compile(r"不对|不，|不,|等等|等一下|更正|纠正|修正|重新|再想|仔细|其实|wait|actually|correction|"
                         r"on\s+second\s+thought|reconsider|\bno\b", re.I)


def _negated(s: str, start: int, end: int) -> bool:
    return bool(_NEG_BEFORE.search(s[max(0, start - 12):start]) or NEG_AFTER.match(s[end:end + 30]))


def _fmt(letters) -> str:
    return "".join(sorted(set(letters)))


def _phrase_answers(s: str, valid: str, option_texts):
    """The letters of the last strongest answer phrase and, when that answer is not a choice, why: (letters,
    reason or None), or None without any phrase."""
    found = []
    for rx, strength, english in _PHRASES:
        for m in rx.finditer(s):
            if m.end() == m.start():
                continue
            pre = s[max(0, m.start() - 4):m.start()]
            if re.search(r"(?:不|勿|别|没|未|非)(?:应该?|会|能|可)?$", pre) or re.search(r"\bnot\s*$", pre, re.I):
                continue
            if strength == 1 and pre[-1:] in ("备", "次", "候", "首"):  # "备选B" is a fallback; "首选" is strong
                continue
            a = _AFTER_PHRASE.match(s, m.end())
            g = read_group(s, a.end(), valid, english, option_texts)
            if not g:
                continue
            letters, end, alt = g
            if NEG_AFTER.match(s[end:end + 30]) or _QUESTION_AFTER.match(s, end):
                continue  # "答案是A吗？不，应该是C": a question is not an answer
            final = bool(re.search(r"最终|final", m.group(0), re.I))
            found.append((strength, m.start(), letters, alt, final, end))
    if not found:
        return None
    best = max(f[0] for f in found)
    strongest = sorted((f for f in found if f[0] == best), key=lambda f: f[1])
    last = strongest[-1]
    finals = [f for f in strongest if f[4]]
    for a, b in zip(finals, finals[1:]):
        if _fmt(a[2]) != _fmt(b[2]) and not _CORRECTION.search(s[a[5]:b[1]]):
            return _fmt(a[2]) + _fmt(b[2]), (f"contradictory final answers ({_fmt(a[2])}; {_fmt(b[2])}) with no "
                                             "correction between them")
    if last[3]:
        return last[2], f"alternatives, not a choice ({' or '.join(_fmt(last[2]))})"
    return last[2], None


_LEAD_SKIP = re.compile(r"^[\s>#\-*•]*(?:(?:答|answer|选|选择)\s*[:：]\s*)?", re.I)


def _leading(s: str, valid: str, option_texts, memo: dict | None = None):
    p = _LEAD_SKIP.match(s).end()
    g = read_group(s, p, valid, False, option_texts, memo)
    if not g:
        return None
    letters, end, alt = g
    if letters == ["A"] and _ARTICLE.match(s, end):  # the English article: "A bacterial infection ..."
        return None
    if NEG_AFTER.match(s[end:end + 30]) or _POS_AFTER.match(s[end:end + 30]):
        return None  # "A项错误……", "A项正确，B项正确……": per-option statements, read as such below
    if alt:
        return None  # "A或B", "A和B都有可能": alternatives, read below as several candidates
    return letters


# "A" followed by a lower-case word is the article, unless the word is one that follows an option letter
_ARTICLE = re.compile(r"\s+(?!(?:and|or|nor|is|are|was|were|seems?|appears?|looks?|would|could|should|might|may|"
                      r"can|will|because|since|as|also|only|too|vs|versus|then|than|fits?|matches?|alone)\b)[a-z0-9]")


def _statements(s: str, singles, valid: str, option_texts, memo: dict | None = None):
    """Options declared right ("B项正确", "A、B、D正确", "Option C is correct") and ruled out ("A、B均错误", "不选C")."""
    positive, negative, alternatives = set(), set(), set()
    consumed = -1
    for letter, st, en in singles:
        if st < consumed:
            continue
        g = read_group(s, st, valid, False, option_texts, memo)
        letters, end, alt = g if g else ([letter], en, False)
        consumed = end
        if alt:
            alternatives.update(letters)  # "A或B正确", "A和B都有可能": candidates, not a choice
            continue
        if _NEG_BEFORE.search(s[max(0, st - 12):st]) or NEG_AFTER.match(s[end:end + 30]):
            negative.update(letters)
        elif _POS_AFTER.match(s[end:end + 30]):
            positive.update(letters)
    return positive, negative, alternatives


_LETTER_RUN = re.compile(r"(?<![A-Za-z])[A-Za-z]+(?![A-Za-z])")
_LEFT_OK = set(" \t\n\r,，.。:：;；!！?？、(（[【\"“'‘/") | set("选是为即和与或及项")
_RIGHT_OK_CHARS = set(" \t\n\r,，.。:：;；!！?？、)）]】\"”'’/") | set("是为和与或及")
_RIGHT_OK_WORDS = ("项", "选项", "正确", "对", "最", "符合", "错", "不")


def _standalone(s: str, valid: str, option_texts):
    """Every uppercase single option letter with option-like surroundings: (letter, start, end)."""
    out = []
    for m in _LETTER_RUN.finditer(s):
        run = m.group(0)
        if len(run) != 1 or run not in valid:
            continue
        st, en = m.span()
        left = s[st - 1] if st else " "
        right = s[en] if en < len(s) else " "
        if left not in _LEFT_OK:
            continue
        if not (right in _RIGHT_OK_CHARS or s.startswith(_RIGHT_OK_WORDS, en)):
            continue
        if _QUESTION_AFTER.match(s, en):
            continue  # "是A吗？", "Is it A?": asked, not chosen
        if run == "A" and _ARTICLE.match(s, en):
            continue
        if not letter_ok(s, st, en, valid, False, option_texts):
            continue
        out.append((run, st, en))
    return out


def _option_text(s: str, option_texts: dict):
    sq = squash(s)
    hits = {}
    for letter, text in option_texts.items():
        o = squash(text)
        if len(o) < 2:
            continue
        for m in re.finditer(re.escape(o), sq):
            before = sq[max(0, m.start() - 4):m.start()]
            if before.endswith(("不是", "排除", "并非", "而非", "not", "除", "非", "不选")):
                continue
            hits[letter] = o
            break
    # an option whose text is inside another hit ("肺结核" in "原发性肺结核") does not count on its own
    keep = [k for k, o in hits.items() if not any(o != o2 and o in o2 for o2 in hits.values())]
    return keep


def extract_answer(response: str | None, options: str | dict | None = None) -> Extraction:
    """The option letters a response chooses (see the module notes for the rules and their order).

    ``options`` is the question's option dict (letter -> text), or a string of the
    valid letters; without it, A-G.

    >>> [extract_answer(t, "ABCDE").letters for t in ["答案：D", "The answer is (B)", "ABD", "B. 急性阑尾炎", "不选A，选C"]]
    ['D', 'B', 'ABD', 'B', 'C']
    >>> e = extract_answer("考虑原发性肺结核", {"A": "小叶型肺炎", "C": "继发性肺结核", "D": "原发性肺结核"})
    >>> e.letters, e.method
    ('D', 'option_text')
    """
    if isinstance(options, dict):
        option_texts = {str(k).strip().upper(): str(v) for k, v in options.items()}
        valid = "".join(sorted(option_texts))
    else:
        option_texts = None
        valid = (options or DEFAULT_LETTERS).upper()
    s = _norm(to_simplified(str(response or "")))
    if option_texts:
        option_texts = {k: to_simplified(v) for k, v in option_texts.items()}
    if not s.strip():
        return Extraction("", "none", "empty response")

    got = _phrase_answers(s, valid, option_texts)
    if got:
        letters, why = got
        if why:
            return Extraction("", "ambiguous", why, _fmt(letters))
        return Extraction(_fmt(letters), "answer_phrase")
    memo: dict = {}
    got = _leading(s, valid, option_texts, memo)
    if got:
        return Extraction(_fmt(got), "leading")
    bare = re.fullmatch(r"[\s(（\[]*([a-z])[\s.。)）\]]*", s)
    if bare and bare.group(1).upper() in valid:  # the whole response is one lower-case letter: "b."
        return Extraction(bare.group(1).upper(), "leading")

    singles = _standalone(s, valid, option_texts)
    positive, negative, alternatives = _statements(s, singles, valid, option_texts, memo)
    if positive - negative:
        return Extraction(_fmt(positive - negative), "statement")
    chosen = {letter for letter, st, en in singles if letter not in negative and not _negated(s, st, en)}
    chosen |= alternatives - negative
    if len(chosen) == 1:
        return Extraction(_fmt(chosen), "single_letter")
    if len(chosen) > 1:
        return Extraction("", "ambiguous", f"several options named, none stated as the choice "
                                           f"({', '.join(sorted(chosen))})", _fmt(chosen))
    if option_texts:
        keep = _option_text(s, {k: v for k, v in option_texts.items() if k not in negative})
        if len(keep) == 1:
            return Extraction(keep[0], "option_text")
        if len(keep) > 1:
            return Extraction("", "ambiguous", f"the texts of several options ({', '.join(sorted(keep))})",
                              _fmt(keep))
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
