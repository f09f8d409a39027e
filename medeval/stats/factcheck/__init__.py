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

Verdict parsing (:func:`parse_verdict`) reads only the *start* of a response,
after leading filler ("答案：", "回答：", "这个说法是", "The statement is",
markdown, quotes, a restated claim). It refuses -- returns no verdict -- when the
start is hedged ("部分正确", "不一定", "partially correct", "it depends"), when it
is contradictory ("正确/错误", "Yes, this is incorrect"), or when the verdict
only comes later ("根据……，这个说法是正确的" does not start with a verdict).
Negations are read as refutations: "不正确" is never "正确", "incorrect" and
"not correct" are never "correct"; "对于……" is not "对".

>>> parse_verdict("答案：不正确。尾胰癌……").label
'refute'
>>> parse_verdict("**The statement is correct.** Because ...").label
'support'
>>> parse_verdict("部分正确，但……").status
'hedged'
"""

from medeval.stats.factcheck.files import OPTIONAL, REQUIRED, Claim, pair_claims, read_factcheck
from medeval.stats.factcheck.render import details_csv, render, summary
from medeval.stats.factcheck.score import (
    ERROR_TYPES,
    FactcheckResult,
    GroupScore,
    ItemScore,
    classify_error,
    score_file,
    score_items,
)
from medeval.stats.factcheck.verdict import LABELS, REFUTE, SUPPORT, Verdict, parse_verdict

__all__ = [
    "LABELS", "REFUTE", "SUPPORT", "Verdict", "parse_verdict",
    "OPTIONAL", "REQUIRED", "Claim", "pair_claims", "read_factcheck",
    "ERROR_TYPES", "FactcheckResult", "GroupScore", "ItemScore", "classify_error", "score_file", "score_items",
    "details_csv", "render", "summary",
]
