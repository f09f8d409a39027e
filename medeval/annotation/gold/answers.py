"""Gold answers, for both families: the screen's opaque references, the guards every gold answer passes (the
campaign open, the item the annotator's to answer now, a resubmission harmless, the guidelines acknowledged),
and recording one -- :func:`submit_gold` (a tier) and :func:`submit_gold_answer` (one question of a task gold
item), each with its family's own checks of the value and of a changed screen.

**Kept apart.** Gold answers go to ``gold_answers`` / ``task_gold_answers`` only, never to the real answers:
agreement statistics, calibration and every export read the latter, so gold answers cannot count there.
"""

from __future__ import annotations

import json

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation import guidelines as gl
from medeval.annotation.answer_input import check_tier_answer, check_time
from medeval.annotation.gold.backends import TIER, Backend, StaleGoldAnswer, _latest
from medeval.annotation.gold.hidden import display_id, hidden_plan
from medeval.annotation.gold.items import gold_item
from medeval.annotation.gold.qualification import _attempts, qualification_state, require_qualified
from medeval.annotation.gold.settings import TIER_NAMES, get_settings, require_gold_campaign
from medeval.annotation.gold.task_backend import TASK, _kind_payload, _rows, describe_on_screen, layout_for
from medeval.annotation.gold.task_items import task_gold_item
from medeval.annotation.screen_keys import screen_key
from medeval.annotation.tasks import state
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.limits import NAME_MAX_CHARS, check_note, check_text
from medeval.store.db import transaction


def parse_ref(ref: str) -> tuple[str, int, int | None]:
    """("real" | "qualification" | "hidden", item or gold id, attempt) of a screen's opaque reference
    ("i:<item>", "q:<gold>:<attempt>", "h:<gold>"), for tier and task items alike."""
    kind, _, rest = str(ref).partition(":")
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
        raise MedevalError("this answer refers to no item on your screen; reload the page") from None


def _check_turn(db, user: User, campaign_id: int, gold_id: int, mode: str, attempt: int | None,
                backend: Backend) -> None:
    """Refuse an answer to a gold item that is not ``user``'s to answer now (in this mode and attempt); a task
    campaign's qualification items come one at a time, in the attempt's order (``backend.in_order``)."""
    if mode == "qualification":
        q = qualification_state(db, user, campaign_id, backend)
        if q.status != "in_progress" or q.attempt != attempt or (backend.in_order and q.next_gold != gold_id):
            raise backend.stale("this qualification item is no longer on your screen: nothing was saved")
        if gold_id not in _attempts(db, user.id, campaign_id)[attempt - 1][1]:
            raise PermissionDenied("this item is not part of your qualification")
    elif mode == "hidden":
        require_qualified(db, user, campaign_id, backend)
        if gold_id not in hidden_plan(db, user, campaign_id, backend)[0]:
            raise PermissionDenied("this item is not assigned to you")
    else:
        raise MedevalError(f"unknown gold mode {mode!r}")


def _admit(db, user: User, campaign_id: int, gold_id: int, backend: Backend) -> None:
    """(In the answer's transaction) the campaign is open and ``gold_id`` is one of its gold items."""
    if require_gold_campaign(db, campaign_id, backend.family) != "open":
        raise MedevalError(backend.closed)
    if not db.conn.execute(f"SELECT 1 FROM {backend.tables[2]} WHERE id = ? AND campaign_id = ?",
                           (gold_id, campaign_id)).fetchone():
        raise PermissionDenied("this item is not part of this campaign")


def _duplicate(db, user: User, token: str, backend: Backend) -> int | None:
    """The answer already stored under this client token (a resubmission is harmless), or None."""
    row = db.conn.execute(f"SELECT id FROM {backend.answers} WHERE user_id = ? AND client_token = ?",
                          (user.id, token)).fetchone()
    return row[0] if row else None


def _token(mode: str, gold_id: int, attempt: int | None, client_token: str) -> str:
    return f"{mode}:{gold_id}:{attempt or 0}|{client_token}"


def submit_gold(db: sqlite_utils.Database, user: User, campaign_id: int, gold_id: int, mode: str, *,
                attempt: int | None, tier: int | None, client_token: str, skipped: bool = False,
                flagged: bool = False, note: str | None = None, expected_prior=None, at: float | None = None
                ) -> tuple[int, str | None]:
    """Record an answer to a tier gold item (never a grade); returns (answer id, feedback or None).

    Idempotent per client token. A qualification answer cannot be changed; a hidden one can (the new row
    supersedes the last), and ``expected_prior`` (the answer the screen showed, None for a new one) refuses an
    answer given on a screen that has changed since (:class:`StaleGoldAnswer`). Feedback ("the expected grade was
    ... : reason") comes back for a first hidden answer when the campaign enables it.
    """
    authorize(user, "grade")
    note, at = check_tier_answer(tier, skipped=skipped, client_token=client_token, note=note, at=at)
    token = _token(mode, gold_id, attempt, client_token)
    with transaction(db):
        _admit(db, user, campaign_id, gold_id, TIER)
        if (dup := _duplicate(db, user, token, TIER)) is not None:
            return dup, None
        gl.require_acknowledged(db, user, campaign_id)
        prev = _latest(db, user.id, gold_id, mode, attempt)
        if mode == "qualification" and prev:
            raise StaleGoldAnswer("this qualification item already has your answer: nothing was saved")
        if (prev[0] if prev else None) != expected_prior:
            raise StaleGoldAnswer("the screen changed before this answer arrived: nothing was saved from it")
        if prev is None:
            _check_turn(db, user, campaign_id, gold_id, mode, attempt, TIER)
        cur = db.conn.execute(
            "INSERT INTO gold_answers (gold_id, user_id, tier, skipped, flagged, note, mode, attempt, client_token, "
            "supersedes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (gold_id, user.id, None if skipped else tier, int(skipped), int(flagged), note, mode, attempt, token,
             prev[0] if prev else None, at))
        feedback = None
        if mode == "hidden" and prev is None and get_settings(db, campaign_id)["feedback"]:
            item = gold_item(db, gold_id)
            feedback = f"The expected grade was {TIER_NAMES[item.expected_tier]}: {item.reason}"
    return cur.lastrowid, feedback


def submit_gold_answer(db: sqlite_utils.Database, user: User, campaign_id: int, gold_id: int, mode: str, *,
                       attempt: int | None, question: str, value: str | None, client_token: str,
                       skipped: bool = False, revision: int | None = None, guideline_version: int | None = None,
                       note: str | None = None, at: float | None = None) -> tuple[int, str | None]:
    """Record one answer (a skip, or with ``note`` a flag) to a task gold item; returns (row id, feedback or None).

    The rules of a real answer (idempotent per token, parts in order, ``revision`` refuses an answer from a
    screen that has changed, guidelines acknowledged), plus: the item must be the annotator's to answer now;
    a qualification answer cannot be changed. ``feedback`` (the expected answers and the reason) comes back
    when a hidden gold item is done for the first time and the campaign enables it.
    """
    authorize(user, "task.answer")
    if mode not in ("qualification", "hidden"):
        raise MedevalError(f"unknown gold mode {str(mode)[:20]!r}")
    if not client_token:
        raise MedevalError("a client token is required (it makes a resubmission harmless)")
    check_text(client_token, what="the client token", max_chars=NAME_MAX_CHARS, allow_newlines=False)
    if note is not None:
        note = check_note(note, what="the flag note").strip()
        if not note:
            raise MedevalError("write a short note saying what is wrong with this item")
    at = check_time(at)
    token = _token(mode, gold_id, attempt, client_token)
    with transaction(db):
        _admit(db, user, campaign_id, gold_id, TASK)
        guideline_version = gl.check_version(db, campaign_id, guideline_version)
        if (dup := _duplicate(db, user, token, TASK)) is not None:
            return dup, None
        gl.require_acknowledged(db, user, campaign_id)
        rows = _rows(db, user.id, gold_id, mode, attempt)
        st = state.fold([r[:5] for r in rows]).get(gold_id, state.EMPTY)
        if revision is not None and revision != st["rows"]:
            raise state.StaleAnswer("the screen changed before this answer arrived: nothing was saved from it")
        t, payload, expected, _cid = _kind_payload(db, gold_id)
        layout = json.loads(rows[0][5]) if rows else layout_for(db, user, campaign_id, gold_id)
        was_done = state.complete(t, payload, layout, st["answers"])
        _check_turn(db, user, campaign_id, gold_id, mode, attempt, TASK)  # (a flag too: only the item on screen)
        prev = None
        if note is not None:
            question, value = state.FLAG, note
        elif skipped:
            question, value = state.SKIP, None
        else:
            qs = {q.id: q for q in t.questions(payload, layout)}
            if question not in qs:
                raise MedevalError(f"no question {str(question)[:60]!r} in this item")
            value = qs[question].option(str(value)).value
            part, _n = state.open_part(list(qs.values()), st["answers"])
            if qs[question].part > part:
                raise MedevalError(f"part {qs[question].part} opens once every question of part {part} has an answer")
            prev = st["ids"].get(question)
            if prev is not None and mode == "qualification":
                raise state.StaleAnswer("this qualification question already has your answer: nothing was saved")
            if prev is not None and st["answers"][question] == value:
                return prev, None
        cur = db.conn.execute(
            "INSERT INTO task_gold_answers (gold_id, user_id, question, value, skipped, mode, attempt, layout, "
            "client_token, supersedes, guideline_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (gold_id, user.id, question, value, int(skipped and note is None), mode, attempt, json.dumps(layout),
             token, prev, guideline_version, at))
        feedback = None
        if mode == "hidden" and not was_done and get_settings(db, campaign_id)["feedback"]:
            answers = {**st["answers"], **({question: value} if not skipped and note is None else {})}
            if state.complete(t, payload, layout, answers):
                g = task_gold_item(db, gold_id)
                feedback = ("Expected: " + "; ".join(describe_on_screen(t, payload, layout, expected))
                            + f". Why: {g.reason}")
    return cur.lastrowid, feedback


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
    """``user``'s latest hidden-gold answers: (gold id, answer id, tier, skipped, flagged, note, disease, aspect, at)."""
    return db.conn.execute(
        "SELECT a.gold_id, a.id, a.tier, a.skipped, a.flagged, a.note, k.disease, k.aspect, a.created_at FROM "
        "gold_answers a JOIN gold_items g ON g.id = a.gold_id JOIN responses r ON r.id = g.response_id JOIN "
        "kb_entries k ON k.id = r.kb_id WHERE a.user_id = ? AND g.campaign_id = ? AND a.mode = 'hidden' AND a.id = "
        "(SELECT max(id) FROM gold_answers b WHERE b.user_id = a.user_id AND b.gold_id = a.gold_id AND "
        "b.mode = 'hidden') ORDER BY a.created_at DESC, a.id DESC LIMIT ?", (user.id, campaign_id, limit)).fetchall()


def latest_hidden_id(db: sqlite_utils.Database, user: User, gold_id: int) -> int | None:
    a = _latest(db, user.id, gold_id, "hidden", None)
    return a[0] if a else None
