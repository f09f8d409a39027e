"""Gold items in grading: the qualification round, hidden gold in the queue, gold answers, gold accuracy.

**Qualification.** When a campaign requires it (:mod:`medeval.annotation.gold_items` settings), an
annotator starts an attempt (:func:`start_attempt`): ``qualification_items`` gold items, chosen per
annotator and attempt from a seeded order (unseen ones first), frozen in ``gold_attempts`` with the pass
mark. They answer them like real items (a skip counts as not as expected). An attempt passes when the share
answered as expected reaches the pass mark; after a failed one the annotator sees the expected answers with
the guideline's reason (:func:`review`) and may start another while ``retries`` allow. No real item is given
or accepted until an attempt has passed (:func:`require_qualified`, called by the grading functions).

**Hidden gold.** ``hidden_share`` of an annotator's queue is gold (``round(share * R / (1 - share))``
items for R real items, at most the gold items they did not see in their qualification), each at most
once, at seeded positions per annotator and campaign (:func:`hidden_due`). On screen a gold item is drawn
exactly like a real one: the page keys every item's widgets, real or gold, by an opaque per-annotator key
(:func:`medeval.annotation.screen_keys.screen_key`) and answers through an opaque reference, so neither the
screen nor the page's element ids, keys or classes reveal it (its ``item_id`` on the server, :func:`display_id`,
is never drawn). The annotator's progress counts hidden gold items with the
real ones (total = real + planned hidden); the researcher's campaign progress counts real items only.

**Kept apart.** Gold answers go to ``gold_answers`` only, never to ``grade_annotations``: agreement
statistics, calibration and every export read the latter, so gold answers cannot count there.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import gold_items as gi
from medeval.annotation.answer_input import check_tier_answer
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.store.db import transaction

ANNOTATING_ROLES = ("annotator", "researcher", "admin")


class QualificationPending(MedevalError):
    """The campaign requires a qualification the annotator has not passed: no real item until they do."""


class StaleGoldAnswer(MedevalError):
    """A gold answer given on a screen that has changed since: not saved."""


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


def _seed(db, *key) -> random.Random:
    row = db.conn.execute("SELECT secret FROM app_secret WHERE id = 1").fetchone()
    text = "|".join(map(str, key)) + "|" + (row[0] if row else "")
    return random.Random(hashlib.sha256(text.encode()).hexdigest())


def _latest(db, user_id: int, gold_id: int, mode: str, attempt: int | None):
    """(id, tier, skipped, flagged, note, created_at) of the latest answer, or None."""
    return db.conn.execute("SELECT id, tier, skipped, flagged, note, created_at FROM gold_answers WHERE user_id = ? "
                           "AND gold_id = ? AND mode = ? AND attempt IS ? ORDER BY id DESC LIMIT 1",
                           (user_id, gold_id, mode, attempt)).fetchone()


def _expected(db, gold_id: int) -> int:
    return db.conn.execute("SELECT expected_tier FROM gold_items WHERE id = ?", (gold_id,)).fetchone()[0]


class Backend:
    """What the qualification and hidden-gold flow needs to know of one family of campaigns.

    This class is tier grading (a gold item is answered by one tier); task campaigns subclass it in
    :mod:`medeval.annotation.tasks.gold` (a gold item has questions, answered one by one).
    """

    family = "tier"
    tables = ("campaign_items", "assignments", "gold_items")  # real items, assignments, gold items

    def outcome(self, db, user_id: int, gold_id: int, mode: str, attempt: int | None) -> bool | None:
        """None: not answered yet (not complete); True: answered as expected; False: otherwise (a skip too)."""
        a = _latest(db, user_id, gold_id, mode, attempt)
        return None if a is None else (not a[2] and a[1] == _expected(db, gold_id))

    def real_counts(self, db, user_id: int, campaign_id: int) -> tuple[int, int]:
        """(real items done, real items assigned) of the annotator."""
        total = db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ? AND user_id = ?",
                                (campaign_id, user_id)).fetchone()[0]
        done = db.conn.execute("SELECT count(DISTINCT g.item_id) FROM grade_annotations g JOIN assignments a ON "
                               "a.item_id = g.item_id AND a.user_id = g.user_id WHERE a.campaign_id = ? AND "
                               "g.user_id = ?", (campaign_id, user_id)).fetchone()[0]
        return done, total

    def hidden_started(self, db, user_id: int, campaign_id: int) -> list[int]:
        """Gold items the annotator has begun answering in hidden mode, in the order of their first answer."""
        return [r[0] for r in db.conn.execute(
            "SELECT a.gold_id FROM gold_answers a JOIN gold_items g ON g.id = a.gold_id WHERE a.user_id = ? AND "
            "g.campaign_id = ? AND a.mode = 'hidden' GROUP BY a.gold_id ORDER BY min(a.id)", (user_id, campaign_id))]

    def hidden_rows(self, db, user_id: int, campaign_id: int) -> list[tuple[bool | None, float]]:
        """Per hidden gold item answered (not retired), in order: (as expected, None for a skip; when)."""
        rows = db.conn.execute(
            "SELECT a.tier, a.skipped, g.expected_tier, a.created_at FROM gold_answers a JOIN gold_items g ON g.id = "
            "a.gold_id WHERE a.user_id = ? AND g.campaign_id = ? AND a.mode = 'hidden' AND NOT EXISTS (SELECT 1 FROM "
            "gold_retired x WHERE x.gold_id = g.id) AND a.id = (SELECT max(id) FROM gold_answers b WHERE b.user_id = "
            "a.user_id AND b.gold_id = a.gold_id AND b.mode = 'hidden') ORDER BY (SELECT min(id) FROM gold_answers c "
            "WHERE c.user_id = a.user_id AND c.gold_id = a.gold_id AND c.mode = 'hidden')",
            (user_id, campaign_id)).fetchall()
        return [(None if sk else t == e, at) for t, sk, e, at in rows]


TIER = Backend()


# ---------------------------------------------------------------- qualification


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
    s = gi.get_settings(db, campaign_id)
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
        raise QualificationPending("this campaign starts with a qualification round of gold items: pass it "
                                   f"({q.items} items, pass mark {q.pass_mark:.0%}) before grading; nothing was saved")


def start_attempt(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER) -> int:
    """Start the next qualification attempt (its gold items frozen); returns its number.

    Refused when no qualification is needed, an attempt is in progress or passed, or no retry is left.
    """
    authorize(user, "grade")
    status = gi.require_gold_campaign(db, campaign_id, backend.family)
    if not db.conn.execute(f"SELECT 1 FROM {backend.tables[1]} WHERE campaign_id = ? AND user_id = ?",
                           (campaign_id, user.id)).fetchone():
        raise PermissionDenied("no items of this campaign are assigned to you")
    if status != "open":
        raise MedevalError("this campaign is closed: the qualification can no longer be taken")
    with transaction(db):
        q = qualification_state(db, user, campaign_id, backend)
        if q.status in ("not_required", "passed", "in_progress"):
            return q.attempt
        if q.status == "failed_final":
            raise MedevalError(f"no attempts left ({1 + q.retries} allowed); ask the campaign's researcher")
        pool = gi.active_gold_ids(db, campaign_id)
        if len(pool) < q.items:
            raise MedevalError(f"the qualification needs {q.items} gold items but the campaign has {len(pool)}; "
                               "ask the campaign's researcher to mark more")
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


def review(db: sqlite_utils.Database, user: User, campaign_id: int, attempt: int | None = None) -> list[dict]:
    """The items of one of ``user``'s completed attempts (default: the latest) with their answer, the expected
    tier and the guideline's reason -- shown after the attempt, to learn from before a retry."""
    authorize(user, "grade")
    att = {a: ids for a, ids, _p in _attempts(db, user.id, campaign_id)}
    if not att:
        return []
    attempt = max(att) if attempt is None else attempt
    if attempt not in att:
        raise MedevalError(f"you have no qualification attempt {attempt} in this campaign")
    out = []
    for g in att[attempt]:
        a = _latest(db, user.id, g, "qualification", attempt)
        if a is None:
            raise MedevalError("finish the attempt first: the expected answers are shown after its last item")
        item = gi.gold_item(db, g)
        ref, raw = db.conn.execute("SELECT k.reference, r.raw FROM responses r JOIN kb_entries k ON k.id = r.kb_id "
                                   "WHERE r.id = ?", (item.response_id,)).fetchone()
        out.append({"disease": item.disease, "aspect": item.aspect, "reference": ref, "response": raw,
                    "answer": None if a[2] else a[1], "skipped": bool(a[2]), "expected": item.expected_tier,
                    "correct": not a[2] and a[1] == item.expected_tier, "reason": item.reason})
    return out


# ---------------------------------------------------------------- hidden gold


def hidden_plan(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER, *,
                real_counts: tuple[int, int] | None = None) -> tuple[list[int], list[int]]:
    """(the hidden gold items of ``user`` in order, their positions in the queue of real + hidden items).

    Deterministic: seeded per annotator and campaign; the same gold set and assignment give the same plan.
    ``real_counts``: (done, total) of the annotator's real items, when the caller has them already.
    """
    share = gi.get_settings(db, campaign_id)["hidden_share"]
    started = backend.hidden_started(db, user.id, campaign_id)
    if share <= 0:
        return started, []
    _done, real = real_counts or backend.real_counts(db, user.id, campaign_id)
    if real == 0:
        return started, []
    seen = {g for _a, ids, _p in _attempts(db, user.id, campaign_id) for g in ids}
    rng = _seed(db, "hidden", campaign_id, user.id)
    pool = [g for g in gi.active_gold_ids(db, campaign_id) if g not in seen]
    rng.shuffle(pool)  # (the whole pool, answered ones too: the order does not move as answers come in)
    want = min(round(share * real / (1 - share)), len(set(pool) | set(started)))
    order = started + [g for g in pool if g not in started][:max(want - len(started), 0)]
    slots = sorted(rng.sample(range(real + len(order)), len(order)))
    return order, slots


def _hidden_done(db, user: User, campaign_id: int, order: list[int], backend: Backend) -> set[int]:
    return {g for g in order if backend.outcome(db, user.id, g, "hidden", None) is not None}


def hidden_counts(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER
                  ) -> tuple[int, int]:
    """(hidden gold items answered, hidden gold items planned) for ``user``."""
    order, _ = hidden_plan(db, user, campaign_id, backend)
    return len(_hidden_done(db, user, campaign_id, order, backend)), len(order)


def hidden_now(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER, *,
               real_counts: tuple[int, int] | None = None) -> tuple[int | None, int, int]:
    """(the gold item to show ``user`` now instead of their next real item or None, hidden gold items answered,
    hidden gold items planned): :func:`hidden_due` and :func:`hidden_counts` from one plan. One begun and not
    finished comes first. ``real_counts``: as :func:`hidden_plan`."""
    order, slots = hidden_plan(db, user, campaign_id, backend, real_counts=real_counts)
    answered = _hidden_done(db, user, campaign_id, order, backend)
    if len(answered) >= len(order):
        return None, len(answered), len(order)
    nxt = next(g for g in order if g not in answered)
    if nxt in backend.hidden_started(db, user.id, campaign_id):
        return nxt, len(answered), len(order)
    done, real = real_counts or backend.real_counts(db, user.id, campaign_id)
    here = done + len(answered)
    due = len(answered) < sum(1 for s in slots if s <= here) or done >= real
    return (nxt if due else None), len(answered), len(order)


def hidden_due(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER) -> int | None:
    """The gold item to show ``user`` now instead of their next real item, or None (see :func:`hidden_now`)."""
    return hidden_now(db, user, campaign_id, backend)[0]


def display_id(db: sqlite_utils.Database, user: User, campaign_id: int, gold_id: int, backend: Backend = TIER) -> int:
    """A gold item's ``item_id`` on the server (a ``BlindItem``'s, a ``GivenGrade``'s; never drawn: the screen keys
    items by :func:`medeval.annotation.screen_keys.screen_key`): from the campaign's item-id range where it can,
    never one of the annotator's own items, distinct per gold item, seeded and stable."""
    items, assigned, golds_table = backend.tables
    ids = db.conn.execute(f"SELECT min(id), max(id) FROM {items} WHERE campaign_id = ?", (campaign_id,)).fetchone()
    mine = {r[0] for r in db.conn.execute(f"SELECT item_id FROM {assigned} WHERE campaign_id = ? AND user_id = ?",
                                          (campaign_id, user.id))}
    golds = [r[0] for r in db.conn.execute(f"SELECT id FROM {golds_table} WHERE campaign_id = ? ORDER BY id",
                                           (campaign_id,))]
    lo, hi = (ids[0] or 1), (ids[1] or 1)
    rng = _seed(db, "display", campaign_id, user.id)
    inside = [i for i in range(lo, hi + 1) if i not in mine]
    rng.shuffle(inside)
    n = golds.index(gold_id)  # (gold items are append-only: an item's place in this list never changes)
    return inside[n] if n < len(inside) else hi + 1 + n - len(inside)


# ---------------------------------------------------------------- answers


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


def _check_gold_ref(db, user: User, campaign_id: int, gold_id: int, mode: str, attempt: int | None) -> None:
    """Refuse an answer to a gold item that is not ``user``'s to answer now (in this mode and attempt)."""
    if mode == "qualification":
        q = qualification_state(db, user, campaign_id)
        if q.status != "in_progress" or q.attempt != attempt:
            raise StaleGoldAnswer("this qualification item is no longer on your screen: nothing was saved")
        if gold_id not in _attempts(db, user.id, campaign_id)[attempt - 1][1]:
            raise PermissionDenied("this item is not part of your qualification")
    elif mode == "hidden":
        require_qualified(db, user, campaign_id)
        if gold_id not in hidden_plan(db, user, campaign_id)[0]:
            raise PermissionDenied("this item is not assigned to you")
    else:
        raise MedevalError(f"unknown gold mode {mode!r}")


def submit_gold(db: sqlite_utils.Database, user: User, campaign_id: int, gold_id: int, mode: str, *,
                attempt: int | None, tier: int | None, client_token: str, skipped: bool = False,
                flagged: bool = False, note: str | None = None, expected_prior=None, at: float | None = None
                ) -> tuple[int, str | None]:
    """Record an answer to a gold item (never a grade); returns (answer id, feedback or None).

    Idempotent per client token. A qualification answer cannot be changed; a hidden one can (the new row
    supersedes the last), and ``expected_prior`` (the answer the screen showed, None for a new one) refuses an
    answer given on a screen that has changed since (:class:`StaleGoldAnswer`). Feedback ("the expected grade was
    ... : reason") comes back for a first hidden answer when the campaign enables it.
    """
    authorize(user, "grade")
    note, at = check_tier_answer(tier, skipped=skipped, client_token=client_token, note=note, at=at)
    token = f"{mode}:{gold_id}:{attempt or 0}|{client_token}"
    with transaction(db):
        if gi.require_gold_campaign(db, campaign_id) != "open":
            raise MedevalError("this campaign is closed: answers can no longer be given or changed")
        if not db.conn.execute("SELECT 1 FROM gold_items WHERE id = ? AND campaign_id = ?",
                               (gold_id, campaign_id)).fetchone():
            raise PermissionDenied("this item is not part of this campaign")
        dup = db.conn.execute("SELECT id FROM gold_answers WHERE user_id = ? AND client_token = ?",
                              (user.id, token)).fetchone()
        if dup:
            return dup[0], None
        from medeval.annotation import guidelines as gl

        gl.require_acknowledged(db, user, campaign_id)
        prev = _latest(db, user.id, gold_id, mode, attempt)
        if mode == "qualification" and prev:
            raise StaleGoldAnswer("this qualification item already has your answer: nothing was saved")
        if (prev[0] if prev else None) != expected_prior:
            raise StaleGoldAnswer("the screen changed before this answer arrived: nothing was saved from it")
        if prev is None:
            _check_gold_ref(db, user, campaign_id, gold_id, mode, attempt)
        cur = db.conn.execute(
            "INSERT INTO gold_answers (gold_id, user_id, tier, skipped, flagged, note, mode, attempt, client_token, "
            "supersedes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (gold_id, user.id, None if skipped else tier, int(skipped), int(flagged), note, mode, attempt, token,
             prev[0] if prev else None, at))
        feedback = None
        if mode == "hidden" and prev is None and gi.get_settings(db, campaign_id)["feedback"]:
            item = gi.gold_item(db, gold_id)
            feedback = f"The expected grade was {gi.TIER_NAMES[item.expected_tier]}: {item.reason}"
    return cur.lastrowid, feedback


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
