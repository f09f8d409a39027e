"""The checks every tier answer goes through before anything is stored: a real grade
(``campaigns.submit_grade``) and an answer to a gold item (``gold.submit_gold``) alike; the time check is
shared with task gold answers too."""

from __future__ import annotations

import time

from medeval.core.errors import MedevalError
from medeval.core.limits import NAME_MAX_CHARS, check_note, check_number, check_text


def check_time(at) -> float:
    """An answer's time (seconds since the epoch; None: now), or MedevalError -- for answers recorded after the
    fact, e.g. the demo's simulated sessions."""
    if at is None:
        return time.time()
    what = "the answer's time (at, seconds since the epoch)"
    if isinstance(at, str):  # a number only: check_number would parse text
        raise MedevalError(f"{what} must be a number in [0, inf); got {at[:60]!r} -- give a number of seconds")
    return float(check_number(at, what=what, low=0))


def check_tier_answer(tier, *, skipped: bool, client_token: str, note: str | None,
                      at: float | None) -> tuple[str | None, float]:
    """The flag note (checked) and the answer's time (default now), or MedevalError saying what is wrong.

    ``at``: when the answer was given (seconds since the epoch) -- for answers recorded after the fact, e.g.
    the demo's simulated grading sessions.
    """
    at = check_time(at)
    if not skipped and tier not in (0, 1, 2):
        raise MedevalError("a grade is 0 (completely wrong), 1 (partially correct) or 2 (basically correct)")
    if not client_token:
        raise MedevalError("a client token is required (it makes a resubmission harmless)")
    check_text(client_token, what="the client token", max_chars=NAME_MAX_CHARS, allow_newlines=False)
    if note is not None:
        note = check_note(note, what="the flag note")
    return note, at
