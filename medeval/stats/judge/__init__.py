"""Judge vs clinicians: how well an LLM judge's scores agree with clinicians' ratings of the same responses.

The statistics of AutoMedEval (seed 002, §4.3, Table 2, Fig. 4) and CMB-Clin
(seed 001, §5.3), from long rows ``case, model, judge_score, human_score``
with an optional ``rater`` column (one row per annotator per response):

* response level -- Spearman and Pearson between the judge's score and the
  clinicians' score of each response, with Fisher-z 95% CIs
  (:func:`medeval.stats.agreement.correlation`);
* case level -- Accuracy_2-tuple (pairs of responses of a case the judge
  orders as the clinicians do) and Accuracy_triple (three-response cases the
  judge orders exactly as the clinicians do);
* per pair of models -- win / tie / loss shares, for the judge and for the
  clinicians side by side (002 Fig. 4);
* per model -- mean score, rank, and the Spearman between the judge's and the
  clinicians' model rankings (001 §5.3: 0.93 for GPT-4 vs experts);
* per criterion -- Pearson (the paper's statistic, 001 §5.3 / App. E.3: all
  above 0.71) and Spearman between the judge's and the clinicians' score on
  each criterion, with 95% CIs (:mod:`~medeval.stats.judge.criteria`), from
  optional ``judge_<criterion>`` / ``human_<criterion>`` columns.

Conventions (shared with :mod:`medeval.stats.agreement`):

* The clinicians' score of a response is the mean over its raters (002 §4.2 and
  App. D: "we perform an averaging operation on the scores assigned by all
  annotators for each annotation item to derive the final rating"). The judge
  scores a response once, so its score must be the same on every rater's row.
* A case with a single response cannot be compared with anything: it is left
  out of *every* statistic (correlations included, so that all numbers describe
  the same responses) and counted in ``excluded`` with a warning.
* Two scores tie when they are equal up to a relative/absolute tolerance of
  ``TIE_TOL`` (means of several ratings are floats: 0.1 + 0.2 vs 0.3).
* A statistic that cannot be computed (one model, constant scores, no case with
  three responses) is ``value=None`` with ``undefined_reason``; never NaN.

The package, one job per module:

* :mod:`~medeval.stats.judge.responses` -- reading and validating the judge file (:class:`Response`);
* :mod:`~medeval.stats.judge.measures` -- the statistics;
* :mod:`~medeval.stats.judge.criteria` -- the per-criterion correlations;
* :mod:`~medeval.stats.judge.summary` -- all of them as plain data, with warnings;
* :mod:`~medeval.stats.judge.rendering` -- that summary as JSON, CSV or Markdown.

This module re-exports their public names: import from ``medeval.stats.judge``.
"""

from __future__ import annotations

from medeval.stats.judge.measures import (
    SOURCES,
    TIE_TOL,
    ModelMean,
    PairAccuracy,
    TripleAccuracy,
    WinRate,
    accuracy_2tuple,
    accuracy_triple,
    model_ranking,
    models_of,
    order,
    ranking_spearman,
    response_correlations,
    win_rates,
)
from medeval.stats.judge.criteria import CriterionAgreement, bonett_wright_ci, criterion_agreement, criterion_key
from medeval.stats.judge.rendering import render
from medeval.stats.judge.responses import (
    OPTIONAL,
    REQUIRED,
    JudgeData,
    Response,
    from_records,
    read_judge_file,
    split_cases,
)
from medeval.stats.judge.summary import summarise

__all__ = [
    "REQUIRED", "OPTIONAL", "Response", "JudgeData", "read_judge_file", "from_records", "split_cases",
    "TIE_TOL", "SOURCES", "order", "response_correlations",
    "PairAccuracy", "TripleAccuracy", "accuracy_2tuple", "accuracy_triple",
    "WinRate", "models_of", "win_rates",
    "ModelMean", "model_ranking", "ranking_spearman",
    "CriterionAgreement", "criterion_agreement", "criterion_key", "bonett_wright_ci",
    "summarise", "render",
]
