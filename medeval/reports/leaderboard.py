"""The leaderboard: models ranked by total score under a threshold-set version, per metric or aspect.

Built on :func:`medeval.reports.tier_report.build_report` (tier shares per metric and averaged, total
score = 0*CW + 5*PC + 10*BC, level; per aspect; Welch's t-tests of medical model vs
backbone). This module filters and ranks those numbers, compares two versions, and
draws the paper's figures (Figure 5: tier shares per model; Figure 10: per-aspect heat map).
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import sqlite_utils

from medeval.core import csvsafe
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.engine import thresholds as th
from medeval.engine.cutoff_rule import reach_bound
from medeval.engine.registry import report_metrics
from medeval.engine.totals import summarise
from medeval.reports.scorer_notes import LABELS, embedding_name, made_for  # noqa: F401  (LABELS: the built-ins)
from medeval.reports.scorer_notes import label as metric_label
from medeval.reports.tier_report import level, tier_counts

TIER_KEYS = ("completely_wrong", "partially_correct", "basically_correct")
TIER_LABELS = (N_("Completely Wrong"), N_("Partially Correct"), N_("Basically Correct"))  # shown with _()


def _pick(entry: dict, metric: str) -> dict | None:
    if metric == "averaged":
        return entry.get("averaged")
    return entry.get("per_metric", {}).get(metric)


def _choices() -> str:
    """ "averaged, bleu1, rouge1 or cosine" (and the plugin metrics): what a leaderboard can be ranked by."""
    names = ("averaged", *report_metrics())
    return _("{names} or {last}").format(names=", ".join(names[:-1]), last=names[-1])


def rows(rep: dict, *, metric: str = "averaged", aspect: str | None = None) -> list[dict]:
    """One row per model, best total score first: tier shares, total score, level and rank."""
    if metric not in ("averaged", *report_metrics()):
        raise MedevalError(_("metric {metric}: choose {choices}").format(metric=repr(metric), choices=_choices()))
    source = rep["models"] if aspect is None else [a for a in rep["aspects"] if a["aspect"] == aspect]
    if aspect is not None and not source:
        raise MedevalError(_("no graded responses for aspect {aspect}").format(aspect=repr(aspect)))
    meta = {m["model"]: m for m in rep["models"]}
    out = []
    for entry in source:
        v = _pick(entry, metric)
        if not v:
            continue
        out.append({"model": entry["model"], "kind": meta.get(entry["model"], {}).get("kind"),
                    "backbone": meta.get(entry["model"], {}).get("backbone"),
                    **{k: v[k] for k in TIER_KEYS}, "total_score": v["total_score"],
                    "level": v.get("level", level(v["total_score"]))})
    out.sort(key=lambda r: (-r["total_score"], r["model"]))
    for i, r in enumerate(out, start=1):
        r["rank"] = i
    return out


def to_csv(board: list[dict]) -> str:
    """A leaderboard (:func:`rows` or :func:`diff`) as CSV text; cells a spreadsheet could run are neutralised."""
    return csvsafe.csv_text(board)


def diff(old: list[dict], new: list[dict]) -> list[dict]:
    """How each model moves between two leaderboards (e.g. two threshold-set versions)."""
    before = {r["model"]: r for r in old}
    out = []
    for r in new:
        b = before.get(r["model"])
        out.append({"model": r["model"], "rank": r["rank"], "rank_before": b["rank"] if b else None,
                    "rank_change": (b["rank"] - r["rank"]) if b else None, "total_score": r["total_score"],
                    "total_before": b["total_score"] if b else None,
                    "total_change": (r["total_score"] - b["total_score"]) if b else None,
                    "level": r["level"], "level_before": b["level"] if b else None})
    return out


def diff_names(version: int, other: int) -> dict[str, str]:
    """The columns of :func:`diff` as a page or report heads them, for ``version`` against ``other`` (in the current
    language)."""
    return {"rank": _("rank v{version}").format(version=version), "rank_before": _("rank v{version}").format(
                version=other), "rank_change": _("rank change"),
            "total_score": _("total v{version}").format(version=version),
            "total_before": _("total v{version}").format(version=other), "total_change": _("total change"),
            "level": _("level v{version}").format(version=version),
            "level_before": _("level v{version}").format(version=other)}


# ---------------------------------------------------------------- comparing two threshold-set versions

def scorers(db: sqlite_utils.Database, metric: str) -> list[str]:
    """The distinct scorers of ``metric``'s stored scores, sorted: one seek of the (metric, scorer) index (m020) per
    scorer -- a handful -- instead of a scan of every score (2.3 million at the paper's scale) on each page view."""
    out, q = [], "SELECT min(scorer) FROM scores WHERE metric = ?"
    s = db.conn.execute(q, (metric,)).fetchone()[0]
    while s is not None:
        out.append(s)
        s = db.conn.execute(q + " AND scorer > ?", (metric, s)).fetchone()[0]
    return out



def score_count(db: sqlite_utils.Database) -> int:
    """How many scores are stored: scores are only ever added, so it keys :func:`live_tier_counts`' cache."""
    return db.conn.execute("SELECT count(*) FROM scores").fetchone()[0]


def live_tier_counts(db: sqlite_utils.Database, version: int) -> dict[tuple[str, str, str], dict[int, int]]:
    """(model, aspect, report metric) -> {tier: n} under ``version``, counted now from the stored scores and the set's
    cut-offs, never written: what :func:`medeval.reports.tier_report.tier_counts` gives once the set has graded them.

    The same rule and scorers as grading (:func:`medeval.engine.thresholds.grade_db_in_tx`: a raw score against
    :func:`~medeval.engine.cutoff_rule.reach_bound` of each cut-off; the scorers the set grades; a response scored
    by two matching cosine scorers counted once, by the one the set records, or not at all when two fit it
    equally, :func:`medeval.engine.thresholds.cosine_blockers`) and the same spreading of the numeric
    aspect's exact-match tiers over every report metric counted. So a page can show or compare a set that was never
    made active (Table 12 in every database) without grading on a page view (issue 22 leftover).
    """
    ts = th.load(db, version)
    raw: dict[tuple[str, str, str], dict[int, int]] = {}
    for metric in sorted({m for m, _ in ts.cutoffs}):
        found = scorers(db, metric)
        order = th.cosine_scorers_in_order(ts, found) if metric == "cosine" else \
            [s for s in found if s == ts.scorer_for(metric)]
        cuts = [(t, reach_bound(lo), reach_bound(hi)) for (m, t), (lo, hi) in sorted(ts.cutoffs.items()) if m == metric]
        # one pass over the metric's scores: the aspect type picks the cut-offs in a CASE (a join with a table of
        # cut-offs made SQLite read the scores once per aspect type)
        tier_sql = "CASE k.aspect_type " + " ".join(
            "WHEN ? THEN (CASE WHEN s.score < ? THEN 0 WHEN s.score < ? THEN 1 ELSE 2 END)" for _ in cuts) + " END"
        blockers = th.cosine_blockers(ts, found) if metric == "cosine" else {}
        for scorer in order:
            earlier = blockers.get(scorer, [])
            not_before = th.unblocked_sql(earlier)
            q = (f"SELECT m.name, k.aspect, {tier_sql}, count(*) FROM scores s JOIN responses r ON r.id = s.response_id "
                 "JOIN kb_entries k ON k.id = r.kb_id JOIN models m ON m.id = r.model_id "
                 f"WHERE s.metric = ? AND s.scorer = ? AND k.aspect_type IN ({','.join('?' * len(cuts))}){not_before} "
                 "GROUP BY 1, 2, 3")
            args = [x for c in cuts for x in c] + [metric, scorer, *(c[0] for c in cuts), *earlier]
            for model, aspect, tier, n in db.conn.execute(q, args):
                d = raw.setdefault((model, aspect, metric), {})
                d[tier] = d.get(tier, 0) + n
    present = tuple(m for m in report_metrics() if any(k[2] == m for k in raw))
    out: dict[tuple[str, str, str], dict[int, int]] = {}
    for (model, aspect, metric), c in raw.items():
        for m in ((present or ("exact_match",)) if metric == "exact_match" else (metric,)):
            d = out.setdefault((model, aspect, m), {})
            for t, n in c.items():
                d[t] = d.get(t, 0) + n
    return out


def version_counts(db: sqlite_utils.Database, version: int) -> dict[tuple[str, str, str], dict[int, int]]:
    """The tier counts a leaderboard of ``version`` shows: the active set's stored grades (what the engine uses), any
    other set's counted in memory (:func:`live_tier_counts`; nothing is written)."""
    return tier_counts(db, version) if th.active(db).version == version else live_tier_counts(db, version)


def why_not_graded(db: sqlite_utils.Database, ts: th.ThresholdSet, metric: str) -> str | None:
    """Why set ``ts`` gives no tiers for ``metric`` on the stored scores, in words (None: it can grade them).

    E.g. "v1's cosine cut-offs are for moka-ai/m3e-base; these cosine scores come from use-multilingual-v3@0.2.1".
    """
    label, found = metric_label(metric), scorers(db, metric)
    if not found:
        return _("{label} is not scored in this database").format(label=label)
    if not any(ts.grades(metric, s) for s in found):
        if metric == "cosine":
            came = ", ".join(embedding_name(s) for s in found)
            return _("v{version}'s {label} cut-offs are for {target}; these {label} scores come from {came}").format(
                version=ts.version, label=label, target=made_for(ts, metric), came=came)
        one = _("the tokenizer {id}") if metric in ("bleu1", "rouge1") else _("the scorer {id}")
        came = ", ".join(one.format(id=s) for s in found)
        return _("v{version}'s {label} cut-offs are for the {target}; these {label} scores come from {came}").format(
            version=ts.version, label=label, target=made_for(ts, metric), came=came)
    if not any(k[0] == metric for k in ts.cutoffs):
        return _("v{version} has no {label} cut-offs").format(version=ts.version, label=label)
    return None


def grade_missing(db: sqlite_utils.Database, version: int, *, actor) -> int:
    """Grade under ``version`` the stored scores it can grade but has no grades for; returns the grades added.

    Not for a page view: the Leaderboard counts a set that is not active in memory (:func:`version_counts`).

    A set that was never made active (Table 12, v1, in every database) has no grades, and one made active earlier
    lacks the scores imported since; grading is a pure function of (score, cut-offs), the same as on activation
    (:func:`medeval.engine.thresholds.grade_db`), so grading them now changes nothing else. ``actor``: the signed-in
    user (researchers and admins only), the command line its local actor; ``None`` is an in-process trusted caller.
    """
    from medeval.accounts.policy import authorize

    authorize(actor, "thresholds.publish", db=db)
    ts = th.load(db, version)
    graded = dict(db.conn.execute("SELECT metric, count(*) FROM grades WHERE version = ? GROUP BY metric", (version,)))
    missing = False
    for metric in {m for m, _ in ts.cutoffs}:
        graded_by = [s for s in scorers(db, metric) if ts.grades(metric, s)]
        if not graded_by:
            continue
        types = sorted({t for m, t in ts.cutoffs if m == metric})
        n = db.conn.execute(
            f"SELECT count(*) FROM scores s JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = "
            f"r.kb_id WHERE s.metric = ? AND s.scorer IN ({','.join('?' * len(graded_by))}) "
            f"AND k.aspect_type IN ({','.join('?' * len(types))})", (metric, *graded_by, *types)).fetchone()[0]
        missing = missing or graded.get(metric, 0) < n
    return th.grade_db(db, version)[1] if missing else 0


def _board(counts: dict, metrics: list[str], aspect: str | None) -> list[dict]:
    """A leaderboard from a version's tier ``counts`` averaged over ``metrics`` only (both sides of a comparison
    alike)."""
    by_model: dict[str, dict[str, dict[int, int]]] = {}
    for (model, asp, metric), c in counts.items():
        if metric in metrics and (aspect is None or asp == aspect):
            d = by_model.setdefault(model, {}).setdefault(metric, {})
            for t, n in c.items():
                d[t] = d.get(t, 0) + n
    out = []
    for model, counts in by_model.items():
        v = summarise(counts)["averaged"]
        if v:
            out.append({"model": model, **{k: v[k] for k in TIER_KEYS}, "total_score": v["total_score"],
                        "level": v.get("level", level(v["total_score"]))})
    out.sort(key=lambda r: (-r["total_score"], r["model"]))
    for i, r in enumerate(out, start=1):
        r["rank"] = i
    return out


def compare(db: sqlite_utils.Database, version: int, other: int, *, metric: str = "averaged",
            aspect: str | None = None, counts: dict[int, dict] | None = None) -> dict:
    """How the ranking moves from ``other`` to ``version``, over the metrics both sets grade.

    Returns ``{"rows": diff rows, "metrics": the metrics compared, "reasons": {metric: why it is left out}}``.
    "averaged" averages over the metrics both sets can grade, on both sides (so the totals here may differ from
    the leaderboard's own when a metric is left out: ``reasons`` says which and why). Each side's tiers come from
    :func:`version_counts` (a set that is not active is counted in memory: nothing is written), or from ``counts``
    ({version: its counts}) where the caller has them already.
    """
    if metric not in ("averaged", *report_metrics()):
        raise MedevalError(f"metric {metric!r}: choose {_choices()}")
    new, old = th.load(db, version), th.load(db, other)
    reasons = {}
    for m in report_metrics():
        if metric in ("averaged", m) and (why := why_not_graded(db, old, m) or why_not_graded(db, new, m)):
            reasons[m] = why
    metrics = [m for m in report_metrics() if metric in ("averaged", m) and m not in reasons]
    counts = counts or {}

    def side(v: int) -> list[dict]:
        return _board(counts[v] if v in counts else version_counts(db, v), metrics, aspect)

    rows = diff(side(other), side(version)) if metrics else []
    return {"rows": rows, "metrics": metrics, "reasons": reasons}


def ttests(rep: dict, *, metric: str | None = None, aspect: str | None = None) -> list[dict]:
    """Welch's t-tests of each medical model vs its backbone, filtered; significant ones marked ("*": a mark, not a
    word)."""
    return [dict(t, mark="*" if t.get("significant") else "") for t in rep["ttests"]
            if (metric in (None, "averaged") or t["metric"] == metric) and (aspect is None or t["aspect"] == aspect)]


def plain(text) -> str:
    """A name from the data as Plotly shows it literally: Plotly reads labels, legends and hover text as its own
    mini-HTML (``<a href>``, ``<b>``, ``<br>``), so ``<``, ``>`` and ``&`` go in escaped (shown as typed)."""
    return html.escape(str(text), quote=False)


def shares_figure(board: list[dict], title: str) -> go.Figure:
    """Figure 5: each model's tier shares, stacked, best total score on top.

    ``title`` is Plotly mini-HTML as given: a caller putting a name from the data into it escapes it
    (:func:`plain`); the model names are escaped here. The tiers are named in the current language.
    """
    fig = go.Figure()
    models = [plain(r["model"]) for r in board]
    for key, label, color in zip(TIER_KEYS, (_(t) for t in TIER_LABELS), ("#e45756", "#f2cf5b", "#54a24b")):
        fig.add_trace(go.Bar(y=models, x=[r[key] for r in board], name=label, orientation="h", marker_color=color,
                             hovertemplate="%{y}: %{x:.1%}<extra>" + label + "</extra>"))
    fig.update_layout(barmode="stack", title=title, xaxis_tickformat=".0%", template="plotly_white",
                      height=120 + 40 * len(models), margin=dict(l=120, r=20, t=50, b=40),
                      legend=dict(orientation="h", y=-0.15))
    fig.update_yaxes(autorange="reversed")
    return fig


def aspect_heatmap(rep: dict, metric: str = "averaged") -> go.Figure:
    """Figure 10: total score per model and aspect (its words in the current language)."""
    models = [r["model"] for r in rows(rep, metric=metric)]
    aspects = sorted({a["aspect"] for a in rep["aspects"]})
    value = {(a["model"], a["aspect"]): (_pick(a, metric) or {}).get("total_score") for a in rep["aspects"]}
    z = [[value.get((m, asp)) for asp in aspects] for m in models]
    fig = go.Figure(go.Heatmap(z=z, x=[plain(a) for a in aspects], y=[plain(m) for m in models], colorscale="RdYlGn", zmin=0, zmax=10,
                               colorbar=dict(title=_("total")),
                               hovertemplate="%{y} · %{x}: %{z:.2f}<extra></extra>"))
    fig.update_layout(title=_("Total score per aspect (0-10)"), template="plotly_white",
                      height=160 + 40 * len(models), margin=dict(l=120, r=20, t=50, b=140))
    fig.update_xaxes(tickangle=45)
    return fig
