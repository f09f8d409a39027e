"""Exam scoring: exact-match accuracy overall, per category, subcategory and question type; ambiguous readings
counted and, where a person settled them, replaced; CMB's macro averages and CMB's regex reading beside ours."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medeval.core.errors import MedevalError
from medeval.core.i18n import N_
from medeval.stats.exam.extract import METHODS, Extraction, cmb_match_choice, extract_answer
from medeval.stats.exam.files import Question, read_answers, read_key, response_sha

DEFINITIONS = {
    "accuracy_settled": N_("questions whose option set equals the key / questions; an ambiguous reading counts with "
                           "the letters a person settled, an unsettled ambiguous reading counts as wrong (and is "
                           "counted in 'unsettled'); empty and unanswered count as wrong (CMB `score.py`)"),
    "accuracy_ambiguous_wrong": N_("the same with every ambiguous reading counted as wrong (no settlement applied)"),
    "accuracy_cmb_regex": N_("the same answers read by CMB's own `match_choice` (`src/utils.py`; first letter only "
                             "for a single-choice question), compared as CMB `score.py` compares: the paper's "
                             "reading"),
    "accuracy_macro": N_("CMB's convention (`score.py`, Table 6 'Average'): a category's accuracy is the mean of its "
                         "subcategories' accuracies, and the overall figure is the mean of those category "
                         "accuracies; computed on the settled accuracy"),
    "category accuracy_macro": N_("mean of the category's subcategory accuracies (settled), CMB `score.py`'s "
                                  "`accuracy_per_category`"),
    "ambiguous": N_("answers whose response does not determine a choice (equal candidates, alternatives, "
                    "contradictory finals, no option named); never replaced by a guessed letter"),
}
"""How each figure is computed, by its name in the results (JSON, CSV); CMB's own code names in `backticks`."""

LABELS = {"accuracy_settled": N_("accuracy (settled)"), "accuracy_ambiguous_wrong": N_("accuracy (ambiguous as wrong)"),
          "accuracy_cmb_regex": N_("accuracy (CMB's reading)"), "accuracy_macro": N_("macro accuracy (CMB)"),
          "category accuracy_macro": N_("a category's macro accuracy"), "ambiguous": N_("ambiguous")}
"""Each figure as a page or report names it in words (the results keep the names above, for programs). English
marked ``N_()``: a page shows them with ``_()`` (:mod:`medeval.stats.exam.render`'s ``display_rows`` and
``definitions`` do); the JSON's ``definitions`` stay English."""


@dataclass(frozen=True)
class ScoredAnswer:
    id: str
    expected: str
    extraction: Extraction
    cmb: str
    line: int | None
    response: str = ""
    settled: str | None = None  # letters a person settled for an ambiguous reading ("" = no answer given)
    settled_by: str | None = None

    @property
    def ambiguous(self) -> bool:
        return self.extraction.status == "ambiguous"

    @property
    def letters(self) -> str:
        """The letters this answer is scored with: the settled ones for a settled ambiguous reading."""
        return self.settled if self.ambiguous and self.settled is not None else self.extraction.letters

    @property
    def correct(self) -> bool:
        """Correct under accuracy_settled."""
        return self.letters == self.expected

    @property
    def correct_ambiguous_wrong(self) -> bool:
        return not self.ambiguous and self.extraction.letters == self.expected

    @property
    def cmb_correct(self) -> bool:
        return self.cmb == self.expected


@dataclass(frozen=True)
class Tally:
    """Questions of one group: how many, correct (settled), correct with ambiguous as wrong, ambiguous, unsettled."""

    n: int
    correct: int
    correct_ambiguous_wrong: int = 0
    ambiguous: int = 0
    unsettled: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    def to_dict(self) -> dict:
        n = self.n
        return {"n": n, "correct": self.correct, "accuracy_settled": self.accuracy,
                "accuracy_ambiguous_wrong": self.correct_ambiguous_wrong / n if n else None,
                "ambiguous": self.ambiguous, "unsettled": self.unsettled}


def macro_mean(values) -> float | None:
    """Unweighted mean of group accuracies (None if there are none) -- CMB's category and "Average" convention.

    >>> round(macro_mean([59.90, 69.31, 52.19, 61.50, 59.69, 54.19]), 2)  # CMB Table 6, GPT-4
    59.46
    """
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def tally(answers) -> Tally:
    answers = list(answers)
    return Tally(len(answers), sum(a.correct for a in answers), sum(a.correct_ambiguous_wrong for a in answers),
                 sum(a.ambiguous for a in answers), sum(a.ambiguous and a.settled is None for a in answers))


@dataclass(frozen=True)
class ExamResult:
    model: str
    answers: tuple
    key: dict

    def _sel(self, pred):
        return [a for a in self.answers if pred(self.key[a.id])]

    @property
    def accuracy(self) -> float | None:
        """accuracy_settled overall."""
        return tally(self.answers).accuracy

    def categories(self) -> dict:
        """Per category (CMB ``exam_type``): the tally, its subcategories' tallies and CMB's category figure."""
        out = {}
        for cat in sorted({self.key[a.id].category for a in self.answers} - {None}):
            qs = self._sel(lambda q, cat=cat: q.category == cat)
            subs_of = {self.key[a.id].subcategory for a in qs}
            d = tally(qs).to_dict()
            if subs_of != {None}:
                if None in subs_of:
                    raise MedevalError(f"category {cat!r}: some questions have a subcategory and some do not; CMB's "
                                       "category accuracy is the mean of its subcategories, so give every question "
                                       "of the category its exam_class/subcategory")
                subs = {sub: tally(a for a in qs if self.key[a.id].subcategory == sub).to_dict()
                        for sub in sorted(subs_of)}
                d["accuracy_macro"] = macro_mean(s["accuracy_settled"] for s in subs.values())
                d["subcategories"] = subs
            else:
                d["accuracy_macro"] = d["accuracy_settled"]  # no subcategories: the category is its one group
            out[cat] = d
        return out

    def ambiguous(self) -> list[dict]:
        return [{"id": a.id, "reason": a.extraction.note, "candidates": a.extraction.candidates,
                 "settled": a.settled, "settled_by": a.settled_by} for a in self.answers if a.ambiguous]

    def to_dict(self) -> dict:
        total = tally(self.answers)
        cats = self.categories()
        methods = {m: 0 for m in METHODS}
        for a in self.answers:
            methods[a.extraction.method] += 1
        qtypes = sorted({self.key[a.id].question_type for a in self.answers} - {None})
        cmb = sum(a.cmb_correct for a in self.answers)
        return {
            "model": self.model or None,
            **total.to_dict(),
            "accuracy_cmb_regex": cmb / total.n if total.n else None,
            "accuracy_macro": macro_mean(c["accuracy_macro"] for c in cats.values()) if cats else None,
            "unanswered": methods["unanswered"],
            "categories": cats,
            "question_types": {t: tally(self._sel(lambda q, t=t: q.question_type == t)).to_dict() for t in qtypes},
            "extraction": methods,
            "ambiguous_answers": self.ambiguous(),
            "cmb_regex": {"correct": cmb, "accuracy": cmb / total.n if total.n else None,
                          "differs": sum(a.extraction.letters != a.cmb for a in self.answers
                                         if a.extraction.method != "unanswered")},
            "definitions": DEFINITIONS,
        }


def score_answers(key: dict[str, Question], responses: dict[str, tuple[int, str]], model: str = "",
                  settlements: dict | None = None) -> ExamResult:
    """Score one model's responses ``{id: (line, response)}`` against the key; questions without a response
    count as wrong (as in CMB's ``score.py``) and are reported as ``unanswered``. ``settlements`` maps a question
    id to ``(letters, decided_by, response_sha(response))``: applied to an ambiguous reading of that very
    response only."""
    scored = []
    settlements = settlements or {}
    for qid, q in key.items():
        if qid in responses:
            line, text = responses[qid]
            # several letters for a single-answer question are ambiguous; the question type says which it is (the
            # key's answer does not: how a response is read never depends on the letters it is scored against)
            ex = extract_answer(text, q.options or None, multi=q.multi if q.question_type else None)
            cmb = cmb_match_choice(text, q.multi)  # unsorted, compared as CMB score.py does
        else:
            line, text, ex, cmb = None, "", Extraction("", "unanswered", "no response in the answers file"), ""
        st = settlements.get(qid)
        letters, who = (st[0], st[1]) if st and ex.status == "ambiguous" and st[2] == response_sha(text) else (None, None)
        scored.append(ScoredAnswer(qid, q.answer, ex, cmb, line, text, letters, who))
    return ExamResult(model, tuple(scored), key)


def score_files(answers_path: str | Path, key_path: str | Path, settlements: dict | None = None) -> list[ExamResult]:
    """Score every model of an answers file; ``settlements`` maps a model to its ``score_answers`` settlements."""
    key = read_key(key_path)
    answers = read_answers(answers_path, key)
    return [score_answers(key, resp, model, (settlements or {}).get(model)) for model, resp in answers.items()]
