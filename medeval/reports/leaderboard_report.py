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

from medeval.core import i18n
from medeval.core.display import percent, value_text
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.engine import thresholds as th
from medeval.engine import totals
from medeval.engine.registry import METRICS, report_metrics
from medeval.reports import html_kit as kit
from medeval.reports import leaderboard as lb
from medeval.reports import scorer_notes
from medeval.reports.html_kit import chromium_path, print_pdf  # noqa: F401  (the pages ask the report module)
from medeval.reports.leaderboard_text import (  # noqa: F401 (stored_text, FIELD_NAMES: re-exported)
    CONSENSUS_NAMES,
    FIELD_NAMES,
    _and,
    _field,
    _semicolons,
    _sentence,
    coded_value,
    kept_cutoff_text,
    stored_text,
)
from medeval.reports.tier_report import build_report, flat_rows

METRIC_LABELS = {"averaged": N_("averaged over the metrics")}
"""The average's name in the report (shown with ``_()``); a metric by its registered label (:func:`metric_label`)."""


def metric_label(metric: str) -> str:
    """How the report and the Leaderboard page name ``metric`` (the average, or a metric), in the current language."""
    return _(METRIC_LABELS[metric]) if metric in METRIC_LABELS else scorer_notes.label(metric)


def build(db: sqlite_utils.Database, version: int | None = None, *, compare: int | None = None) -> dict:
    """Everything the report shows for ``version`` (default: the active set), and the comparison if asked.

    A set without grades of its own (Table 12, never made active) is graded first (:func:`lb.grade_missing`). The
    notes and reasons it holds are in the current language (:func:`medeval.core.i18n.language` around it)."""
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
            raise MedevalError(_("--compare {version} is the version of the report itself; choose another version "
                                 "(see `python -m medeval thresholds list`)").format(version=compare))
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
    return _("{text} ({more})").format(text=totals.levels_text(), more=totals.levels_source_text())


def provenance_text(ts: dict) -> str:
    """Where the cut-offs come from, in a sentence: calibrated from a campaign, adopted provisionally, or a source
    (in the current language)."""
    p = ts.get("provenance") or {}
    src = p.get("source")
    if p.get("calibrated") is False:
        warning = stored_text(p["warning"]) if p.get("warning") else _(
            "its cut-offs were not calibrated with clinicians for {model}").format(model=ts.get("embedding_model"))
        out = (_("provisional: {warning} (adopted from {source}, v{version})").format(
            warning=warning, source=p.get("adopted_from"), version=p["adopted_from_version"])
            if p.get("adopted_from_version") else _("provisional: {warning}").format(warning=warning))
    elif isinstance(src, dict) and src.get("campaign"):
        out = _("calibrated by clinicians in campaign #{campaign}").format(campaign=src["campaign"])
        if src.get("campaign_name"):
            out = _("{text} ({more})").format(text=out, more=src["campaign_name"])
        if src.get("items_graded") is not None:
            out = _("{text}, {more}").format(text=out, more=_("{items} items graded by {annotators} annotators").format(
                items=src["items_graded"], annotators=src["annotators"]))
        if p.get("method"):
            out = _("{text}, {more}").format(text=out, more=stored_text(p["method"]))
    elif src:
        out = _("from {source}").format(source=value_text(src))
        if p.get("method"):
            out = _("{text} ({more})").format(text=out, more=stored_text(p["method"]))
    else:
        out = _("no provenance recorded")
    if p.get("estimator"):  # calibration v2: the cut-off estimator, named (smooth, or the paper's accuracy search)
        out = _semicolons([out, _("cut-off estimator: {estimator}").format(estimator=p["estimator"])])
    if p.get("base_version") is not None:
        out = _semicolons([out, _("cut-offs not calibrated kept from v{version}").format(version=p["base_version"])])
    return out


ASPECT_TYPE_NAMES = {"enumerated": N_("enumerated"), "declarative": N_("declarative"), "numeric": N_("numeric")}


def _stratum_name(key: str) -> str:
    """ "exact_match/numeric" → "exact match / numeric"."""
    metric, _sep, atype = str(key).partition("/")
    if not atype:
        return metric_label(metric)
    return f"{metric_label(metric)} / {_(ASPECT_TYPE_NAMES[atype]) if atype in ASPECT_TYPE_NAMES else atype}"


def _prov_value(v, key: str | None = None) -> str:
    if (coded := coded_value(key, v)) is not None:
        return coded
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return f"{_prov_value(v[0])} – {_prov_value(v[1])}"  # an interval
    if isinstance(v, dict):
        return _semicolons(_("{field}: {value}").format(field=_field(k), value=_prov_value(x, k))
                           for k, x in v.items())
    if key in ("method", "warning") and isinstance(v, str):
        return stored_text(v)
    if key == "consensus" and v in CONSENSUS_NAMES:
        return _(CONSENSUS_NAMES[v])
    return value_text(v)


def provenance_rows(prov: dict) -> list[dict]:
    """A set's provenance as (field, value) rows in words: one row per calibrated stratum, the metrics by their
    labels, numbers rounded, intervals as "a – b" (the JSON keeps the provenance as stored)."""
    rows = []
    for k, v in prov.items():
        if k == "strata" and isinstance(v, list):
            for st in (x for x in v if isinstance(x, dict)):
                name = _stratum_name(f"{st.get('metric')}/{st.get('aspect_type')}")
                rows.append({"field": _("stratum {name}").format(name=name), "value": _prov_value(
                    {x: y for x, y in st.items() if x not in ("metric", "aspect_type")})})
        elif k == "kept_from_base" and isinstance(v, list):
            rows.append({"field": _field(k), "value": ", ".join(_stratum_name(x) for x in v)})
        elif k == "kept_from_base_cutoffs" and isinstance(v, list):
            rows.append({"field": _field(k), "value": ", ".join(kept_cutoff_text(x, _stratum_name) for x in v)})
        else:
            rows.append({"field": _field(k), "value": _prov_value(v, k)})
    return rows


def _scoring_text(rep: dict, ts: dict) -> str:
    """How the scores were made, from the scorers stored with them: the tokenizer of BLEU-1/ROUGE-1, the embedding
    model that produced the cosine scores -- and which metrics have no tiers under this set, and why."""
    sc = rep.get("scorers")
    if not sc:
        return _("with BLEU-1 and ROUGE-1 (tokenizer {tokenizer}) and the cosine similarity of sentence embeddings "
                 "({model})").format(tokenizer=ts["tokenizer"], model=ts["embedding_model"])
    lex = [scorer_notes.LABELS[m] for m in ("bleu1", "rouge1") if sc["metrics"][m]["scorers"]]
    parts = []
    if lex:
        parts.append(_("with {metrics} (tokenizer {tokenizer})").format(
            metrics=_and(lex), tokenizer=scorer_notes.tokenizer_sentence(sc, ts["tokenizer"])))
    if sc["metrics"]["cosine"]["scorers"]:
        parts.append(_("the cosine similarity of sentence embeddings ({models})").format(
            models=", ".join(sc["cosine_models"])))
    for m, v in sc["metrics"].items():  # plugin metrics: their description and scorer ids
        if m not in ("bleu1", "rouge1", "cosine") and v["scorers"]:
            ids = ", ".join(s["scorer"] for s in v["scorers"])
            parts.append(_("{label} ({description}; scorer {scorers})").format(
                label=metric_label(m), description=METRICS[m].describe, scorers=ids) if m in METRICS else
                _("{label} (scorer {scorers})").format(label=metric_label(m), scorers=ids))
    text = _and(parts) or _("(no BLEU-1, ROUGE-1 or cosine scores stored)")
    missing = scorer_notes.ungraded_notes(sc)
    if missing:
        text = _("{text} ({more})").format(text=text, more=_semicolons(missing))
    return text


def methods_paragraph(data: dict) -> str:
    """How tiers, total score and levels are computed, filled with this version's numbers (in the current
    language)."""
    rep, ts = data["report"], data["threshold_set"]
    graded = [m for m in rep["models"] if m["averaged"]]
    n_resp = sum(max((v or {}).get("n", 0) for v in m["per_metric"].values()) for m in graded)
    tests = rep["ttests"]
    metrics = ", ".join(metric_label(m) for m in metrics_of(rep)[1:]) or _("none")
    board = lb.rows(rep) if graded else []
    text = _(
        "{responses} graded responses of {models} models were scored against the knowledge base's reference answers "
        "{scoring}; the numeric aspect (Severity Level) by exact match, whose tier counts under every metric. Each "
        "score was graded into Completely Wrong (CW), Partially Correct (PC) or Basically Correct (BC) by the two "
        "cut-offs per (metric, aspect type) of threshold set v{version} ({name}; {provenance}): score < low → CW, "
        "low ≤ score < high → PC, score ≥ high → BC, each score compared with the cut-offs after rounding both to 9 "
        "decimals, so a score exactly on a cut-off reaches it (stored scores are not rounded). For each model the "
        "share of its responses in each tier was computed per metric ({metrics}) and averaged over the metrics; "
        "total score = 0 × CW + 5 × PC + 10 × BC on the averaged shares (0 to 10), computed exactly from the tier "
        "counts, and level {levels}, a total on a bound reaching it; per aspect the same on that aspect's "
        "responses. Each medical model was compared with its backbone by Welch's unequal-variance t-test on raw "
        "scores per aspect and metric (medical minus backbone, two-sided, significant at p < 0.05): {tests} tests, "
        "{significant} significant, {undefined} undefined.").format(
        responses=n_resp, models=len(graded), scoring=_scoring_text(rep, ts), version=ts["version"],
        name=ts["name"], provenance=provenance_text(ts), metrics=metrics, levels=_levels_text(), tests=len(tests),
        significant=sum(1 for t in tests if t.get("significant")),
        undefined=sum(1 for t in tests if t.get("t") is None))
    if board:
        text = _("{paragraph} Ranking (averaged): {ranking}.").format(paragraph=text, ranking=_semicolons(
            _("{rank}. {model} {total} (level {level})").format(
                rank=r["rank"], model=r["model"], total=f"{r['total_score']:.2f}", level=r["level"])
            for r in board))
    return text


def _pct(v) -> str:
    return percent(v)


KIND_NAMES = {"general": N_("general"), "medical": N_("medical")}
"""A model's kind as stored (the CSVs keep it) in words, shown with ``_()``."""
BOARD_COLUMNS = (("rank", N_("rank")), ("model", N_("model")), ("kind", N_("kind")), ("backbone", N_("backbone")),
                 ("Completely Wrong", N_("Completely Wrong")), ("Partially Correct", N_("Partially Correct")),
                 ("Basically Correct", N_("Basically Correct")), ("total score", N_("total score")),
                 ("level", N_("level")))
"""Table 4's columns: the keys of :func:`board_rows` and their headers (shown with ``_()``)."""
TTEST_COLUMNS = (("medical", N_("medical")), ("backbone", N_("backbone")), ("aspect", N_("aspect")),
                 ("metric", N_("metric")), ("n medical", N_("n medical")), ("n backbone", N_("n backbone")),
                 ("mean medical", N_("mean medical")), ("mean backbone", N_("mean backbone")), ("t", N_("t")),
                 ("df", N_("df")), ("p", N_("p")), ("p < 0.05", N_("p < 0.05")), ("undefined", N_("undefined")))
"""The t-test table's columns in the HTML (English: the keys themselves; the CSV keeps the keys)."""


def _columns(columns) -> list[tuple[str, str]]:
    return [(k, _(label)) for k, label in columns]


def board_rows(board: list[dict]) -> list[dict]:
    """Table 4 rows: shares as percentages, total with two decimals, the kind in words."""
    return [{"rank": r["rank"], "model": r["model"],
             "kind": _(KIND_NAMES[r["kind"]]) if r["kind"] in KIND_NAMES else r["kind"], "backbone": r["backbone"],
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
    out = [(f"shares-{m}", lb.shares_figure(lb.rows(rep, metric=m), _(
        "Tier shares, {metric} (threshold set v{version})").format(metric=metric_label(m), version=v)))
        for m in metrics_of(rep)]
    return out + [("aspects", lb.aspect_heatmap(rep, "averaged"))]


def _header_scorers(rep: dict, ts: dict) -> str:
    """ "cosine from X, tokenizer Y" from the stored scorers, or why cosine is not graded."""
    sc = rep.get("scorers")
    if not sc:
        return _("cosine from {model}, tokenizer {tokenizer}").format(model=ts["embedding_model"],
                                                                      tokenizer=ts["tokenizer"])
    return _("{cosine}; tokenizer {tokenizer}; tiers for {metrics}").format(
        cosine=scorer_notes.cosine_text(sc), tokenizer=scorer_notes.tokenizer_sentence(sc, ts["tokenizer"]),
        metrics=scorer_notes.metrics_text(sc))


def render_html(data: dict) -> str:
    """One self-contained HTML page (plotly.js inlined in the first figure only), its words in the current language
    (:func:`medeval.core.i18n.language`)."""
    rep, ts, esc = data["report"], data["threshold_set"], kit.esc
    embed = kit.Figures()
    label = f"v{ts['version']} ({ts['name']})"
    cov = _semicolons(_("{label}: {graded} of {scored} scores graded").format(
        label=metric_label(m), graded=c["graded"], scored=c["scored"]) for m, c in sorted(rep["coverage"].items()))
    header = (_("Threshold set v{version} “{name}” (active), made {made} by {by}; {scorers}. {coverage}. "
                "Computed {computed}.") if ts["active"] else
              _("Threshold set v{version} “{name}”, made {made} by {by}; {scorers}. {coverage}. Computed "
                "{computed}.")).format(version=ts["version"], name=ts["name"], made=ts["created_at"] or "—",
                                       by=ts["created_by"] or "—", scorers=_header_scorers(rep, ts), coverage=cov,
                                       computed=data["computed_at"])
    title = _("Leaderboard report: {label}").format(label=label)
    parts = [f"<h1>{esc(_('Leaderboard report: threshold set {label}').format(label=label))}</h1>",
             f"<p>{esc(header)}</p>",
             f"<p><b>{esc(_('Provenance.'))}</b> {esc(_sentence(provenance_text(ts)))}</p>"]
    if (ts.get("provenance") or {}).get("calibrated") is False:
        parts.append("<p class='warn'>" + esc(_("These cut-offs are provisional: not calibrated with clinicians for "
                                                "this embedding model. Read the cosine tiers with care.")) + "</p>")
    parts.append(f'<h2>{esc(_("Methods"))}</h2><p class="methods">{esc(methods_paragraph(data))}</p>')
    if not any(m["averaged"] for m in rep["models"]):
        parts.append("<p>" + esc(_("Nothing is graded under threshold set v{version} yet.").format(
            version=ts["version"])) + "</p>")
        return kit.page(title, "\n".join(parts))
    metrics, figs = metrics_of(rep), dict(figures(data))
    parts.append(f"<h2>{esc(_('Tier shares per model (Figure 5)'))}</h2>")
    for m in metrics:
        parts.append(embed(figs[f"shares-{m}"], f"shares-{m}"))
    parts.append("<h2>" + esc(_("Models ranked by total score, with levels (laid out as the paper's Table 4; the "
                                "level bands are medeval's, see Methods)")) + "</h2>")
    for m in metrics:
        parts.append(kit.table(board_rows(lb.rows(rep, metric=m)), _columns(BOARD_COLUMNS),
                               caption=_("Total score, {metric}").format(metric=metric_label(m))))
    aspects = aspect_rows(rep, shown=True)
    parts += [f"<h2>{esc(_('Per aspect (Table 5)'))}</h2>", embed(figs["aspects"], "aspects"),
              kit.table(aspects, [("aspect", _("aspect")), *((k, k) for k, _l in kit.columns_of(aspects)
                                                             if k != "aspect")],
                        caption=_("Total score per aspect (averaged over the metrics)"))]
    parts.append("<h2>" + esc(_("Medical model vs backbone (Welch's t-test)")) + "</h2>")
    tt = [{**t, "metric": metric_label(t["metric"]) if t["metric"] else None, "undefined": t["undefined_reason"]}
          for t in ttest_rows(rep)]  # (the CSV keeps the metrics' names and the field's, for programs; the table
    # shows TTEST_COLUMNS: the reason once, as "undefined")
    parts.append(kit.table(tt, _columns(TTEST_COLUMNS), caption=_("Raw scores, medical minus backbone; * = p < 0.05"))
                 if tt else "<p>" + esc(_("No medical model with a backbone among the imported models.")) + "</p>")
    if data.get("compare"):
        c = data["compare"]
        table = c.get("table") or {"metrics": list(report_metrics()), "reasons": {}}
        over = _and(lb.metric_label(m) for m in table["metrics"])
        heads = {"model": _("model"), **lb.diff_names(ts["version"], c["version"])}
        parts += ["<h2>" + esc(_("Compared with threshold set v{version} ({name})").format(
                      version=c["version"], name=c["name"])) + "</h2>",
                  *("<p class='why'>" + esc(_("Not compared on {metric}: {why}.").format(
                      metric=lb.metric_label(m), why=why)) + "</p>" for m, why in table["reasons"].items()),
                  ("<p class='why'>" + esc(_(
                      "Rank and total score averaged over {metrics} (the metrics both sets grade), under this "
                      "version, before: under v{version}; a positive rank change moved up.").format(
                      metrics=over, version=c["version"])) + "</p>"
                   + kit.table([{heads.get(k, k): v for k, v in r.items()} for r in diff_rows(data)]))
                  if table["metrics"] else
                  "<p>" + esc(_("v{version} cannot be compared with this version on any metric.").format(
                      version=c["version"])) + "</p>"]
    parts += [f"<h2>{esc(_('Notes'))}</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in rep["notes"]) + "</ul>",
              f"<h2>{esc(_('Provenance of the cut-offs'))}</h2>",
              kit.table(prov := provenance_rows(ts.get("provenance") or {}),
                        [("field", _("field")), ("value", _("value"))] if prov else None)]
    return kit.page(title, "\n".join(parts), figures=embed)


def write_report(data: dict, out_dir: str | Path, *, pdf: bool = True, language: str | None = None) -> dict[str, Path]:
    """Write report.html, report.pdf (unless ``pdf=False``), report.json and CSVs into ``out_dir``, in ``language``
    (zh-CN or en; None: the current language). ``data`` should be built in the same language (its notes, reasons
    and provenance are words too): :func:`medeval.core.i18n.language` around both, as ``report-leaderboard`` does."""
    with i18n.language(language):
        return _write_report(data, out_dir, pdf=pdf)


def _write_report(data: dict, out_dir: str | Path, *, pdf: bool) -> dict[str, Path]:
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
