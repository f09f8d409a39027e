"""Leaderboard (researchers): models by total score under a threshold-set version; per aspect; medical model vs
backbone; how the ranking moves between two versions; CSV and chart export.

A page view writes nothing: a set that is not active is shown and compared with its tiers counted in memory
(:func:`medeval.reports.leaderboard.live_tier_counts`), not graded into the database (issue 22 leftover). Every
table with imported text (model names) is exported by the project's CSV writer, which neutralises formulas; the
dataframes' own "Download as CSV" is off for the whole app (``client.disableDataExport`` in
``.streamlit/config.toml``; issue 23 §5)."""

import html

import streamlit as st

from medeval.core import i18n, settings
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.engine import thresholds as th
from medeval.engine import totals
from medeval.engine.registry import report_metrics
from medeval.reports import leaderboard as lb
from medeval.reports.leaderboard_report import metric_label
from medeval.reports.tier_report import build_report, tier_counts
from webui import page as ui
from webui import tables

user = ui.require_page("leaderboard")
st.title(_("Leaderboard"))

KIND_NAMES = {"medical": N_("medical"), "general": N_("general")}  # a model's kind (stored values stay English)
TIER_COLUMNS = {"Completely Wrong": N_("Completely Wrong"), "Partially Correct": N_("Partially Correct"),
                "Basically Correct": N_("Basically Correct")}


def metric_text(m: str) -> str:
    """A metric, or the average over them, as the reader names it."""
    return _("averaged over the metrics") if m == "averaged" else metric_label(m)


def set_label(s) -> str:
    """A threshold set as the choices name it: "v3 Calibrated on … (active)", "… — provisional"."""
    text = f"v{s.version} {s.name}"
    if s.active:
        text = _("{set} (active)").format(set=text)
    if not s.provenance.get("calibrated", True):
        text = _("{set} — provisional").format(set=text)
    return text


with ui.db() as d:
    sets = th.list_sets(d)
    active = th.active(d).version
labels = {s.version: set_label(s) for s in sets}
versions = [s.version for s in sets]
c1, c2, c3 = st.columns([2, 1, 2])
version = c1.selectbox(_("Threshold set"), versions, index=versions.index(active), format_func=labels.get,
                       key="lb_version")
metric = c2.selectbox(_("Metric"), ["averaged", *report_metrics()],  # i18n: not text
                      key="lb_metric", format_func=metric_text)
@st.cache_data(show_spinner=False, max_entries=32)
def live_counts(path: str, version_: int, scores_now: int) -> dict:
    """A set that is not active (Table 12, never made active, has no grades of its own): its tiers counted in memory
    from the scores, nothing written (a page view never grades); once per version and number of stored scores
    (scores are only ever added; a version's cut-offs never change)."""
    with ui.db() as d, st.spinner(_("Counting the tiers under v{version} (once; nothing is stored)…").format(
            version=version_)):
        return lb.live_tier_counts(d, version_)


_counted: dict[int, dict] = {}  # this run's counts: the active set's are read once for the board and the comparison


def counts_of(v: int) -> dict:
    """The active set's stored grades, counted (once per run); any other set's tiers counted in memory."""
    if v not in _counted:
        if v == active:
            with ui.db() as d:
                _counted[v] = tier_counts(d, v)
        else:
            _counted[v] = live_counts(settings.db_path(), v, n_scores)
    return _counted[v]


with ui.db() as d:
    n_scores = lb.score_count(d)
try:
    with ui.db() as d:
        rep = build_report(d, version, counts=counts_of(version))
except MedevalError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()
aspects = sorted({a["aspect"] for a in rep["aspects"]})
aspect = c3.selectbox(_("Aspect"), [None, *aspects], format_func=lambda a: _("All aspects") if a is None else a,
                      key="lb_aspect")
if not rep["models"]:
    st.info(_("Nothing is graded under this version yet: import and score responses (`medeval import`, `score`)."))
    st.stop()
if version != active:
    def _activate() -> None:
        try:
            with ui.db() as d:
                th.activate(d, version, actor=user)
        except MedevalError as e:
            st.session_state["lb_error"] = str(e)

    st.info(_("You are looking at v{version}; the engine uses v{active}. v{version}'s tiers here are counted from "
              "the stored scores for this view; nothing is stored until it is made active.").format(
        version=version, active=active))
    # regrading every score with another set is consequential: asked once, as Publish is on Tune cut-offs
    st.button(_("Make v{version} the active set (regrades every score)…").format(version=version), key="lb_activate",
              on_click=ui.ask_first, args=("lb_activate_ask",))
    ui.confirm("lb_activate_ask",  # i18n: not text
               question=_("Make v{version} the active set?").format(version=version),
               details=_("Every score is regraded with v{version}'s cut-offs, for everyone, in one step (v{active} can "
                         "be made active again the same way; both stay in the history).").format(
                   version=version, active=active),
               yes=_("Make v{version} active").format(version=version), on_yes=_activate)
if err := st.session_state.pop("lb_error", None):
    st.error(ui.md_escape(err))
if not rep["threshold_set"].get("calibrated", True):
    st.warning(_("This threshold set is provisional: its cosine cut-offs were not calibrated for this embedding "
                 "model. Calibrate them from a grading campaign before relying on cosine tiers."))
for _note in (rep.get("scorers") or {}).get("metrics", {}).values():  # e.g. cosine scored by another model
    if _note["reason"] and _note["scorers"]:
        st.warning(ui.md_escape(_note["reason"] + "."))

board = lb.rows(rep, metric=metric, aspect=aspect)
if not board:
    if version == active:
        st.info(_("Nothing is graded under threshold set v{version} for this choice yet: grade the scores under it "
                  "(`python -m medeval grade --version {version}`) or choose another metric.").format(version=version))
    else:
        st.info(_("Threshold set v{version} grades none of the stored scores for this choice (the notes above say "
                  "why, where a scorer does not match): choose another metric or version.").format(version=version))
    st.stop()
tables.dataframe([{"rank": r["rank"], "model": r["model"],
                   "kind": _(KIND_NAMES[r["kind"]]) if r["kind"] in KIND_NAMES else r["kind"],
                   "backbone": r["backbone"] or "",
                   "Completely Wrong": r["completely_wrong"], "Partially Correct": r["partially_correct"],
                   "Basically Correct": r["basically_correct"], "total score": r["total_score"], "level": r["level"]}
                  for r in board], key="lb_board",
                 percent=("Completely Wrong", "Partially Correct", "Basically Correct"),
                 labels={"rank": N_("rank"), "model": N_("model"), "kind": N_("kind"), "backbone": N_("backbone"),
                         **TIER_COLUMNS, "total score": N_("total score"), "level": N_("level")},
                 column_config={"total score": st.column_config.NumberColumn(format="%.2f")})
st.caption(ui.md_escape(_(
    "Total score = 0 × CW + 5 × PC + 10 × BC, where CW, PC and BC are the shares of Completely Wrong, Partially "
    "Correct and Basically Correct (averaged over the metrics unless one is chosen), computed exactly from the tier "
    "counts; levels {levels}, a total on a bound reaching it: {source}. Tiers compare each score with the cut-offs "
    "after rounding both to 9 decimals, so a score exactly on a cut-off reaches it.").format(
    levels=totals.levels_text(), source=totals.levels_source_text())))
# a chart title is Plotly's pseudo-HTML (<a>, <b> ...): an imported aspect name goes in escaped, shown as written
if aspect:
    title = _("Tier shares, {metric}, {aspect} (threshold set v{version})").format(
        metric=metric_text(metric), aspect=html.escape(aspect), version=version)
else:
    title = _("Tier shares, {metric} (threshold set v{version})").format(metric=metric_text(metric), version=version)
shares = lb.shares_figure(board, title)
st.plotly_chart(shares, key="lb_shares", config={"displayModeBar": False})
if aspect is None:
    st.plotly_chart(lb.aspect_heatmap(rep, metric), key="lb_heatmap", config={"displayModeBar": False})

st.subheader(_("Medical model vs backbone"), anchor=False)
tests = lb.ttests(rep, metric=metric, aspect=aspect)
if tests:
    st.caption(_("Welch's t-test on raw scores, medical minus backbone; * = significant at p < 0.05."))
    ui.safe_table([{"medical": t["medical"], "backbone": t["backbone"], "aspect": t["aspect"] or "—",
                    "metric": metric_label(t["metric"]) if t["metric"] else "—", "mean medical": t["mean_medical"],
                    "mean backbone": t["mean_backbone"], "t": t["t"], "p": t["p"],
                    "p < 0.05": t["mark"], "undefined": t["undefined_reason"]} for t in tests],
                  key="lb_ttests", file_name=f"leaderboard-v{version}-ttests.csv", label=_("t-tests (CSV)"),
                  labels={"medical": N_("medical"), "backbone": N_("backbone"), "aspect": N_("aspect"),
                          "metric": N_("metric"), "mean medical": N_("mean medical"),
                          "mean backbone": N_("mean backbone"), "undefined": N_("undefined")},
                  hide_index=True, width="stretch")
else:
    st.caption(_("No medical model with a backbone among the imported models."))

st.subheader(_("Compare with another version"), anchor=False)
others = [v for v in versions if v != version]
if others:
    other = st.selectbox(_("Earlier / other version"), others, format_func=labels.get, key="lb_other")
    with ui.db() as d:
        cmp = lb.compare(d, version, other, metric=metric, aspect=aspect,
                         counts={v: counts_of(v) for v in (version, other)})
    for m, why in cmp["reasons"].items():  # per metric: why it cannot be compared, never a column of None
        st.caption(ui.md_escape(_("Not compared on {metric}: {why}.").format(metric=lb.metric_label(m), why=why)))
    if cmp["rows"]:
        over = _(" and ").join(lb.metric_label(m) for m in cmp["metrics"])
        if metric == "averaged":
            st.caption(ui.md_escape(_("Rank and total score under v{version} and under v{other}, averaged over "
                                      "{metrics} on both sides (the metrics both sets can grade); a positive rank "
                                      "change moved up.").format(version=version, other=other, metrics=over)))
        else:
            st.caption(ui.md_escape(_("Rank and total score under v{version} and under v{other}, on {metrics}; a "
                                      "positive rank change moved up.").format(version=version, other=other,
                                                                               metrics=over)))
        names = lb.diff_names(version, other)
        ui.safe_table([{names.get(k, k): v for k, v in r.items()} for r in cmp["rows"]], hide_index=True,
                      width="stretch", key="lb_compare", label=_("Comparison (CSV)"),
                      labels={"model": N_("model")},
                      file_name=f"leaderboard-v{version}-vs-v{other}-{metric}.csv",
                      column_config={names[k]: st.column_config.NumberColumn(format="%.2f")
                                     for k in ("total_score", "total_before", "total_change")})
    elif cmp["metrics"]:
        st.info(_("Nothing is graded under v{other} for this choice.").format(other=other))
    elif metric == "averaged":
        st.info(ui.md_escape(_("v{other} cannot be compared with v{version} on any metric: see above why.").format(
            other=other, version=version)))
    else:
        st.info(ui.md_escape(_("v{other} cannot be compared with v{version} on {metric}: see above why.").format(
            other=other, version=version, metric=lb.metric_label(metric))))
else:
    st.caption(_("Only one threshold-set version exists."))

# the report (HTML, and a zip with the PDF), made when a button is clicked
from medeval.reports import html_kit  # noqa: E402
from medeval.reports import leaderboard_report as lb_rep  # noqa: E402


_compare = other if others else None  # read now: the callables below run on click, outside this script run


# the files are made on click, outside this run: in the language of the researcher who clicks (this run's)
REPORT_LANGUAGE = i18n.current()


def _lb_data() -> dict:
    """The report's numbers for this version (and the version chosen to compare with), read on click."""
    with i18n.language(REPORT_LANGUAGE), ui.db() as d:
        return lb_rep.build(d, version, compare=_compare)


def _lb_zip() -> bytes:
    pdf = lb_rep.chromium_path() is not None
    return html_kit.zip_report(lambda tmp: lb_rep.write_report(_lb_data(), tmp, pdf=pdf, language=REPORT_LANGUAGE))


def _lb_html() -> str:
    with i18n.language(REPORT_LANGUAGE):
        return lb_rep.render_html(_lb_data())


e1, e2 = st.columns(2)
e1.download_button(_("Leaderboard (CSV)"), lb.to_csv(board), file_name=f"leaderboard-v{version}-{metric}.csv",
                   mime="text/csv", key="lb_csv", width="stretch")
e2.download_button(_("Chart (HTML, offline)"), lambda: html_kit.figure_page(shares, html.unescape(title)),
                   file_name=f"leaderboard-v{version}-{metric}.html", mime="text/html", key="lb_chart",
                   width="stretch")
e3, e4 = st.columns(2)
e3.download_button(_("Report (HTML)"), _lb_html,
                   file_name=f"leaderboard-v{version}-report.html", mime="text/html", key="lb_report_html",
                   width="stretch",
                   help=_("Offline: every metric, per aspect, the t-tests, the provenance and the comparison above"))
e4.download_button(_("Report (zip: HTML, PDF, …)"), _lb_zip, file_name=f"leaderboard-v{version}-report.zip",
                   mime="application/zip", key="lb_report_zip", width="stretch",
                   help=_("HTML, PDF (printed by Chromium, when installed), JSON and CSVs"))
