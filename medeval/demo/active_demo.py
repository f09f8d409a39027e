"""The demo's active calibration campaign: the simulated clinicians grade a seed round and three active rounds.

DEMO DATA -- NOT CLINICAL ADVICE. The grades are SIMULATED (:mod:`medeval.demo.clinicians`, the same clinicians,
hidden cut-offs and grading helper). :func:`add_active_demo` creates :data:`ACTIVE_CAMPAIGN` (BLEU-1 and ROUGE-1 on
enumerated aspects, :data:`ACTIVE_CONFIG`: two strata, so the Tune cut-offs page shows each narrowing), lets the clinicians answer every round through
:func:`medeval.annotation.campaigns.submit_grade` and draws up to :data:`ROUNDS` more rounds with
:func:`medeval.calibration.rounds.next_round`, so the Tune cut-offs page shows the intervals narrowing round by
round on first start. Idempotent: a second call adds nothing once the rounds are drawn and answered.
"""

from __future__ import annotations

from medeval.annotation.campaigns.assignment import create_active_campaign
from medeval.annotation.campaigns.sampling import ActiveConfig
from medeval.calibration import rounds
from medeval.core.errors import MedevalError
from medeval.demo import clinicians as sim
from medeval.demo.generate import DEMO_SEED
from medeval.engine import thresholds as th

ACTIVE_CAMPAIGN = "Demo active calibration (simulated clinicians)"
ACTIVE_CONFIG = ActiveConfig(metrics=("bleu1", "rouge1"), aspect_types=("enumerated",), width=0.1, per_interval=3,
                             round_size=15, target_width=0.05, budget=120, explore=0.2, k=sim.K, seed=DEMO_SEED)
ROUNDS = 3  # active rounds after the seed round


def add_active_demo(db) -> dict:
    """Create the active campaign, have the simulated clinicians answer it, draw and answer up to ROUNDS rounds."""
    row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (ACTIVE_CAMPAIGN,)).fetchone()
    cid = row[0] if row else create_active_campaign(db, ACTIVE_CAMPAIGN, ACTIVE_CONFIG, list(sim.CLINICIAN_NAMES),
                                                    actor=None)
    ts = th.active(db)
    added = sim._grade_all(db, [(ACTIVE_CAMPAIGN, cid)], ts)
    stopped = None
    while rounds.round_status(db, cid, actor=None)["round"] <= ROUNDS:
        try:
            rounds.next_round(db, cid, actor=None)
        except MedevalError as e:  # every stratum stopped (target or budget): the demo shows that instead
            stopped = str(e)
            break
        added += sim._grade_all(db, [(ACTIVE_CAMPAIGN, cid)], ts)
    return {"campaign": cid, "round": rounds.round_status(db, cid, actor=None)["round"], "grades_added": added,
            "stopped": stopped}
