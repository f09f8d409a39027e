"""Exam scoring: exact-match accuracy overall, per category, subcategory and question type, with CMB's
macro averages and CMB's regex reading beside ours."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from medeval.stats.exam.extract import METHODS, Extraction, cmb_match_choice, extract_answer
from medeval.stats.exam.files import Question, read_answers, read_key


@dataclass(frozen=True)
class ScoredAnswer:
    id: str
    expected: str
    extraction: Extraction
    cmb: str
    line: int | None

    @property
    def correct(self) -> bool:
        return self.extraction.letters == self.expected

    @property
    def cmb_correct(self) -> bool:
        return self.cmb == self.expected


@dataclass(frozen=True)
class Tally:
    """Questions and correct answers of one group."""

    n: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.n if self.n else None

    def to_dict(self) -> dict:
        return {"n": self.n, "correct": self.correct, "accuracy": self.accuracy}


def macro_mean(values) -> float | None:
    """Unweighted mean of group accuracies (None if there are none) -- CMB's category and "Average" convention.

    >>> round(macro_mean([59.90, 69.31, 52.19, 61.50, 59.69, 54.19]), 2)  # CMB Table 6, GPT-4
    59.46
    """
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


@dataclass(frozen=True)
class ExamResult:
    model: str
    answers: tuple
    key: dict

    def _tally(self, pred=lambda q: True, cmb: bool = False) -> Tally:
        sel = [a for a in self.answers if pred(self.key[a.id])]
        return Tally(len(sel), sum((a.cmb_correct if cmb else a.correct) for a in sel))

    @property
    def accuracy(self) -> float | None:
        return self._tally().accuracy

    def categories(self) -> dict:
        cats: dict = {}
        for a in self.answers:
            q = self.key[a.id]
            if q.category is None:
                continue
            c = cats.setdefault(q.category, {})
            if q.subcategory is not None:
                c.setdefault(q.subcategory, None)
        out = {}
        for cat in sorted(cats):
            d = self._tally(lambda q, cat=cat: q.category == cat).to_dict()
            subs = {sub: self._tally(lambda q, cat=cat, sub=sub: q.category == cat and q.subcategory == sub).to_dict()
                    for sub in sorted(cats[cat])}
            if subs:
                d["accuracy_macro"] = macro_mean(s["accuracy"] for s in subs.values())
                d["subcategories"] = subs
            out[cat] = d
        return out

    def to_dict(self) -> dict:
        total = self._tally()
        cats = self.categories()
        methods = {m: 0 for m in METHODS}
        for a in self.answers:
            methods[a.extraction.method] += 1
        qtypes = sorted({self.key[a.id].question_type for a in self.answers if self.key[a.id].question_type})
        cmb = self._tally(cmb=True)
        return {
            "model": self.model or None,
            "n": total.n, "correct": total.correct, "accuracy": total.accuracy,
            "accuracy_macro": macro_mean(c["accuracy"] for c in cats.values()) if cats else None,
            "unanswered": methods["unanswered"],
            "categories": cats,
            "question_types": {t: self._tally(lambda q, t=t: q.question_type == t).to_dict() for t in qtypes},
            "extraction": methods,
            "cmb_regex": {"correct": cmb.correct, "accuracy": cmb.accuracy,
                          "differs": sum(a.extraction.letters != a.cmb for a in self.answers
                                         if a.extraction.method != "unanswered")},
            "definitions": {
                "accuracy": "questions whose extracted option set equals the key / questions (unanswered count as "
                            "wrong)",
                "accuracy_macro": "mean of the category accuracies (CMB Table 6 'Average'); a category's "
                                  "accuracy_macro is the mean of its subcategories (CMB score.py)",
                "cmb_regex": "the same answers read by CMB's own match_choice, for comparison",
            },
        }


def score_answers(key: dict[str, Question], responses: dict[str, tuple[int, str]], model: str = "") -> ExamResult:
    """Score one model's responses ``{id: (line, response)}`` against the key; questions without a response
    count as wrong (as in CMB's ``score.py``) and are reported as ``unanswered``."""
    scored = []
    for qid, q in key.items():
        if qid in responses:
            line, text = responses[qid]
            ex = extract_answer(text, q.options or None)
            cmb = cmb_match_choice(text, q.multi)  # unsorted, compared as CMB score.py does
        else:
            line, ex, cmb = None, Extraction("", "unanswered", "no response in the answers file"), ""
        scored.append(ScoredAnswer(qid, q.answer, ex, cmb, line))
    return ExamResult(model, tuple(scored), key)


def score_files(answers_path: str | Path, key_path: str | Path) -> list[ExamResult]:
    key = read_key(key_path)
    answers = read_answers(answers_path, key)
    return [score_answers(key, resp, model) for model, resp in answers.items()]
