"""Calibrate tier cut-offs: the two cut-offs that best reproduce the clinicians' tiers.

MedDisKEval §3.2.2: clinicians tier examples sampled per score interval; "the
thresholds that best divide the graded examples into the tiers become the grading
standard". For one (metric, aspect type), given each graded item's automated score and
the clinicians' consensus tier (the lower median of the annotators' tiers, ``lower-median``: with an even number
of annotators the lower middle tier, never the mean of the two, so a tie never invents a tier; or the
majority or the adjudicated tier: ``consensus=``, medeval.annotation.adjudication), this searches
**every** pair of cut-offs that matters -- one between each two consecutive distinct
scores, plus the ends of the metric's range -- and keeps the pair that maximises the
criterion:

* ``kappa`` (default): quadratic-weighted Cohen's kappa between automated and expert
  tier -- chance-corrected and ordinal (a 0-vs-2 miss costs four times a 0-vs-1 miss);
* ``accuracy``: share of items whose automated tier equals the expert tier;
* ``spearman``: rank correlation of automated and expert tier.

Scores are compared by the package's one rule (:mod:`medeval.engine.cutoff_rule`: to 9 decimals, a score on a
cut-off reaches it), so each candidate pair grades the items exactly as grading under it would. Items sorted by
score fall into tiers by two split indices ``i <= j`` (tier 0 below ``i``, 1 up to ``j``, 2 from ``j``), so prefix
counts of the expert tiers give every candidate's confusion matrix in O(1), and the search over all pairs is
vectorised. Among equally good pairs the one with the widest middle tier margin is kept (the first in score order
when still tied), so the result is deterministic. A bootstrap over items (seeded) reports the spread of the
criterion and how stable the cut-offs are: their 95% percentile intervals and the share of resamples whose optimum
lies within ``tolerance`` of the chosen cut-offs (a distance on the tolerance counts).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from medeval.annotation import adjudication as adj
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.engine import cosine_scorers
from medeval.engine import thresholds as th
from medeval.engine.registry import METRICS, get_metric

CRITERIA = ("kappa", "accuracy", "spearman")


@dataclass(frozen=True)
class Calibration:
    metric: str
    aspect_type: str
    cut_offs: tuple[float, float] | None
    criterion: str
    value: float | None
    n: int
    confusion: list[list[int]] | None = None  # rows: expert tier 0..2, columns: automated tier 0..2
    also: dict = field(default_factory=dict)  # the other criteria at the chosen cut-offs
    bootstrap: dict = field(default_factory=dict)
    undefined_reason: str | None = None

    def to_dict(self) -> dict:
        return {"metric": self.metric, "aspect_type": self.aspect_type,
                "cut_offs": list(self.cut_offs) if self.cut_offs else None, "criterion": self.criterion,
                "value": self.value, "n": self.n, "confusion": self.confusion, "also": self.also,
                "bootstrap": self.bootstrap, "undefined_reason": self.undefined_reason}


def consensus(tiers: list[int]) -> int:
    """The clinicians' consensus tier: the lower median of the annotators' tiers (never the mean of two)."""
    return adj.lower_median(tiers)


def _one_tier(tiers: list[int]) -> int:
    """The adjudicated consensus of rows that already hold it (one per item); raw per-annotator rows cannot."""
    if len(tiers) != 1:
        raise MedevalError("the adjudicated consensus needs a campaign's adjudications: calibrate from the "
                           "campaign (--campaign ID), or choose lower-median or majority for a file")
    return int(tiers[0])


# how the annotators' tiers of one item become its expert tier (``consensus=``; see medeval.annotation.adjudication)
CONSENSUS = {"median": consensus, "majority": adj.majority}
CONSENSUS_METHODS = adj.METHODS  # median, majority, adjudicated (the last from a campaign's adjudications)
CONSENSUS_LABELS = {"median": N_("lower median (MedDisKEval; the lower of the two middle tiers)"),
                    "majority": N_("majority (ties: lower median)"), "adjudicated": N_("adjudicated (else lower median)")}
"""Each consensus as a page offers it (``format_func``); "median" is the lower median: a cut-off needs a tier."""


def consensus_label(method: str) -> str:
    """A consensus method in the reader's language (one not listed, as it is)."""
    return _(CONSENSUS_LABELS[method]) if method in CONSENSUS_LABELS else str(method)


def _split_cut(below: np.ndarray, above: np.ndarray) -> np.ndarray:
    """Cut-offs between canonical scores ``below < above``: the midpoint to 9 decimals (a half-way one rounded up)."""
    mid = th.canonical_array((below + above) / 2 + 0.25 * 10.0 ** -th.DECIMALS)
    return np.where(mid > below, mid, above)


def _candidates(scores: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Split indices into the sorted scores and the cut-off value that makes each split.

    ``scores`` are canonical (to 9 decimals, the comparison rule of :mod:`medeval.engine.cutoff_rule`). Index 0
    puts nothing below the cut (cut = the range's low end); an index between two distinct scores cuts at their
    midpoint (:func:`_split_cut`); index n puts everything below (only when the largest score is below the
    range's high end). Each cut grades exactly its split under :func:`medeval.engine.thresholds.tier`.
    """
    n = len(scores)
    idx = [0]
    cuts = [low]
    change = np.nonzero(scores[1:] > scores[:-1])[0] + 1
    idx.extend(change.tolist())
    cuts.extend(_split_cut(scores[change - 1], scores[change]).tolist())
    if n and scores[-1] < high:
        idx.append(n)
        cuts.append(float(_split_cut(scores[-1:], np.array([float(high)]))[0]))
    return np.array(idx), np.array(cuts, dtype=float)


def _criteria_grid(prefix: np.ndarray, I: np.ndarray, J: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Every criterion for each (i, j) split, from prefix counts of the expert tiers.

    ``prefix[k, e]`` = number of the first k items (by score) with expert tier e.
    """
    total = prefix[n]  # expert tier counts
    # confusion[e, a] for automated tier a: a=0 -> [0, i), a=1 -> [i, j), a=2 -> [j, n)
    c0 = prefix[I]  # (m, 3)
    c1 = prefix[J] - prefix[I]
    c2 = total - prefix[J]
    conf = np.stack([c0, c1, c2], axis=-1).astype(float)  # (m, e=3, a=3)
    w = np.array([[(e - a) ** 2 for a in range(3)] for e in range(3)], dtype=float) / 4.0
    rows = conf.sum(axis=2)  # expert marginals (m, 3)
    cols = conf.sum(axis=1)  # automated marginals (m, 3)
    expected = rows[:, :, None] * cols[:, None, :] / n
    obs_d = (w * conf).sum(axis=(1, 2))
    exp_d = (w * expected).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(exp_d > 0, 1 - obs_d / exp_d, np.nan)
    accuracy = (conf[:, 0, 0] + conf[:, 1, 1] + conf[:, 2, 2]) / n
    # Spearman from the 3x3 table: mid-ranks of each category, then Pearson of the ranks
    def midranks(counts):
        before = np.cumsum(counts, axis=1) - counts
        return before + (counts + 1) / 2.0

    re, ra = midranks(rows), midranks(cols)
    mean_r = (n + 1) / 2.0
    de, da = re - mean_r, ra - mean_r
    cov = (conf * de[:, :, None] * da[:, None, :]).sum(axis=(1, 2))
    ve = (rows * de ** 2).sum(axis=1)
    va = (cols * da ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        spearman = np.where((ve > 0) & (va > 0), cov / np.sqrt(ve * va), np.nan)
    return {"kappa": kappa, "accuracy": accuracy, "spearman": spearman, "confusion": conf}


def _optimise(scores: np.ndarray, tiers: np.ndarray, low: float, high: float, criterion: str):
    scores = th.canonical_array(scores)  # the comparison rule: scores equal to 9 decimals are one score
    order = np.argsort(scores, kind="stable")
    s, t = scores[order], tiers[order]
    n = len(s)
    prefix = np.zeros((n + 1, 3), dtype=np.int64)
    prefix[1:] = np.cumsum(np.eye(3, dtype=np.int64)[t], axis=0)
    idx, cuts = _candidates(s, low, high)
    a, b = np.triu_indices(len(idx))  # every pair with low cut <= high cut
    grid = _criteria_grid(prefix, idx[a], idx[b], n)
    values = grid[criterion]
    if np.all(np.isnan(values)):
        return None
    best = np.nanmax(values)
    ties = np.nonzero(np.isclose(values, best, rtol=0, atol=1e-12))[0]
    # prefer the widest middle margin among equally good pairs, then the first
    margin = cuts[b[ties]] - cuts[a[ties]]
    k = ties[int(np.argmax(margin))] if len(ties) > 1 else ties[0]
    return {"cut_offs": (float(cuts[a[k]]), float(cuts[b[k]])), "value": float(values[k]),
            "confusion": grid["confusion"][k].astype(int).tolist(),
            "also": {c: (None if np.isnan(grid[c][k]) else float(grid[c][k])) for c in CRITERIA}}


def calibrate(metric: str, aspect_type: str, scores, tiers, *, criterion: str = "kappa", n_boot: int = 200,
              rng=0, tolerance: float = 0.05) -> Calibration:
    """The cut-offs ``(low, high)`` that best reproduce the expert ``tiers`` (0/1/2) from ``scores``."""
    info = METRICS[get_metric(metric).name]
    if criterion not in CRITERIA:
        raise MedevalError(f"criterion {criterion!r} is not one of {', '.join(CRITERIA)}")
    scores = np.asarray(scores, dtype=float)
    tiers = np.asarray(tiers)
    if scores.shape != tiers.shape:
        raise MedevalError("scores and tiers differ in length")
    if len(scores) and (np.isnan(scores).any() or (scores < info.low - 1e-9).any() or (scores > info.high + 1e-9).any()):
        raise MedevalError(f"{metric} scores must lie in [{info.low}, {info.high}] (and not be missing)")
    if len(tiers) and not np.isin(tiers, (0, 1, 2)).all():
        raise MedevalError("expert tiers must be 0, 1 or 2")
    tiers = tiers.astype(int)
    n = len(scores)
    if n < 3:
        return Calibration(metric, aspect_type, None, criterion, None, n,
                           undefined_reason=f"{n} graded items; at least 3 are needed")
    if len(set(tiers.tolist())) < 2:
        return Calibration(metric, aspect_type, None, criterion, None, n,
                           undefined_reason="the experts used only one tier: no cut-off can be learnt")
    best = _optimise(scores, tiers, info.low, info.high, criterion)
    if best is None:
        return Calibration(metric, aspect_type, None, criterion, None, n,
                           undefined_reason=f"{criterion} is undefined for every pair of cut-offs")
    boot = {}
    if n_boot:
        g = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        vals, lows, highs = [], [], []
        for _draw in range(n_boot):
            pick = g.integers(0, n, n)
            r = _optimise(scores[pick], tiers[pick], info.low, info.high, criterion)
            if r is not None:
                vals.append(r["value"])
                lows.append(r["cut_offs"][0])
                highs.append(r["cut_offs"][1])
        if vals:
            lo, hi = best["cut_offs"]
            boot = {"n_boot": n_boot, "n_defined": len(vals),
                    "value_ci95": [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))],
                    "low_ci95": [float(np.percentile(lows, 2.5)), float(np.percentile(lows, 97.5))],
                    "high_ci95": [float(np.percentile(highs, 2.5)), float(np.percentile(highs, 97.5))],
                    "stable_share": float(np.mean([th.reaches(tolerance, abs(a - lo)) and
                                                   th.reaches(tolerance, abs(b - hi)) for a, b in zip(lows, highs)])),
                    "tolerance": tolerance}
    return Calibration(metric, aspect_type, best["cut_offs"], criterion, best["value"], n, best["confusion"],
                       best["also"], boot)


def graded_examples(rows: list[dict], *, consensus: str = "median"
                    ) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """Per (metric, aspect type): each item's score and consensus tier, from long rows.

    Rows sharing an ``item`` (within a metric and type) are one item graded by several annotators: their consensus
    tier is used (``consensus``: "median", the lower median, or "majority", the most frequent tier with ties to the
    lower median), and their scores must agree. The "adjudicated" consensus needs a campaign's adjudications:
    ``campaign_rows(..., consensus="adjudicated")`` gives one row per item with it, left as it is here.
    """
    combine = CONSENSUS.get(adj.check_method(consensus), _one_tier)
    groups: dict[tuple[str, str], dict] = defaultdict(dict)
    for n, r in enumerate(rows):
        key = (get_metric(r["metric"]).name, r["aspect_type"])
        item = r.get("item")
        item = item if item not in (None, "") else f"row{n}"
        entry = groups[key].setdefault(item, {"score": r["score"], "tiers": []})
        if not np.isclose(entry["score"], r["score"]):
            raise MedevalError(f"item {item!r} has two different {key[0]} scores ({entry['score']} and "
                               f"{r['score']}): one item has one score per metric")
        entry["tiers"].append(int(r["tier"]))
    return {key: (np.array([e["score"] for e in items.values()], dtype=float),
                  np.array([combine(e["tiers"]) for e in items.values()], dtype=int))
            for key, items in sorted(groups.items())}


def calibrate_rows(rows: list[dict], *, criterion: str = "kappa", n_boot: int = 200, rng=0,
                   consensus: str = "median") -> list[Calibration]:
    """Calibrate every (metric, aspect type) of long rows ``metric, aspect_type, score, tier[, item]``.

    ``n_boot`` (a whole number in [0, BOOT_MAX]) and ``rng`` (a seed in [0, SEED_MAX] or a Generator) are
    checked before any work, so a page or a script gets the same one-line error as the CLI.
    """
    from medeval.core.limits import BOOT_MAX, check_number, check_seed

    n_boot = check_number(n_boot, what="n_boot", low=0, high=BOOT_MAX, integer=True)
    if rng is not None and not isinstance(rng, np.random.Generator):
        rng = check_seed(rng, what="seed")
    return [calibrate(metric, atype, scores, tiers, criterion=criterion, n_boot=n_boot, rng=rng)
            for (metric, atype), (scores, tiers) in graded_examples(rows, consensus=consensus).items()]


def campaign_rows(db, campaign_id: int, *, version: int | None = None, consensus: str = "median") -> list[dict]:
    """Graded rows of a campaign for calibration: each annotator's latest tier with the item's scores.

    For a bucket campaign an item counts for the (metric, aspect type) it was sampled for; for a random
    campaign it counts for every metric it has a score for (under the threshold set's scorers; cosine: the one score
    per response the set grades, :func:`medeval.engine.cosine_scorers.graded_scores`). With
    ``consensus`` "majority" or "adjudicated" each item has one row per metric instead, with its consensus
    tier by that method (:func:`medeval.annotation.adjudication.consensus`) and ``user`` None; "median" keeps one
    row per annotator (``user``: the annotator's id), combined by :func:`graded_examples` (or kept one per grade by
    :func:`medeval.calibration.designs.graded_grades`).
    """
    ts = th.load(db, version) if version is not None else th.active(db)
    if not db.conn.execute("SELECT 1 FROM campaigns WHERE id = ?", (campaign_id,)).fetchone():
        raise MedevalError(f"no campaign {campaign_id}")
    q = ("SELECT ci.id, ci.strata, ci.response_id, g.tier, g.user_id FROM latest_grade_annotations g JOIN "
         "campaign_items ci ON ci.id = g.item_id WHERE ci.campaign_id = ? AND g.skipped = 0")
    graded = db.conn.execute(q, (campaign_id,)).fetchall()
    if adj.check_method(consensus) != "median":
        per_item = adj.consensus(db, campaign_id, consensus)
        graded = list({item: (item, strata, rid, per_item[item], None) for item, strata, rid, _, _ in graded}.values())
    rows = []
    for item, strata, rid, tier, user in graded:
        targets = {(s["metric"], s["aspect_type"]) for s in json.loads(strata) if "metric" in s}
        # the scores the set grades: one cosine per response, the one its grading picks (none where two ids tie)
        for _rid, metric, _scorer, score, atype in cosine_scorers.graded_scores(ts, db.conn.execute(
                "SELECT s.response_id, s.metric, s.scorer, s.score, k.aspect_type FROM scores s JOIN responses r ON "
                "r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id WHERE s.response_id = ?", (rid,))):
            if metric == "exact_match":
                continue
            if not targets or (metric, atype) in targets:
                rows.append({"metric": metric, "aspect_type": atype, "score": score, "tier": tier, "item": str(item),
                             "user": user})
    return rows


def publish_set(db, changes: dict[tuple[str, str], tuple[float, float]], *, name: str, actor=None,
                base_version: int | None = None, provenance: dict | None = None) -> int:
    """Store ``changes`` over ``base_version`` (default: the active set) as a new version, activate it, regrade.

    All or nothing, in short transactions: the new version is stored ``building`` (listed nowhere) and graded in
    chunks, then one short transaction grades what was scored meanwhile and makes it ready and active
    (:func:`medeval.engine.thresholds.grade_then_flip`). If anything fails half-way, the new version and its grades
    are removed again, and the old version stays active with every grade consistent with it; if the process is
    killed, the next publication or activation removes them (:func:`medeval.engine.thresholds.one_job`). Audited
    as ``thresholds.publish``.
    """
    from medeval.accounts.policy import authorize
    from medeval.store.db import transaction

    authorize(actor, "thresholds.publish", db=db)
    if not changes:
        raise MedevalError(_("nothing to publish: no cut-offs given"))
    if not (name or "").strip():
        raise MedevalError(_("give the new threshold set a name"))
    who = actor.username if actor else "cli"
    with th.one_job(db):
        with transaction(db):  # stored building: readers see nothing of it until the flip
            base = th.load(db, base_version) if base_version is not None else th.active(db)
            filled = _with_base(changes, base)
            # a boundary the grades left undetermined keeps the base set's cut-off: said so, with its value
            kept_cut = sorted(f"{m}/{t} {'low' if v[0] is None else 'high'} cut-off {filled[(m, t)][v[0] is not None]:g}"
                              for (m, t), v in changes.items() if None in v)
            changes = filled
            cutoffs = dict(base.cutoffs)
            cutoffs.update({k: (th.canonical(v[0]), th.canonical(v[1])) for k, v in changes.items()})
            prov = {"calibrated": True, "base_version": base.version, **(provenance or {}),
                    "kept_from_base": sorted(f"{m}/{t}" for (m, t) in cutoffs if (m, t) not in changes),
                    **({"kept_from_base_cutoffs": kept_cut} if kept_cut else {})}
            ts = th.ThresholdSet(name=name.strip(), cutoffs=cutoffs, tokenizer=base.tokenizer,
                                 embedding_model=base.embedding_model, provenance=prov, created_by=who,
                                 created_at=th._now())
            version = th._insert(db, ts, state="building")
        th.grade_then_flip(db, version, "thresholds.publish", who, lambda was: {
            "name": name.strip(), "base_version": base.version, "strata": len(changes),
            **(provenance or {}).get("source", {})}, undo=False)
    return version


def _with_base(changes: dict, base) -> dict:
    """``changes`` with an undetermined cut-off (None: the grades did not determine that boundary) taken from the
    ``base`` set, every pair checked against its metric's range and order."""
    out = {}
    for (m, t), (lo, hi) in changes.items():
        info = METRICS[get_metric(m).name]
        kept = base.cutoffs.get((get_metric(m).name, t))
        if (lo is None or hi is None) and kept is None:
            raise MedevalError(_("{metric} / {aspect_type}: one cut-off is undetermined by the grades and the base set "
                                 "has none to keep; grade items on both sides of it").format(metric=m, aspect_type=t))
        lo_, hi_ = (kept[0] if lo is None else lo), (kept[1] if hi is None else hi)
        if not (info.low <= lo_ <= hi_ <= info.high):
            if lo is None or hi is None:
                raise MedevalError(_(
                    "{metric} / {aspect_type}: the {which} kept from the base set ({kept}) does not fit the "
                    "estimated one ({est}); grade items on both sides of the undetermined one, or set it on Tune "
                    "cut-offs").format(metric=m, aspect_type=t, which=_("low cut-off") if lo is None else
                                       _("high cut-off"),
                                       kept=lo_ if lo is None else hi_, est=hi_ if lo is None else lo_))
            raise MedevalError(_("cut-offs for {metric} / {aspect_type} must satisfy {low} <= low <= high <= {high}; "
                                 "got {lo}, {hi}").format(metric=m, aspect_type=t, low=info.low, high=info.high,
                                                          lo=lo, hi=hi))
        out[(m, t)] = (lo_, hi_)
    return out


def publish(db, results: list[Calibration], *, name: str, actor=None, base_version: int | None = None,
            source: dict | None = None, consensus: str = "median", design: dict | None = None) -> int:
    """Publish calibrated cut-offs (see :func:`publish_set`); strata not calibrated keep the base set's.

    The provenance records the estimator (``smooth``, or the search and its criterion), the source (e.g. the
    campaign, its items and annotators), the consensus method the expert tiers came from, the design and its rounds
    (``design``: :func:`medeval.calibration.rounds.design_provenance`, for an active campaign) and each stratum's
    criterion, value, n and spread or interval; the smooth estimator's also what it was fitted to, its notes and a
    boundary it left undetermined (kept from the base set).
    """
    from medeval.calibration.estimator_text import estimator_provenance
    adj.check_method(consensus)
    calibrated = [c for c in results if c.cut_offs is not None]
    if not calibrated:
        raise MedevalError("nothing to publish: no (metric, aspect type) could be calibrated")
    provenance = {**estimator_provenance([c.criterion for c in calibrated]), "source": source or {},
                  "consensus": consensus, "strata": [
                      {"metric": c.metric, "aspect_type": c.aspect_type, "criterion": c.criterion, "value": c.value,
                       "n": c.n, "value_ci95": c.bootstrap.get("value_ci95"), "low_ci95": c.bootstrap.get("low_ci95"),
                       "high_ci95": c.bootstrap.get("high_ci95"), "stable_share": c.bootstrap.get("stable_share"),
                       **{k: c.bootstrap[k] for k in ("fitted_to", "at_range_end", "joined", "undetermined")
                          if c.bootstrap.get(k)}}
                      for c in calibrated]}
    if design:  # how the items were drawn: named in the method too, and each stratum's rounds
        from medeval.calibration.estimator_text import DESIGN_TEXT

        per_round = design.get("items_per_round") or {}
        provenance.update({k: v for k, v in design.items() if k != "items_per_round"})
        if design.get("design") in DESIGN_TEXT:
            provenance["method"] = "; ".join([provenance["method"], DESIGN_TEXT[design["design"]]])
        for st in provenance["strata"]:
            if (st["metric"], st["aspect_type"]) in per_round:
                st["items_per_round"] = per_round[(st["metric"], st["aspect_type"])]
    return publish_set(db, {(c.metric, c.aspect_type): c.cut_offs for c in calibrated}, name=name, actor=actor,
                       base_version=base_version, provenance=provenance)


def campaign_source(db, campaign_id: int) -> dict:
    """What a publication from a campaign records: the campaign, its graded items and its annotators."""
    row = db.conn.execute("SELECT name FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    items, annotators = db.conn.execute(
        "SELECT count(DISTINCT g.item_id), count(DISTINCT g.user_id) FROM grade_annotations g JOIN campaign_items ci "
        "ON ci.id = g.item_id WHERE ci.campaign_id = ? AND g.skipped = 0", (campaign_id,)).fetchone()
    return {"campaign": campaign_id, "campaign_name": row[0] if row else None, "items_graded": items,
            "annotators": annotators}
