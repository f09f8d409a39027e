"""Campaigns: progress per annotator and per bucket, short intervals, close / reopen, grades export."""

import streamlit as st

from medeval.annotation import campaigns as cp
from webui import page as ui

user = ui.require("researcher", "admin")
st.title("Campaigns")
ui.start_here("campaigns", **ui.TIPS["campaigns"])

with ui.db() as d:
    camps = cp.list_campaigns(d, actor=user)
if not camps:
    st.info("No campaigns yet. Create one on the New campaign page (or `python -m medeval campaign create`).")
    st.stop()

st.dataframe([{"id": c["id"], "name": c["name"], "kind": c["kind"], "items": c["items"], "k": c["config"].get("k"),
               "status": c["status"], "created by": c["created_by"], "created": c["created_at"]} for c in camps],
             hide_index=True, width="stretch", key="campaign_table")

camp = ui.campaign_choice(camps, key="campaign_pick")
cid = camp["id"]


with ui.db() as d:
    prog = cp.campaign_progress(d, cid, actor=user)
    grades = cp.current_grades(d, cid, actor=user)

total_assigned = sum(a["assigned"] for a in prog["annotators"])
total_done = sum(a["done"] for a in prog["annotators"])
m1, m2, m3 = st.columns(3)
m1.metric("Answers given", f"{total_done} / {total_assigned}")
m2.metric("Items with all k grades", f"{prog['items_complete']} / {prog['items']}")
m3.metric("Annotators per item (k)", prog["k"])

st.subheader("Per annotator", anchor=False)
st.dataframe([{"annotator": a["annotator"], "progress": a["done"] / a["assigned"] if a["assigned"] else 0.0,
               "done": a["done"], "assigned": a["assigned"], "skipped": a["skipped"], "flagged": a["flagged"]}
              for a in prog["annotators"]],
             column_config={"progress": st.column_config.ProgressColumn("progress", format="percent",
                                                                         min_value=0, max_value=1)},
             hide_index=True, width="stretch", key="annotator_table")

st.subheader("Per bucket", anchor=False)
st.caption("A bucket is one score interval of one metric and aspect type; complete = graded by all k annotators "
           "(an item sampled for several buckets counts in each).")
st.dataframe([{"metric": b["metric"], "aspect type": b["aspect_type"],
               "interval": f"[{b['interval'][0]:g}, {b['interval'][1]:g})", "items": b["items"],
               "complete": b["complete"]} for b in prog["buckets"]],
             hide_index=True, width="stretch", key="bucket_table")
if prog["short_intervals"]:
    with st.expander(f"{len(prog['short_intervals'])} intervals had fewer responses than asked for"):
        st.dataframe([{"metric": r.get("metric", ""), "aspect type": r.get("aspect_type", ""),
                       "interval": str(r.get("interval", "")), "available": r["available"], "sampled": r["sampled"]}
                      for r in prog["short_intervals"]], hide_index=True, key="short_table")

c1, c2 = st.columns(2)
c1.download_button("Download current grades (CSV)", cp.grades_csv(grades), file_name=f"campaign-{cid}-grades.csv",
                   mime="text/csv", key="grades_csv", width="stretch")
ui.open_close_button(c2, camp, user, key_prefix="campaign")

with st.expander("Configuration (reproducible from the seed)"):
    st.json(camp["config"])
