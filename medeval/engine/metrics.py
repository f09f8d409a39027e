"""Similarity metrics between a knowledge-base reference and a model answer.

All functions take ``(reference, candidate)`` -- the reference is the
knowledge-base text r̂, the candidate the (post-processed) model answer r.

* :func:`rouge1` -- ROUGE-1 precision (over the candidate), recall (over the
  reference) and F1, identical to ``rouge_score`` with the same tokenizer;
* :func:`bleu1` -- BLEU-1: brevity penalty x clipped unigram precision of the
  candidate (the hypothesis), equal to nltk ``sentence_bleu(weights=(1,))``;
* :func:`exact_match` -- 1.0 when the first numbers agree (numeric aspect);
* :func:`cosine` -- cosine of sentence embeddings from an embedding backend.

Lexical metrics use :func:`medeval.engine.tokenize.scoring_tokenizer` (CJK characters, Latin words, numbers
split from units, Greek letters, ≥ ≤ < > ± % ° and the markers + - ↑ ↓; traditional Chinese turned into simplified
with OpenCC unless ``MEDEVAL_TRADITIONAL_TO_SIMPLIFIED=0``).
The scorer functions only: :mod:`medeval.engine.registry` declares each of them as a metric (name, range, the
aspect types it applies to, scorer id) beside the plugins', and answers "did you mean" for unknown names.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import NamedTuple, Sequence

from medeval.engine.tokenize import scoring_tokenizer


class RougeScore(NamedTuple):
    """ROUGE-1 precision (over the candidate), recall (over the reference) and F1 -- like rouge-score's ``Score``."""

    precision: float
    recall: float
    fmeasure: float


class RefProfile(NamedTuple):
    """A reference's unigram counts and token count, computed once and shared by every answer scored
    against it (:func:`ref_profile`). ``score_db`` keeps one per knowledge-base reference per run."""

    counts: dict[str, int]
    length: int


def ref_profile(ref_tokens: Sequence[str]) -> RefProfile:
    """The :class:`RefProfile` of a tokenised reference."""
    return RefProfile(dict(Counter(ref_tokens)), len(ref_tokens))


def _consume(remaining: dict[str, int], cand_tokens: Sequence[str]) -> int:
    """Size of the multiset intersection (= clipped unigram matches): each candidate token takes one
    of the reference's ``remaining`` copies (the dict is used up). One pass over the candidate, no
    Counter of it: faster than intersecting two Counters for the short texts scored here."""
    get = remaining.get
    overlap = 0
    for t in cand_tokens:
        m = get(t)
        if m:
            overlap += 1
            remaining[t] = m - 1
    return overlap


def _overlap(ref: Sequence[str] | RefProfile, cand_tokens: Sequence[str]) -> int:
    if type(ref) is RefProfile:
        return _consume(ref.counts.copy(), cand_tokens)
    return _consume(Counter(ref), cand_tokens)


def _f1(overlap: int, n_ref: int, n_cand: int) -> tuple[float, float, float]:
    precision = overlap / max(n_cand, 1)
    recall = overlap / max(n_ref, 1)
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f


def _n_ref(ref: Sequence[str] | RefProfile) -> int:
    return ref.length if type(ref) is RefProfile else len(ref)


def overlap_scores(ref: Sequence[str] | RefProfile, cand_tokens: Sequence[str]) -> tuple[RougeScore, float]:
    """ROUGE-1 and BLEU-1 from one pass over the unigram counts.

    ``ref`` is the reference's tokens or its precomputed :class:`RefProfile` (same values, less work
    when one reference is scored against many answers).
    """
    overlap, n_ref, n_cand = _overlap(ref, cand_tokens), _n_ref(ref), len(cand_tokens)
    return RougeScore(*_f1(overlap, n_ref, n_cand)), _bleu_from(overlap, n_ref, n_cand)


def lexical_scores(ref: Sequence[str] | RefProfile, cand_tokens: Sequence[str]) -> tuple[float, float]:
    """(ROUGE-1 F1, BLEU-1) without building result objects: the hot path of ``medeval score``.

    ``ref`` as for :func:`overlap_scores`; ``score_db`` passes a :class:`RefProfile`.
    """
    if type(ref) is RefProfile:
        n_ref, overlap = ref.length, _consume(ref.counts.copy(), cand_tokens)
    else:
        n_ref, overlap = len(ref), _consume(Counter(ref), cand_tokens)
    if overlap == 0:  # _f1 and _bleu_from both give exactly 0.0 here
        return 0.0, 0.0
    # _f1 and _bleu_from inlined, the same operations in the same order (overlap > 0: both lengths >= 1)
    n_cand = len(cand_tokens)
    precision = overlap / n_cand
    recall = overlap / n_ref
    bleu = precision if n_cand > n_ref else math.exp(1 - n_ref / n_cand) * precision
    return 2 * precision * recall / (precision + recall), bleu


def _bleu_from(overlap: int, n_ref: int, n_cand: int) -> float:
    # clipped unigram precision; the clipped count is the same multiset intersection
    if n_cand == 0 or overlap == 0:
        return 0.0
    p1 = overlap / n_cand
    bp = 1.0 if n_cand > n_ref else math.exp(1 - n_ref / n_cand)
    return bp * p1


def rouge1(reference: str, candidate: str) -> RougeScore:
    """ROUGE-1 precision, recall and F1 of ``candidate`` against ``reference``.

    >>> s = rouge1("咳嗽;打喷嚏;流鼻涕;发热", "主要症状为咳嗽、流涕和发烧")
    >>> round(s.precision, 3), round(s.recall, 3), round(s.fmeasure, 3)
    (0.417, 0.5, 0.455)
    >>> rouge1("高血壓", "高血压").fmeasure  # OpenCC t2s (setting MEDEVAL_TRADITIONAL_TO_SIMPLIFIED, default on)
    1.0
    """
    tok = scoring_tokenizer()
    return overlap_scores(tok(reference), tok(candidate))[0]


def bleu1(reference: str, candidate: str) -> float:
    """BLEU-1 of the model answer ``candidate`` (the hypothesis) against ``reference``.

    The brevity penalty exp(1 - |ref|/|cand|) applies when the answer is shorter
    than the reference; verbose answers are penalised by precision instead.

    >>> round(bleu1("咳嗽;打喷嚏;流鼻涕;发热", "主要症状为咳嗽、流涕和发烧"), 3)
    0.417
    >>> round(bleu1("主要症状为咳嗽、流涕和发烧", "咳嗽;打喷嚏;流鼻涕;发热"), 3)
    0.409
    """
    tok = scoring_tokenizer()
    return overlap_scores(tok(reference), tok(candidate))[1]


def exact_match(reference: str | float | None, candidate: str | float | None) -> float:
    """1.0 when the first number in each agrees, else 0.0 (also when the answer has no number).

    >>> exact_match("2", "危重等级为2级")
    1.0
    >>> exact_match("2", "三级")
    0.0
    """
    from medeval.engine.postprocess import first_number

    r = reference if isinstance(reference, (int, float)) else first_number(reference or "")
    c = candidate if isinstance(candidate, (int, float)) else first_number(candidate or "")
    if r is None or c is None or (isinstance(r, float) and math.isnan(r)) or (isinstance(c, float) and math.isnan(c)):
        return 0.0
    return 1.0 if float(r) == float(c) else 0.0


def cosine(reference: str, candidate: str, backend=None) -> float:
    """Cosine similarity of the sentence embeddings of the two texts.

    ``backend`` is an :class:`medeval.engine.embeddings.EmbeddingBackend`; by default the
    configured model (setting ``MEDEVAL_EMBEDDING_MODEL``). An empty candidate scores 0.0.
    """
    from medeval.engine.embeddings import get_backend

    if not candidate or not candidate.strip():
        return 0.0
    backend = backend or get_backend()
    a, b = backend.encode([reference, candidate])
    return float(max(-1.0, min(1.0, float(a @ b))))


EXACT_SCORER_ID = "first-number-v1"
