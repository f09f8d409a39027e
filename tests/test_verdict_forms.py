"""SDAK verdicts written with another noun than 说法, and answers that echo the prompt's answer template.

SDAK §4.2.1 asks: "下列说法是否正确,如果正确,请先回复"正确",然后给出原因。如果错误,请先回复"错误",然后给出原因。" (App. C's
second prompt: "请先输出"正确"或"错误",然后另起一行给出相应的原因。"). Models call the claim 观点, 看法, 表述, 描述, 陈述,
结论, 这句话 ... as often as 说法, and some write the template's option list before the answer they fill in
("正确/错误：正确"). Every expectation below is what a reader of the response would record, decided by hand from the
instruction: the verdict the response starts with; an option list that the answer then fills in is the template, not a
second verdict; a hedge is hedged, two opposite verdicts (a self-correction) contradictory, a late verdict none.
The metamorphic properties at the end check that wrapping, a closing pleasantry, another noun form or traditional
characters never change what is read.
"""

from __future__ import annotations

import opencc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medeval.stats.factcheck import REFUTE, SUPPORT, parse_verdict

S, R = SUPPORT, REFUTE
H, C, N = "hedged", "contradictory", "no_verdict"

# (response, expected label or status)
CASES = [
    # ---- noun forms other than 说法
    ("该观点正确。长期吸烟是慢阻肺的主要危险因素。", S),
    ("这个表述是错误的，阿莫西林对流感病毒无效。", R),
    ("这种看法不对，白内障以手术治疗为主。", R),
    ("这个描述是准确的，缺铁性贫血常表现为乏力。", S),
    ("该陈述错误：痛风急性发作期不宜立即开始降尿酸治疗。", R),
    ("这一论述正确。", S),
    ("该结论不成立，2型糖尿病并非只由饮食引起。", R),
    ("这个判断是对的。", S),
    ("这句话是错的，水痘具有传染性。", R),
    ("该命题为真。", S),
    ("该命题为假，乙肝不会通过共餐传播。", R),
    ("您的观点是正确的。", S),
    ("题干中的表述有误。", R),
    ("上述看法是错误的。", R),
    ("这个提法不准确，高血压需要长期管理。", R),
    ("这是错误的观点，普通感冒不需要抗生素。", R),
    ("这是一个正确的表述。", S),
    ("你的看法是对的，布洛芬可以退热。", S),
    ("此看法正确。", S),
    ("这个观点不正确。", R),
    ("该表述并不准确。", R),
    ("此看法不成立。", R),
    ("正确的看法应该是：胃溃疡疼痛多在餐后出现。", N),  # introduces what would be right: no verdict on the claim
    # ---- traditional characters
    ("該觀點正確。", S),
    ("這種看法是錯誤的。", R),
    ("這個表述不對，流感由病毒引起。", R),
    ("此陳述正確。", S),
    ("該結論有誤。", R),
    ("這句話是對的。", S),
    ("這個判斷是錯誤的。", R),
    ("判斷（正確/錯誤）：錯誤", R),
    ("該觀點部分正確。", H),
    # ---- the prompt's answer template echoed, the verdict filled in
    ("正确/错误：正确", S),
    ("判断（正确/错误）：错误", R),
    ("回答：正确（而非错误）", S),
    ("请回答“正确”或“错误”：错误。理由：高血压需要长期服药。", R),
    ("**正确 / 错误**：正确", S),
    ("【正确/错误】错误", R),
    ("答案（正确或错误）：正确", S),
    ("正确或错误？正确。", S),
    ("下列说法是否正确？错误。", R),
    ("如果正确，请先回复“正确”，然后给出原因。正确。流感可引起发热。", S),
    ("请先输出“正确”或“错误”，然后另起一行给出相应的原因。\n错误\n乙肝不经消化道传播。", R),
    ('If the following claim is correct, please reply "correct" first, and then give the reason. If not, please reply '
     '"incorrect" first, then give the reason.\nIncorrect. Influenza is caused by a virus.', R),
    ("Correct/Incorrect: Incorrect", R),
    ("True/False: True", S),
    ("Answer (correct or incorrect): correct", S),
    ("[x] 正确 [ ] 错误", S),
    ("[ ] 正确 [x] 错误", R),
    ("☐ 正确 ☑ 错误", R),
    ("**Answer:** 正确（Correct）", S),
    ("正确/错误：部分正确", H),          # the template filled in with a hedge
    ("正确/错误", C),                    # the options alone: nothing filled in
    ("正确或错误取决于剂量。", C),        # not a template: no colon after the options
    # ---- leading filler and markdown
    ("好的，该观点是正确的。", S),
    ("嗯，这种看法并不正确。", R),
    ("> **判断：** 这个表述是错误的", R),
    ("### 结论\n该陈述正确\n### 原因\n吸烟是肺癌的危险因素。", S),
    ("作为AI助手，我认为这个观点是错误的。", R),
    # ---- English
    ("This statement is false.", R),
    ("This view is incorrect; antibiotics do not treat viral infections.", R),
    ("The description above is accurate.", S),
    ("That conclusion is wrong.", R),
    ("Your understanding is correct.", S),
    ("This view is not correct.", R),
    ("This view is partially correct.", H),
    # ---- hedges
    ("这种看法不完全正确。", H),
    ("这个表述基本正确，但不够严谨。", H),
    ("正确，但这个观点不完全准确。", H),
    ("该观点正确，但过于绝对。", H),
    # ---- self-corrections: two verdicts, said so
    ("该观点正确。等等，我再想想，应该是错误的。", C),
    ("这个表述是错误的。抱歉，我说错了，应为正确。", C),
    ("True/False: True. Wait, actually it's false.", C),
    ("该命题为真——不，是假的。", C),
    # ---- closing pleasantries after the verdict
    ("错误。这一观点混淆了病毒和细菌感染。祝您身体健康！", R),
    ("该观点正确。如有不适请及时就医，祝早日康复。", S),
    # ---- no verdict at the start
    ("关于这个观点，需要结合患者的具体情况判断。", N),
    ("根据现有研究，这种看法是正确的。", N),   # the verdict comes late
    ("真的很重要的一点是按时服药。", N),       # 真的 is no verdict
    ("Correct or incorrect?", N),              # the options asked back: no answer
]


@pytest.mark.parametrize("text,expected", CASES)
def test_noun_forms_and_template_echoes(text, expected):
    v = parse_verdict(text)
    if expected in (S, R):
        assert (v.label, v.status) == (expected, "verdict"), (text, v)
    else:
        assert (v.label, v.status) == (None, expected), (text, v)


def test_the_table_is_varied():
    trad = [t for t, _ in CASES if any(ch in t for ch in "說確錯對這誤並還關於為觀點陳論結斷話該")]
    en = [t for t, _ in CASES if not any("\u4e00" <= ch <= "\u9fff" for ch in t)]
    assert len(CASES) >= 50 and len(trad) >= 8 and len(en) >= 8
    assert {e for _, e in CASES} == {S, R, H, C, N}


# ------------------------------------------------------------------ metamorphic properties

def _reading(text: str):
    v = parse_verdict(text)
    return v.label, v.status, v.lead


_BASES = [t for t, _ in CASES] + [
    "这个说法是正确的。", "这个说法是错误的，因为……", "这种说法不准确。", "该说法有误。", "说法正确。",
    "这是错误的说法，高血压需要长期服药。", "正确，但这个说法不完全准确。", "这个说法部分正确。", "正确的说法是：……",
    "这个说法正确。等等，其实是错误的。", "关于这个说法，需要具体分析。", "你的说法是对的。", "上述说法不对。",
]
_WRAPPERS = ["**{}**", "> {}", "### 回答\n{}", "- {}", "1. {}", "【回答】{}", "```\n{}\n```", "__{}__", "\n\n{}"]
_PLEASANTRIES = ["祝您早日康复！", "希望对您有帮助。", "如有疑问，请咨询专业医生。", "Hope this helps!",
                 "以上仅供参考，祝您身体健康。", "如有其他问题，欢迎随时提问😊"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.sampled_from(_BASES), st.sampled_from(_WRAPPERS), st.sampled_from(_PLEASANTRIES), st.booleans())
def test_a_markdown_wrapper_or_a_closing_pleasantry_never_changes_the_verdict(text, wrapper, pleasantry, both):
    assert _reading(wrapper.format(text)) == _reading(text), wrapper
    assert _reading(text + "\n\n" + pleasantry) == _reading(text), pleasantry
    if both:
        assert _reading(wrapper.format(text) + "\n\n" + pleasantry) == _reading(text)


_SHUOFA = [t for t in _BASES if "说法" in t]
_NOUNS = ["观点", "看法", "表述", "描述", "陈述", "论述", "结论", "判断", "命题", "提法", "叙述"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.sampled_from(_SHUOFA), st.sampled_from(_NOUNS))
def test_another_noun_form_never_changes_the_verdict(text, noun):
    assert _reading(text.replace("说法", noun)) == _reading(text)


@pytest.mark.parametrize("text", [t for t in _SHUOFA if "这个说法" in t])
def test_this_sentence_reads_like_this_statement(text):
    assert _reading(text.replace("这个说法", "这句话")) == _reading(text)


_S2T = opencc.OpenCC("s2t")


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.sampled_from(_BASES))
def test_traditional_characters_never_change_the_verdict(text):
    assert _reading(_S2T.convert(text)) == _reading(text)


@pytest.mark.parametrize("text", ["这个观点不正确", "该表述并不正确", "这种看法是不对的", "此陈述不是正确的",
                                  "判断（正确/错误）：不正确", "正确/错误：不正确", "This view is not correct."])
def test_negated_noun_forms_and_templates_are_never_support(text):
    assert parse_verdict(text).label == REFUTE
