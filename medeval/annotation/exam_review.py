"""Exam answers a person settles: the review list of ambiguous readings (CMB-Exam), the decisions, and the
results with them applied.

The extractor (:mod:`medeval.stats.exam`) never guesses a letter: a response that does not determine its choice
is read ``ambiguous``. A researcher or admin reads it and picks the letters (or none); the decision is stored
append-only in ``exam_settlements`` (migration ``m016``) with who decided, when and why, and audited. An exam is
the answer key file (:func:`medeval.stats.exam.key_fingerprint`); a decision belongs to the model, the question
and the response read (its hash), so a new answers file with another response to that question needs its own
decision. :func:`score` gives both ``accuracy_settled`` (settled letters applied, the unsettled counted wrong)
and ``accuracy_ambiguous_wrong`` (every ambiguous answer wrong), and CMB's regex reading beside them.

Roles: every function with ``actor`` needs a researcher or admin (``policy.authorize(actor, "exam.review")``; the
command line passes its local actor, ``None`` is an in-process trusted caller).
"""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.core.errors import InputError, MedevalError
from medeval.core.i18n import _
from medeval.core.limits import check_note
from medeval.stats.exam import (DEFAULT_LETTERS, ExamResult, Question, key_fingerprint, read_answers, read_key,
                                response_sha, score_answers)
from medeval.store.db import transaction

REVIEW_ROLES = ("researcher", "admin")
NO_ANSWER = ("none", "-", "no answer", "无")  # what a person writes for "the response gives no answer"


@dataclass(frozen=True)
class Exam:
    """An answers file and its key, read and checked: ``exam`` is the key's identity."""

    exam: str
    key: dict  # id -> Question
    answers: dict  # model -> {id: (line, response)}
    key_name: str = ""
    answers_name: str = ""


@dataclass(frozen=True)
class Decision:
    id: int
    exam: str
    model: str
    question: str
    response_sha: str
    letters: str  # "" = no answer
    decided_by: str
    decided_at: str
    note: str
    supersedes: int | None


@dataclass(frozen=True)
class ReviewItem:
    """One ambiguous answer: what the model wrote, why it is ambiguous, the options, and its latest decision."""

    model: str
    question: str
    response: str
    reason: str
    candidates: str
    options: dict
    valid: str
    expected: str
    cmb: str
    decision: Decision | None


def _who(db, actor: User | None) -> str:
    authorize(actor, "exam.review", db=db)
    return actor.username if actor is not None else "cli"  # None: an in-process trusted caller


def load(answers_path: str | Path, key_path: str | Path) -> Exam:
    """Read and check an answers file and its key (clear errors with file and line)."""
    key = read_key(key_path)
    return Exam(key_fingerprint(key_path), key, read_answers(answers_path, key), Path(key_path).name,
                Path(answers_path).name)


_DECISION_SQL = ("SELECT id, exam, model, question, response_sha, letters, decided_by, decided_at, note, supersedes "
                 "FROM exam_settlements WHERE exam = ? ORDER BY id")


def decisions(db: sqlite_utils.Database, exam: str, *, actor: User | None) -> list[Decision]:
    """Every decision taken for the exam, oldest first (history included: later ones supersede)."""
    _who(db, actor)
    return [Decision(*r) for r in db.conn.execute(_DECISION_SQL, (exam,))]


def _latest(db, exam: str) -> dict:
    """(model, question, response_sha) -> the latest decision."""
    return {(d.model, d.question, d.response_sha): d for d in (Decision(*r) for r in db.conn.execute(_DECISION_SQL,
                                                                                                       (exam,)))}


def _settlements(latest: dict, model: str, responses: dict) -> dict:
    out = {}
    for qid, (_, text) in responses.items():
        d = latest.get((model, qid, response_sha(text)))
        if d:
            out[qid] = (d.letters, d.decided_by, d.response_sha)
    return out


def score(db: sqlite_utils.Database, exam: Exam, *, actor: User | None) -> list[ExamResult]:
    """Every model's results with the settled letters applied (see the module notes for the figures)."""
    _who(db, actor)
    latest = _latest(db, exam.exam)
    return [score_answers(exam.key, resp, model, _settlements(latest, model, resp))
            for model, resp in exam.answers.items()]


def review_list(db: sqlite_utils.Database, exam: Exam, *, actor: User | None) -> list[ReviewItem]:
    """The ambiguous answers of every model, in key order, each with its latest decision (None: unsettled)."""
    _who(db, actor)
    latest = _latest(db, exam.exam)
    out = []
    for model, resp in exam.answers.items():
        for a in score_answers(exam.key, resp, model).answers:
            if not a.ambiguous:
                continue
            q: Question = exam.key[a.id]
            out.append(ReviewItem(model, a.id, a.response, a.extraction.note, a.extraction.candidates, dict(q.options),
                                  _valid(q), a.expected, a.cmb, latest.get((model, a.id, response_sha(a.response)))))
    return out


def _valid(q: Question) -> str:
    return "".join(sorted(q.options)) if q.options else DEFAULT_LETTERS


def check_letters(letters, q: Question) -> str:
    """The letters a person picked, as a sorted set of the question's option letters ("" = no answer)."""
    if isinstance(letters, (list, tuple, set)):
        letters = "".join(str(x) for x in letters)
    if not isinstance(letters, str):
        raise InputError(_("letters must be text, not {type}").format(type=type(letters).__name__),
                         fix=_('give letters such as "B" or "BD"'))
    raw = unicodedata.normalize("NFKC", letters).strip()
    if raw.lower() in NO_ANSWER:
        return ""
    compact = re.sub(r"[\s,，、;；/]+", "", raw).upper()
    valid = _valid(q)
    if not compact:
        raise InputError(_("no letters given"), fix=_("give option letters among {letters}, or 'none' when the "
                                                      "response gives no answer").format(letters=", ".join(valid)))
    bad = [c for c in compact if c not in valid]
    if bad:
        raise InputError(_("{letters} is not an option of question {question}").format(
            letters=", ".join(dict.fromkeys(bad)), question=repr(q.id)),
            fix=_("the options are {letters}; write 'none' when the response gives no answer").format(
                letters=", ".join(valid)))
    if len(set(compact)) != len(compact):
        raise InputError(_("letters {letters} repeat a letter").format(letters=repr(letters)),
                         fix=_("give each letter once"))
    return "".join(sorted(compact))


def settle(db: sqlite_utils.Database, exam: Exam, model: str, question: str, letters, *, note: str = "",
           actor: User | None) -> int:
    """Store a person's letters for an ambiguous answer (superseding an earlier decision); returns its id."""
    who = _who(db, actor)
    model = "" if model is None else str(model).strip()
    question = str(question).strip()
    if model not in exam.answers:
        known = ", ".join(repr(m) for m in exam.answers if m) or _("none (the file has no model column: give '')")
        raise MedevalError(_("model {model} is not in the answers file; its models: {known}").format(
            model=repr(model), known=known))
    if question not in exam.key:
        raise MedevalError(_("question {question} is not in the answer key").format(question=repr(question)))
    if question not in exam.answers[model]:
        raise MedevalError(_("model {model} has no response to question {question}: nothing to settle").format(
            model=repr(model), question=repr(question)))
    q = exam.key[question]
    text = exam.answers[model][question][1]
    (a,) = [x for x in score_answers({question: q}, {question: (0, text)}, model).answers]
    if not a.ambiguous:
        raise MedevalError(_("question {question} of model {model} is not ambiguous (read as {letters}); only "
                             "ambiguous readings are settled by hand").format(
            question=repr(question), model=repr(model), letters=a.extraction.letters or _("no answer")))
    value = check_letters(letters, q)
    note = check_note(note, what="the note")
    sha = response_sha(text)
    with transaction(db):
        prev = db.conn.execute("SELECT max(id) FROM exam_settlements WHERE exam = ? AND model = ? AND question = ? "
                               "AND response_sha = ?", (exam.exam, model, question, sha)).fetchone()[0]
        sid = db.conn.execute(
            "INSERT INTO exam_settlements (exam, model, question, response_sha, letters, decided_by, decided_at, "
            "note, supersedes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (exam.exam, model, question, sha, value, who, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), note,
             prev)).lastrowid
        audit(db, who, "exam.settle", f"exam:{exam.exam}", {"model": model, "question": question, "letters": value,
                                                             "settlement": sid, "supersedes": prev})
    return sid
