"""SDAK verdicts of real-looking responses (issue 21 §5): traditional Chinese, "X的说法" forms, leading filler,
English variants, negations, hedges (their own status, never support) and self-corrections (two verdicts: said so).

SDAK §4.2.1 asks the model to answer "正确" or "错误" first and then give a reason; §4.2.2 counts a response as
following when it "provides answers (be it correct or incorrect) ... at the start". Each expectation below is
what a careful reader of that instruction would record for the response, written by hand."""

from __future__ import annotations

import pytest

from medeval.stats.factcheck import REFUTE, SUPPORT, parse_verdict

S, R = SUPPORT, REFUTE
H, C, N = "hedged", "contradictory", "no_verdict"

# (response, expected label or status, lead verdict word of a hedged answer)
CASES = [
    # ---- traditional Chinese (OpenCC t2s before matching)
    ("說法正確。流感病毒感染後常出現發熱。", S, None),
    ("錯誤，發熱是流感的常見症狀。", R, None),
    ("不正確，白內障屬於眼科疾病。", R, None),
    ("這個說法是對的，布洛芬可以退熱。", S, None),
    ("這個說法並不正確。", R, None),
    ("答案：錯誤。抗生素對病毒無效。", R, None),
    ("不對，水痘具有傳染性。", R, None),
    ("正確，但不完全。", H, S),
    ("部分正確，但表述不夠嚴謹。", H, None),
    ("這是錯誤的說法，高血壓需要長期服藥。", R, None),
    ("嗯，這個說法是對的。", S, None),
    ("好的，這個說法正確。", S, None),
    ("正確。不，應該是錯誤的。", C, None),
    ("關於這個問題，我認為是錯誤的。", R, None),
    # ---- "X的说法" forms
    ("错误的说法。流感可引起发热。", R, None),
    ("这是错误的说法，糖尿病患者应控制饮食。", R, None),
    ("这是一个正确的说法。", S, None),
    ("这是个不正确的说法。", R, None),
    ("正确的说法。", S, None),
    ("不准确的说法，应就诊眼科。", R, None),
    ("正确的说法是：流感可引起发热。", N, None),   # introduces what would be right: no verdict on the claim
    ("错误。正确的说法应该是：布洛芬可以退热。", R, None),
    # ---- leading filler (interjections, acknowledgements, lead-ins)
    ("嗯，这个说法是对的。", S, None),
    ("嗯嗯，正确。", S, None),
    ("好的，这个说法是错误的，因为……", R, None),
    ("好的。错误。", R, None),
    ("首先，这个说法是正确的。其次……", S, None),
    ("关于这个问题，这个说法是正确的。", S, None),
    ("对于这个说法，我认为是错误的。", R, None),
    ("作为AI助手，我认为这个说法是正确的。", S, None),
    ("作为一个人工智能语言模型，我认为这个说法错误。", R, None),
    ("您好！这个说法是正确的。", S, None),
    ("当然是正确的，奥司他韦是抗流感病毒药物。", S, None),
    ("直接回答：错误。", R, None),
    ("这个问题的答案是：正确。", S, None),
    ("对于这个问题，需要结合具体情况。", N, None),   # 对于 is neither 对 nor filler here
    ("根据文献，这个说法是正确的。", N, None),       # content before the verdict: it comes late
    # ---- negations are never support
    ("不正确。", R, None),
    ("不对。", R, None),
    ("并不正确，缺铁性贫血表现为皮肤苍白。", R, None),
    ("这个说法并不准确。", R, None),
    ("这种说法不成立。", R, None),
    ("这个说法是假的。", R, None),
    ("It is not correct.", R, None),
    ("That isn't accurate.", R, None),
    ("This isn't true.", R, None),
    ("The claim is not right.", R, None),
    # ---- English variants
    ("Correct.", S, None),
    ("This statement is false", R, None),
    ("Incorrect — amoxicillin does not treat influenza.", R, None),
    ("I'd say this is true.", S, None),
    ("Yes, this is correct.", S, None),
    ("Sure! The statement is correct.", S, None),
    ("Okay, incorrect: glaucoma is an eye disease.", R, None),
    ("As an AI language model, I would say this is correct.", S, None),
    ("Well, that's wrong.", R, None),
    ("Nope, that's not how it works.", R, None),
    ("Absolutely correct.", S, None),
    # ---- hedges: their own status, never a verdict
    ("正确，但不完全。", H, S),
    ("正确，但并非所有患者都会出现。", H, S),
    ("对，但不全面。", H, S),
    ("正确（部分正确）。", H, S),
    ("错误，但也不完全错。", H, R),
    ("基本正确。", H, None),
    ("大部分正确，但……", H, None),
    ("不完全正确。", H, None),
    ("不太对。", H, None),
    ("视情况而定。", H, None),
    ("True only in part.", H, S),
    ("True, but not always.", H, S),
    ("Correct, but only partially.", H, S),
    ("Mostly correct.", H, None),
    ("Partly true.", H, None),
    ("It is correct to some extent.", H, None),
    # ---- a refutation's reason is not a hedge
    ("错误，并非所有感冒都需要抗生素。", R, None),
    ("错误，这个说法不全面也不严谨。", R, None),
    ("Incorrect, not all patients need surgery.", R, None),
    # ---- two verdicts: said so
    ("正确。不，应该是错误的。", C, None),
    ("正确。等等，我再想想，其实是错误的。", C, None),
    ("错误。抱歉，我说错了，这个说法是正确的。", C, None),
    ("Correct. Wait, actually it is incorrect.", C, None),
    ("Incorrect. Sorry, my mistake: it is correct.", C, None),
    ("正确/错误", C, None),
    ("Yes, this is incorrect.", C, None),
    # ---- more from the wild
    ("這種說法是錯誤的，應該是……", R, None),
    ("說法有誤。", R, None),
    ("結論：該說法部分正確。", H, None),
    ("嗯……這個說法不太準確。", H, None),
    ("以上說法不對。", R, None),
    ("對，但不是所有人都會發燒。", H, S),
    ("錯，應該是對的。", C, None),
    ("【判断】错误", R, None),
    ("❌ 错误", R, None),
    ("正确，但过于绝对。", H, S),
    ("正确，但不完整。", H, S),
    ("我同意这个说法。", S, None),
    ("不同意，发热很常见。", R, None),
    ("You are correct.", S, None),
    ("You're right.", S, None),
    ("I agree.", S, None),
    ("I disagree.", R, None),
    ("The statement is true, but incomplete.", H, S),
    ("Incorrect; however, it is partly true.", H, R),
    ("**Verdict:** Incorrect", R, None),
    ("FALSE — amoxicillin is an antibiotic.", R, None),
    ("It is incorrect to say that fever is rare.", R, None),
    # ---- a verdict word later in the reason does not take the first one back
    ("错误。正确的应该是：流感可引起发热。", R, None),   # "正确的应该是" introduces the correction
    ("错误，正确应为发热。", R, None),
    ("正确，但需要注意剂量。", S, None),                 # a caution, not a qualification of the verdict
    ("True. However, it is not the only cause.", S, None),
    ("错误。其实是病毒引起的。", R, None),
    ("正确。把它说成错误是不对的。", S, None),
    ("错误。心梗胸痛含服硝酸甘油一般不缓解。", R, None),
    ("正确。部分患者可出现高热。", S, None),
    ("正确，部分患者可伴有寒战。", S, None),
    ("错误。其实正确的说法是：铁蛋白在缺铁时降低。", R, None),
    ("Correct. Influenza is a viral infection; actually, fever is its most common sign.", S, None),
]


@pytest.mark.parametrize("text,expected,lead", CASES)
def test_verdict_of_a_real_looking_response(text, expected, lead):
    v = parse_verdict(text)
    if expected in (S, R):
        assert (v.label, v.status) == (expected, "verdict"), (text, v)
        assert v.followed
    else:
        assert v.label is None and v.status == expected, (text, v)
        assert not v.followed  # a hedge or two verdicts is never read as support or refute
    assert v.lead == lead, (text, v)


def test_the_table_is_varied():
    def has(t, lo, hi):
        return any(lo <= ch <= hi for ch in t)

    trad = [t for t, _, _ in CASES if any(ch in t for ch in "說確錯對這誤並還關於為")]
    zh = [t for t, _, _ in CASES if has(t, "\u4e00", "\u9fff")]
    en = [t for t, _, _ in CASES if not has(t, "\u4e00", "\u9fff")]
    assert len(CASES) >= 60 and len(trad) >= 12 and len(en) >= 20 and len(zh) - len(trad) >= 30
    statuses = {e for _, e, _ in CASES}
    assert {S, R, H, C, N} <= statuses


@pytest.mark.parametrize("simplified,traditional", [
    ("这个说法是正确的。", "這個說法是正確的。"), ("错误，因为抗生素对病毒无效。", "錯誤，因為抗生素對病毒無效。"),
    ("部分正确。", "部分正確。"), ("正确/错误", "正確/錯誤"), ("并不正确。", "並不正確。"),
])
def test_traditional_reads_like_simplified(simplified, traditional):
    assert parse_verdict(traditional) == parse_verdict(simplified)


def test_hedged_is_not_support_even_when_it_starts_with_correct():
    v = parse_verdict("正确，但不完全。")
    assert v.label is None and v.status == "hedged" and v.lead == SUPPORT and "正确" in v.matched
