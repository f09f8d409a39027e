"""Tune tier cut-offs live against the clinicians' grades, then publish them to the engine.

Per metric and aspect type: the graded examples by score and the clinicians' tier, a two-handled
slider for the cut-offs and, on every move, the confusion matrix, weighted kappa,
accuracy and Spearman against the clinicians, the tier shares of all scored responses and
the leaderboard those cut-offs would give. The draft is this researcher's own until it
is published as a new threshold-set version.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from medeval.annotation import campaigns as cp
from medeval.calibration import cutoffs as cal
from medeval.calibration import designs, tuning
from medeval.core import settings
from medeval.core.errors import MedevalError
from medeval.engine import thresholds as th
from medeval.core.display import aspect_type_name, percent, tier_name
from medeval.core.i18n import N_, _, ngettext
from medeval.engine.registry import METRICS, report_metrics
from medeval.engine.registry import label as metric_label
from webui import page as ui
from webui import tables

user = ui.require_page("tuning")
st.title(_("Tune cut-offs"))


# words the page draws for identifiers (shown with _())
CUT_NAMES = {"low": N_("low cut-off"), "high": N_("high cut-off")}
TIER_SHORT = {0: N_("CW"), 1: N_("PC"), 2: N_("BC")}  # the confusion table's columns: Completely Wrong ...
CRITERION_NAMES = {"kappa": N_("weighted kappa"), "accuracy": N_("accuracy"), "spearman": N_("Spearman")}
DESIGN_TITLES = {"adaptive": N_("#{id}: {estimator} estimator, adaptive design, round {round}"),
                 "active": N_("#{id}: {estimator} estimator, active design, round {round}"),
                 "interval": N_("#{id}: {estimator} estimator, interval design, round {round}")}


def stratum_text(metric_: str, atype_: str) -> str:
    """A (metric, aspect type) as a reader names it: "cosine / enumerated"."""
    return f"{metric_label(metric_)} / {aspect_type_name(atype_)}"


@st.cache_resource(show_spinner=_("Loading every score once…"), max_entries=2)
def score_index(path: str, version: int, signature: tuple) -> tuning.ScoreIndex:
    """Read-only sorted score arrays, shared by every session (rebuilt when the scores or the set change)."""
    with ui.db() as d:
        return tuning.ScoreIndex.load(d, version)


with ui.db() as d:
    act = th.active(d)
    signature = tuning.signature(d)
    camps = [c for c in cp.list_campaigns(d, actor=user)]
index = score_index(settings.db_path(), act.version, tuple(signature))

c1, c2, c3 = st.columns([2, 1, 1])
by_id = {c["id"]: c for c in camps}
cid = c1.selectbox(_("Clinicians' grades from"), [None, *by_id], index=len(by_id),
                   format_func=lambda i: _("no campaign") if i is None else f"#{i} {by_id[i]['name']}",
                   key="tune_campaign")
consensus = c1.selectbox(_("Consensus of the clinicians"), cal.CONSENSUS_METHODS, key="tune_consensus",
                         format_func=cal.consensus_label,
                         help=_("An item's clinicians' tier: the lower median of its annotators' tiers (MedDisKEval), "
                                "the most frequent tier (ties: lower median), or the adjudicated tier where an item "
                                "was adjudicated (else median). Recorded with a publication."))
metric = c2.selectbox(_("Metric"), list(report_metrics()), key="tune_metric", format_func=metric_label)
atype = c3.selectbox(_("Aspect type"), [t for t in ("enumerated", "declarative") if t in METRICS[metric].aspect_types],
                     key="tune_type", format_func=aspect_type_name)
key = (metric, atype)
info = METRICS[metric]

scores = tiers = np.array([])
grades = None  # each clinician's grade (median consensus only), which the smooth estimator fits
if cid is not None:
    with ui.db() as d:
        rows = cal.campaign_rows(d, cid, consensus=consensus)
    scores, tiers = cal.graded_examples(rows).get(key, (np.array([]), np.array([], dtype=int)))
    grades = designs.graded_grades(rows).get(key) if consensus == "median" else None
is_active = cid is not None and by_id[cid]["kind"] == "active_calibration"
criterion = by_id[cid]["config"].get("criterion", "kappa") if is_active else "kappa"
# an active campaign's own estimator suggests the cut-offs (calibration v2: smooth curves by default)
smooth = is_active and designs.estimator_of(by_id[cid]["config"]) == "smooth"


@st.cache_data(show_spinner=_("Fitting the cut-offs…"), max_entries=64)
def cut_off_intervals(metric_: str, atype_: str, scores_: np.ndarray, tiers_: np.ndarray, criterion_: str,
                      smooth_: bool, grades_=None) -> dict:
    """The suggested cut-offs and each one's 95% interval (the smooth fit's, or a bootstrap of the search); cached
    per grades (the arrays), so moving the slider stays fast."""
    c = (designs.calibrate_smooth(metric_, atype_, scores_, tiers_, grades=grades_) if smooth_ else
         cal.calibrate(metric_, atype_, scores_, tiers_, criterion=criterion_, n_boot=200, rng=0))
    return {"cut_offs": c.cut_offs, "low": c.bootstrap.get("low_ci95"), "high": c.bootstrap.get("high_ci95"),
            "undetermined": c.bootstrap.get("undetermined") or {}}


if smooth:
    optimum = cal.Calibration(metric, atype, None, "smooth", None, len(scores))
else:  # an active campaign's own criterion (accuracy by default), never the page's default kappa in its place
    optimum = cal.calibrate(metric, atype, scores, tiers, criterion=criterion, n_boot=0) if len(scores) else None


bands = cut_off_intervals(metric, atype, scores, tiers, criterion, smooth, grades) if len(scores) >= 3 else None
if smooth and bands and bands["cut_offs"]:
    # a boundary the grades leave undetermined (a tier nobody used) keeps the active set's cut-off, said so
    suggested = tuning.with_kept(bands["cut_offs"], act.cutoffs.get(key), (float(info.low), float(info.high)))
    optimum = cal.Calibration(metric, atype, suggested, "smooth", None, len(scores))
    for which, why in bands["undetermined"].items():
        st.info(_("The grades leave the {which} undetermined ({why}): the suggestion keeps the active set's, "
                  "{value}, and so would a publication from this campaign.").format(
            which=_(CUT_NAMES[which]), why=tuning.boundary_reason(why), value=f"{suggested[which == 'high']:.3f}"))

slider_key = f"cut_{metric}_{atype}"
if key not in act.cutoffs:  # e.g. a plugin metric before its first calibration
    start = tuple(optimum.cut_offs) if optimum is not None and optimum.cut_offs else (float(info.low), float(info.high))
    if optimum is not None and optimum.cut_offs:
        st.info(_("The active set v{version} has no cut-offs for {stratum}: these scores stay ungraded until a set "
                  "with them is published. The slider starts at the suggested optimum.").format(
            version=act.version, stratum=stratum_text(metric, atype)))
    else:
        st.info(_("The active set v{version} has no cut-offs for {stratum}: these scores stay ungraded until a set "
                  "with them is published. The slider starts at the metric's whole range.").format(
            version=act.version, stratum=stratum_text(metric, atype)))
else:
    start = act.cutoffs[key]


def _save() -> None:
    """The slider moved: keep the handle that was not moved exactly where it was (the browser snaps both to the
    step grid), then store the draft."""
    with ui.db() as d:
        before = tuning.draft(d, user).get(key, start)
        lo, hi = tuning.settle_handles(before, st.session_state[slider_key], low=float(info.low))
        st.session_state[slider_key] = (lo, hi)
        tuning.save_draft(d, user, metric, atype, lo, hi)


def _use(cut) -> None:
    st.session_state[slider_key] = lo_hi = (float(cut[0]), float(cut[1]))  # both chosen: nothing to settle
    with ui.db() as d:
        tuning.save_draft(d, user, metric, atype, *lo_hi)


def _discard() -> None:
    with ui.db() as d:
        tuning.discard_draft(d, user)
    for k in [k for k in st.session_state if str(k).startswith("cut_")]:
        del st.session_state[k]


def publish_section(mine: dict) -> None:
    """What publishing would change, from the draft of the moment (``mine``: the stored draft with the slider's
    value), and the buttons. Drawn inside the slider's fragment, so it is never one move behind."""
    st.subheader(_("Publish"), anchor=False)
    if st.session_state.pop("publish_rerun", False):
        st.rerun()  # the whole page: the active set, its scores and every comparison changed
    if msg := st.session_state.pop("publish_msg", None):
        st.success(msg)
    changes = {k: v for k, v in mine.items()  # equal to 9 decimals (the comparison rule) is no change
               if act.cutoffs.get(k) is None or tuple(map(th.canonical, act.cutoffs[k])) != tuple(map(th.canonical, v))}
    if not changes:
        st.caption(_("Your draft equals the active set v{version}: move a slider to change it.").format(
            version=act.version))
        return
    def cut(x: float) -> str:  # up to 4 decimals, none hidden: a calibrated 0.0002 is not "0.000"
        return f"{x:.4f}".rstrip("0").rstrip(".") if x else "0"

    with st.container(key="tune_changes"):  # a few lines of words: what Publish would change
        st.markdown("\n".join(
            "- " + _("{stratum}: active v{version} {active} → your draft **{low} – {high}**").format(
                stratum=ui.md_escape(stratum_text(m, t)), version=act.version,
                active=_("none") if act.cutoffs.get((m, t)) is None else " – ".join(map(cut, act.cutoffs[(m, t)])),
                low=cut(v[0]), high=cut(v[1])) for (m, t), v in sorted(changes.items())))
    name = st.text_input(_("Name of the new threshold set"), key="publish_name",
                         placeholder=_("e.g. Calibrated on round 1"))
    if err := st.session_state.pop("publish_err", None):
        st.error(ui.md_escape(err))
    p1, p2 = st.columns(2)
    ask = "publish_ask"
    # Never disabled by the name field: a click that ends the typing in it must count; the name is checked here.
    if p1.button(_("Publish and activate…"), type="primary", key="publish"):
        if name.strip():
            ui.ask_first(ask)
        else:
            st.error(_("Give the new threshold set a name, then press Publish again."))
    if st.session_state.get(ask):
        ui.confirm(ask, question=_("Publish “{name}” and make it the active set?").format(
                       name=ui.md_escape(name.strip())),
                   details=_("{comparison} Every score is then regraded under it.").format(
                       comparison=_agreement_before_publishing(mine)),
                   yes=_("Publish and regrade every score"), on_yes=_publish, args=(changes, name.strip()))
    p2.button(_("Discard my draft…"), on_click=ui.ask_first, args=("discard_ask",), key="discard_draft")
    ui.confirm("discard_ask", question=_("Discard your draft?"),  # i18n: not text
               details=_("Every cut-off you moved goes back to the active set v{version}'s.").format(
                   version=act.version),
               yes=_("Discard the draft"), on_yes=_discard)


def _agreement_before_publishing(mine: dict) -> str:
    """How the draft's cut-offs agree with the clinicians, against the active set's, on the stratum on screen (the
    only one whose graded examples this page has read)."""
    if not len(scores) or key not in mine or act.cutoffs.get(key) is None:
        return _("No clinicians' grades on this page to compare the draft with the active set.")
    new, old = tuning.against_experts(scores, tiers, *mine[key]), tuning.against_experts(scores, tiers, *act.cutoffs[key])
    if new.kappa is None or old.kappa is None:
        return _("The agreement with the clinicians is undefined here (too few or identical grades).")
    fields = dict(stratum=stratum_text(metric, atype), n=new.n, version=act.version, new=f"{new.kappa:.3f}",
                  old=f"{old.kappa:.3f}")
    if new.kappa < old.kappa - 1e-9:
        text = _("On {stratum} ({n} graded examples) your draft agrees **less** than the active set v{version} with "
                 "the clinicians: weighted kappa {new} against {old}.").format(**fields)
    elif new.kappa > old.kappa + 1e-9:
        text = _("On {stratum} ({n} graded examples) your draft agrees more than the active set v{version} with the "
                 "clinicians: weighted kappa {new} against {old}.").format(**fields)
    else:
        text = _("On {stratum} ({n} graded examples) your draft agrees as much as the active set v{version} with the "
                 "clinicians: weighted kappa {new} against {old}.").format(**fields)
    others = len([k for k in mine if k != key and mine[k] != act.cutoffs.get(k)])
    if others:
        text += " " + ngettext("({n} other stratum changes too; open it to compare.)",
                               "({n} other strata change too; open them to compare.)", others).format(n=others)
    return text


def _publish(changes: dict, name: str) -> None:
    source, design = {}, {}
    try:
        if cid is not None:
            from medeval.calibration.rounds import design_provenance

            with ui.db() as d:
                source = cal.campaign_source(d, cid)
                # an active campaign's design and rounds (each stratum's items per round: `calibrate --publish`)
                design = {k: v for k, v in (design_provenance(d, cid) or {}).items() if k != "items_per_round"}
        with ui.db() as d:
            v = cal.publish_set(d, changes, name=name, actor=user,
                                provenance={"method": "tuned by hand on the tuning page", "source": source,
                                            **({"consensus": consensus} if cid is not None else {}),
                                            **({"estimator": f"{designs.method_name(by_id[cid]['config'])} "
                                                             "(suggested; published as tuned by hand)"}
                                               if is_active else {}), **design})
            tuning.discard_draft(d, user)
    except MedevalError as e:
        st.session_state["publish_err"] = str(e)
        return
    st.session_state["publish_msg"] = _("Published v{version} and made it active; every score was regraded under "
                                        "it.").format(version=v)
    st.session_state["publish_rerun"] = True
    for k in [k for k in st.session_state if str(k).startswith("cut_")]:
        del st.session_state[k]


@st.fragment
def tuner() -> None:
    """The slider and everything it changes, the Publish section included: a slider move reruns only this part,
    so every number below it -- and what Publish would publish -- is the slider's value of the moment."""
    with ui.db() as d:
        mine = tuning.draft(d, user)  # read now: a move, "Use the suggested optimum" or a discard just changed it
    if slider_key not in st.session_state:
        st.session_state[slider_key] = tuple(float(x) for x in mine.get(key, start))
    lo, hi = st.slider(_("Cut-offs: Completely Wrong below the first, Basically Correct from the second"),
                       float(info.low), float(info.high), step=tuning.SLIDER_STEP, key=slider_key, on_change=_save,
                       format="%.3f")
    draft = {**mine, key: (lo, hi)}
    counts = index.counts(metric, atype, lo, hi)
    total = int(counts.sum())
    m1, m2, m3, m4 = st.columns(4)
    if len(scores):
        ag = tuning.against_experts(scores, tiers, lo, hi)
        m1.metric(_("Weighted kappa vs clinicians"), "—" if ag.kappa is None else f"{ag.kappa:.3f}",
                  help=_("Quadratic-weighted Cohen's kappa between these cut-offs' tiers and the clinicians' "
                         "consensus tiers on the graded examples."))
        m2.metric(_("Accuracy"), percent(ag.accuracy))
        m3.metric(_("Spearman"), "—" if ag.spearman is None else f"{ag.spearman:.3f}")
        m4.metric(_("Graded examples"), ag.n)
    else:
        m1.caption(_("No clinicians' grades for this metric and type: choose a campaign that has them."))
    share = (counts / total) if total else np.zeros(3)
    s1, s2, s3 = st.columns(3)
    for col, t, n, p in zip((s1, s2, s3), th.TIERS, counts, share):
        col.metric(_("All scored: {name}").format(name=tier_name(t)), percent(p),
                   help=_("{n} of {total} scored responses ({metric}, {aspect_type})").format(
                       n=f"{int(n):,}", total=f"{total:,}", metric=metric_label(metric),
                       aspect_type=aspect_type_name(atype)))

    fig = go.Figure()
    if len(scores):
        jitter = np.random.default_rng(0).uniform(-0.12, 0.12, len(scores))
        fig.add_trace(go.Scatter(x=scores, y=tiers + jitter, mode="markers", marker=dict(size=7, opacity=0.6),
                                 name=_("graded examples"), hovertemplate=_("score %{x:.3f}") + "<extra></extra>"))
    for which, colour in (("low", "#d33a2c"), ("high", "#2c6fd3")):
        if bands and bands[which]:  # an undetermined cut-off has no interval: only the other is shaded
            fig.add_vrect(x0=bands[which][0], x1=bands[which][1], fillcolor=colour, opacity=0.12, line_width=0,
                          layer="below")
    for x, which in ((lo, "low"), (hi, "high")):
        fig.add_vline(x=x, line_color="#d33a2c", annotation_text=f"{_(CUT_NAMES[which])} {x:.3f}")
    fig.update_layout(height=300, template="plotly_white", margin=dict(l=40, r=20, t=30, b=40),
                      xaxis=dict(range=[info.low, info.high],
                                 title=_("{name} score").format(name=metric_label(metric))),
                      yaxis=dict(tickvals=[0, 1, 2], ticktext=[tier_name(t) for t in th.TIERS], range=[-0.5, 2.5]))
    st.plotly_chart(fig, key="tune_scatter", config={"displayModeBar": False})
    if bands and bands["low"] and bands["high"]:
        (a, b), (c, d) = bands["low"], bands["high"]
        fields = dict(low_cut=f"{bands['cut_offs'][0]:.3f}", high_cut=f"{bands['cut_offs'][1]:.3f}", a=f"{a:.3f}",
                      b=f"{b:.3f}", low_width=f"{b - a:.3f}", c=f"{c:.3f}", d=f"{d:.3f}", high_width=f"{d - c:.3f}")
        if smooth:
            st.caption(_("Shaded: each cut-off's 95% interval (smooth fit, profile likelihood, fitted {low_cut} / "
                         "{high_cut}) -- low {a} to {b} (width {low_width}), high {c} to {d} (width "
                         "{high_width}).").format(**fields))
        else:
            st.caption(_("Shaded: each cut-off's 95% interval (bootstrap over the graded items, criterion {criterion}, "
                         "optimum {low_cut} / {high_cut}) -- low {a} to {b} (width {low_width}), high {c} to {d} "
                         "(width {high_width}).").format(criterion=_(CRITERION_NAMES.get(criterion, criterion)),
                                                         **fields))

    left, right = st.columns(2)
    with left:
        if len(scores):
            st.caption(_("Confusion: rows = clinicians, columns = these cut-offs (CW, PC, BC: Completely Wrong, "
                         "Partially Correct, Basically Correct)"))
            # the columns by the tiers' initials, which fit half a laptop (CW, PC, BC), headed in the reader's words
            short = {t: "".join(w[0] for w in name.split()) for t, name in th.TIERS.items()}
            tables.dataframe([{"clinicians": tier_name(e), **{short[a]: ag.confusion[e][a] for a in th.TIERS}}
                              for e in th.TIERS], width="content", key="tune_confusion",
                             labels={"clinicians": N_("clinicians"), **{short[t]: TIER_SHORT[t] for t in th.TIERS}},
                             column_config={short[t]: st.column_config.NumberColumn(help=tier_name(t))
                                            for t in th.TIERS})
        options = [(_("Table 12"), th.TABLE12.cutoffs.get(key)),
                   (_("active v{version}").format(version=act.version), act.cutoffs.get(key)),
                   (_("suggested optimum"), optimum.cut_offs if optimum else None), (_("your draft"), (lo, hi))]
        st.caption(_("Side by side"))
        tables.dataframe([{"cut-offs": name, "low": c[0] if c else None, "high": c[1] if c else None,
                           "kappa vs clinicians": (tuning.against_experts(scores, tiers, *c).kappa
                                                   if c and len(scores) else None)} for name, c in options],
                         width="content", key="tune_compare",
                         labels={"cut-offs": N_("cut-offs"), "low": N_("low cut-off"), "high": N_("high cut-off"),
                                 "kappa vs clinicians": N_("kappa vs clinicians")})
        if optimum and optimum.cut_offs:
            st.button(_("Use the suggested optimum"), on_click=_use, args=(optimum.cut_offs,), key="use_optimum")
    with right:
        st.caption(_("Leaderboard under your draft (rank change vs the active set)"))
        now = tuning.leaderboard(index, draft)
        before = {r["model"]: r["rank"] for r in tuning.leaderboard(index, act.cutoffs)}
        tables.dataframe([{"rank": r["rank"], "model": r["model"], "total": r["averaged"]["total_score"],
                           "level": r["averaged"]["level"], "move": before.get(r["model"], r["rank"]) - r["rank"]}
                          for r in now], width="content", key="tune_board",
                         labels={"rank": N_("rank"), "model": N_("model"), "total": N_("total"), "level": N_("level"),
                                 "move": N_("move")},
                         column_config={"total": st.column_config.NumberColumn(format="%.2f")})
    publish_section(draft)


tuner()


@st.cache_data(show_spinner=_("Bootstrapping every stratum…"), max_entries=16)
def active_status(campaign_id: int, grades_signature: tuple) -> tuple[dict, list[dict]]:
    """The active campaign's rounds (cached per campaign and grades: recomputed after a grade or a round)."""
    from medeval.calibration import rounds

    with ui.db() as d:
        status = rounds.round_status(d, campaign_id, actor=user)
        return rounds.public(status), rounds.width_series(d, campaign_id, status, actor=user)


def _draw_round(campaign_id: int) -> None:
    from medeval.calibration import rounds

    try:
        with ui.db() as d:
            out = rounds.next_round(d, campaign_id, actor=user)
        st.session_state["round_msg"] = ("ok", ngettext("Round {round} drawn: {n} item added.",
                                                        "Round {round} drawn: {n} items added.", out["items"]).format(
            round=out["round"], n=out["items"]))
    except MedevalError as e:
        st.session_state["round_msg"] = ("error", str(e))
    active_status.clear()


def _grades_sig(d, campaign_id: int) -> tuple:
    """Changes when a grade or an item of the campaign is added: the key of its cached figures."""
    return cp.grades_signature(d, campaign_id)


@st.cache_data(show_spinner=_("Fitting the curves…"), max_entries=64)
def round_fit(campaign_id: int, metric_: str, atype_: str, round_: int, grades_signature: tuple) -> dict:
    """A stratum's graded items, fitted curves and cut-off intervals after a round (cached per grades)."""
    from medeval.calibration import rounds

    with ui.db() as d:
        return rounds.fit_after_round(d, campaign_id, metric_, atype_, round_, actor=user)


TIER_COLOURS = ("#d33a2c", "#e0a100", "#2a9d55")
# the boundaries as the fitted curves name them (designs.curves), drawn in _() of the name
CURVES = ((N_("P(tier ≥ Partially Correct)"), "#d33a2c"), (N_("P(tier ≥ Basically Correct)"), "#2c6fd3"))


def curves_figure(f: dict, title: str) -> go.Figure:
    """The graded items (at 0, ½ and 1 for CW, PC and BC), the two fitted curves, the cut-offs and their 95%
    intervals."""
    m_info = METRICS[f["metric"]]
    fig = go.Figure()
    jitter = np.random.default_rng(0).uniform(-0.04, 0.04, f["n_graded"])
    for t, colour in zip(th.TIERS, TIER_COLOURS):
        sel = f["tiers"] == t
        fig.add_trace(go.Scatter(x=f["scores"][sel].tolist(), y=(t / 2 + jitter[sel]).tolist(), mode="markers",
                                 name=_("graded: {name}").format(name=tier_name(t)),
                                 marker=dict(size=6, opacity=0.5, color=colour),
                                 hovertemplate=_("score %{x:.3f}") + "<extra></extra>"))
    for boundary, colour in CURVES:
        pts = [r for r in f["curves"] if r["boundary"] == boundary]
        fig.add_trace(go.Scatter(x=[r["score"] for r in pts], y=[r["p"] for r in pts], mode="lines", name=_(boundary),
                                 line=dict(color=colour, width=2.5, dash="dot" if f["curves_fitted_for_display"]
                                           else "solid"), hovertemplate="%{x:.3f}: %{y:.2f}<extra></extra>"))
    for which, (_boundary, colour) in zip(("low", "high"), CURVES):
        ci = f[f"{which}_ci95"]
        if ci:
            fig.add_vrect(x0=ci[0], x1=ci[1], fillcolor=colour, opacity=0.15, line_width=0, layer="below")
    for x, (_boundary, colour) in zip(f["cut_offs"] or (), CURVES):
        if x is not None:  # an undetermined cut-off has no line
            fig.add_vline(x=x, line_color=colour, line_dash="dash")
    fig.update_layout(height=250, template="plotly_white", showlegend=False, margin=dict(l=40, r=10, t=32, b=36),
                      title=dict(text=title, font=dict(size=13), x=0, xanchor="left"),
                      xaxis=dict(range=[m_info.low, m_info.high],
                                 title=_("{name} score").format(name=metric_label(f["metric"]))),
                      yaxis=dict(range=[-0.08, 1.08], title=_("P(tier ≥ k)"), tickvals=[0, 0.5, 1]))
    return fig


def _fit_text(f: dict) -> str:
    cut = f["cut_offs"]
    ci = [f["low_ci95"], f["high_ci95"]]
    if not cut:
        return _("{n} graded, no cut-offs yet").format(n=f["n_graded"])
    return _("{n} graded: {cut_offs}").format(n=f["n_graded"], cut_offs=", ".join(
        (f"{x:.3f}" + (f" ({c[0]:.3f}–{c[1]:.3f})" if c else "")) if x is not None else _("undetermined")
        for x, c in zip(cut, ci)))


def curves_section(status: dict) -> None:
    """Round by round: the fitted curves over the graded items, with the cut-offs' intervals; beside them, another
    active campaign of the same stratum (on the demo: the paper's design, at the same budget)."""
    from medeval.calibration import rounds

    strata = [(s["metric"], s["aspect_type"]) for s in status["strata"]]
    if key not in strata:  # the metric and type chosen at the top of the page
        st.caption(ui.md_escape(_("This campaign does not calibrate {stratum}: choose {choices} above to see its "
                                  "curves.").format(stratum=stratum_text(metric, atype),
                                                    choices=_(" or ").join(stratum_text(m, t) for m, t in strata))))
        return
    others = [c for c in camps if c["kind"] == "active_calibration" and c["id"] != cid]
    own = by_id[cid]["config"]
    differs = [c["id"] for c in others if (designs.estimator_of(c["config"]), designs.design_of(c["config"])) !=
               (designs.estimator_of(own), designs.design_of(own))]
    k2, k3 = st.columns([1, 2])
    stratum = key
    last = int(status["round"])
    r = k2.select_slider(_("After round"), list(range(1, last + 1)), value=last, key="curves_round") if last > 1 else 1
    pair = k3.selectbox(_("Side by side with"), [0, *[c["id"] for c in others]],  # 0: nothing (ids start at 1)
                        index=1 + [c["id"] for c in others].index(differs[0]) if differs else 0, key="curves_compare",
                        format_func=lambda i: _("nothing") if not i else f"#{i} {by_id[i]['name']}")
    shown = [cid] + ([pair] if pair and stratum in
                     [(m, t) for m in by_id[pair]["config"]["metrics"] for t in by_id[pair]["config"]["aspect_types"]]
                     else [])
    cols = st.columns(len(shown))
    for col, c in zip(cols, shown):
        with ui.db() as d:
            r_c = min(r, rounds.last_round(d, c))
            sig = _grades_sig(d, c)
        f = round_fit(c, *stratum, r_c, sig)
        cfg_c = by_id[c]["config"]
        design = designs.design_of(cfg_c)
        title = (_(DESIGN_TITLES[design]) if design in DESIGN_TITLES else
                 _("#{id}: {estimator} estimator, {design} design, round {round}")).format(
            id=c, estimator=designs.method_label(cfg_c), design=design, round=r_c)
        col.plotly_chart(curves_figure(f, title), key=f"tune_curves_{len(shown)}_{c}",
                         config={"displayModeBar": False})
        col.caption(ui.md_escape(f"{by_id[c]['name']} — {_fit_text(f)}"
                                 + (" " + _("(curves: a smooth fit drawn for comparison; the cut-offs are the "
                                            "search's)")
                                    if f["curves_fitted_for_display"] else "")))
    st.caption(_("Dots: graded items at 0 (Completely Wrong), ½ (Partially Correct) and 1 (Basically Correct); "
                 "red: P(tier ≥ Partially Correct), blue: P(tier ≥ Basically Correct); dashed lines: the cut-offs, "
                 "shaded: their 95% intervals, on the items graded up to the round chosen."))


if is_active:
    st.subheader(_("Active rounds"), anchor=False)
    with ui.db() as d:
        grades_sig = _grades_sig(d, cid)
    status, series = active_status(cid, grades_sig)
    target = float(status["target_width"])
    ran = list(dict.fromkeys((r["metric"], r["aspect_type"]) for r in series))  # every stratum the rounds ran
    if ran:
        wfig = go.Figure()
        for n, (m_, t_) in enumerate(ran):
            for which, colour in (("low", "#d33a2c"), ("high", "#2c6fd3")):
                pts = [r for r in series if (r["metric"], r["aspect_type"], r["cut_off"]) == (m_, t_, which)]
                wfig.add_trace(go.Scatter(x=[r["after_round"] for r in pts], y=[r["width"] for r in pts],
                                          mode="lines+markers",
                                          name=f"{stratum_text(m_, t_)}: {_(CUT_NAMES[which])}",
                                          line=dict(color=colour, dash=("solid", "dot", "dash", "dashdot")[n % 4])))
        wfig.add_hline(y=target, line_dash="dash", annotation_text=_("target {width}").format(width=f"{target:g}"))
        wfig.update_layout(height=220, template="plotly_white", margin=dict(l=40, r=20, t=20, b=40),
                           xaxis=dict(title=_("rounds graded"), dtick=1), yaxis=dict(title=_("95% interval width"),
                                                                                     rangemode="tozero"))
        st.plotly_chart(wfig, key="tune_widths", config={"displayModeBar": False})
    from medeval.calibration.rounds import STOP_TEXT

    tables.dataframe([{"stratum": stratum_text(s["metric"], s["aspect_type"]), "items": s["items"],
                       "graded": s["n_graded"], "low width": s["widths"][0] if s["widths"] else None,
                       "high width": s["widths"][1] if s["widths"] else None,
                       "status": _(STOP_TEXT[s["stop"]]) if s["stop"] else _("narrowing")} for s in status["strata"]],
                     key="tune_rounds",
                     labels={"stratum": N_("stratum"), "items": N_("items"), "graded": N_("graded"),
                             "low width": N_("low width"), "high width": N_("high width"), "status": N_("status")},
                     column_config={"low width": st.column_config.NumberColumn(format="%.3f"),
                                    "high width": st.column_config.NumberColumn(format="%.3f")})
    if consensus != "median":  # said, not silently replaced: the rounds' rule is the campaign's
        st.caption(_("The rounds estimate and draw on each item's lower-median tier (the campaign's rule); the "
                     "consensus chosen above ({consensus}) applies to the chart and the slider.").format(
            consensus=cal.consensus_label(consensus)))
    fields = dict(round=status["round"], width=f"{target:g}", budget=status["budget"], size=status["round_size"])
    if status["last_round_complete"]:
        st.caption(_("Round {round} (fully answered). A stratum stops when both 95% intervals are at most {width} "
                     "wide or it holds {budget} items; each round adds up to {size} items per stratum where the "
                     "cut-offs are uncertain.").format(**fields))
    else:
        st.caption(_("Round {round} ({missing} answers still missing). A stratum stops when both 95% intervals are "
                     "at most {width} wide or it holds {budget} items; each round adds up to {size} items per "
                     "stratum where the cut-offs are uncertain.").format(missing=status["missing"], **fields))
    st.button(_("Draw the next round"), on_click=_draw_round, args=(cid,), key="next_round")
    msg = st.session_state.pop("round_msg", None)
    if msg:
        (st.success if msg[0] == "ok" else st.error)(ui.md_escape(msg[1]))
    st.subheader(_("Fitted curves, round by round"), anchor=False)
    curves_section(status)

