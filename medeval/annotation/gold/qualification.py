"""The qualification round, for both families (the backend says what an answer as expected is).

**Qualification.** When a campaign requires it (:mod:`.settings`), an
annotator starts an attempt (:func:`start_attempt`): ``qualification_items`` gold items, chosen per
annotator and attempt from a seeded order (unseen ones first), frozen in ``gold_attempts`` with the pass
mark. They answer them like real items (a skip counts as not as expected). An attempt passes when the share
answered as expected reaches the pass mark; after a failed one the annotator sees the expected answers with
the guideline's reason (:func:`review`) and may start another while ``retries`` allow. No real item is given
or accepted until an attempt has passed (:func:`require_qualified`, called by the grading and task-answering functions).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation.gold.backends import TIER, Backend
from medeval.annotation.gold.settings import _seed, active_gold_ids, get_settings, require_gold_campaign
from medeval.core.display import percent
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.i18n import _
from medeval.store.db import transaction


class QualificationPending(MedevalError):
    """The campaign requires a qualification the annotator has not passed: no real item until they do."""


@dataclass(frozen=True)
class QualificationState:
    status: str  # not_required | not_started | in_progress | passed | failed_retry | failed_final
    items: int
    pass_mark: float
    retries: int
    attempt: int  # the latest attempt (0: none yet)
    attempts_left: int  # attempts that may still be started
    next_gold: int | None  # the next gold item of the attempt in progress
    answered: int  # answers in the latest attempt
    results: tuple[dict, ...]  # per attempt: attempt, items, answered, correct, share, complete, passed

    @property
    def cleared(self) -> bool:
        return self.status in ("not_required", "passed")


def _attempts(db, user_id: int, campaign_id: int) -> list[tuple[int, list[int], float]]:
    return [(a, json.loads(ids), pm) for a, ids, pm in db.conn.execute(
        "SELECT attempt, gold_ids, pass_mark FROM gold_attempts WHERE campaign_id = ? AND user_id = ? ORDER BY "
        "attempt", (campaign_id, user_id))]


def _result(db, user_id: int, attempt: int, ids: list[int], pass_mark: float, backend: Backend = TIER) -> dict:
    answered = correct = 0
    for g in ids:
        o = backend.outcome(db, user_id, g, "qualification", attempt)
        if o is not None:
            answered += 1
            correct += int(o)
    complete = answered == len(ids)
    share = correct / len(ids) if ids else 0.0
    return {"attempt": attempt, "items": len(ids), "answered": answered, "correct": correct, "share": share,
            "pass_mark": pass_mark, "complete": complete, "passed": complete and share >= pass_mark - 1e-9}


def qualification_state(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER
                        ) -> QualificationState:
    """Where ``user`` stands with the campaign's qualification."""
    s = get_settings(db, campaign_id)
    att = _attempts(db, user.id, campaign_id)
    results = tuple(_result(db, user.id, a, ids, pm, backend) for a, ids, pm in att)
    allowed = 1 + s["retries"]
    left = max(allowed - len(att), 0)
    base = {"items": s["qualification_items"], "pass_mark": s["pass_mark"], "retries": s["retries"],
            "attempt": len(att), "attempts_left": left, "results": results}
    if any(r["passed"] for r in results):
        return QualificationState("passed", next_gold=None, answered=results[-1]["answered"], **base)
    if not s["qualification_required"]:
        return QualificationState("not_required", next_gold=None, answered=0, **base)
    if not att:
        return QualificationState("not_started", next_gold=None, answered=0, **base)
    last = results[-1]
    if not last["complete"]:
        nxt = next(g for g in att[-1][1] if backend.outcome(db, user.id, g, "qualification", att[-1][0]) is None)
        return QualificationState("in_progress", next_gold=nxt, answered=last["answered"], **base)
    return QualificationState("failed_retry" if left else "failed_final", next_gold=None,
                              answered=last["answered"], **base)


def require_qualified(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER) -> None:
    """QualificationPending while the campaign requires a qualification ``user`` has not passed."""
    q = qualification_state(db, user, campaign_id, backend)
    if not q.cleared:
        raise QualificationPending(_("this campaign starts with a qualification round of gold items: pass it "
                                     "({items} items, pass mark {mark}) before grading; nothing was saved").format(
            items=q.items, mark=percent(q.pass_mark)))


def start_attempt(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER) -> int:
    """Start the next qualification attempt (its gold items frozen); returns its number.

    Refused when no qualification is needed, an attempt is in progress or passed, or no retry is left.
    """
    authorize(user, "grade", db=db)
    status = require_gold_campaign(db, campaign_id, backend.family)
    if not db.conn.execute(f"SELECT 1 FROM {backend.tables[1]} WHERE campaign_id = ? AND user_id = ?",
                           (campaign_id, user.id)).fetchone():
        raise PermissionDenied(_("no items of this campaign are assigned to you"))
    if status != "open":
        raise MedevalError(_("this campaign is closed: the qualification can no longer be taken"))
    with transaction(db):
        q = qualification_state(db, user, campaign_id, backend)
        if q.status in ("not_required", "passed", "in_progress"):
            return q.attempt
        if q.status == "failed_final":
            raise MedevalError(_("no attempts left ({n} allowed); ask the campaign's researcher").format(
                n=1 + q.retries))
        pool = active_gold_ids(db, campaign_id)
        if len(pool) < q.items:
            raise MedevalError(_("the qualification needs {items} gold items but the campaign has {n}; ask the "
                                 "campaign's researcher to mark more").format(items=q.items, n=len(pool)))
        seen = {g for _a, ids, _p in _attempts(db, user.id, campaign_id) for g in ids}
        rng = _seed(db, "qualification", campaign_id, user.id, q.attempt + 1)
        rng.shuffle(pool)
        chosen = ([g for g in pool if g not in seen] + [g for g in pool if g in seen])[:q.items]
        rng.shuffle(chosen)
        db.conn.execute("INSERT INTO gold_attempts (campaign_id, user_id, attempt, gold_ids, pass_mark, started_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (campaign_id, user.id, q.attempt + 1, json.dumps(chosen),
                                                      q.pass_mark, time.time()))
        audit(db, user.username, "gold.qualification.start", f"campaign:{campaign_id}", {"attempt": q.attempt + 1})
    return q.attempt + 1


def review(db: sqlite_utils.Database, user: User, campaign_id: int, attempt: int | None = None,
           backend: Backend = TIER) -> list[dict]:
    """The items of one of ``user``'s completed attempts (default: the latest) with their answer, the expected
    answer and the guideline's reason -- shown after the attempt, to learn from before a retry. Tier: one row per
    item; task: one row per expected answer, as the annotator saw the item (:meth:`Backend.review_rows`)."""
    authorize(user, backend.action, db=db)
    att = {a: ids for a, ids, _p in _attempts(db, user.id, campaign_id)}
    if not att:
        return []
    attempt = max(att) if attempt is None else attempt
    if attempt not in att:
        raise MedevalError(_("you have no qualification attempt {attempt} in this campaign").format(attempt=attempt))
    out = []
    for n, g in enumerate(att[attempt], start=1):
        if backend.outcome(db, user.id, g, "qualification", attempt) is None:
            raise MedevalError(_("finish the attempt first: the expected answers are shown after its last item"))
        out.extend(backend.review_rows(db, user, campaign_id, n, g, attempt))
    return out
