"""Demo gold items for a task campaign: expected answers on the AccR campaign, hidden gold answered by doctor2/3.

DEMO DATA -- NOT CLINICAL ADVICE. The expected answers are SIMULATED: an AccR item is a knowledge item (factual +
counterfactual claim, a question each); a claim in :data:`medeval.demo.tasks.BAD_REASONS` (the project's own
fact-check answers written with a reason that does not support the verdict) is expected "no", every other claim
"yes"; nobody checked them.

- :data:`medeval.demo.tasks.ACCR_CAMPAIGN` ("Demo: do the reasons hold?"): :data:`GOLD_ITEMS` gold items drawn
  (seeded) from the knowledge items of the campaign's data that are not its real items (``per_model`` takes fewer
  items than the data has), up to :data:`BAD_GOLD` of them with a bad reason, the rest good ones; about 15% hidden
  gold with feedback after each; no
  qualification (doctor1 can try the real items at once; the tier-grading round demonstrates qualification).
- The simulated doctors (:data:`medeval.demo.tasks.SIMULATED`) answer the hidden gold items their plan puts on
  their screen, with the same seeded picking as their real AccR answers (:func:`medeval.demo.tasks._pick`), so
  their gold accuracy is plausible, not perfect (a few hidden items in all, two answers each: most draws of gold
  items give a miss; :data:`SALT` picks one in which doctor2 misses one, so the accuracy figures show one).
  doctor2 answers until the queue is empty; doctor3, who left real items open, stops at the first real item
  and then answers the hidden gold items planned after it (see :func:`_answer_hidden`). doctor1's queue keeps
  its hidden gold items for a newcomer.

Through the library's own paths (``tasks.gold_items.mark_task_gold``, ``gold_items.set_settings``,
``tasks.task_state`` and ``tasks.answer``); idempotent: a campaign with gold items already gets none more, and
the doctors' answered gold items are not due again.
"""

from __future__ import annotations

import numpy as np

from medeval.accounts.auth import get_user
from medeval.accounts.policy import demo_actor
from medeval.annotation import gold
from medeval.annotation import tasks
from medeval.demo import tasks as dt
from medeval.demo.generate import DEMO_SEED

GOLD_ITEMS = 8
BAD_GOLD = 3  # at most, items with a claim whose reason does not support the verdict (expected "no" for it)
SETTINGS = {"qualification_required": False, "hidden_share": 0.15, "feedback": True}
SIDES = {"factual": "support", "counterfactual": "refute"}  # the AccR item's questions and their claims' labels
SALT = 2  # the gold items' draw: one of the draws (most) in which a simulated doctor misses one
# the reason a doctor reads after a hidden check (one stored text: Chinese first, the English after it)
REASONS = {
    "no": "演示（模拟）：两个判断都正确，但其中一条理由不支持其判断。"
          "(Demo, simulated: the verdicts are right but a reason given does not support its verdict.)",
    "yes": "演示（模拟）：两条理由都足以支撑各自的判断。(Demo, simulated: the reasons given justify both verdicts.)",
}


def expected(payload: dict) -> dict:
    """The simulated expected answers of an AccR item: "no" for a claim in BAD_REASONS, "yes" otherwise."""
    return {q: "no" if (payload["model"], payload["item"], label) in dt.BAD_REASONS else "yes"
            for q, label in SIDES.items()}


def _bad(payload: dict) -> bool:
    return "no" in expected(payload).values()


def _mark(db, campaign_id: int) -> int:
    """:data:`GOLD_ITEMS` gold items of the campaign's unused knowledge items (seeded by :data:`SALT`; up to
    :data:`BAD_GOLD` with a bad reason)."""
    actor = demo_actor()
    if db.conn.execute("SELECT 1 FROM task_gold_items WHERE campaign_id = ?", (campaign_id,)).fetchone():
        return 0
    free = sorted(gold.candidates(db, campaign_id, limit=10_000, actor=actor), key=lambda s: s.source)
    bad = [s for s in free if _bad(s.payload)]
    good = [s for s in free if not _bad(s.payload)]
    rng = np.random.default_rng([DEMO_SEED, SALT])
    n_bad = min(BAD_GOLD, len(bad))
    picked = [bad[i] for i in rng.choice(len(bad), size=n_bad, replace=False).tolist()]
    picked += [good[i] for i in rng.choice(len(good), size=min(GOLD_ITEMS - n_bad, len(good)), replace=False).tolist()]
    for spec in sorted(picked, key=lambda s: s.source):
        gold.mark_task_gold(db, campaign_id, spec.source, expected(spec.payload),
                          REASONS["no" if _bad(spec.payload) else "yes"], actor=actor)
    return len(picked)


def _answer(db, user, campaign_id: int, view, shown) -> None:
    """The doctor's answer to the hidden gold item ``view`` shows (its pending question)."""
    _mode, gold_id, _attempt = gold.parse_ref(view.ref)
    g = gold.task_gold_item(db, gold_id)
    layout = gold.layout_for(db, user, campaign_id, gold_id)
    q = view.pending.id
    value = dt._pick("accr", user.username, g.source, g.payload, layout, q, dt._rng(user.username, g.source, q))
    tasks.answer(db, user, campaign_id, view.ref, q, value, client_token=f"demo-gold:{campaign_id}:{gold_id}:{q}",
                 revision=view.revision, guideline_version=shown)


def _answer_hidden(db, campaign_id: int, username: str) -> int:
    """The doctor answers the hidden gold items that come up in their queue, up to the first real item, then the
    ones planned after the real items they leave open.

    (Those last ones are answered out of their turn because :func:`medeval.demo.tasks.add_demo_tasks` counts
    hidden gold items with the real ones when it leaves doctor3's items open: with one of them unanswered, a
    second build would answer one more real item.)
    """
    user = get_user(db, username)
    if user is None:
        return 0
    if (pending := tasks.needs_acknowledgement(db, user, campaign_id)) is not None:
        tasks.acknowledge(db, user, campaign_id, pending)  # the guidelines first, like everyone
    shown = db.conn.execute("SELECT max(version) FROM campaign_guidelines WHERE campaign_id = ?",
                            (campaign_id,)).fetchone()[0]
    added = 0
    while True:
        view = tasks.task_state(db, user, campaign_id).item
        if view is None or view.pending is None or gold.parse_ref(view.ref)[0] != "hidden":
            break  # done, or a real item the doctor left open: they stop here
        _answer(db, user, campaign_id, view, shown)
        added += 1
    for gold_id in gold.hidden_plan(db, user, campaign_id, gold.TASK)[0]:
        while gold.TASK.outcome(db, user.id, gold_id, "hidden", None) is None:
            view = gold.gold_view(db, user, campaign_id, gold_id, "hidden", None)
            if view.pending is None:
                break
            _answer(db, user, campaign_id, view, shown)
            added += 1
    return added


def add_demo_task_gold(db) -> dict:
    """Gold items and settings on the demo AccR campaign; doctor2/3's hidden gold answers.

    Needs the demo task campaigns (:func:`medeval.demo.tasks.add_demo_tasks`); without them nothing happens.
    Returns ``{"campaign": id or None, "gold_items": n marked, "answers": n answers added}``.
    """
    actor = demo_actor()
    row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (dt.ACCR_CAMPAIGN,)).fetchone()
    out = {"campaign": row[0] if row else None, "gold_items": 0, "answers": 0}
    if row is None:
        return out
    cid = row[0]
    out["gold_items"] = _mark(db, cid)
    if out["gold_items"]:
        gold.set_settings(db, cid, SETTINGS, actor=actor)
    if not gold.active_gold_ids(db, cid):
        return out
    for who in dt.SIMULATED:
        out["answers"] += _answer_hidden(db, cid, who)
    return out
