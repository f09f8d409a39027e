"""Campaigns: progress per annotator and per bucket, short intervals, close / reopen, grades export."""

import streamlit as st

from medeval.annotation import campaigns as cp
from medeval.annotation.campaign_text import ASPECT_TYPE_NAMES, COLUMN_LABELS, PROGRESS_LABELS, config_rows, kind_label
from medeval.core.i18n import N_, _, ngettext
from medeval.engine.registry import label as metric_label
from webui import page as ui
from webui import tables

# the tables' headers on screen (the rows, and the CSV downloads, keep the English keys)
CAMPAIGN_LABELS = {"id": N_("id"), "name": N_("name"), "kind": N_("kind"), "items": N_("items"), "k": "k",
                   "status": N_("status"), "created by": N_("created by"), "created": N_("created")}
BUCKET_LABELS = {"metric": N_("metric"), "aspect type": N_("aspect type"), "interval": N_("interval"),
                 "items": N_("items"), "complete": N_("complete"), "available": N_("available"),
                 "sampled": N_("sampled")}
GOLD_LABELS = {"id": N_("id"), "disease": N_("disease"), "aspect": N_("aspect"), "model": N_("model"),
               "expected": N_("expected"), "reason": N_("reason"), "retired": N_("retired")}

user = ui.require_page("campaigns")
st.title(_("Campaigns"))
ui.start_here("campaigns", **ui.TIPS["campaigns"])  # i18n: not text

with ui.db() as d:
    camps = cp.list_campaigns(d, actor=user)
if not camps:
    st.info(_("No campaigns yet. Create one on the New campaign page (or `python -m medeval campaign create`)."))
    st.stop()

tables.with_csv(lambda: [{"id": c["id"], "name": c["name"], "kind": kind_label(c["kind"], short=True),
                          "items": c["items"], "k": c["config"].get("k"),
                          "status": _(ui.STATUS_NAMES.get(c["status"], c["status"])), "created by": c["created_by"],
                          "created": c["created_at"]} for c in camps],
                labels=CAMPAIGN_LABELS, times=("created",), key="campaign_table", file_name="campaigns.csv", label=_("Campaigns (CSV)"))

camp = ui.campaign_choice(camps, key="campaign_pick")
cid = camp["id"]


with ui.db() as d:
    prog = cp.campaign_progress(d, cid, actor=user)
    grades = cp.current_grades(d, cid, actor=user)

total_assigned = sum(a["assigned"] for a in prog["annotators"])
total_done = sum(a["done"] for a in prog["annotators"])
m1, m2, m3 = st.columns(3)
m1.metric(_("Answers given"), f"{total_done} / {total_assigned}")
m2.metric(_("Items with all k grades"), f"{prog['items_complete']} / {prog['items']}")
m3.metric(_("Annotators per item (k)"), prog["k"])

if prog["not_fully_shown"] or prog["not_measured"]:
    st.caption(_("Grades given without the whole text on screen: {partial} · not measured (given outside the grading "
                 "screen, or before it measured): {unmeasured}").format(partial=prog["not_fully_shown"],
                                                                         unmeasured=prog["not_measured"]))
else:
    st.caption(_("Every grade was given with the whole text on screen (or read to its end)."))

st.subheader(_("Per annotator"), anchor=False)
# the reading columns only where they say something (a column that is always 0 is left out)
reading_cols = [c for c in ("not_fully_shown", "not_measured") if prog[c]]
tables.dataframe([{"annotator": a["annotator"], "progress": a["done"] / a["assigned"] if a["assigned"] else 0.0,
                   "done": a["done"], "assigned": a["assigned"], "skipped": a["skipped"], "flagged": a["flagged"],
                   **{c.replace("_", " "): a[c] for c in reading_cols}}
                  for a in prog["annotators"]], progress=("progress",), key="annotator_table", labels=PROGRESS_LABELS)

st.subheader(_("Per bucket"), anchor=False)
st.caption(_("A bucket is one score interval of one metric and aspect type; complete = graded by all k annotators "
             "(an item sampled for several buckets counts in each)."))


def _bucket_words(metric: str, aspect_type: str) -> tuple[str, str]:
    """A bucket's metric and aspect type in words (a random sample is one bucket: "random", "all")."""
    if metric == "random" and aspect_type == "all":
        return _("random"), _("all")
    return metric_label(metric), _(ASPECT_TYPE_NAMES[aspect_type]) if aspect_type in ASPECT_TYPE_NAMES else aspect_type


tables.dataframe([{"metric": _bucket_words(b["metric"], b["aspect_type"])[0],
                   "aspect type": _bucket_words(b["metric"], b["aspect_type"])[1],
                   "interval": f"[{b['interval'][0]:g}, {b['interval'][1]:g})", "items": b["items"],
                   "complete": b["complete"]} for b in prog["buckets"]], key="bucket_table", labels=BUCKET_LABELS)
if prog["short_intervals"]:
    n_short = len(prog["short_intervals"])
    with st.expander(ngettext("{n} interval had fewer responses than asked for",
                              "{n} intervals had fewer responses than asked for", n_short).format(n=n_short)):
        tables.dataframe([{"metric": metric_label(r["metric"]) if r.get("metric") else "",
                           "aspect type": _(ASPECT_TYPE_NAMES.get(r.get("aspect_type"), r.get("aspect_type", ""))),
                           "interval": str(r.get("interval", "")),
                           "available": r["available"], "sampled": r["sampled"]}
                          for r in prog["short_intervals"]], key="short_table", width="content", labels=BUCKET_LABELS)

st.download_button(_("Download current grades (CSV)"), cp.grades_csv(grades), file_name=f"campaign-{cid}-grades.csv",
                   mime="text/csv", key="grades_csv")

with st.expander(_("Configuration (reproducible from the seed)")):
    tables.dataframe(config_rows(camp["config"]), key="campaign_config", width="content", labels=COLUMN_LABELS)

# closing is asked once, and sits apart from the downloads
ui.open_close_button(st.columns(3)[0], camp, user, key_prefix="campaign")

ui.guidelines_editor(cid, user, "campaign_guidelines")


def gold_panel(cid: int) -> None:
    """Gold items: the settings, marking by hand or from a CSV, the list, and each annotator's results."""
    from medeval.annotation import gold
    from webui import gold as wg

    with ui.db() as d:
        s = gold.get_settings(d, cid)
        items = gold.list_gold(d, cid, actor=user)
        results = gold.gold_accuracy(d, cid, actor=user)
    active = [g for g in items if not g.retired]
    with st.expander(_("Gold items ({n})").format(n=len(active))):
        wg.notices("gold")
        st.caption(_("Responses whose expected grade you set, with the guideline's reason: a qualification round "
                     "before the real items and hidden checks in the queue (shown exactly like real items). Gold "
                     "answers are kept apart from the grades: no agreement statistic or calibration counts them."))
        wg.settings_form(cid, user, s, prefix="gold", task=False)

        st.markdown("**{}**".format(_("Mark a response as gold")))  # i18n: not text
        c1, c2, c3 = st.columns(3)
        dis = c1.text_input(_("Disease contains"), key="gold_q_disease")
        asp = c2.text_input(_("Aspect contains"), key="gold_q_aspect")
        mod = c3.text_input(_("Model contains"), key="gold_q_model")
        with ui.db() as d:
            found = gold.find_responses(d, cid, disease=dis, aspect=asp, model=mod, actor=user)
        by_rid = {f["response_id"]: f for f in found}
        rid = st.selectbox(_("Response"), list(by_rid), key="gold_pick", index=None,
                           placeholder=_("choose a response"),
                           format_func=lambda r: f"{by_rid[r]['disease']} · {by_rid[r]['aspect']} · {by_rid[r]['model']}")
        if rid is not None:
            ui.plain(_("Model's answer"), by_rid[rid]["response"], key="gold_pick_response")
        c1, c2 = st.columns([1, 2])
        tier = c1.radio(_("Expected grade"), [0, 1, 2], format_func=lambda t: _(gold.TIER_NAMES[t]), key="gold_tier")
        reason = c2.text_area(_("Reason (the guideline's one line why)"), key="gold_reason", height=80)
        if st.button(_("Mark as gold"), key="gold_mark", disabled=rid is None):
            wg.run(lambda d: gold.mark_gold(d, cid, rid, tier, reason or "", actor=user), _("Marked as gold"),
                   prefix="gold")

        up = st.file_uploader(_("Or upload a CSV with the columns `disease`, `aspect`, `model`, `expected_tier` "
                                "(0/1/2 or CW/PC/BC) and `reason`"),
                              type=["csv"], key="gold_csv")
        if up is not None and st.button(_("Import the CSV"), key="gold_import"):
            wg.import_upload(up, lambda d, path: gold.import_gold_csv(d, cid, path, actor=user),
                             _("Imported the gold items"), prefix="gold")

        if items:
            tables.dataframe([{"id": g.id, "disease": g.disease, "aspect": g.aspect, "model": g.model,
                               "expected": _(gold.TIER_NAMES[g.expected_tier]), "reason": g.reason,
                               "retired": g.retired} for g in items], key="gold_table", labels=GOLD_LABELS,
                             column_config={"id": st.column_config.NumberColumn(width=50),  # fits a 1366-px screen
                                            "disease": st.column_config.TextColumn(width=120),
                                            "aspect": st.column_config.TextColumn(width=140),
                                            "model": st.column_config.TextColumn(width=110),
                                            "expected": st.column_config.TextColumn(width=130),
                                            "reason": st.column_config.TextColumn(width=210),
                                            "retired": st.column_config.CheckboxColumn(width=70)})
            c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
            gid = c1.selectbox(_("Retire a gold item"), [g.id for g in active], key="gold_retire_pick", index=None,
                               placeholder=_("choose a gold item"))
            if c2.button(_("Retire…"), key="gold_retire", disabled=gid is None):
                ui.ask_first(f"gold_retire_ask_{gid}")
            ui.confirm(f"gold_retire_ask_{gid}",  # i18n: not text
                       question=_("Retire gold item {id}?").format(id=gid),
                       details=_("It is no longer handed out; answers already given to it are kept."),
                       yes=_("Retire it"),
                       on_yes=lambda: wg.run(lambda d: gold.unmark_gold(d, cid, gid, actor=user),
                                             _("Retired gold item {id}").format(id=gid), prefix="gold"))

        wg.results_table(results, key="gold_results")

gold_panel(cid)
