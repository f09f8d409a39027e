"""The plain records the input files are read into: a case with its questions, a response, a judgement."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class QuestionIn:
    """One question of a case, as read from a file."""

    position: int
    question: str
    reference: str
    row: int


@dataclass
class CaseIn:
    """One clinical case as read from a file: key, title, description and its questions in order."""

    key: str
    title: str
    description: str
    questions: list[QuestionIn] = field(default_factory=list)
    row: int = 0
    file: str = ""

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The ordered ``(question, reference)`` pairs."""
        return [(q.question, q.reference) for q in self.questions]


@dataclass(frozen=True)
class ResponseIn:
    """One model's response to one question (``position`` is 1-based within the case)."""

    case: str
    position: int
    model: str
    response: str
    row: int


@dataclass(frozen=True)
class JudgementIn:
    """One judge's assessment of the responses to one question.

    ``models`` is the order the judge saw the responses in; ``scores`` maps each
    model to its score (from the ``scores`` column, parsed from the rationale, or the
    mean over its criteria); ``criteria`` maps each model to its per-criterion scores
    ``{criterion: score}`` (empty when the judge scored no criteria).
    """

    case: str
    position: int
    judge: str
    rationale: str
    models: tuple[str, ...]
    scores: dict
    row: int
    criteria: dict = field(default_factory=dict)
