"""Model-level reporting (MedDisKEval section 4.2, Figure 5, Tables 4-5).

* tier shares (Completely Wrong / Partially Correct / Basically Correct) per
  model and metric, and averaged over the three metrics;
* total score = 0·CW + 5·PC + 10·BC over the averaged shares, and a level;
* the same per aspect;
* Welch's t-test of each medical model against its backbone, per aspect and metric.

The numeric aspect (Severity Level) is scored by exact match only; as in the
paper, its exact-match tier stands for that aspect under every metric.
Everything uses the grades of one threshold-set version (default: the active one),
which the report names.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from dataclasses import dataclass

import sqlite_utils
from scipy import stats

from medeval.core import csvsafe
from medeval.core.display import percent
from medeval.core.i18n import _
from medeval.engine import cosine_scorers
from medeval.engine import thresholds as th
from medeval.engine.registry import report_metrics
from medeval.engine.scoring import severity_ranges_text
from medeval.reports import scorer_notes
from medeval.engine.totals import level, levels_source_text, total_score  # noqa: F401  (also imported from here)
from medeval.engine.totals import levels_text as level_text
from medeval.engine.totals import summarise as _summarise


@dataclass
class _Row:
    model: str
    kind: str
    backbone: str | None


def _counts(db: sqlite_utils.Database, version: int):
    """(model, aspect, report metric) -> {tier: n}; exact_match is spread over the three report metrics."""
    q = ("SELECT m.name, k.aspect, g.metric, g.tier, count(*) FROM grades g "
         "JOIN responses r ON r.id = g.response_id JOIN models m ON m.id = r.model_id "
         "JOIN kb_entries k ON k.id = r.kb_id WHERE g.version = ? GROUP BY 1, 2, 3, 4")
    out: dict[tuple[str, str, str], dict[int, int]] = defaultdict(dict)
    present = tuple(m for m in report_metrics() if db.conn.execute(
        "SELECT 1 FROM grades WHERE version = ? AND metric = ? LIMIT 1", (version, m)).fetchone())
    for model, aspect, metric, tier_, n in db.conn.execute(q, (version,)):
        # the numeric aspect's exact-match tier stands in for every metric that was graded at all
        targets = (present or ("exact_match",)) if metric == "exact_match" else (metric,)
        for m in targets:
            d = out[(model, aspect, m)]
            d[tier_] = d.get(tier_, 0) + n
    return out


def tier_counts(db: sqlite_utils.Database, version: int) -> dict[tuple[str, str, str], dict[int, int]]:
    """(model, aspect, report metric) -> {tier: n} under ``version``, as the report counts them (the numeric aspect's
    exact-match tiers under every graded report metric)."""
    return dict(_counts(db, version))


def welch(a: list[float], b: list[float]) -> dict:
    """Welch's t-test of a (medical model) against b (backbone); positive t: a scores higher.

    Undefined -- with the reason -- when a side has fewer than 2 scores or neither side varies.
    """
    out = {"n_medical": len(a), "n_backbone": len(b),
           "mean_medical": (sum(a) / len(a)) if a else None, "mean_backbone": (sum(b) / len(b)) if b else None,
           "t": None, "df": None, "p": None, "significant": None, "undefined_reason": None}
    if len(a) < 2 or len(b) < 2:
        out["undefined_reason"] = _("fewer than 2 scores on one side")
        return out
    if max(a) == min(a) and max(b) == min(b):
        out["undefined_reason"] = _("no variance in either model's scores (all identical)")
        return out
    r = stats.ttest_ind(a, b, equal_var=False)
    out.update(t=float(r.statistic), p=float(r.pvalue), df=float(r.df), significant=bool(r.pvalue < 0.05))
    return out


def build_report(db: sqlite_utils.Database, version: int | None = None, *,
                 counts: dict[tuple[str, str, str], dict[int, int]] | None = None) -> dict:
    """The report's numbers under ``version`` (default: the active set), from its stored grades -- or from ``counts``
    (:func:`tier_counts`' shape) where the caller counted them otherwise (the Leaderboard counts a set that is not
    active in memory: ``medeval.reports.leaderboard.version_counts``)."""
    ts = th.load(db, version) if version is not None else th.active(db)
    models = {n: _Row(n, k, b) for n, k, b in db.conn.execute("SELECT name, kind, backbone FROM models ORDER BY name")}
    given = counts
    counts = _counts(db, ts.version) if counts is None else counts
    by_model: dict[str, dict[str, dict[int, int]]] = defaultdict(lambda: defaultdict(dict))
    by_model_aspect: dict[tuple[str, str], dict[str, dict[int, int]]] = defaultdict(dict)
    for (model, aspect, metric), c in counts.items():
        agg = by_model[model][metric]
        for t, n in c.items():
            agg[t] = agg.get(t, 0) + n
        by_model_aspect[(model, aspect)][metric] = c

    model_rows = []
    for name, info in models.items():
        summary = _summarise(by_model.get(name, {}))
        model_rows.append({"model": name, "kind": info.kind, "backbone": info.backbone, **summary})
    model_rows.sort(key=lambda r: -(r["averaged"]["total_score"] if r["averaged"] else -1))
    aspects = [a for (a,) in db.conn.execute("SELECT DISTINCT aspect FROM kb_entries ORDER BY aspect")]
    aspect_rows = []
    for name in models:
        for a in aspects:
            if (name, a) in by_model_aspect:
                aspect_rows.append({"model": name, "aspect": a, **_summarise(by_model_aspect[(name, a)])})

    # Welch's t-tests: medical model vs its backbone, per aspect and metric, on raw scores
    ttests = []
    pairs = [(n, i.backbone) for n, i in models.items() if i.kind == "medical" and i.backbone]
    for med, base in pairs:
        if base not in models:
            ttests.append({"medical": med, "backbone": base, "aspect": None, "metric": None,
                           "undefined_reason": _("backbone {name} has no responses in this database").format(
                               name=repr(base))})
            continue
        scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        q = ("SELECT s.response_id, s.metric, s.scorer, s.score, m.name, k.aspect FROM scores s "
             "JOIN responses r ON r.id = s.response_id JOIN models m ON m.id = r.model_id "
             "JOIN kb_entries k ON k.id = r.kb_id WHERE m.name IN (?, ?)")
        # the scores the set grades: one cosine per response, the one its grading picks (none where two ids tie)
        for _rid, metric, _scorer, score, model, aspect in cosine_scorers.graded_scores(
                ts, db.conn.execute(q, (med, base))):
            scores[(model, aspect, metric)].append(score)
        for a in aspects:
            for metric in (*report_metrics(), "exact_match"):
                sa, sb = scores.get((med, a, metric)), scores.get((base, a, metric))
                if sa is None and sb is None:
                    continue
                ttests.append({"medical": med, "backbone": base, "aspect": a, "metric": metric,
                               **welch(sa or [], sb or [])})
    return {
        "threshold_set": {"version": ts.version, "name": ts.name, "embedding_model": ts.embedding_model,
                          "tokenizer": ts.tokenizer, "calibrated": ts.provenance.get("calibrated", True)},
        "coverage": th.coverage(db, ts.version),
        "scorers": scorer_notes.scorers(db, ts, graded_metrics=None if given is None else {k[2] for k in given}),
        "models": model_rows,
        "aspects": aspect_rows,
        "ttests": ttests,
        # (in the current language: the report's reader's, :func:`medeval.core.i18n.language`)
        "notes": [_("Severity Level is scored by exact match; its tier counts under every metric.")
                  + severity_ranges_text(db),
                  _("Tiers: each score is compared with the cut-offs after rounding both to 9 decimals; a score "
                    "exactly on a cut-off reaches it (stored scores are not rounded)."),
                  _("total score = 0*CW + 5*PC + 10*BC over the shares averaged across metrics, computed exactly "
                    "from the tier counts; levels: {levels}, a total on a bound reaching it; {source}.").format(
                      levels=level_text(), source=levels_source_text()),
                  _("t-tests: Welch's t on raw scores, medical minus backbone; significant at p < 0.05.")],
    }


def _fmt(x, digits=3) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def flat_rows(rep: dict) -> list[dict]:
    """One CSV-friendly row per (section, model, aspect, metric)."""
    rows = []
    for r in rep["models"]:
        for m, v in list(r["per_metric"].items()) + [("average", r["averaged"])]:
            if v:
                rows.append({"section": "model", "model": r["model"], "kind": r["kind"], "backbone": r["backbone"] or "",
                             "aspect": "", "metric": m, "n": v.get("n", ""),
                             "completely_wrong": v["completely_wrong"], "partially_correct": v["partially_correct"],
                             "basically_correct": v["basically_correct"], "total_score": v["total_score"],
                             "level": v.get("level", ""), "t": "", "p": "", "significant": ""})
    for r in rep["aspects"]:
        v = r["averaged"]
        if v:
            rows.append({"section": "aspect", "model": r["model"], "kind": "", "backbone": "", "aspect": r["aspect"],
                         "metric": "average", "n": "", "completely_wrong": v["completely_wrong"],
                         "partially_correct": v["partially_correct"], "basically_correct": v["basically_correct"],
                         "total_score": v["total_score"], "level": "", "t": "", "p": "", "significant": ""})
    for r in rep["ttests"]:
        rows.append({"section": "ttest", "model": r["medical"], "kind": "medical", "backbone": r["backbone"],
                     "aspect": r["aspect"] or "", "metric": r["metric"] or "", "n": "",
                     "completely_wrong": "", "partially_correct": "", "basically_correct": "", "total_score": "",
                     "level": "", "t": "" if r.get("t") is None else r["t"], "p": "" if r.get("p") is None else r["p"],
                     "significant": "" if r.get("significant") is None else r["significant"]})
    return rows


def render(rep: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rep, ensure_ascii=False, indent=2)
    if fmt == "csv":
        rows = flat_rows(rep)
        buf = io.StringIO()
        w = csvsafe.dict_writer(buf, fieldnames=list(rows[0]) if rows else ["section"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()
    if fmt == "md":
        return _markdown(rep)
    raise ValueError(fmt)


def _markdown(rep: dict) -> str:
    """The report as Markdown, in the current language (``medeval.core.i18n.language``: ``report --language``);
    model, aspect and metric names are data and stay as stored."""
    ts = rep["threshold_set"]
    sc = rep.get("scorers")
    out = ["# " + _("Model report"), "",
           _("Threshold set v{version} ({name}); ").format(version=ts["version"], name=ts["name"]) + (
               _("{cosine}; tokenizer {tokenizer}.").format(
                   cosine=scorer_notes.cosine_text(sc), tokenizer=scorer_notes.tokenizer_sentence(sc, ts["tokenizer"]))
               if sc else _("cosine from {model}; tokenizer {tokenizer}.").format(model=ts["embedding_model"],
                                                                                 tokenizer=ts["tokenizer"]))]
    # (why cosine is ungraded the line above says already)
    out += [f"**{v['reason']}.**" for m, v in (sc["metrics"].items() if sc else ()) if v["reason"] and m != "cosine"]
    if ts.get("calibrated") is False:
        out.append("**" + _("These cut-offs are provisional: not calibrated with clinicians for this embedding "
                            "model.") + "**")
    def head(cells: list[str]) -> str:
        return "| " + " | ".join(cells)

    cw, pc, bc, total = _("CW"), _("PC"), _("BC"), _("total")
    out += ["", "## " + _("Models (shares averaged over {metrics})").format(
                metrics=scorer_notes.metrics_text(sc) if sc else _("the graded metrics")),
            "", _("CW, PC, BC: the shares of Completely Wrong, Partially Correct and Basically Correct."), "",
            head([_("model"), _("kind"), _("backbone"), cw, pc, bc, total, _("level")]) + " |",
            "|---|---|---|---|---|---|---|---|"]
    for r in rep["models"]:
        a = r["averaged"]
        if a:
            out.append(f"| {r['model']} | {r['kind']} | {r['backbone'] or ''} | {percent(a['completely_wrong'])} | "
                       f"{percent(a['partially_correct'])} | {percent(a['basically_correct'])} | "
                       f"{a['total_score']:.2f} | {a['level']} |")
        else:
            out.append(f"| {r['model']} | {r['kind']} | {r['backbone'] or ''} | | | | {_('not graded')} | |")
    out += ["", "## " + _("Per metric"), "", head([_("model"), _("metric"), "n", cw, pc, bc, total]) + " |",
            "|---|---|---|---|---|---|---|"]
    for r in rep["models"]:
        for m, v in r["per_metric"].items():
            if v:
                out.append(f"| {r['model']} | {scorer_notes.label(m)} | {v['n']} | {percent(v['completely_wrong'])} | "
                           f"{percent(v['partially_correct'])} | {percent(v['basically_correct'])} | "
                           f"{v['total_score']:.2f} |")
            else:
                out.append(f"| {r['model']} | {scorer_notes.label(m)} | 0 | | | | {_('not graded')} |")
    out += ["", "## " + _("Per aspect (total score, averaged over metrics)"), ""]
    models = [r["model"] for r in rep["models"]]
    aspects = sorted({r["aspect"] for r in rep["aspects"]})
    cell = {(r["model"], r["aspect"]): r["averaged"]["total_score"] for r in rep["aspects"] if r["averaged"]}
    out += [f"| {_('aspect')} | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for a in aspects:
        out.append(f"| {a} | " + " | ".join(_fmt(cell.get((m, a)), 2) for m in models) + " |")
    out += ["", "## " + _("Medical model vs backbone (Welch's t, * p < 0.05)"), "",
            head([_("medical"), _("backbone"), _("aspect"), _("metric"), "t", "p"]) + " |", "|---|---|---|---|---|---|"]
    for r in rep["ttests"]:
        if r.get("t") is None:
            out.append(f"| {r['medical']} | {r['backbone']} | {r['aspect'] or ''} | {r['metric'] or ''} | "
                       + _("undefined: {reason}").format(reason=r["undefined_reason"]) + " | |")
        else:
            star = "*" if r["significant"] else ""
            out.append(f"| {r['medical']} | {r['backbone']} | {r['aspect']} | {r['metric']} | {r['t']:.2f}{star} | {r['p']:.3g} |")
    out += ["", "## " + _("Notes"), ""] + [f"- {n}" for n in rep["notes"]]
    return "\n".join(out) + "\n"


# tier: the numeric code (0 = Completely Wrong, 1 = Partially Correct, 2 = Basically Correct: README "Tier codes"),
# tier_name beside it in words
EXPORT_COLUMNS = ["model", "disease", "aspect", "aspect_type", "metric", "score", "tier", "tier_name",
                  "threshold_version", "scorer"]


def export_scores(db: sqlite_utils.Database, out, version: int | None = None) -> int:
    """Write one CSV row per response and metric (tier under ``version``, default the active set). Returns rows."""
    ts = th.load(db, version) if version is not None else th.active(db)
    w = csvsafe.writer(out, lineterminator="\n")
    w.writerow(EXPORT_COLUMNS)
    q = ("SELECT m.name, k.disease, k.aspect, k.aspect_type, s.metric, s.score, g.tier, s.scorer "
         "FROM scores s JOIN responses r ON r.id = s.response_id JOIN models m ON m.id = r.model_id "
         "JOIN kb_entries k ON k.id = r.kb_id "
         "LEFT JOIN grades g ON g.response_id = s.response_id AND g.metric = s.metric AND g.scorer = s.scorer "
         "AND g.version = ? ORDER BY m.name, k.disease, k.aspect, s.metric, s.scorer")
    n = 0
    for model, disease, aspect, atype, metric, score, tier_, scorer in db.conn.execute(q, (ts.version,)):
        w.writerow([model, disease, aspect, atype, metric, repr(float(score)), "" if tier_ is None else tier_,
                    "" if tier_ is None else th.TIERS[tier_],
                    ts.version if tier_ is not None else "", scorer])
        n += 1
    return n
