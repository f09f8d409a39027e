"""Agreement dashboard (researchers): the panel, each annotator, the widest disagreements, clinicians vs the
machine; the report as HTML, PDF, JSON and CSV."""

import json

import streamlit as st

from medeval.annotation import campaigns as cp
from medeval.calibration.validation import CONSENSUS_METHODS
from medeval.calibration.validation import consensus_label
from medeval.calibration.validation import DISPLAY_COLUMNS as MACHINE_COLUMNS
from medeval.calibration.validation import display_rows as machine_rows
from medeval.core import i18n
from medeval.core.display import percent
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.reports import agreement_report as rep
from medeval.reports import html_kit
from medeval.reports import dashboard as dash
from webui import gold as wg
from webui import page as ui
from webui import tables

user = ui.require_page("agreement")
st.title(_("Agreement"))

with ui.db() as d:
    camps = cp.list_campaigns(d, actor=user)
if not camps:
    st.info(_("No campaigns yet: create one on the New campaign page."))
    st.stop()
cid = ui.campaign_choice(camps, key="dash_campaign")["id"]

try:
    with ui.db() as d:
        # the consensus chosen in "Clinicians vs the machine" below (a widget's value outlives the rerun)
        s = dash.campaign_agreement(d, cid, actor=user, consensus=st.session_state.get("dash_consensus",
                                                                                    CONSENSUS_METHODS[0]))
except MedevalError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()

st.caption(_("{graded} of {items} items graded · {grades} grades, {skips} skips · {annotators} annotators, k = {k} "
             "per item · 95% CIs by bootstrap over items ({n_boot} resamples, seed {seed})").format(
    graded=s["n_items_graded"], items=s["n_items"], grades=s["n_grades"], skips=s["n_skips"],
    annotators=s["n_annotators"], k=s["campaign"]["k"], n_boot=s["bootstrap"]["n_boot"], seed=s["bootstrap"]["seed"]))
if not s["n_grades"]:
    st.info(_("No grades yet: the statistics appear as soon as annotators start grading."))
    st.stop()


st.subheader(_("The panel"), anchor=False)
cols = st.columns(len(s["panel"]))
for col, p in zip(cols, s["panel"]):
    e = p["estimate"]
    col.metric(p["title"], _("undefined") if e["value"] is None else f"{e['value']:.3f}",
               help=_("{why} {guide}").format(why=p["why"], guide=p["guide"]))
    if e["ci95"]:
        col.caption(_("95% CI {low} to {high}").format(low=f"{e['ci95'][0]:.3f}", high=f"{e['ci95'][1]:.3f}"))
    elif e["undefined_reason"]:
        col.caption(ui.md_escape(e["undefined_reason"]))
with st.expander(_("How to read these")):
    for p in s["panel"]:
        st.markdown(_("**{title}.** {why} *{guide}*").format(title=p["title"], why=p["why"], guide=p["guide"]))
st.plotly_chart(rep.panel_figure(s), key="fig_panel", config={"displayModeBar": False})

st.subheader(_("Each annotator"), anchor=False)
tables.dataframe([{"annotator": r["annotator"], "graded": r["graded"], "of": r["assigned"],
                   "Spearman vs panel": r["spearman_vs_panel"], "same tier as panel": r["exact_agreement_vs_panel"],
                   "mean difference": r["mean_difference_vs_panel"], "skip rate": r["skip_rate"],
                   "flagged": r["flagged"], "median s / item": r["median_seconds_per_item"]} for r in s["annotators"]],
                 percent=("same tier as panel", "skip rate"), key="annotator_table",
                 labels={"annotator": N_("annotator"), "graded": N_("graded"), "of": N_("of"),
                         "Spearman vs panel": N_("Spearman vs panel"), "same tier as panel": N_("same tier as panel"),
                         "mean difference": N_("mean difference"), "skip rate": N_("skip rate"),
                         "flagged": N_("flagged"), "median s / item": N_("median s / item")},
                 column_config={"Spearman vs panel": st.column_config.NumberColumn(format="%.2f"),
                                "mean difference": st.column_config.NumberColumn(
                                    format="%.2f", help=_("+: more lenient than the others; -: more severe")),
                                "median s / item": st.column_config.NumberColumn(format="%.0f")})
c1, c2 = st.columns(2)
with c1:
    st.plotly_chart(rep.annotator_figure(s), key="fig_annotators", config={"displayModeBar": False})
with c2:
    st.plotly_chart(rep.tier_figure(s), key="fig_tiers", config={"displayModeBar": False})
st.plotly_chart(rep.drift_figure(s), key="fig_drift", config={"displayModeBar": False})

st.subheader(_("Widest disagreements"), anchor=False)
if not s["disagreements"]:
    st.caption(_("No item has two different tiers."))
for r in s["disagreements"][:10]:
    tiers = ", ".join(f"{who}: {cp.tier_label(t)}" for who, t in r["tiers"].items())
    with st.expander(ui.md_escape(_("Item {item} · range {range} · {tiers}").format(  # usernames: plain
            item=r["item"], range=r["range"], tiers=tiers))):
        with ui.db() as d:
            item = cp.review_item(d, r["item"], actor=user)
        ui.plain(_("Disease · aspect"), f"{item['disease']} · {item['aspect']}", key=f"dis_{r['item']}_d")
        ui.plain(_("Reference answer"), item["reference"], key=f"dis_{r['item']}_r")
        ui.plain(_("Answer of {model}").format(model=item["model"]), item["response"], key=f"dis_{r['item']}_a")
        notes = [n for n in item["notes"] if n]
        if notes:
            ui.plain(_("Flag notes"), "\n".join(notes), key=f"dis_{r['item']}_n")

a = s["adjudication"]
if a["n_adjudicated"]:
    share = a["share_sided_with_majority"]
    counts = dict(n=a["n_adjudicated"], sided=a["sided_with_majority"], with_majority=a["n_with_majority"])
    if share is None:
        st.caption(_("{n} items adjudicated; the adjudicated tier equalled the annotators' majority tier in {sided} of "
                     "{with_majority} with a majority. The statistics above use the raw grades.").format(**counts))
    else:
        st.caption(_("{n} items adjudicated; the adjudicated tier equalled the annotators' majority tier in {sided} of "
                     "{with_majority} with a majority ({share}). The statistics above use the raw grades.").format(
            share=percent(share), **counts))

if s.get("machine"):
    st.subheader(_("Clinicians vs the machine"), anchor=False)
    st.selectbox(_("Consensus of the clinicians"), CONSENSUS_METHODS, key="dash_consensus",
                 format_func=consensus_label)
    _mv = s.get("machine_version") or {}
    _under = (_("Automated tiers under threshold set v{version} ({name}), the set this validation campaign "
                "validates.") if _mv.get("source") == "validated" else
              _("Automated tiers under the active threshold set v{version} ({name}) (the campaign records no set it "
                "validates)."))
    st.caption(_under.format(version=_mv.get("version"), name=ui.md_escape(str(_mv.get("name")))) + " " + _(
        "Spearman between the {consensus} and each metric's raw score and automated tier (MedDisKEval Table 2; the "
        "paper reports > 0.7 on a random sample of 150). Draw such a sample as a random validation campaign. "
        "BLEU-1, ROUGE-1 and cosine rows: enumerated and declarative items only; numeric items have their own "
        "exact match row; average: the mean of the three metric tiers; average / all adds the numeric items' "
        "exact-match tier. Every row shows its n.").format(consensus=_(dash.CONSENSUS_WORDS[s["consensus"]])))
    _ov = s.get("machine_overlap")
    if _ov:
        (st.warning if _ov["shared_items"] or _ov["own_grades_calibrated"] else st.caption)(
            ui.md_escape(_("Overlap with calibration: {text}.").format(text=_ov["text"])))
    fig = rep.machine_figure(s)
    if fig is not None:
        st.plotly_chart(fig, key="fig_machine", config={"displayModeBar": False})
    # fits a 1366 px screen: short headers, rounded numbers, the CI as one short text
    tables.dataframe(machine_rows(s["machine"]), key="machine_table", labels=MACHINE_COLUMNS,
                     column_config={"Spearman": st.column_config.NumberColumn(format="%.3f"),
                                    "p": st.column_config.NumberColumn(format="%.2g")})

if s.get("gold"):
    g = s["gold"]
    st.subheader(_("Gold items"), anchor=False)
    st.caption(_("{n} gold items · accuracy over time in blocks of {block} hidden gold answers · flagged when the "
                 "latest block is below {threshold}. Gold answers are kept apart from the grades: none of the "
                 "statistics above counts them.").format(n=g["gold_items"], block=g["block"],
                                                         threshold=percent(g["threshold"])))
    wg.results_table(g, key="gold_table", title=False)  # the table Campaigns shows, in the same words
    flagged = [a["annotator"] for a in g["annotators"] if a["flagged"]]
    if flagged:
        st.warning(ui.md_escape(_("Gold accuracy below the alert threshold: {annotators}").format(
            annotators=", ".join(flagged))))

st.subheader(_("Methods"), anchor=False)
st.text(s["methods"])

st.subheader(_("Export"), anchor=False)
st.caption(_("The HTML report works offline (charts included); the zip adds the PDF (printed by Chromium), "
             "the JSON and a CSV per table. Files are made when you click."))


# the files are made on click, outside this run: in the language of the researcher who clicks (this run's)
REPORT_LANGUAGE = i18n.current()


def _zip() -> bytes:
    pdf = rep.chromium_path() is not None
    return html_kit.zip_report(lambda tmp: rep.write_report(s, tmp, pdf=pdf, language=REPORT_LANGUAGE))


def _html() -> str:
    with i18n.language(REPORT_LANGUAGE):
        return rep.render_html(s)


e1, e2, e3 = st.columns(3)
e1.download_button(_("Report (HTML)"), _html, file_name=f"agreement-campaign-{cid}.html",
                   mime="text/html", key="dl_html", width="stretch")
e2.download_button(_("Everything (zip: HTML, PDF, JSON, CSV)"), _zip, file_name=f"agreement-campaign-{cid}.zip",
                   mime="application/zip", key="dl_zip", width="stretch")
e3.download_button(_("Numbers (JSON)"), json.dumps(s, ensure_ascii=False, indent=2),
                   file_name=f"agreement-campaign-{cid}.json", mime="application/json", key="dl_json",
                   width="stretch")
