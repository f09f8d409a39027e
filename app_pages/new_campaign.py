"""New campaign: choose metrics, aspect types, interval width, items per interval, k, annotators and a seed;
preview the sample (with the intervals that came up short) before anything is stored."""

import secrets

import streamlit as st

from medeval.annotation import campaigns as cp
from medeval.annotation.campaign_text import kind_label
from medeval.core.errors import MedevalError
from medeval.engine.registry import label as metric_label
from medeval.engine.registry import report_metrics
from webui import page as ui
from webui import tables

user = ui.require_page("new-campaign")
st.title("New campaign")

with ui.db() as d:
    people = cp.annotator_choices(d, actor=user)
if len(people) < 1:
    st.info("There are no active users to assign work to. An admin adds them on the Users page.")
    st.stop()

# After a create the form starts again from its defaults: its widgets take new keys (a browser keeps what a
# widget of the same key showed), numbered by how many campaigns this session created here
form = st.session_state.get("new_campaign_form", 0)


def key(name: str) -> str:
    return name if not form else f"{name}__{form}"


created = st.session_state.pop("new_campaign_created", None)
if created:  # the message names what was created; the form below is back to its defaults
    st.success(created, icon=":material/check_circle:")
    st.page_link("app_pages/campaigns.py", label="See its progress", icon=":material/monitoring:")

if key("new_campaign_seed") not in st.session_state:
    st.session_state[key("new_campaign_seed")] = secrets.randbelow(10**6)

kind = st.radio("Kind", ["bucket_grading", "random_validation"], horizontal=True, key=key("new_kind"),
                format_func=kind_label)
name = st.text_input("Name", key=key("new_name"), placeholder="e.g. Calibration round 1")
labels = {p["username"]: f"{p['username']} ({p['role']})" for p in people}
default_people = [p["username"] for p in people if p["role"] == "annotator"][:3]
annotators = st.multiselect("Annotators", list(labels), default=default_people, format_func=labels.get,
                            key=key("new_annotators"))
c1, c2 = st.columns(2)
k = c1.number_input("Annotators per item (k)", min_value=1, max_value=max(1, len(people)), value=min(3, len(people)),
                    step=1, key=key("new_k"))
seed = c2.number_input("Seed (stored; the same seed and data give the same sample)", min_value=0, step=1,
                       key=key("new_campaign_seed"))

if kind == "bucket_grading":
    metrics = st.multiselect("Metrics", list(report_metrics()), default=["bleu1", "rouge1", "cosine"],
                             key=key("new_metrics"), format_func=metric_label)
    types = st.multiselect("Aspect types", ["enumerated", "declarative"], default=["enumerated", "declarative"],
                           key=key("new_types"))
    c3, c4 = st.columns(2)
    width = c3.number_input("Interval width", min_value=0.01, max_value=1.0, value=0.1, step=0.05, format="%.2f",
                            key=key("new_width"))
    sampling = st.radio("Sampling", ["interval", "active"], horizontal=True, key=key("new_sampling"),
                        format_func={"interval": "by score interval (the paper)",
                                     "active": "active rounds (narrow the cut-offs)"}.get)
    if sampling == "interval":
        st.caption("The paper's design: the same number of items from every score interval, graded at once.")
    else:
        st.caption("A small seed round per interval, then rounds drawn where each cut-off is still uncertain, "
                   "until both cut-offs' 95% intervals are narrow enough or the budget is spent "
                   "(draw each round on the Tune cut-offs page).")
    per = c4.number_input("Items per interval" if sampling == "interval" else "Seed items per interval",
                          min_value=1, max_value=1000, value=10 if sampling == "interval" else 2, step=1,
                          key=key(f"new_per_{sampling}"))
    cfg = cp.BucketConfig(tuple(metrics), tuple(types), float(width), int(per), int(k), int(seed))
    if sampling == "active":
        from medeval.annotation.campaigns import sampling as smp

        a1, a2, a3, a4 = st.columns(4)
        round_size = a1.number_input("Items per round (per metric and type)", min_value=1, max_value=1000, value=20,
                                     step=5, key=key("new_round_size"))
        target = a2.number_input("Target 95% interval width", min_value=0.005, max_value=1.0, value=0.05,
                                 step=0.01, format="%.3f", key=key("new_target"))
        budget = a3.number_input("Budget (items per metric and type)", min_value=1, max_value=100_000, value=300,
                                 step=50, key=key("new_budget"))
        explore = a4.number_input("Explore share", min_value=0.0, max_value=1.0, value=0.2, step=0.05,
                                  format="%.2f", key=key("new_explore"),
                                  help="Share of each round spread over the whole score range, so a cut-off the "
                                       "seed round missed can still be found.")
        b1, b2 = st.columns(2)
        estimator = b1.selectbox("Cut-off estimator", smp.ACTIVE_ESTIMATORS, key=key("new_estimator"),
                                 format_func={"smooth": "smooth curves (recommended)",
                                              "accuracy": "accuracy search (the paper)"}.get,
                                 help="Smooth: a curve of P(tier ≥ k | score) per cut-off, the cut-off where it "
                                      "crosses 0.5. Accuracy: the pair of cut-offs that grades the most items into "
                                      "the clinicians' tier.")
        design = b2.selectbox("Where later rounds are drawn", smp.ACTIVE_DESIGNS, key=key("new_design"),
                              format_func={"adaptive": "adaptive (where a grade narrows the cut-offs most)",
                                           "active": "where the cut-offs' bootstrap has mass",
                                           "interval": "every score interval alike (the paper)"}.get)
        # every setting on the screen reaches the campaign (issue 23 §7): nothing is left to a default here
        active_cfg = smp.ActiveConfig(tuple(metrics), tuple(types), float(width), int(per), int(round_size),
                                      float(target), int(budget), float(explore), smp.ACTIVE_DEFAULT_CRITERION,
                                      int(k), int(seed), str(estimator), str(design))
else:
    n = st.number_input("Responses drawn at random", min_value=1, value=150, step=10, key=key("new_n"))
    allow_overlap = st.checkbox(
        "Allow items of the calibration campaigns", value=False, key=key("new_allow_overlap"),
        help="Off (recommended): responses that were items of the campaigns whose grades calibrated the active "
             "threshold set are left out, so no grade that set a cut-off validates it. The campaign records the "
             "choice and the Agreement page reports the overlap.")
    try:
        with ui.db() as d:
            _pool = cp.validation_pool(d, allow_overlap=allow_overlap)
    except MedevalError as e:
        st.error(ui.md_escape(str(e)))
        st.stop()
    st.caption(ui.md_escape("Validation sample: " + _pool["text"] + "."))


def _problems() -> list[str]:
    out = []
    if not name.strip():
        out.append("Give the campaign a name.")
    if len(annotators) < k:
        out.append(f"Choose at least k = {k} annotators ({len(annotators)} chosen).")
    if kind == "bucket_grading" and (not metrics or not types):
        out.append("Choose at least one metric and one aspect type.")
    return out


if kind == "bucket_grading":
    st.subheader("Preview", anchor=False)
    try:
        with ui.db() as d:
            chosen, report = cp.sample_buckets(d, cfg)
    except MedevalError as e:
        st.error(ui.md_escape(str(e)))
        st.stop()
    short = [r for r in report if r["short"]]
    st.write(f"{len(chosen)} distinct responses sampled from {len(report)} intervals; "
             f"each goes to {k} annotators: about {len(chosen) * k // max(1, len(annotators))} per annotator.")
    if short:
        st.warning(f"{len(short)} intervals have fewer responses than asked for (shown below; they are not "
                   "skipped: all their responses are taken).")
    tables.dataframe([{"metric": metric_label(r["metric"]), "aspect type": r["aspect_type"],
                       "interval": f"[{r['interval'][0]:g}, {r['interval'][1]:g})", "available": r["available"],
                       "sampled": r["sampled"], "short": "yes" if r["short"] else ""} for r in report],
                     key="preview_table")

for p in _problems():
    st.caption(f"• {p}")
active_mode = kind == "bucket_grading" and sampling == "active"
signature = repr((kind, name.strip(), sorted(annotators), int(k), int(seed),
                  (active_cfg if active_mode else cfg) if kind == "bucket_grading" else (int(n), allow_overlap)))
# Never disabled by what a field holds: a click that ends the typing in a field (its value is sent as the field
# loses the focus) must count, so the button checks the fields when it is pressed.
if st.button("Create campaign", type="primary", key="create_campaign"):
    if problems := _problems():
        st.error("Not created: " + " ".join(problems))
        st.stop()
    if st.session_state.get("created_signature") == signature:  # a double click: create it once
        st.info("This campaign was just created; change something to create another.")
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
        st.session_state["new_campaign_created"] = (f"Campaign #{cid} “{name.strip()}” created. Its annotators "
                                                    "see it on their Grade page now.")
        st.rerun()
