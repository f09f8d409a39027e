"""Active calibration campaigns, round by round: where each stratum stands, and drawing the next round.

An ``active_calibration`` campaign (:func:`medeval.annotation.campaigns.assignment.create_active_campaign`) starts
with a seed round -- a small interval sample per (metric, aspect type) stratum. When a round is fully answered,
:func:`next_round` estimates each stratum's cut-offs and their 95% intervals on everything graded so far with the
campaign's estimator and draws the next round's items by the campaign's design (:mod:`medeval.calibration.designs`:
the smooth estimator and the adaptive design by default; campaigns stored before these were recorded keep the
accuracy search with its bootstrap and the rounds drawn where the bootstrap distribution of either cut-off has
mass), appending them to the SAME campaign (exactly k annotators each). A stratum stops when both cut-offs' 95% intervals are at most the target width
wide, when it holds its budget of items, or when its pool is spent. Each draw records a row per stratum in
``calibration_rounds``: the cut-offs and intervals at that moment, so the narrowing can be shown round by round.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict

import numpy as np
import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation.campaigns.assignment import ACTIVE_KIND, add_items
from medeval.annotation.campaigns.sampling import stratum_pool
from medeval.calibration import active, designs
from medeval.calibration.cutoffs import campaign_rows, consensus
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.engine import thresholds as th

ROUND_COLUMNS = ("round", "metric", "aspect_type", "n_graded", "low", "high", "low_ci_lo", "low_ci_hi",
                 "high_ci_lo", "high_ci_hi", "items_added", "stop", "created_by", "created_at")
STOP_TEXT = {"target": N_("both 95% intervals are within the target width"),
             "budget": N_("its budget of items is spent"), "pool": N_("no ungraded responses are left")}
"""Why a stratum stopped, in English (the CLI); a page shows ``_()`` of it."""


def _config(db: sqlite_utils.Database, campaign_id: int) -> dict:
    row = db.conn.execute("SELECT kind, config FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    if row[0] != ACTIVE_KIND:
        raise MedevalError(_("campaign {id} is a {kind} campaign, not active calibration: rounds apply to campaigns "
                             "created with sampling 'active'").format(id=campaign_id, kind=row[0]))
    return json.loads(row[1])


def _items(db, campaign_id: int) -> tuple[dict[tuple[str, str], dict], int]:
    """Per stratum: its response ids and items per round; and the campaign's last round."""
    per: dict[tuple[str, str], dict] = defaultdict(lambda: {"responses": set(), "rounds": defaultdict(int)})
    last = 1
    for rid, strata in db.conn.execute("SELECT response_id, strata FROM campaign_items WHERE campaign_id = ?",
                                       (campaign_id,)):
        for s in json.loads(strata):
            if "metric" not in s:
                continue
            r = int(s.get("round", 1))
            entry = per[(s["metric"], s["aspect_type"])]
            entry["responses"].add(rid)
            entry["rounds"][r] += 1
            last = max(last, r)
    return per, last


def _missing_answers(db, campaign_id: int, round_: int) -> tuple[int, int]:
    """(assignments of the round's items without any answer, assignments of the round's items)."""
    missing = total = 0
    for iid, strata, n_assigned, n_answered in db.conn.execute(
            "SELECT ci.id, ci.strata, (SELECT count(*) FROM assignments a WHERE a.item_id = ci.id), "
            "(SELECT count(DISTINCT g.user_id) FROM grade_annotations g WHERE g.item_id = ci.id) "
            "FROM campaign_items ci WHERE ci.campaign_id = ?", (campaign_id,)):
        if any(int(s.get("round", 1)) == round_ for s in json.loads(strata)):
            total += n_assigned
            missing += n_assigned - n_answered
    return missing, total


def _estimate(metric: str, scores, tiers, cfg: dict, index: int, n_boot: int, grades=None) -> designs.Estimate:
    rng = np.random.default_rng([int(cfg["seed"]), 7, len(scores), index])  # the same data, the same figures
    return designs.estimate(metric, scores, tiers, cfg, rng=rng, n_boot=n_boot, grades=grades)


def _rows(db, campaign_id: int, max_round: int | None) -> tuple[list[dict], dict]:
    """The campaign's graded rows (one per annotator and metric), of rounds 1..max_round; and item -> response id."""
    rid_of, round_of = {}, {}
    for iid, rid, strata in db.conn.execute("SELECT id, response_id, strata FROM campaign_items WHERE campaign_id = ?",
                                            (campaign_id,)):
        rid_of[str(iid)] = rid
        round_of[str(iid)] = min([int(s.get("round", 1)) for s in json.loads(strata)] or [1])
    rows = [r for r in campaign_rows(db, campaign_id)
            if max_round is None or round_of.get(r["item"], 1) <= max_round]
    return rows, rid_of


def graded_grades(db, campaign_id: int, *, max_round: int | None = None
                  ) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per stratum: every grade of the graded items (score, tier, annotator), of rounds 1..max_round -- what the
    smooth estimator fits when the grades come from several clinicians."""
    return designs.graded_grades(_rows(db, campaign_id, max_round)[0])


def graded_items(db, campaign_id: int, *, max_round: int | None = None
                 ) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per stratum: the graded items' response ids, scores and consensus tiers (lower median), in item order.

    ``max_round``: only the items of rounds 1..max_round (what the cut-offs stood on after that round).
    """
    return _by_item(*_rows(db, campaign_id, max_round))


def _graded(db, campaign_id: int, max_round: int | None = None) -> tuple[dict, dict]:
    """:func:`graded_items` and :func:`graded_grades` from one read of the campaign's rows."""
    rows, rid_of = _rows(db, campaign_id, max_round)
    return _by_item(rows, rid_of), designs.graded_grades(rows)


def _by_item(rows: list[dict], rid_of: dict) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    per: dict[tuple[str, str], dict] = defaultdict(dict)
    for r in rows:
        entry = per[(r["metric"], r["aspect_type"])].setdefault(r["item"], [r["score"], []])
        entry[1].append(int(r["tier"]))
    return {key: (np.array([rid_of[i] for i in items], dtype=int),
                  np.array([v[0] for v in items.values()], dtype=float),
                  np.array([consensus(v[1]) for v in items.values()], dtype=int))
            for key, items in sorted(per.items())}


def _ci(s, which: str) -> list[float] | None:
    ci = s.ci95(which) if s.cut_offs is not None else None
    return [round(ci[0], 6), round(ci[1], 6)] if ci else None


def round_status(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None, n_boot: int = 200) -> dict:
    """Where an active campaign stands: per stratum the items, graded items, cut-offs, 95% intervals and stop reason.

    Returns ``{"campaign", "round" (the last round drawn), "last_round_complete", "missing" (answers the last
    round still lacks), "criterion", "target_width", "budget", "strata": [...]}``; each stratum has ``metric,
    aspect_type, items, n_graded, cut_offs, low_ci95, high_ci95, widths, stop`` (``target``, ``budget``,
    ``pool`` or None). The bootstrap is seeded by the campaign's seed and round, so the figures are reproducible.
    """
    authorize(actor, "campaign.read", db=db)
    cfg = _config(db, campaign_id)
    per, last = _items(db, campaign_id)
    missing, total = _missing_answers(db, campaign_id, last)
    graded, grades = _graded(db, campaign_id)
    ts = th.active(db)
    in_campaign = _taken(db, campaign_id)
    strata = []
    for index, (metric, atype) in enumerate((m, t) for m in cfg["metrics"] for t in cfg["aspect_types"]):
        if (metric, atype) not in per:
            continue  # the metric does not apply to the type, or nothing was scored there
        items = sum(per[(metric, atype)]["rounds"].values())
        rids, scores, tiers = graded.get((metric, atype), (np.array([], dtype=int), np.array([]),
                                                           np.array([], dtype=int)))
        s = _estimate(metric, scores, tiers, cfg, index, n_boot, grades.get((metric, atype)))
        stop = active.should_stop(s, n_graded=items, budget=int(cfg["budget"]), target_width=float(cfg["target_width"]))
        if stop is None and not any(rid not in in_campaign for rid, _ in stratum_pool(db, ts, metric, atype)):
            stop = "pool"
        strata.append({"metric": metric, "aspect_type": atype, "items": items, "n_graded": len(scores),
                       "rounds": dict(sorted(per[(metric, atype)]["rounds"].items())),
                       "cut_offs": list(s.cut_offs) if s.cut_offs else None, "low_ci95": _ci(s, "low"),
                       "high_ci95": _ci(s, "high"), "widths": list(s.widths()) if s.cut_offs and s.widths() else None,
                       "stop": stop, "_estimate": s, "_graded": (rids, tiers)})
    return {"campaign": campaign_id, "round": last, "last_round_complete": missing == 0, "missing": missing,
            "answers": total, "criterion": cfg.get("criterion", "accuracy"), "estimator": designs.estimator_of(cfg),
            "design": designs.design_of(cfg), "target_width": cfg["target_width"],
            "budget": cfg["budget"], "round_size": cfg["round_size"], "strata": strata}


def public(status: dict) -> dict:
    """:func:`round_status` without the internal bootstrap arrays (for JSON and pages)."""
    return {**status, "strata": [{k: v for k, v in s.items() if not k.startswith("_")} for s in status["strata"]]}


def _taken(db, campaign_id: int) -> set[int]:
    """Responses a round may not draw: the campaign's items, and its gold items (never graded as real items)."""
    return {r for (r,) in db.conn.execute("SELECT response_id FROM items WHERE family = 'tier' AND campaign_id = ?",
                                          (campaign_id,))}


def next_round(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None, n_boot: int = 200) -> dict:
    """Draw the next round of an active campaign and append it (exactly k annotators per item); returns a summary.

    Refused, with nothing stored, while the last round still lacks answers, when the campaign is closed, or when
    every stratum has stopped. Records the state of each stratum at the draw in ``calibration_rounds``.
    """
    authorize(actor, "campaign.manage", db=db)
    st = round_status(db, campaign_id, actor=None, n_boot=n_boot)
    cfg = _config(db, campaign_id)
    if not st["last_round_complete"]:
        raise MedevalError(_("round {round} of campaign {id} is not fully answered yet ({missing} of {answers} "
                             "answers missing): draw the next round when the annotators have finished it").format(
            round=st["round"], id=campaign_id, missing=st["missing"], answers=st["answers"]))
    live = [s for s in st["strata"] if s["stop"] is None]
    if not live:
        why = "; ".join(f"{s['metric']}/{s['aspect_type']}: {_(STOP_TEXT[s['stop']])}" for s in st["strata"])
        raise MedevalError(_("every stratum of campaign {id} has stopped ({why}): calibrate it on the Tune cut-offs "
                             "page or with `medeval calibrate --campaign {id}`").format(id=campaign_id, why=why))
    new_round = st["round"] + 1
    ts = th.active(db)
    in_campaign = _taken(db, campaign_id)
    chosen: dict[int, list[dict]] = {}
    added: dict[tuple[str, str], int] = {}
    for index, s in enumerate(st["strata"]):
        if s["stop"] is not None:
            continue
        pool = stratum_pool(db, ts, s["metric"], s["aspect_type"])
        rids = np.array([r for r, _ in pool], dtype=int)
        scores = np.array([v for _, v in pool], dtype=float)
        taken = np.nonzero(np.isin(rids, list(in_campaign | set(chosen))))[0]
        m = min(int(cfg["round_size"]), int(cfg["budget"]) - s["items"])
        rng = np.random.default_rng([int(cfg["seed"]), 11, new_round, index])
        g_rids, g_tiers = s["_graded"]
        pos = {int(r): j for j, r in enumerate(rids.tolist())}
        known = [(pos[int(r)], int(t)) for r, t in zip(g_rids, g_tiers) if int(r) in pos]
        picked = designs.propose(s["metric"], cfg, scores, taken, [p for p, _ in known], [t for _, t in known],
                                 s["_estimate"], m=m, rng=rng, n_boot=n_boot)
        width = float(cfg["width"])
        for j in picked.tolist():
            b = int(active.interval_of(s["metric"], scores[j:j + 1], width)[0])
            lo = round(b * width, 10)
            chosen.setdefault(int(rids[j]), []).append({"metric": s["metric"], "aspect_type": s["aspect_type"],
                                                        "interval": [lo, round(lo + width, 10)], "round": new_round})
        added[(s["metric"], s["aspect_type"])] = len(picked)
    if not chosen:
        raise MedevalError(_("no ungraded responses are left in the pools of campaign {id}'s strata").format(
            id=campaign_id))
    who = actor.username if actor else "cli"
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def record(db_) -> None:
        if db_.conn.execute("SELECT 1 FROM calibration_rounds WHERE campaign_id = ? AND round = ?",
                            (campaign_id, new_round)).fetchone():
            raise MedevalError(_("round {round} of campaign {id} was drawn meanwhile by someone else").format(
                round=new_round, id=campaign_id))
        for s in st["strata"]:
            lo_ci, hi_ci = s["low_ci95"] or [None, None], s["high_ci95"] or [None, None]
            cut = s["cut_offs"] or [None, None]
            db_.conn.execute(
                f"INSERT INTO calibration_rounds (campaign_id, {', '.join(ROUND_COLUMNS)}) "
                f"VALUES ({', '.join('?' * (len(ROUND_COLUMNS) + 1))})",
                (campaign_id, new_round, s["metric"], s["aspect_type"], s["n_graded"], cut[0], cut[1], *lo_ci,
                 *hi_ci, added.get((s["metric"], s["aspect_type"]), 0), s["stop"], who, at))

    items = add_items(db, campaign_id, chosen, actor=actor, extra=record)
    return {"campaign": campaign_id, "round": new_round, "items": len(items), "estimator": st["estimator"],
            "design": st["design"],
            "strata": [{"metric": m, "aspect_type": t, "items_added": n} for (m, t), n in added.items()],
            "stopped": [{"metric": s["metric"], "aspect_type": s["aspect_type"], "stop": s["stop"]}
                        for s in st["strata"] if s["stop"] is not None]}


def round_history(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None) -> list[dict]:
    """The recorded rounds: per (round, stratum) the state when the round was drawn (cut-offs, intervals, widths)."""
    authorize(actor, "campaign.read", db=db)
    _config(db, campaign_id)
    out = []
    for row in db.conn.execute(f"SELECT {', '.join(ROUND_COLUMNS)} FROM calibration_rounds WHERE campaign_id = ? "
                               f"ORDER BY round, metric, aspect_type", (campaign_id,)):
        r = dict(zip(ROUND_COLUMNS, row))
        r["low_width"] = None if r["low_ci_lo"] is None else r["low_ci_hi"] - r["low_ci_lo"]
        r["high_width"] = None if r["high_ci_lo"] is None else r["high_ci_hi"] - r["high_ci_lo"]
        out.append(r)
    return out


def width_series(db: sqlite_utils.Database, campaign_id: int, status: dict | None = None, *,
                 actor: User | None) -> list[dict]:
    """Each stratum's two interval widths after each graded round (long rows for a chart).

    ``after_round`` r: the widths on everything graded in rounds 1..r (recorded when round r+1 was drawn); the
    last point is the live status when the last round is fully answered.
    """
    rows = []
    for r in round_history(db, campaign_id, actor=actor):
        for which in ("low", "high"):
            if r[f"{which}_width"] is not None:
                rows.append({"metric": r["metric"], "aspect_type": r["aspect_type"], "after_round": r["round"] - 1,
                             "cut_off": which, "width": r[f"{which}_width"], "n_graded": r["n_graded"]})
    st = status or round_status(db, campaign_id, actor=None)
    if st["last_round_complete"]:
        for s in st["strata"]:
            if s["widths"] and not any(x["after_round"] == st["round"] and x["metric"] == s["metric"] and
                                       x["aspect_type"] == s["aspect_type"] for x in rows):
                for which, w in zip(("low", "high"), s["widths"]):
                    rows.append({"metric": s["metric"], "aspect_type": s["aspect_type"], "after_round": st["round"],
                                 "cut_off": which, "width": w, "n_graded": s["n_graded"]})
    return rows


def fit_after_round(db: sqlite_utils.Database, campaign_id: int, metric: str, aspect_type: str, round_: int, *,
                    actor: User | None, n_boot: int = 200) -> dict:
    """One stratum as it stood after round ``round_``: the items graded in rounds 1..round_ (scores, consensus
    tiers), the campaign's estimate on them (cut-offs, 95% intervals; seeded as :func:`round_status` seeds it, so the
    last round's figures are the status's) and the two fitted curves P(tier >= k | score) of the smooth fit (fitted
    for the drawing when the campaign's estimator is the accuracy search; ``curves_fitted_for_display`` says so)."""
    authorize(actor, "campaign.read", db=db)
    cfg = _config(db, campaign_id)
    strata = [(m, t) for m in cfg["metrics"] for t in cfg["aspect_types"]]
    if (metric, aspect_type) not in strata:
        raise MedevalError(_("campaign {id} does not calibrate {metric} / {aspect_type}").format(
            id=campaign_id, metric=metric, aspect_type=aspect_type))
    empty = (np.array([], dtype=int), np.array([]), np.array([], dtype=int))
    by_item, by_grade = _graded(db, campaign_id, round_)
    _ids, scores, tiers = by_item.get((metric, aspect_type), empty)
    grades = by_grade.get((metric, aspect_type))
    est = _estimate(metric, scores, tiers, cfg, strata.index((metric, aspect_type)), n_boot, grades)
    shown = est if est.fit is not None else designs.estimate(metric, scores, tiers, {"estimator": "smooth"}, rng=0,
                                                             grades=grades)
    return {"round": round_, "metric": metric, "aspect_type": aspect_type, "estimator": designs.method_name(cfg),
            "design": designs.design_of(cfg), "scores": scores, "tiers": tiers, "n_graded": len(scores),
            "cut_offs": est.cut_offs, "low_ci95": est.ci95("low"), "high_ci95": est.ci95("high"),
            "curves": designs.curves(metric, shown) or [], "curves_fitted_for_display": shown is not est}


def design_provenance(db: sqlite_utils.Database, campaign_id: int) -> dict | None:
    """What a publication from an active campaign records of how its items were drawn: the design (``design``,
    ``design_version``), the round size, the rounds drawn and, per stratum, the items of each round
    (``items_per_round``: {(metric, aspect type): [round 1, round 2, ...]}); None for another kind of campaign."""
    row = db.conn.execute("SELECT kind, config FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None or row[0] != ACTIVE_KIND:
        return None
    cfg = json.loads(row[1])
    per, last = _items(db, campaign_id)
    design = designs.design_of(cfg)
    if design == "adaptive":
        from medeval.calibration.adaptive import DESIGN as version
    else:
        version = design
    return {"design": design, "design_version": version, "round_size": int(cfg["round_size"]), "rounds": last,
            "items_per_round": {key: [v["rounds"].get(r, 0) for r in range(1, last + 1)] for key, v in per.items()}}


def last_round(db: sqlite_utils.Database, campaign_id: int) -> int:
    """The last round drawn in an active campaign (1: the seed round only)."""
    _config(db, campaign_id)
    return _items(db, campaign_id)[1]
