"""Exam accuracy on CMB-Exam style multiple-choice questions (CMB, seed 001, §4.1): answer extraction and scoring.

CMB extracts the answer "from model outputs using an empirically designed regular
expression. Each extracted answer is compared to the solution and is deemed correct
if and only if they are exactly matched" (CMB §4.1, Evaluation Details). Its
expression (``match_choice`` in ``src/utils.py`` of FreedomIntelligence/CMB,
re-implemented as :func:`cmb_match_choice` for comparison) takes the letters after
"答案是/答案：/正确选项为 …" and otherwise *every* capital A-G in the text; for a
single-choice question it then keeps the first. So "根据CT和ECG结果，选D" becomes
C -- the C of "CT".

:func:`extract_answer` reads, in this order, and stops at the first that gives letters:

1. ``answer_phrase`` -- an explicit answer: "答案：D", "正确答案是 B、D", "故选C",
   "The answer is (B)", "the correct answers are B and D", "answer: b" (lower case
   only after an English phrase, and never the article "a" in "the answer is a
   bacterial infection"). "答案/answer is/故选" phrases beat a bare "选D"; the
   *last* phrase of a kind wins (a chain of thought ends with its answer).
2. ``leading`` -- the response starts with the letters: "B", "B. 急性阑尾炎",
   "(B)", "ABD", "A,B,D", "A、B和D".
3. ``statement`` -- per-option statements: "B项正确", "D选项符合", "Option C is
   correct" (minus options declared wrong).
4. ``single_letter`` -- exactly one option letter standing on its own in the text.
5. ``option_text`` -- no letter, but the text of exactly one option is quoted.

Letters are only read as options when they stand alone: not inside words or
abbreviations (CT, ECG, DNA, COPD, HBeAg, CD4), not as terms (B超, A型, C反应蛋白,
维生素D, D-二聚体), not the English article "A", and a run of several letters
("ABD") only when they are distinct and in order (so "ECG" is never E, C, G).
A letter that is ruled out ("不选A", "A是错误的", "排除C", "not B") does not count as
chosen. Several different letters with no phrase or statement to decide between
them give no answer (``ambiguous``), where CMB would take the first. No letter is
dropped to fit the question type: "B或C" for a single-choice question is wrong, not B.

>>> extract_answer("根据CT和ECG结果，选D", "ABCDE").letters
'D'
>>> cmb_match_choice("根据CT和ECG结果，选D", multi=False)
'C'
>>> extract_answer("正确答案是 B、D", "ABCDE").letters
'BD'

Scoring (:func:`score_answers`): an answer is correct iff the extracted option set
equals the key's. Accuracy is reported overall, per category and per subcategory
(and per question type when the key has one). The category of a question is
``exam_type`` (CMB-Exam's name for the 6 major categories, e.g. 医师考试) or
``category``; the subcategory is ``exam_class`` (the 28 subcategories, e.g. 执业医师)
or ``subcategory``; ``exam_subject``/``subject`` is kept but not aggregated. Besides
the micro accuracy (correct / questions) two macro averages are given, as CMB
computes them: a category's ``accuracy_macro`` is the mean of its subcategories'
accuracies (CMB ``score.py``), and ``accuracy_macro`` overall is the mean of the
category accuracies -- the "Average" column of CMB Table 6 (e.g. GPT-4: the mean of
59.90, 69.31, 52.19, 61.50, 59.69, 54.19 is 59.46). With 400 questions per
subcategory, as in CMB-Exam's test set, category micro and macro agree.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError, MedevalError

DEFAULT_LETTERS = "ABCDEFG"  # when the key gives no options (CMB's answer file has none); CMB reads A-G too
METHODS = ("answer_phrase", "leading", "statement", "single_letter", "option_text", "none", "unanswered")

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
    """Letters read from a response (sorted, e.g. ``"BD"``; ``""`` for none), how, and a note."""

    letters: str
    method: str
    note: str = ""


_MARKDOWN = re.compile(r"\*\*|__|`")
# after a letter, these make it part of a term, not an option: B超, A型, C反应蛋白, T细胞 ...
_TERM_AFTER = ("超", "型", "族", "群", "组", "类", "级", "波", "峰", "链", "段", "区", "细胞", "淋巴", "肽", "反应",
               "受体", "因子", "蛋白", "抗原", "抗体", "肝", "药", "物质", "点", "带", "端", "位点", "环", "值", "线",
               "管", "柱", "族维生素", "杆菌", "球菌", "病毒", "瓣", "导联", "字", "样")
# a run of several letters that is a common abbreviation, not an answer, although its letters are in order
_ABBREVIATIONS = frozenset({"ACE", "BCG", "ABG", "ACD", "ADE", "BE", "AD", "CE", "DE", "EF", "AF"})
# an abbreviation-like run still counts when it stands alone ("答案：AD", "BE。")
_ALONE_AFTER = re.compile(r"\s*(?:$|[.,;:!?。，；：！？、)\]）】\"”'’])")
# before a letter: 维生素D, 辅酶A, 蛋白C, 维他命E, vitamin D, hepatitis B, type A, group B ...
_TERM_BEFORE_RE = re.compile(r"(?:[素酶白命]|\b(?:vitamin|hepatitis|type|group|protein|factor|class|grade|stage|"
                             r"phase|lead|wave|influenza|coenzyme|immunoglobulin|plan|cluster|zone|site|chain|"
                             r"point|complex|serotype|subtype|strain|hemophilia|haemophilia))\s*$", re.I)

_NEG_BEFORE = re.compile(r"(?:不选|不应选|不能选|不可选|不应该选|不会选|不是|并非|而非|而不是|排除|除了|除|非|"
                         r"\bnot|\bexcept|\brather than|\bexclude|\bexcluding|\bnor)\s*(?:选项|选|option|choice)?\s*"
                         r"[(\[（【]?\s*$", re.I)
_NEG_AFTER = re.compile(r"^\s*[)\]）】]?\s*(?:项|选项)?\s*(?:均|都|皆|也)?\s*(?:是|为|的说法|的描述|说法|描述|明显)?\s*"
                        r"(?:错误|错的|错|不正确|不对|不符合|不恰当|不合适|不选|不是|不能选|排除|可排除|除外|应排除|不准确|"
                        r"is\s+(?:not\s+(?:correct|right|true|the\s+answer)|incorrect|wrong|false)|"
                        r"are\s+(?:not\s+correct|incorrect|wrong|false)|can\s+be\s+(?:excluded|ruled\s+out))", re.I)
_POS_AFTER = re.compile(r"^\s*[)\]）】]?\s*(?:项|选项)?\s*(?:均|都|皆|也)?\s*(?:是|为)?\s*"
                        r"(?:正确答案|正确|对的|对(?![于此比待应照抗])|符合题意|最符合|符合|最佳|最恰当|最合适|当选|入选|"
                        r"is\s+(?:the\s+)?(?:correct|right|best|true)|are\s+(?:the\s+)?(?:correct|right))", re.I)

_CN_STRONG = (r"(?:最终|正确|最佳|标准|参考)?答案(?:应该?是|应该?为|应选|是|为|选|选择|应是)?|"
              r"(?:正确|最佳)选项(?:应该?是|应该?为|是|为)?|"
              r"(?:故|所以|因此|因而|综上所述|综上|本题)[,，]?\s*(?:本题)?(?:应该?)?(?:选择|选)(?:答案)?")
_CN_WEAK = r"(?:应该?|可以?|我)?(?:选择|选)(?:答案)?|(?:我的)?选择是|应该?是|应为"
_EN_STRONG = (r"\b(?:the\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?answers?\s*(?:is|are|would\s+be|should\s+be|"
              r"will\s+be)?|\b(?:the\s+)?(?:correct|best|right)\s+(?:options?|choices?)\s*(?:is|are)?")
_EN_WEAK = r"\bi\s*(?:would\s+|will\s+|'d\s+)?(?:choose|select|pick|go\s+with)|\b(?:choose|select)"
_PHRASES = [(re.compile(p, re.I), strength, english) for p, strength, english in (
    (_CN_STRONG, 2, True), (_EN_STRONG, 2, True), (_CN_WEAK, 1, False), (_EN_WEAK, 1, True))]
_AFTER_PHRASE = re.compile(r"\s*[】\])）]?\s*[:：=]?\s*(?:是|为)?\s*(?:options?|choices?|选项)?\s*", re.I)
_SEP = re.compile(r"\s*(?:、|,|，|;|；|/|和|与|以及|及|或者|或|\+|&|\band\b|\bor\b)\s*|[ \t]+", re.I)
_LIST_GOES_ON = re.compile(r"\s*[)\]）】]?\s*(?:$|[.。;；!！?？\n]|(?:[,，、/]|\s(?:and|or)\s|和|与|及|或)\s*"
                           r"[(\[（【]?\s*[A-Za-z](?![A-Za-z]))", re.I)
_OPEN = re.compile(r"[(\[（【]\s*")
_CLOSE = re.compile(r"\s*[)\]）】]")
_TERMINAL_LOWER = re.compile(r"\s*(?:$|[.,;:!?。，；：！？)\]）】])")


def _norm(text: str) -> str:
    return _MARKDOWN.sub("", unicodedata.normalize("NFKC", text or ""))


def _letter_ok(s: str, start: int, end: int, valid: str, lower_ok: bool, option_texts: dict | None) -> bool:
    """Is s[start:end] (a maximal run of ASCII letters) a run of option letters standing alone?"""
    run = s[start:end]
    if not run.isupper():
        if not (lower_ok and len(run) == 1 and run.upper() in valid):
            return False
        # lower case only as "(b)" or "b" followed by punctuation or the end ("the answer is a ..." is an article)
        before = s[:start].rstrip()
        if not (before.endswith(("(", "（", "[")) or _TERMINAL_LOWER.match(s, end)):
            return False
        run = run.upper()
    if any(c not in valid for c in run):
        return False
    if len(run) > 1 and list(run) != sorted(set(run)):
        return False
    if run in _ABBREVIATIONS and not _ALONE_AFTER.match(s, end):
        return False
    if start > 0 and (s[start - 1].isdigit() or _TERM_BEFORE_RE.search(s[max(0, start - 20):start])):
        return False
    after = s[end:]
    if after[:1].isdigit() or re.match(r"-\S", after) or after.startswith(("'s", "’s")):
        return False
    if any(after.startswith(t) for t in _TERM_AFTER):
        if not (option_texts and len(run) == 1 and _starts_with_option_text(after, option_texts.get(run, ""))):
            return False
    return True


def _starts_with_option_text(after: str, option_text: str) -> bool:
    a, o = _squash(after), _squash(option_text)
    return bool(o) and a.startswith(o[: max(2, min(len(o), 6))])


def _read_group(s: str, pos: int, valid: str, lower_ok: bool, option_texts: dict | None):
    """Letters of a group starting at ``pos`` ("B", "(B)", "ABD", "B、D", "B and D"): (letters, end) or None."""
    letters: list[str] = []
    i = pos
    cut = None  # (letters, position) before the first comma crossed
    while True:
        m = _OPEN.match(s, i)
        j = m.end() if m else i
        k = j
        while k < len(s) and s[k].isascii() and s[k].isalpha():
            k += 1
        if k == j or not _letter_ok(s, j, k, valid, lower_ok, option_texts):
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
        if nxt < len(s) and s[nxt].isascii() and s[nxt].isalpha():
            k2 = nxt
            while k2 < len(s) and s[k2].isascii() and s[k2].isalpha():
                k2 += 1
            weak = s[i:sep.end()].strip() in ("", ",", "，", ";", "；")
            # over a comma or a space only a list goes on ("B, D", "A, C and D"), not a new clause ("答案：B，A项错误")
            if _letter_ok(s, nxt, k2, valid, lower_ok, option_texts) and (not weak or _LIST_GOES_ON.match(s, k2)):
                if weak and cut is None:
                    cut = (len(letters), i)
                i = sep.end()
                continue
        break
    if not letters:
        return None
    if cut and _NEG_AFTER.match(s[i:i + 30]):  # "答案：C；A、B、D、E均不正确": the list after the comma is ruled out
        letters, i = letters[:cut[0]], cut[1]
    return letters, i


def _negated(s: str, start: int, end: int) -> bool:
    return bool(_NEG_BEFORE.search(s[max(0, start - 12):start]) or _NEG_AFTER.match(s[end:end + 30]))


def _fmt(letters) -> str:
    return "".join(sorted(set(letters)))


def _phrase_answers(s: str, valid: str, option_texts):
    found = []
    for rx, strength, english in _PHRASES:
        for m in rx.finditer(s):
            if m.end() == m.start():
                continue
            pre = s[max(0, m.start() - 4):m.start()]
            if re.search(r"(?:不|勿|别|没|未|非)(?:应该?|会|能|可)?$", pre) or re.search(r"\bnot\s*$", pre, re.I):
                continue
            a = _AFTER_PHRASE.match(s, m.end())
            g = _read_group(s, a.end(), valid, english, option_texts)
            if not g:
                continue
            letters, end = g
            if _NEG_AFTER.match(s[end:end + 30]):
                continue
            found.append((strength, m.start(), letters))
    if not found:
        return None
    best = max(st for st, _, _ in found)
    strongest = [f for f in found if f[0] == best]
    return max(strongest, key=lambda f: f[1])[2]


_LEAD_SKIP = re.compile(r"^[\s>#\-*•]*(?:(?:答|answer|选|选择)\s*[:：]\s*)?", re.I)


def _leading(s: str, valid: str, option_texts):
    p = _LEAD_SKIP.match(s).end()
    g = _read_group(s, p, valid, False, option_texts)
    if not g:
        return None
    letters, end = g
    if letters == ["A"] and _ARTICLE.match(s, end):  # the English article: "A bacterial infection ..."
        return None
    if _NEG_AFTER.match(s[end:end + 30]) or _POS_AFTER.match(s[end:end + 30]):
        return None  # "A项错误……", "A项正确，B项正确……": per-option statements, read as such below
    return letters


# "A" followed by a lower-case word is the article, unless the word is one that follows an option letter
_ARTICLE = re.compile(r"\s+(?!(?:and|or|nor|is|are|was|were|seems?|appears?|looks?|would|could|should|might|may|"
                      r"can|will|because|since|as|also|only|too|vs|versus|then|than|fits?|matches?|alone)\b)[a-z0-9]")


def _statements(s: str, singles, valid: str, option_texts):
    """Options declared right ("B项正确", "A、B、D正确", "Option C is correct") and ruled out ("A、B均错误", "不选C")."""
    positive, negative = set(), set()
    consumed = -1
    for letter, st, en in singles:
        if st < consumed:
            continue
        g = _read_group(s, st, valid, False, option_texts)
        letters, end = g if g else ([letter], en)
        consumed = end
        if _NEG_BEFORE.search(s[max(0, st - 12):st]) or _NEG_AFTER.match(s[end:end + 30]):
            negative.update(letters)
        elif _POS_AFTER.match(s[end:end + 30]):
            positive.update(letters)
    return positive, negative


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
        if run == "A" and _ARTICLE.match(s, en):
            continue
        if not _letter_ok(s, st, en, valid, False, option_texts):
            continue
        out.append((run, st, en))
    return out


def _squash(t: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", t or "")).casefold()


def _option_text(s: str, option_texts: dict):
    sq = _squash(s)
    hits = {}
    for letter, text in option_texts.items():
        o = _squash(text)
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
    s = _norm(str(response or ""))
    if not s.strip():
        return Extraction("", "none", "empty response")

    got = _phrase_answers(s, valid, option_texts)
    if got:
        return Extraction(_fmt(got), "answer_phrase")
    got = _leading(s, valid, option_texts)
    if got:
        return Extraction(_fmt(got), "leading")
    bare = re.fullmatch(r"[\s(（\[]*([a-z])[\s.。)）\]]*", s)
    if bare and bare.group(1).upper() in valid:  # the whole response is one lower-case letter: "b."
        return Extraction(bare.group(1).upper(), "leading")

    singles = _standalone(s, valid, option_texts)
    positive, negative = _statements(s, singles, valid, option_texts)
    if positive - negative:
        return Extraction(_fmt(positive - negative), "statement")
    chosen = {letter for letter, st, en in singles if letter not in negative and not _negated(s, st, en)}
    if len(chosen) == 1:
        return Extraction(_fmt(chosen), "single_letter")
    if len(chosen) > 1:
        return Extraction("", "none", f"ambiguous: several options mentioned ({', '.join(sorted(chosen))})")
    if option_texts:
        keep = _option_text(s, {k: v for k, v in option_texts.items() if k not in negative})
        if len(keep) == 1:
            return Extraction(keep[0], "option_text")
        if len(keep) > 1:
            return Extraction("", "none", f"ambiguous: the texts of several options ({', '.join(sorted(keep))})")
    return Extraction("", "none", "no option found")


# ------------------------------------------------------------------ key and answers

_CATEGORY_FIELDS = (("category", ("exam_type", "category")), ("subcategory", ("exam_class", "subcategory")),
                    ("subject", ("exam_subject", "subject")))


@dataclass(frozen=True)
class Question:
    """A question of the key: the correct option set, the options (may be empty), and where it belongs."""

    id: str
    answer: str
    options: dict = field(default_factory=dict)
    category: str | None = None
    subcategory: str | None = None
    subject: str | None = None
    question_type: str | None = None
    row: int = 0

    @property
    def multi(self) -> bool:
        """Multiple-answer question: CMB's ``question_type`` 多项选择题, else more than one correct letter."""
        if self.question_type:
            return "多" in self.question_type or "multi" in self.question_type.lower()
        return len(self.answer) > 1


def _id(v, file, row, what="id") -> str:
    if v is None or isinstance(v, (dict, list, bool)) or (isinstance(v, str) and not v.strip()):
        raise InputError(f"{what} is missing or empty", file=file, row=row, fix="give every entry an id")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


def _opt_str(obj: dict, names: tuple, file, row) -> str | None:
    vals = {n: obj[n] for n in names if n in obj and obj[n] is not None}
    texts = {n: str(v).strip() for n, v in vals.items()}
    if len(set(texts.values())) > 1:
        a, b = list(texts)
        raise InputError(f"{a!r} is {texts[a]!r} but {b!r} is {texts[b]!r}", file=file, row=row,
                         fix=f"give one of {' / '.join(names)}, or the same value in both")
    if not texts:
        return None
    v = next(iter(texts.values()))
    if not v:
        raise InputError(f"{next(iter(texts))!r} is empty", file=file, row=row,
                         fix="fill it in or leave the field out on every question")
    return v


def _letters(raw, file, row, options: dict) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise InputError("answer is missing or empty", file=file, row=row,
                         fix='give the correct option letters, e.g. "answer": "BD"')
    compact = re.sub(r"[\s,，、;；/]+", "", unicodedata.normalize("NFKC", raw)).upper()
    if not compact.isascii() or not compact.isalpha():
        raise InputError(f"answer {raw!r} is not a set of option letters", file=file, row=row,
                         fix='write the letters, e.g. "D" or "ABD"')
    if len(set(compact)) != len(compact):
        raise InputError(f"answer {raw!r} repeats a letter", file=file, row=row, fix="give each letter once")
    if options:
        unknown = [c for c in compact if c not in options]
        if unknown:
            raise InputError(f"answer {raw!r} has {', '.join(unknown)}, not among the options "
                             f"{', '.join(sorted(options))}", file=file, row=row,
                             fix="the answer must use the letters of the question's options")
    return "".join(sorted(compact))


def questions_from_rows(rows: list[tuple[int, dict]], file: str = "<key>") -> dict[str, Question]:
    """Validate key entries (CMB-Exam style objects) into ``{id: Question}``."""
    out: dict[str, Question] = {}
    for row, obj in rows:
        if "id" not in obj:
            raise InputError("the question has no 'id'", file=file, row=row,
                             fix="every question needs an id that the answers file refers to")
        qid = _id(obj["id"], file, row)
        if qid in out:
            raise InputError(f"id {qid!r} appears twice (also entry {out[qid].row})", file=file, row=row,
                             fix="give every question its own id")
        raw_opts = obj.get("option", obj.get("options"))
        options: dict = {}
        if raw_opts is not None:
            if not isinstance(raw_opts, dict) or not raw_opts:
                raise InputError("'option' must be an object of letter -> text", file=file, row=row,
                                 fix='write "option": {"A": "...", "B": "..."}')
            for k, v in raw_opts.items():
                key = str(k).strip().upper()
                if len(key) != 1 or not ("A" <= key <= "Z"):
                    raise InputError(f"option key {k!r} is not a single letter", file=file, row=row,
                                     fix='name the options "A", "B", "C", ...')
                if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                    raise InputError(f"option {key} is {type(v).__name__}, expected text", file=file, row=row)
                options[key] = str(v)
        if "answer" not in obj:
            raise InputError("the question has no 'answer'", file=file, row=row,
                             fix='give the correct option letters, e.g. "answer": "BD"')
        answer = _letters(obj["answer"], file, row, options)
        cats = {name: _opt_str(obj, names, file, row) for name, names in _CATEGORY_FIELDS}
        qtype = obj.get("question_type")
        out[qid] = Question(qid, answer, options, cats["category"], cats["subcategory"], cats["subject"],
                            str(qtype).strip() if qtype else None, row)
    if not out:
        raise MedevalError(f"{file}: no questions")
    return out


def read_key(path: str | Path) -> dict[str, Question]:
    """Read the answer key: a JSON list of CMB-Exam questions (or JSONL/CSV with the same fields)."""
    from .io import read_table, require_columns

    header, rows = read_table(path)
    require_columns(path, header, ["id", "answer"], ["option", "exam_type", "exam_class", "exam_subject",
                                                     "category", "subcategory", "subject", "question_type"])
    return questions_from_rows(rows, str(path))


def answers_from_rows(rows: list[tuple[int, dict]], key: dict[str, Question],
                      file: str = "<answers>") -> dict[str, dict[str, tuple[int, str]]]:
    """Validate answer lines into ``{model: {id: (line, response)}}``; ids must be in the key."""
    has_model = any("model" in obj for _, obj in rows)
    out: dict[str, dict[str, tuple[int, str]]] = {}
    for line, obj in rows:
        if "id" not in obj:
            raise InputError("field 'id' is missing on this line", file=file, row=line,
                             fix="every line needs id and response")
        qid = _id(obj["id"], file, line)
        if qid not in key:
            close = difflib.get_close_matches(qid, list(key), n=1, cutoff=0.6)
            raise InputError(f"id {qid!r} is not in the answer key", file=file, row=line,
                             fix=(f"did you mean {close[0]!r}? " if close else "")
                             + "answers must refer to the ids of the key file")
        if "response" not in obj:
            raise InputError("field 'response' is missing on this line", file=file, row=line,
                             fix='every line needs id and response ("" for an empty output)')
        resp = obj["response"]
        if resp is None or isinstance(resp, (dict, list, bool)):
            raise InputError(f"field 'response' is {'null' if resp is None else type(resp).__name__}, expected text",
                             file=file, row=line, fix='write "" for an empty model output')
        model = ""
        if has_model:
            m = obj.get("model")
            if m is None or not str(m).strip():
                raise InputError("field 'model' is missing or empty on this line", file=file, row=line,
                                 fix="give the model on every line, or on none")
            model = str(m).strip()
        per = out.setdefault(model, {})
        if qid in per:
            raise InputError(f"id {qid!r} is answered twice" + (f" by model {model!r}" if model else "")
                             + f" (also line {per[qid][0]})", file=file, row=line,
                             fix="keep one answer per question (and per model)")
        per[qid] = (line, str(resp))
    return out


def read_answers(path: str | Path, key: dict[str, Question]) -> dict[str, dict[str, tuple[int, str]]]:
    from .io import read_table, require_columns

    header, rows = read_table(path)
    require_columns(path, header, ["id", "response"], ["model"])
    return answers_from_rows(rows, key, str(path))


# ------------------------------------------------------------------ scoring


@dataclass(frozen=True)
class ScoredAnswer:
    id: str
    expected: str
    extraction: Extraction
    cmb: str
    line: int | None

    @property
    def correct(self) -> bool:
        return self.extraction.letters == self.expected

    @property
    def cmb_correct(self) -> bool:
        return self.cmb == self.expected


@dataclass(frozen=True)
class Tally:
    """Questions and correct answers of one group."""

    n: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    def to_dict(self) -> dict:
        return {"n": self.n, "correct": self.correct, "accuracy": self.accuracy}


def macro_mean(values) -> float | None:
    """Unweighted mean of group accuracies (None if there are none) -- CMB's category and "Average" convention.

    >>> round(macro_mean([59.90, 69.31, 52.19, 61.50, 59.69, 54.19]), 2)  # CMB Table 6, GPT-4
    59.46
    """
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


@dataclass(frozen=True)
class ExamResult:
    model: str
    answers: tuple
    key: dict

    def _tally(self, pred=lambda q: True, cmb: bool = False) -> Tally:
        sel = [a for a in self.answers if pred(self.key[a.id])]
        return Tally(len(sel), sum((a.cmb_correct if cmb else a.correct) for a in sel))

    @property
    def accuracy(self) -> float | None:
        return self._tally().accuracy

    def categories(self) -> dict:
        cats: dict = {}
        for a in self.answers:
            q = self.key[a.id]
            if q.category is None:
                continue
            c = cats.setdefault(q.category, {})
            if q.subcategory is not None:
                c.setdefault(q.subcategory, None)
        out = {}
        for cat in sorted(cats):
            d = self._tally(lambda q, cat=cat: q.category == cat).to_dict()
            subs = {sub: self._tally(lambda q, cat=cat, sub=sub: q.category == cat and q.subcategory == sub).to_dict()
                    for sub in sorted(cats[cat])}
            if subs:
                d["accuracy_macro"] = macro_mean(s["accuracy"] for s in subs.values())
                d["subcategories"] = subs
            out[cat] = d
        return out

    def to_dict(self) -> dict:
        total = self._tally()
        cats = self.categories()
        methods = {m: 0 for m in METHODS}
        for a in self.answers:
            methods[a.extraction.method] += 1
        qtypes = sorted({self.key[a.id].question_type for a in self.answers if self.key[a.id].question_type})
        cmb = self._tally(cmb=True)
        return {
            "model": self.model or None,
            "n": total.n, "correct": total.correct, "accuracy": total.accuracy,
            "accuracy_macro": macro_mean(c["accuracy"] for c in cats.values()) if cats else None,
            "unanswered": methods["unanswered"],
            "categories": cats,
            "question_types": {t: self._tally(lambda q, t=t: q.question_type == t).to_dict() for t in qtypes},
            "extraction": methods,
            "cmb_regex": {"correct": cmb.correct, "accuracy": cmb.accuracy,
                          "differs": sum(a.extraction.letters != a.cmb for a in self.answers
                                         if a.extraction.method != "unanswered")},
            "definitions": {
                "accuracy": "questions whose extracted option set equals the key / questions (unanswered count as "
                            "wrong)",
                "accuracy_macro": "mean of the category accuracies (CMB Table 6 'Average'); a category's "
                                  "accuracy_macro is the mean of its subcategories (CMB score.py)",
                "cmb_regex": "the same answers read by CMB's own match_choice, for comparison",
            },
        }


def score_answers(key: dict[str, Question], responses: dict[str, tuple[int, str]], model: str = "") -> ExamResult:
    """Score one model's responses ``{id: (line, response)}`` against the key; questions without a response
    count as wrong (as in CMB's ``score.py``) and are reported as ``unanswered``."""
    scored = []
    for qid, q in key.items():
        if qid in responses:
            line, text = responses[qid]
            ex = extract_answer(text, q.options or None)
            cmb = cmb_match_choice(text, q.multi)  # unsorted, compared as CMB score.py does
        else:
            line, ex, cmb = None, Extraction("", "unanswered", "no response in the answers file"), ""
        scored.append(ScoredAnswer(qid, q.answer, ex, cmb, line))
    return ExamResult(model, tuple(scored), key)


def score_files(answers_path: str | Path, key_path: str | Path) -> list[ExamResult]:
    key = read_key(key_path)
    answers = read_answers(answers_path, key)
    return [score_answers(key, resp, model) for model, resp in answers.items()]


# ------------------------------------------------------------------ output


def summary(results: list[ExamResult]) -> dict:
    """JSON-ready summary: the flat result for one model, ``{"models": {...}}`` for several."""
    if len(results) == 1:
        return results[0].to_dict()
    return {"models": {r.model: r.to_dict() for r in results}}


def _rows(r: ExamResult):
    d = r.to_dict()
    yield ("overall", "", "", d["n"], d["correct"], d["accuracy"], d["accuracy_macro"])
    for cat, c in d["categories"].items():
        yield ("category", cat, "", c["n"], c["correct"], c["accuracy"], c.get("accuracy_macro"))
        for sub, s in c.get("subcategories", {}).items():
            yield ("subcategory", cat, sub, s["n"], s["correct"], s["accuracy"], None)
    for t, s in d["question_types"].items():
        yield ("question_type", t, "", s["n"], s["correct"], s["accuracy"], None)
    yield ("cmb_regex", "", "", d["n"], d["cmb_regex"]["correct"], d["cmb_regex"]["accuracy"], None)


def render(results: list[ExamResult], fmt: str = "json") -> str:
    """The results as ``json``, ``csv`` (one row per model and group) or ``md``."""
    import csv
    import io
    import json

    if fmt == "json":
        return json.dumps(summary(results), ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["model", "level", "group", "subgroup", "n", "correct", "accuracy", "accuracy_macro"])
        for r in results:
            for level, g, sub, n, k, acc, mac in _rows(r):
                w.writerow([r.model, level, g, sub, n, k, "" if acc is None else repr(acc),
                            "" if mac is None else repr(mac)])
        return buf.getvalue()
    if fmt == "md":
        out = []
        for r in results:
            d = r.to_dict()
            out += [f"## {r.model}" if r.model else "## Exam accuracy", "",
                    f"{d['n']} questions, {d['correct']} correct ({_pct(d['accuracy'])}); "
                    f"{d['unanswered']} unanswered; CMB's regex would give {_pct(d['cmb_regex']['accuracy'])}.", "",
                    "| level | group | subgroup | n | correct | accuracy |", "|---|---|---|---|---|---|"]
            for level, g, sub, n, k, acc, _ in _rows(r):
                out.append(f"| {level} | {g} | {sub} | {n} | {k} | {_pct(acc)} |")
            out.append("")
        return "\n".join(out)
    raise MedevalError(f"unknown format {fmt!r}; use json, csv or md")


def _pct(v: float | None) -> str:
    return "undefined" if v is None else f"{100 * v:.2f}%"


def details_csv(results: list[ExamResult]) -> str:
    """One row per question: the extracted letters, how, the key, and CMB's reading."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", "id", "line", "expected", "extracted", "method", "note", "correct", "cmb_regex"])
    for r in results:
        for a in r.answers:
            w.writerow([r.model, a.id, a.line or "", a.expected, a.extraction.letters, a.extraction.method,
                        a.extraction.note, int(a.correct), a.cmb])
    return buf.getvalue()
