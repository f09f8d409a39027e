"""The verdict a fact-check response starts with (support, refute, or none: hedged, contradictory,
missing): :func:`parse_verdict`; the rules are in :mod:`medeval.stats.factcheck`."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

SUPPORT = "support"
REFUTE = "refute"
LABELS = (SUPPORT, REFUTE)



# Characters skipped at the start and between filler and verdict: whitespace,
# markdown, quotes, brackets, list markers, colons.
_SKIP = re.compile(r"(?:[\s*_`#>|~\-•·✅❌✔✓✗✘☑❎\ufe0f\"'“”‘’「」『』【】\[\]()<>《》:：,，、.。!！;；]|\d+[.)、](?!\d))*")
_SKIP_NO_QUOTES = re.compile(r"(?:[\s*_`#>|~\-•·✅❌✔✓✗✘☑❎\ufe0f【】\[\]()<>《》:：,，、.。!！;；]|\d+[.)、](?!\d))*")

# Leading filler, tried repeatedly (the text is NFKC-normalised and lower-cased).
_FILLER = [
    # Chinese: answer / verdict headers
    r"(?:我的)?(?:最终)?(?:回答|答案|答复|回复|判断|结论|结果|评判|判定|裁定)(?:是|为)?",
    r"答(?=\s*[:：])",
    r"(?:正确答案|正确与否|是否正确|对错|真假)(?:是|为)?(?=\s*[:：])",
    r"我(?:认为|觉得|的判断是|判断|的看法是)",
    r"(?:经过?|通过)?(?:分析|判断|核实)(?:后|可知|可得)?(?=\s*[:：,，])",
    # Chinese: "这个说法是" and its variants
    r"(?:这个|这一|这条|这句|该|此|这种|上述|以上|题中|题目中的?|您的|你的|所述|给出的|这|该条)?"
    r"(?:说法|陈述|观点|命题|表述|论述|论断|描述|话|知识点?|结论|声明|断言)(?:是|为)?",
    # English
    r"(?:my |the )?(?:final )?(?:answer|verdict|response|judgment|judgement|conclusion|reply|output|result|evaluation)"
    r"(?: is)?(?=\s*[:\s])",
    r"(?:the )?(?:correct|right|true) answer(?: is)?(?=\s*[:\s])",
    r"(?:the |this |that |your |above |given |provided )?(?:statement|claim|sentence|assertion|proposition)(?: above)?"
    r"(?: is| was|'s)?(?=[\s:,]|$)",
    r"(?:it|this|that)(?: is|'s)(?=\s|$)",
    r"i(?: think| believe| would say|'d say| would judge)(?: that)?(?=\s|$)",
    r"(?:这|它|此|那)个?(?:是|为)",
    r"(?:actually|in fact|no doubt|undoubtedly|certainly|of course|其实|实际上|事实上|毫无疑问|显然)(?=[\s,，]|$)",
]
_FILLER_RE = re.compile("|".join(f"(?:{f})" for f in _FILLER))
_QUOTE_RE = re.compile(r"[\"“‘'「『](.{1,300}?)[\"”’'」』]")

# Hedged or undecided starts: no verdict. Tried before the verdicts.
_HEDGES = [
    "部分正确", "部分错误", "部分对", "不完全正确", "不完全错误", "不完全对", "不全对", "不全错", "不全面",
    "基本正确", "基本上正确", "大体正确", "大致正确", "基本对", "基本上对", "半对", "对也不对", "既正确又错误",
    "有一定道理", "有道理", "不一定", "不确定", "无法确定", "无法判断", "难以判断", "难以确定", "不好说", "很难说",
    "视情况而定", "因人而异", "取决于", "可能正确", "可能错误", "可能", "也许", "或许", "不能一概而论",
    "有争议", "存在争议", "片面", "不太准确", "不太正确", "不够准确", "不够严谨", "不严谨",
    r"partially\b", r"partly\b", r"mostly\b", r"largely\b", r"somewhat\b", r"generally\b", r"half\b",
    r"not entirely\b", r"not completely\b", r"not necessarily\b", r"not always\b", r"not exactly\b",
    r"not quite\b", r"not fully\b", r"it depends\b", r"depends\b", r"uncertain\b", r"unclear\b", r"unsure\b",
    r"(?:i )?(?:cannot|can't|can not) (?:be )?(?:determine|determined|say|tell|judge|verify)",
    r"hard to say\b", r"difficult to say\b", r"maybe\b", r"possibly\b", r"probably\b", r"likely\b",
    r"may be\b", r"might be\b", r"yes and no\b", r"both (?:correct|true|right)\b", r"neither\b",
]
_HEDGE_RE = re.compile("|".join(f"(?:{h})" for h in _HEDGES))

# after a one-character Chinese verdict (对, 错, 是, 否, 不): end, space, punctuation or 的
_CJK_END = r"(?=$|[\s,.;:!?，。；：！？、)）\]】\"”'’]|的)"
# "正确答案", "正确的做法是" ... are not verdicts
_NOT_AFTER_ZHENGQUE = (r"(?!答案|与否|率|性|地|使用|用药|治疗|认识|理解|做法|方法|处理|诊断|选择|饮食|观念"
                       r"|的(?:是|做法|方法|答案|说法|认识|观点|理解|选项|治疗|用药|处理|诊断|表述|描述))")
_NOT_AFTER_CUOWU = (r"(?!率|地|认识|观点|理解|做法|用药|使用|观念|方法|的(?:是|做法|认识|观点|理解|说法|方法|用药|观念))")

_EN_INTENSIFIER = r"(?:(?:absolutely|completely|entirely|totally|definitely|indeed|quite|fully|simply) )?"
_EN_BE = r"(?:(?:is|are|was)\s+)?"
_REFUTE_PATTERNS = [
    # Chinese (negated forms first, so that "不正确" is never read as "正确")
    "不是正确的", "不是对的", "不正确", "并不正确", "并不对", "不对", "不准确", "不属实", "不成立", "不是真的",
    "是错误的", "是错的", "是不正确的", "是不对的", "完全错误", "错误" + _NOT_AFTER_CUOWU, "有误", "有错",
    "错" + _CJK_END, "否" + _CJK_END, "不是" + _CJK_END, "不" + _CJK_END,
    # English
    _EN_BE + r"(?:not|n't)\s+" + _EN_INTENSIFIER + r"(?:correct|true|right|accurate|valid)\b",
    r"isn't\s+(?:correct|true|right|accurate|valid)\b",
    _EN_BE + _EN_INTENSIFIER + r"(?:incorrect|false|wrong|untrue|inaccurate|invalid)\b",
    r"no(?=\s*[,.;:!]|\s*$|\s+(?:it|this|that|the|not)\b)",
]
_SUPPORT_PATTERNS = [
    "完全正确", "是正确的", "是对的", "正确" + _NOT_AFTER_ZHENGQUE, "准确", "属实", "成立", "没错", "没有错", "是真的",
    "对的", "对" + _CJK_END, "是的", "是" + _CJK_END,
    _EN_BE + _EN_INTENSIFIER + r"(?:correct|true|right|accurate|valid)\b",
    r"yes\b",
]
_VERDICT_RE = re.compile("|".join(
    [f"(?P<r{i}>{p})" for i, p in enumerate(_REFUTE_PATTERNS)]
    + [f"(?P<s{i}>{p})" for i, p in enumerate(_SUPPORT_PATTERNS)]))
# what may separate a leading verdict from a second one: "正确/错误", "正确或错误", "Yes, this is incorrect"
_JOIN_RE = re.compile(r"[\s,.;:!?，。；：！？、/()（）\-—]*(?:或者|或是|还是|或|也|又|and|or|but|但是|但|不过|/)?"
                      r"[\s,.;:!?，。；：！？、/()（）\-—]*")


@dataclass(frozen=True)
class Verdict:
    """The verdict at the start of one response.

    ``label`` is ``"support"`` (the model says the claim is correct), ``"refute"``
    (incorrect) or ``None``; ``status`` says why: ``verdict``, ``hedged``,
    ``contradictory``, ``no_verdict`` (the response does not start with one) or
    ``empty``; ``matched`` is the text that decided.
    """

    label: str | None
    status: str
    matched: str = ""

    @property
    def followed(self) -> bool:
        """True when the response starts with a verdict (SDAK §4.2.2)."""
        return self.label is not None


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _strip_filler(s: str, claim: str | None) -> str:
    """Drop leading filler, quotes and a restated claim, repeatedly."""
    for _ in range(8):
        before = s
        s = s[_SKIP_NO_QUOTES.match(s).end():]
        q = _QUOTE_RE.match(s)
        if q and len(q.group(1)) > 3 and not _starts_with_verdict(q.group(1)):
            s = s[q.end():]  # a quoted restatement of the claim, e.g. “……”这一说法是正确的
            continue
        s = s[_SKIP.match(s).end():]
        if claim and s.startswith(claim):
            s = s[len(claim):]
            continue
        m = _FILLER_RE.match(s)
        if m and m.end() > 0:
            s = s[m.end():]
        if s == before:
            break
    return s[_SKIP.match(s).end():]


def _starts_with_verdict(s: str) -> bool:
    s = s[_SKIP.match(s).end():]
    return bool(_HEDGE_RE.match(s) or _VERDICT_RE.match(s))


def _verdict_at(s: str) -> tuple[str | None, str, int]:
    m = _VERDICT_RE.match(s)
    if not m:
        return None, "", 0
    label = REFUTE if m.lastgroup.startswith("r") else SUPPORT
    return label, m.group(0), m.end()


def parse_verdict(response: str | None, claim: str | None = None) -> Verdict:
    """The verdict a response *starts* with: support, refute, or none (hedged, contradictory, missing).

    ``claim`` (optional) lets a response that restates the claim first
    ("尾胰癌会导致腹痛，这个说法是正确的") still count as starting with a verdict.

    >>> [parse_verdict(t).label for t in ["正确。", "错误，因为……", "不正确", "这个说法是对的", "对于这个问题……"]]
    ['support', 'refute', 'refute', 'support', None]
    >>> [parse_verdict(t).label for t in ["Incorrect.", "Not correct.", "True", "No, it is not.", "Correctly, ..."]]
    ['refute', 'refute', 'support', 'refute', None]
    >>> parse_verdict("正确/错误").status, parse_verdict("Yes, this is incorrect.").status
    ('contradictory', 'contradictory')
    """
    if response is None or not str(response).strip():
        return Verdict(None, "empty")
    s = _normalise(str(response))
    c = _normalise(claim).strip().rstrip("。.!！;；") if claim else None
    s = _strip_filler(s, c or None)
    if not s:
        return Verdict(None, "no_verdict")
    h = _HEDGE_RE.match(s)
    if h:
        return Verdict(None, "hedged", h.group(0))
    label, matched, end = _verdict_at(s)
    if label is None:
        return Verdict(None, "no_verdict", s[:20])
    # a second verdict right after the first ("正确/错误", "Yes, this is incorrect")
    rest = s[end:]
    rest = rest[_JOIN_RE.match(rest).end():]
    rest = _strip_filler(rest, None)
    label2, matched2, _ = _verdict_at(rest)
    if label2 is not None and label2 != label:
        return Verdict(None, "contradictory", f"{matched} / {matched2}")
    return Verdict(label, "verdict", matched.strip())
