"""Clinicians vs the machine (MedDisKEval Table 2 / Table 11).

For the items of a campaign: the experts' consensus tier (the median of the
annotators' latest non-skipped tiers) against each metric's raw score (Table 11) and its
automated tier (Table 2, under a threshold-set version); and against the average of the three
metrics' automated tiers, which the paper found stronger than any single metric. Spearman with a
Fisher-z CI; every row carries its n.

The rows (:data:`ROW_DEFINITIONS`): BLEU-1, ROUGE-1 and cosine are computed on the enumerated and
declarative items only (per aspect type and pooled as ``enumerated+declarative``), the metrics' domain
in the paper (§3.2.2). The numeric aspect (Severity Level) is graded by exact match, so it gets its own
``exact_match`` row: counting its exact-match tier under each metric's name would relabel one score as
three (a ρ of 1.0 on a handful of items) and let it dominate pooled rows. The ``average`` row is the
mean of the three metric tiers, on enumerated and declarative items; ``average`` / ``all`` adds the
numeric items with their exact-match tier -- the convention of the report's total score, which the
paper calls "equivalent to the average score in Table 2".

The consensus is chosen explicitly (``consensus=``, :data:`CONSENSUS_METHODS`), and two medians are two names:
"lower-median" (the default: the lower of the two middle tiers when an even number of annotators split, so
always a tier an annotator gave -- the calibration's consensus, :mod:`medeval.annotation.adjudication`) and
"mean-of-middle" (the median as statistics computes it: the mean of the two middle tiers, x.5 when an even
panel splits evenly); "majority" (the most frequent tier, ties to the lower median) or "adjudicated" (the
adjudicator's final tier where there is one, else the lower median). The bare word "median" is the library's
lower median, as everywhere else in medeval; the command line refuses it here (``report-agreement``), where
it used to mean the mean of the middle two: a researcher must pick one of the two names.

The threshold set: the figures of a validation campaign are computed under the set it validates (the
``validates_version`` recorded when it was drawn, :func:`validated_set`), not the set active when the report
is read -- a set published since would otherwise be "validated" by a sample drawn for another. A campaign that
records none (a calibration campaign) is computed under the active set, and the result says which.

Cosine: a response scored by several ids of the set's embedding model is read by the one the set's grading
picks (:func:`medeval.engine.thresholds.cosine_pick`); where two fit equally, its cosine row leaves it out.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation import adjudication as adj
from medeval.core.errors import MedevalError
from medeval.annotation.campaigns.sampling import validation_overlap
from medeval.core.display import aspect_type_name
from medeval.core.i18n import N_, _
from medeval.engine import thresholds as th
from medeval.engine.registry import label, report_metrics
from medeval.stats.agreement import correlation
from medeval.stats.agreement.correlations import ci_undefined_reason

CONSENSUS_METHODS = ("lower-median", "mean-of-middle", "majority", "adjudicated")
"""How "Clinicians vs the machine" combines an item's tiers (the first is the default)."""
CONSENSUS_NAMES = {"lower-median": N_("lower median"), "mean-of-middle": N_("mean of the two middle tiers"),
                   "majority": N_("majority"), "adjudicated": N_("adjudicated")}
"""Each consensus as a page or report names it (English, marked: show ``_()`` of it)."""
CONSENSUS_NOTES = {
    "lower-median": N_("the lower median of the annotators' tiers: with an even number of annotators the lower of "
                       "the two middle tiers, so always a tier an annotator gave (the calibration's consensus)"),
    "mean-of-middle": N_("the median as statistics computes it: with an even number of annotators the mean of the "
                         "two middle tiers (x.5 when they split evenly)"),
    "majority": N_("the most frequent tier; ties resolved to the lower median"),
    "adjudicated": N_("the adjudicator's final tier where an item was adjudicated, otherwise the lower median"),
}
"""What each consensus is, in a clause (English, marked: show ``_()`` of it)."""
AMBIGUOUS_MEDIAN = ("--consensus median is ambiguous: choose lower-median (the lower of the two middle tiers when "
                    "an even number of annotators split, always a tier someone gave -- what calibrate uses) or "
                    "mean-of-middle (the mean of the two middle tiers, x.5 when they split evenly -- what "
                    "report-agreement called median before)")


def consensus_key(method: str | None) -> str:
    """The canonical consensus name of a summary (one written before the two medians were named: "median" was
    the mean of the two middle tiers there)."""
    return {None: "mean-of-middle", "median": "mean-of-middle"}.get(method, method)


CONSENSUS_WORDS = {
    "lower-median": N_("lower median clinician tier (the lower of the two middle tiers when an even number of "
                       "clinicians split, so always a tier a clinician gave)"),
    "mean-of-middle": N_("median clinician tier taken as the mean of the two middle tiers (x.5 when an even number "
                         "of clinicians split evenly)"),
    "majority": N_("majority clinician tier (the most frequent tier; ties resolved to the lower median)"),
    "adjudicated": N_("adjudicated tier (a senior clinician's final tier where an item was adjudicated, otherwise the "
                      "lower median clinician tier)"),
}
"""How "Clinicians vs the machine" names each consensus (English, marked: show ``_()`` of it)."""


def check_consensus(method: str) -> str:
    """The canonical name of an agreement consensus (:data:`CONSENSUS_METHODS`); the library's bare "median" is the
    lower median (as in :mod:`medeval.annotation.adjudication` and the calibration). Anything else: an error."""
    if method in ("median", "lower-median"):
        return "lower-median"
    if method not in CONSENSUS_METHODS:
        raise MedevalError(_("consensus {method} is not one of {methods}: choose one of them").format(
            method=repr(method), methods=", ".join(CONSENSUS_METHODS)))
    return method


def consensus_label(method: str) -> str:
    """A consensus in words, with what it is (in the language of the moment)."""
    m = check_consensus(method)
    return _("{name} ({note})").format(name=_(CONSENSUS_NAMES[m]), note=_(CONSENSUS_NOTES[m]))


def consensus_tiers(db: sqlite_utils.Database, campaign_id: int, consensus: str = "lower-median") -> dict[int, float]:
    """response id -> the consensus of the annotators' latest tiers (skips left out) by the method ``consensus``
    (:data:`CONSENSUS_METHODS`)."""
    method = check_consensus(consensus)
    if method != "mean-of-middle":
        by_response = dict(db.conn.execute("SELECT id, response_id FROM campaign_items WHERE campaign_id = ?",
                                           (campaign_id,)).fetchall())
        return {by_response[item]: float(t) for item, t in adj.consensus(
            db, campaign_id, "median" if method == "lower-median" else method).items()}
    q = ("SELECT ci.response_id, g.tier FROM latest_grade_annotations g JOIN campaign_items ci ON ci.id = g.item_id "
         "WHERE ci.campaign_id = ? AND g.skipped = 0")
    by_item: dict[int, list[int]] = defaultdict(list)
    for rid, tier in db.conn.execute(q, (campaign_id,)):
        by_item[rid].append(tier)
    return {rid: float(statistics.median(t)) for rid, t in by_item.items()}


POOLED = "enumerated+declarative"
ALL = "all"
TEXT_TYPES = ("enumerated", "declarative")
AVERAGE_METRICS = ("bleu1", "rouge1", "cosine")
"""The average row's metrics: MedDisKEval Table 2's average of the three built-in metrics, whatever plugins add (a
plugin metric has rows of its own)."""
ROW_DEFINITIONS = {
    ("metric", POOLED): N_("enumerated and declarative items together (numeric items are not scored by this metric)"),
    ("exact_match", "numeric"): N_("numeric items (Severity Level), graded by exact match: the score is 0 or 1, "
                                   "the tier 0 or 2"),
    ("average", "enumerated"): N_("mean of the BLEU-1, ROUGE-1 and cosine tiers (MedDisKEval Table 2, average row)"),
    ("average", "declarative"): N_("mean of the BLEU-1, ROUGE-1 and cosine tiers (MedDisKEval Table 2, average row)"),
    ("average", POOLED): N_("mean of the BLEU-1, ROUGE-1 and cosine tiers, enumerated and declarative items"),
    ("average", ALL): N_("every item: the mean of the three metric tiers for enumerated and declarative items, the "
                         "exact-match tier for numeric items (the report's total-score convention)"),
}
TYPE_ITEMS = N_("{type} items")


def row_definition(metric: str, aspect_type: str) -> str:
    """What a row of :func:`machine_agreement` is computed on, in words (in the language of the moment)."""
    if metric in report_metrics() and aspect_type == POOLED:
        return _(ROW_DEFINITIONS[("metric", POOLED)])
    if metric not in report_metrics() and (metric, aspect_type) in ROW_DEFINITIONS:
        return _(ROW_DEFINITIONS[(metric, aspect_type)])
    return _(TYPE_ITEMS).format(type=aspect_type_name(aspect_type))


AGAINST = {"score": N_("raw score"), "tier": N_("automated tier")}
"""What a row correlates the clinicians' consensus with, as a page names it."""
DISPLAY_COLUMNS = {"metric": N_("metric"), "aspect type": N_("aspect type"), "against": N_("against"),
                   "items": N_("items"), "undefined": N_("undefined")}
"""The columns of :func:`display_rows` as a page heads them (``webui.tables.dataframe``'s ``labels``)."""


def display_rows(rows: list[dict]) -> list[dict]:
    """The rows of :func:`machine_agreement` as a page shows them, in the reader's language: each metric by its
    label, the 95% CI as one text, what the row is computed on, and why it (or its CI) is undefined. The columns
    keep their English keys (:data:`DISPLAY_COLUMNS` heads them on screen)."""
    return [{"metric": label(r["metric"]), "aspect type": aspect_type_name(r["aspect_type"]),
             "against": _(AGAINST[r["against"]]) if r["against"] in AGAINST else r["against"], "n": r["n"],
             "Spearman": r["spearman"], "95% CI": f"{r['ci95'][0]:.2f} – {r['ci95'][1]:.2f}" if r["ci95"] else (
                 _("undefined") if r.get("ci_undefined_reason") else None),
             "p": r["p"], "items": r.get("definition", ""),
             "undefined": r.get("undefined_reason") or r.get("ci_undefined_reason")} for r in rows]


def validated_set(db: sqlite_utils.Database, campaign_id: int) -> tuple[th.ThresholdSet, str]:
    """The threshold set "Clinicians vs the machine" is computed under for a campaign, and why: ``(set,
    "validated")`` for a validation campaign (the ``validates_version`` it recorded when it was drawn), else
    ``(the active set, "active")``. A recorded set this database no longer has is an error, not a silent switch."""
    row = db.conn.execute("SELECT config FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    cfg = json.loads(row[0]) if row[0] else {}
    v = cfg.get("validates_version")
    if isinstance(v, int) and not isinstance(v, bool):
        try:
            return th.load(db, v), "validated"
        except MedevalError:
            raise MedevalError(_("campaign {id} validates threshold set v{version}, which this database no longer "
                                 "has: choose the set to compare with explicitly").format(id=campaign_id, version=v))
    return th.active(db), "active"


def _set_of(db, campaign_id: int, version: int | None) -> th.ThresholdSet:
    return th.load(db, version) if version is not None else validated_set(db, campaign_id)[0]


def machine_agreement(db: sqlite_utils.Database, campaign_id: int, *, version: int | None = None,
                      actor: User | None, consensus: str = "lower-median") -> list[dict]:
    """Rows of {metric, aspect_type, against ('score'|'tier'), n, spearman, ci95, p, definition,
    undefined_reason, ci_undefined_reason}.

    Spearman between the clinicians' consensus tier (``consensus``: :data:`CONSENSUS_METHODS`) and the
    automated score or tier under ``version`` (default: the set the campaign validates, else the active set:
    :func:`validated_set`). Metric rows: enumerated and declarative items only; ``exact_match``: numeric items;
    ``average``: the mean of the three metric tiers (an item counts only when all three are graded). See the
    module docstring.
    """
    authorize(actor, "reports.read", db=db)
    check_consensus(consensus)
    ts = _set_of(db, campaign_id, version)
    consensus = consensus_tiers(db, campaign_id, consensus)
    if not consensus:
        return []
    ids = list(consensus)
    found: dict[tuple[int, str], dict[str, float]] = defaultdict(dict)  # (response, metric) -> {scorer: score}
    tiers: dict[tuple[int, str], int] = {}
    graded_by: dict[tuple[int, str], str] = {}
    atype: dict[int, str] = {}
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        marks = ",".join("?" * len(part))
        for rid, metric, scorer, score, t in db.conn.execute(
                f"SELECT s.response_id, s.metric, s.scorer, s.score, k.aspect_type FROM scores s "
                f"JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id "
                f"WHERE s.response_id IN ({marks})", part):
            if ts.grades(metric, scorer):
                found[(rid, metric)][scorer] = score
                atype[rid] = t
        for rid, metric, scorer, tier in db.conn.execute(
                f"SELECT response_id, metric, scorer, tier FROM grades WHERE version = ? AND response_id IN ({marks})",
                [ts.version, *part]):
            tiers[(rid, metric)] = tier
            graded_by[(rid, metric)] = scorer
    scores: dict[tuple[int, str], float] = {}
    for key, by in found.items():
        # the score whose grade is stored; else the one the set's grading picks (none where two cosine ids tie)
        scorer = graded_by.get(key) if graded_by.get(key) in by else (
            th.cosine_pick(ts, by)[0] if key[1] == "cosine" else next(iter(by)))
        if scorer is None:
            continue
        scores[key] = by[scorer]
        if key not in tiers and (key[1], atype[key[0]]) in ts.cutoffs:  # the set was not graded on it (yet)
            tiers[key] = ts.grade(key[1], atype[key[0]], by[scorer])
    present = sorted({t for t in atype.values()})
    text_groups = [t for t in TEXT_TYPES if t in present]
    groups = text_groups + ([POOLED] if len(text_groups) > 1 else [])

    def members(group: str) -> list[int]:
        want = TEXT_TYPES if group == POOLED else (group,)
        return [rid for rid in ids if atype.get(rid) in want]

    def avg(r: int) -> float | None:
        if atype.get(r) in TEXT_TYPES:
            return (sum(tiers[(r, m)] for m in AVERAGE_METRICS) / len(AVERAGE_METRICS)
                    if all((r, m) in tiers for m in AVERAGE_METRICS) else None)
        return float(tiers[(r, "exact_match")]) if (r, "exact_match") in tiers else None

    plan: list[tuple[str, str, dict]] = []
    for metric in report_metrics():
        for group in groups:
            rs = members(group)
            plan.append((metric, group, {
                "score": [(consensus[r], scores[(r, metric)]) for r in rs if (r, metric) in scores],
                "tier": [(consensus[r], tiers[(r, metric)]) for r in rs if (r, metric) in tiers]}))
    numeric = [rid for rid in ids if atype.get(rid) == "numeric"]
    if numeric:
        plan.append(("exact_match", "numeric", {
            "score": [(consensus[r], scores[(r, "exact_match")]) for r in numeric if (r, "exact_match") in scores],
            "tier": [(consensus[r], tiers[(r, "exact_match")]) for r in numeric if (r, "exact_match") in tiers]}))
    for group in groups:
        plan.append(("average", group, {"tier": [(consensus[r], a) for r in members(group)
                                                 if (a := avg(r)) is not None]}))
    if numeric and text_groups:
        plan.append(("average", ALL, {"tier": [(consensus[r], a) for r in ids if r in atype
                                               and (a := avg(r)) is not None]}))
    rows = []
    for metric, group, targets in plan:
        for against, pairs in targets.items():
            if not pairs:
                continue
            x, y = zip(*pairs)
            e = correlation(x, y, "spearman")
            rows.append({"metric": metric, "aspect_type": group, "against": against, "n": e.n_pairable,
                         "spearman": e.value, "ci95": list(e.ci95) if e.ci95 else None, "p": e.extra.get("p"),
                         "undefined_reason": e.undefined_reason, "ci_undefined_reason": ci_undefined_reason(e),
                         "definition": row_definition(metric, group)})
    return rows


def overlap(db: sqlite_utils.Database, campaign_id: int, *, version: int | None = None) -> dict:
    """The campaign's items shared with the campaigns that calibrated ``version`` (default: :func:`validated_set`).

    See :func:`medeval.annotation.campaigns.sampling.validation_overlap`.
    """
    return validation_overlap(db, campaign_id, _set_of(db, campaign_id, version))


def methods_sentence(rows: list[dict], mv: dict | None, ov: dict | None) -> str:
    """How the rows of "Clinicians vs the machine" are defined, with their n, and the overlap with calibration (in
    the language of the moment)."""
    if mv and mv.get("source") == "validated":
        out = _(" (automated tiers under threshold set v{version}, {name}: the set this validation campaign "
                "validates)").format(version=mv["version"], name=mv["name"])
    elif mv and mv.get("source") == "active":
        out = _(" (automated tiers under threshold set v{version}, {name}: the active set; the campaign records no "
                "set it validates)").format(version=mv["version"], name=mv["name"])
    else:
        out = (_(" (automated tiers under threshold set v{version}, {name})").format(
            version=mv["version"], name=mv["name"]) if mv else "")
    out += _(". ")
    overlap_text = _("Overlap with calibration: {text}. ").format(text=ov["text"]) if ov else ""
    if not rows:
        return out + overlap_text

    def n_of(metric: str, group: str):
        ns = [r["n"] for r in rows if r["metric"] == metric and r["aspect_type"] == group]
        return max(ns) if ns else None

    metrics = [label(m) for m in report_metrics() if any(r["metric"] == m for r in rows)]
    pooled = next((g for g in (POOLED, *TEXT_TYPES) if any(r["aspect_type"] == g for r in rows)), None)
    parts = []
    if metrics and pooled:
        n_text = max(n_of(m, pooled) or 0 for m in report_metrics())
        if len(metrics) > 1:
            parts.append(_("{metrics} and {last} were correlated on the enumerated and declarative items only "
                           "({group}: n = {n})").format(metrics=_(", ").join(metrics[:-1]), last=metrics[-1],
                                                       group=aspect_type_name(pooled), n=n_text))
        else:
            parts.append(_("{metric} was correlated on the enumerated and declarative items only ({group}: n = {n})")
                         .format(metric=metrics[-1], group=aspect_type_name(pooled), n=n_text))
    if n_of("exact_match", "numeric") is not None:
        parts.append(_("the numeric items (Severity Level), graded by exact match, in a row of their own "
                       "({name}: n = {n})").format(name=label("exact_match"), n=n_of("exact_match", "numeric")))
    if pooled and n_of("average", pooled) is not None:
        parts.append(_("the average row is the mean of the three metric tiers per item (n = {n}, items with all three "
                       "tiers)").format(n=n_of("average", pooled)))
    if n_of("average", ALL) is not None:
        parts.append(_("the average over all items adds the numeric items with their exact-match tier "
                       "(n = {n})").format(n=n_of("average", ALL)))
    if parts:
        out += _("; ").join(parts) + _(". ")
    return out + overlap_text
