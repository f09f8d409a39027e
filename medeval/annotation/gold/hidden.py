"""Hidden gold in the queue, for both families: ``hidden_share`` of an annotator's queue is gold
(``round(share * R / (1 - share))`` items for R real items, at most the gold items they did not see in their
qualification), each at most once, at seeded positions per annotator and campaign (:func:`hidden_due`). On screen
a gold item is drawn exactly like a real one: the page keys every item's widgets, real or gold, by an opaque
per-annotator key (:func:`medeval.annotation.screen_keys.screen_key`) and answers through an opaque reference, so
neither the screen nor the page's element ids, keys or classes reveal it (its ``item_id`` on the server,
:func:`display_id`, is never drawn). The annotator's progress counts hidden gold items with the real ones
(total = real + planned hidden), and a skipped one as skipped: it comes back with the skipped real items, in
the queue's own order (:func:`revisit_queue`); the researcher's campaign progress counts real items only.
"""

from __future__ import annotations

import sqlite_utils

from medeval.accounts.auth import User
from medeval.annotation.gold.backends import TIER, Backend
from medeval.annotation.gold.qualification import _attempts
from medeval.annotation.gold.settings import _seed, active_gold_ids, get_settings


def hidden_plan(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER, *,
                real_counts: tuple[int, int] | None = None) -> tuple[list[int], list[int]]:
    """(the hidden gold items of ``user`` in order, their positions in the queue of real + hidden items).

    Deterministic: seeded per annotator and campaign; the same gold set and assignment give the same plan.
    ``real_counts``: (done, total) of the annotator's real items, when the caller has them already.
    """
    share = get_settings(db, campaign_id)["hidden_share"]
    started = backend.hidden_started(db, user.id, campaign_id)
    if share <= 0:
        return started, []
    _done, real = real_counts or backend.real_counts(db, user.id, campaign_id)
    if real == 0:
        return started, []
    seen = {g for _a, ids, _p in _attempts(db, user.id, campaign_id) for g in ids}
    rng = _seed(db, "hidden", campaign_id, user.id)
    pool = [g for g in active_gold_ids(db, campaign_id) if g not in seen]
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


def hidden_skipped(db: sqlite_utils.Database, user: User, campaign_id: int, backend: Backend = TIER) -> list[int]:
    """The hidden gold items ``user`` skipped and has not answered since, in the order of their first answer: they
    count as skipped and come back when the skipped items are revisited, like skipped real items."""
    return backend.hidden_skipped(db, user.id, campaign_id)


def revisit_queue(db: sqlite_utils.Database, user: User, campaign_id: int, skipped_real: list[int],
                  backend: Backend = TIER) -> list[str]:
    """The refs of the items to go back to, real (``"i:<id>"``, of ``skipped_real``) and hidden gold (``"h:<id>"``,
    :func:`hidden_skipped`) alike, in the one order the queue gave them first: the real items in their assignment
    order with each gold item at its planned position among them (:func:`hidden_plan`). So a skipped gold item comes
    back exactly where a skipped real item at that point of the queue would, and the revisit's order tells nothing."""
    gold_skipped = backend.hidden_skipped(db, user.id, campaign_id)
    if not gold_skipped:  # (the common case: the real items' own order, without the plan)
        return [f"i:{i}" for i in skipped_real]
    order, slots = hidden_plan(db, user, campaign_id, backend)
    _items, assigned, _golds = backend.tables
    real = iter([r[0] for r in db.conn.execute(
        f"SELECT item_id FROM {assigned} WHERE campaign_id = ? AND user_id = ? ORDER BY position",
        (campaign_id, user.id))])
    at = dict(zip(slots, order))
    queue = [f"h:{at[k]}" if k in at else f"i:{next(real, None)}" for k in range(max(slots, default=-1) + 1)]
    queue += [f"i:{i}" for i in real] + [f"h:{g}" for g in order[len(at):]]  # (a plan without slots: at the end)
    wanted = {f"i:{i}" for i in skipped_real} | {f"h:{g}" for g in gold_skipped}
    out = [r for r in queue if r in wanted]
    return out + sorted(wanted - set(out))  # (none left in practice: every answered gold item is in the plan)


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
