"""Each family's answers once the guards have passed: :data:`TIER_STORE` (tier grading; its rows read as the view
``grade_annotations``, gold items' as ``gold_answers``) and :data:`TASK_STORE` (task campaigns: ``task_answers``;
gold items: ``task_gold_answers``). Every family writes one row of the one table ``answers`` through
:func:`medeval.annotation.answer_rows.insert`, append only: a change adds a row that supersedes the previous one
(both are kept, the change is audited). A store also says its family's words (the closed-campaign message, its stale
error) and reads what the guards ask (the assignment, the token's earlier row, the current state). A gold item's
answers go through a :class:`GoldStore` of the family, made per answer, past the same guards."""

from __future__ import annotations

import json
from dataclasses import dataclass

from medeval.accounts.auth import audit
from medeval.annotation import answer_rows, gold
from medeval.annotation.answer_input import StaleAnswer, StaleGrade
from medeval.annotation.answers.model import FLAGGED, QUESTIONS, SKIPPED, TIER, Answer
from medeval.annotation.tasks import state
from medeval.annotation.tasks.registry import get
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _


@dataclass(frozen=True)
class Target:
    """An assigned item as the guards and the write see it."""

    item_id: int
    campaign_id: int
    status: str  # the campaign's status
    kind: str = ""  # the campaign's kind (a task type)
    payload: dict | None = None  # a task item's payload and this annotator's layout
    layout: dict | None = None


def _one_question(answer: Answer) -> tuple[str, str | int]:
    if len(answer.value) != 1:
        raise MedevalError(_("a task answer gives one question's value at a time; got {n}: {questions}").format(
            n=len(answer.value), questions=", ".join(sorted(answer.value))[:120]))
    return next(iter(answer.value.items()))


class TierStore:
    family, action, kind, noun = "tier", "grade", TIER, "grade"
    closed = N_("this campaign is closed: grades can no longer be given or changed")  # (shown with _())
    elsewhere = N_("this item is not assigned to you")
    stale = StaleGrade

    def backend(self):
        return gold.TIER

    def lookup(self, db, user, item_id: int) -> Target | None:
        row = db.conn.execute("SELECT c.status, c.id FROM assignments a JOIN campaigns c ON c.id = a.campaign_id "
                              "WHERE a.item_id = ? AND a.user_id = ?", (item_id, user.id)).fetchone()
        return Target(item_id, row[1], row[0]) if row else None

    def saved(self, db, user, client_token: str) -> int | None:
        return answer_rows.saved(db, self.family, user.id, client_token)

    def needs_qualification(self, answer: Answer) -> bool:
        return True

    def current(self, db, user, target: Target):
        """(latest annotation row or None, its id: what a screen shows as its ``expected``)."""
        prev = db.conn.execute("SELECT id, tier, skipped, flagged, note FROM grade_annotations WHERE item_id = ? "
                               "AND user_id = ? ORDER BY id DESC LIMIT 1", (target.item_id, user.id)).fetchone()
        return prev, (prev[0] if prev else None)

    def write(self, db, user, target: Target, answer: Answer, client_token: str, current, at: float,
              guideline_version: int | None) -> int:
        prev = current
        skipped = answer.skipped
        new_id = answer_rows.insert(
            db, campaign_id=target.campaign_id, family=self.family, item_id=target.item_id, user_id=user.id,
            question=answer_rows.TIER_QUESTION, value=answer.value, status=answer.status, note=answer.note,
            client_token=client_token, supersedes=prev[0] if prev else None, guideline_version=guideline_version,
            created_at=at, fully_shown=answer.fully_shown)
        if prev:
            audit(db, user.username, "annotation.change", str(target.item_id),
                  {"from": "skipped" if prev[2] else prev[1], "to": "skipped" if skipped else answer.value,
                   "flagged": answer.flagged})
        return new_id


class TaskStore:
    family, action, kind, noun = "task", "task.answer", QUESTIONS, "answer"
    closed = N_("this campaign is closed: answers and flags can no longer be given or changed")
    elsewhere = N_("this item is not part of this campaign")
    stale = StaleAnswer

    def backend(self):
        return gold.TASK

    def lookup(self, db, user, item_id: int) -> Target | None:
        row = db.conn.execute(
            "SELECT ti.payload, a.layout, c.kind, c.status, c.id FROM task_assignments a JOIN task_items ti ON "
            "ti.id = a.item_id JOIN campaigns c ON c.id = a.campaign_id WHERE a.item_id = ? AND a.user_id = ?",
            (item_id, user.id)).fetchone()
        if row is None:
            return None
        return Target(item_id, row[4], row[3], row[2], json.loads(row[0]), json.loads(row[1]))

    def saved(self, db, user, client_token: str) -> int | None:
        return answer_rows.saved(db, self.family, user.id, client_token)

    def needs_qualification(self, answer: Answer) -> bool:
        return answer.status != FLAGGED  # a flag answers nothing: it reports a problem with the item

    def current(self, db, user, target: Target):
        """(the annotator's folded answers on the item, how many rows: what a screen shows as its ``revision``)."""
        st = state.latest(db, user.id, [target.item_id]).get(target.item_id, state.EMPTY)
        return st, st["rows"]

    def write(self, db, user, target: Target, answer: Answer, client_token: str, current, at: float,
              guideline_version: int | None) -> int:
        st, prev, item_id = current, None, target.item_id
        note = None
        if answer.flagged:
            question, value, note = state.FLAG, None, answer.note.strip()
        elif answer.skipped:
            question, value = state.SKIP, None
        else:
            question, value = _one_question(answer)
            qs = {q.id: q for q in get(target.kind).questions(target.payload, target.layout)}
            if question not in qs:
                raise MedevalError(_("no question {question} in this item").format(question=repr(question)))
            q = qs[question]
            value = q.option(str(value)).value
            open_part, _n = state.open_part(list(qs.values()), st["answers"])
            if q.part > open_part:
                raise MedevalError(_("part {part} opens once every question of part {open} has an answer").format(
                    part=q.part, open=open_part))
            prev = st["ids"].get(question)
            if prev is not None and st["answers"][question] == value:
                return prev  # the same answer again: nothing to record
        new_id = answer_rows.insert(
            db, campaign_id=target.campaign_id, family=self.family, item_id=item_id, user_id=user.id,
            question=question, value=None if value is None else str(value), status=answer.status, note=note,
            client_token=client_token, supersedes=prev, guideline_version=guideline_version, created_at=at,
            fully_shown=answer.fully_shown)
        if prev is not None:
            audit(db, user.username, "annotation.change", f"task_item:{item_id}",
                  {"question": question, "from": st["answers"][question], "to": value})
        return new_id


class GoldStore:
    """A gold item's answers (``gold_answers`` / ``task_gold_answers``, never the real answers), for the family of
    ``base`` (:data:`TIER_STORE` or :data:`TASK_STORE`), one gold item in one mode (qualification or hidden) and
    attempt: made per answer by :func:`medeval.annotation.answers.flow.submit_ref`, so that a gold answer passes
    the same guards as a real one -- the item is one of this campaign's gold items (``assigned``), the token,
    the campaign open, the guidelines, a hidden item's qualification, not stale -- then
    :func:`medeval.annotation.gold.submit_gold` checks the item is the annotator's to answer now and writes."""

    elsewhere = N_("this item is not part of this campaign")
    noun = "answer"

    def __init__(self, base, gold_id: int, mode: str, attempt: int | None):
        self.base, self.gold_id, self.mode, self.attempt = base, gold_id, mode, attempt
        self.family, self.action, self.kind, self.stale = base.family, base.action, base.kind, base.stale
        self.gold = base.backend()
        self.closed = self.gold.closed

    def backend(self):
        return self.gold

    def lookup(self, db, user, gold_id: int) -> Target | None:
        row = db.conn.execute(f"SELECT c.id, c.status, c.kind FROM {self.gold.tables[2]} g JOIN campaigns c ON "
                              "c.id = g.campaign_id WHERE g.id = ?", (gold_id,)).fetchone()
        return Target(gold_id, row[0], row[1], row[2]) if row else None

    def saved(self, db, user, client_token: str) -> int | None:
        token = gold.gold_token(self.mode, self.gold_id, self.attempt, client_token)
        return answer_rows.saved(db, self.family, user.id, token, gold=True)

    def needs_qualification(self, answer: Answer) -> bool:
        return self.mode == "hidden"  # (a flag too: hidden items come after the qualification)

    def current(self, db, user, target: Target):
        try:
            return gold.gold_current(db, user, target.item_id, self.mode, self.attempt, self.gold)
        except gold.StaleGoldAnswer as e:
            raise self.stale(str(e)) from None

    def write(self, db, user, target: Target, answer: Answer, client_token: str, current, at: float,
              guideline_version: int | None) -> tuple[int, str | None]:
        if self.family == "tier":
            value, skipped, note = answer.value, answer.skipped, answer.note
        else:
            value = _one_question(answer) if answer.kind == QUESTIONS else None
            skipped, note = answer.status == SKIPPED, (answer.note if answer.flagged else None)
        try:
            return gold.submit_gold(db, user, self.gold, target.campaign_id, target.item_id, self.mode, self.attempt,
                                    value=value, skipped=skipped, flagged=answer.flagged, note=note,
                                    token=gold.gold_token(self.mode, self.gold_id, self.attempt, client_token),
                                    guideline_version=guideline_version, at=at, fully_shown=answer.fully_shown)
        except gold.StaleGoldAnswer as e:
            raise self.stale(str(e)) from None


TIER_STORE = TierStore()
TASK_STORE = TaskStore()
