"""The leaderboard report of a threshold-set version: one self-contained HTML file, its PDF, JSON and CSVs.

The paper's views (MedDisKEval §4.2): Figure 5 (tier shares per model, stacked), Table 4 (models ranked
by total score with their CW / PC / BC shares and level, averaged over the metrics and per metric),
Table 5 (per aspect: the heat map and a table) and Welch's t-tests of each medical model against its
backbone; the threshold set's name, version and provenance (calibrated from a campaign, or provisional);
optionally how the ranking moves against another version. Numbers come from
:func:`medeval.reports.tier_report.build_report` and :mod:`medeval.reports.leaderboard`; names are plain text.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import sqlite_utils

from medeval.core.display import percent, value_text, words
from medeval.core.errors import MedevalError
from medeval.engine import thresholds as th
from medeval.engine import totals
from medeval.engine.registry import METRICS, report_metrics
from medeval.reports import html_kit as kit
from medeval.reports import leaderboard as lb
from medeval.reports import scorer_notes
from medeval.reports.html_kit import chromium_path, print_pdf  # noqa: F401  (the pages ask the report module)
from medeval.reports.tier_report import build_report, flat_rows

METRIC_LABELS = {"averaged": "averaged over the metrics"}
"""The average's name in the report; a metric by its registered label (:func:`metric_label`)."""


def metric_label(metric: str) -> str:
    return METRIC_LABELS.get(metric) or scorer_notes.label(metric)


def build(db: sqlite_utils.Database, version: int | None = None, *, compare: int | None = None) -> dict:
    """Everything the report shows for ``version`` (default: the active set), and the comparison if asked.

    A set without grades of its own (Table 12, never made active) is graded first (:func:`lb.grade_missing`)."""
    ts = th.load(db, version) if version is not None else th.active(db)
    lb.grade_missing(db, ts.version, actor=None)
    data = {"threshold_set": {"version": ts.version, "name": ts.name, "active": ts.active,
                              "created_at": ts.created_at, "created_by": ts.created_by,
                              "embedding_model": ts.embedding_model, "tokenizer": ts.tokenizer,
                              "provenance": ts.provenance},
            "report": build_report(db, ts.version), "compare": None,
            "computed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if compare is not None:
        if compare == ts.version:
            raise MedevalError(f"--compare {compare} is the version of the report itself; choose another version "
                               "(see `python -m medeval thresholds list`)")
        other = th.load(db, compare)
        lb.grade_missing(db, other.version, actor=None)
        data["compare"] = {"version": other.version, "name": other.name, "report": build_report(db, other.version),
                           "table": lb.compare(db, ts.version, other.version)}
    return data


def metrics_of(rep: dict) -> list[str]:
    """"averaged" and each report metric some model has grades for."""
    present = [m for m in report_metrics() if any((r["per_metric"] or {}).get(m) for r in rep["models"])]
    return ["averaged", *present]


def _levels_text() -> str:
    """The level bands in force (``MEDEVAL_LEVEL_BANDS``) and where they come from (medeval's, not Table 4's)."""
    return f"{totals.levels_text()} ({totals.levels_source_text()})"


def provenance_text(ts: dict) -> str:
    """Where the cut-offs come from, in a sentence: calibrated from a campaign, adopted provisionally, or a source."""
    p = ts.get("provenance") or {}
    src = p.get("source")
    if p.get("calibrated") is False:
        out = ("provisional: " + str(p.get("warning") or "its cut-offs were not calibrated with clinicians for "
                                    f"{ts.get('embedding_model')}")
               + (f" (adopted from {p.get('adopted_from')}, v{p['adopted_from_version']})"
                  if p.get("adopted_from_version") else ""))
    elif isinstance(src, dict) and src.get("campaign"):
        out = (f"calibrated by clinicians in campaign #{src['campaign']}"
               + (f" ({src['campaign_name']})" if src.get("campaign_name") else "")
               + (f", {src['items_graded']} items graded by {src['annotators']} annotators"
                  if src.get("items_graded") is not None else "")
               + (f", {p['method']}" if p.get("method") else ""))
    elif src:
        out = f"from {value_text(src)}" + (
            f" ({p['method']})" if p.get("method") else "")
    else:
        out = "no provenance recorded"
    if p.get("estimator"):  # calibration v2: the cut-off estimator, named (smooth, or the paper's accuracy search)
        out += f"; cut-off estimator: {p['estimator']}"
    if p.get("base_version") is not None:
        out += f"; cut-offs not calibrated kept from v{p['base_version']}"
    return out


def _stratum_name(key: str) -> str:
    """ "exact_match/numeric" → "exact match / numeric"."""
    metric, _, atype = str(key).partition("/")
    return f"{metric_label(metric)} / {atype}" if atype else metric_label(metric)


def _prov_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return f"{_prov_value(v[0])} – {_prov_value(v[1])}"  # an interval
    if isinstance(v, dict):
        return "; ".join(f"{words(k)}: {_prov_value(x)}" for k, x in v.items())
    return value_text(v)


def provenance_rows(prov: dict) -> list[dict]:
    """A set's provenance as (field, value) rows in words: one row per calibrated stratum, the metrics by their
    labels, numbers rounded, intervals as "a – b" (the JSON keeps the provenance as stored)."""
    rows = []
    for k, v in prov.items():
        if k == "strata" and isinstance(v, list):
            for st in (x for x in v if isinstance(x, dict)):
                name = _stratum_name(f"{st.get('metric')}/{st.get('aspect_type')}")
                rows.append({"field": f"stratum {name}", "value": _prov_value(
                    {x: y for x, y in st.items() if x not in ("metric", "aspect_type")})})
        elif k == "kept_from_base" and isinstance(v, list):
            rows.append({"field": words(k), "value": ", ".join(_stratum_name(x) for x in v)})
        else:
            rows.append({"field": words(k), "value": _prov_value(v)})
    return rows


def _scoring_text(rep: dict, ts: dict) -> str:
    """How the scores were made, from the scorers stored with them: the tokenizer of BLEU-1/ROUGE-1, the embedding
    model that produced the cosine scores -- and which metrics have no tiers under this set, and why."""
    sc = rep.get("scorers")
    if not sc:
        return (f"with BLEU-1 and ROUGE-1 (tokenizer {ts['tokenizer']}) and the cosine similarity of sentence "
                f"embeddings ({ts['embedding_model']})")
    lex = [scorer_notes.LABELS[m] for m in ("bleu1", "rouge1") if sc["metrics"][m]["scorers"]]
    parts = []
    if lex:
        parts.append(f"with {' and '.join(lex)} (tokenizer {scorer_notes.tokenizer_sentence(sc, ts['tokenizer'])})")
    if sc["metrics"]["cosine"]["scorers"]:
        parts.append("the cosine similarity of sentence embeddings (" + ", ".join(sc["cosine_models"]) + ")")
    for m, v in sc["metrics"].items():  # plugin metrics: their description and scorer ids
        if m not in ("bleu1", "rouge1", "cosine") and v["scorers"]:
            what = f"{METRICS[m].describe}; " if m in METRICS else ""
            parts.append(f"{metric_label(m)} ({what}scorer {', '.join(s['scorer'] for s in v['scorers'])})")
    text = " and ".join(parts) or "(no BLEU-1, ROUGE-1 or cosine scores stored)"
    missing = scorer_notes.ungraded_notes(sc)
    if missing:
        text += " (" + "; ".join(missing) + ")"
    return text


def methods_paragraph(data: dict) -> str:
    """How tiers, total score and levels are computed, filled with this version's numbers."""
    rep, ts = data["report"], data["threshold_set"]
    graded = [m for m in rep["models"] if m["averaged"]]
    n_resp = sum(max((v or {}).get("n", 0) for v in m["per_metric"].values()) for m in graded)
    tests = rep["ttests"]
    metrics = ", ".join(metric_label(m) for m in metrics_of(rep)[1:]) or "none"
    board = lb.rows(rep) if graded else []
    text = (f"{n_resp} graded responses of {len(graded)} models were scored against the knowledge base's reference "
            f"answers {_scoring_text(rep, ts)}; the numeric aspect (Severity Level) by exact match, whose tier "
            "counts under every metric. Each score was graded into Completely Wrong (CW), Partially Correct (PC) or "
            "Basically Correct (BC) by the two cut-offs per (metric, aspect type) of threshold set "
            f"v{ts['version']} ({ts['name']}; {provenance_text(ts)}): score < low → CW, low ≤ score < high → PC, "
            "score ≥ high → BC, each score compared with the cut-offs after rounding both to 9 decimals, so a score "
            "exactly on a cut-off reaches it (stored scores are not rounded). For each model the share of its responses in each tier was computed per metric "
            f"({metrics}) and averaged over the metrics; total score = 0 × CW + 5 × PC + 10 × BC on the averaged "
            "shares (0 to 10), computed exactly from the tier counts, and level "
            f"{_levels_text()}, a total on a bound reaching it; per aspect the "
            "same on that aspect's responses. Each medical model was compared with its backbone by Welch's "
            "unequal-variance t-test on raw scores per aspect and metric (medical minus backbone, two-sided, "
            f"significant at p < 0.05): {len(tests)} tests, {sum(1 for t in tests if t.get('significant'))} "
            f"significant, {sum(1 for t in tests if t.get('t') is None)} undefined.")
    if board:
        text += " Ranking (averaged): " + "; ".join(
            f"{r['rank']}. {r['model']} {r['total_score']:.2f} (level {r['level']})" for r in board) + "."
    return text


def _pct(v) -> str:
    return percent(v)


def board_rows(board: list[dict]) -> list[dict]:
    """Table 4 rows: shares as percentages, total with two decimals."""
    return [{"rank": r["rank"], "model": r["model"], "kind": r["kind"], "backbone": r["backbone"],
             "Completely Wrong": _pct(r["completely_wrong"]), "Partially Correct": _pct(r["partially_correct"]),
             "Basically Correct": _pct(r["basically_correct"]), "total score": f"{r['total_score']:.2f}",
             "level": r["level"]} for r in board]


def aspect_rows(rep: dict, metric: str = "averaged", *, shown: bool = False) -> list[dict]:
    """Table 5: one row per aspect, the total score of each model (leaderboard order); ``shown``: as "7.55"."""
    models = [r["model"] for r in lb.rows(rep, metric=metric)]
    cell = {(a["model"], a["aspect"]): lb._pick(a, metric) for a in rep["aspects"]}
    out = []
    for asp in sorted({a["aspect"] for a in rep["aspects"]}):
        row = {"aspect": asp}
        for m in models:
            v = cell.get((m, asp))
            row[m] = None if not v else (f"{v['total_score']:.2f}" if shown else v["total_score"])
        out.append(row)
    return out


def ttest_rows(rep: dict) -> list[dict]:
    return [{"medical": t["medical"], "backbone": t["backbone"], "aspect": t["aspect"], "metric": t["metric"],
             "n medical": t.get("n_medical"), "n backbone": t.get("n_backbone"),
             "mean medical": t.get("mean_medical"), "mean backbone": t.get("mean_backbone"), "t": t.get("t"),
             "df": t.get("df"), "p": t.get("p"), "p < 0.05": t["mark"],
             "undefined_reason": t.get("undefined_reason")} for t in lb.ttests(rep)]


def diff_rows(data: dict) -> list[dict]:
    if not data.get("compare"):
        return []
    if "table" in data["compare"]:  # over the metrics both sets grade (see compare_text for the others)
        return data["compare"]["table"]["rows"]
    old = data["compare"]["report"]
    return lb.diff(lb.rows(old) if any(m["averaged"] for m in old["models"]) else [],
                   lb.rows(data["report"]) if any(m["averaged"] for m in data["report"]["models"]) else [])


def figures(data: dict) -> list[tuple[str, object]]:
    """Figure 5 (tier shares, averaged and per metric) and the per-aspect heat map; names escaped for Plotly."""
    rep, v = data["report"], data["threshold_set"]["version"]
    out = [(f"shares-{m}", lb.shares_figure(lb.rows(rep, metric=m), f"Tier shares, {metric_label(m)} (threshold "
                                                                     f"set v{v})")) for m in metrics_of(rep)]
    return out + [("aspects", lb.aspect_heatmap(rep, "averaged"))]


def _header_scorers(rep: dict, ts: dict) -> str:
    """ "cosine from X, tokenizer Y" from the stored scorers, or why cosine is not graded."""
    sc = rep.get("scorers")
    if not sc:
        return f"cosine from {ts['embedding_model']}, tokenizer {ts['tokenizer']}"
    return (f"{scorer_notes.cosine_text(sc)}; tokenizer {scorer_notes.tokenizer_sentence(sc, ts['tokenizer'])}; "
            f"tiers for {scorer_notes.metrics_text(sc)}")


def render_html(data: dict) -> str:
    """One self-contained HTML page (plotly.js inlined in the first figure only)."""
    rep, ts, esc = data["report"], data["threshold_set"], kit.esc
    embed = kit.Figures()
    label = f"v{ts['version']} ({ts['name']})"
    cov = "; ".join(f"{metric_label(m)}: {c['graded']} of {c['scored']} scores graded"
                    for m, c in sorted(rep["coverage"].items()))
    parts = [f"<h1>Leaderboard report: threshold set {esc(label)}</h1>",
             f"<p>Threshold set v{esc(ts['version'])} “{esc(ts['name'])}”" + (" (active)" if ts["active"] else "")
             + f", made {esc(ts['created_at'] or '—')} by {esc(ts['created_by'] or '—')}; "
             f"{esc(_header_scorers(rep, ts))}. {esc(cov)}. "
             f"Computed {esc(data['computed_at'])}.</p>",
             f"<p><b>Provenance.</b> {esc(provenance_text(ts))}.</p>"]
    if (ts.get("provenance") or {}).get("calibrated") is False:
        parts.append("<p class='warn'>These cut-offs are provisional: not calibrated with clinicians for this "
                     "embedding model. Read the cosine tiers with care.</p>")
    parts.append(f'<h2>Methods</h2><p class="methods">{esc(methods_paragraph(data))}</p>')
    if not any(m["averaged"] for m in rep["models"]):
        parts.append(f"<p>Nothing is graded under threshold set v{esc(ts['version'])} yet.</p>")
        return kit.page(f"Leaderboard report: {label}", "\n".join(parts))
    metrics, figs = metrics_of(rep), dict(figures(data))
    parts.append("<h2>Tier shares per model (Figure 5)</h2>")
    for m in metrics:
        parts.append(embed(figs[f"shares-{m}"], f"shares-{m}"))
    parts.append("<h2>Models ranked by total score, with levels (laid out as the paper's Table 4; the level bands "
                 "are medeval's, see Methods)</h2>")
    for m in metrics:
        parts.append(kit.table(board_rows(lb.rows(rep, metric=m)), caption=f"Total score, {metric_label(m)}"))
    parts += ["<h2>Per aspect (Table 5)</h2>", embed(figs["aspects"], "aspects"),
              kit.table(aspect_rows(rep, shown=True), caption="Total score per aspect (averaged over the metrics)")]
    parts.append("<h2>Medical model vs backbone (Welch's t-test)</h2>")
    tt = [{**t, "metric": metric_label(t["metric"]) if t["metric"] else None, "undefined": t.pop("undefined_reason")}
          for t in ttest_rows(rep)]  # (the CSV keeps the metrics' names and the field's, for programs)
    parts.append(kit.table(tt, caption="Raw scores, medical minus backbone; * = p < 0.05") if tt else
                 "<p>No medical model with a backbone among the imported models.</p>")
    if data.get("compare"):
        c = data["compare"]
        table = c.get("table") or {"metrics": list(report_metrics()), "reasons": {}}
        over = " and ".join(lb.metric_label(m) for m in table["metrics"])
        parts += [f"<h2>Compared with threshold set v{esc(c['version'])} ({esc(c['name'])})</h2>",
                  *(f"<p class='why'>Not compared on {esc(lb.metric_label(m))}: {esc(why)}.</p>"
                    for m, why in table["reasons"].items()),
                  (f"<p class='why'>Rank and total score averaged over {esc(over)} (the metrics both sets grade), "
                   f"under this version, before: under v{esc(c['version'])}; a positive rank change moved up.</p>"
                   + kit.table([{lb.diff_names(ts["version"], c["version"]).get(k, k): v for k, v in r.items()}
                                for r in diff_rows(data)])) if table["metrics"] else
                  f"<p>v{esc(c['version'])} cannot be compared with this version on any metric.</p>"]
    parts += ["<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in rep["notes"]) + "</ul>",
              "<h2>Provenance of the cut-offs</h2>",
              kit.table(provenance_rows(ts.get("provenance") or {}))]
    return kit.page(f"Leaderboard report: {label}", "\n".join(parts))


def write_report(data: dict, out_dir: str | Path, *, pdf: bool = True) -> dict[str, Path]:
    """Write report.html, report.pdf (unless ``pdf=False``), report.json and CSVs into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rep = data["report"]
    paths = {"html": out / "report.html", "json": out / "report.json", "report_csv": out / "report.csv"}
    paths["html"].write_text(render_html(data), encoding="utf-8")
    paths["json"].write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    kit.write_csv(paths["report_csv"], flat_rows(rep))
    if any(m["averaged"] for m in rep["models"]):
        for m in metrics_of(rep):
            paths[f"leaderboard_{m}_csv"] = out / f"leaderboard-{re.sub(r'[^a-z0-9]+', '', m)}.csv"
            kit.write_csv(paths[f"leaderboard_{m}_csv"], lb.rows(rep, metric=m))
        paths["aspects_csv"] = out / "aspects.csv"
        kit.write_csv(paths["aspects_csv"], aspect_rows(rep))
    paths["ttests_csv"] = out / "ttests.csv"
    kit.write_csv(paths["ttests_csv"], ttest_rows(rep))
    if data.get("compare"):
        paths["compare_csv"] = out / f"compare-v{int(data['compare']['version'])}.csv"
        kit.write_csv(paths["compare_csv"], diff_rows(data))
    if pdf:
        paths["pdf"] = out / "report.pdf"
        print_pdf(paths["html"], paths["pdf"])
    return paths
