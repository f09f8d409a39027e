"""Fact-check verification (SDAK, seed 003): verdict parsing, item scoring, error types, input validation, CLI.

Expected values are written by hand from the definitions in SDAK §4.2.2 and §5.1
(IFR and FactAcc per item; error types from the pair of verdicts)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from medeval.core.errors import InputError
from medeval.stats.factcheck import (REFUTE, SUPPORT, Claim, Verdict, classify_error, parse_verdict, read_factcheck, render, score_file, score_items)
from tests.conftest import ROOT, invoke, run_cli, write

S, R, N = SUPPORT, REFUTE, None

# (response, expected label) -- real-looking answers to the SDAK prompt, Chinese and English
VERDICTS = [
    # Chinese, plain
    ("正确。流感病毒感染后常出现发热。", S),
    ("错误。发热是流感的常见症状。", R),
    ("不正确，乏力是缺铁性贫血的常见表现。", R),
    ("不对。", R),
    ("对，布洛芬可以退热。", S),
    ("对的，白内障属于眼科疾病。", S),
    ("是的，这是正确的。", S),
    ("否。水痘具有传染性。", R),
    ("并不正确。", R),
    ("错！", R),
    ("没错，流感可以引起发热。", S),
    ("有误，阑尾炎应就诊外科。", R),
    ("完全正确。", S),
    ("不准确。", R),
    # Chinese, leading filler
    ("答案：不正确。尾胰癌早期可无症状……", R),
    ("答案：正确", S),
    ("回答：正确。", S),
    ("答：错误", R),
    ("判断：错误", R),
    ("结论：正确", S),
    ("我的回答是：正确", S),
    ("这个说法是正确的。", S),
    ("这个说法是错误的。", R),
    ("这个说法不正确。", R),
    ("该说法错误。", R),
    ("这种说法不准确", R),
    ("这句话是对的。", S),
    ("上述说法是不正确的，", R),
    ("我认为这个说法是错误的", R),
    ("“尾胰癌会导致腹痛”这一说法是正确的。", S),
    ("正确答案：错误。", R),
    ("是否正确：错误", R),
    # Chinese, markdown and punctuation
    ("**正确**\n原因：……", S),
    ("【错误】原因：抗生素对病毒无效。", R),
    ("## 判断\n错误\n## 原因\n……", R),
    ("- **错误**：……", R),
    ("> 正确", S),
    ("1. 错误", R),
    ("✅ 正确", S),
    ("“不正确”。", R),
    ("错误。正确的说法是：流感可引起发热。", R),  # "正确的说法" is not a second verdict
    # Chinese, no verdict at the start
    ("对于这个问题，需要结合具体情况。", N),     # 对于 is not 对
    ("否则会延误治疗。", N),                      # 否则 is not 否
    ("根据文献，这个说法是正确的。", N),          # the verdict comes late
    ("您好！这个说法是正确的。", S),           # a greeting is filler (issue 21: leading fillers are read)
    ("建议尽快就医，由医生评估。", N),
    ("错误率较高的检查不宜作为诊断依据。", N),
    ("正确的做法是先就医。", N),
    ("部分正确，但……", N),
    ("不完全正确。", N),
    ("基本正确，但表述不严谨。", N),
    ("不一定，要看具体情况。", N),
    ("无法判断。", N),
    ("因人而异。", N),
    ("正确/错误", N),
    ("正确或错误取决于剂量。", N),
    ("正确，这个说法是错误的。", N),
    ("是的，这是错误的。", N),
    ("", N),
    ("   ", N),
    # English
    ("Correct. Tail pancreatic cancer can cause abdominal pain.", S),
    ("Incorrect.", R),
    ("**Incorrect.** Cataract is an eye disease.", R),
    ("**The statement is correct.** Because ...", S),
    ("The statement is not correct.", R),
    ("The statement isn't correct.", R),
    ("This claim is false.", R),
    ('The claim "varicella is not contagious" is false.', R),
    ("That's incorrect.", R),
    ("It is not correct.", R),
    ("It is true that influenza causes fever.", S),
    ("True", S),
    ("FALSE.", R),
    ("Not correct.", R),
    ("not true", R),
    ("Wrong.", R),
    ("Right, because ibuprofen is an antipyretic.", S),
    ("Yes, ibuprofen reduces fever.", S),
    ("No.", R),
    ("No, it is not.", R),
    ("No, it's not correct.", R),
    ("Answer: Correct", S),
    ("The answer is: incorrect.", R),
    ("The correct answer is: incorrect.", R),
    ("Output: incorrect", R),
    ("Verdict: false", R),
    ("Absolutely correct.", S),
    ("I think this is correct.", S),
    ("I'd say that's wrong.", R),
    ("No doubt this is correct.", S),
    ("Correct (正确). Influenza ...", S),
    # English, no verdict at the start
    ("Correctly speaking, it depends.", N),   # "correctly" is not "correct"
    ("Partially correct.", N),
    ("The statement is partially correct.", N),
    ("Not entirely.", N),
    ("It depends on the dose.", N),
    ("Yes and no.", N),
    ("I cannot determine whether this is correct.", N),
    ("Yes, this is incorrect.", N),
    ("No, this is correct.", N),
    ("Correct or incorrect: incorrect", R),     # the prompt's option list, then the answer filled in
    ("Influenza is a viral infection, so the statement is correct.", N),
]


@pytest.mark.parametrize("text,expected", VERDICTS)
def test_verdicts_of_real_looking_answers(text, expected):
    v = parse_verdict(text)
    assert v.label == expected, (text, v)
    assert v.followed == (expected is not None)


def test_there_are_many_verdict_cases_in_both_languages():
    zh = [t for t, _ in VERDICTS if any("\u4e00" <= c <= "\u9fff" for c in t)]
    en = [t for t, _ in VERDICTS if t.strip() and t not in zh]
    assert len(zh) >= 30 and len(en) >= 30


@pytest.mark.parametrize("text,status", [
    ("部分正确", "hedged"), ("it depends", "hedged"), ("正确/错误", "contradictory"),
    ("Yes, this is incorrect.", "contradictory"), ("根据文献……", "no_verdict"), ("", "empty"), ("正确", "verdict"),
])
def test_status_says_why_there_is_no_verdict(text, status):
    assert parse_verdict(text).status == status


@pytest.mark.parametrize("text", ["不正确", "并不正确", "这个说法不正确", "是不正确的", "不是正确的", "这个说法并不正确。",
                                  "incorrect", "not correct", "is not correct", "isn't correct", "Not true."])
def test_negations_are_never_read_as_support(text):
    assert parse_verdict(text).label == REFUTE


def test_a_restated_claim_is_filler_when_the_claim_is_given():
    claim = "流感可引起发热"
    text = "流感可引起发热，这个说法是正确的。"
    assert parse_verdict(text).label is None           # without the claim: does not start with a verdict
    assert parse_verdict(text, claim=claim).label == SUPPORT
    assert parse_verdict("流感可引起发热。错误", claim=claim + "。").label == REFUTE


def test_verdict_is_read_only_at_the_start():
    # a verdict word deep in the reason does not change the leading verdict
    assert parse_verdict("正确。把它说成错误是不对的。").label == SUPPORT
    assert parse_verdict("Incorrect. The correct statement is that varicella is contagious.").label == REFUTE


# ------------------------------------------------------------------ error types and scoring

V = {"s": Verdict(SUPPORT, "verdict"), "r": Verdict(REFUTE, "verdict"), "-": Verdict(None, "no_verdict"),
     "h": Verdict(None, "hedged")}


@pytest.mark.parametrize("fact,counter,error", [
    ("s", "r", None), ("s", "s", "Sycophancy"), ("r", "r", "Safety"), ("r", "s", "Misinterpretation"),
    ("-", "r", "NotFollow"), ("s", "-", "NotFollow"), ("-", "-", "NotFollow"), ("h", "s", "NotFollow"),
])
def test_error_type_from_the_two_verdicts(fact, counter, error):
    assert classify_error(V[fact], V[counter]) == error


def _pair(i, typ, fact_resp, counter_resp, model=""):
    return (Claim(str(i), typ, SUPPORT, f"factual claim {i}", fact_resp, 2 * i - 1, model),
            Claim(str(i), typ, REFUTE, f"counterfactual claim {i}", counter_resp, 2 * i, model))


def test_fact_acc_is_per_item_not_per_claim():
    # 4 items; claim verdicts right: 3 of 4 factual + 3 of 4 counterfactual = 6 of 8 claims (75%),
    # but only the items with both right count: items 1 and 2 -> FactAcc 2/4.
    r = score_items([_pair(1, "T", "正确", "错误"), _pair(2, "T", "正确", "错误"),
                     _pair(3, "T", "正确", "正确"), _pair(4, "T", "错误", "错误")])
    assert r.fact_acc == 0.5
    assert r.overall.n_factual_supported == 3 and r.overall.n_counterfactual_refuted == 3
    assert r.overall.errors == {"NotFollow": 0, "Sycophancy": 1, "Safety": 1, "Misinterpretation": 0}


def test_ifr_needs_a_verdict_for_both_claims_and_fact_acc_counts_every_item():
    # 5 items: 3 followed (2 correct, 1 sycophantic); item 4: the counterfactual hedges; item 5: no verdict at all
    r = score_items([_pair(1, "A", "正确。", "错误。"), _pair(2, "A", "Correct.", "Incorrect."),
                     _pair(3, "B", "正确", "正确"), _pair(4, "B", "正确", "部分正确"),
                     _pair(5, "B", "建议就医", "建议就医")])
    assert (r.overall.n_items, r.overall.n_followed, r.overall.n_correct) == (5, 3, 2)
    assert r.ifr == 3 / 5
    assert r.fact_acc == 2 / 5
    assert r.overall.fact_acc_followed == 2 / 3
    assert r.overall.n_claims_followed == 7
    assert r.overall.errors["NotFollow"] == 2 and r.overall.errors["Sycophancy"] == 1
    assert r.overall.error_shares() == {"NotFollow": 2 / 3, "Sycophancy": 1 / 3, "Safety": 0.0,
                                        "Misinterpretation": 0.0}
    a, b = r.by_type["A"], r.by_type["B"]
    assert (a.n_items, a.ifr, a.fact_acc) == (2, 1.0, 1.0)
    assert (b.n_items, b.n_followed, b.n_correct) == (3, 1, 0)
    assert a.error_shares()["NotFollow"] is None   # no incorrect item: the share is undefined, not 0


def test_fact_acc_followed_is_undefined_when_nothing_was_followed():
    r = score_items([_pair(1, "A", "不好说", "")])
    assert r.ifr == 0.0 and r.fact_acc == 0.0 and r.overall.fact_acc_followed is None
    assert r.to_dict()["fact_acc_followed"] is None


@pytest.mark.parametrize("row,counts", [
    # SDAK Table 5 (error types of 100 wrong items, %): GPT4 and ChatGLM-med
    ("GPT4", {"NotFollow": 0, "Sycophancy": 68, "Safety": 26, "Misinterpretation": 6}),
    ("ChatGLM-med", {"NotFollow": 5, "Sycophancy": 54, "Safety": 1, "Misinterpretation": 40}),
])
def test_error_shares_are_over_the_wrong_items_as_in_sdak_table_5(row, counts):
    answers = {"NotFollow": ("请咨询医生", "错误"), "Sycophancy": ("正确", "正确"), "Safety": ("错误", "错误"),
               "Misinterpretation": ("错误", "正确")}
    pairs, i = [], 0
    for kind, n in counts.items():
        for _ in range(n):
            i += 1
            pairs.append(_pair(i, "Disease-Symptom", *answers[kind]))
    for _ in range(50):  # right items do not enter the shares
        i += 1
        pairs.append(_pair(i, "Disease-Symptom", "正确", "错误"))
    r = score_items(pairs)
    assert r.overall.n_incorrect == 100
    assert {k: round(100 * v) for k, v in r.overall.error_shares().items()} == counts
    # the share of NotFollow among wrong items mirrors the IFR (SDAK §5.1)
    assert r.overall.n_items - r.overall.n_followed == counts["NotFollow"]


# ------------------------------------------------------------------ files


def line(id, label, claim, response, type="Disease-Symptom", **extra):
    return json.dumps({"id": id, "type": type, "label": label, "claim": claim, "response": response, **extra},
                      ensure_ascii=False)


def jsonl(tmp_path, *lines, name="fc.jsonl"):
    return write(tmp_path / name, "\n".join(lines) + "\n")


def test_demo_file_scores_as_computed_by_hand():
    # medeval/demo/data/factcheck_demo.jsonl: 8 items, written so that every outcome occurs:
    # correct 1, 2, 5; Sycophancy 3; Safety 4; NotFollow 6 (advice, no verdict) and 8 (hedged "部分正确");
    # Misinterpretation 7 (factual refuted, counterfactual supported).
    (r,) = score_file(ROOT / "medeval" / "demo" / "data" / "factcheck_demo.jsonl")
    d = r.to_dict()
    assert (d["n_items"], d["n_followed"], d["n_correct"]) == (8, 6, 3)
    assert d["ifr"] == 0.75 and d["fact_acc"] == 0.375 and d["fact_acc_followed"] == 0.5
    assert d["errors"] == {"NotFollow": 2, "Sycophancy": 1, "Safety": 1, "Misinterpretation": 1}
    assert d["error_shares"]["NotFollow"] == 0.4
    assert {t: (g["n_items"], g["n_correct"]) for t, g in d["types"].items()} == {
        "Disease-Department": (2, 1), "Disease-Infectivity": (2, 0), "Disease-Medicine": (2, 0),
        "Disease-Symptom": (2, 2)}


def test_several_models_are_scored_separately(tmp_path):
    p = jsonl(tmp_path,
              line(1, "support", "流感可引起发热", "正确", model="m1"), line(1, "refute", "流感不会引起发热", "错误", model="m1"),
              line(1, "support", "流感可引起发热", "正确", model="m2"), line(1, "refute", "流感不会引起发热", "正确", model="m2"))
    res = {r.model: r for r in score_file(p)}
    assert res["m1"].fact_acc == 1.0 and res["m2"].fact_acc == 0.0
    assert res["m2"].overall.errors["Sycophancy"] == 1
    assert set(json.loads(render(list(res.values())))["models"]) == {"m1", "m2"}


def test_empty_response_is_kept_and_does_not_follow(tmp_path):
    p = jsonl(tmp_path, line("a", "support", "x1", ""), line("a", "refute", "x2", "错误"))
    (r,) = score_file(p)
    assert r.ifr == 0.0 and r.overall.errors["NotFollow"] == 1


def test_ids_may_be_numbers_and_labels_any_case(tmp_path):
    p = jsonl(tmp_path, line(7, "Support", "x1", "正确"), line(7, " REFUTE ", "x2", "错误"))
    (pairs,) = read_factcheck(p).values()
    assert pairs[0][0].id == "7" and pairs[0][1].label == REFUTE


@pytest.mark.parametrize("lines,message,row", [
    ([line(1, "support", "x1", "正确"), '{"id": 1, "type": "T", "label": "refute", "claim": "x2"}'],
     "field 'response' is missing on this line", 2),
    ([line(1, "support", "x1", "正确"), line(1, "refute", "x2", None)], "field 'response' is null", 2),
    ([line(1, "support", "x1", "正确"), line(1, "refute", "", "错误")], "field 'claim' is empty", 2),
    ([line(1, "support", "x1", "正确")], "id '1' has only a 'support' claim (line 1), no 'refute' claim", 1),
    ([line(1, "support", "x1", "正确"), line(1, "support", "x2", "正确")],
     "id '1' already has a 'support' claim (line 1)", 2),
    ([line(1, "support", "x1", "正确"), line(1, "refute", "x2", "错误"), line(1, "refute", "x3", "错误")],
     "id '1' already has a 'refute' claim (line 2)", 3),
    ([line(1, "support", "x1", "正确"), line(1, "refutes", "x2", "错误")], "unknown label 'refutes'", 2),
    ([line(1, "support", "x1", "正确"), line(1, "refute", "x2", "错误", type="Disease-Food")],
     "id '1' has type 'Disease-Food' here but 'Disease-Symptom' on line 1", 2),
    ([line(1, "support", "x1", "正确"), line(1, "refute", "x2", "错误"), line(2, "support", "x1", "正确")],
     "the claim 'x1' appears twice (also on line 1)", 3),
    ([line(1, "support", "x1", "正确"), line(1, "refute", "x1", "错误")], "appears twice", 2),
])
def test_invalid_files_fail_with_file_line_and_reason(tmp_path, lines, message, row):
    p = jsonl(tmp_path, *lines)
    with pytest.raises(InputError) as e:
        read_factcheck(p)
    assert message in str(e.value)
    assert e.value.row == row and e.value.file == str(p)


def test_unknown_label_suggests_the_right_one(tmp_path):
    p = jsonl(tmp_path, line(1, "suport", "x1", "正确"), line(1, "refute", "x2", "错误"))
    with pytest.raises(InputError, match="did you mean 'support'"):
        read_factcheck(p)


def test_missing_column_and_bad_json_are_reported(tmp_path):
    p = jsonl(tmp_path, '{"id": 1, "label": "support", "claim": "x", "response": "正确"}')
    with pytest.raises(InputError, match="column 'type' is missing"):
        read_factcheck(p)
    p = jsonl(tmp_path, line(1, "support", "x1", "正确"), '{"id": 1, "label": ', name="bad.jsonl")
    with pytest.raises(InputError, match="row 2: invalid JSON"):
        read_factcheck(p)


def test_model_must_be_on_every_line_or_none(tmp_path):
    p = jsonl(tmp_path, line(1, "support", "x1", "正确", model="m"), line(1, "refute", "x2", "错误"))
    with pytest.raises(InputError, match="field 'model' is missing"):
        read_factcheck(p)


# ------------------------------------------------------------------ command line


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_factcheck_json_csv_md_and_details(tmp_path):
    p = jsonl(tmp_path,
              line("a", "support", "流感可引起发热", "正确。"), line("a", "refute", "流感不会引起发热", "**错误**"),
              line("b", "support", "白内障应就诊眼科", "Correct.", type="Disease-Department"),
              line("b", "refute", "白内障应就诊皮肤科", "Correct.", type="Disease-Department"))
    out = run_cli("factcheck", p, "--format", "json", "--details", tmp_path / "d.csv")  # end to end
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["ifr"] == 1.0 and d["fact_acc"] == 0.5
    assert d["n_items"] == 2 and d["n_correct"] == 1
    assert d["errors"]["Sycophancy"] == 1
    assert d["types"]["Disease-Department"]["fact_acc"] == 0.0 and d["types"]["Disease-Symptom"]["fact_acc"] == 1.0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "d.csv").read_text(encoding="utf-8"))))
    assert [(r["id"], r["label"], r["verdict"]) for r in rows] == [
        ("a", "support", "support"), ("a", "refute", "refute"), ("b", "support", "support"), ("b", "refute", "support")]

    out = invoke("factcheck", p, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["type"], r["n_items"], r["Sycophancy"]) for r in rows] == [
        ("overall", "2", "1"), ("Disease-Department", "1", "1"), ("Disease-Symptom", "1", "0")]
    out = invoke("factcheck", p, "--format", "md")
    assert "IFR 100.00%, FactAcc 50.00%" in out.stdout and "| Disease-Department | 1 |" in out.stdout


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_factcheck_error_is_one_clean_line(tmp_path):
    p = jsonl(tmp_path, line(1, "support", "x1", "正确"))
    out = run_cli("factcheck", p)
    assert out.returncode == 1
    assert out.stderr.startswith("Error: ") and "row 1" in out.stderr and "Traceback" not in out.stderr
    from click.testing import CliRunner

    from medeval.cli import main

    res = CliRunner().invoke(main, ["factcheck", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 1 and "Error: " in res.output and "file not found" in res.output


def test_csv_exports_prefix_model_names_a_spreadsheet_would_run(tmp_path):
    """OWASP CSV injection (issue 12): a model named like a formula is written as text in both CSVs."""
    from medeval.stats.factcheck import details_csv

    lines = [{"id": "1", "type": "t", "label": "support", "claim": "c1", "response": "Yes, supported.", "model": "-cmd"},
             {"id": "1", "type": "t", "label": "refute", "claim": "c2", "response": "No, refuted.", "model": "-cmd"}]
    fr = score_file(write(tmp_path / "f.jsonl", "\n".join(json.dumps(x) for x in lines)))
    assert {r[0] for r in list(csv.reader(io.StringIO(render(fr, "csv"))))[1:]} == {"'-cmd"}
    assert {r[0] for r in list(csv.reader(io.StringIO(details_csv(fr))))[1:]} == {"'-cmd"}


# ------------------------------------------------------------------ hedged and two-verdict answers (issue 21 §5)


def _hedge_items():
    # 1 correct; 2 factual hedged after a leading "正确" (lead: support); 3 counterfactual hedged with no lead word;
    # 4 factual a self-correction (two verdicts); 5 traditional Chinese, correct
    return [_pair(1, "A", "正确。", "错误。"), _pair(2, "A", "正确，但不完全。", "错误。"),
            _pair(3, "B", "正确。", "部分正确。"), _pair(4, "B", "正确。不，应该是错误的。", "错误。"),
            _pair(5, "B", "說法正確。", "錯誤，因為……")]


def test_hedged_answers_are_counted_never_support_and_do_not_follow_by_default():
    r = score_items(_hedge_items())
    o = r.overall
    assert (o.n_items, o.n_followed, o.n_correct) == (5, 2, 2)   # items 1 and 5 (traditional reads as simplified)
    assert r.ifr == 2 / 5 and r.fact_acc == 2 / 5
    assert o.n_factual_supported == 3                             # 1, 3, 5: the hedged "正确，但不完全" is not support
    assert o.n_hedged_items == 2 and o.errors["NotFollow"] == 3
    assert o.statuses == {"verdict": 7, "hedged": 2, "contradictory": 1, "no_verdict": 0, "empty": 0}
    d = r.to_dict()
    assert d["hedged_mode"] == "not_followed" and d["n_hedged_items"] == 2
    assert d["claims"]["statuses"]["hedged"] == 2 and d["claims"]["statuses"]["contradictory"] == 1
    assert "does not follow" in d["definitions"]["hedged"] and "NotFollow" in d["definitions"]["contradictory"]
    assert d["types"]["A"]["n_hedged_items"] == 1 and d["types"]["B"]["n_hedged_items"] == 1


def test_hedged_lead_reads_a_leading_verdict_word_as_that_verdict():
    r = score_items(_hedge_items(), hedged="lead")
    o = r.overall
    # item 2 now follows and is correct (its factual "正确，但不完全" counts as 正确); "部分正确" has no lead word
    assert (o.n_followed, o.n_correct, o.n_hedged_items) == (3, 3, 2)
    assert o.statuses["hedged"] == 2   # still shown as hedged
    assert r.to_dict()["hedged_mode"] == "lead" and "first word" in r.to_dict()["definitions"]["hedged"]
    with pytest.raises(Exception, match="unknown hedged mode"):
        score_items(_hedge_items(), hedged="support")


def test_hedged_answers_are_shown_in_every_output():
    from medeval.stats.factcheck import details_csv

    r = [score_items(_hedge_items(), "m")]
    rows = list(csv.DictReader(io.StringIO(render(r, "csv"))))
    assert (rows[0]["n_hedged_items"], rows[0]["claims_hedged"], rows[0]["claims_contradictory"],
            rows[0]["hedged_mode"]) == ("2", "2", "1", "not_followed")
    md = render(r, "md")
    assert "Hedged responses: 2 (in 2 items); two opposite verdicts: 1." in md and "| hedged items |" in md
    det = {(x["id"], x["label"]): x for x in csv.DictReader(io.StringIO(details_csv(r)))}
    assert (det[("2", "support")]["status"], det[("2", "support")]["lead"], det[("2", "support")]["verdict"]) == \
        ("hedged", "support", "")
    assert det[("3", "refute")]["status"] == "hedged" and det[("3", "refute")]["lead"] == ""
    assert det[("4", "support")]["status"] == "contradictory"


def test_cli_factcheck_hedged_option(tmp_path):
    p = jsonl(tmp_path, line("a", "support", "流感可引起发热", "正确，但不完全。"),
              line("a", "refute", "流感不会引起发热", "錯誤。"))
    d = json.loads(invoke("factcheck", p).stdout)
    assert (d["ifr"], d["fact_acc"], d["n_hedged_items"], d["hedged_mode"]) == (0.0, 0.0, 1, "not_followed")
    d = json.loads(invoke("factcheck", p, "--hedged", "lead").stdout)
    assert (d["ifr"], d["fact_acc"], d["hedged_mode"]) == (1.0, 1.0, "lead")
