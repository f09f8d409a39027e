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

from medeval.core.display import percent
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _, current, ngettext

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
        st.session_state[f"{prefix}_err"] = _("Not saved: {error}").format(error=e)
    else:
        st.session_state[f"{prefix}_msg"] = done if isinstance(done, str) else done(result)
    st.rerun()


def settings_form(cid: int, user, s: dict, *, prefix: str, task: bool) -> None:
    """The gold settings of campaign ``cid`` (``s``: its current ones) as a form; "Save settings" saves a new
    version. ``task``: a task campaign (answers rather than grades, and the score tolerance of 1-5 scales)."""
    from medeval.annotation import gold

    helps = {k: _(v) for k, v in gold.SETTINGS_HELP.items()}
    with st.form(key=f"{prefix}_settings_{cid}", border=True):
        st.markdown("**" + _("Settings") + "**")
        c1, c2, c3 = st.columns(3)
        req = c1.checkbox(_("Require a qualification"), value=s["qualification_required"], key=f"{prefix}_req",
                          help=helps["qualification_required"])
        n = c2.number_input(_("Qualification items"), 1, 50, s["qualification_items"], key=f"{prefix}_n",
                            help=helps["qualification_items"])
        retries = c3.number_input(_("Retries allowed"), 0, 10, s["retries"], key=f"{prefix}_retries",
                                  help=helps["retries"])
        c1, c2, c3 = st.columns(3)
        mark = c1.slider(_("Pass mark"), 0.05, 1.0, float(s["pass_mark"]), 0.05, format="%.2f", key=f"{prefix}_pass",
                         help=helps["pass_mark"])
        share = c2.slider(_("Hidden gold share"), 0.0, 0.5, float(s["hidden_share"]), 0.01, key=f"{prefix}_share",
                          help=helps["hidden_share"])
        alert = c3.slider(_("Accuracy alert below"), 0.0, 1.0, float(s["alert_threshold"]), 0.05,
                          key=f"{prefix}_alert", help=helps["alert_threshold"])
        c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
        fb = c1.checkbox(_("Tell the annotator the expected answer after a hidden gold item") if task else
                         _("Tell the annotator the expected grade after a hidden gold item"), value=s["feedback"],
                         key=f"{prefix}_feedback")
        values = {}
        if task:
            values["score_tolerance"] = int(c2.number_input(
                _("Score tolerance (1-5 scales)"), 0, 4, int(s["score_tolerance"]), key=f"{prefix}_tolerance",
                help=_("A 1-5 score this close to the expected one counts as expected (0: only the same score)")))
        if st.form_submit_button(_("Save settings"), type="primary"):
            values.update({"qualification_required": req, "qualification_items": int(n), "retries": int(retries),
                           "pass_mark": mark, "hidden_share": share, "alert_threshold": alert, "feedback": fb})
            run(lambda d: gold.set_settings(d, cid, values, actor=user), _("Saved the gold settings"), prefix=prefix)


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
        st.markdown("**" + _("Results per annotator") + "**")
        st.caption(gold.results_caption(results))
    tables.dataframe(gold.results_rows(results), percent=("accuracy",), key=key, labels=gold.RESULTS_LABELS,
                     column_config={"over time": st.column_config.LineChartColumn(y_min=0, y_max=1)})


# ---------------------------------------------------------------- the annotator's qualification screens


# what an item of the round gets, in the sentences of the qualification screens ("grade": Grade; "answers": Rate &
# compare), each sentence whole (English, marked N_())
_ROUND = {
    "grade": {
        "intro": N_("This campaign starts with {items} items whose expected grade is known. Answer them as you would "
                    "any item."),
        "pass": N_("To pass, {mark} of them must get the expected grade ({need} of {items}); then your items follow."),
        "failed": N_("Qualification not passed: {correct} of {items} items got the expected grade ({share}; the pass "
                     "mark is {mark})."),
        "passed": N_("Qualification passed: {correct} of {items} items got the expected grade ({share}). Your items "
                     "follow."),
    },
    "answers": {
        "intro": N_("This campaign starts with {items} items whose expected answers are known. Answer them as you "
                    "would any item."),
        "pass": N_("To pass, {mark} of them must get the expected answers ({need} of {items}); then your items "
                   "follow."),
        "failed": N_("Qualification not passed: {correct} of {items} items got the expected answers ({share}; the "
                     "pass mark is {mark})."),
        "passed": N_("Qualification passed: {correct} of {items} items got the expected answers ({share}). Your "
                     "items follow."),
    },
}


def _sentences(*parts: str) -> str:
    """Whole sentences one after the other (Chinese sets no space between them)."""
    return ("" if current() == "zh-CN" else " ").join(p.strip() for p in parts if p and p.strip())


def qualification_round(q, *, answer: str, review: list[dict] | Callable[[], list[dict]], on_start: Callable,
                        intro_key: str, review_key: str, extra: str = "",
                        labels: dict[str, str] | None = None) -> None:
    """The qualification round when no item is on screen, then ``st.stop()``: the intro with "Start the
    qualification" (not started), or the failed attempt's expected answers with "Try again" while retries are
    left. ``answer``: what an item gets ("grade", "answers"); ``review``: the table's rows (or a function giving
    them, called only on the failed screen); ``extra``: a sentence for the intro (English marked ``N_()``, or
    already translated); ``labels``: the review table's column headers (``webui.tables.dataframe``)."""
    words = {k: _(text) for k, text in _ROUND[answer].items()}
    if q.status == "not_started":
        st.progress(0.0, text=_("Qualification: {items} items").format(items=q.items))
        with st.container(border=True, key=intro_key):
            st.markdown("**" + _("Qualification round") + "**")
            retry = (ngettext("You may try again {n} time.", "You may try again {n} times.", q.retries).format(
                n=q.retries) if q.retries else "")
            st.write(_sentences(
                words["intro"].format(items=q.items), _(extra.strip()) if extra.strip() else "",
                words["pass"].format(mark=percent(q.pass_mark), need=math.ceil(q.pass_mark * q.items - 1e-9),
                                        items=q.items), retry))
        st.button(_("Start the qualification"), key="qualification_start", type="primary", on_click=on_start)
        st.stop()
    last = q.results[-1]
    st.progress(1.0, text=_("Qualification attempt {attempt}: {correct} of {total} as expected").format(
        attempt=q.attempt, correct=last["correct"], total=last["items"]))
    st.error(words["failed"].format(correct=last["correct"], items=last["items"], share=percent(last["share"]),
                                       mark=percent(q.pass_mark)), icon=":material/cancel:")
    st.markdown("**" + _("The expected answers") + "**")
    tables.dataframe(review() if callable(review) else review, key=review_key, labels=labels)
    if q.status == "failed_retry":
        st.caption(ngettext("Read the reasons, then try again ({n} attempt left).",
                            "Read the reasons, then try again ({n} attempts left).", q.attempts_left).format(
            n=q.attempts_left))
        st.button(_("Try again"), key="qualification_retry", type="primary", on_click=on_start)
    else:
        st.warning(_("No attempts are left. Please contact the campaign's researcher."))
    st.stop()


def qualification_passed(q, *, answer: str, on_continue: Callable) -> None:
    """"Qualification passed" with "Continue to the items", then ``st.stop()`` (shown once, before the first item)."""
    last = q.results[-1]
    st.progress(1.0, text=_("Qualification passed: {correct} of {total}").format(correct=last["correct"],
                                                                                  total=last["items"]))
    passed = _ROUND[answer]["passed"]
    st.success(_(passed).format(correct=last["correct"], items=last["items"],
                                                  share=percent(last["share"])), icon=":material/verified:")
    st.button(_("Continue to the items"), key="qualification_continue", type="primary", on_click=on_continue)
    st.stop()
