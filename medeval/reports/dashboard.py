"""Agreement of a grading campaign: the panel, each annotator, the widest disagreements.

Everything the researchers' dashboard and the agreement report show, as plain data,
computed from the latest answer of every (item, annotator) of a campaign. Tiers are
ordinal (0 < 1 < 2), so the panel statistics are those that respect the order:
Krippendorff's alpha at the ordinal level (any number of annotators, missing answers
allowed) and Cohen's kappa with linear weights per pair of annotators; percent
agreement and Fleiss' kappa are shown for orientation only.

Adjudication (:mod:`medeval.annotation.adjudication`) never changes these statistics: they stay
computed on the raw annotations. The summary says how many items were adjudicated and how often the
adjudicator chose the annotators' majority tier; the consensus of "Clinicians vs the machine" is
chosen explicitly (``consensus=``: lower-median, mean-of-middle, majority or adjudicated,
:data:`medeval.calibration.validation.CONSENSUS_METHODS`) and stated in the methods. "Clinicians vs the machine"
is computed under the set a validation campaign validates (:func:`medeval.calibration.validation.validated_set`).
"""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation import adjudication as adj
from medeval.annotation.gold import gold_accuracy, methods_sentence
from medeval.annotation.campaigns import require_grading
from medeval.core.display import percent
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.stats.agreement import (
    Estimate,
    RatingTable,
    check_bootstrap,
    cohen_kappa,
    correlation,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    percent_agreement,
)
from medeval.calibration.validation import CONSENSUS_WORDS, consensus_key  # noqa: F401 (pages read them here)
from medeval.stats.agreement.correlations import ci_undefined_reason

TIER_CATEGORIES = (0, 1, 2)
BREAK_S = 10 * 60  # a gap longer than this between two answers is a break, not time spent on an item
DRIFT_BLOCK = 20  # answers per block in the drift series

# (title, what it measures, how to read it), marked: the summary holds them in the language of the moment
EXPLAIN = {
    "alpha": (N_("Krippendorff's alpha, ordinal"), N_("How much the annotators agree beyond chance, counting a "
              "1-vs-3 disagreement as worse than 1-vs-2; works with any number of annotators and missing answers."),
              N_("Krippendorff: ≥ 0.800 reliable; 0.667-0.800 tentative conclusions only; < 0.667 unreliable.")),
    "kappa": (N_("Cohen's kappa, linear weights (mean over annotator pairs)"), N_("Chance-corrected agreement of "
              "two annotators at a time on the items both graded, with partial credit for adjacent tiers."),
              N_("Landis & Koch: 0.41-0.60 moderate, 0.61-0.80 substantial, > 0.80 almost perfect.")),
    "fleiss": (N_("Fleiss' kappa"), N_("Chance-corrected agreement of the panel treating tiers as unordered; only "
               "items graded by every annotator count."), N_("Read with alpha: it ignores how far apart tiers are.")),
    "icc2": ("ICC(2,1)", N_("Absolute agreement of a single rater's score, the raters being a random sample of "
             "clinicians (two-way random effects); only items rated by every rater count."),
             N_("Koo & Li: < 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, > 0.9 excellent (read the CI).")),
    "icc2k": ("ICC(2,k)", N_("The same for the mean of the k raters: use it when the panel's mean is the score "
              "that is reported."), N_("Koo & Li, as for ICC(2,1).")),
    "alpha_interval": (N_("Krippendorff's alpha, interval"), N_("Agreement on a numeric scale counting the size of "
                       "differences, with missing ratings allowed."),
                       N_("Krippendorff: ≥ 0.800 reliable; 0.667-0.800 tentative conclusions only.")),
    "alpha_nominal": (N_("Krippendorff's alpha, nominal"), N_("Agreement on unordered choices (A, B or tie) beyond "
                      "chance, any number of annotators, missing answers allowed."),
                      N_("Krippendorff: ≥ 0.800 reliable; 0.667-0.800 tentative conclusions only.")),
    "percent": (N_("Percent agreement"), N_("Per item, the share of annotator pairs giving the same tier, averaged "
                "over items; not corrected for chance."),
                N_("Orientation only: high values can come from chance alone.")),
}


@dataclass(frozen=True)
class Answer:
    item_id: int
    annotator: str
    tier: int | None
    skipped: bool
    at: float


def answers(db: sqlite_utils.Database, campaign_id: int) -> list[Answer]:
    """The latest answer of every (item, annotator) of a campaign, in the order they were given."""
    if not db.conn.execute("SELECT 1 FROM campaigns WHERE id = ?", (campaign_id,)).fetchone():
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    rows = db.conn.execute(
        "SELECT g.item_id, u.username, g.tier, g.skipped, g.created_at FROM latest_grade_annotations g "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ? "
        "ORDER BY g.created_at, g.id", (campaign_id,)).fetchall()
    return [Answer(r[0], r[1], r[2], bool(r[3]), r[4]) for r in rows]


def _first_answer_times(db, campaign_id: int) -> dict[str, list[float]]:
    """When each annotator first answered each item (changes later do not count as time spent)."""
    out: dict[str, list[float]] = defaultdict(list)
    for user, at in db.conn.execute(
            "SELECT u.username, min(g.created_at) FROM grade_annotations g JOIN campaign_items ci ON "
            "ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ? GROUP BY g.item_id, "
            "g.user_id ORDER BY 2", (campaign_id,)):
        out[user].append(at)
    return out


def _table(graded: list[Answer], categories=TIER_CATEGORIES) -> RatingTable:
    """Items x annotators matrix of values (NaN = no answer), built once for every statistic."""
    items = sorted({a.item_id for a in graded})
    raters = sorted({a.annotator for a in graded})
    row = {i: n for n, i in enumerate(items)}
    col = {r: n for n, r in enumerate(raters)}
    m = np.full((len(items), len(raters)), np.nan)
    code = {v: n for n, v in enumerate(categories)}  # values are stored as their position in the category set
    for a in graded:
        if a.tier not in code:
            raise MedevalError(f"value {a.tier!r} is not one of the categories {list(categories)}")
        m[row[a.item_id], col[a.annotator]] = code[a.tier]
    return RatingTable(m, items, raters, labels=list(categories))


def _mean_pairwise_kappa(t: RatingTable) -> Estimate:
    values, pairs, n_pairable = [], [], 0
    for j1, j2 in combinations(range(t.n_raters), 2):
        both = ~np.isnan(t.values[:, j1]) & ~np.isnan(t.values[:, j2])
        if both.sum() < 2:
            continue
        sub = RatingTable(t.values[both][:, [j1, j2]], [i for i, b in zip(t.items, both) if b],
                          [t.raters[j1], t.raters[j2]], labels=t.labels)
        e = cohen_kappa(sub, "linear", TIER_CATEGORIES, n_boot=0)
        pairs.append({"pair": [t.raters[j1], t.raters[j2]], "n": int(both.sum()), "kappa": e.value,
                      "undefined_reason": e.undefined_reason})
        n_pairable += int(both.sum())
        if e.value is not None:
            values.append(e.value)
    raters = t.raters
    n_items = t.n_items
    if not values:
        reason = (_("no two annotators graded the same two items") if not pairs
                  else _("undefined for every pair: {reasons}").format(
                      reasons=_("; ").join(p["undefined_reason"] or "" for p in pairs)))
        return Estimate("cohen_kappa_linear_mean", None, None, n_items, len(raters), n_pairable,
                        _("pairwise: items graded by both"), reason, {"pairs": pairs}, _("mean of pairwise kappas"))
    return Estimate("cohen_kappa_linear_mean", float(np.mean(values)), None, n_items, len(raters), n_pairable,
                    _("pairwise: items graded by both"), None, {"pairs": pairs, "min": min(values), "max": max(values)},
                    _("mean of pairwise linear-weighted Cohen's kappas (range in extra; no CI for the mean)"))


# which statistics fit which scale (the first is the headline): tiers are ordinal, Likert ratings are treated
# as interval, preferences (A / B / tie) are nominal
SCALES = {
    "tiers": ("alpha", "kappa", "fleiss", "percent"),
    "likert": ("icc2", "icc2k", "alpha_interval", "percent"),
    "preference": ("alpha_nominal", "fleiss", "percent"),
}
CAMPAIGN_SCALE = {"bucket_grading": "tiers", "random_validation": "tiers"}


def panel_statistics(graded: list[Answer], *, scale: str = "tiers", categories=None, n_boot: int = 1000,
                     seed: int = 0) -> list[dict]:
    """The panel statistics that fit ``scale``, each with its one-line explanation and reading guide.

    ``categories``: the ordered values of the scale (tiers: 0, 1, 2; Likert: e.g. 1-5; preference: the choices).
    """
    n_boot, seed = check_bootstrap(n_boot, seed)
    if scale not in SCALES:
        raise MedevalError(f"scale {scale!r} is not one of {', '.join(SCALES)}")
    out = []
    if not graded:
        return out
    cats = tuple(categories) if categories is not None else (TIER_CATEGORIES if scale == "tiers" else None)
    t = _table(graded, cats) if cats is not None else _table(graded, tuple(sorted({a.tier for a in graded})))
    compute = {
        "alpha": lambda: krippendorff_alpha(t, "ordinal", cats, n_boot=n_boot, rng=seed),
        "kappa": lambda: _mean_pairwise_kappa(t),
        "fleiss": lambda: fleiss_kappa(t, cats),
        "percent": lambda: percent_agreement(t),
        "icc2": lambda: icc(t)["ICC2"],
        "icc2k": lambda: icc(t)["ICC2k"],
        "alpha_interval": lambda: krippendorff_alpha(t, "interval", cats, n_boot=n_boot, rng=seed),
        "alpha_nominal": lambda: krippendorff_alpha(t, "nominal", cats, n_boot=n_boot, rng=seed),
    }
    estimates = {key: compute[key]() for key in SCALES[scale]}
    for key, e in estimates.items():
        title, why, guide = (_(x) for x in EXPLAIN[key])
        out.append({"key": key, "title": title, "why": why, "guide": guide, "estimate": e.to_dict()})
    return out


def _others_median(t: RatingTable, j: int) -> dict:
    """Per item, the median tier of every annotator but the j-th (items nobody else graded are left out)."""
    rest = np.delete(t.values, j, axis=1)
    has = (~np.isnan(rest)).any(axis=1)
    med = np.full(t.n_items, np.nan)
    if has.any():
        med[has] = np.nanmedian(rest[has], axis=1)
    return {i: float(v) for i, v, h in zip(t.items, med, has) if h}


def annotator_panel(db: sqlite_utils.Database, campaign_id: int, all_answers: list[Answer]) -> list[dict]:
    """Per annotator: agreement with the rest of the panel, time per item, drift, skips, flags."""
    graded = [a for a in all_answers if not a.skipped]
    firsts = _first_answer_times(db, campaign_id)
    flagged = dict(db.conn.execute(
        "SELECT u.username, count(DISTINCT g.item_id) FROM grade_annotations g JOIN campaign_items ci ON "
        "ci.id = g.item_id JOIN users u ON u.id = g.user_id WHERE ci.campaign_id = ? AND g.flagged = 1 "
        "GROUP BY u.username", (campaign_id,)).fetchall())
    assigned = dict(db.conn.execute(
        "SELECT u.username, count(*) FROM assignments a JOIN users u ON u.id = a.user_id WHERE a.campaign_id = ? "
        "GROUP BY u.username", (campaign_id,)).fetchall())
    t = _table(graded) if graded else None
    rows = []
    for name in sorted(assigned):
        mine = [a for a in graded if a.annotator == name]
        others = _others_median(t, t.raters.index(name)) if t is not None and name in t.raters else {}
        shared = [(a.tier, others[a.item_id]) for a in mine if a.item_id in others]
        if shared:
            e = correlation([x for x, _ in shared], [y for _, y in shared], "spearman")
            exact = float(np.mean([x == round(y) for x, y in shared]))
            bias = float(np.mean([x - y for x, y in shared]))
        else:
            e, exact, bias = None, None, None
        times = firsts.get(name, [])
        gaps = [b - a for a, b in zip(times, times[1:]) if 0 <= b - a <= BREAK_S]
        # drift: agreement with the rest of the panel, block by block, in the order the answers were given
        blocks = []
        for i in range(0, len(mine), DRIFT_BLOCK):
            part = [(a.tier, others[a.item_id]) for a in mine[i:i + DRIFT_BLOCK] if a.item_id in others]
            if part:
                blocks.append({"block": i // DRIFT_BLOCK + 1, "answers": f"{i + 1}-{i + len(mine[i:i + DRIFT_BLOCK])}",
                               "n": len(part), "exact_agreement": float(np.mean([x == round(y) for x, y in part])),
                               "mean_difference": float(np.mean([x - y for x, y in part]))})
        answered = [a for a in all_answers if a.annotator == name]
        rows.append({
            "annotator": name, "assigned": assigned[name], "answered": len(answered), "graded": len(mine),
            "skipped": sum(a.skipped for a in answered),
            "skip_rate": (sum(a.skipped for a in answered) / len(answered)) if answered else None,
            "flagged": flagged.get(name, 0), "n_shared": len(shared),
            "spearman_vs_panel": e.value if e else None, "spearman_ci95": list(e.ci95) if e and e.ci95 else None,
            "undefined_reason": (e.undefined_reason if e else _("no item shared with another annotator")),
            "spearman_ci95_undefined_reason": ci_undefined_reason(e) if e else None,  # e.g. |rho| = 1
            "exact_agreement_vs_panel": exact, "mean_difference_vs_panel": bias,
            "median_seconds_per_item": float(np.median(gaps)) if gaps else None,
            "drift": blocks,
        })
    return rows


def widest_disagreements(graded: list[Answer], *, limit: int = 20) -> list[dict]:
    """Items whose annotators disagree most (range of tiers, then spread), with their tiers."""
    by_item: dict[int, dict[str, int]] = defaultdict(dict)
    for a in graded:
        by_item[a.item_id][a.annotator] = a.tier
    rows = [{"item": i, "range": max(t.values()) - min(t.values()), "sd": float(statistics.pstdev(t.values())),
             "tiers": dict(sorted(t.items()))} for i, t in by_item.items() if len(t) >= 2]
    rows = [r for r in rows if r["range"] > 0]
    rows.sort(key=lambda r: (-r["range"], -r["sd"], r["item"]))
    return rows[:limit]


def tier_distribution(graded: list[Answer]) -> list[dict]:
    """How often each annotator used each tier (a lenient or a severe grader shows here first)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for a in graded:
        counts[a.annotator][a.tier] += 1
    return [{"annotator": name, "tier": t, "count": c[t]} for name, c in sorted(counts.items()) for t in range(3)]


def campaign_agreement(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None, n_boot: int = 1000,
                       seed: int = 0, include_machine: bool = True, consensus: str = "lower-median") -> dict:
    """Everything the dashboard shows for one campaign, as plain data (JSON-ready).

    ``consensus``: how "Clinicians vs the machine" combines an item's tiers (recorded by its canonical name as
    ``consensus``; the bare "median" is the lower median).
    """
    from medeval.calibration.validation import check_consensus

    n_boot, seed = check_bootstrap(n_boot, seed)  # before any work: a bad value is a one-line error
    consensus = check_consensus(consensus)
    authorize(actor, "reports.read", db=db)
    row = db.conn.execute("SELECT name, kind, config, status FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    require_grading(row[1], campaign_id)
    all_answers = answers(db, campaign_id)
    graded = [a for a in all_answers if not a.skipped]
    cfg = json.loads(row[2])
    out = {
        "campaign": {"id": campaign_id, "name": row[0], "kind": row[1], "status": row[3], "k": cfg.get("k"),
                     "seed": cfg.get("seed"), "threshold_version": cfg.get("threshold_version")},
        "computed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "n_items": db.conn.execute("SELECT count(*) FROM campaign_items WHERE campaign_id = ?",
                                   (campaign_id,)).fetchone()[0],
        "n_items_graded": len({a.item_id for a in graded}),
        "n_answers": len(all_answers), "n_grades": len(graded), "n_skips": len(all_answers) - len(graded),
        "n_annotators": len({a.annotator for a in all_answers}),
        "bootstrap": {"n_boot": n_boot, "seed": seed},
        "scale": CAMPAIGN_SCALE.get(row[1], "tiers"),
        "panel": panel_statistics(graded, scale=CAMPAIGN_SCALE.get(row[1], "tiers"), n_boot=n_boot, seed=seed),
        "annotators": annotator_panel(db, campaign_id, all_answers),
        "disagreements": widest_disagreements(graded),
        "tier_distribution": tier_distribution(graded),
        "consensus": consensus,
        "adjudication": adj.summary(db, campaign_id),
    }
    if include_machine:
        from medeval.calibration.validation import machine_agreement, overlap, validated_set

        ts, source = validated_set(db, campaign_id)  # the set a validation campaign validates, else the active one
        out["machine"] = machine_agreement(db, campaign_id, version=ts.version, actor=None, consensus=consensus)
        out["machine_version"] = {"version": ts.version, "name": ts.name, "embedding_model": ts.embedding_model,
                                  "source": source}
        out["machine_overlap"] = overlap(db, campaign_id, version=ts.version)
    out["gold"] = gold_summary(db, campaign_id)
    out["methods"] = " ".join(x for x in (methods_paragraph(out), methods_sentence(db, campaign_id)) if x)
    return out


def gold_summary(db: sqlite_utils.Database, campaign_id: int) -> dict | None:
    """Each annotator's qualification and hidden-gold accuracy over time (None: the campaign has no gold items).

    Gold answers are stored apart from the grades (``gold_answers``), so nothing above counts them.
    """
    if not db.conn.execute("SELECT 1 FROM gold_items WHERE campaign_id = ?", (campaign_id,)).fetchone():
        return None
    return gold_accuracy(db, campaign_id, actor=None)


def _fmt(v, digits=3) -> str:
    return _("undefined") if v is None else f"{v:.{digits}f}"


def methods_paragraph(s: dict) -> str:
    """A methods paragraph a paper could cite, filled with this campaign's numbers (in the language of the moment)."""
    if s.get("scale", "tiers") != "tiers":  # (campaigns of other scales arrive with their task types)
        head = s["panel"][0] if s["panel"] else None
        counts = dict(n_grades=s["n_grades"], n_items=s["n_items_graded"], n_annotators=s["n_annotators"])
        if head is None:
            return _("{n_grades} ratings of {n_items} items by {n_annotators} annotators were analysed; inter-rater "
                     "reliability: undefined (no ratings).").format(**counts)
        return _("{n_grades} ratings of {n_items} items by {n_annotators} annotators were analysed; inter-rater "
                 "reliability: {statistic} = {value} ({method}).").format(
            **counts, statistic=_(head["title"]), value=_fmt(head["estimate"]["value"]),
            method=head["estimate"]["method"])
    alpha = next((p["estimate"] for p in s["panel"] if p["key"] == "alpha"), None)
    kappa = next((p["estimate"] for p in s["panel"] if p["key"] == "kappa"), None)
    c = s["campaign"]
    sampling = (_("sampled per score interval (width and count per interval as configured, all models' scores "
                  "pooled per metric and aspect type, MedDisKEval §3.2.2)") if c["kind"] == "bucket_grading"
                else _("drawn as a simple random sample of scored responses"))
    text = _("{n_items} model answers were {sampling} with seed {seed} and each was assigned to {k} of {n_annotators} "
             "clinicians, who graded them blind (without the score, the model's name or other grades) into three "
             "ordered tiers (Completely Wrong, Partially Correct, Basically Correct). {n_grades} grades on {n_graded} "
             "items were analysed; {n_skips} skipped answers were treated as missing, and for a changed grade only "
             "the latest was used. Inter-rater reliability was estimated with Krippendorff's alpha at the ordinal "
             "level, which uses every pairable grade without discarding items with missing grades").format(
        n_items=s["n_items"], sampling=sampling, seed=c["seed"], k=c["k"], n_annotators=s["n_annotators"],
        n_grades=s["n_grades"], n_graded=s["n_items_graded"], n_skips=s["n_skips"])
    if alpha and alpha["value"] is not None:
        ci = alpha["ci95"]
        if ci:
            text += _(" (alpha = {alpha}, 95% CI {low} to {high} by percentile bootstrap over items, {n_boot} "
                      "resamples, seed {seed}, n = {n} pairable items)").format(
                alpha=_fmt(alpha["value"]), low=_fmt(ci[0]), high=_fmt(ci[1]), n_boot=s["bootstrap"]["n_boot"],
                seed=s["bootstrap"]["seed"], n=alpha["n_pairable"])
        else:
            text += _(" (alpha = {alpha}, n = {n} pairable items)").format(alpha=_fmt(alpha["value"]),
                                                                          n=alpha["n_pairable"])
    elif alpha:
        text += _(" (undefined: {reason})").format(reason=alpha["undefined_reason"])
    text += _(", and with Cohen's kappa with linear weights averaged over pairs of annotators on the items both "
              "graded")
    if kappa and kappa["value"] is not None:
        text += _(" (mean kappa = {kappa})").format(kappa=_fmt(kappa["value"]))
    text += (_(". Agreement with the automated evaluation was measured as Spearman's rho between the {consensus} and "
               "each metric's raw score and automated tier, with 95% confidence intervals by Fisher z with the "
               "Bonett-Wright variance (1 + rho^2/2)/(n - 3) (none for n <= 3 or |rho| = 1, where it is undefined) "
               "and p-values exact by permutation for n <= 9").format(
                 consensus=_(CONSENSUS_WORDS[consensus_key(s.get("consensus"))]))
             + methods_sentence_machine(s) + _("ICC is not reported because tiers are ordinal, not interval, data."))
    return text + adjudication_sentence(s.get("adjudication"))




def methods_sentence_machine(s: dict) -> str:
    """The sentence on "Clinicians vs the machine" (:func:`medeval.calibration.validation.methods_sentence`)."""
    from medeval.calibration.validation import methods_sentence

    return methods_sentence(s.get("machine") or [], s.get("machine_version"), s.get("machine_overlap"))


def adjudication_sentence(a: dict | None) -> str:
    """What the methods say about adjudication: how many items, how often the adjudicator chose the majority."""
    if not a or not a["n_adjudicated"]:
        return _(" No item was adjudicated.")
    share = a["share_sided_with_majority"]
    counts = dict(n=a["n_adjudicated"], sided=a["sided_with_majority"], with_majority=a["n_with_majority"])
    if share is None:
        return _(" {n} items were adjudicated by a senior clinician, who recorded a final tier with a reason; the "
                 "adjudicated tier equalled the annotators' majority tier in {sided} of {with_majority} adjudicated "
                 "items that had a majority. The agreement statistics above use the raw annotations only; "
                 "adjudication does not change them.").format(**counts)
    return _(" {n} items were adjudicated by a senior clinician, who recorded a final tier with a reason; the "
             "adjudicated tier equalled the annotators' majority tier in {sided} of {with_majority} adjudicated items "
             "that had a majority ({share}). The agreement statistics above use the raw annotations only; "
             "adjudication does not change them.").format(**counts, share=percent(share))
