"""Readers of user- and file-supplied text stay well-formed on any input and linear on long ones.

Three kinds of tests (no wall clock anywhere: ``bench/bench_readers.py`` shows the times):

* well-formed output on any Unicode text, for every reader (Hypothesis: right types, statuses among the allowed
  ones, no inf or NaN, tokens and entities non-empty);
* the inputs a security review found slow, at the length limit, read as they should (a Severity Level of 20,000
  digits is no level, not ``inf``; a long run of spaces reads like a short one);
* the same readings as before the rewrite: each expression whose runs of spaces became possessive (``\\s*+``)
  finds what its plain form (``\\s*``) finds, and each expression replaced by code gives what the expression gave,
  on short texts where the plain forms are still fast.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it.helpers import parseLinkDestination

from medeval.annotation.cases import judge_patterns as jp
from medeval.annotation.cases import judge_scores as js
from medeval.annotation.cases.formats import _position
from medeval.annotation.tasks.mentions import relabel
from medeval.core.chinese import MAX_DIGITS, parse_int, to_simplified
from medeval.core.errors import InputError
from medeval.core.limits import TEXT_MAX_CHARS
from medeval.core.safe_markdown import _NESTING, WORK_BUDGET, _link_destination, _MD, safe_markdown, work
from medeval.core.text import char_before
from medeval.engine import postprocess as pp
from medeval.engine import severity as sev
from medeval.engine.aspects import ASPECTS, BY_NAME
from medeval.engine.tokenize import scoring_tokenizer, tokenize
from medeval.stats.exam import METHODS, cmb_match_choice, extract_answer
from medeval.stats.exam import reading as er
from medeval.stats.exam import groups as eg
from medeval.stats.factcheck import patterns as fp
from medeval.stats.factcheck.verdict import LABELS, STATUSES, parse_verdict

N = TEXT_MAX_CHARS
NOTES = {None, "pattern", "lead_in", "no_number", "range", "none_answer", "empty"}
OPTIONS = {"A": "小叶型肺炎", "B": "肺脓肿", "C": "继发性肺结核", "D": "原发性肺结核", "E": "急性阑尾炎"}

# words the readers look for, mixed with any text: what reaches their rarer branches
WORDS = ["感冒", "感冒的症状为", "主要症状为", "症状", "包括", "The main symptoms include ", "symptoms of flu are ", "咳嗽",
         "(更正:", "(correction ", ")", "(", "和", "、", "，", " and ", "或", "1. ", "2. ", "①", "等", "level ", "grade ",
         "二级", "Ⅱ级", "3-4级", "三至四级", "7", "9999999999999999999", "A", "B", "ABD", "答案是", "答案：", "故选",
         "The answer is ", "不选", "吗", "B超", "A型", "维生素", "正确", "错误", "不正确", "对", "是的", "no", "yes", "但",
         "不完全", "并非所有", "不，", "等等", "actually ", "这个说法是", "嗯，", "“", "”", "医生1", "医生2", "Doctor 1",
         "Response B", "第二个回答", "：", ":", "4分", "给5分", "4", "/5", " points", "Score: ", "**", "both get ",
         "两位医生均为", "分别", "| 医生1 | 4 |\n|---|---|\n", "\n", " ", "   ", "\u3000", "\t", "[a](http://x.y)", "![i](j)",
         "<b>", "`c`", "# ", "> ", "- ", "高血壓", "醫生1", "٣", "µg", "10⁹/L", "ﬁ", "\u0301"]
texts = st.one_of(st.text(max_size=120),
                  st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=4)), max_size=30).map("".join))


def _finite(x) -> bool:
    return isinstance(x, float) and math.isfinite(x)


# ---------------------------------------------------------------- well-formed on any text


@settings(max_examples=150, deadline=None)
@given(texts, st.sampled_from(ASPECTS), st.booleans())
def test_process_is_well_formed(text, aspect, reference):
    got = pp.process(text, "感冒", aspect, is_reference=reference)
    assert isinstance(got, pp.Processed) and isinstance(got.text, str) and got.note in NOTES
    assert all(isinstance(e, str) and e for e in got.entities)
    assert got.number is None or _finite(got.number)
    if aspect.type == "numeric":
        assert (got.number is None) == (got.text == "")
    if aspect.type == "enumerated" and got.note not in ("none_answer", "empty"):
        assert got.text == " ".join(got.entities)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_entities_lead_ins_and_levels_are_well_formed(text):
    ents = pp.split_entities(text)
    assert all(isinstance(e, str) and e and e == e.strip() for e in ents) and len(set(ents)) == len(ents)
    for aspect in (BY_NAME["Primary Symptoms"], BY_NAME["Laboratory Examinations"]):
        rest, stripped = pp.strip_lead_in(text, aspect)
        assert isinstance(rest, str) and isinstance(stripped, bool) and (rest or not stripped)
        part, matched = pp.extract_answer(text, "感冒", aspect)
        assert isinstance(part, str) and isinstance(matched, bool) and (part or not matched)
    level, status = pp.severity_level(text)
    assert status in (None, "range", "no_number") and (level is None) == (status is not None)
    assert level is None or _finite(level)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_tokens_are_non_empty_words(text):
    for tokens in (tokenize(text), scoring_tokenizer(True)(text)):
        assert all(isinstance(t, str) and t and not any(c.isspace() for c in t) for t in tokens)
    assert isinstance(to_simplified(text), str)
    v = parse_int(text[:25])
    assert v is None or (isinstance(v, int) and 0 <= v < 10 ** MAX_DIGITS)


@settings(max_examples=150, deadline=None)
@given(texts, st.sampled_from(["ABCDE", None, "OPTIONS"]))
def test_exam_answers_are_well_formed(text, options):
    opts = OPTIONS if options == "OPTIONS" else options
    valid = "ABCDE" if options else "ABCDEFG"
    got = extract_answer(text, opts)
    assert got.method in METHODS and got.status in ("answered", "ambiguous", "none", "unanswered")
    assert got.letters == "".join(sorted(set(got.letters))) and set(got.letters) <= set(valid)
    assert bool(got.letters) == (got.status == "answered")
    assert set(got.candidates) <= set(valid)
    assert set(cmb_match_choice(text, True)) <= set("ABCDEFG") and len(cmb_match_choice(text, False)) <= 1


@settings(max_examples=150, deadline=None)
@given(texts, st.one_of(st.none(), texts))
def test_verdicts_are_well_formed(text, claim):
    got = parse_verdict(text, claim)
    assert got.label in (None, *LABELS) and got.status in STATUSES and got.lead in (None, *LABELS)
    assert (got.label is not None) == (got.status == "verdict") and isinstance(got.matched, str)


@settings(max_examples=150, deadline=None)
@given(texts, st.sampled_from([None, 2, 3]))
def test_judge_scores_are_well_formed(text, n):
    try:
        got = js.read_judge_scores(text, n)
    except InputError:
        return  # two scores for one response, or two scales: refused, as documented
    assert all(isinstance(p, int) and _finite(v) for p, v in got.scores.items())
    assert got.scale is None or _finite(got.scale)
    assert all(isinstance(u, str) for u in got.unassigned)
    assert relabel(text, {}) == text
    assert isinstance(relabel(text, {1: "Response 2", 2: "Response 1"}), str)


@settings(max_examples=100, deadline=None)
@given(texts)
def test_safe_markdown_stays_safe(text):
    if "\x00" in text:
        return  # refused by check_text (tested in test_guidelines)
    out = safe_markdown(text)
    tokens = _MD.parse(out)
    inline = [c for t in tokens for c in (t.children or [])]
    assert not [t for t in tokens + inline if t.type in ("html_block", "html_inline", "image")]
    hrefs = [str(t.attrs.get("href", "")) for t in inline if t.type == "link_open"]
    assert all(h.startswith(("http://", "https://")) for h in hrefs)


# ---------------------------------------------------------------- the reported inputs, at the length limit


def test_a_severity_level_of_thousands_of_digits_is_no_level():
    for text in ("7" * N, "7" * (N - 1) + "级", "危重等级为" + "9" * (N - 5), "1-" + "9" * (N - 3) + "级"):
        assert pp.severity_level(text) == (None, "no_number")
        got = pp.process(text, "感冒", "Severity Level")
        assert got.number is None and got.note == "no_number"
        assert pp.first_number(text) is None
    assert pp.severity_level("3" * MAX_DIGITS) == (float("3" * MAX_DIGITS), None)
    assert pp.severity_level("3" * (MAX_DIGITS + 1)) == (None, "no_number")
    assert pp.severity_level("2." + "0" * 400 + "级") == (2.0, None)  # a long decimal part is still a number
    assert pp.severity_level("二级" + "7" * N) == (2.0, None)  # the first level mention decides


def _spaced(k: int):
    return {"exam": extract_answer("A" + " " * k + "x", "ABCDE"),
            "verdict": parse_verdict("正确" + " " * k + "但"),
            "judge": js.read_judge_scores("医生1：5" + " " * k),
            "brackets": pp.process("(" * (k + 1), "感冒", "Primary Symptoms"),
            "declarative": pp.process("(" * (k + 1), "感冒", "Physical Examinations"),
            "lead-in": pp.strip_lead_in("主要症状为" + " " * k + "咳嗽", BY_NAME["Primary Symptoms"]),
            "pattern": pp.extract_answer("感冒的" + " " * k + "症状为咳嗽", "感冒", BY_NAME["Primary Symptoms"])}


def test_the_reported_inputs_read_at_the_limit_as_short_ones_do():
    short, long_ = _spaced(3), _spaced(N - 10)
    assert long_["exam"] == short["exam"] and long_["exam"].status == "ambiguous"  # "A x": the article
    assert long_["verdict"] == short["verdict"] and long_["verdict"].label == "support"
    assert long_["judge"].scores == short["judge"].scores == {1: 5.0}
    assert long_["brackets"].entities == short["brackets"].entities == ()
    assert long_["declarative"].text == "(" * (N - 9) and short["declarative"].text == "(((("
    assert long_["lead-in"] == short["lead-in"] == ("咳嗽", True)
    assert long_["pattern"] == short["pattern"] == ("咳嗽", True)


def test_long_runs_of_conjunctions_and_corrections_split_without_recursion():
    ents = pp.split_entities("和" * N)
    assert ents and all(e for e in ents) and sum(len(e) for e in ents) <= N
    assert pp.split_entities("咳嗽(更正:干咳)、" * (N // 10)) == ["干咳"]
    assert pp.split_entities("咳嗽(更正:干咳)" * (N // 9)) == ["干咳" * (N // 9)]  # one entity, as before
    assert pp.split_entities("a、" * (N // 2)) == ["a"]


def test_absurd_numbers_are_refused_not_crashed_on():
    long_digits = "9" * 5000  # int() refuses over 4,300 digits
    assert relabel("医生" + long_digits, {9: "Response 1"}) == "医生" + long_digits
    assert relabel("医生0001", {1: "Response 1"}) == "Response 1"
    assert parse_int(long_digits) is None and parse_int("1" * MAX_DIGITS) == int("1" * MAX_DIGITS)
    got = js.read_judge_scores("医生1：" + long_digits + "分。医生" + long_digits + "：4分。医生2：4/" + long_digits)
    assert got.scores == {} and got.scale is None
    assert js.read_judge_scores("医生٣：4分").scores == {3: 4.0}  # any script's digits name a response
    with pytest.raises(InputError, match="digits"):
        _position("9" * 400, file="f", row=1, what="question")


def test_dense_markdown_is_shown_as_text_and_ordinary_markdown_is_parsed():
    dense = ("![a](" * N)[:N]
    assert work(dense) > WORK_BUDGET
    out = safe_markdown(dense)
    assert "\\!\\[a\\]\\(" in out and not [t for t in _MD.parse(out) for c in (t.children or []) if c.type == "image"]
    assert safe_markdown("- a\n" * (N // 4)).count("\\-") == N // 4  # shown as its lines, not as a list
    guide = "# 指南\n\n请按**三级**评分：\n\n1. 完全错误\n2. 部分正确\n3. 基本正确\n\n见 [说明](https://example.org)。\n"
    assert work(guide * 100) < WORK_BUDGET
    assert safe_markdown(guide) == "# 指南\n\n请按**三级**评分：\n\n1. 完全错误\n2. 部分正确\n3. 基本正确\n\n见 [说明](<https://example.org>)。"


# ---------------------------------------------------------------- the same readings as the plain expressions


def _plain(pattern: re.Pattern) -> re.Pattern:
    """The expression as it was written before: greedy ``*``/``+``/``?`` instead of possessive ones, ``\\d+``."""
    text = re.sub(r"(?<!\\)([*+?}])\+", r"\1", pattern.pattern)
    return re.compile(text.replace(rf"\d{{1,{MAX_DIGITS}}}", r"\d+").replace(r"(?<!\d)\d+", r"\d+"), pattern.flags)


def _same(pattern: re.Pattern, text: str) -> None:
    plain = _plain(pattern)
    assert ([(m.span(), m.groups()) for m in pattern.finditer(text)]
            == [(m.span(), m.groups()) for m in plain.finditer(text)]), (pattern.pattern[:80], text)


SPACES = [" ", " ", "  ", "\n", "\t", "\u3000"]
short = st.lists(st.sampled_from(WORDS + SPACES * 6), max_size=14).map("".join)
_SYMPTOMS = BY_NAME["Primary Symptoms"]
_OLD_EN_OF = r"(?:of|for|in|with)\s+[^:：\n]{1,60}?\s+"


@settings(max_examples=300, deadline=None)
@given(short)
def test_possessive_expressions_match_as_their_plain_forms(text):
    low = text.lower()
    for rx in (jp.SCORE_RE, jp.SCORE_TO_RE, jp.CHAIN_RE, jp.SHARED_RE, jp.EVERY_RE, jp.LINE_RE, jp.GIVE_RE,
               jp.MENTION_RE, jp.NOT_SCORE, jp.HEAD_BEFORE, jp.HEAD_AFTER, jp.SCORE_BEFORE):
        _same(rx, text)
    for rx in (fp.POST_HEDGE_ANY_RE, fp.POST_HEDGE_SUPPORT_RE):
        _same(rx, low)
    for rx in (eg.NEG_AFTER, eg._EQUAL_AFTER, eg._SEP, er._POS_AFTER, er._QUESTION_AFTER, sev._RANGE_RE, sev._LEVEL_RE):
        _same(rx, low if rx in (sev._RANGE_RE, sev._LEVEL_RE) else text)
    alt = pp._names_alternation(_SYMPTOMS)
    _same(pp._zh_after_disease(alt), text)
    _same(pp._en_pattern("flu", alt), text)
    lead = pp._lead_in_re(_SYMPTOMS)
    old_lead = re.compile(_plain(lead).pattern.replace(_plain(re.compile(pp._EN_OF)).pattern, _OLD_EN_OF), lead.flags)
    m, o = lead.match(text), old_lead.match(text)
    assert (m and m.end()) == (o and o.end()), text


_OLD_CORRECTION = re.compile(r"[^\s、,;。]+?\s*\(\s*(?:更正|纠正|应为|正确为|correction)\s*[:：]?\s*([^()]+?)\s*\)", re.I)
_OLD_LIST_GOES_ON = re.compile(r"\s*[)\]）】]?\s*(?:$|[.。;；!！?？\n]|(?:[,，、/]|\s(?:and|or)\s|和|与|及|或)\s*"
                               r"[(\[（【]?\s*[A-Za-z](?![A-Za-z]))", re.I)


def _old_split_conj(part: str) -> list[str]:
    for m in pp._CONJ_RE.finditer(part):
        left, right = part[: m.start()].strip(), part[m.end():].strip()
        if len(left) >= 2 and len(right) >= 2:
            return [left] + _old_split_conj(right)
    return [part] if part else []


_pieces = st.lists(st.sampled_from(["咳嗽", "a", "干咳", "(", ")", "（", "更正", "Correction", ":", "：", " ", "  ", "、", ",",
                                    "和", "及", "以及", "and", "or", "b", "\n", "x y", "A", "B", "，", "or ", " and"]),
                   max_size=16).map("".join)


@settings(max_examples=300, deadline=None)
@given(_pieces)
def test_code_that_replaced_an_expression_reads_as_it(text):
    assert pp._corrected(text) == _OLD_CORRECTION.sub(r"\1", text)
    assert pp._split_conj(text) == _old_split_conj(text)
    for k in range(len(text) + 1):
        assert eg._list_goes_on(text, k) == bool(_OLD_LIST_GOES_ON.match(text, k)), (text, k)
        assert char_before(text, k) == text[:k].rstrip()[-1:]
        assert eg._squash_head(text, k, 6) == eg.squash(text[k:])[:6]


_rationale = st.lists(st.sampled_from(["医生1", "第二个回答", "回答1", "1st response", "2.", "3.", "3、", "2)", "12.", "2.5",
                                       "1", "2", " ", "\n", "*", "- ", "#", "(", "x", "Doctor 2", "的回答：", "٣."]),
                      max_size=16).map("".join)


@settings(max_examples=300, deadline=None)
@given(_rationale)
def test_the_rationale_indexes_answer_as_the_searches_did(text):
    sent = js.Sentences(text)
    old_head = _plain(jp.HEAD_BEFORE)
    for i in range(len(text) + 1):
        m = jp.MENTION_RE.search(text, i)
        assert sent.next_mention(i) == (m.start() if m else len(text))
        assert sent.heads_line(i) == bool(old_head.fullmatch(text, text.rfind("\n", 0, i) + 1, i)), (text, i)
        for end in range(i, len(text) + 1):
            for number, stop in (("2", "."), ("3", "."), ("3", "、"), ("2", ")"), ("12", ".")):
                old = re.compile(rf"(?<![\d.]){number}{re.escape(stop)}(?!\d)").search(text, i, end)
                assert sent.has_item(number, stop, i, end) == bool(old), (text, number, stop, i, end)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("()\\ a\x01\x7f<>\n\t\u3000é") + ["\\ ", "\\("]), max_size=16).map("".join))
def test_link_targets_are_read_as_markdown_it_reads_them(text):
    if text.count("(") > _NESTING:
        return  # nested deeper than safe_markdown reads (markdown-it: 32)
    for pos in range(len(text) + 1):
        for end in {len(text), max(pos, len(text) - 2)}:
            a, b = parseLinkDestination(text, pos, end), _link_destination(text, pos, end)
            assert (a.ok, a.pos, a.str) == (b.ok, b.pos, b.str), (text, pos, end)
