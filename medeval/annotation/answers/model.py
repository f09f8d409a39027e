"""The one answer model: an :class:`Answer` has a ``status`` (Argilla's response status: submitted, skipped,
flagged) and a typed ``value`` -- a tier 0/1/2 for tier grading, or a map of question ids to values for a task
campaign's questions (rubric scores, preference, claim verdicts) -- validated here, once, with the checks of
:mod:`medeval.annotation.answer_input`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from medeval.annotation.answer_input import check_tier, check_values
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import check_note

SUBMITTED, SKIPPED, FLAGGED = "submitted", "skipped", "flagged"
STATUSES = (SUBMITTED, SKIPPED, FLAGGED)
TIER, QUESTIONS = "tier", "questions"  # the two kinds of value


@dataclass(frozen=True)
class Answer:
    """One answer to one item, whichever family asked it.

    * ``submitted``: ``value`` is a tier (0, 1, 2) or a map {question id: value};
    * ``skipped``: no value (the item comes back at the end); a tier skip may carry a note;
    * ``flagged``: a problem with the item, said in ``note`` (required when the flag answers nothing); a tier
      flag may carry the grade given with it (``value`` a tier; None: skipped and flagged).

    ``fully_shown`` says what the screen showed when the answer was given: True when every text of the item was
    whole on screen (or each long one scrolled to its end), False when not, None when not known (the command line,
    the library, a change made from a list). It is recorded, never a reason to refuse the answer.

    Build one with :meth:`tier`, :meth:`questions`, :meth:`skip` or :meth:`flag`; a bad value raises
    MedevalError saying what is wrong, nothing is stored.
    """

    status: str = SUBMITTED
    value: int | Mapping | None = None
    note: str | None = None
    fully_shown: bool | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise MedevalError(f"an answer's status is one of {', '.join(STATUSES)}; got {str(self.status)[:30]!r}")
        value = self.value
        if self.status == SKIPPED and value is not None:
            raise MedevalError("a skipped answer has no value")
        if value is not None:
            value = MappingProxyType(check_values(value)) if isinstance(value, Mapping) else check_tier(value)
        if self.status == SUBMITTED and value is None:
            raise MedevalError("a submitted answer needs a value: a tier 0/1/2 or a map of questions to values")
        if self.status == FLAGGED and isinstance(value, Mapping):
            raise MedevalError(_("a flag says what is wrong with the item in its note; answer its questions "
                                 "apart"))
        note = self.note
        if note is not None:
            note = check_note(note, what=N_("the flag note"))
        if self.status == FLAGGED and value is None and not (note or "").strip():
            raise MedevalError(_("write a short note saying what is wrong with this item"))
        if self.fully_shown is not None and not isinstance(self.fully_shown, bool):
            raise MedevalError(f"fully_shown is True, False or None; got {str(self.fully_shown)[:30]!r}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "note", note)

    @property
    def kind(self) -> str | None:
        """``"tier"``, ``"questions"`` or None (a skip, or a flag with no grade): which family's value it holds."""
        if self.value is None:
            return None
        return QUESTIONS if isinstance(self.value, Mapping) else TIER

    @property
    def skipped(self) -> bool:
        """Nothing answered: a skip, or a flag with no grade."""
        return self.value is None

    @property
    def flagged(self) -> bool:
        return self.status == FLAGGED

    @classmethod
    def tier(cls, tier: int, *, flagged: bool = False, note: str | None = None) -> Answer:
        """A grade 0/1/2 (with ``flagged``: and a flag with ``note``)."""
        check_tier(tier)  # (None: the grade's own message, not a status's)
        return cls(FLAGGED if flagged else SUBMITTED, tier, note)

    @classmethod
    def questions(cls, values: Mapping, *, fully_shown: bool | None = None) -> Answer:
        """Answers to task questions: {question id: value} (``fully_shown``: whether the screen showed the texts
        the question needs in full)."""
        check_values(values)  # (not a map: the map's message, not a tier's)
        return cls(SUBMITTED, values, None, fully_shown)

    @classmethod
    def skip(cls, *, flagged: bool = False, note: str | None = None) -> Answer:
        """A skip (with ``flagged``: skipped and flagged, the note saying why)."""
        return cls(FLAGGED if flagged else SKIPPED, None, note)

    @classmethod
    def flag(cls, note: str) -> Answer:
        """A flag that answers nothing: ``note`` says what is wrong with the item."""
        return cls(FLAGGED, None, note)

    @classmethod
    def from_tier_form(cls, tier, *, skipped: bool = False, flagged: bool = False, note: str | None = None,
                       fully_shown: bool | None = None) -> Answer:
        """The answer the grading screen's arguments describe (a tier, or ``skipped``; ``flagged`` with a note;
        ``fully_shown``: whether the screen showed the item's whole text)."""
        if skipped:
            return cls(FLAGGED if flagged else SKIPPED, None, note, fully_shown)
        check_tier(tier)
        return cls(FLAGGED if flagged else SUBMITTED, tier, note, fully_shown)
