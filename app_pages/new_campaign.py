"""New campaign: choose metrics, aspect types, interval width, items per interval, k, annotators and a seed;
preview the sample (with the intervals that came up short) before anything is stored."""

import secrets

import streamlit as st

from medeval.annotation import campaigns as cp
from medeval.annotation.campaign_text import (  # the choices' names (the widgets keep the ids)
    ASPECT_TYPE_NAMES,
    DESIGN_NAMES,
    ESTIMATOR_NAMES,
    SAMPLING_NAMES,
    kind_label,
)
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _, ngettext
from medeval.engine.registry import label as metric_label
from medeval.engine.registry import report_metrics
from webui import page as ui
from webui import tables

PREVIEW_LABELS = {"metric": N_("metric"), "aspect type": N_("aspect type"), "interval": N_("interval"),
                  "available": N_("available"), "sampled": N_("sampled"), "short": N_("short")}

user = ui.require_page("new-campaign")
st.title(_("New campaign"))

with ui.db() as d:
    people = cp.annotator_choices(d, actor=user)
if len(people) < 1:
    st.info(_("There are no active users to assign work to. An admin adds them on the Users page."))
    st.stop()

# After a create the form starts again from its defaults: its widgets take new keys (a browser keeps what a
# widget of the same key showed), numbered by how many campaigns this session created here
form = st.session_state.get("new_campaign_form", 0)


def key(name: str) -> str:
    return name if not form else f"{name}__{form}"


created = st.session_state.pop("new_campaign_created", None)
if created:  # the message names what was created; the form below is back to its defaults
    st.success(created, icon=":material/check_circle:")
    st.page_link("app_pages/campaigns.py", label=_("See its progress"), icon=":material/monitoring:")  # i18n: not text

if key("new_campaign_seed") not in st.session_state:
    st.session_state[key("new_campaign_seed")] = secrets.randbelow(10**6)

kind = st.radio(_("Kind"), ["bucket_grading", "random_validation"], horizontal=True,  # i18n: not text (ids)
                key=key("new_kind"), format_func=kind_label)
name = st.text_input(_("Name"), key=key("new_name"), placeholder=_("e.g. Calibration round 1"))
labels = {p["username"]: _("{name} ({role})").format(name=p["username"],
                                                     role=_(ui.ROLE_NAMES.get(p["role"], p["role"]))) for p in people}
default_people = [p["username"] for p in people if p["role"] == "annotator"][:3]
annotators = st.multiselect(_("Annotators"), list(labels), default=default_people, format_func=labels.get,
                            key=key("new_annotators"))
c1, c2 = st.columns(2)
k = c1.number_input(_("Annotators per item (k)"), min_value=1, max_value=max(1, len(people)), value=min(3, len(people)),
                    step=1, key=key("new_k"))
seed = c2.number_input(_("Seed (stored; the same seed and data give the same sample)"), min_value=0, step=1,
                       key=key("new_campaign_seed"))

if kind == "bucket_grading":
    metrics = st.multiselect(_("Metrics"), list(report_metrics()), default=["bleu1", "rouge1", "cosine"],
                             key=key("new_metrics"), format_func=metric_label)
    types = st.multiselect(_("Aspect types"), ["enumerated", "declarative"],  # i18n: not text (ids)
                           default=["enumerated", "declarative"], key=key("new_types"),
                           format_func=lambda t: _(ASPECT_TYPE_NAMES.get(t, t)))
    c3, c4 = st.columns(2)
    width = c3.number_input(_("Interval width"), min_value=0.01, max_value=1.0, value=0.1, step=0.05, format="%.2f",
                            key=key("new_width"))
    sampling = st.radio(_("Sampling"), ["interval", "active"], horizontal=True,  # i18n: not text (ids)
                        key=key("new_sampling"), format_func=lambda v: _(SAMPLING_NAMES[v]))
    if sampling == "interval":
        st.caption(_("The paper's design: the same number of items from every score interval, graded at once."))
    else:
        st.caption(_("A small seed round per interval, then rounds drawn where each cut-off is still uncertain, "
                     "until both cut-offs' {level} intervals are narrow enough or the budget is spent "
                     "(draw each round on the Tune cut-offs page).").format(level="95%"))
    per = c4.number_input(_("Items per interval") if sampling == "interval" else _("Seed items per interval"),
                          min_value=1, max_value=1000, value=10 if sampling == "interval" else 2, step=1,
                          key=key(f"new_per_{sampling}"))
    cfg = cp.BucketConfig(tuple(metrics), tuple(types), float(width), int(per), int(k), int(seed))
    if sampling == "active":
        from medeval.annotation.campaigns import sampling as smp

        a1, a2, a3, a4 = st.columns(4)
        round_size = a1.number_input(_("Items per round (per metric and type)"), min_value=1, max_value=1000, value=20,
                                     step=5, key=key("new_round_size"))
        target = a2.number_input(_("Target {level} interval width").format(level="95%"), min_value=0.005,
                                 max_value=1.0, value=0.05, step=0.01, format="%.3f", key=key("new_target"))
        budget = a3.number_input(_("Budget (items per metric and type)"), min_value=1, max_value=100_000, value=300,
                                 step=50, key=key("new_budget"))
        explore = a4.number_input(_("Explore share"), min_value=0.0, max_value=1.0, value=0.2, step=0.05,
                                  format="%.2f", key=key("new_explore"),
                                  help=_("Share of each round spread over the whole score range, so a cut-off the "
                                         "seed round missed can still be found."))
        b1, b2 = st.columns(2)
        estimator = b1.selectbox(_("Cut-off estimator"), smp.ACTIVE_ESTIMATORS, key=key("new_estimator"),
                                 format_func=lambda v: _(ESTIMATOR_NAMES.get(v, v)),
                                 help=_("Smooth: a curve of P(tier ≥ k | score) per cut-off, the cut-off where it "
                                        "crosses 0.5. Accuracy: the pair of cut-offs that grades the most items into "
                                        "the clinicians' tier."))
        design = b2.selectbox(_("Where later rounds are drawn"), smp.ACTIVE_DESIGNS, key=key("new_design"),
                              format_func=lambda v: _(DESIGN_NAMES.get(v, v)))
        # every setting on the screen reaches the campaign (issue 23 §7): nothing is left to a default here
        active_cfg = smp.ActiveConfig(tuple(metrics), tuple(types), float(width), int(per), int(round_size),
                                      float(target), int(budget), float(explore), smp.ACTIVE_DEFAULT_CRITERION,
                                      int(k), int(seed), str(estimator), str(design))
else:
    n = st.number_input(_("Responses drawn at random"), min_value=1, value=150, step=10, key=key("new_n"))
    allow_overlap = st.checkbox(
        _("Allow items of the calibration campaigns"), value=False, key=key("new_allow_overlap"),
        help=_("Off (recommended): responses that were items of the campaigns whose grades calibrated the active "
               "threshold set are left out, so no grade that set a cut-off validates it. The campaign records the "
               "choice and the Agreement page reports the overlap."))
    try:
        with ui.db() as d:
            _pool = cp.validation_pool(d, allow_overlap=allow_overlap)
    except MedevalError as e:
        st.error(ui.md_escape(str(e)))
        st.stop()
    st.caption(_("Validation sample: {text}.").format(text=ui.md_escape(_pool["text"])))


def _problems() -> list[str]:
    out = []
    if not name.strip():
        out.append(_("Give the campaign a name."))
    if len(annotators) < k:
        out.append(_("Choose at least k = {k} annotators ({n} chosen).").format(k=k, n=len(annotators)))
    if kind == "bucket_grading" and (not metrics or not types):
        out.append(_("Choose at least one metric and one aspect type."))
    return out


if kind == "bucket_grading":
    st.subheader(_("Preview"), anchor=False)
    try:
        with ui.db() as d:
            chosen, report = cp.sample_buckets(d, cfg)
    except MedevalError as e:
        st.error(ui.md_escape(str(e)))
        st.stop()
    short = [r for r in report if r["short"]]
    st.write(_("{n} distinct responses sampled from {intervals} intervals; each goes to {k} annotators: about "
               "{each} per annotator.").format(n=len(chosen), intervals=len(report), k=k,
                                               each=len(chosen) * k // max(1, len(annotators))))
    if short:
        st.warning(ngettext("{n} interval has fewer responses than asked for (shown below; it is not skipped: all "
                            "its responses are taken).",
                            "{n} intervals have fewer responses than asked for (shown below; they are not skipped: "
                            "all their responses are taken).", len(short)).format(n=len(short)))
    tables.dataframe([{"metric": metric_label(r["metric"]),
                       "aspect type": _(ASPECT_TYPE_NAMES.get(r["aspect_type"], r["aspect_type"])),
                       "interval": f"[{r['interval'][0]:g}, {r['interval'][1]:g})", "available": r["available"],
                       "sampled": r["sampled"], "short": _("yes") if r["short"] else ""} for r in report],
                     key="preview_table", labels=PREVIEW_LABELS)

for p in _problems():
    st.caption(f"• {p}")
active_mode = kind == "bucket_grading" and sampling == "active"
signature = repr((kind, name.strip(), sorted(annotators), int(k), int(seed),
                  (active_cfg if active_mode else cfg) if kind == "bucket_grading" else (int(n), allow_overlap)))
# Never disabled by what a field holds: a click that ends the typing in a field (its value is sent as the field
# loses the focus) must count, so the button checks the fields when it is pressed.
if st.button(_("Create campaign"), type="primary", key="create_campaign"):
    if problems := _problems():
        st.error(_("Not created: {problems}").format(problems=" ".join(problems)))
        st.stop()
    if st.session_state.get("created_signature") == signature:  # a double click: create it once
        st.info(_("This campaign was just created; change something to create another."))
        st.stop()
    st.session_state["created_signature"] = signature
    try:
        with ui.db() as d:
            if active_mode:
                from medeval.annotation.campaigns.assignment import create_active_campaign

                cid = create_active_campaign(d, name.strip(), active_cfg, annotators, actor=user)
            elif kind == "bucket_grading":
                cid = cp.create_bucket_campaign(d, name.strip(), cfg, annotators, actor=user)
            else:
                cid = cp.create_random_campaign(d, name.strip(), int(n), annotators, k=int(k), seed=int(seed),
                                                actor=user, allow_overlap=bool(allow_overlap))
    except MedevalError as e:
        st.session_state.pop("created_signature", None)
        st.error(ui.md_escape(str(e)))
    else:
        st.session_state["new_campaign_form"] = form + 1  # every field back to its default, and a new seed
        st.session_state.pop("created_signature", None)
        st.session_state["new_campaign_created"] = _("Campaign #{id} “{name}” created. Its annotators see it on "
                                                     "their Grade page now.").format(id=cid,
                                                                                     name=ui.md_escape(name.strip()))
        st.rerun()
