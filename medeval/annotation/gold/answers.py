"""Gold answers, for both families: the screen's opaque references, and recording one -- :func:`submit_gold`,
parameterised by the family's backend (a tier, or one question of a task gold item), once the shared guards of
``medeval.annotation.answers.submit`` have passed (the campaign open, a resubmission harmless by its token
(:func:`gold_token`), the guidelines acknowledged, a hidden item's qualification, not stale
(:func:`gold_current`)); what is gold's own: the item is the annotator's to answer now (:func:`check_turn`),
a qualification answer is final.

**Kept apart.** Gold answers go to ``gold_answers`` / ``task_gold_answers`` only, never to the real answers:
agreement statistics, calibration and every export read the latter, so gold answers cannot count there.
"""

from __future__ import annotations

import json

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation import answer_rows
from medeval.annotation.gold.backends import Backend, _latest
from medeval.annotation.gold.hidden import display_id, hidden_plan
from medeval.annotation.gold.items import gold_item
from medeval.annotation.gold.qualification import _attempts, qualification_state
from medeval.annotation.gold.settings import TIER_NAMES, get_settings
from medeval.annotation.gold.task_backend import TASK, _kind_payload, _rows, describe_on_screen, layout_for
from medeval.annotation.gold.task_items import task_gold_item
from medeval.annotation.screen_keys import screen_key
from medeval.annotation.tasks import state
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.i18n import _


def parse_ref(ref: str) -> tuple[str, int, int | None]:
    """("real" | "qualification" | "hidden", item or gold id, attempt) of a screen's opaque reference
    ("i:<item>", "q:<gold>:<attempt>", "h:<gold>"), for tier and task items alike."""
    kind, _sep, rest = str(ref).partition(":")
    try:
        if kind == "i":
            return "real", int(rest), None
        if kind == "q":
            g, a = (int(x) for x in rest.split(":"))
            return "qualification", g, a
        if kind == "h":
            return "hidden", int(rest), None
        raise ValueError(ref)
    except ValueError:
        raise MedevalError(_("this answer refers to no item on your screen; reload the page")) from None


def check_turn(db, user: User, campaign_id: int, gold_id: int, mode: str, attempt: int | None,
               backend: Backend) -> None:
    """Refuse an answer to a gold item that is not ``user``'s to answer now (in this mode and attempt); a task
    campaign's qualification items come one at a time, in the attempt's order (``backend.in_order``). (A hidden
    item's required qualification is the shared guard's: ``answers.guards.qualified``.)"""
    if mode == "qualification":
        q = qualification_state(db, user, campaign_id, backend)
        if q.status != "in_progress" or q.attempt != attempt or (backend.in_order and q.next_gold != gold_id):
            raise backend.stale(_("this qualification item is no longer on your screen: nothing was saved"))
        if gold_id not in _attempts(db, user.id, campaign_id)[attempt - 1][1]:
            raise PermissionDenied(_("this item is not part of your qualification"))
    elif mode == "hidden":
        if gold_id not in hidden_plan(db, user, campaign_id, backend)[0]:
            raise PermissionDenied(_("this item is not assigned to you"))
    else:
        raise MedevalError(f"unknown gold mode {str(mode)[:20]!r}")


def gold_token(mode: str, gold_id: int, attempt: int | None, client_token: str) -> str:
    """The client token as a gold answer stores it (a resubmission is recognised per item, mode and attempt)."""
    return f"{mode}:{gold_id}:{attempt or 0}|{client_token}"


def gold_current(db, user: User, gold_id: int, mode: str, attempt: int | None, backend: Backend):
    """(what the annotator's screen shows of the gold item, its revision: the latest answer's id for a tier item,
    the number of answer rows for a task item) -- what the shared ``not stale`` guard compares. A tier
    qualification answer is final: a second one raises ``backend.stale``."""
    if backend.family == "tier":
        prev = _latest(db, user.id, gold_id, mode, attempt)
        if mode == "qualification" and prev:
            raise backend.stale(_("this qualification item already has your answer: nothing was saved"))
        return prev, (prev[0] if prev else None)
    rows = _rows(db, user.id, gold_id, mode, attempt)
    st = state.fold([r[:5] for r in rows]).get(gold_id, state.EMPTY)
    return (rows, st), st["rows"]


def submit_gold(db: sqlite_utils.Database, user: User, backend: Backend, campaign_id: int, gold_id: int, mode: str,
                attempt: int | None, *, value, skipped: bool, flagged: bool, note: str | None, token: str,
                guideline_version: int | None, at: float, fully_shown: bool | None = None) -> tuple[int, str | None]:
    """Record an answer to a gold item of either family (``backend``: :data:`TIER` or :data:`TASK`), once the
    shared guards of ``answers.submit`` have passed (inside its transaction); returns (row id, feedback or None).

    ``value``: the tier (None for a skip) of a tier item; (question id, value) of a task item (None for a skip or
    a flag); ``token``: :func:`gold_token`. Checks what is gold's own: the item is the annotator's to answer now
    (:func:`check_turn`; a tier item's, on its first answer), a task qualification question is answered once,
    the question and its part. Gold answers go to ``backend.answers`` only, never to the real answers.
    ``feedback``: the expected answer, after a hidden item's first answer (a task item: once complete), when the
    campaign enables it.
    """
    authorize(user, backend.action, db=db)
    current, revision = gold_current(db, user, gold_id, mode, attempt, backend)
    if backend.family == "tier":
        if revision is None:
            check_turn(db, user, campaign_id, gold_id, mode, attempt, backend)
        return _write_tier(db, user, campaign_id, gold_id, mode, attempt, current, value, skipped, flagged, note,
                           token, guideline_version, at, fully_shown)
    check_turn(db, user, campaign_id, gold_id, mode, attempt, backend)  # (a flag too: only the item on screen)
    return _write_task(db, user, campaign_id, gold_id, mode, attempt, current, value, skipped, note, token,
                       guideline_version, at, fully_shown)


def _write_tier(db, user, campaign_id, gold_id, mode, attempt, prev, tier, skipped, flagged, note, token,
                guideline_version, at, fully_shown):
    status = answer_rows.status_of(skipped=skipped, flagged=flagged)
    new_id = answer_rows.insert(
        db, campaign_id=campaign_id, family=answer_rows.TIER_FAMILY, gold=True, item_id=gold_id, user_id=user.id,
        question=answer_rows.TIER_QUESTION, value=None if skipped else tier, status=status, note=note, mode=mode,
        attempt=attempt, client_token=token, supersedes=prev[0] if prev else None,
        guideline_version=guideline_version, created_at=at, fully_shown=fully_shown)
    feedback = None
    if mode == "hidden" and prev is None and get_settings(db, campaign_id)["feedback"]:
        item = gold_item(db, gold_id)
        feedback = _("The expected grade was {expected}: {reason}").format(
            expected=_(TIER_NAMES[item.expected_tier]), reason=item.reason)
    return new_id, feedback


def _write_task(db, user, campaign_id, gold_id, mode, attempt, current, value, skipped, note, token,
                guideline_version, at, fully_shown):
    rows, st = current
    t, payload, expected, _cid = _kind_payload(db, gold_id)
    layout = json.loads(rows[0][5]) if rows else layout_for(db, user, campaign_id, gold_id)
    was_done = state.complete(t, payload, layout, st["answers"])
    prev, flag = None, note is not None  # a task flag answers nothing: its note is the row
    if flag:
        question, value, note = state.FLAG, None, note.strip()
    elif skipped:
        question, value = state.SKIP, None
    else:
        question, value = value
        qs = {q.id: q for q in t.questions(payload, layout)}
        if question not in qs:
            raise MedevalError(_("no question {question} in this item").format(question=repr(str(question)[:60])))
        value = qs[question].option(str(value)).value
        part, _n = state.open_part(list(qs.values()), st["answers"])
        if qs[question].part > part:
            raise MedevalError(_("part {part} opens once every question of part {open} has an answer").format(
                part=qs[question].part, open=part))
        prev = st["ids"].get(question)
        if prev is not None and mode == "qualification":
            raise state.StaleAnswer(_("this qualification question already has your answer: nothing was saved"))
        if prev is not None and st["answers"][question] == value:
            return prev, None
    new_id = answer_rows.insert(
        db, campaign_id=campaign_id, family=answer_rows.TASK_FAMILY, gold=True, item_id=gold_id, user_id=user.id,
        question=question, value=None if value is None else str(value),
        status=answer_rows.status_of(skipped=skipped and not flag, flagged=flag), note=note, mode=mode,
        attempt=attempt, layout=json.dumps(layout), client_token=token, supersedes=prev,
        guideline_version=guideline_version, created_at=at, fully_shown=fully_shown)
    feedback = None
    if mode == "hidden" and not was_done and get_settings(db, campaign_id)["feedback"]:
        answers = {**st["answers"], **({question: value} if not skipped and not flag else {})}
        if state.complete(t, payload, layout, answers):
            g = task_gold_item(db, gold_id)
            feedback = _("Expected: {answers}. Why: {reason}").format(
                answers="; ".join(describe_on_screen(t, payload, layout, expected)), reason=g.reason)
    return new_id, feedback


def gold_view(db: sqlite_utils.Database, user: User, campaign_id: int, gold_id: int, mode: str,
              attempt: int | None) -> state.ItemView:
    """A gold item drawn exactly like a real one (its widgets' key: :func:`medeval.annotation.screen_keys.screen_key`)."""
    t, payload, _e, _c = _kind_payload(db, gold_id)
    layout = layout_for(db, user, campaign_id, gold_id)
    st = state.fold([r[:5] for r in _rows(db, user.id, gold_id, mode, attempt)]).get(gold_id, state.EMPTY)
    ref = f"q:{gold_id}:{attempt}" if mode == "qualification" else f"h:{gold_id}"
    return state.view(t, payload, layout, st, item_id=display_id(db, user, campaign_id, gold_id, TASK), ref=ref,
                      changeable=mode == "hidden", key=screen_key(db, user, ref, "task"))


def recent_hidden(db: sqlite_utils.Database, user: User, campaign_id: int, limit: int = 5) -> list[tuple]:
    """``user``'s latest hidden-gold answers: (gold id, answer id, tier, skipped, flagged, note, disease, aspect, at,
    the model's answer); ``limit`` -1: all."""
    return db.conn.execute(
        "SELECT a.gold_id, a.id, a.tier, a.skipped, a.flagged, a.note, k.disease, k.aspect, a.created_at, r.raw FROM "
        "gold_answers a JOIN gold_items g ON g.id = a.gold_id JOIN responses r ON r.id = g.response_id JOIN "
        "kb_entries k ON k.id = r.kb_id WHERE a.user_id = ? AND g.campaign_id = ? AND a.mode = 'hidden' AND a.id = "
        "(SELECT max(id) FROM gold_answers b WHERE b.user_id = a.user_id AND b.gold_id = a.gold_id AND "
        "b.mode = 'hidden') ORDER BY a.created_at DESC, a.id DESC LIMIT ?", (user.id, campaign_id, limit)).fetchall()


def latest_hidden_id(db: sqlite_utils.Database, user: User, gold_id: int) -> int | None:
    a = _latest(db, user.id, gold_id, "hidden", None)
    return a[0] if a else None
