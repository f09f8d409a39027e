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

from medeval.core.chinese import CHINESE_DIGITS, MAX_DIGITS

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
FILL = rf"(?:{FILL_CHARS}|{FILL_WORD})*?"
# a Chinese numeral is a score only before 分 that ends the phrase: "五分", not "十分全面" (very complete)
SCORE = rf"(?P<num>{NUM}|[{ZH_DIGITS}两](?=\s*分(?![\u4e00-\u9fff])))"
UNIT = (r"(?P<unit>\s*+(?:\*\*)?+\s*+(?:/\s*+(?P<den>\d+(?:\.\d+)?)|out of (?P<den2>\d+(?:\.\d+)?)|points?\b|pts?\b"
        r"|分(?!钟|之|析|别|期|级|型|泌|布|娩|化|裂|离|为|成)))?")
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
# its parts, to read a line's start once for every mention on it (judge_scores._Sentences.heads_line)
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
# a list item's number and its stop: "2." "3、" "4)" (judge_scores._list_item looks for the next one)
ITEM = re.compile(r"(?<![\d.])(\d+)([.、)])")
