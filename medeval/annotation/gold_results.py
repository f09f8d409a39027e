"""Gold results for researchers: per annotator, qualification attempts and hidden-gold accuracy over time.

Accuracy is the share of answered (not skipped) hidden gold items whose latest answer is the expected tier;
"over time" is the same share per block of consecutive hidden gold answers (in the order they were given).
An annotator is flagged when their latest block falls below the campaign's alert threshold. Answers to
retired gold items are left out of the hidden figures (a retired item's expected tier was in doubt);
qualification results stay as they were decided.
"""

from __future__ import annotations

import sqlite_utils

from medeval.accounts.auth import User, require_role
from medeval.annotation import gold as gd
from medeval.annotation import gold_items as gi
from medeval.core.errors import MedevalError

BLOCK = 5  # hidden gold answers per point of "accuracy over time"


def gold_accuracy(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None, block: int = BLOCK) -> dict:
    """Everything the Campaigns and Agreement pages show about gold answers, as plain data (JSON-ready).

    ``{"campaign_id", "settings", "gold_items" (active), "block", "threshold", "annotators": [{"annotator",
    "qualification": status, "attempts": [{attempt, items, answered, correct, share, pass_mark, complete,
    passed}], "hidden_answered", "hidden_correct", "hidden_skipped", "accuracy" (None: no answer),
    "blocks": [{"block", "first", "last", "answers", "correct", "accuracy", "until"}], "latest_accuracy",
    "flagged"}]}``. Researchers and admins only.
    """
    if actor is not None:
        require_role(actor, *gi.EDITING_ROLES)
    gi.require_gold_campaign(db, campaign_id)
    if isinstance(block, bool) or not isinstance(block, int) or not 1 <= block <= 100:
        raise MedevalError("the block size (hidden gold answers per point over time) must be a whole number 1..100")
    s = gi.get_settings(db, campaign_id)
    users = db.conn.execute("SELECT DISTINCT u.id, u.username, u.role, u.active FROM assignments a JOIN users u ON "
                            "u.id = a.user_id WHERE a.campaign_id = ? ORDER BY u.username", (campaign_id,)).fetchall()
    out = []
    for uid, name, role, active in users:
        user = User(uid, name, role, bool(active))
        q = gd.qualification_state(db, user, campaign_id)
        rows = db.conn.execute(
            "SELECT a.tier, a.skipped, g.expected_tier, a.created_at FROM gold_answers a JOIN gold_items g ON g.id = "
            "a.gold_id WHERE a.user_id = ? AND g.campaign_id = ? AND a.mode = 'hidden' AND NOT EXISTS (SELECT 1 FROM "
            "gold_retired x WHERE x.gold_id = g.id) AND a.id = (SELECT max(id) FROM gold_answers b WHERE b.user_id = "
            "a.user_id AND b.gold_id = a.gold_id AND b.mode = 'hidden') ORDER BY (SELECT min(id) FROM gold_answers c "
            "WHERE c.user_id = a.user_id AND c.gold_id = a.gold_id AND c.mode = 'hidden')", (uid, campaign_id)).fetchall()
        answered = [(t == e, at) for t, sk, e, at in rows if not sk]
        blocks = []
        for i in range(0, len(answered), block):
            chunk = answered[i:i + block]
            ok = sum(c for c, _ in chunk)
            blocks.append({"block": len(blocks) + 1, "first": i + 1, "last": i + len(chunk), "answers": len(chunk),
                           "correct": ok, "accuracy": ok / len(chunk), "until": chunk[-1][1]})
        correct = sum(c for c, _ in answered)
        latest = blocks[-1]["accuracy"] if blocks else None
        out.append({"annotator": name, "qualification": q.status, "attempts": [dict(r) for r in q.results],
                    "hidden_answered": len(answered), "hidden_correct": correct,
                    "hidden_skipped": sum(1 for r in rows if r[1]),
                    "accuracy": correct / len(answered) if answered else None, "blocks": blocks,
                    "latest_accuracy": latest,
                    "flagged": latest is not None and latest < s["alert_threshold"] - 1e-9})
    return {"campaign_id": campaign_id, "settings": s, "gold_items": len(gi.active_gold_ids(db, campaign_id)),
            "block": block, "threshold": s["alert_threshold"], "annotators": out}


def methods_sentence(db: sqlite_utils.Database, campaign_id: int) -> str:
    """One sentence for the methods paragraph saying how gold items were used and treated ("" without gold)."""
    n = db.conn.execute("SELECT count(*) FROM gold_items WHERE campaign_id = ?", (campaign_id,)).fetchone()[0]
    if not n:
        return ""
    s = gi.get_settings(db, campaign_id)
    uses = []
    if s["qualification_required"]:
        uses.append(f"a qualification round ({s['qualification_items']} items, pass mark {s['pass_mark']:.0%})")
    if s["hidden_share"] > 0:
        uses.append(f"hidden quality checks (about {s['hidden_share']:.0%} of each annotator's queue)")
    how = " and ".join(uses) if uses else "reference"
    return (f"{n} gold item{'s' if n != 1 else ''} (responses with an expected tier set by the researchers, none of "
            f"them a real item of the campaign) served as {how}; answers to gold items are stored apart from the "
            "grades and count in no agreement statistic and no calibration.")
