"""The checks every answer goes through before anything is stored, the one place they are written: a tier
(``check_tier``), a map of task questions to values (``check_values``), a flag's note, the client token, the
answer's time; and :class:`StaleAnswer`, what an answer from a screen that has changed since raises in either
family. :class:`medeval.annotation.answers.Answer` validates itself with these, and ``answers.submit`` checks
the token and the time of every answer, to a real item or a gold one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import NAME_MAX_CHARS, check_number, check_text

TIER_MESSAGE = N_("a grade is 0 (completely wrong), 1 (partially correct) or 2 (basically correct)")


class StaleAnswer(MedevalError):
    """The answer was given on a screen that has changed since (another answer landed first): not saved.

    One type for both families: a tier grade's ``StaleGrade`` and a task answer's ``StaleAnswer`` are this."""


class StaleGrade(StaleAnswer):
    """The grade was given on a screen that has changed since (the item got another answer first): not saved."""


ANY = object()  # an answer's ``expected`` not given: the screen it came from is not checked for staleness


def check_time(at) -> float:
    """An answer's time (seconds since the epoch; None: now), or MedevalError -- for answers recorded after the
    fact, e.g. the demo's simulated sessions."""
    if at is None:
        return time.time()
    what = "the answer's time (at, seconds since the epoch)"
    if isinstance(at, str):  # a number only: check_number would parse text
        raise MedevalError(_("{what} must be a number in [0, inf); got {value} -- give a number of seconds").format(
            what=what, value=repr(at[:60])))
    return float(check_number(at, what=what, low=0))


def check_token(client_token) -> str:
    """The client token (required: it makes a resubmission harmless), or MedevalError."""
    if not client_token:
        raise MedevalError(_("a client token is required (it makes a resubmission harmless)"))
    check_text(client_token, what="the client token", max_chars=NAME_MAX_CHARS, allow_newlines=False)
    return client_token


def check_tier(tier) -> int:
    """A tier 0, 1 or 2 (an int; not a bool, not text), or MedevalError."""
    if isinstance(tier, (bool, str, bytes)) or tier not in (0, 1, 2):
        raise MedevalError(_(TIER_MESSAGE))
    return int(tier)


def check_values(values) -> dict[str, str | int]:
    """A map of task question ids to values (one question or more; values text or whole numbers), or
    MedevalError. Whether a value is one of the question's options is the task type's to say, when stored."""
    if not isinstance(values, Mapping) or not values:
        raise MedevalError(_("a task answer is a map of question ids to values, e.g. {example}; got {value}").format(
            example="{'accuracy': '3'}", value=repr(str(values)[:60])))
    out = {}
    for q, v in values.items():
        if not isinstance(q, str) or not q.strip():
            raise MedevalError(_("a question id is non-empty text; got {value}").format(value=repr(str(q)[:60])))
        check_text(q, what="the question id", max_chars=NAME_MAX_CHARS, allow_newlines=False)
        if v is None or isinstance(v, (bool, float)) or not isinstance(v, (str, int)):
            raise MedevalError(_("question {question} needs a value (one of its options, as text or a whole "
                                 "number); got {value}").format(question=repr(q[:60]), value=repr(str(v)[:60])))
        if isinstance(v, str):
            check_text(v, what=f"the value of question {q[:60]!r}", max_chars=NAME_MAX_CHARS, allow_newlines=False)
        out[q] = v
    return out

