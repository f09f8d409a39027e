"""Task results (researchers): progress and the results of any ``medeval.annotation.tasks`` campaign, as the task type
declares them (tables and figures per section); JSON and CSV downloads; close / reopen."""

import json

import streamlit as st

from medeval.annotation import tasks
from medeval.core.errors import MedevalError
from webui import page as ui

user = ui.require("researcher", "admin")
st.title("Task results")

with ui.db() as d:
    camps = tasks.task_campaigns(d, actor=user)
if not camps:
    st.info("No rating, preference or fact-check campaign yet: create one on the New task page "
            "(or `python -m medeval task create`).")
    st.stop()
camp = ui.campaign_choice(camps, key="task_results_campaign")
cid = camp["id"]


try:
    with ui.db() as d:
        r = tasks.results(d, cid, actor=user)
        rows = tasks.answers(d, cid, actor=user)
except MedevalError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()

def _cell(v):
    """A CI as "0.61 – 0.83"; numbers stay numbers (sortable), undefined stays empty."""
    if isinstance(v, (list, tuple)):
        return " – ".join(f"{x:.3f}" if isinstance(x, float) else str(x) for x in v)
    return v


prog = r["progress"]
st.caption(f"{r['task']} · {prog['items']} items, k = {prog['k']} annotators each · {camp['status']}")
m1, m2 = st.columns(2)
m1.metric("Items done by all k", f"{prog['items_complete']} / {prog['items']}")
m2.metric("Answers recorded", len(rows))
st.dataframe([{"annotator": a["annotator"], "progress": a["done"] / a["assigned"] if a["assigned"] else 0.0,
               "done": a["done"], "assigned": a["assigned"], "skipped": a["skipped"], "flagged": a["flagged"]}
              for a in prog["annotators"]],
             column_config={"progress": st.column_config.ProgressColumn("progress", format="percent",
                                                                         min_value=0, max_value=1)},
             hide_index=True, width="stretch", key="task_progress_table")
if not rows:
    st.info("No answers yet: the results appear as soon as annotators start.")

for n, sec in enumerate(r["sections"]):
    st.subheader(ui.md_escape(sec["title"]), anchor=False)  # may carry a rubric's names
    if sec["text"]:
        st.caption(ui.md_escape(sec["text"]))
    for name, table in sec["tables"].items():
        if not table:
            continue
        st.markdown(f"**{ui.md_escape(name)}**")
        st.dataframe([{k: _cell(v) for k, v in row.items()} for row in table], hide_index=True, width="stretch",
                     key=f"sec_{n}_{name}")

if r["flags"]:
    st.subheader(f"Flagged items ({len(r['flags'])})", anchor=False)
    st.caption("Notes the annotators left on items (their text, shown as written).")
    st.dataframe([{"source": f["source"], "annotator": f["annotator"], "note": f["note"]} for f in r["flags"]],
                 hide_index=True, width="stretch", key="task_flags")

c1, c2, c3 = st.columns(3)
c1.download_button("Results (JSON)", json.dumps(r, ensure_ascii=False, indent=2, default=str),
                   file_name=f"task-{cid}-results.json", mime="application/json", key="task_json", width="stretch")
c2.download_button("Answers (CSV)", tasks.answers_csv(rows), file_name=f"task-{cid}-answers.csv", mime="text/csv",
                   key="task_csv", width="stretch")
ui.open_close_button(c3, camp, user, key_prefix="task")

with st.expander("Configuration (reproducible from the seed)"):
    st.json(r["config"])
