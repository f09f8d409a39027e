"""Demo gold items: a qualification round for doctor1-3 and hidden gold answered by the simulated clinicians.

DEMO DATA -- NOT CLINICAL ADVICE. The expected tiers are SIMULATED: each gold response's tier is its
quality under the simulated clinicians' hidden cut-offs (:func:`medeval.demo.clinicians.quality`),
rounded, and only where it is the tier the guideline's counting rule for enumerated aspects gives
(:func:`guideline_tier`), so no gold item contradicts the guideline the doctors read.

- "Demo calibration round" (doctor1-3): :data:`ROUND_GOLD` gold items, a required qualification of 4
  items with a pass mark of 75% and 1 retry, and ~10% hidden gold with feedback after each.
- The simulated clinicians' calibration campaign: :data:`CLINICIAN_GOLD` gold items, ~10% hidden gold;
  the clinicians (who graded their real items already) answer the hidden gold items at the positions the
  plan gives them, each timed just after the real grade before it. ``sim_clin_d`` drifts (:data:`DRIFTER`):
  their answers grow wrong over time, so the latest block falls below the alert threshold and is flagged.

Through the library's own paths (``gold_items.mark_gold``, ``set_settings``, ``answers.submit``);
idempotent: a campaign with gold items already is left alone.
"""

from __future__ import annotations

import numpy as np

from medeval.accounts import auth
from medeval.accounts.policy import demo_actor
from medeval.annotation import answers, gold
from medeval.demo import clinicians as sc
from medeval.engine import thresholds as th

ROUND_GOLD = 16
CLINICIAN_GOLD = 24
ROUND_SETTINGS = {"qualification_required": True, "qualification_items": 4, "pass_mark": 0.75, "retries": 1,
                  "hidden_share": 0.1, "feedback": True, "alert_threshold": 0.7}
CLINICIAN_SETTINGS = {"hidden_share": 0.1, "feedback": False, "alert_threshold": 0.7}
DRIFTER = "sim_clin_d"
# the reason a doctor reads after a hidden check (one stored text: Chinese first, the English after it)
REASONS = (
    "演示（模拟）：回答遗漏了参考答案的要点，或与之相矛盾。"
    "(Demo, simulated: the answer misses or contradicts the reference's key points.)",
    "演示（模拟）：部分要点正确，但重要的要点遗漏或有误。"
    "(Demo, simulated: some key points are right, important ones are missing or wrong.)",
    "演示（模拟）：回答表达了参考答案的要点。(Demo, simulated: the answer conveys the reference's key points.)",
)


def guideline_tier(reference: str, answer_items: list[str], synonyms: dict[str, list[str]]) -> int | None:
    """The tier the demo guideline's rule for *enumerated* aspects gives (0 CW, 1 PC, 2 BC), or None where the
    rule leaves it open (most items named, but with wrong ones beside them).

    ``reference`` is the knowledge base's list (``;``-separated); an answer item names a reference item when it is
    the item or one of its synonyms (``demo/data/synonyms.json``, what the demo's answers are written from).
    "Most of them: 3. Some: 2. None, or mostly wrong items: 1" (the guideline's keys; tiers 2, 1, 0 here).
    """
    ref = [e for e in reference.split(";") if e]
    items = [a for a in answer_items if a]
    if ref == ["无"]:
        return 2 if items == ["无"] else 0
    named = {e for e in ref for a in items if a == e or a in synonyms.get(e, ())}
    wrong = [a for a in items if not any(a == e or a in synonyms.get(e, ()) for e in ref)]
    if not named or len(wrong) > len(named):
        return 0
    if 2 * len(named) > len(ref):
        return 2 if not wrong else None
    return 1


def _mark(db, campaign_id: int, n: int, ts) -> int:
    """``n`` gold items from scored responses that are not real items of the campaign (seeded choice).

    Only enumerated aspects whose simulated tier is the one the guideline's counting rule gives
    (:func:`guideline_tier`): a gold item never contradicts the guideline the doctor just read.
    """
    from medeval.demo.generate import load_synonyms

    actor = demo_actor()
    if db.conn.execute("SELECT 1 FROM gold_items WHERE campaign_id = ?", (campaign_id,)).fetchone():
        return 0
    syn = load_synonyms()
    free = []
    for rid, ref, processed in db.conn.execute(
            "SELECT r.id, k.reference, r.processed FROM responses r JOIN kb_entries k ON k.id = r.kb_id "
            "WHERE k.aspect_type = 'enumerated' AND EXISTS (SELECT 1 FROM scores s WHERE s.response_id = r.id) AND "
            "r.id NOT IN (SELECT response_id FROM campaign_items WHERE campaign_id = ?) ORDER BY r.id",
            (campaign_id,)).fetchall():
        tier = int(np.clip(np.round(sc.quality(db, rid, ts)), 0, 2))
        if guideline_tier(ref, (processed or "").split(), syn) == tier:
            free.append((rid, tier))
    picked = sc._rng("gold", campaign_id).choice(len(free), size=min(n, len(free)), replace=False).tolist()
    for i in sorted(picked):
        rid, tier = free[i]
        gold.mark_gold(db, campaign_id, rid, tier, REASONS[tier], actor=actor)
    return len(picked)


def _answer_hidden(db, campaign_id: int) -> int:
    """Each simulated clinician answers their planned hidden gold items; returns how many answers were added."""
    added = 0
    for c in sc.CLINICIANS:
        user = auth.get_user(db, c.username)
        if user is None:
            continue
        times = [t for (t,) in db.conn.execute(
            "SELECT min(g.created_at) FROM grade_annotations g JOIN assignments a ON a.item_id = g.item_id AND "
            "a.user_id = g.user_id WHERE a.campaign_id = ? AND g.user_id = ? GROUP BY g.item_id ORDER BY 1",
            (campaign_id, user.id))]
        order, slots = gold.hidden_plan(db, user, campaign_id)
        if not times:
            continue
        for j, (gold_id, slot) in enumerate(zip(order, slots)):
            if gold.latest_hidden_id(db, user, gold_id) is not None:
                continue
            expected = gold.gold_item(db, gold_id).expected_tier
            p_right = 0.92 - (0.75 * j / max(len(order) - 1, 1) if c.username == DRIFTER else 0.0)
            right = sc._rng("gold-answer", c.username, gold_id).uniform() < p_right
            tier = expected if right else (expected - 1 if expected > 0 else 1)
            before = min(max(slot - j, 1), len(times))
            answers.submit(db, user, campaign_id, f"h:{gold_id}", answers.Answer.tier(tier),
                           client_token=f"demo-gold:{campaign_id}:{gold_id}", at=times[before - 1] + 7.0)
            added += 1
    return added


def add_demo_gold(db, round_campaign: int | None) -> dict:
    """Gold items and settings on the doctors' demo round and the clinicians' calibration campaign; the
    clinicians' hidden gold answers. Returns ``{"round": n marked, "clinicians": n marked, "answers": n}``."""
    actor = demo_actor()
    ts = th.active(db)
    out = {"round": 0, "clinicians": 0, "answers": 0}
    if round_campaign is not None:
        out["round"] = _mark(db, round_campaign, ROUND_GOLD, ts)
        if out["round"]:
            gold.set_settings(db, round_campaign, ROUND_SETTINGS, actor=actor)
    row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (sc.CALIBRATION_CAMPAIGN,)).fetchone()
    if row:
        out["clinicians"] = _mark(db, row[0], CLINICIAN_GOLD, ts)
        if out["clinicians"]:
            gold.set_settings(db, row[0], CLINICIAN_SETTINGS, actor=actor)
        out["answers"] = _answer_hidden(db, row[0])
    return out
