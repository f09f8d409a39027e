"""What an enumerated answer holds besides its entities, and the rules that take it out.

A clinician reading an enumerated answer lists its entities; :func:`medeval.engine.postprocess.split_entities` splits
the answer into pieces and these rules take out what such a reader (or the paper's NER step, MedDisKEval 3.2.1 and
App. E) leaves out: markdown headings and notes, intro labels, bracketed asides, doses, frequencies and routes after
a drug, hedges, "少数患者可出现…" qualifiers before a finding, and closing pleasantries. ``docs/FIDELITY.md`` lists
the rules with realistic cases. Each rule is gated by a test that costs next to nothing (a character in the piece,
its first or last character), because every imported enumerated answer goes through them, and each reads its piece
once (``tests/test_list_answers.py::test_the_new_rules_stay_linear_on_long_runs``).
"""

from __future__ import annotations

import re

from medeval.core.chinese import CHINESE_DIGIT_CLASS, to_simplified
from medeval.engine.aspects import ASPECTS

# Simplified characters of these rules with their traditional forms: a rule reads "祝您早日康復" as it reads
# "祝您早日康复" without converting every piece with OpenCC. tests/test_list_answers.py checks the table against
# OpenCC's s2t for every character the rules use.
_TRAD = {'万': '萬', '专': '專', '业': '業', '两': '兩', '严': '嚴', '个': '個', '临': '臨', '为': '爲為', '举': '舉', '于': '於',
         '仅': '僅', '会': '會', '体': '體', '儿': '兒', '内': '內', '几': '幾', '则': '則', '别': '別', '医': '醫', '单': '單',
         '参': '參', '发': '發', '后': '後', '吗': '嗎', '咨': '諮', '喷': '噴', '嘱': '囑', '壮': '壯', '声': '聲', '备': '備',
         '复': '復', '头': '頭', '奥': '奧', '宝': '寶', '导': '導', '尔': '爾', '尽': '盡', '帮': '幫', '并': '並', '床': '牀',
         '应': '應', '揿': '撳', '数': '數', '时': '時', '条': '條', '极': '極', '欢': '歡', '涂': '塗', '温': '溫', '点': '點',
         '现': '現', '疗': '療', '盐': '鹽', '种': '種', '类': '類', '继': '繼', '续': '續', '维': '維', '脉': '脈', '荐': '薦',
         '药': '藥', '虑': '慮', '补': '補', '见': '見', '觉': '覺', '计': '計', '认': '認', '议': '議', '许': '許', '询': '詢',
         '该': '該', '说': '說説', '请': '請', '责': '責', '贴': '貼', '较': '較', '输': '輸', '运': '運', '还': '還', '进': '進',
         '连': '連', '适': '適', '遗': '遺', '钠': '鈉', '长': '長', '问': '問', '阳': '陽', '阴': '陰', '随': '隨', '雾': '霧',
         '静': '靜', '韦': '韋', '顺': '順', '顿': '頓', '题': '題', '饭': '飯', '黄': '黃', '属': '屬', '择': '擇',
         '断': '斷', '诊': '診', '达': '達', '选': '選', '关': '關', '况': '況', '术': '術', '检': '檢', '热': '熱',
         '状': '狀', '群': '羣'}


_PAREN_RE = re.compile(r"[()]")


def _either(pattern: str) -> str:
    """``pattern`` with each character of ``_TRAD`` read in either form (inside a class too)."""
    out, in_class, escaped = [], False, False
    for c in pattern:
        if escaped:
            out.append(c)
            escaped = False
        elif c == "\\":
            out.append(c)
            escaped = True
        elif c in _TRAD:
            out.append(c + _TRAD[c] if in_class else f"[{c}{_TRAD[c]}]")
        else:
            in_class = (in_class or c == "[") and c != "]"
            out.append(c)
    return "".join(out)


def _chars(zh: str, latin: str = "") -> frozenset[str]:
    """The characters of ``zh`` in either form, and ``latin``: the first or any characters a rule needs (its gate)."""
    return frozenset(c for c in _either(zh) if c not in "[]") | frozenset(latin)


# a trailing 等 ("咳嗽、发热等症状") closes the list, it is no part of the last entity
TRAIL_RE = re.compile(_either(r"(?:等等|等)(?:多种|各种|一系列|相关)?(?:症状|表现|疾病|并发症|药物|检查|部位|科室|手术|人群|情况)?$"))

# a closing pleasantry or an advice to see a doctor is no entity: the piece holding one is left out
CLOSING_ZH_RE = re.compile(
    _either(r"咨询医生|咨询专业|遵医嘱|及时就医|请就医|尽早就医|仅供参考|以医生"
            r"|祝(?:您|你|患者|宝宝|孩子)?(?:早日康复|身体健康|健康|平安|顺利|一切顺利|好运)"
            r"|希望.{0,12}?(?:帮助|帮到|有用)"
            r"|如有(?:不适|疑问|疑虑|其他问题|任何问题|问题|需要)|如果(?:您|你)?还?有(?:其他|任何|更多)?(?:问题|疑问|疑虑)"
            r"|欢迎(?:继续|随时)?(?:提问|咨询|追问|交流)"))
CLOSING_ZH_FIRST = _chars("咨遵及请尽仅以祝希如欢")  # the first characters of those: a piece with none is searched no further
CLOSING_EN_RE = re.compile(  # every one of them has a space: searched only in a piece that has one
    r"consult\s+(?:a|your)\s+(?:doctor|physician)|seek\s+medical|hope\s+(?:this|that|it)\s+helps"
    r"|get\s+well\s+soon|wish(?:ing)?\s+you\s|feel\s+free\s+to|let\s+me\s+know"
    r"|if\s+you\s+have\s+(?:any\s+)?(?:other\s+|further\s+|more\s+)?questions|for\s+reference\s+only", re.I)

# a hedge or a connective before an entity ("可能是…", "也许", "还有", "maybe", "首先"): the entity is what follows
_HEDGE_LEAD_RE = re.compile(
    "^(?:" + _either(r"(?:我认为|我觉得|个人认为|可能是|可能会有|可能有|可能|也可能是|也可能|也许是|也许|或许是|或许|大概是|大概|"
                     r"估计是|估计|应该是|考虑是|考虑为|还有|另外|此外|以及|首先|其次|再次|最后|同时|必要时|如有必要|"
                     r"可选用|可选择|选用|可使用|可以使用|可用(?!于)|首选|推荐使用|推荐|"
                     r"第" + CHINESE_DIGIT_CLASS + r"{1,3}[点步条]?(?=\s|$))") + r"\s*+"
    r"|(?:i\s+think|i\s+believe|i\s+guess|maybe|perhaps|probably|possibly|likely|it\s+(?:could|may|might)\s+be"
    r"|also|and|or|firstly|secondly|thirdly|finally|additionally|then|if\s+needed)(?:\s++|$))+", re.I)
_HEDGE_FIRST = _chars("我个可也或大估应考还另此以首其再最同第必如选推", "iImMpPlLaAoOfFsStT")
PARTICLES = "吧吗嗎呢啦哦呀嘛啊"  # "…吧": a question-like ending is a hedge, not part of the entity

# a qualifier before a finding ("少数患者还会出现黄疸", "严重者可并发心肌炎", "好发于青壮年"): the finding is the entity
_Q_ADV = r"(?:还|也|则|亦|常|多|可能|可以|可|会|甚至|均|都|偶尔|偶|尚|并|容易|易|往往|通常|一般|进一步)"
_Q_VERB = r"(?:出现|发生|伴有|伴发|伴|表现为|发展为|发展成|进展为|并发|合并|引起|导致|遗留|有|见)"
_QUALIFIER_RE = re.compile(
    "^(?:" + _either(
        rf"(?:少数|少部分|部分|多数|大多数|大部分|个别|极少数|一些|有些|许多|很多|严重|重症|重度|病情严重|病情较重|病情进展|"
        rf"晚期|早期|后期|急性期|慢性期|长期|反复发作)的?(?:患者|病人|病例|患儿|者|时)?\s*+{_Q_ADV}*{_Q_VERB}"
        rf"|(?:患者|病人|患儿)\s*+{_Q_ADV}*{_Q_VERB}"
        rf"|(?:多|常|好|易|主要)?(?:见于|发于|发生于|累及)"
        rf"|{_Q_ADV}*(?:出现|伴有|表现为|发展为|发展成|进展为|引起|导致)|{_Q_ADV}+(?:有|见|伴)")
    + r"|(?:(?:some|a\s+few|few|many|most|severe|a\s+minority\s+of|a\s+small\s+number\s+of)\s+"
      r"(?:(?:of\s+)?(?:the\s+)?(?:patients|cases|people|children)\s+)?|(?:patients|cases|people|children)\s+)"
      r"(?:(?:may|can|might|will|also|often|sometimes|occasionally)\s+)*"
      r"(?:develop|have|experience|present\s+with|show|suffer\s+from)"
      r"|(?:may|can|might)\s+(?:also\s+)?(?:develop|cause|lead\s+to)"
      r"|(?:mainly\s+|mostly\s+|commonly\s+)?(?:seen|occurs?)\s+in)\s*+", re.I)
_QUALIFIER_FIRST = _chars("少部多大个极一有许很严重病晚早后急慢长反患还也则亦常可会甚均都偶尚并容易往通进出伴表发引导好主见累",
                          "sSaAfFmMpPcCoO")

# a dose, frequency, route or course after a drug ("阿莫西林 0.5g bid po", "奥司他韦75mg，每日2次，连用5天"): the
# drug is the entity; a piece that is only such a tail ("每日2次") is left out. A tail counts only when it runs to
# the end of the piece ("0.9%氯化钠注射液", "口服补液盐", "维生素B12" keep their numbers and words), and a bare
# length of time ("7天") only after another dosing word ("生后7天" is an onset age, not a course).
_D_NUM = r"\d+(?:\.\d+)?(?:\s*+[-~～至到]\s*+\d+(?:\.\d+)?)?"
_D_CN = CHINESE_DIGIT_CLASS
_D_AMOUNT = (r"(?:每次|每日|每天|一日|一次|单次|日)?\s*+" + _D_NUM
             + r"\s*+(?:mg|g|μg|ug|mcg|ng|kg|ml|l|iu|u|mmol|meq|万u|万iu|万单位|单位|片|粒|丸|袋|支|滴|喷|揿|贴|包|瓶|枚|%)"
             r"(?![a-z])(?:\s*+/\s*+(?:kg|m2|d|日|天|次|h|小时|day|dose)(?![a-z]))*+")
_D_FREQ = (rf"(?:每|一)\s*+(?:日|天|晚|周|次)\s*+(?:\d+|{_D_CN})\s*+(?:次|回)?|(?:\d+|{_D_CN})\s*+次\s*+/\s*+(?:日|天|d|周)"
           r"|每\s*+\d+\s*+(?:小时|h)\s*+(?:一次|1次)?|每晚|每日|每天"
           r"|q\s*+\d+\s*+h|(?:qd|bid|tid|qid|qn|qod|qw|qh|prn|st|stat|hs|ac|pc|q\.d\.?|b\.i\.d\.?|t\.i\.d\.?)(?![a-z])"
           r"|(?:once|twice|three\s+times|four\s+times|\d+\s+times)\s+(?:daily|a\s+day|per\s+day)|daily"
           r"|every\s+\d+\s*+(?:hours?|h)\b|顿服|必要时|as\s+needed")
_D_ROUTE = (r"(?:po|iv|im|sc|ih|ivgtt|iv\s+gtt|inh|pr)(?![a-z])|口服|静滴|静推|静注|静脉滴注|静脉注射|静脉输注|肌注|肌内注射|"
            r"肌肉注射|皮下注射|雾化吸入|外用|外涂|含服|舌下含服|舌下含化|饭前|饭后|餐前|餐后|睡前|空腹|orally|by\s+mouth"
            r"|intravenously|topically")
_D_COURSE = (rf"(?:(?:连用|连服|疗程|持续|共|服用|用药|使用|用)\s*+(?:{_D_NUM}|{_D_CN}{{1,3}})\s*+(?:天|日|周|个月|月|周期)"
             rf"|for\s+{_D_NUM}\s*+(?:days?|weeks?|months?)\b|疗程)")
_D_BARE_COURSE = rf"(?:{_D_NUM}|{_D_CN}{{1,3}})\s*+(?:天|日|周|个月|月|days?|weeks?)(?![a-z])"
_D_FIRST = _either(f"(?:{_D_AMOUNT}|{_D_FREQ}|{_D_ROUTE}|{_D_COURSE})")
_D_ANY = _either(f"(?:{_D_AMOUNT}|{_D_FREQ}|{_D_ROUTE}|{_D_COURSE}|{_D_BARE_COURSE})")
_DOSE_TAIL_RE = re.compile(rf"{_D_FIRST}(?:\s*+[x×*/+]?\s*+{_D_ANY})*+\s*+", re.I)
_DOSE_START_RE = re.compile(_either(
    r"(?<![a-z0-9.])(?:\d|q\d|(?:每次|每日|每天|每|一日|一次|单次|连用|连服|疗程|持续|共|服用|用药|使用|用)"
    r"(?=\s*+[\d" + CHINESE_DIGIT_CLASS[1:-1] + r"次日天晚周])"
    r"|(?:qd|bid|tid|qid|qn|qod|qw|qh|prn|st|stat|hs|ac|pc|po|iv|im|sc|ih|ivgtt|inh|pr|once|twice|three|four|daily"
    r"|orally|by|intravenously|topically|for|every|as|q\.d|b\.i|t\.i)(?![a-z])"
    r"|口服|静|肌|皮下注射|雾化吸入|外用|外涂|含服|舌下|饭|餐|睡前|空腹|顿服|必要时|每晚|每日|每天|疗程)"), re.I)
# where a tail may start: one character class (fast to search for), each hit then checked by _DOSE_START_RE.match
_DOSE_CAND_RE = re.compile(_either(r"[0-9qbtshapoifde每一单日连疗持共服用使口静肌皮雾外含舌饭餐睡空顿必]"), re.I)
_ROUTE_LEAD_RE = re.compile(_either(r"^(?:口服|静滴|静脉滴注|静脉注射|静脉输注|肌注|肌内注射|皮下注射|雾化吸入|外用|含服|舌下含服)\s*+"))

# a bracketed aside ("头孢类（如头孢呋辛）", "布洛芬（0.2g）", "(if needed)") is no part of the entity; a polarity in
# brackets ("(+)", "(阳性)") is the finding itself and stays
_POLARITY = r"\s*+(?:[+\-−±]+|阳性|阴性|弱阳性)\s*+"
_POLARITY_RE = re.compile(_either(_POLARITY))
FLAT_ASIDE_RE = re.compile(_either(rf"\((?!{_POLARITY}\))[^()]*+\)"))  # an aside with no bracket inside: most of them

# lines and labels that are no entities: a markdown heading, a note ("注：…", "Note: …"), an intro before a colon
_NOTE_LABEL_RE = re.compile(_either(r"(?:注|注意|备注|提示|温馨提示|说明|免责声明|特别提醒)") + r"|(?:notes?|disclaimer|tips?|ps)",
                            re.I)
_INTRO_LABEL_RE = re.compile(
    _either(r"(?:包括|包含|主要有|常见的?有|可有|有|为|是|如下|以下|下列|见下|表现为|分为|列举如下|诊断|考虑)"
            r"(?:几种|几类|几个|几点|几方面|方面|内容)?$")
    + r"|\b(?:include|includes|including|are|is|as\s+follows|the\s+following|following|e\.g\.?)$", re.I)
# what describes an entity label rather than listing more entities: a clause that starts with one of these words
_DESCRIPTION_RE = re.compile(
    r"(?:^|[,;])\s*+(?:" + _either(r"多为|常为|多表现为|表现为|多呈|呈|为|是|即|指|可达|可有|可伴|可出现|可引起|可用于|可能|一般|通常|"
                                   r"主要|用于|适用于|属于|常见于|多见于|见于|由于|由|因|多在|常在|多发生|尤其|特别是|适合|能")
    + r"|(?:usually|often|typically|mostly|used|is|are|may|can|commonly|especially|a|an|the)\b)", re.I)
COLON_RE = re.compile(r"(?<!\d):|:(?!\d)")  # "1:1000" is a dilution, not a label
WORD_RE = re.compile(r"[^\W_]")  # a piece with no letter, digit or ideograph ("---", "**") is no entity
ENDS = " \"'“”‘’「」[]【】:：*_`…"  # what an entity never starts or ends with
_LABEL_QUAL_ZH_RE = re.compile(r"^(?:该病|本病|此病|其)?的?(?:最常见|常见|主要|常用|推荐|建议|可能|典型|临床)?的?")
_LABEL_QUAL_EN_RE = re.compile(r"^(?:the\s+)?(?:most\s+)?(?:common|main|primary|typical|key|recommended|possible)\s+",
                               re.I)


def _label_key(label: str) -> str:
    return _LABEL_QUAL_EN_RE.sub("", _LABEL_QUAL_ZH_RE.sub("", label, count=1), count=1).strip().casefold()


_LABEL_NAMES = frozenset(_label_key(n) for a in ASPECTS for n in (a.name, a.name_zh, *a.aliases))
# the gate: a tail ends the piece, so the piece's last character (a Chinese one) or last word (a Latin one) must be
# one a tail can end with ("…0.5g", "…bid", "…口服", "…每日3次", "…连用5天")
_DOSE_LAST = _chars("服滴推注射入用涂化前后腹次回天日周月晚期程时片粒丸袋支喷揿贴包瓶枚位", "%")
_DOSE_WORDS = frozenset("mg g ug mcg ng kg ml l iu u mmol meq d h day dose qd bid tid qid qn qod qw qh prn st stat "
                        "hs ac pc daily hours hour needed po iv im sc ih ivgtt gtt inh pr orally mouth intravenously "
                        "topically days weeks months week month".split())

RULES_FIRST = _HEDGE_FIRST | _QUALIFIER_FIRST
RULES_LAST = _DOSE_LAST | frozenset(PARTICLES + ".abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _may_end_with_a_dose(p: str) -> bool:
    c = p[-1]
    if c in _DOSE_LAST:
        return True
    if c == ".":  # "b.i.d."
        p = p.rstrip(".")
        c = p[-1:] or " "
    if not ("a" <= c <= "z" or "A" <= c <= "Z"):
        return False
    i = len(p) - 1
    while i > 0 and ("a" <= p[i - 1] <= "z" or "A" <= p[i - 1] <= "Z"):
        i -= 1
    return p[i:].lower() in _DOSE_WORDS


def entity(piece: str) -> str:
    """The entity in one piece of a list: without a question-like ending, a trailing 等, a hedge or connective
    before it, a qualifier before a finding and a dosing tail after a drug (each rule gated by one cheap test)."""
    p = piece.strip()
    if not p:
        return p
    if p[-1] in PARTICLES:
        p = p.rstrip(PARTICLES).rstrip()
    if "等" in p:
        p = TRAIL_RE.sub("", p).strip()
    if p and p[0] in _HEDGE_FIRST:
        p = _HEDGE_LEAD_RE.sub("", p, count=1)
    if p and p[0] in _QUALIFIER_FIRST:
        p = _QUALIFIER_RE.sub("", p, count=1)
    if p and _may_end_with_a_dose(p):
        p = _dose_cut(p)
    if p is piece or p == piece:
        return p
    return (TRAIL_RE.sub("", p) if "等" in p else p).strip(ENDS).strip()  # "可能有咳嗽等吧": 等 comes out last


def _dose_cut(p: str) -> str:
    """``p`` without a dosing tail that runs to its end ("阿莫西林 0.5g bid po": 阿莫西林), with a route before the
    drug that such a tail follows ("口服阿莫西林 0.5g"); "" when ``p`` is only a tail ("每日2次"). Each start tried
    reads on from the end of the previous try, so the piece is read once."""
    pos = 0
    while True:
        c = _DOSE_CAND_RE.search(p, pos)
        if c is None:
            return p
        i = c.start()
        m = _DOSE_TAIL_RE.match(p, i) if _DOSE_START_RE.match(p, i) else None
        if m and m.end() == len(p):
            head = p[:i].rstrip()
            return (_ROUTE_LEAD_RE.sub("", head, count=1) or head) if head else ""
        pos = max(m.end() if m else 0, i + 1)


def without_asides(line: str) -> str:
    """``line`` without its bracketed asides ("头孢类(如头孢呋辛、头孢曲松)" -> "头孢类", an aside inside another goes
    with it); a bracket without its pair is dropped and its text kept ("布洛芬(0.2g" -> "布洛芬0.2g": what it would
    have enclosed is unknown), so no entity is left with an unbalanced bracket. A polarity ("(+)", "(阴性)") is the
    finding, not an aside, and stays. One pass over the brackets with a stack: linear in the line."""
    opens: list[int] = []
    cuts: list[tuple[int, int]] = []  # (start, end) of each aside or lone ")", in order
    for m in _PAREN_RE.finditer(line):
        i = m.start()
        if m.group() == "(":
            opens.append(i)
        elif opens:
            j = opens.pop()
            if _POLARITY_RE.fullmatch(line, j + 1, i):
                continue
            while cuts and cuts[-1][0] > j:  # asides inside this one
                cuts.pop()
            cuts.append((j, i + 1))
        else:
            cuts.append((i, i + 1))
    if opens:  # never inside a cut: a "(" between a pair's brackets would have closed first
        cuts = sorted(cuts + [(k, k + 1) for k in opens])
    if not cuts:
        return line
    out, pos = [], 0
    for a, b in cuts:
        out.append(line[pos:a])
        pos = b
    out.append(line[pos:])
    return "".join(out)


def labels_read(line: str) -> list[str]:
    """The parts of a line with colons that may hold entities. The text before a colon is a label: an intro
    ("主要包括", "常用药物", "Common symptoms include") is left out, a note ("注：…", "Note: …") leaves out the rest
    of the line, any other label is an entity, and so is what follows it ("对症治疗：退热、止咳" names three) unless it
    describes the label ("咳嗽：多为干咳，夜间加重", "阿莫西林：广谱抗生素，用于…": the label alone); a line that ends
    with its colon is a heading of the list below it ("**抗生素：**") and is left out."""
    parts = COLON_RE.split(line)
    out = []
    described = False  # is the text after the last colon a description of an entity label?
    for label in parts[:-1]:
        key = label.strip(ENDS)
        if _NOTE_LABEL_RE.fullmatch(key):
            return out
        if key and not _INTRO_LABEL_RE.search(key) and not _is_aspect_label(key):
            out.append(label)
            described = True
        else:
            described = False  # after an intro, a list follows
    rest = parts[-1]
    if not rest.strip(ENDS):
        if out:
            out.pop()
    elif not (described and _DESCRIPTION_RE.search(rest)):
        out.append(rest)
    return out


def _is_aspect_label(label: str) -> bool:
    """Does a label name an aspect ("该病的常见症状", "Common Symptoms", "常見症狀")?"""
    key = _label_key(label)
    return key in _LABEL_NAMES or (not key.isascii() and _label_key(to_simplified(label)) in _LABEL_NAMES)
