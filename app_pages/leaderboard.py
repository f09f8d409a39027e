"""Leaderboard (researchers): models by total score under a threshold-set version; per aspect; medical model vs
backbone; how the ranking moves between two versions; CSV and chart export.

A page view writes nothing: a set that is not active is shown and compared with its tiers counted in memory
(:func:`medeval.reports.leaderboard.live_tier_counts`), not graded into the database (issue 22 leftover). Every
table with imported text (model names) is exported by the project's CSV writer, which neutralises formulas; the
dataframes' own "Download as CSV" is off for the whole app (``client.disableDataExport`` in
``.streamlit/config.toml``; issue 23 §5)."""

import html

import streamlit as st

from medeval.core import settings
from medeval.core.errors import MedevalError
from medeval.engine import thresholds as th
from medeval.engine import totals
from medeval.engine.registry import report_metrics
from medeval.reports import leaderboard as lb
from medeval.reports.leaderboard_report import metric_label
from medeval.reports.tier_report import build_report, tier_counts
from webui import page as ui
from webui import tables

user = ui.require_page("leaderboard")
st.title("Leaderboard")

with ui.db() as d:
    sets = th.list_sets(d)
    active = th.active(d).version
labels = {s.version: f"v{s.version} {s.name}" + (" (active)" if s.active else "")
          + ("" if s.provenance.get("calibrated", True) else " — provisional") for s in sets}
versions = [s.version for s in sets]
c1, c2, c3 = st.columns([2, 1, 2])
version = c1.selectbox("Threshold set", versions, index=versions.index(active), format_func=labels.get,
                       key="lb_version")
metric = c2.selectbox("Metric", ["averaged", *report_metrics()], key="lb_metric", format_func=metric_label)
@st.cache_data(show_spinner=False, max_entries=32)
def live_counts(path: str, version_: int, scores_now: int) -> dict:
    """A set that is not active (Table 12, never made active, has no grades of its own): its tiers counted in memory
    from the scores, nothing written (a page view never grades); once per version and number of stored scores
    (scores are only ever added; a version's cut-offs never change)."""
    with ui.db() as d, st.spinner(f"Counting the tiers under v{version_} (once; nothing is stored)…"):
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
aspect = c3.selectbox("Aspect", [None, *aspects], format_func=lambda a: "All aspects" if a is None else a,
                      key="lb_aspect")
if not rep["models"]:
    st.info("Nothing is graded under this version yet: import and score responses (`medeval import`, `score`).")
    st.stop()
if version != active:
    def _activate() -> None:
        try:
            with ui.db() as d:
                th.activate(d, version, actor=user)
        except MedevalError as e:
            st.session_state["lb_error"] = str(e)

    st.info(f"You are looking at v{version}; the engine uses v{active}. v{version}'s tiers here are counted from "
            "the stored scores for this view; nothing is stored until it is made active.")
    # regrading every score with another set is consequential: asked once, as Publish is on Tune cut-offs
    st.button(f"Make v{version} the active set (regrades every score)…", key="lb_activate", on_click=ui.ask_first,
              args=("lb_activate_ask",))
    ui.confirm("lb_activate_ask", question=f"Make v{version} the active set?",
               details=f"Every score is regraded with v{version}'s cut-offs, for everyone, in one step (v{active} can "
                       "be made active again the same way; both stay in the history).",
               yes=f"Make v{version} active", on_yes=_activate)
if err := st.session_state.pop("lb_error", None):
    st.error(ui.md_escape(err))
if not rep["threshold_set"].get("calibrated", True):
    st.warning("This threshold set is provisional: its cosine cut-offs were not calibrated for this embedding "
               "model. Calibrate them from a grading campaign before relying on cosine tiers.")
for _note in (rep.get("scorers") or {}).get("metrics", {}).values():  # e.g. cosine scored by another model
    if _note["reason"] and _note["scorers"]:
        st.warning(ui.md_escape(_note["reason"] + "."))

board = lb.rows(rep, metric=metric, aspect=aspect)
if not board:
    if version == active:
        st.info(f"Nothing is graded under threshold set v{version} for this choice yet: grade the scores under it "
                f"(`python -m medeval grade --version {version}`) or choose another metric.")
    else:
        st.info(f"Threshold set v{version} grades none of the stored scores for this choice (the notes above say "
                "why, where a scorer does not match): choose another metric or version.")
    st.stop()
tables.dataframe([{"rank": r["rank"], "model": r["model"], "kind": r["kind"], "backbone": r["backbone"] or "",
                   "Completely Wrong": r["completely_wrong"], "Partially Correct": r["partially_correct"],
                   "Basically Correct": r["basically_correct"], "total score": r["total_score"], "level": r["level"]}
                  for r in board], key="lb_board",
                 percent=("Completely Wrong", "Partially Correct", "Basically Correct"),
                 column_config={"total score": st.column_config.NumberColumn(format="%.2f")})
st.caption(ui.md_escape(
    "Total score = 0 × CW + 5 × PC + 10 × BC, where CW, PC and BC are the shares of Completely Wrong, Partially "
    "Correct and Basically Correct (averaged over the metrics unless one is chosen), computed "
    f"exactly from the tier counts; levels {totals.levels_text()}, a total on a bound reaching it: "
    f"{totals.levels_source_text()}. Tiers compare each score with the cut-offs after rounding both to 9 decimals, "
    "so a score exactly on a cut-off reaches it."))
# a chart title is Plotly's pseudo-HTML (<a>, <b> ...): an imported aspect name goes in escaped, shown as written
title = (f"Tier shares, {metric_label(metric)}" + (f", {html.escape(aspect)}" if aspect else "")
         + f" (threshold set v{version})")
shares = lb.shares_figure(board, title)
st.plotly_chart(shares, key="lb_shares", config={"displayModeBar": False})
if aspect is None:
    st.plotly_chart(lb.aspect_heatmap(rep, metric), key="lb_heatmap", config={"displayModeBar": False})

st.subheader("Medical model vs backbone", anchor=False)
tests = lb.ttests(rep, metric=metric, aspect=aspect)
if tests:
    st.caption("Welch's t-test on raw scores, medical minus backbone; * = significant at p < 0.05.")
    ui.safe_table([{"medical": t["medical"], "backbone": t["backbone"], "aspect": t["aspect"] or "—",
                    "metric": metric_label(t["metric"]) if t["metric"] else "—", "mean medical": t["mean_medical"],
                    "mean backbone": t["mean_backbone"], "t": t["t"], "p": t["p"],
                    "p < 0.05": t["mark"], "undefined": t["undefined_reason"]} for t in tests],
                  key="lb_ttests", file_name=f"leaderboard-v{version}-ttests.csv", label="t-tests (CSV)",
                  hide_index=True, width="stretch")
else:
    st.caption("No medical model with a backbone among the imported models.")

st.subheader("Compare with another version", anchor=False)
others = [v for v in versions if v != version]
if others:
    other = st.selectbox("Earlier / other version", others, format_func=labels.get, key="lb_other")
    with ui.db() as d:
        cmp = lb.compare(d, version, other, metric=metric, aspect=aspect,
                         counts={v: counts_of(v) for v in (version, other)})
    for m, why in cmp["reasons"].items():  # per metric: why it cannot be compared, never a column of None
        st.caption(ui.md_escape(f"Not compared on {lb.metric_label(m)}: {why}."))
    if cmp["rows"]:
        over = " and ".join(lb.metric_label(m) for m in cmp["metrics"])
        st.caption(ui.md_escape(
            f"Rank and total score under v{version} and under v{other}, "
            + (f"averaged over {over} on both sides (the metrics both sets can grade)" if metric == "averaged"
               else f"on {over}") + "; a positive rank change moved up."))
        names = lb.diff_names(version, other)
        ui.safe_table([{names.get(k, k): v for k, v in r.items()} for r in cmp["rows"]], hide_index=True,
                      width="stretch", key="lb_compare", label="Comparison (CSV)",
                      file_name=f"leaderboard-v{version}-vs-v{other}-{metric}.csv",
                      column_config={names[k]: st.column_config.NumberColumn(format="%.2f")
                                     for k in ("total_score", "total_before", "total_change")})
    elif cmp["metrics"]:
        st.info(f"Nothing is graded under v{other} for this choice.")
    else:
        st.info(ui.md_escape(f"v{other} cannot be compared with v{version} "
                             + ("on any metric" if metric == "averaged" else f"on {lb.metric_label(metric)}")
                             + ": see above why."))
else:
    st.caption("Only one threshold-set version exists.")

# the report (HTML, and a zip with the PDF), made when a button is clicked
from medeval.reports import html_kit  # noqa: E402
from medeval.reports import leaderboard_report as lb_rep  # noqa: E402


_compare = other if others else None  # read now: the callables below run on click, outside this script run


def _lb_data() -> dict:
    """The report's numbers for this version (and the version chosen to compare with), read on click."""
    with ui.db() as d:
        return lb_rep.build(d, version, compare=_compare)


def _lb_zip() -> bytes:
    pdf = lb_rep.chromium_path() is not None
    return html_kit.zip_report(lambda tmp: lb_rep.write_report(_lb_data(), tmp, pdf=pdf))


e1, e2 = st.columns(2)
e1.download_button("Leaderboard (CSV)", lb.to_csv(board), file_name=f"leaderboard-v{version}-{metric}.csv",
                   mime="text/csv", key="lb_csv", width="stretch")
e2.download_button("Chart (HTML, offline)", lambda: shares.to_html(include_plotlyjs=True, full_html=True),
                   file_name=f"leaderboard-v{version}-{metric}.html", mime="text/html", key="lb_chart",
                   width="stretch")
e3, e4 = st.columns(2)
e3.download_button("Report (HTML)", lambda: lb_rep.render_html(_lb_data()),
                   file_name=f"leaderboard-v{version}-report.html", mime="text/html", key="lb_report_html",
                   width="stretch",
                   help="Offline: every metric, per aspect, the t-tests, the provenance and the comparison above")
e4.download_button("Report (zip: HTML, PDF, …)", _lb_zip, file_name=f"leaderboard-v{version}-report.zip",
                   mime="application/zip", key="lb_report_zip", width="stretch",
                   help="HTML, PDF (printed by Chromium, when installed), JSON and CSVs")
