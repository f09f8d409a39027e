"""The regular expressions :func:`medeval.stats.factcheck.verdict.parse_verdict` reads a response's start with.

Every pattern works on text that is already NFKC-normalised, lower-cased and simplified
(:func:`medeval.core.chinese.to_simplified`), so "說法正確" reads like "说法正确" and "Ｃｏｒｒｅｃｔ" like
"correct". Kept apart from the parser so that each list can be read (and extended) on its own.
"""

from __future__ import annotations

import re

# Characters skipped at the start and between filler and verdict: whitespace, markdown, quotes,
# brackets, list markers, colons, dashes.
_SKIP_CHARS = r"\s*_`#>|~\-–—•·✅❌✔✓✗✘☑❎\ufe0f【】\]()<>《》:：,，、.。!！;；…"
# "[x]" is a ticked box: "[x] 正确 [ ] 错误"
SKIP = re.compile(rf"(?:\[[x✓✔]\]|\[(?!\s*\])|[{_SKIP_CHARS}\"'“”‘’「」『』]|\d+[.)、](?!\d))*")
SKIP_NO_QUOTES = re.compile(rf"(?:\[[x✓✔]\]|\[(?!\s*\])|[{_SKIP_CHARS}]|\d+[.)、](?!\d))*")

# What a response calls the claim it judges ("这个说法", "该观点", "这种看法", "这句话" ...): every noun form reads like
# 说法, so "该观点正确" is read as "该说法正确". Traditional forms (觀點, 陳述, 論述, 結論, 判斷, 這句話) arrive simplified.
NOUNS = (r"(?:说法|陈述|观点|看法|见解|命题|表述|表达|论述|论断|论点|叙述|描述|提法|判断|主张|话|句子|知识点?|结论|声明|断言)")

# The prompt's own words, echoed before the answer (SDAK §4.2.1 and App. C: "下列说法是否正确,如果正确,请先回复"正确",然后
# 给出原因。如果错误,请先回复"错误",然后给出原因。" / "请先输出"正确"或"错误",然后另起一行给出相应的原因。"), and its
# option list written as a template that the answer then fills in ("正确/错误：正确", "判断（正确/错误）：错误", "请回答'正确'
# 或'错误'：正确", "Correct or incorrect: incorrect", "True/False: False"). The option list names both verdicts only
# because the template does: it is skipped like a header, and the verdict filled in after it is the answer. A list that
# nothing fills in ("正确/错误" alone, "正确或错误取决于剂量") is not a template: it stays two verdicts or no verdict.
_Q = r"[\"'“”「」『』]*+"
_YES = r"(?:正确|对|真|是|true|correct|right|yes)"
_NO = r"(?:错误|不正确|错|假|否|false|incorrect|wrong|no)"
_OR = r"\s*+(?:/|\||或者|或是|或|还是|、|or|vs\.?)\s*+"
_OPTIONS = rf"{_Q}(?:{_YES}{_Q}{_OR}{_Q}{_NO}|{_NO}{_Q}{_OR}{_Q}{_YES}){_Q}"
TEMPLATE_RE = re.compile(
    r"(?:(?:请|只|仅)?(?:先|直接)?(?:回答|回复|输出|判断|选择|作答|answer|reply|output|choose)?\s*+(?:(?:with|为|是|[:=])\s*+)?)?"
    rf"[(\[【]?\s*+{_OPTIONS}[\s*_]*+(?:[)\]】]+[\s*_]*+[:=?]?|[:=?])")
# an option left unticked before the ticked one ("[ ] 正确 [x] 错误", "☐ 正确 ☑ 错误"): skipped, not read
UNTICKED_OPTION_RE = re.compile(r"[\s*_\-•]*+(?:\[\s*\]|☐|□)\s*+(?:正确|错误|对|错|correct|incorrect|true|false|yes|no)"
                                r"[\s,，;；/|]*+")
PROMPT_ECHO = [
    r"(?:下列|以下|上述|这个|该)?(?:关于医学知识的)?" + NOUNS + r"?是否正确(?=\s*[?？,，:：。.\n])[?？]?",
    rf"如果(?:正确|错误|不正确)[,，]?\s*请?先?(?:回复|回答|输出){_Q}(?:正确|错误){_Q}[,，]?\s*(?:然后|再)给出(?:相应的)?(?:原因|理由)",
    rf"请?先?(?:回复|回答|输出){_Q}正确{_Q}或{_Q}错误{_Q}[,，]?\s*然后(?:另起一行)?给出(?:相应的)?(?:原因|理由)",
    r"if (?:the following|this|the) (?:claim|statement)s?(?: about medical knowledge)? (?:is|are) correct,? please"
    rf" (?:reply|answer) {_Q}correct{_Q} first,? (?:and )?then give the reasons?",
    rf"if not,? please (?:reply|answer) {_Q}incorrect{_Q} first,? (?:and )?then give the reasons?",
    rf"please (?:first )?output {_Q}correct{_Q} or {_Q}incorrect{_Q}(?: first)?,? and then give the corresponding"
    r" reasons?(?: on a separate line)?",
]

# a determiner before a noun form: "这个观点", "该表述"
_THIS = r"(?:这个|这一|这种|这句|该|此|上述|以上)?"

# Leading filler, tried repeatedly: headers, "这个说法是", greetings and lead-ins that carry no content.
FILLER = [
    # Chinese: interjections, acknowledgements, greetings, a speaker's lead-in
    r"(?:嗯+|呃+|哦+|噢+|啊+|唔+|额+|好的|好吧|好(?=[,，!！。\s])|ok(?:ay)?|行|当然(?:可以)?|没问题|收到|明白了?|了解)"
    r"(?=[\s,，.。!！~、]|$)",
    r"(?:您|你)好(?:呀|啊)?", r"(?:谢谢|感谢)(?:您|你)?(?:的)?(?:提问|问题)",
    r"作为(?:一[个名款位])?(?:ai|人工智能)(?:语言)?(?:模型|助手|助理|医疗助手)?(?:[,，]\s*)?",
    r"作为(?:一[个名款位])?(?:医疗|医学)?(?:语言模型|助手|助理)",
    r"(?:首先|其次|总之|简单来说|简而言之|直接回答|直接说结论|先说结论|开门见山(?:地说)?)",
    r"(?:关于|对于|针对|就)(?:这个|这一|该|此|上述|您的|你的|以上|这句|这)(?:问题|题目|" + NOUNS + ")"
    r"(?:而言|来说)?",
    r"(?:这个|这一|该)?问题的(?:答案|回答)(?:是|为)?",
    r"让我(?:来)?(?:回答|判断|分析|看看|想想)(?:一下)?", r"我来(?:回答|判断|分析)(?:一下)?",
    r"(?:回答|判断)(?:这个|该)?问题",
    # Chinese: answer / verdict headers
    r"(?:我的)?(?:最终)?(?:回答|答案|答复|回复|判断|结论|结果|评判|判定|裁定)(?:是|为)?",
    r"答(?=\s*[:：])",
    r"(?:正确答案|正确与否|是否正确|对错|真假)(?:是|为)?(?=\s*[:：])",
    r"我(?:认为|觉得|的判断是|判断|的看法是|的答案是|想说)",
    r"(?:经过?|通过)?(?:分析|判断|核实)(?:后|可知|可得)?(?=\s*[:：,，])",
    # Chinese: "这个说法是" and its variants
    r"(?:这个|这一|这条|这句|这段|这些|该|此|这种|上述|以上|题中|题目中的?|题干中?的?|您的|你的|所述|给出的|所给的?|原|这|该条"
    r"|您提到的|你提到的)?" + NOUNS + r"(?:本身)?(?:是|为)?",
    r"(?:这|它|此|那)(?:个|条|句|种)?(?:是|为)(?:一(?:个|种|条|句)|个|种)?",
    r"(?:其实|实际上|事实上|毫无疑问|显然|当然|确实|的确)",
    *PROMPT_ECHO,
    # English: interjections and lead-ins
    r"(?:sure|okay|ok|well|hmm+|um+|uh+|alright|great question|good question|certainly|of course|"
    r"thanks? (?:you )?for (?:the|your) question)(?=[\s,.!]|$)",
    r"as an ai(?: language model| assistant| model)?(?:[^,.]{0,40})?,",
    r"(?:first(?:ly)?|to answer (?:the|your) question|in short|short answer|to be direct|let me (?:answer|check|think))"
    r"(?=[\s,:]|$)",
    # English: answer / verdict headers
    r"(?:my |the )?(?:final )?(?:answer|verdict|response|judgment|judgement|conclusion|reply|output|result|evaluation)"
    r"(?: is)?(?=\s*[:\s])",
    r"(?:the )?(?:correct|right|true) answer(?: is)?(?=\s*[:\s])",
    r"(?:the |this |that |your |above |given |provided |following )?(?:statement|claim|sentence|assertion|proposition"
    r"|view|opinion|description|conclusion|judgment|judgement|belief|notion|idea|point|premise|understanding"
    r"|information|fact|saying)(?: above)?"
    r"(?: is| was|'s)?(?=[\s:,]|$)",
    r"(?:it|this|that)(?: is|'s)(?=\s|$)",
    r"(?:it|this|that)(?=\s+(?:isn't|is not|wasn't|was not)\b)",
    r"i(?: think| believe| would say|'d say| would judge| can say| can confirm| can tell you)(?: that)?(?=\s|$)",
    r"(?:you're|you are)(?=\s)",
    r"(?:actually|in fact|no doubt|undoubtedly|certainly|of course)(?=[\s,]|$)",
]
FILLER_RE = re.compile("|".join(f"(?:{f})" for f in FILLER))
QUOTE_RE = re.compile(r"[\"“‘'「『](.{1,300}?)[\"”’'」』]")

# Hedged or undecided starts: no verdict. Tried before the verdicts.
HEDGES = [
    "部分正确", "部分错误", "部分对", "部分准确", "大部分正确", "大体上?正确", "大致正确", "大致上正确",
    "不完全正确", "不完全错误", "不完全对", "不完全准确", "不全对", "不全错", "不全面", "不太对", "不尽然", "不尽正确",
    "基本正确", "基本上正确", "基本对", "基本上对", "基本准确", "半对", "对也不对", "既正确又错误", "既对又不对",
    "有一定道理", "有道理", "不一定", "不确定", "无法确定", "无法判断", "难以判断", "难以确定", "不好说", "很难说",
    "视情况而定", "因人而异", "取决于", "可能正确", "可能错误", "可能", "也许", "或许", "不能一概而论",
    "有争议", "存在争议", "片面", "不太准确", "不太正确", "不够准确", "不够严谨", "不严谨", "有待商榷", "需要具体分析",
    r"partially\b", r"partly\b", r"mostly\b", r"largely\b", r"somewhat\b", r"generally\b", r"half\b",
    r"not entirely\b", r"not completely\b", r"not necessarily\b", r"not always\b", r"not exactly\b",
    r"not quite\b", r"not fully\b", r"not wholly\b", r"it depends\b", r"depends\b", r"uncertain\b", r"unclear\b",
    r"unsure\b", r"(?:i )?(?:cannot|can't|can not) (?:be )?(?:determine|determined|say|tell|judge|verify|confirm)",
    r"hard to say\b", r"difficult to say\b", r"maybe\b", r"possibly\b", r"probably\b", r"likely\b",
    r"may be\b", r"might be\b", r"yes and no\b", r"both (?:correct|true|right)\b", r"neither\b",
    r"(?:correct|true|right|accurate) (?:in part|to (?:some|an) extent|with (?:caveats|reservations))\b",
    r"sort of\b", r"kind of\b", r"more or less\b",
]
HEDGE_RE = re.compile("|".join(f"(?:{h})" for h in HEDGES))

# A qualification right after a verdict that takes it back in part ("正确，但不完全", "True only in part"):
# the answer is hedged, not a verdict. Read only in the clause after the verdict. The runs of punctuation and
# spaces are taken whole (possessive): no word after them starts with one, so the matches are those of plain
# ``*``, but "正确" + 20,000 spaces + "但" is read once, not in every way of sharing the spaces out (minutes).
_CONJ = (r"[\s,，;；(（:：\-—–]*+(?:但是|但|不过|然而|只是|可是|而且也|也|并且|but|however|though|although|yet|only)?"
         r"[\s,，]*+(?:(?:it|this|that) (?:is|was) |it's |that's |" + _THIS + NOUNS + "(?:是)?)?")
# qualifications that take any verdict back in part ("正确，但不完全正确", "错误，部分正确", "True only in part")
POST_HEDGES_ANY = [
    "(?:" + _THIS + NOUNS + ")?" r"(?:也|并|又)?不(?:完全|全)(?:正确|错误|对|错|准确|成立)",
    r"(?:只|仅)?(?:是|有)?部分(?:正确|错误|对|错|准确|成立)", r"(?:只|仅)(?:是|有)?部分", r"有一定道理",
    r"(?:在)?(?:一定|某种)程度上(?:正确|成立|对|错误)?",
    r"not (?:entirely|completely|fully|wholly)\b", r"only (?:partly|partially|in part|to (?:some|an) extent)\b",
    r"(?:partly|partially|in part|to (?:some|an) extent)\b",
]
# qualifications that take a *support* back in part ("正确，但并非所有患者", "True, but not always"); after a
# refutation the same words are its reason ("错误，并非所有患者都会……"), so they are read after support only
POST_HEDGES_SUPPORT = [
    "(?:" + _THIS + NOUNS + ")?" r"(?:也|并|又)?不(?:完全|全面|够全面|够准确|够严谨|太准确|太严谨|太全面|尽然|尽正确|准确|严谨"
    r"|完整|够完整)", "(?:" + NOUNS + ")?" r"(?:过于|太)(?:绝对|简单|笼统|片面)",
    r"(?:并)?(?:不|非)(?:是)?(?:所有|全部|每个|一定|总是|绝对)", r"并非(?:所有|全部|总是|绝对|完全)",
    r"(?:只|仅)(?:是|有)?(?:在部分|在某些|在一定|适用于部分|适用于某些|对部分|在特定)",
    r"有(?:例外|条件|局限|争议|待商榷)", r"存在(?:例外|争议|局限)", r"(?:需|需要|要)?(?:视|看)(?:具体)?情况", r"因人而异",
    r"不一定", r"不能一概而论",
    r"not (?:always|necessarily|quite|exactly|in all cases|for everyone|all)\b",
    r"only (?:in some|sometimes|under|for some|in certain)\b",
    r"(?:with (?:some )?(?:caveats|exceptions|reservations)|mostly|somewhat|in some cases|sometimes)\b",
    r"(?:(?:it is|it's) )?(?:incomplete|not complete|oversimplified|oversimplif\w*|overgeneraliz\w*|too (?:broad|general|"
    r"absolute|simplistic))\b",
]
POST_HEDGE_ANY_RE = re.compile(_CONJ + "(?:" + "|".join(f"(?:{p})" for p in POST_HEDGES_ANY) + ")")
POST_HEDGE_SUPPORT_RE = re.compile(_CONJ + "(?:" + "|".join(f"(?:{p})" for p in POST_HEDGES_SUPPORT) + ")")

# after a one-character Chinese verdict (对, 错, 是, 否, 不): end, space, punctuation or 的
_CJK_END = r"(?=$|[\s,.;:!?，。；：！？、)）\]】\"”'’\-—–]|的)"
# after 真 / 假 ("该命题为真"): end, space or punctuation only -- "真的很重要", "假设" are no verdicts
_CJK_STOP = r"(?=$|[\s,.;:!?，。；：！？、)）\]】\"”'’\-—–])"
# "正确答案", "正确的做法是" ... are not verdicts ("正确的说法" is handled apart: see SHUOFA_RE)
_NOT_AFTER_ZHENGQUE = (r"(?!答案|与否|率|性|地|使用|用药|治疗|认识|理解|做法|方法|处理|诊断|选择|饮食|观念"
                       r"|的(?:是|做法|方法|答案|认识|理解|选项|治疗|用药|处理|诊断)"
                       r"|的?应(?:该|当)?(?:是|为)|的?为\s*[:：])")  # "正确的应该是：……" introduces a correction
_NOT_AFTER_CUOWU = r"(?!率|地|认识|观点|理解|做法|用药|使用|观念|方法|的(?:是|做法|认识|理解|方法|用药|观念))"

_EN_INTENSIFIER = r"(?:(?:absolutely|completely|entirely|totally|definitely|indeed|quite|fully|simply|clearly) )?"
_EN_BE = r"(?:(?:is|are|was)\s+)?"
REFUTE_PATTERNS = [
    # Chinese (negated forms first, so that "不正确" is never read as "正确")
    "不是正确的", "不是对的", "不是真的", "不正确", "并不正确", "并不对", "并不准确", "不对", "不准确", "不属实", "不成立",
    "是错误的", "是错的", "是不正确的", "是不对的", "是假的", "完全错误", "大错特错", "错误" + _NOT_AFTER_CUOWU, "有误",
    "有错", "错" + _CJK_END, "否" + _CJK_END, "不是" + _CJK_END, "不" + _CJK_END, "假的", "不实", "失实", "不真实",
    "为假", "假" + _CJK_STOP,
    # English
    _EN_BE + r"(?:not|n't)\s+" + _EN_INTENSIFIER + r"(?:correct|true|right|accurate|valid)\b",
    r"(?:isn't|isn’t|wasn't)\s+" + _EN_INTENSIFIER + r"(?:correct|true|right|accurate|valid)\b",
    _EN_BE + _EN_INTENSIFIER + r"(?:incorrect|false|wrong|untrue|inaccurate|invalid|not correct)\b",
    r"no(?=\s*[,.;:!—–-]|\s*$|\s+(?:it|this|that|the|not)\b)", r"nope\b", r"i (?:strongly )?disagree\b", "我?(?:并)?不(?:能)?同意",
]
SUPPORT_PATTERNS = [
    "完全正确", "是正确的", "是对的", "正确" + _NOT_AFTER_ZHENGQUE, "准确", "属实", "成立", "没错", "没有错", "是真的",
    "对的", "对" + _CJK_END, "是的", "是" + _CJK_END, "为真", "真" + _CJK_STOP,
    _EN_BE + _EN_INTENSIFIER + r"(?:correct|true|right|accurate|valid)\b",
    r"yes\b", r"yep\b", r"indeed\b", r"i (?:fully |completely |totally )?agree\b", "我?(?:完全)?同意",
]
VERDICT_RE = re.compile("|".join(
    [f"(?P<r{i}>{p})" for i, p in enumerate(REFUTE_PATTERNS)]
    + [f"(?P<s{i}>{p})" for i, p in enumerate(SUPPORT_PATTERNS)]))

# "X的说法": after a verdict word, "的说法/的陈述/..." makes it a description of the statement ("这是错误的说法")
# -- unless 是/为/应该是/: follows, which introduces what would be right ("正确的说法是：...": no verdict).
SHUOFA_RE = re.compile(r"的" + NOUNS)
SHUOFA_INTRO_RE = re.compile(r"\s*(?:应该是|应当是|应是|应为|是|为|如下|[:：])")

# what may separate a leading verdict from a second one: "正确/错误", "正确或错误", "Yes, this is incorrect"
JOIN_RE = re.compile(r"[\s,.;:!?，。；：！？、/()（）\-—]*(?:或者|或是|还是|或|也|又|and|or|but|但是|但|不过|/)?"
                     r"[\s,.;:!?，。；：！？、/()（）\-—]*")

# a self-correction after the first verdict: "正确。不，应该是错误的", "Correct. Wait, actually it is incorrect"
CORRECTION_RE = re.compile(r"(?:不(?=[,，。!！\s])|不对(?=[,，。!！\s])|等等|等一下|更正|纠正|抱歉|对不起|我说错了|说错了|"
                           r"应该是|应为|应是|应当是|其实|实际上|事实上|我再想想|重新考虑|不好意思|wait|actually|sorry|correction"
                           r"|i mean|scratch that|"
                           r"on second thought|on reflection|let me reconsider|my mistake)")
# an option left unticked after the ticked one ("[x] 正确 [ ] 错误", "☑ 正确 ☐ 错误"): not a second verdict
UNTICKED_RE = re.compile(r"[\s,，;；/|]*+(?:\[\s*\]|☐|□)")
CORRECTION_WINDOW = 120  # characters after the first verdict searched for a self-correction
