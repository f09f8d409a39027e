"""The one gold mechanism's interface, :class:`Backend`, and its tier-grading family (:data:`TIER`); the task
family is :class:`medeval.annotation.gold.task_backend.TaskBackend` (:data:`TASK`).

The qualification, the hidden plan, the answer guards and the accuracy figures are written once
(:mod:`.qualification`, :mod:`.hidden`, :mod:`.answers`, :mod:`.results`) and ask the backend what differs:
its tables, whether a gold item is answered and as expected (:meth:`Backend.outcome`), the annotator's real
progress, the hidden items begun, and the rows of a review. A tier gold item is answered by one tier; a task
gold item has several questions, answered one by one in parts like a real item, in a layout of the annotator's
own (response order, sides), seeded and stored with every answer.
"""

from __future__ import annotations

from medeval.accounts.auth import User
from medeval.annotation.answer_input import StaleAnswer
from medeval.annotation.gold.items import gold_item
from medeval.core.i18n import N_


class StaleGoldAnswer(StaleAnswer):
    """A tier gold answer given on a screen that has changed since: not saved."""


def _latest(db, user_id: int, gold_id: int, mode: str, attempt: int | None):
    """(id, tier, skipped, flagged, note, created_at) of the latest answer, or None."""
    return db.conn.execute("SELECT id, tier, skipped, flagged, note, created_at FROM gold_answers WHERE user_id = ? "
                           "AND gold_id = ? AND mode = ? AND attempt IS ? ORDER BY id DESC LIMIT 1",
                           (user_id, gold_id, mode, attempt)).fetchone()


def _expected(db, gold_id: int) -> int:
    return db.conn.execute("SELECT expected_tier FROM gold_items WHERE id = ?", (gold_id,)).fetchone()[0]


class Backend:
    """What the qualification, hidden-gold, answer and results flow needs to know of one family of campaigns.

    This class is tier grading (a gold item is answered by one tier); :class:`TaskBackend` is the task family
    (a gold item has questions, answered one by one, in parts).
    """

    family = "tier"
    tables = ("campaign_items", "assignments", "gold_items")  # real items, assignments, gold items
    answers = "gold_answers"  # where its gold answers go (never the real answers' table)
    action = "grade"  # the policy action that answers its gold items
    stale = StaleGoldAnswer  # raised for an answer from a screen that has changed
    in_order = False  # qualification items answered in the attempt's order only
    closed = N_("this campaign is closed: answers can no longer be given or changed")  # (shown with _())

    def outcome(self, db, user_id: int, gold_id: int, mode: str, attempt: int | None) -> bool | None:
        """None: not answered yet (not complete); True: answered as expected; False: otherwise (a skip too)."""
        a = _latest(db, user_id, gold_id, mode, attempt)
        return None if a is None else (not a[2] and a[1] == _expected(db, gold_id))

    def real_counts(self, db, user_id: int, campaign_id: int) -> tuple[int, int]:
        """(real items passed -- answered or skipped --, real items assigned) of the annotator: how far into the
        queue they are, which places the hidden gold items."""
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

    def hidden_skipped(self, db, user_id: int, campaign_id: int) -> list[int]:
        """Gold items whose latest hidden answer is a skip, in the order of their first answer."""
        return [r[0] for r in db.conn.execute(
            "SELECT a.gold_id FROM gold_answers a JOIN gold_items g ON g.id = a.gold_id WHERE a.user_id = ? AND "
            "g.campaign_id = ? AND a.mode = 'hidden' AND a.skipped = 1 AND a.id = (SELECT max(id) FROM gold_answers b "
            "WHERE b.user_id = a.user_id AND b.gold_id = a.gold_id AND b.mode = 'hidden') ORDER BY (SELECT min(id) "
            "FROM gold_answers c WHERE c.user_id = a.user_id AND c.gold_id = a.gold_id AND c.mode = 'hidden')",
            (user_id, campaign_id))]

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

    def review_rows(self, db, user: User, campaign_id: int, n: int, gold_id: int, attempt: int) -> list[dict]:
        """The review of one completed qualification item (the ``n``-th): the answer, the expected tier, the reason."""
        a = _latest(db, user.id, gold_id, "qualification", attempt)
        item = gold_item(db, gold_id)
        ref, raw = db.conn.execute("SELECT k.reference, r.raw FROM responses r JOIN kb_entries k ON k.id = r.kb_id "
                                   "WHERE r.id = ?", (item.response_id,)).fetchone()
        return [{"disease": item.disease, "aspect": item.aspect, "reference": ref, "response": raw,
                 "answer": None if a[2] else a[1], "skipped": bool(a[2]), "expected": item.expected_tier,
                 "correct": not a[2] and a[1] == item.expected_tier, "reason": item.reason}]


TIER = Backend()
