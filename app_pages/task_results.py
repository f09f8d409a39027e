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


SHORT = {"n_items": "items", "n_raters": "raters", "undefined_reason": "undefined"}


def _fit(table: list[dict]) -> tuple[list[dict], list[str]]:
    """A results table made to fit a 1366-px screen without losing anything: the "how to read" text (one
    sentence per statistic, repeated on its rows) goes under the table, a column empty on every row
    is left out, long headers get short names."""
    notes = list(dict.fromkeys(f"{row.get('statistic', '')}: {row['reading']}".lstrip(": ")
                               for row in table if row.get("reading")))
    empty = {k for k in table[0] if all(row.get(k) in (None, "") for row in table)}
    shown = [{SHORT.get(k, k): _cell(v) for k, v in row.items() if k != "reading" and k not in empty}
             for row in table]
    return shown, notes


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
        shown, notes = _fit(table)
        floats = {k for row in shown for k, v in row.items() if isinstance(v, float)}
        st.dataframe(shown, hide_index=True, width="stretch", key=f"sec_{n}_{name}",
                     column_config={k: st.column_config.NumberColumn(format="%.3f") for k in floats})
        for note in notes:
            st.caption(ui.md_escape(note))

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

# the report (HTML, and a zip with the PDF), made when a button is clicked
from medeval.reports import html_kit  # noqa: E402
from medeval.reports import task_report as task_rep  # noqa: E402


def _task_zip() -> bytes:
    """The report's files (HTML, PDF where Chromium is installed, JSON, CSVs), made on click."""
    pdf = task_rep.chromium_path() is not None
    return html_kit.zip_report(lambda tmp: task_rep.write_report(r, tmp, pdf=pdf))


r1, r2 = st.columns(2)
r1.download_button("Report (HTML)", lambda: task_rep.render_html(r), file_name=f"task-{cid}-report.html",
                   mime="text/html", key="task_report_html", width="stretch",
                   help="Offline: charts included; a methods paragraph with this campaign's numbers")
r2.download_button("Report (zip: HTML, PDF, …)", _task_zip, file_name=f"task-{cid}-report.zip",
                   mime="application/zip", key="task_report_zip", width="stretch",
                   help="HTML, PDF (printed by Chromium, when installed), the results as JSON and a CSV per table")

with st.expander("Configuration (reproducible from the seed)"):
    st.json(r["config"])

ui.guidelines_editor(cid, user, "task_guidelines")
