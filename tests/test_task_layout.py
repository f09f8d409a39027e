"""Where the Rate & compare screen puts an item's blocks (medeval.annotation.tasks.layout)."""

import pytest

from medeval.annotation.tasks import layout
from medeval.annotation.tasks.mentions import relabel
from medeval.annotation.tasks.registry import Block


def B(label, target="", fold=False, part=1):
    return Block(label, f"text of {label}", part=part, target=target, fold=fold)


def labels(rows):
    return [[b.label for b in row] for row in rows] if rows is not None else None


def test_pair_sides_side_by_side_after_the_context_in_one_row():
    blocks = [B("case"), B("question"), B("A", "A"), B("B", "B")]
    assert labels(layout.rows(blocks)) == [["case", "question"], ["A", "B"]]


def test_at_most_three_rated_blocks_a_row():
    blocks = [B("q")] + [B(f"R{i}", f"Response {i}") for i in range(1, 6)]
    assert labels(layout.rows(blocks)) == [["q"], ["R1", "R2", "R3"], ["R4", "R5"]]


def test_a_folded_block_is_a_row_of_its_own():
    blocks = [B("earlier", fold=True), B("case"), B("more"), B("A", "A")]
    assert labels(layout.rows(blocks)) == [["earlier"], ["case", "more"], ["A"]]


def test_a_lone_context_block_joins_the_lone_rated_block_after_it():
    blocks = [B("numbering"), B("assessment", "Judge")]
    assert labels(layout.rows(blocks)) == [["numbering", "assessment"]]
    # not when the context is folded, nor when the rated block has company
    assert labels(layout.rows([B("n", fold=True), B("a", "J")])) == [["n"], ["a"]]
    assert labels(layout.rows([B("n"), B("a", "J"), B("b", "K")])) == [["n"], ["a", "b"]]


def test_no_blocks():
    assert layout.rows([]) == [] and layout.groups([]) is None


def test_groups_of_one_shape_each_ending_with_the_rated_block():
    accr = [B("claim 1"), B("verdict 1"), B("answer 1", "factual"),
            B("claim 2"), B("verdict 2"), B("answer 2", "counterfactual")]
    assert labels(layout.groups(accr)) == [["claim 1", "verdict 1", "answer 1"],
                                           ["claim 2", "verdict 2", "answer 2"]]


def test_not_groups_when_shapes_differ_or_the_last_block_is_not_rated():
    assert layout.groups([B("c"), B("a", "A"), B("d"), B("e"), B("b", "B")]) is None  # 2 vs 3 blocks
    assert layout.groups([B("c"), B("a", "A"), B("d"), B("b", "B"), B("tail")]) is None  # ends unrated
    assert layout.groups([B("a", "A"), B("b", "B")]) is None  # groups of one block: rows instead
    assert layout.groups([B("c", fold=True), B("a", "A"), B("d"), B("b", "B")]) is None  # a folded block
    four = [x for i in range(4) for x in (B(f"c{i}"), B(f"a{i}", f"T{i}"))]
    assert layout.groups(four) is None  # more than 3 columns


# ---------------------------------------------------------------- what the question asked now needs (issue 32 §2)

def _b(label, target="", part=1, fold=False):
    return Block(label, f"text of {label}", part=part, target=target, fold=fold)


RUBRIC = [_b("Case"), _b("Earlier question 1", fold=True), _b("Question"), _b("Reference answer"),
          _b("Response 1", "Response 1"), _b("Response 2", "Response 2"), _b("Response 3", "Response 3"),
          _b("How the judge numbers the responses", part=2), _b("The judge's assessment", "The judge's assessment", 2)]


def _labels(columns):
    return [[b.label for b in c] for c in columns]


def test_a_rubric_question_shows_the_context_and_the_one_response_it_is_about():
    part1 = [b for b in RUBRIC if b.part == 1]
    folded, columns = layout.reading(part1, "Response 2", 1)
    assert [b.label for b in folded] == ["Earlier question 1"]
    assert _labels(columns) == [["Case", "Question", "Reference answer"], ["Response 2"]]


def test_the_judge_part_shows_the_responses_it_discusses_beside_the_assessment():
    folded, columns = layout.reading(RUBRIC, "The judge's assessment", 2)
    assert _labels(columns) == [["Case", "Question", "Reference answer", "Response 1", "Response 2", "Response 3",
                                 "How the judge numbers the responses"], ["The judge's assessment"]]


def test_a_pair_question_shows_both_sides_and_no_question_shows_every_rated_block():
    pair = [_b("Question"), _b("Reference answer"), _b("A", "A"), _b("B", "B")]
    assert _labels(layout.reading(pair, "A versus B")[1]) == [["Question", "Reference answer"], ["A"], ["B"]]
    assert _labels(layout.reading(pair, None)[1]) == [["Question", "Reference answer"], ["A"], ["B"]]


def test_a_group_item_shows_the_group_the_question_is_about():
    accr = [_b("Factual claim"), _b("Verdict on it"), _b("Answer", "Factual claim"),
            _b("Counterfactual claim"), _b("Verdict on that"), _b("Answer 2", "Counterfactual claim")]
    assert _labels(layout.reading(accr, "Counterfactual claim")[1]) == [["Counterfactual claim", "Verdict on that"],
                                                                        ["Answer 2"]]
    assert _labels(layout.reading(accr, "Factual claim")[1]) == [["Factual claim", "Verdict on it"], ["Answer"]]


def test_every_block_a_question_needs_is_on_screen_or_folded():
    for target in ("Response 1", "Response 2", "Response 3", None):
        folded, columns = layout.reading([b for b in RUBRIC if b.part == 1], target, 1)
        drawn = folded + [b for c in columns for b in c]
        assert all(b in drawn for b in RUBRIC if b.part == 1 and (not b.target or b.target == target or not target))


# ---------------------------------------------------------------- one numbering per screen (issue 32 §3)


# (the judge's text, its numbers -> the screen's labels, what the doctor reads)
MENTIONS = [
    ("医生1的方案较完整；医生2：4分。", {1: "Response 2", 2: "Response 1"}, "Response 2的方案较完整；Response 1：4分。"),
    ("医生2优于医生1", {1: "Doctor 2", 2: "Doctor 1"}, "Doctor 1优于Doctor 2"),  # a swap, in one pass
    ("Doctor 1: 5 points. Doctor 3: 4 points.", {1: "Response 3", 3: "Response 1"}, "Response 3: 5 points. Response 1: 4 points."),
    ("doctor #2 is vague", {2: "Response 1"}, "Response 1 is vague"),
    ("回答 3 漏了剂量", {3: "Response 2"}, "Response 2 漏了剂量"),
    ("医生１和医生２", {1: "Doctor 2", 2: "Doctor 1"}, "Doctor 2和Doctor 1"),  # full-width digits
    ("医生12提到的剂量", {1: "Doctor 2"}, "医生12提到的剂量"),  # not response 1
    ("医生4不存在", {1: "Doctor 2"}, "医生4不存在"),  # a number the judge did not use: as written
    ("阿司匹林100 mg，每日1次", {1: "Doctor 2"}, "阿司匹林100 mg，每日1次"),  # a dose is no mention
    ("", {1: "Doctor 2"}, ""),
]


@pytest.mark.parametrize("text, labels, expected", MENTIONS)
def test_a_judges_numbers_read_as_the_screens_labels(text, labels, expected):
    assert relabel(text, labels) == expected


def test_relabelling_with_the_judges_own_order_changes_only_the_words():
    text = "医生1：5分；医生2：3分；医生3：4分。"
    same = {1: "医生1", 2: "医生2", 3: "医生3"}
    assert relabel(text, same) == text
