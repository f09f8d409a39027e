"""Simulated clinicians for the demo: two fully graded campaigns and a threshold set calibrated on them.

DEMO DATA -- NOT CLINICAL ADVICE. The grades written here are SIMULATED: no clinician graded
anything. They exist so that a researcher opening the demo sees the Agreement page ("Clinicians vs
the machine", per-annotator bias, time per item, drift) and the Tune cut-offs page with something
to read, and a Leaderboard that can compare a calibrated set with the provisional Table 12 set.

What :func:`add_simulated_clinicians` does, through the library's own paths (the same calls the
pages and the CLI make):

1. adds the five accounts of :data:`CLINICIANS` (role annotator). Their passwords are random
   (:mod:`secrets`), never printed or stored anywhere but as an argon2 hash, so nobody can sign in
   as them; they are active only because campaigns are assigned to active users;
2. creates the random validation campaign :data:`VALIDATION_CAMPAIGN` (the paper's Table 2 view:
   :data:`VALIDATION_N` responses, k = 3, none of them an item of the calibration campaign) and then the
   bucket-grading campaign
   :data:`CALIBRATION_CAMPAIGN` (:data:`CALIBRATION_CONFIG`), so the latter is the newest grading
   campaign, which the Agreement and Tune cut-offs pages open by default;
3. grades every item of both with :func:`medeval.annotation.campaigns.submit_grade`, in each
   clinician's own order, with the times of simulated sessions on past days (:func:`timeline`);
4. calibrates the cut-offs on the calibration campaign
   (:func:`medeval.calibration.cutoffs.campaign_rows` -> ``calibrate_rows`` -> ``publish`` with
   ``campaign_source``) and publishes them as :data:`CALIBRATED_SET`, which becomes the active set.

The ground truth of the simulation
----------------------------------
Each response has a continuous *tier position* per metric: the score at the clinicians' hidden
low cut-off (:data:`HIDDEN_CUTOFFS`) maps to 0.5, the hidden high cut-off to 1.5, linearly in
between and down to 0 at a score of 0 and up to 2 at a score of 1 (exact match, for the numeric
aspect: 0 or 2). The response's *quality* is the mean position over BLEU-1, ROUGE-1 and cosine
(numeric aspect: exact match). A clinician's tier is
``clip(round(quality + item noise + bias + grade noise), 0, 2)``, where the item noise
(:data:`ITEM_NOISE`, one draw per response, shared by all clinicians) is what the metrics miss,
the bias and the grade noise are the clinician's own (:data:`CLINICIANS`): ``sim_clin_a`` is
clearly LENIENT (+), ``sim_clin_b`` clearly SEVERE (-), the other three have small biases, and
``sim_clin_d`` grows a little stricter over their sessions (drift). With these numbers the
clinicians' consensus agrees with the metrics at a Spearman of about 0.7-0.8 (the paper's Table 2
reports > 0.7) and the clinicians with each other at an ordinal alpha of about 0.7.

The hidden cut-offs differ deliberately from Table 12 (stricter for declarative aspects, a wider
partial-credit band for ROUGE-1 on enumerated ones): they are what the calibration should
recover, so the calibrated set visibly differs from the provisional Table 12 set. It recovers
them only roughly -- the clinicians judge an answer as a whole (all metrics at once) with noise,
as real ones do. Everything is seeded from :data:`medeval.demo.generate.DEMO_SEED`; tiers, skips
and flags are deterministic, the session times are on the days before the build.

A few answers are skips (:data:`SKIPS`) and a few grades carry a flag with a short plain-text
note (:data:`FLAGS`, :data:`FLAG_NOTES`). Idempotent: a second call adds nothing.
"""

from __future__ import annotations

import secrets
import time
import zlib
from dataclasses import dataclass

import numpy as np

from medeval.accounts import auth
from medeval.accounts.policy import demo_actor
from medeval.annotation import campaigns as cp
from medeval.calibration import cutoffs as cal
from medeval.demo.generate import DEMO_SEED
from medeval.engine import cosine_scorers
from medeval.engine import thresholds as th


@dataclass(frozen=True)
class Clinician:
    username: str
    bias: float  # added to every tier position: + lenient, - severe
    noise: float  # sd of the per-grade noise
    seconds: float  # median seconds per item
    drift: float = 0.0  # bias change from the first answer to the last


CLINICIANS = (
    Clinician("sim_clin_a", +0.45, 0.30, 16.0),  # LENIENT
    Clinician("sim_clin_b", -0.45, 0.30, 25.0),  # SEVERE
    Clinician("sim_clin_c", +0.08, 0.25, 20.0),
    Clinician("sim_clin_d", -0.05, 0.35, 22.0, drift=-0.25),  # grows a little stricter
    Clinician("sim_clin_e", 0.00, 0.25, 18.0),
)
LENIENT, SEVERE = "sim_clin_a", "sim_clin_b"
CLINICIAN_NAMES = tuple(c.username for c in CLINICIANS)

VALIDATION_CAMPAIGN = "Demo validation sample (simulated clinicians)"
CALIBRATION_CAMPAIGN = "Demo calibration (simulated clinicians)"
CALIBRATED_SET = "Calibrated on demo clinicians (simulated)"
VALIDATION_N = 120
K = 3
CALIBRATION_CONFIG = cp.BucketConfig(metrics=("bleu1", "rouge1", "cosine"), aspect_types=("enumerated", "declarative"),
                                     width=0.1, per_interval=4, k=K, seed=DEMO_SEED)

# The clinicians' hidden cut-offs (low, high) per (metric, aspect type); Table 12 for comparison in the comment.
HIDDEN_CUTOFFS = {
    ("bleu1", "enumerated"): (0.08, 0.35),  # Table 12: 0.05, 0.25
    ("bleu1", "declarative"): (0.12, 0.55),  # 0.05, 0.45
    ("rouge1", "enumerated"): (0.08, 0.55),  # 0.05, 0.75
    ("rouge1", "declarative"): (0.12, 0.65),  # 0.05, 0.55
    ("cosine", "enumerated"): (0.40, 0.70),  # 0.35, 0.75
    ("cosine", "declarative"): (0.60, 0.80),  # 0.55, 0.65
}
ITEM_NOISE = 0.45  # sd of what the metrics miss, one draw per response

# (campaign, clinician) -> how many of their items they skip (seeded positions in their own order)
SKIPS = {(VALIDATION_CAMPAIGN, "sim_clin_d"): 2, (CALIBRATION_CAMPAIGN, "sim_clin_c"): 2,
         (CALIBRATION_CAMPAIGN, "sim_clin_e"): 1}
# (campaign, clinician) -> how many of their graded items they flag, each with a note of FLAG_NOTES
FLAGS = {(VALIDATION_CAMPAIGN, "sim_clin_b"): 2, (VALIDATION_CAMPAIGN, "sim_clin_e"): 1,
         (CALIBRATION_CAMPAIGN, "sim_clin_a"): 1, (CALIBRATION_CAMPAIGN, "sim_clin_c"): 2}
FLAG_NOTES = (
    "参考答案似乎不完整，请核对。",
    "The answer names a drug that is not in the reference; please check the reference.",
    "回答过于笼统，难以判断是否正确。",
    "The reference and the answer may describe different stages of the disease.",
    "回答把两种疾病的表现混在一起了。",
    "Unsure: the answer is correct in substance but the wording is unusual.",
)

# simulated sessions: items per session, hour of the day it starts, days between sessions
SESSION_ITEMS = (25, 60)
SESSION_HOURS = (8, 19)
SESSION_GAP_DAYS = (1, 2)
SECONDS_SIGMA = 0.55  # log-sd of the seconds per item
SECONDS_RANGE = (4.0, 240.0)


def _rng(*key) -> np.random.Generator:
    """One stream per key (strings hashed): the same draw whatever was drawn before."""
    return np.random.default_rng([DEMO_SEED, *(zlib.crc32(k.encode()) if isinstance(k, str) else int(k)
                                               for k in key)])


def position(metric: str, aspect_type: str, score: float) -> float:
    """The continuous tier position (0..2) of a score under the hidden cut-offs (exact match: 0 or 2)."""
    if metric == "exact_match":
        return 2.0 if score >= 1.0 else 0.0
    lo, hi = HIDDEN_CUTOFFS[(metric, aspect_type)]
    s = min(max(float(score), 0.0), 1.0)
    if s < lo:
        return 0.5 * s / lo
    if s < hi:
        return 0.5 + (s - lo) / (hi - lo)
    return 1.5 + 0.5 * (s - hi) / (1.0 - hi) if hi < 1.0 else 2.0


def quality(db, response_id: int, ts: th.ThresholdSet) -> float:
    """The mean tier position of a response over its metrics (under the scorers of ``ts``: one cosine score)."""
    pos = []
    # the scores the set grades: one cosine, the one its grading picks (none where two ids tie)
    for _rid, metric, _scorer, score, atype in cosine_scorers.graded_scores(ts, db.conn.execute(
            "SELECT s.response_id, s.metric, s.scorer, s.score, k.aspect_type FROM scores s JOIN responses r "
            "ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id WHERE s.response_id = ?", (response_id,))):
        if metric == "exact_match" or (metric, atype) in HIDDEN_CUTOFFS:
            pos.append(position(metric, atype, score))
    return float(np.mean(pos)) if pos else 1.0


def simulated_tier(c: Clinician, quality_: float, response_id: int, item_id: int, progress_: float) -> int:
    """A clinician's tier of an item: quality + the item's noise + bias (with drift) + grade noise, rounded."""
    item_noise = _rng("item", response_id).normal(0.0, ITEM_NOISE)
    grade_noise = _rng("grade", c.username, item_id).normal(0.0, c.noise)
    z = quality_ + item_noise + c.bias + c.drift * progress_ + grade_noise
    return int(np.clip(np.round(z), 0, 2))


def timeline(c: Clinician, n: int) -> tuple[list[float], int]:
    """Relative times (seconds from day 0, 00:00) of ``n`` answers in sessions on separate days, and the last day.

    Each session holds SESSION_ITEMS items and starts at a seeded hour; seconds per item are lognormal
    with median ``c.seconds``.
    """
    g = _rng("sessions", c.username)
    out: list[float] = []
    day = 0
    while len(out) < n:
        t = day * 86400.0 + g.uniform(*SESSION_HOURS) * 3600.0
        for _ in range(min(int(g.integers(SESSION_ITEMS[0], SESSION_ITEMS[1] + 1)), n - len(out))):
            t += float(np.clip(g.lognormal(np.log(c.seconds), SECONDS_SIGMA), *SECONDS_RANGE))
            out.append(t)
        day += int(g.integers(SESSION_GAP_DAYS[0], SESSION_GAP_DAYS[1] + 1))
    return out, day


def _positions(key: tuple, n: int, count: int, avoid: frozenset[int] | set[int] = frozenset()) -> set[int]:
    """``count`` seeded positions among ``n`` (an annotator's order), none of ``avoid``."""
    free = [i for i in range(n) if i not in avoid]
    count = min(count, len(free))
    if not count:
        return set()
    return {free[j] for j in _rng("pick", *key).choice(len(free), size=count, replace=False).tolist()}


def _campaign(db, name: str, create) -> tuple[int, bool]:
    row = db.conn.execute("SELECT id FROM campaigns WHERE name = ?", (name,)).fetchone()
    return (row[0], False) if row else (create(), True)


def _read_guidelines(db, user, campaign_id: int) -> int | None:
    """A simulated clinician reads the campaign's guidelines first, like everyone: the version on screen."""
    pending = cp.needs_acknowledgement(db, user, campaign_id)
    if pending is not None:
        cp.acknowledge(db, user, campaign_id, pending)
    row = db.conn.execute("SELECT max(version) FROM campaign_guidelines WHERE campaign_id = ?",
                          (campaign_id,)).fetchone()
    return row[0]


def _grade_all(db, campaigns: list[tuple[str, int]], ts: th.ThresholdSet) -> int:
    """Every clinician answers every item assigned to them, campaign after campaign, in their own order."""
    added = 0
    quality_cache: dict[int, float] = {}
    plans = {}
    for c in CLINICIANS:
        user = auth.get_user(db, c.username)
        sizes = [cp.progress(db, user, cid)[1] for _, cid in campaigns]
        plans[c.username] = (user, sizes, timeline(c, sum(sizes)))
    # one calendar for everyone: the latest simulated session ends on the day before today (UTC)
    today = time.time() // 86400 * 86400
    origin = today - (max(last for _, _, (_, last) in plans.values()) + 1) * 86400.0
    for c in CLINICIANS:
        user, sizes, (times, _) = plans[c.username]
        total = sum(sizes)
        offset = 0
        for (name, cid), size in zip(campaigns, sizes):
            shown = _read_guidelines(db, user, cid)
            skips = _positions((name, c.username, "skip"), size, SKIPS.get((name, c.username), 0))
            flags = _positions((name, c.username, "flag"), size, FLAGS.get((name, c.username), 0), skips)
            while (item := cp.next_item(db, user, cid)) is not None:
                done = cp.progress(db, user, cid)[0]
                index = offset + done
                at = min(origin + times[index], time.time())
                token = f"demo-sim:{cid}:{item}"
                if done in skips:
                    cp.submit_grade(db, user, item, tier=None, skipped=True, client_token=token, at=at,
                                    guideline_version=shown)
                else:
                    rid = db.conn.execute("SELECT response_id FROM campaign_items WHERE id = ?", (item,)).fetchone()[0]
                    if rid not in quality_cache:
                        quality_cache[rid] = quality(db, rid, ts)
                    tier = simulated_tier(c, quality_cache[rid], rid, item, index / max(total - 1, 1))
                    note = None
                    if done in flags:
                        note = FLAG_NOTES[int(_rng("note", c.username, item).integers(len(FLAG_NOTES)))]
                    cp.submit_grade(db, user, item, tier=tier, flagged=note is not None, note=note,
                                    client_token=token, at=at, guideline_version=shown)
                added += 1
            offset += size
    return added


def add_simulated_clinicians(db, *, before_calibration=None) -> dict:
    """The simulated clinicians, their two fully graded campaigns and the set calibrated on them (idempotent).

    ``before_calibration(db)``, if given, runs once the clinicians and the validation campaign exist and
    before the calibration campaign is created (which stays the newest campaign: the pages open it first);
    its result is returned as ``"before_calibration"``. Returns ``{"clinicians": [...], "campaigns":
    {name: id}, "grades_added": n, "version": v, "published": bool, "active": bool, ...}`` -- ``version``
    is the calibrated threshold set (active once published; ``published``: by this call).
    """
    actor = demo_actor()
    for c in CLINICIANS:
        if not db.conn.execute("SELECT 1 FROM users WHERE username = ?", (c.username,)).fetchone():
            # a random password that is never shown: nobody can sign in as a simulated clinician
            auth.add_user(db, c.username, secrets.token_urlsafe(32), "annotator", actor=actor)
    names = list(CLINICIAN_NAMES)
    # the validation sample validates the set calibrated on CALIBRATION_CAMPAIGN, which is drawn after it (the
    # pages open the newest campaign first): leave out the responses that campaign will draw (the same seeded
    # interval sample), so no grade that sets a cut-off "validates" it (test_demo_clinicians checks 0 shared)
    vid, _ = _campaign(db, VALIDATION_CAMPAIGN, lambda: cp.create_random_campaign(
        db, VALIDATION_CAMPAIGN, VALIDATION_N, names, k=K, seed=DEMO_SEED, actor=actor,
        exclude_responses=set(cp.sample_buckets(db, CALIBRATION_CONFIG)[0])))
    extra = before_calibration(db) if before_calibration else None
    kid, _ = _campaign(db, CALIBRATION_CAMPAIGN, lambda: cp.create_bucket_campaign(
        db, CALIBRATION_CAMPAIGN, CALIBRATION_CONFIG, names, actor=actor))
    ts = th.active(db)
    added = _grade_all(db, [(VALIDATION_CAMPAIGN, vid), (CALIBRATION_CAMPAIGN, kid)], ts)
    existing = [t for t in th.list_sets(db) if t.name == CALIBRATED_SET and t.embedding_model == ts.embedding_model]
    if existing:
        version, published = existing[-1].version, False
    else:
        results = cal.calibrate_rows(cal.campaign_rows(db, kid), n_boot=200, rng=DEMO_SEED)
        version = cal.publish(db, results, name=CALIBRATED_SET, actor=actor, source=cal.campaign_source(db, kid))
        published = True
        # the sample was drawn (without the calibration items) to validate this set, which did not exist yet: record
        # it, so Table 2 is computed under it rather than under the set active when the sample was drawn
        from medeval.store.db import transaction

        with transaction(db):
            db.conn.execute("UPDATE campaigns SET config = json_set(config, '$.validates_version', ?) WHERE id = ?",
                            (version, vid))
    return {"clinicians": names, "campaigns": {VALIDATION_CAMPAIGN: vid, CALIBRATION_CAMPAIGN: kid},
            "grades_added": added, "version": version, "published": published,
            "active": th.active(db).version == version, "before_calibration": extra}
