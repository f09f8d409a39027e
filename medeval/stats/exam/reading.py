"""How an exam response states its choices, read in order: answer phrases and plain choices with what revises them,
letters on a line of their own, options echoed back, conclusions, lone letters and option texts -- the parts
:func:`medeval.stats.exam.extract.extract_answer` puts together (the rules are in :mod:`medeval.stats.exam`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from medeval.stats.exam.groups import NEG_AFTER, letter_ok, read_group, squash

_MARKDOWN = re.compile(r"\*\*|__|`")

_NEG_BEFORE = re.compile(r"(?:不选|不应选|不能选|不可选|不应该选|不会选|不是|并非|而非|而不是|排除|除了|除|非|"
                         r"\bnot|\bexcept|\brather than|\bexclude|\bexcluding|\bnor)\s*(?:选项|选|option|choice)?\s*"
                         r"[(\[（【]?\s*$", re.I)
_POS_AFTER = re.compile(r"^\s*+[)\]）】]?\s*+(?:项|选项)?\s*+[:：]?\s*+(?:均|都|皆|也)?\s*+(?:是|为)?\s*+"
                        r"(?:正确答案|正确|对的|对(?![于此比待应照抗])|符合题意|最符合|符合|最佳|最恰当|最合适|当选|入选|"
                        r"更(?:合适|恰当|符合|准确|正确|佳)|"
                        r"is\s+(?:the\s+)?(?:correct|right|best|true)|are\s+(?:the\s+)?(?:correct|right))", re.I)

_CN_STRONG = (r"(?:最终|最后|正确|最佳|标准|参考)?答案(?:应该?是|应该?为|应选|是|为|选|选择|应是)?|"
              r"(?:正确|最佳)选项(?:应该?是|应该?为|是|为)?|(?:最终|最后)(?:的)?(?:选择|选)(?:是|为)?|"
              r"(?:故|所以|因此|因而|综上所述|综上|本题)[,，]?\s*(?:本题)?(?:应该?)?(?:选择|选)(?:答案)?|"
              r"(?:更|最|还是|比较)?倾向于?(?:选择|选)?|首选|(?:只|仅)剩下?|剩下的?(?:只有|是|为)?|"
              r"(?:更|最)有?可能(?:是|为|选)?")
# "改选C", "更正为C": a choice that is itself a revision
_CN_WEAK = (r"(?:应该?|可以?|我)?(?:选择|选)(?:答案)?|(?:我的)?选择是|应该?是|应为|改(?:选择|选|为|成)|"
            r"(?:更正|修正|纠正|订正|更改)(?:为|成)?")
# English words start where no Latin letter precedes them (not ``\b``: "其实I'd go with B" has no word boundary
# between 实 and I, CJK characters being word characters too)
WORD_START = r"(?=[A-Za-z])(?<![A-Za-z])"  # (the look-ahead first: the engine then skips to letters)
_EN_STRONG = (rf"{WORD_START}(?:(?:the\s+)?(?:final\s+|correct\s+|best\s+|right\s+)?answers?\s*(?:is|are|would\s+be|"
              r"should\s+be|will\s+be)?|(?:i\s+)?(?:lean|am\s+leaning|'m\s+leaning)\s+(?:towards?|to)|"
              r"(?:leaves?|leaving)\s+(?:only\s+)?|(?:more|most)\s+likely\s+(?:is\s+|to\s+be\s+)?|"
              r"i\s+(?:would\s+|'d\s+)?prefer|"
              r"(?:the\s+)?(?:correct|best|right|final)\s+(?:options?|choices?)\s*(?:is|are)?)")
_EN_WEAK = (rf"{WORD_START}(?:i\s*(?:would\s+|will\s+|'d\s+|'ll\s+)?(?:choose|select|pick|go\s+with)|choose|select|"
            r"going\s+with|chang(?:e|ing)\s+(?:my\s+answer\s+)?to|switch(?:ing)?\s+to)")
_PHRASES = [(re.compile(p, re.I), strength, english) for p, strength, english in (
    (_CN_STRONG, 2, True), (_EN_STRONG, 2, True), (_CN_WEAK, 1, False), (_EN_WEAK, 1, True))]
_AFTER_PHRASE = re.compile(r"\s*[】\])）]?\s*[:：=]?\s*(?:是|为)?\s*(?:options?|choices?|选项)?\s*", re.I)


def norm(text: str) -> str:
    return _MARKDOWN.sub("", unicodedata.normalize("NFKC", text or ""))


# a letter asked about or hedged, not stated: "答案是A吗？", "Is it A?", "是B吧？", "选C?", "应该是B吧"
_QUESTION_AFTER = re.compile(r"\s*+[)\]）】]?+\s*+(?:吗|么|呢|吧|\?)")
# ... except a decision softened by 吧: "那就选B吧。", "还是选B吧" (no question mark after it)
_DECIDED_BEFORE = re.compile(r"(?:就|还是)\s*$")
_BA_DECISION = re.compile(r"\s*+[)\]）】]?+\s*+吧(?!\s*\?)")
# a choice spoken of, not made: "选A的理由不充分", "选A的话"; a condition: "如果选A，……", "If we choose A, ..."
_ATTRIBUTIVE_AFTER = re.compile(r"\s*+[)\]）】]?+\s*+(?:的|之)")
_CONDITION_BEFORE = re.compile(rf"(?:(?:若|如果|假如|假设|要是|倘若|万一|{WORD_START}(?:if|whether)(?![A-Za-z]))"
                               r"[^。.!?！？\n,，;；]{0,12}|则|否则|误|错)$", re.I)
# A bare "选"/"可选"/"choose" (no 我, 应, I ... of its own) is the response's choice only at the start of a clause
# ("……，选D", "so choose E") or after words that make it the response's ("故", "就", "还是", "本题", "我们" ...);
# after anything else someone else chooses, or may: "很多考生选A", "容易选C", "误选A", "也可选择C", "Some might
# choose A".
_BARE_CHOICE = re.compile(r"(?:可以?)?选|(?:choose|select)\b", re.I)
_SUBJECT_BEFORE = re.compile(
    r"(?:^|[\n,.;:!?，。；：！？、()（）\[\]【】*#>\-…]|故|所以|因此|因而|综上|就|还是|本题|题|只能|只好|宜|"
    r"其实|实际上|事实上|确实|仍然|依然|最终|最后|"
    r"我们?(?:会|要|想|就|还是|最终|仍然|依然|仍)?|"
    rf"{WORD_START}(?:so|therefore|thus|hence|then|we|should|must))\s*$", re.I)
_NOT_BEFORE = re.compile(r"(?:不|勿|别|没|未|非)(?:应该?|会|能|可)?$|\bnot\s*$", re.I)
# Words that take back what came before: a choice after one of them replaces the choices before it ("答案是A。
# 等等，应该选C"). Without one, two different choices are a contradiction (ambiguous), whatever their wording.
REVISION = re.compile(
    r"不对|不，|不,|等等|等一下|等一等|且慢|更正|纠正|修正|订正|重新|再想|再看|再考虑|再思考|再检查|再次|仔细|其实|"
    r"实际上|事实上|复核|核对|检查后|回头看|改选|改为|改成|改答|更改|我错了|说错|选错|答错|想错|看错|弄错|搞错|嗯|"
    rf"{WORD_START}(?:(?:wait|actually|correction|oops|hmm+)(?![A-Za-z])|on\s+(?:second\s+thoughts?|reflection)|"
    r"re-?(?:consider|read|check|evaluat)|double[-\s]check|looking\s+again|(?:upon|after)\s+review|"
    r"scratch\s+that|no\s*[,.!;]|i\s+was\s+wrong|chang(?:e|ing)\s+my\s+answer|revis)",
    re.I)
_FINAL = re.compile(r"最终|最后|final", re.I)


def negated(s: str, start: int, end: int) -> bool:
    return bool(_NEG_BEFORE.search(s[max(0, start - 12):start]) or NEG_AFTER.match(s[end:end + 30]))


def fmt(letters) -> str:
    return "".join(sorted(set(letters)))


@dataclass(frozen=True, slots=True)
class Said:
    """One choice a response states: where its phrase starts (``start``), where its letters start and end
    (``at``, ``end``), the letters, and how it is said: ``commit`` (a choice), ``hedge`` (asked or hedged:
    "是B吧？"), ``alt`` (alternatives: "B或C"); ``final`` for "最终答案"/"final answer"."""

    start: int
    at: int
    end: int
    letters: str
    kind: str
    final: bool = False


def phrase_choices(s: str, valid: str, option_texts) -> list[Said]:
    """Every choice stated with an answer phrase ("答案是", "选", "The answer is", "I would choose" ...), in the
    order of the text; a group of letters reached by several phrases ("答案应选B": 答案应选, 选) counts once."""
    by_at: dict[int, Said] = {}
    for rx, strength, english in _PHRASES:
        for m in rx.finditer(s):
            if m.end() == m.start():
                continue
            pre = s[max(0, m.start() - 4):m.start()]
            if _NOT_BEFORE.search(pre):
                continue
            if strength == 1 and pre[-1:] in ("备", "次", "候", "首"):  # "备选B" is a fallback; "首选" is strong
                continue
            if _CONDITION_BEFORE.search(s, max(0, m.start() - 16), m.start()):
                continue
            if strength == 1 and _BARE_CHOICE.match(m.group(0)) and not _SUBJECT_BEFORE.search(
                    s, max(0, m.start() - 12), m.start()):
                continue  # "很多考生选A", "容易选C", "误选A", "也可选择C", "Some might choose A": spoken of, not chosen
            at = _AFTER_PHRASE.match(s, m.end()).end()
            final = bool(_FINAL.search(m.group(0)))
            old = by_at.get(at)
            if old is not None:  # the same letters reached by another phrase ("答案应选B": 答案应选, 选)
                if m.start() < old.start or (final and not old.final):
                    by_at[at] = Said(min(m.start(), old.start), at, old.end, old.letters, old.kind, old.final or final)
                continue
            g = read_group(s, at, valid, english, option_texts)
            if not g:
                continue
            letters, end, alt = g
            if NEG_AFTER.match(s[end:end + 30]):
                continue
            if strength == 1 and _ATTRIBUTIVE_AFTER.match(s, end):
                continue
            if _QUESTION_AFTER.match(s, end) and not (_BA_DECISION.match(s, end) and _DECIDED_BEFORE.search(pre)):
                kind = "hedge"  # "答案是A吗？不，应该是C": a question is not an answer
            else:
                kind = "alt" if alt else "commit"
            by_at[at] = Said(m.start(), at, end, fmt(letters), kind, final)
    return [by_at[k] for k in sorted(by_at)]


def _revised(s: str, before: Said, after: Said) -> bool:
    """Does ``after`` take back ``before``: a revision word between them (the phrase of ``after`` included: "改选C"),
    or ``after`` is a final answer and ``before`` is not."""
    return bool(REVISION.search(s, before.end, after.at)) or (after.final and not before.final)


def last_choice(s: str, said: list[Said]):
    """The last committed choice: (letters, None, the choice), or (candidates, reason, ...) where the response does
    not settle one, or None without any commitment or alternatives.

    The choices after the last revision are the response's answer; if they disagree, nothing settles between them
    and the reading is ambiguous. A hedge or alternatives after the answer, behind a revision word ("答案是A。
    等等，是C吧？"), reopen the question; without one ("答案是A。也可能是C吧？") the committed answer stands."""
    commits = [c for c in said if c.kind == "commit"]
    if not commits:
        alts = [c for c in said if c.kind == "alt"]
        if alts:
            return alts[-1].letters, f"alternatives, not a choice ({' or '.join(alts[-1].letters)})", alts[-1]
        return None  # hedges only: the other readings decide, the hedged letters among their candidates
    group = [commits[0]]
    for before, after in zip(commits, commits[1:]):
        group = [after] if _revised(s, before, after) else group + [after]
    sets = list(dict.fromkeys(c.letters for c in group))
    if len(sets) > 1:
        cands = fmt("".join(sets))
        if all(c.final for c in group):
            return cands, f"contradictory final answers ({'; '.join(sets)}) with no correction between them", None
        return cands, f"conflicting choices ({'; '.join(sets)}) with no revision between them", None
    last = group[-1]
    rev = REVISION.search(s, last.end)  # (found once: every hedge after it is behind a revision word)
    for c in said:
        if c.kind != "commit" and rev and c.at >= rev.end() and c.letters != last.letters:
            cands = fmt(last.letters + c.letters)
            return cands, (f"a question or hedge, not a choice ({', '.join(c.letters)})" if c.kind == "hedge"
                           else f"alternatives, not a choice ({' or '.join(c.letters)})"), c
    return last.letters, None, last


_LEAD_SKIP = re.compile(r"^[\s>#\-*•]*(?:(?:答|answer|选|选择)\s*[:：]\s*)?", re.I)


def leading(s: str, valid: str, option_texts, memo: dict | None = None, echo: frozenset = frozenset()):
    """The letters the response starts with ("B", "B. 急性阑尾炎", "ABD", "A、B和D"): (letters, start, end) or
    None; not the first line of options echoed back ("A. 高血压 B. 糖尿病 ……")."""
    p = _LEAD_SKIP.match(s).end()
    if p in echo:
        return None
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
    if _QUESTION_AFTER.match(s, end):
        return None  # "B？" "B吧": asked or hedged, read below as a candidate
    return letters, p, end


# a line that is nothing but letters ("ABD", "**B**", "(C)。", "A、B、D") after a heading or a preamble line
_LINE_START = re.compile(r"(?<=\n)[ \t>#*\-•]*+(?=[A-Za-z(（\[【])")
_LINE_REST = re.compile(r"[ \t]*+[)\]）】]?[ \t]*+[.。!！]?[ \t]*+(?:\n|$)")


def line_answers(s: str, valid: str, option_texts, memo: dict, echo: frozenset) -> list:
    """Lines after the first that hold nothing but a group of letters: each a choice ("## 分析\n……\n\nABD",
    "好的，我来回答。\n\nB")."""
    out = []
    for m in _LINE_START.finditer(s):
        p = m.end()
        if p in echo:
            continue
        g = read_group(s, p, valid, False, option_texts, memo)
        if g and not g[2] and _LINE_REST.match(s, g[1]):
            out.append(Said(p, p, g[1], fmt(g[0]), "commit"))
    return out


# An option list echoed back before the answer: "A. 高血压 B. 糖尿病 C. 冠心病" -- a letter at the start of a
# line or after a space, a dot, colon or bracket, then text (not another lone letter: "A、B、D" is a list of
# choices). Two or more in alphabetical succession are an echo; their letters are not choices.
_ECHO_ITEM = re.compile(r"(?:^|(?<=\s))([A-Z])\s*+[.:)、]\s*+(?![A-Za-z](?![A-Za-z]))(?=\S)")


def echoed(s: str) -> frozenset:
    """Where the letters of an echoed option list stand (their start positions)."""
    out: set[int] = set()
    run: list[int] = []
    prev = ""
    for m in _ECHO_ITEM.finditer(s):
        letter = m.group(1)
        if prev and ord(letter) == ord(prev) + 1:
            run.append(m.start(1))
        else:
            if len(run) >= 2:
                out.update(run)
            run = [m.start(1)]
        prev = letter
    if len(run) >= 2:
        out.update(run)
    return frozenset(out)


# "A" followed by a lower-case word is the article, unless the word is one that follows an option letter
_ARTICLE = re.compile(r"\s+(?!(?:and|or|nor|is|are|was|were|seems?|appears?|looks?|would|could|should|might|may|"
                      r"can|will|because|since|as|also|only|too|vs|versus|then|than|fits?|matches?|alone)\b)[a-z0-9]")


def statements(s: str, singles, valid: str, option_texts, memo: dict | None = None):
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


# what makes a letter the conclusion of a sentence, not one option's assessment ("C项正确" is said of every right
# option in an analysis; "C更合适", "C才是正确答案" conclude)
_CONCLUDES_AFTER = re.compile(r"\s*+[)\]）】]?\s*+(?:项|选项)?\s*+(?:才|更|最|应该?|也)?\s*+(?:是|为)?\s*+(?:本题的?)?"
                              r"(?:正确答案|最佳答案|正确选项|最佳选项|更合适|更恰当|更符合|更准确|更正确|更佳|更好|"
                              r"最合适|最恰当|最符合|最佳|"
                              r"is\s+(?:actually\s+|in\s+fact\s+)?(?:the\s+)?(?:correct|right|best|better)\s+"
                              r"(?:answer|option|choice)|is\s+(?:better|more\s+appropriate|the\s+answer))", re.I)


def revised_statements(s: str, after: int, valid: str, option_texts, memo: dict, echo: frozenset) -> list:
    """Letters concluded after a revision word that follows the last answer phrase, each a choice ("我会选择B……
    不过，重新审视题目后，我认为C更合适", "Wait, C is the correct answer")."""
    out = []
    consumed = after
    for m in _LETTER_RUN.finditer(s, after):
        st = m.start()
        if st < consumed or st in echo or (m.group(0) == "A" and _ARTICLE.match(s, m.end())):
            continue
        g = read_group(s, st, valid, False, option_texts, memo)
        if not g:
            continue
        letters, end, alt = g
        consumed = end
        if not alt and _CONCLUDES_AFTER.match(s, end) and not _NEG_BEFORE.search(s[max(0, st - 12):st]):
            out.append(Said(st, st, end, fmt(letters), "commit"))
    return out


_LETTER_RUN = re.compile(r"(?<![A-Za-z])[A-Za-z]+(?![A-Za-z])")
_LEFT_OK = set(" \t\n\r,，.。:：;；!！?？、(（[【\"“'‘/") | set("选是为即和与或及项")
_RIGHT_OK_CHARS = set(" \t\n\r,，.。:：;；!！?？、)）]】\"”'’/") | set("是为和与或及")
_RIGHT_OK_WORDS = ("项", "选项", "正确", "对", "最", "更", "符合", "错", "不")


# a letter offered as a possibility, not chosen: "也可能是B", "或许是C", "maybe D"
_MAYBE_BEFORE = re.compile(rf"(?:(?:也|或|亦)(?:可能|许)|也许|或许|{WORD_START}(?:maybe|perhaps|possibly))\s*(?:是|为|is)?\s*$",
                           re.I)


def standalone(s: str, valid: str, option_texts, echo: frozenset = frozenset(), asked: list | None = None):
    """Every uppercase single option letter with option-like surroundings: (letter, start, end); the letters asked
    about or hedged ("是B吧？", "Is it A?") go to ``asked`` instead."""
    out = []
    for m in _LETTER_RUN.finditer(s):
        run = m.group(0)
        if len(run) != 1 or run not in valid:
            continue
        st, en = m.span()
        left = s[st - 1] if st else " "
        right = s[en] if en < len(s) else " "
        if left not in _LEFT_OK or st in echo:
            continue
        right_ok = right in _RIGHT_OK_CHARS or s.startswith(_RIGHT_OK_WORDS, en)
        if not right_ok and right not in "吗么呢吧":
            continue
        if _QUESTION_AFTER.match(s, en) or (left in "是为许能 \t\n" and _MAYBE_BEFORE.search(s, max(0, st - 12), st)):
            if asked is not None and letter_ok(s, st, en, valid, False, option_texts) and not (
                    run == "A" and _ARTICLE.match(s, en)):
                asked.append((run, st, en))
            continue  # "是A吗？", "Is it A?", "是B吧", "也可能是B": asked or hedged, not chosen
        if not right_ok:
            continue
        if run == "A" and _ARTICLE.match(s, en):
            continue
        if not letter_ok(s, st, en, valid, False, option_texts):
            continue
        out.append((run, st, en))
    return out


def option_text(s: str, option_texts: dict):
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
