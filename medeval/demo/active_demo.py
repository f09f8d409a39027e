"""The demo's active calibration: the simulated clinicians re-calibrate with both designs at equal budgets.

DEMO DATA -- NOT CLINICAL ADVICE. The grades are SIMULATED (:mod:`medeval.demo.clinicians`, the same clinicians,
hidden cut-offs and grading helper). :func:`add_active_demo` creates two active calibration campaigns on BLEU-1 and
ROUGE-1 of enumerated aspects (two strata each), alike in everything but how cut-offs are estimated and where
rounds are drawn:

* :data:`PAPER_CAMPAIGN` -- the paper's design round by round (every score interval alike) and its accuracy search
  (:data:`PAPER_CONFIG`);
* :data:`ACTIVE_CAMPAIGN` -- calibration v2: the adaptive design and the smooth estimator (:data:`ACTIVE_CONFIG`).

Both get the same seed round, round size and budget (:data:`ROUNDS` rounds after the seed round, in lockstep; the
target width is out of reach and the budget leaves rounds to draw on the page, so both spend the same number of
grades). The clinicians
answer every round through :func:`medeval.annotation.campaigns.submit_grade`; rounds are drawn with
:func:`medeval.calibration.rounds.next_round`. The Tune cut-offs page shows the two side by side, round by round, on
first start. Idempotent: a second call adds nothing once the rounds are drawn and answered.
"""

from __future__ import annotations

from dataclasses import replace

from medeval.accounts.policy import demo_actor
from medeval.annotation.campaigns.assignment import create_active_campaign
from medeval.annotation.campaigns.sampling import ActiveConfig
from medeval.calibration import rounds
from medeval.core.errors import MedevalError
from medeval.demo import clinicians as sim
from medeval.demo.generate import DEMO_SEED
from medeval.engine import thresholds as th

ROUNDS = 3  # active rounds after the seed round
ACTIVE_CAMPAIGN = "Demo active calibration (simulated clinicians)"
PAPER_CAMPAIGN = "Demo paper's design (simulated clinicians)"
ACTIVE_CONFIG = ActiveConfig(metrics=("bleu1", "rouge1"), aspect_types=("enumerated",), width=0.1, per_interval=3,
                             round_size=15, target_width=0.01, budget=120, explore=0.2, k=sim.K,
                             seed=DEMO_SEED, estimator="smooth", design="adaptive")
PAPER_CONFIG = replace(ACTIVE_CONFIG, estimator="accuracy", design="interval")


def _campaign(db, name: str, cfg: ActiveConfig) -> int:
    actor = demo_actor()
    row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (name,)).fetchone()
    return row[0] if row else create_active_campaign(db, name, cfg, list(sim.CLINICIAN_NAMES), actor=actor)


def add_active_demo(db) -> dict:
    """Create both campaigns (the paper's first, so v2 is the newer), have the simulated clinicians answer them and
    draw and answer up to ROUNDS rounds of each, in lockstep."""
    actor = demo_actor()
    camps = [(PAPER_CAMPAIGN, _campaign(db, PAPER_CAMPAIGN, PAPER_CONFIG)),
             (ACTIVE_CAMPAIGN, _campaign(db, ACTIVE_CAMPAIGN, ACTIVE_CONFIG))]
    ts = th.active(db)
    added = sim._grade_all(db, camps, ts)
    stopped = {}
    for _ in range(ROUNDS):
        drawn = []
        for name, cid in camps:
            if name in stopped or rounds.last_round(db, cid) > ROUNDS:
                continue
            try:
                rounds.next_round(db, cid, actor=actor)
                drawn.append((name, cid))
            except MedevalError as e:  # every stratum stopped (target or budget): the demo shows that instead
                stopped[name] = str(e)
        if not drawn:
            break
        added += sim._grade_all(db, drawn, ts)
    return {"campaigns": dict(camps), "campaign": dict(camps)[ACTIVE_CAMPAIGN],
            "round": {name: rounds.last_round(db, cid) for name, cid in camps}, "grades_added": added,
            "stopped": stopped or None}
