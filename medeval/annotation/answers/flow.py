"""The one submit path: :func:`submit` answers whatever a screen put in front of an annotator, tier grading or a
task campaign alike, by the item's opaque ``ref``; the shared guards run once (:mod:`.guards`), then the family's
store writes (:mod:`.stores`). A gold item's ref passes the same guards, then its family's gold store writes."""

from __future__ import annotations

from medeval.accounts.policy import authorize
from medeval.annotation import gold
from medeval.annotation import guidelines as gl
from medeval.annotation.answer_input import check_time, check_token
from medeval.annotation.answers import guards
from medeval.annotation.answers.guards import ANY
from medeval.annotation.answers.model import TIER, Answer
from medeval.annotation.answers.stores import TASK_STORE, TIER_STORE, GoldStore
from medeval.annotation.tasks.registry import is_task_kind
from medeval.core.errors import MedevalError
from medeval.core.i18n import _
from medeval.store.db import transaction

_WANTS = {TIER: "a tier 0/1/2", "questions": "a map of its questions to values"}


def store_for(db, campaign_id: int):
    """The store of the campaign's family (by its kind), or MedevalError for no such campaign."""
    row = db.conn.execute("SELECT kind FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    return TASK_STORE if is_task_kind(row[0]) else TIER_STORE


def _check(store, answer) -> Answer:
    if not isinstance(answer, Answer):
        raise MedevalError(f"an answer is an answers.Answer (Answer.tier, .questions, .skip, .flag); got "
                           f"{type(answer).__name__}")
    if answer.kind not in (None, store.kind):
        raise MedevalError(f"a {store.family} campaign's answer is {_WANTS[store.kind]}; got "
                           f"{_WANTS[answer.kind]}")
    return answer


def submit_item(db, user, store, item_id: int, answer: Answer, *, client_token: str, campaign_id: int | None = None,
                expected=ANY, guideline_version: int | None = None, at: float | None = None) -> int:
    """Record ``answer`` to a real item through ``store``'s family; returns the row id (the same id again for a
    resubmission with the same ``client_token``).

    ``expected``: what the screen showed (the latest grade's id, None for none, for a tier item; the item's
    revision for a task item); an answer from a screen that has changed since raises the family's
    :class:`medeval.annotation.answer_input.StaleAnswer`. ``guideline_version``: the version on screen (must
    exist; recorded). ``at``: when it was given (default now).
    """
    return _guarded(db, user, store, item_id, answer, client_token=client_token, campaign_id=campaign_id,
                    expected=expected, guideline_version=guideline_version, at=at)[0]


def _guarded(db, user, store, item_id: int, answer: Answer, *, client_token: str, campaign_id: int | None,
             expected, guideline_version: int | None, at: float | None) -> tuple[int, str | None]:
    """The guards, in order, then ``store``'s write: a real item's store or a gold item's
    (:class:`medeval.annotation.answers.stores.GoldStore`); (row id, feedback or None)."""
    authorize(user, store.action, db=db)
    _check(store, answer)
    check_token(client_token)
    at = check_time(at)
    with transaction(db):
        target = guards.assigned(db, store, user, item_id, campaign_id)
        guideline_version = gl.check_version(db, target.campaign_id, guideline_version)
        if (dup := guards.already_saved(db, store, user, client_token)) is not None:
            return dup, None
        guards.campaign_open(store, target)
        guards.acknowledged(db, user, target)
        if store.needs_qualification(answer):
            guards.qualified(db, user, store, target)
        current, revision = store.current(db, user, target)
        guards.not_stale(store, revision, expected)
        written = store.write(db, user, target, answer, client_token, current, at, guideline_version)
    return written if isinstance(written, tuple) else (written, None)


def submit_ref(db, user, store, campaign_id: int, ref: str, answer: Answer, *, client_token: str, expected=ANY,
               guideline_version: int | None = None, at: float | None = None) -> tuple[int, str | None]:
    """:func:`submit` with the family's store given (what the family's own functions call). A gold item's ref
    passes the same guards, in the same order, through a :class:`GoldStore` of the family."""
    _check(store, answer)
    mode, ident, attempt = gold.parse_ref(ref)  # ident: the real item's id, or the gold item's
    if mode != "real":
        store = GoldStore(store, ident, mode, attempt)
    return _guarded(db, user, store, ident, answer, client_token=client_token, campaign_id=campaign_id,
                    expected=expected, guideline_version=guideline_version, at=at)


def submit(db, user, campaign_id: int, ref: str, answer: Answer, *, client_token: str, expected=ANY,
           guideline_version: int | None = None, at: float | None = None) -> tuple[int, str | None]:
    """Answer whatever the annotator's screen put on it, by its ``ref``; returns (row id, feedback or None).

    The campaign's kind says the family: a tier grading campaign takes ``Answer.tier``/``skip``/``flag``
    (read back as ``grade_annotations``), a task campaign ``Answer.questions``/``skip``/``flag`` (``task_answers``);
    a gold item's ref goes to its family's gold answers (``feedback``: the expected answer after a hidden gold
    item, when the campaign enables it). Guards, in order: the item is assigned to ``user`` in this campaign,
    the guidelines version exists, a resubmitted ``client_token`` returns its row, the campaign is open, the
    guidelines are acknowledged, a required qualification is passed (not for a task flag), the screen is not
    stale (``expected``; not checked when left out). A gold item's answer passes the same guards in the same
    order (its "assigned": a gold item of this campaign; its qualification: for a hidden item only), then
    :func:`medeval.annotation.gold.submit_gold` checks it is the annotator's to answer now and writes it.
    """
    return submit_ref(db, user, store_for(db, campaign_id), campaign_id, ref, answer, client_token=client_token,
                      expected=expected, guideline_version=guideline_version, at=at)
