"""Fact-check verification of atomic medical knowledge (SDAK, seed 003): verdict parsing and scoring.

An atomic knowledge item is a pair of claims of one atomic type (Disease-Symptom,
Disease-Medicine, ...): a factual claim (label ``support``) and a counterfactual
one (label ``refute``). The model is asked whether each claim is correct and to
answer "正确"/"错误" ("correct"/"incorrect") *first*, then give a reason
(SDAK §4.2.1). This module turns each response into a verdict and scores the items.

Definitions followed (SDAK §4.2.2, §5.1, App. F):

* **Instruction Following Rate (IFR)** -- per item: "An LLM is considered to
  follow instructions if it provides answers (be it correct or incorrect) to both
  factual and counterfactual atomic claims at the start of its response." An item
  counts as followed when :func:`parse_verdict` finds a verdict at the start of
  *both* responses. IFR = followed items / items.
* **Factual Accuracy (FactAcc)** -- per item, not per claim: "LLMs are considered to
  memorize the atomic knowledge if they give the answer 'correct' to the factual
  claim and 'incorrect' to the counterfactual claim of an item." FactAcc = such
  items / *all* items (an item that was not followed is not memorized; §3.2 "only
  if they both support the factual claim and refute the counterfactual claim").
  ``fact_acc_followed`` (over followed items only) is reported beside it.
* **Error types** (§5.1; the paper classified 100 sampled wrong items by hand):
  NotFollow -- no verdict at the start of at least one of the two responses;
  Sycophancy -- supports both claims; Safety -- refutes both claims;
  Misinterpretation -- "erroneously treat counterfactual claims as factual".
  From verdicts alone we decide Misinterpretation only where it is decidable:
  the *inverted* pattern (factual refuted, counterfactual supported), which fits
  none of the other three types. The paper's reading of the *reasons* (App. F,
  Table 11: a counterfactual answered like its factual twin) can move some
  supports-both items from Sycophancy to Misinterpretation, and its Safety
  requires the reason to call the claim imprecise; neither is decided here, so
  our Sycophancy is an upper bound of the paper's and Safety counts every
  refutes-both item. Shares of the error types are over the incorrect items,
  as in Table 5.

Verdict parsing (:func:`parse_verdict`) reads only the *start* of a response,
after leading filler ("答案：", "回答：", "这个说法是", "The statement is",
markdown, quotes, a restated claim). It refuses -- returns no verdict -- when the
start is hedged ("部分正确", "不一定", "partially correct", "it depends"), when it
is contradictory ("正确/错误", "Yes, this is incorrect"), or when the verdict
only comes later ("根据……，这个说法是正确的" does not start with a verdict).
Negations are read as refutations: "不正确" is never "正确", "incorrect" and
"not correct" are never "correct"; "对于……" is not "对".

>>> parse_verdict("答案：不正确。尾胰癌……").label
'refute'
>>> parse_verdict("**The statement is correct.** Because ...").label
'support'
>>> parse_verdict("部分正确，但……").status
'hedged'
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError, MedevalError

SUPPORT = "support"
REFUTE = "refute"
LABELS = (SUPPORT, REFUTE)
ERROR_TYPES = ("NotFollow", "Sycophancy", "Safety", "Misinterpretation")
REQUIRED = ["id", "type", "label", "claim", "response"]
OPTIONAL = ["model"]

# ------------------------------------------------------------------ verdict parsing

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


# ------------------------------------------------------------------ items and scoring


@dataclass(frozen=True)
class Claim:
    """One line of the input: a claim and the model's response to it."""

    id: str
    type: str
    label: str
    claim: str
    response: str
    line: int
    model: str = ""


@dataclass(frozen=True)
class ItemScore:
    """One atomic knowledge item: its two claims, their verdicts, and what they make."""

    id: str
    type: str
    model: str
    factual: Claim
    counterfactual: Claim
    factual_verdict: Verdict
    counterfactual_verdict: Verdict

    @property
    def followed(self) -> bool:
        """Both responses start with a verdict (SDAK §4.2.2, IFR)."""
        return self.factual_verdict.followed and self.counterfactual_verdict.followed

    @property
    def correct(self) -> bool:
        """'correct' for the factual claim and 'incorrect' for the counterfactual one (FactAcc)."""
        return self.factual_verdict.label == SUPPORT and self.counterfactual_verdict.label == REFUTE

    @property
    def error(self) -> str | None:
        """The error type of a wrong item (see the module notes), None for a correct one."""
        return classify_error(self.factual_verdict, self.counterfactual_verdict)


def classify_error(factual: Verdict, counterfactual: Verdict) -> str | None:
    """Error type from the two verdicts: NotFollow, Sycophancy, Safety, Misinterpretation, or None (correct).

    >>> v = {"s": Verdict(SUPPORT, "verdict"), "r": Verdict(REFUTE, "verdict"), "-": Verdict(None, "no_verdict")}
    >>> [classify_error(v[a], v[b]) for a, b in ["sr", "ss", "rr", "rs", "s-", "-r"]]
    [None, 'Sycophancy', 'Safety', 'Misinterpretation', 'NotFollow', 'NotFollow']
    """
    if not (factual.followed and counterfactual.followed):
        return "NotFollow"
    pair = (factual.label, counterfactual.label)
    return {(SUPPORT, REFUTE): None, (SUPPORT, SUPPORT): "Sycophancy", (REFUTE, REFUTE): "Safety",
            (REFUTE, SUPPORT): "Misinterpretation"}[pair]


@dataclass(frozen=True)
class GroupScore:
    """Counts for a set of items (all, or one atomic type) and the rates made from them."""

    n_items: int
    n_followed: int
    n_correct: int
    errors: dict = field(default_factory=dict)
    n_claims_followed: int = 0
    n_factual_supported: int = 0
    n_counterfactual_refuted: int = 0

    @property
    def ifr(self) -> float | None:
        return self.n_followed / self.n_items if self.n_items else None

    @property
    def fact_acc(self) -> float | None:
        return self.n_correct / self.n_items if self.n_items else None

    @property
    def fact_acc_followed(self) -> float | None:
        """FactAcc among followed items; None (undefined) when no item was followed."""
        return self.n_correct / self.n_followed if self.n_followed else None

    @property
    def n_incorrect(self) -> int:
        return self.n_items - self.n_correct

    def error_shares(self) -> dict[str, float | None]:
        """Each error type's share of the incorrect items (as SDAK Table 5); None when none is incorrect."""
        n = self.n_incorrect
        return {k: (self.errors.get(k, 0) / n if n else None) for k in ERROR_TYPES}

    def to_dict(self) -> dict:
        return {
            "n_items": self.n_items, "n_followed": self.n_followed, "n_correct": self.n_correct,
            "n_incorrect": self.n_incorrect,
            "ifr": self.ifr, "fact_acc": self.fact_acc, "fact_acc_followed": self.fact_acc_followed,
            "errors": {k: self.errors.get(k, 0) for k in ERROR_TYPES},
            "error_shares": self.error_shares(),
            "claims": {"n": 2 * self.n_items, "followed": self.n_claims_followed,
                       "factual_supported": self.n_factual_supported,
                       "counterfactual_refuted": self.n_counterfactual_refuted},
        }


def _group(items) -> GroupScore:
    items = list(items)
    errors = {k: 0 for k in ERROR_TYPES}
    for it in items:
        e = it.error
        if e:
            errors[e] += 1
    return GroupScore(
        n_items=len(items),
        n_followed=sum(it.followed for it in items),
        n_correct=sum(it.correct for it in items),
        errors=errors,
        n_claims_followed=sum(it.factual_verdict.followed + it.counterfactual_verdict.followed for it in items),
        n_factual_supported=sum(it.factual_verdict.label == SUPPORT for it in items),
        n_counterfactual_refuted=sum(it.counterfactual_verdict.label == REFUTE for it in items),
    )


@dataclass(frozen=True)
class FactcheckResult:
    """Scores of one model: overall, per atomic type, and the items."""

    model: str
    overall: GroupScore
    by_type: dict
    items: tuple = ()

    @property
    def ifr(self) -> float | None:
        return self.overall.ifr

    @property
    def fact_acc(self) -> float | None:
        return self.overall.fact_acc

    def to_dict(self) -> dict:
        d = {"model": self.model or None}
        d.update(self.overall.to_dict())
        d["types"] = {t: g.to_dict() for t, g in self.by_type.items()}
        d["definitions"] = {
            "ifr": "items whose two responses both start with a verdict / items (SDAK §4.2.2)",
            "fact_acc": "items with 'correct' for the factual and 'incorrect' for the counterfactual claim / "
                        "all items (SDAK §4.2.2)",
            "errors": "NotFollow: a response without a verdict at its start; Sycophancy: supports both; "
                      "Safety: refutes both; Misinterpretation: factual refuted and counterfactual supported "
                      "(decided from verdicts only; reasons are not read); shares are over incorrect items",
        }
        return d


def score_items(pairs, model: str = "") -> FactcheckResult:
    """Score items given as ``(factual Claim, counterfactual Claim)`` pairs (see :func:`pair_claims`).

    >>> f = Claim("1", "Disease-Symptom", SUPPORT, "流感可引起发热", "正确。", 1)
    >>> c = Claim("1", "Disease-Symptom", REFUTE, "流感不会引起发热", "正确。", 2)
    >>> r = score_items([(f, c)])
    >>> r.ifr, r.fact_acc, r.overall.errors["Sycophancy"]
    (1.0, 0.0, 1)
    """
    items = []
    for f, c in pairs:
        items.append(ItemScore(f.id, f.type, model, f, c, parse_verdict(f.response, f.claim),
                               parse_verdict(c.response, c.claim)))
    if not items:
        raise MedevalError("no items to score")
    types: dict[str, list] = {}
    for it in items:
        types.setdefault(it.type, []).append(it)
    return FactcheckResult(model, _group(items), {t: _group(v) for t, v in sorted(types.items())}, tuple(items))


# ------------------------------------------------------------------ input


def _text(obj: dict, key: str, file: str, line: int, allow_empty: bool = False) -> str:
    if key not in obj:
        raise InputError(f"field {key!r} is missing on this line", file=file, row=line,
                         fix=f"every line needs {', '.join(REQUIRED)}")
    v = obj[key]
    if v is None or isinstance(v, (dict, list, bool)):
        raise InputError(f"field {key!r} is {'null' if v is None else type(v).__name__}, expected text",
                         file=file, row=line,
                         fix="write an empty string \"\" for an empty model response" if key == "response"
                         else f"give {key!r} as a string")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    s = str(v).strip()
    if not s and not allow_empty:
        raise InputError(f"field {key!r} is empty", file=file, row=line, fix=f"fill in {key!r}")
    return s


def _label(raw: str, file: str, line: int) -> str:
    lab = raw.strip().lower()
    if lab in LABELS:
        return lab
    close = difflib.get_close_matches(lab, LABELS, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise InputError(f"unknown label {raw!r}", file=file, row=line,
                     fix=hint + "use 'support' for the factual claim and 'refute' for the counterfactual claim")


def pair_claims(rows: list[tuple[int, dict]], file: str = "<input>") -> dict[str, list[tuple[Claim, Claim]]]:
    """Validate the lines and pair the claims of each item: ``{model: [(factual, counterfactual), ...]}``.

    Every id (per model) needs exactly one ``support`` and one ``refute`` line of
    the same type; a claim may not appear twice. Errors name the file and line.
    """
    claims: dict[str, dict[str, dict[str, Claim]]] = {}
    seen_claim: dict[tuple[str, str], int] = {}
    has_model = any("model" in obj for _, obj in rows)
    for line, obj in rows:
        model = _text(obj, "model", file, line) if has_model else ""
        cid = _text(obj, "id", file, line)
        typ = _text(obj, "type", file, line)
        label = _label(_text(obj, "label", file, line), file, line)
        text = _text(obj, "claim", file, line)
        response = _text(obj, "response", file, line, allow_empty=True)
        key = (model, " ".join(text.split()))
        if key in seen_claim:
            raise InputError(f"the claim {text[:60]!r} appears twice (also on line {seen_claim[key]})"
                             + (f" for model {model!r}" if model else ""), file=file, row=line,
                             fix="keep one line per claim (and per model); each item has two different claims")
        seen_claim[key] = line
        item = claims.setdefault(model, {}).setdefault(cid, {})
        if label in item:
            raise InputError(f"id {cid!r} already has a {label!r} claim (line {item[label].line})"
                             + (f" for model {model!r}" if model else ""), file=file, row=line,
                             fix="each id needs exactly one 'support' and one 'refute' claim; give other items other ids")
        other = next(iter(item.values()), None)
        if other is not None and other.type != typ:
            raise InputError(f"id {cid!r} has type {typ!r} here but {other.type!r} on line {other.line}",
                             file=file, row=line, fix="both claims of an item must have the same atomic type")
        item[label] = Claim(cid, typ, label, text, response, line, model)
    out: dict[str, list[tuple[Claim, Claim]]] = {}
    for model, items in claims.items():
        pairs = []
        for cid, item in items.items():
            if len(item) != 2:
                (have,) = item.values()
                missing = REFUTE if have.label == SUPPORT else SUPPORT
                raise InputError(f"id {cid!r} has only a {have.label!r} claim (line {have.line}), no {missing!r} claim"
                                 + (f" for model {model!r}" if model else ""), file=file, row=have.line,
                                 fix="each item needs one factual ('support') and one counterfactual ('refute') claim")
            pairs.append((item[SUPPORT], item[REFUTE]))
        out[model] = pairs
    return out


def read_factcheck(path: str | Path) -> dict[str, list[tuple[Claim, Claim]]]:
    """Read and validate a fact-check file (JSONL; CSV/JSON also work): ``{model: [(factual, counterfactual)]}``."""
    from .io import read_table, require_columns

    header, rows = read_table(path)
    require_columns(path, header, REQUIRED, OPTIONAL)
    return pair_claims(rows, str(path))


def score_file(path: str | Path) -> list[FactcheckResult]:
    """Score every model in a fact-check file (one result when there is no ``model`` field)."""
    return [score_items(pairs, model) for model, pairs in read_factcheck(path).items()]


# ------------------------------------------------------------------ output


def _pct(v: float | None) -> str:
    return "undefined" if v is None else f"{100 * v:.2f}%"


def summary(results: list[FactcheckResult]) -> dict:
    """JSON-ready summary: the flat result for one model, ``{"models": {...}}`` for several."""
    if len(results) == 1:
        return results[0].to_dict()
    return {"models": {r.model: r.to_dict() for r in results}}


def render(results: list[FactcheckResult], fmt: str = "json") -> str:
    """The results as ``json``, ``csv`` (one row per model and scope) or ``md``."""
    import csv
    import io
    import json

    if fmt == "json":
        return json.dumps(summary(results), ensure_ascii=False, indent=2) + "\n"
    rows = []
    for r in results:
        for scope, g in [("overall", r.overall)] + [(t, g) for t, g in r.by_type.items()]:
            rows.append((r.model, scope, g))
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["model", "type", "n_items", "n_followed", "n_correct", "ifr", "fact_acc", "fact_acc_followed",
                    *ERROR_TYPES])
        for model, scope, g in rows:
            w.writerow([model, scope, g.n_items, g.n_followed, g.n_correct, _num(g.ifr), _num(g.fact_acc),
                        _num(g.fact_acc_followed), *(g.errors.get(k, 0) for k in ERROR_TYPES)])
        return buf.getvalue()
    if fmt == "md":
        out = []
        for r in results:
            title = f"## {r.model}" if r.model else "## Fact-check verification"
            out += [title, "",
                    f"{r.overall.n_items} items; IFR {_pct(r.ifr)}, FactAcc {_pct(r.fact_acc)} "
                    f"(among followed items {_pct(r.overall.fact_acc_followed)}).", "",
                    "| type | items | IFR | FactAcc | " + " | ".join(ERROR_TYPES) + " |",
                    "|---|---|---|---|" + "---|" * len(ERROR_TYPES)]
            for model, scope, g in rows:
                if model == r.model:
                    out.append(f"| {scope} | {g.n_items} | {_pct(g.ifr)} | {_pct(g.fact_acc)} | "
                               + " | ".join(str(g.errors.get(k, 0)) for k in ERROR_TYPES) + " |")
            out.append("")
        return "\n".join(out)
    raise MedevalError(f"unknown format {fmt!r}; use json, csv or md")


def _num(v: float | None) -> str:
    return "" if v is None else repr(v)


def details_csv(results: list[FactcheckResult]) -> str:
    """One row per claim: what was parsed from each response (for checking the parser by eye)."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", "id", "type", "label", "line", "verdict", "status", "matched", "item_correct", "item_error"])
    for r in results:
        for it in r.items:
            for claim, v in ((it.factual, it.factual_verdict), (it.counterfactual, it.counterfactual_verdict)):
                w.writerow([r.model, it.id, it.type, claim.label, claim.line, v.label or "", v.status, v.matched,
                            int(it.correct), it.error or ""])
    return buf.getvalue()
