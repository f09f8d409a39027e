"""What the two gold-item panels share (Campaigns: tier-grading campaigns; Task results: task campaigns): the
saved/not-saved messages, running a library action, the settings form, a CSV upload handed to an importer, and
the "Results per annotator" table.

Every widget key starts with the panel's ``prefix`` ("gold" on Campaigns, "task_gold" on Task results), so the
two panels never share state. All checks are the library's (``medeval.annotation.gold``).
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from medeval.core.errors import MedevalError

from medeval.core.display import percent

from . import page as ui
from . import tables


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
    from medeval.annotation import gold

    what = "answer" if task else "grade"
    with st.form(key=f"{prefix}_settings_{cid}", border=True):
        st.markdown("**Settings**")
        c1, c2, c3 = st.columns(3)
        req = c1.checkbox("Require a qualification", value=s["qualification_required"], key=f"{prefix}_req",
                          help=gold.SETTINGS_HELP["qualification_required"])
        n = c2.number_input("Qualification items", 1, 50, s["qualification_items"], key=f"{prefix}_n",
                            help=gold.SETTINGS_HELP["qualification_items"])
        retries = c3.number_input("Retries allowed", 0, 10, s["retries"], key=f"{prefix}_retries",
                                  help=gold.SETTINGS_HELP["retries"])
        c1, c2, c3 = st.columns(3)
        mark = c1.slider("Pass mark", 0.05, 1.0, float(s["pass_mark"]), 0.05, format="%.2f", key=f"{prefix}_pass",
                         help=gold.SETTINGS_HELP["pass_mark"])
        share = c2.slider("Hidden gold share", 0.0, 0.5, float(s["hidden_share"]), 0.01, key=f"{prefix}_share",
                          help=gold.SETTINGS_HELP["hidden_share"])
        alert = c3.slider("Accuracy alert below", 0.0, 1.0, float(s["alert_threshold"]), 0.05, key=f"{prefix}_alert",
                          help=gold.SETTINGS_HELP["alert_threshold"])
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
            run(lambda d: gold.set_settings(d, cid, values, actor=user), "Saved the gold settings", prefix=prefix)


def import_upload(upload, importer: Callable[[Any, Path], Any], done: str | Callable[[Any], str], *,
                  prefix: str) -> None:
    """Hand an uploaded file to ``importer(db, path)`` (the library reads and checks it: all or nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / Path(upload.name).name
        path.write_bytes(upload.getvalue())
        run(lambda d: importer(d, path), done, prefix=prefix)


def results_table(results: dict, *, key: str, title: bool = True) -> None:
    """"Results per annotator": qualification status and attempts, hidden-gold accuracy and its trend, the flag
    (``results``: ``medeval.annotation.gold.gold_accuracy``; ``title``: with its heading and caption)."""
    from medeval.annotation import gold

    if title:
        st.markdown("**Results per annotator**")
        st.caption(gold.results_caption(results))
    tables.dataframe(gold.results_rows(results), percent=("accuracy",), key=key,
                     column_config={"over time": st.column_config.LineChartColumn(y_min=0, y_max=1)})


# ---------------------------------------------------------------- the annotator's qualification screens


def qualification_round(q, *, answer: str, review: list[dict] | Callable[[], list[dict]], on_start: Callable,
                        intro_key: str, review_key: str, extra: str = "") -> None:
    """The qualification round when no item is on screen, then ``st.stop()``: the intro with "Start the
    qualification" (not started), or the failed attempt's expected answers with "Try again" while retries are
    left. ``answer``: what an item gets ("grade", "answers"); ``review``: the table's rows (or a function giving
    them, called only on the failed screen); ``extra``: a sentence for the intro."""
    if q.status == "not_started":
        st.progress(0.0, text=f"Qualification: {q.items} items")
        with st.container(border=True, key=intro_key):
            st.markdown("**Qualification round**")
            st.write(f"This campaign starts with {q.items} items whose expected {answer} "
                     f"{'are' if answer.endswith('s') else 'is'} known. Answer them as "
                     f"you would any item.{extra} To pass, {percent(q.pass_mark)} of them must get the expected "
                     f"{answer} "
                     f"({math.ceil(q.pass_mark * q.items - 1e-9)} of {q.items}); then your items follow."
                     + (f" You may try again {q.retries} time{'s' if q.retries != 1 else ''}." if q.retries else ""))
        st.button("Start the qualification", key="qualification_start", type="primary", on_click=on_start)
        st.stop()
    last = q.results[-1]
    st.progress(1.0, text=f"Qualification attempt {q.attempt}: {last['correct']} of {last['items']} as expected")
    st.error(f"Qualification not passed: {last['correct']} of {last['items']} items got the expected {answer} "
             f"({percent(last['share'])}; the pass mark is {percent(q.pass_mark)}).", icon=":material/cancel:")
    st.markdown("**The expected answers**")
    tables.dataframe(review() if callable(review) else review, key=review_key)
    if q.status == "failed_retry":
        st.caption(f"Read the reasons, then try again ({q.attempts_left} attempt{'s' if q.attempts_left != 1 else ''} "
                   "left).")
        st.button("Try again", key="qualification_retry", type="primary", on_click=on_start)
    else:
        st.warning("No attempts are left. Please contact the campaign's researcher.")
    st.stop()


def qualification_passed(q, *, answer: str, on_continue: Callable) -> None:
    """"Qualification passed" with "Continue to the items", then ``st.stop()`` (shown once, before the first item)."""
    last = q.results[-1]
    st.progress(1.0, text=f"Qualification passed: {last['correct']} of {last['items']}")
    st.success(f"Qualification passed: {last['correct']} of {last['items']} items got the expected {answer} "
               f"({percent(last['share'])}). Your items follow.", icon=":material/verified:")
    st.button("Continue to the items", key="qualification_continue", type="primary", on_click=on_continue)
    st.stop()
