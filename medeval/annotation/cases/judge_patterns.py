r"""The regular expressions of :mod:`medeval.annotation.cases.judge_scores`: how a judge names a response and
writes a score, in English and Chinese (the text is NFKC-normalised and turned into simplified Chinese first).

Every pattern is matched case-insensitively, except the letter of a response ("Response B"), which must be a
capital A-H so that "answer a question" names nothing. None of them nests unbounded repetitions, and a run of
spaces (or of markdown) that a word follows is taken whole -- ``\s*+``, possessive: nothing after it can start with
a space, so the matches are those of plain ``\s*``, but two neighbouring runs no longer share a long run of spaces
out in every possible way (quadratic: "医生1：5" + 20,000 spaces took 44 s). Matching stays linear on long inputs.
"""

from __future__ import annotations

import re

from medeval.core.chinese import CHINESE_DIGITS, MAX_DIGITS, numeral_value

_I = re.I
LABEL_WORDS = (r"doctors?|physicians?|responses?|assistants?|answers?|models?|candidates?|outputs?|replies|reply"
               r"|systems?|ai|bots?|chatbots?|students?")
LABEL_ZH = r"医生|医师|大夫|回答|回复|答复|答案|模型|助手|候选|助理|应答|学生"
# Chinese digits that can number a response (one to ten; not 两, "both", nor zero), from medeval.core.chinese
ZH_DIGITS = "".join(c for c, v in CHINESE_DIGITS.items() if 1 <= v <= 10 and c not in "两兩")
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
            "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "6th": 6}
# how many responses "both", "all three", "三位医生" covers (the Chinese numerals' values from medeval.core.chinese)
COUNT_ZH = "".join(c for c, v in CHINESE_DIGITS.items() if 2 <= v <= 5 and c != "兩")  # 二两三四五
COUNTS = {"both": 2, "two": 2, "three": 3, "four": 4, "five": 5, **{c: CHINESE_DIGITS[c] for c in COUNT_ZH}}
NUM = r"(?:\d+(?:\.\d+)?)"
LABEL = rf"(?:(?<![a-z])(?:{LABEL_WORDS})|{LABEL_ZH})"
# a number of at most MAX_DIGITS digits: a longer run names no response
POS = rf"(?:\d{{1,{MAX_DIGITS}}}|[{ZH_DIGITS}](?!分)|(?-i:[A-H])(?![A-Za-z0-9]))(?![\d.]\d)"
PREFIX = r"\s*+(?:(?:#|no\.?|编号|第)\s*+)?"  # one way to read each space: no backtracking blow-up
_ORD = "|".join(ORDINALS)
_ZH_ORD_UNIT = r"\s*+(?:个|位|条|份|号|名)?\s*+"


def ref(tag: str = "") -> str:
    """A response named: "Doctor 1", "Response #2", "Response B", "医生一", "第2号回答", "第二个回答", "the first
    response"; with ``tag``, the position is in the groups ``p{tag}``, ``z{tag}`` (第N) or ``o{tag}`` (ordinal)."""
    g = (lambda n: f"?P<{n}{tag}>") if tag else (lambda n: "?:")
    return (rf"(?:{LABEL}{PREFIX}({g('p')}{POS})(?:\s*号)?"
            rf"|第\s*({g('z')}{POS}){_ZH_ORD_UNIT}(?:{LABEL_ZH})"
            rf"|(?<![a-z])({g('o')}{_ORD})\s+(?:{LABEL_WORDS}))")


# what may stand between a label and its score: separators, markdown and score words -- nothing else, so
# "Doctor 1 said the dose is 5 mg" is not a score
FILL_WORD = (r"'s|’s|s'|的|score[sd]?|rating|rated|gets?|got|receives?|received|earns?|earned|deserves?|is given"
             r"|was given|is|was|total|overall|final|points?|of|an?\b|it\b"
             r"|最终|最后|综合|总|得分|评分|分数|打分|分值|获得|得到|给予|可得|打|给|得|为|是|计")
FILL_CHARS = r"[\s*_`#\[\]()【】（）<>:=\-–—→|,]"
# a scale phrase between a label and its score ("医生1（满分10分）：8分", "Doctor 1 (out of 10): 8"), taken whole
# (atomic: its number cannot be given back to be read as the score)
SCALE_INLINE = r"(?>满分(?:为|是|[:=])?\s*+(?:\d+(?:\.\d+)?|十|五|百)\s*+分?|\d+\s*+分制|out\s+of\s+\d+)"
FILL = rf"(?:{FILL_CHARS}|{FILL_WORD}|{SCALE_INLINE})*?"
# a Chinese numeral is a score only before 分 that ends the phrase: "五分", not "十分全面" (very complete)
SCORE = rf"(?P<num>{NUM}|[{ZH_DIGITS}两](?=\s*分(?![\u4e00-\u9fff])))"
UNIT = (r"(?P<unit>\s*+(?:\*\*)?+\s*+(?:/\s*+(?P<den>\d+(?:\.\d+)?)|out of (?P<den2>\d+(?:\.\d+)?)|points?\b|pts?\b"
        r"|分(?!钟|之|析|别|期|级|型|泌|布|娩|化|裂|离|为|成|制)))?")
# a number followed by one of these is a measurement, not a score
NOT_SCORE = re.compile(r"[a-z]|[.,]\d|\s*+-?+\s*+(?:%|‰|°|℃|mg|μg|ug|mcg|ml|kg|mmol|mmhg|cm|mm|iu|u/|g\b|l\b|x\b"
                       r"|times?\b|years?\b|days?\b|weeks?\b|months?\b|hours?\b|h\b|minutes?\b|min\b"
                       r"|次|岁|天|日|周|月|年|小时|分钟|秒|毫|克|升|片|粒|支|倍|例|项|条|个|点|种)", _I)
MENTION_RE = re.compile(ref("1"), _I)
# every place a mention starts, overlapping ones too (what MENTION_RE.search finds from any position)
MENTION_AT = re.compile(rf"(?={ref('1')})", _I)
# label, score words, score: "Doctor 1: 4 points", "医生1得分：4分", "I'd give Doctor 1 a 4"
SCORE_RE = re.compile(rf"{ref('1')}{FILL}{SCORE}{UNIT}", _I)
# a score given before its label: "I give 4 points to Doctor 1", "4/5 for Response 2"
SCORE_TO_RE = re.compile(rf"(?<![\d.]){SCORE}{UNIT}\s*(?:to|for)\s+(?:the\s+)?{ref('1')}", _I)
# several labels sharing one score: "Doctor 1 and Doctor 2 both get 4 points", "Doctors 1 and 2: 4",
# "医生1和医生2均为4分", "医生1、2均得4分"; a bare number after a comma is not a label ("Response 1, 2, 3")
JOIN = r"\s*+(?:,(?:\s*+and\b)?|and\b|&|和|与|及|以及|跟|、|/)\s*+"
JOIN_AND = r"\s*+(?:,\s*+)?(?:and\b|&|和|与|及|以及|跟|、)\s*+"
_REFS = rf"{ref()}(?:'s|’s)?"
# (found whole with finditer, then the shared score at its end: linear however long the chain)
CHAIN_RE = re.compile(rf"{_REFS}(?:{JOIN}{_REFS}|{JOIN_AND}{POS}(?:\s*号)?)+", _I)
CHAIN_TOKEN_RE = re.compile(rf"{ref('1')}|(?P<bare>{POS})", _I)
SHARED_WORD = r"(?:are|were|both|each|all)\s+given|both|each|all|equally|are|were|均|都|皆|各|同样|同为|也|亦"
SHARED_RE = re.compile(rf"(?:{FILL_CHARS}|{SHARED_WORD}|{FILL_WORD})*?{SCORE}{UNIT}", _I)
# "... 4 and 3 points respectively", "分别为4分和3分": one score each, not a shared one
RESPECTIVELY = re.compile(r"respectively|分别|依次|\A\s*(?:\*\*)?\s*(?:and|or|&|和|与|、|,|/|vs\.?)\s*\d", _I)
# every response at once, with a count or none: "both get 4", "both responses deserve 3/5", "all three answers
# score 4", "两位医生均为4分", "三个回答都是3分", "所有回答均得4分"
_EVERY_EN = (rf"(?<![a-z])(?:(?P<cnt>both|two|three|four|five)(?:\s+of\s+them)?(?:\s+(?:{LABEL_WORDS}))?"
             rf"|all(?:\s+(?P<cnt2>two|three|four|five|\d))?(?:\s+(?:the\s+)?(?:{LABEL_WORDS}))|every\s+(?:{LABEL_WORDS})"
             rf"|each\s+(?:{LABEL_WORDS}))")
_EVERY_ZH = (rf"(?:(?<!第)(?P<cnt3>[{COUNT_ZH}])\s*+(?:位|个|份|条|名)\s*+(?:{LABEL_ZH})?|(?:两者|二者)"
             rf"|(?:所有|全部|各|每个|每位)\s*+(?:{LABEL_ZH}))")
_EVERY_VERB = (r"[\s*_:,]*+(?:(?:all|both|each)\s++)?(?:(?:are|were)\s+(?:given|rated|scored)|gets?|receives?|deserves?"
               r"|earns?|scores?|are|were|rated)?[\s*_:]*+(?:an?\s+)?(?:score\s+of\s+)?"
               r"|(?:的(?:回答|得分|评分))?\s*+(?:均|都|皆|各|同样|同为)\s*+(?:为|是|得|给|打|获得|可得)?\s*+")
EVERY_RE = re.compile(rf"(?:{_EVERY_EN}|{_EVERY_ZH})(?:{_EVERY_VERB}){SCORE}{UNIT}", _I)
# a score with no label of its own, alone on a line or starting a sentence: "Score: 4", "**Rating**: 4/5",
# "得分：4分", "评分：4"; it belongs to the response the section before it is about (see _owner)
LINE_RE = re.compile(
    r"(?:^|(?<=[.。;；!！?？,，]))[ \t>*_#\-•]*"
    r"(?:(?:(?:final|overall|total)\s+)?(?:score|rating)(?![a-z])|(?:最终|综合|总)?(?:得分|评分|分数|打分)|总分)"
    rf"[\s*_]*+(?:[:=]|is\b|为|是)?[\s*_]*+{SCORE}{UNIT}", re.M | _I)
# a score given in so many words, with no label: "给5分", "我给4分", "给它打4分", "可得3分", "I'd give it 5",
# "deserves a 3/5", "I would rate it 4"; like a score line it belongs to the response its section is about
GIVE_RE = re.compile(
    r"(?:(?:我|可|应|建议)?(?:给予|给出|给|打|评为|评|可得|应得|得)(?:它|其|该回答|此回答|这个回答|这份回答)?(?:打|评)?\s*"
    rf"(?=[\d{ZH_DIGITS}两])"
    r"|(?<![a-z])(?:i'?d|i would|i will|i|we|would)\s++(?:give|rate|score|award|assign)\s++(?:it|this(?:\s+one)?|them)?"
    r"\s*+(?:an?\s++)?(?:(?:score|rating)\s++(?:of\s++)?)?"
    r"|(?<![a-z])(?:deserves?|merits?|earns?|warrants?)\s++(?:an?\s++)?(?:(?:score|rating)\s++(?:of\s++)?)?)"
    rf"{SCORE}{UNIT}", _I)
# the end of a sentence (a decimal point does not end it)
SENTENCE_END = re.compile(r"[\n;；。!！?？]|\.(?!\d)")
CLAUSE_END = re.compile(r"[\n;；。!！?？,，]|\.(?!\d)")
# a mention that heads a section: first on its line (after markdown, a bullet or a list number) ...
HEAD_BEFORE = re.compile(r"[\s>*_#\-•\[【(]*+(?:\d++[.)、]\s*+)?+[\s*_#\[【(]*+")
# its parts, to read a line's start once for every mention on it (judge_reading.Sentences.heads_line)
HEAD_MARKS = re.compile(r"[\s>*_#\-•\[【(]*+")
HEAD_NUMBER = re.compile(r"\d++[.)、]")
HEAD_TAIL = re.compile(r"[\s*_#\[【(]*+")
# ... or followed by nothing but a colon or the end of its line: "Doctor 1:", "**Response 2**", "医生1的回答："
HEAD_AFTER = re.compile(r"[ \t*_\]】)]*+(?:(?:'s|’s)\s+(?:response|answer|reply)|的(?:回答|回复|答复))?"
                        r"[ \t*_\]】)]*+(?::|\n|\Z)", _I)
# what may stand between a list-item-looking "4." and a following label or the end of its line
SKIP_AFTER_STOP = " \t*_#.,;。，；\"'“”‘’「」『』[]【】()"
# a score written before its label: "4 (Doctor 1), 3 (Doctor 2)" -- the number after the label is not its score
SCORE_BEFORE = re.compile(r"\d(?:\s*+(?:\*\*)?+\s*+(?:/\s*+\d++|points?|pts?|分))?\s*+[(\[【]\s*+\Z", _I)
# a list item's number and its stop: "2." "3、" "4)" (judge_reading.list_item looks for the next one)
ITEM = re.compile(r"(?<![\d.])(\d+)([.、)])")

# ---- the judge's scale, written apart from any score: "满分10分", "（满分10分）", "10分制", "百分制", "out of 10" and
# "(/10)" standing alone, "on a scale of 1-10", "a 5-point scale", "评分范围1-10分". The number is the scale, never a
# score (a response "满分10分" is not given 10), and is recorded like the denominator of "8/10".
_SCALE_NUM = r"(?>\d{1,6}(?:\.\d+)?)"
SCALE_RE = re.compile(
    rf"满分(?:为|是|[:=])?\s*+(?P<s1>{_SCALE_NUM}|十|五|百|一百)\s*+分?"
    rf"|(?<![\d.])(?P<s2>{_SCALE_NUM}|十|五|百)\s*+分制"
    rf"|(?<![\d.\w])\(\s*+(?:out\s+of|/)\s*+(?P<s3>{_SCALE_NUM})\s*+\)"
    r"|(?<![a-z])(?:scores?|ratings?|points?|marks?|graded|scored|rated)\s+(?:are\s+|is\s+)?(?:given\s+)?"
    r"(?:out\s+of|/)\s*+"
    rf"(?P<s4>{_SCALE_NUM})"
    rf"|(?<![a-z])(?:on\s+)?an?\s+scale\s+(?:of|from)\s+(?:[01]\s*+(?:-|–|to)\s*+)?(?P<s5>{_SCALE_NUM})"
    rf"|(?<![a-z\d])(?:[01]\s*+[-–]\s*+)?(?P<s6>{_SCALE_NUM})[-\s]point\s+scale"
    rf"|(?:评分|打分|分值|分数)?范围(?:为|是|[:=])?\s*+[01]\s*+[-–~～到至]\s*+(?P<s7>{_SCALE_NUM})\s*+分?"
    rf"|(?:采用|按|使用|基于)\s*+[01]\s*+[-–~～到至]\s*+(?P<s8>{_SCALE_NUM})\s*+分(?:制)?",
    re.I)
SCALE_GROUPS = tuple(f"s{i}" for i in range(1, 9))
SCALE_NUMERALS = {**{c: float(numeral_value(c)) for c in "十五"}, "百": 100.0, "一百": 100.0}

# ---- a score corrected in the rationale: "医生1：4分，改为5分", "4分→5分", "Doctor 1: 4, revised to 5", "更正：医生1
# 应为5分", "~~4分~~ 5分". An explicit change (改为, 修正为, 调整为, 更正为, revised to ...) is *strong*; a weaker word
# (应为, should be, actually, →, a struck-out score) counts as a correction only right after the score it replaces or
# with a score unit (judge_reading.correction decides which response and which score, or refuses).
FIX_STRONG = (r"改为|改成|改作|改给|改打|改评|改判为?|修正为|修正成|修正到|修改为|修改成|调整为|调整成|调整到|调整至|调为|调至"
              r"|更正为|更正成|更改为|订正为|纠正为|改回(?:为|到|成)?|上调(?:为|至|到)|下调(?:为|至|到)|降为|降至"
              r"|提高(?:为|至|到)|提升(?:为|至|到)"
              r"|重新(?:评|打|给)分?(?:为)?|(?:修正|调整|更正|修改|复核|订正)后(?:的)?(?:得分|评分|分数|总分)?(?:为|是)?"
              r"|(?:更正|修正|纠正|订正|勘误)\s*+[:：]"
              r"|(?<![a-z])(?:revised?|revising|corrected|correcting|changed?|changing|adjusted|adjusting|amended"
              r"|updated?|bumped(?:\s+(?:up|down))?|downgraded|upgraded|revert(?:ed|ing)?(?:\s+back)?)"
              r"\s+(?:(?:it|this|that|the\s+score|my\s+score)\s+)?to\b"
              r"|(?<![a-z])(?:correction|revised\s+score|corrected\s+score|updated\s+score|revision)\s*+:")
FIX_WEAK = (r"应为|应该是|应该为|应当为|应是|实际(?:上)?应?(?:为|是)|(?<![→=>⇒➔➜-])(?:→|-{1,3}>|={1,3}>|⇒|➔|➜)"
            r"|~~(?=[^~\n]{0,40}\d)(?!\s)[^~\n]{1,40}?(?<!\s)~~"  # a struck-out score: "~~4分~~ 5分"
            r"|(?<![a-z])(?:should\s+(?:be|get|receive|score|have)|actually|i\s+mean|or\s+rather|make\s+(?:that|it))"
            r"(?![a-z])")
# a heading that starts a correction of a named response: "更正：医生1应为5分", "Correction: Doctor 1 gets 5"
FIX_HEAD_STRONG = r"更正|修正|纠正|订正|勘误|更正一下|修正一下|(?<![a-z])(?:correction|update|edit)(?![a-z])"
FIX_HEAD_WEAK = r"抱歉|不对|等等|(?<![a-z])(?:actually|sorry|wait|i\s+mean)(?![a-z])"
_FIX_SEP = r"[\s*_:：,，\-—]*+"
# what may stand between the parts of a correction: FILL without its arrows and dashes (themselves markers), a few
# words long at most -- every position of a text can start a correction ("→ " * 10,000), so an unbounded stretch
# would make the search quadratic
FIX_FILL = rf"(?:[\s*_`#\[\]()【】（）:=,]|{FILL_WORD}|{SCALE_INLINE}){{0,10}}?"
# one pattern, every part optional: judge_scores keeps only the matches with a marker or a heading
CORRECTION_RE = re.compile(
    rf"(?:(?:(?P<hs>{FIX_HEAD_STRONG})|(?P<hw>{FIX_HEAD_WEAK})){_FIX_SEP})?(?:{ref('1')}{FIX_FILL})?"
    rf"(?:(?:(?P<strong>{FIX_STRONG})|(?P<weak>{FIX_WEAK})){FIX_FILL})?{SCORE}{UNIT}", _I)
# the verb before the response it corrects: "I revised Doctor 2's score to 4", "changing Response B to a 3"
CORRECTION_VERB_RE = re.compile(
    r"(?<![a-z])(?P<strong>(?:revised?|revising|corrected|correcting|changed?|changing|adjusted|adjust"
    r"|adjusting|amended|amend|updated?|updating|bumped|bump|downgraded|downgrade|upgraded|upgrade)\s++)"
    rf"{ref('1')}{FIX_FILL}"
    rf"\s*+(?:(?:up|down)\s++)?to\s++(?:an?\s++)?{SCORE}{UNIT}", _I)
# only a text holding one of these (lower-cased) is searched for corrections: most rationales have none, and a
# substring test is much cheaper than trying the correction pattern at every position
FIX_GATE_WORDS = ("改为", "改成", "改作", "改给", "改打", "改评", "改判", "改回", "修正", "修改", "调整", "调为", "调至", "上调",
                  "下调", "更正", "更改", "订正", "纠正", "降为", "降至", "提高", "提升", "重新", "复核", "勘误", "应为", "应该", "应当",
                  "应是", "实际", "抱歉", "不对", "等等", "→", "->", "=>", "⇒", "➔", "➜", "~~", "revis", "corrected",
                  "correcting", "correction", "chang", "adjust", "amend", "updat", "bump", "downgrad", "upgrad",
                  "revert", "should", "actually", "mean", "rather", "make", "sorry", "wait", "edit")
# likewise for a scale stated apart
SCALE_GATE_WORDS = ("满分", "分制", "范围", "采用", "按", "使用", "基于", "out of", "scale", "(/", "( /")
# more than one score in a correction: "改为4或5分", "revised to 4-5", "调整为4~5分"
FIX_RANGE = re.compile(r"\s*+(?:分|points?)?\s*+(?:或者?|or|到|至|~|～|-|–)\s*+\d", _I)
# what may stand between a score and the weak correction right after it: "4分，应为5分", "4 → 5", "4, actually 5"
_FIX_PUNCT = r"[\s*_,，;；:：、()（）\[\]【】\-—–.。!！]*+"
FIX_ADJACENT = re.compile(
    _FIX_PUNCT + r"(?:(?:nope|no|but|wait|sorry|hmm+|oh|um+|scratch that|on second thought|i mean"
    r"|let me correct(?: that| myself)?|不对|不好意思|不|等等|抱歉|哦|呃|嗯|我说错了|说错了|更正一下|纠正一下|还是)"
    + _FIX_PUNCT + ")*", _I)
# a score without a unit that ends its clause ("revised to 5.") -- not "changed to 2 doses"
FIX_CLOSES = re.compile(r"[\s*_]*+(?:$|[\n.,;:!?)\]。，；：！？）】—–-])")
