"""Agreement dashboard (researchers): the panel, each annotator, the widest disagreements, clinicians vs the
machine; the report as HTML, PDF, JSON and CSV."""

import json

import streamlit as st

from medeval.annotation import campaigns as cp
from medeval.annotation.adjudication import METHODS as CONSENSUS_METHODS
from medeval.calibration.validation import display_rows as machine_rows
from medeval.core.display import percent
from medeval.core.errors import MedevalError
from medeval.reports import agreement_report as rep
from medeval.reports import html_kit
from medeval.reports import dashboard as dash
from webui import gold as wg
from webui import page as ui
from webui import tables

user = ui.require_page("agreement")
st.title("Agreement")

with ui.db() as d:
    camps = cp.list_campaigns(d, actor=user)
if not camps:
    st.info("No campaigns yet: create one on the New campaign page.")
    st.stop()
cid = ui.campaign_choice(camps, key="dash_campaign")["id"]

try:
    with ui.db() as d:
        # the consensus chosen in "Clinicians vs the machine" below (a widget's value outlives the rerun)
        s = dash.campaign_agreement(d, cid, actor=user, consensus=st.session_state.get("dash_consensus", "median"))
except MedevalError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()

st.caption(f"{s['n_items_graded']} of {s['n_items']} items graded · {s['n_grades']} grades, {s['n_skips']} skips · "
           f"{s['n_annotators']} annotators, k = {s['campaign']['k']} per item · 95% CIs by bootstrap over items "
           f"({s['bootstrap']['n_boot']} resamples, seed {s['bootstrap']['seed']})")
if not s["n_grades"]:
    st.info("No grades yet: the statistics appear as soon as annotators start grading.")
    st.stop()


st.subheader("The panel", anchor=False)
cols = st.columns(len(s["panel"]))
for col, p in zip(cols, s["panel"]):
    e = p["estimate"]
    col.metric(p["title"], "undefined" if e["value"] is None else f"{e['value']:.3f}",
               help=f"{p['why']} {p['guide']}")
    if e["ci95"]:
        col.caption(f"95% CI {e['ci95'][0]:.3f} to {e['ci95'][1]:.3f}")
    elif e["undefined_reason"]:
        col.caption(ui.md_escape(e["undefined_reason"]))
with st.expander("How to read these"):
    for p in s["panel"]:
        st.markdown(f"**{p['title']}.** {p['why']} *{p['guide']}*")
st.plotly_chart(rep.panel_figure(s), key="fig_panel", config={"displayModeBar": False})

st.subheader("Each annotator", anchor=False)
tables.dataframe([{"annotator": r["annotator"], "graded": r["graded"], "of": r["assigned"],
                   "Spearman vs panel": r["spearman_vs_panel"], "same tier as panel": r["exact_agreement_vs_panel"],
                   "mean difference": r["mean_difference_vs_panel"], "skip rate": r["skip_rate"],
                   "flagged": r["flagged"], "median s / item": r["median_seconds_per_item"]} for r in s["annotators"]],
                 percent=("same tier as panel", "skip rate"), key="annotator_table",
                 column_config={"Spearman vs panel": st.column_config.NumberColumn(format="%.2f"),
                                "mean difference": st.column_config.NumberColumn(
                                    format="%.2f", help="+: more lenient than the others; -: more severe"),
                                "median s / item": st.column_config.NumberColumn(format="%.0f")})
c1, c2 = st.columns(2)
with c1:
    st.plotly_chart(rep.annotator_figure(s), key="fig_annotators", config={"displayModeBar": False})
with c2:
    st.plotly_chart(rep.tier_figure(s), key="fig_tiers", config={"displayModeBar": False})
st.plotly_chart(rep.drift_figure(s), key="fig_drift", config={"displayModeBar": False})

st.subheader("Widest disagreements", anchor=False)
if not s["disagreements"]:
    st.caption("No item has two different tiers.")
for r in s["disagreements"][:10]:
    tiers = ", ".join(f"{who}: {cp.tier_label(t)}" for who, t in r["tiers"].items())
    with st.expander(ui.md_escape(f"Item {r['item']} · range {r['range']} · {tiers}")):  # usernames: plain
        with ui.db() as d:
            item = cp.review_item(d, r["item"], actor=user)
        ui.plain("Disease · aspect", f"{item['disease']} · {item['aspect']}", key=f"dis_{r['item']}_d")
        ui.plain("Reference answer", item["reference"], key=f"dis_{r['item']}_r")
        ui.plain(f"Answer of {item['model']}", item["response"], key=f"dis_{r['item']}_a")
        notes = [n for n in item["notes"] if n]
        if notes:
            ui.plain("Flag notes", "\n".join(notes), key=f"dis_{r['item']}_n")

a = s["adjudication"]
if a["n_adjudicated"]:
    share = a["share_sided_with_majority"]
    st.caption(f"{a['n_adjudicated']} items adjudicated; the adjudicated tier equalled the annotators' majority tier "
               f"in {a['sided_with_majority']} of {a['n_with_majority']} with a majority"
               + (f" ({percent(share)})" if share is not None else "") + ". The statistics above use the raw grades.")

if s.get("machine"):
    st.subheader("Clinicians vs the machine", anchor=False)
    st.selectbox("Consensus of the clinicians", CONSENSUS_METHODS, key="dash_consensus",
                 format_func=lambda m: {"median": "median (MedDisKEval)", "majority": "majority (ties: lower median)",
                                        "adjudicated": "adjudicated where available (else median)"}[m])
    _mv = s.get("machine_version") or {}
    st.caption(f"Automated tiers under the active threshold set v{_mv.get('version')} "
               f"({ui.md_escape(str(_mv.get('name')))}). "
               f"Spearman between the {dash.CONSENSUS_WORDS[s['consensus']]} and each metric's raw score and "
               "automated tier "
               "(MedDisKEval Table 2; the paper reports > 0.7 on a random sample of 150). Draw such a sample as a "
               "random validation campaign. BLEU-1, ROUGE-1 and cosine rows: enumerated and declarative items "
               "only; numeric items have their own exact match row; average: the mean of the three "
               "metric tiers; average / all adds the numeric items' exact-match tier. Every row shows its n.")
    _ov = s.get("machine_overlap")
    if _ov:
        (st.warning if _ov["shared_items"] or _ov["own_grades_calibrated"] else st.caption)(
            ui.md_escape("Overlap with calibration: " + _ov["text"] + "."))
    fig = rep.machine_figure(s)
    if fig is not None:
        st.plotly_chart(fig, key="fig_machine", config={"displayModeBar": False})
    # fits a 1366 px screen: short headers, rounded numbers, the CI as one short text
    tables.dataframe(machine_rows(s["machine"]), key="machine_table",
                     column_config={"Spearman": st.column_config.NumberColumn(format="%.3f"),
                                    "p": st.column_config.NumberColumn(format="%.2g")})

if s.get("gold"):
    g = s["gold"]
    st.subheader("Gold items", anchor=False)
    st.caption(f"{g['gold_items']} gold items · accuracy over time in blocks of {g['block']} hidden gold answers · "
               f"flagged when the latest block is below {percent(g['threshold'])}. Gold answers are kept apart from "
               "the grades: none of the statistics above counts them.")
    wg.results_table(g, key="gold_table", title=False)  # the table Campaigns shows, in the same words
    flagged = [a["annotator"] for a in g["annotators"] if a["flagged"]]
    if flagged:
        st.warning(ui.md_escape("Gold accuracy below the alert threshold: " + ", ".join(flagged)))

st.subheader("Methods", anchor=False)
st.text(s["methods"])

st.subheader("Export", anchor=False)
st.caption("The HTML report works offline (charts included); the zip adds the PDF (printed by Chromium), "
           "the JSON and a CSV per table. Files are made when you click.")


def _zip() -> bytes:
    pdf = rep.chromium_path() is not None
    return html_kit.zip_report(lambda tmp: rep.write_report(s, tmp, pdf=pdf))


e1, e2, e3 = st.columns(3)
e1.download_button("Report (HTML)", lambda: rep.render_html(s), file_name=f"agreement-campaign-{cid}.html",
                   mime="text/html", key="dl_html", width="stretch")
e2.download_button("Everything (zip: HTML, PDF, JSON, CSV)", _zip, file_name=f"agreement-campaign-{cid}.zip",
                   mime="application/zip", key="dl_zip", width="stretch")
e3.download_button("Numbers (JSON)", json.dumps(s, ensure_ascii=False, indent=2),
                   file_name=f"agreement-campaign-{cid}.json", mime="application/json", key="dl_json",
                   width="stretch")
