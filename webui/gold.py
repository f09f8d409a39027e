"""What the two gold-item panels share (Campaigns: tier-grading campaigns; Task results: task campaigns): the
saved/not-saved messages, running a library action, the settings form, a CSV upload handed to an importer, and
the "Results per annotator" table.

Every widget key starts with the panel's ``prefix`` ("gold" on Campaigns, "task_gold" on Task results), so the
two panels never share state. All checks are the library's (``medeval.annotation.gold_items``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from medeval.core.errors import MedevalError

from . import page as ui


def notices(prefix: str) -> None:
    """The message the last action left (what was saved, or why not), shown once."""
    if msg := st.session_state.pop(f"{prefix}_msg", None):
        st.success(ui.md_escape(msg))
    if err := st.session_state.pop(f"{prefix}_err", None):
        st.error(ui.md_escape(err))


def run(action: Callable[[Any], Any], done: str | Callable[[Any], str], *, prefix: str) -> None:
    """``action(db)`` in a new connection; then a rerun that shows ``done`` (or ``done(result)``) or the library's
    one-line refusal ("Not saved: ..."). Nothing is written when the library refuses."""
    try:
        with ui.db() as d:
            result = action(d)
    except MedevalError as e:
        st.session_state[f"{prefix}_err"] = f"Not saved: {e}"
    else:
        st.session_state[f"{prefix}_msg"] = done if isinstance(done, str) else done(result)
    st.rerun()


def settings_form(cid: int, user, s: dict, *, prefix: str, task: bool) -> None:
    """The gold settings of campaign ``cid`` (``s``: its current ones) as a form; "Save settings" saves a new
    version. ``task``: a task campaign (answers rather than grades, and the score tolerance of 1-5 scales)."""
    from medeval.annotation import gold_items as gi

    what = "answer" if task else "grade"
    with st.form(key=f"{prefix}_settings_{cid}", border=True):
        st.markdown("**Settings**")
        c1, c2, c3 = st.columns(3)
        req = c1.checkbox("Require a qualification", value=s["qualification_required"], key=f"{prefix}_req",
                          help=gi.SETTINGS_HELP["qualification_required"])
        n = c2.number_input("Qualification items", 1, 50, s["qualification_items"], key=f"{prefix}_n",
                            help=gi.SETTINGS_HELP["qualification_items"])
        retries = c3.number_input("Retries allowed", 0, 10, s["retries"], key=f"{prefix}_retries",
                                  help=gi.SETTINGS_HELP["retries"])
        c1, c2, c3 = st.columns(3)
        mark = c1.slider("Pass mark", 0.05, 1.0, float(s["pass_mark"]), 0.05, format="%.2f", key=f"{prefix}_pass",
                         help=gi.SETTINGS_HELP["pass_mark"])
        share = c2.slider("Hidden gold share", 0.0, 0.5, float(s["hidden_share"]), 0.01, key=f"{prefix}_share",
                          help=gi.SETTINGS_HELP["hidden_share"])
        alert = c3.slider("Accuracy alert below", 0.0, 1.0, float(s["alert_threshold"]), 0.05, key=f"{prefix}_alert",
                          help=gi.SETTINGS_HELP["alert_threshold"])
        c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
        fb = c1.checkbox(f"Tell the annotator the expected {what} after a hidden gold item", value=s["feedback"],
                         key=f"{prefix}_feedback")
        values = {}
        if task:
            values["score_tolerance"] = int(c2.number_input(
                "Score tolerance (1-5 scales)", 0, 4, int(s["score_tolerance"]), key=f"{prefix}_tolerance",
                help="A 1-5 score this close to the expected one counts as expected (0: only the same score)"))
        if st.form_submit_button("Save settings", type="primary"):
            values.update({"qualification_required": req, "qualification_items": int(n), "retries": int(retries),
                           "pass_mark": mark, "hidden_share": share, "alert_threshold": alert, "feedback": fb})
            run(lambda d: gi.set_settings(d, cid, values, actor=user), "Saved the gold settings", prefix=prefix)


def import_upload(upload, importer: Callable[[Any, Path], Any], done: str | Callable[[Any], str], *,
                  prefix: str) -> None:
    """Hand an uploaded file to ``importer(db, path)`` (the library reads and checks it: all or nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(upload.name).name
        path.write_bytes(upload.getvalue())
        run(lambda d: importer(d, path), done, prefix=prefix)


def results_table(results: dict, *, key: str) -> None:
    """"Results per annotator": qualification status and attempts, hidden-gold accuracy and its trend, the flag
    (``results``: ``medeval.annotation.gold_results.gold_accuracy``)."""
    st.markdown("**Results per annotator**")
    st.caption(f"Hidden-gold accuracy over time: per block of {results['block']} consecutive hidden gold "
               f"answers. Flagged: the latest block is below {results['threshold']:.0%}.")
    st.dataframe([{"annotator": a["annotator"], "qualification": a["qualification"].replace("_", " "),
                   "attempts": ", ".join(f"{t['correct']}/{t['items']}" for t in a["attempts"]),
                   "hidden answered": a["hidden_answered"], "hidden correct": a["hidden_correct"],
                   "accuracy": a["accuracy"], "over time": [b["accuracy"] for b in a["blocks"]],
                   "flagged": a["flagged"]} for a in results["annotators"]],
                 column_config={"accuracy": st.column_config.NumberColumn(format="percent"),
                                "over time": st.column_config.LineChartColumn(y_min=0, y_max=1)},
                 hide_index=True, width="stretch", key=key)
