"""A simulated senior clinician adjudicates a handful of the demo calibration campaign's disagreements.

DEMO DATA -- NOT CLINICAL ADVICE. The adjudications are SIMULATED: ``senior1`` (role adjudicator, a
demo account) records, through :func:`medeval.annotation.adjudication.adjudicate`, a final tier with a
reason for the :data:`N_ADJUDICATED` widest disagreements of the simulated clinicians' calibration
campaign (:data:`medeval.demo.clinicians.CALIBRATION_CAMPAIGN`). The simulated senior judges like the
simulated clinicians but without bias or noise of their own: the response's quality
(:func:`medeval.demo.clinicians.quality`, rounded to a tier). The rest of the queue is left open, so
the Adjudicate page shows both. Idempotent: nothing is added once the campaign has an adjudication.
"""

from __future__ import annotations

import numpy as np

from medeval.accounts import auth
from medeval.annotation import adjudication as adj
from medeval.demo import clinicians as sc
from medeval.engine import thresholds as th

ADJUDICATOR = "senior1"
N_ADJUDICATED = 5
# what the adjudicator wrote (one stored text: Chinese first, the English after it, as the demo's other reasons)
REASON = ("演示（模拟）仲裁：最终等级取决于回答表达了多少参考答案的要点。"
          "(Demo, simulated adjudication: the final tier follows how much of the reference's key points the "
          "answer conveys.)")


def add_demo_adjudications(db) -> dict:
    """Adjudicate the first :data:`N_ADJUDICATED` items of the calibration campaign's queue (idempotent)."""
    row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (sc.CALIBRATION_CAMPAIGN,)).fetchone()
    if row is None:
        return {"campaign": None, "added": 0}
    cid = row[0]
    if db.conn.execute("SELECT 1 FROM adjudications WHERE campaign_id = ?", (cid,)).fetchone():
        return {"campaign": cid, "added": 0}
    senior = auth.get_user(db, ADJUDICATOR)
    ts = th.active(db)
    added = 0
    for r in adj.queue(db, cid, min_distance=1, actor=senior)[:N_ADJUDICATED]:
        rid = db.conn.execute("SELECT response_id FROM campaign_items WHERE id = ?", (r["item"],)).fetchone()[0]
        tier = int(np.clip(np.round(sc.quality(db, rid, ts)), 0, 2))
        adj.adjudicate(db, senior, r["item"], tier, REASON)
        added += 1
    return {"campaign": cid, "added": added}
