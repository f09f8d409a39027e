"""The guards every answer passes (to a real item or a gold one), one function each, written once for both
families (tier grading and task campaigns); :func:`medeval.annotation.answers.submit` runs them in this order
inside one transaction:
:func:`assigned` (exactly-k: the item is this annotator's), the guidelines version on screen exists,
:func:`already_saved` (a resubmission with the same client token returns the row it saved),
:func:`campaign_open`, :func:`acknowledged` (the current guidelines), :func:`qualified` (a required gold
qualification passed), :func:`not_stale` (the screen the answer came from is the current one). What differs
between the families -- their tables, their words -- comes from the family's store
(:mod:`medeval.annotation.answers.stores`); a gold item's answer passes them too, through a
:class:`medeval.annotation.answers.stores.GoldStore`."""

from __future__ import annotations

from medeval.annotation import gold
from medeval.annotation import guidelines as gl
from medeval.annotation.answer_input import ANY, StaleGrade  # noqa: F401 (re-exported)
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.i18n import N_, _

# a stale answer, in each family's noun (a store's ``noun``)
_STALE = {"grade": N_("the screen changed before this grade arrived: nothing was saved from it"),
          "answer": N_("the screen changed before this answer arrived: nothing was saved from it")}


def assigned(db, store, user, item_id: int, campaign_id: int | None = None):
    """The item's target (its campaign, status, what the store needs) if it is assigned to ``user`` -- in
    ``campaign_id`` when given; PermissionDenied otherwise."""
    target = store.lookup(db, user, item_id)
    if target is None:
        raise PermissionDenied(_("this item is not assigned to you"))
    if campaign_id is not None and target.campaign_id != campaign_id:
        raise PermissionDenied(_(store.elsewhere))
    return target


def already_saved(db, store, user, client_token: str) -> int | None:
    """The row a resubmission with this token saved before (so it is harmless: the same id again), or None."""
    return store.saved(db, user, client_token)


def campaign_open(store, target) -> None:
    """MedevalError (the family's words) once the campaign is closed."""
    if target.status != "open":
        raise MedevalError(_(store.closed))


def acknowledged(db, user, target) -> None:
    """:class:`medeval.annotation.guidelines.GuidelinesPending` until the current guidelines are acknowledged."""
    gl.require_acknowledged(db, user, target.campaign_id)


def qualified(db, user, store, target) -> None:
    """:class:`medeval.annotation.gold.QualificationPending` until a required qualification is passed."""
    gold.require_qualified(db, user, target.campaign_id, store.backend())


def not_stale(store, current, expected) -> None:
    """The family's stale error when the screen showed another state than ``current`` (the latest answer's id
    for a tier, the number of answers for a task item); nothing when ``expected`` is :data:`ANY`."""
    if expected is not ANY and current != expected:
        raise store.stale(_(_STALE[store.noun]))
