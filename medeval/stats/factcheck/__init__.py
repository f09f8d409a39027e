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
* **Hedged responses** ("部分正确", "正确，但不完全", "True only in part") -- the paper
  is silent. They get their own status (``hedged``), are never read as support or
  refute, and are counted and shown (``n_hedged_items``, ``claims.statuses``, the
  ``status``/``lead`` columns of the details CSV). By default (``hedged="not_followed"``)
  a hedged response answers neither 'correct' nor 'incorrect': it does not follow, its
  item is not memorized and counts as NotFollow. ``hedged="lead"`` (CLI ``--hedged
  lead``) takes a hedge that starts with a verdict word ("正确，但不完全") as that
  verdict -- what reading the first word only gives, the literal reading of "answers
  ... at the start of its response".
* **Two verdicts** ("正确/错误", "Yes, this is incorrect", the self-correction
  "正确。不，应该是错误的") -- status ``contradictory``: no verdict, never a guess.

Verdict parsing (:func:`parse_verdict`) reads only the *start* of a response. Traditional
Chinese is first turned into simplified (:func:`medeval.core.chinese.to_simplified`),
so "說法正確" reads like "说法正确". Leading filler is skipped: interjections and
lead-ins ("嗯，", "好的，", "首先，", "关于这个问题，", "作为AI助手，", "Sure,", "As an AI
language model, ..."), headers ("答案：", "回答：", "The answer is"), "这个说法是", "这是",
"The statement is", "I'd say", markdown, quotes and a restated claim. Every noun a response
calls the claim by reads like 说法 (观点, 看法, 表述, 描述, 陈述, 论述, 结论, 判断, 命题, 提法,
这句话; "This view is", "The description above is"), and "为真"/"为假" are verdicts ("该命题为
真"). "X的说法" (or "X的观点" ...) reads as X ("这是错误的说法" -> refute) unless it introduces
what would be right ("正确的说法是：……" -> no verdict). The prompt's own words echoed before
the answer ("下列说法是否正确？", "如果正确，请先回复"正确"，然后给出原因。") are skipped, and so
is its option list when the answer fills it in ("正确/错误：正确", "判断（正确/错误）：错误",
"请回答'正确'或'错误'：正确", "True/False: False", "[x] 正确 [ ] 错误"): the options are the
template's, the verdict after them is the answer. Options that nothing fills in ("正确/错误"
alone) remain two verdicts. A qualification right after the verdict ("正确，但不完全", "True,
but not always") makes the answer hedged; after a refutation, "并非所有……" is its
reason, not a hedge. A verdict that only comes after content ("根据……，这个说法是正确
的") does not start the response. Negations are read as refutations: "不正确" is never
"正确", "incorrect", "not correct", "isn't accurate" are never "correct"; "对于……" is
not "对".

>>> parse_verdict("答案：不正确。尾胰癌……").label
'refute'
>>> parse_verdict("**The statement is correct.** Because ...").label
'support'
>>> parse_verdict("部分正确，但……").status
'hedged'
>>> parse_verdict("說法正確。").label
'support'
"""

from medeval.stats.factcheck.files import OPTIONAL, REQUIRED, Claim, pair_claims, read_factcheck
from medeval.stats.factcheck.render import details_csv, render, summary
from medeval.stats.factcheck.score import (
    ERROR_TYPES,
    HEDGED_MODES,
    HEDGED_TEXT,
    FactcheckResult,
    GroupScore,
    ItemScore,
    classify_error,
    score_file,
    score_items,
)
from medeval.stats.factcheck.verdict import LABELS, REFUTE, STATUSES, SUPPORT, Verdict, parse_verdict

__all__ = [
    "LABELS", "REFUTE", "STATUSES", "SUPPORT", "Verdict", "parse_verdict",
    "OPTIONAL", "REQUIRED", "Claim", "pair_claims", "read_factcheck",
    "ERROR_TYPES", "HEDGED_MODES", "HEDGED_TEXT", "FactcheckResult", "GroupScore", "ItemScore", "classify_error", "score_file", "score_items",
    "details_csv", "render", "summary",
]
