"""Clinical cases with several models' responses and judges' assessments; fact-check claims.

The source data of the rating, preference and fact-check verification task types
(``medeval.annotation.tasks``), following AutoMedEval (a question, a reference answer, responses
from two or more models, a judge's rationale with a score per response), CMB-Clin
(a case description followed by a sequence of questions) and SDAK (pairs of factual
and counterfactual claims with a model's answer to each).

Everything is grouped in named *datasets* so that several imports can live side by side.

This package re-exports its public names; each module has one job:

* :mod:`~medeval.annotation.cases.records` -- the plain records input files are read into;
* :mod:`~medeval.annotation.cases.formats` -- reading and validating the cases and responses files;
* :mod:`~medeval.annotation.cases.judgements` -- reading the judgements file (overall and per-criterion scores);
* :mod:`~medeval.annotation.cases.judge_scores` -- reading scores out of a judge's rationale
  (:mod:`~medeval.annotation.cases.judge_patterns`, :mod:`~medeval.annotation.cases.judge_tables`);
* :mod:`~medeval.annotation.cases.store` -- importing into the database (cases, fact-check claims);
* :mod:`~medeval.annotation.cases.queries` -- reading the database (datasets, questions, claim pairs).
"""

from __future__ import annotations

from medeval.annotation.cases.formats import read_cases, read_responses
from medeval.annotation.cases.judgements import read_judgements
from medeval.annotation.cases.judge_scores import ScoreReading, parse_judge_scores, read_judge_scores
from medeval.annotation.cases.queries import datasets, fact_claim_pairs, questions
from medeval.annotation.cases.records import CaseIn, JudgementIn, QuestionIn, ResponseIn
from medeval.annotation.cases.store import DEFAULT_FACT_MODEL, import_cases, import_fact_claims

__all__ = [
    "DEFAULT_FACT_MODEL",
    "CaseIn",
    "JudgementIn",
    "QuestionIn",
    "ResponseIn",
    "datasets",
    "fact_claim_pairs",
    "import_cases",
    "import_fact_claims",
    "ScoreReading",
    "parse_judge_scores",
    "read_judge_scores",
    "questions",
    "read_cases",
    "read_judgements",
    "read_responses",
]
