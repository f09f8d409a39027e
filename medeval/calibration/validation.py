"""Clinicians vs the machine (MedDisKEval Table 2 / Table 11).

For the items of a campaign: the experts' consensus tier (the median of the
annotators' latest non-skipped tiers) against each metric's raw score and its
automated tier (under a threshold-set version), per metric and aspect type and
pooled; and against the average of the three metrics' automated tiers, which
the paper found stronger than any single metric. Spearman with a Fisher-z CI.

The consensus is chosen explicitly (``consensus=``): "median" (the default, as before: the median of
the tiers, x.5 when an even number of annotators split evenly), "majority" (the most frequent tier,
ties to the lower median) or "adjudicated" (the adjudicator's final tier where there is one, else the
lower median) -- see :mod:`medeval.annotation.adjudication`.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

import sqlite_utils

from medeval.accounts.auth import User, require_role
from medeval.annotation import adjudication as adj
from medeval.engine import thresholds as th
from medeval.engine.metrics import REPORT_METRICS
from medeval.stats.agreement import correlation


def consensus_tiers(db: sqlite_utils.Database, campaign_id: int, consensus: str = "median") -> dict[int, float]:
    """response id -> the consensus of the annotators' latest tiers (skips left out) by the method ``consensus``."""
    if adj.check_method(consensus) != "median":
        by_response = dict(db.conn.execute("SELECT id, response_id FROM campaign_items WHERE campaign_id = ?",
                                           (campaign_id,)).fetchall())
        return {by_response[item]: float(t) for item, t in adj.consensus(db, campaign_id, consensus).items()}
    q = ("SELECT ci.response_id, g.tier FROM grade_annotations g JOIN campaign_items ci ON ci.id = g.item_id "
         "WHERE ci.campaign_id = ? AND g.skipped = 0 AND g.id = (SELECT max(id) FROM grade_annotations g2 "
         "WHERE g2.item_id = g.item_id AND g2.user_id = g.user_id)")
    by_item: dict[int, list[int]] = defaultdict(list)
    for rid, tier in db.conn.execute(q, (campaign_id,)):
        by_item[rid].append(tier)
    return {rid: float(statistics.median(t)) for rid, t in by_item.items()}


def machine_agreement(db: sqlite_utils.Database, campaign_id: int, *, version: int | None = None,
                      actor: User | None, consensus: str = "median") -> list[dict]:
    """Rows of {metric, aspect_type, against ('score'|'tier'), estimate} -- Spearman with CI and n.

    ``consensus``: how the clinicians' tiers of an item are combined (median, majority, adjudicated).
    """
    if actor is not None:
        require_role(actor, "researcher", "admin")
    adj.check_method(consensus)
    ts = th.load(db, version) if version is not None else th.active(db)
    consensus = consensus_tiers(db, campaign_id, consensus)
    if not consensus:
        return []
    ids = list(consensus)
    scores: dict[tuple[int, str], float] = {}
    tiers: dict[tuple[int, str], int] = {}
    atype: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        marks = ",".join("?" * len(part))
        for rid, metric, scorer, score, t in db.conn.execute(
                f"SELECT s.response_id, s.metric, s.scorer, s.score, k.aspect_type FROM scores s "
                f"JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id "
                f"WHERE s.response_id IN ({marks})", part):
            ok = th.embedding_matches(ts.embedding_model, scorer) if metric == "cosine" else scorer == ts.scorer_for(metric)
            if ok:
                scores[(rid, metric)] = score
                atype[rid] = t
        for rid, metric, tier in db.conn.execute(
                f"SELECT response_id, metric, tier FROM grades WHERE version = ? AND response_id IN ({marks})",
                [ts.version, *part]):
            tiers[(rid, metric)] = tier
    # the numeric aspect's exact match stands for every metric, as in the report
    for (rid, metric), v in list(scores.items()):
        if metric == "exact_match":
            for m in REPORT_METRICS:
                scores.setdefault((rid, m), v)
                if (rid, "exact_match") in tiers:
                    tiers.setdefault((rid, m), tiers[(rid, "exact_match")])
    rows = []
    groups = sorted({t for t in atype.values()}) + ["all"]
    for metric in REPORT_METRICS + ("average",):
        for group in groups:
            members = [rid for rid in ids if rid in atype and (group == "all" or atype[rid] == group)]
            if metric == "average":
                pairs = [(consensus[r], sum(tiers[(r, m)] for m in REPORT_METRICS) / len(REPORT_METRICS)) for r in members
                         if all((r, m) in tiers for m in REPORT_METRICS)]
                targets = {"tier": pairs}
            else:
                targets = {"score": [(consensus[r], scores[(r, metric)]) for r in members if (r, metric) in scores],
                           "tier": [(consensus[r], tiers[(r, metric)]) for r in members if (r, metric) in tiers]}
            for against, pairs in targets.items():
                if not pairs:
                    continue
                x, y = zip(*pairs)
                e = correlation(x, y, "spearman")
                rows.append({"metric": metric, "aspect_type": group, "against": against, "n": e.n_pairable,
                             "spearman": e.value, "ci95": list(e.ci95) if e.ci95 else None, "p": e.extra.get("p"),
                             "undefined_reason": e.undefined_reason})
    return rows
