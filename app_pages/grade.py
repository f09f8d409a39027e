"""Grade answers: one item at a time, one keystroke per grade, every answer saved at once.

The annotator sees the disease, the aspect (with its definition), the reference and the
model's answer -- never the score, the model's name or anyone else's grade. Keys: 1 / 2 / 3
grade, S skips, F flags with a note, G opens the campaign's guidelines (over the item, which stays; on the
"all graded" screen too).
The guidelines are shown, to be confirmed, before the first item and again after each new version.
A campaign may start with a qualification round of gold items (an intro, the items drawn exactly like real
ones, then the result: passed -> the real items; failed -> the expected answers with their reasons and
"Try again" while retries are left). Hidden gold items in the queue are drawn exactly like real ones too.
"""

import hashlib
import sqlite3
import time

import streamlit as st

from medeval.annotation import answers
from medeval.annotation import campaigns as cp
from medeval.annotation import gold
from medeval.annotation import guidelines as gl
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _, current
from medeval.core.limits import NOTE_MAX_CHARS
from medeval.engine.aspects import BY_NAME
from webui import gold as ui_gold
from webui import grade_screen
from webui import page as ui
from webui import reading
from webui.screen import all_answered, my_answers_list

user = ui.require_page("grade")
grade_screen.install()
TIERS = gl.tier_guide()  # (key, tier, name, meaning) in the reader's language
FLAG_NOTE = {b: _(label) for b, label in grade_screen.GUARD["note"].items()}  # the flag note's buttons' labels


def tier_label(tier: int | None, skipped: bool = False, flagged: bool = False) -> str:
    """A grade in words, in the reader's language ("Partially Correct", "Skipped"; "· flagged" added)."""
    name = _(cp.tier_label(tier, skipped))
    return _("{answer} · flagged").format(answer=name) if flagged else name


with st.sidebar:
    ui.start_here("grade", **ui.TIPS["grade"])  # i18n: not text (in the sidebar: the item keeps the whole screen)
    st.markdown(_("**What the grades mean** (G: the guidelines)"))
    for key, _tier, name, meaning in TIERS:
        st.markdown(_("**{name}** (key {key})").format(name=name, key=key) + f"  \n{meaning}")
    st.caption(_("Keys: **1 2 3** grade · **S** skip · **F** flag with a note (Enter saves it, Esc cancels) · "
                 "**Z** undo the last answer · **G** guidelines"))
    st.caption(_("A key counts for the item on screen, once: a new item takes keys {ms} ms after it appears, and a "
                 "second key on an item you just graded is ignored (the line above the buttons says so). To change a "
                 "grade, press Z for the last one, or reopen any from \"Your answers\" below the item.").format(
        ms=grade_screen.SETTLE_MS))

with ui.db() as d:
    mine = cp.my_campaigns(d, user)
if not mine:
    st.title(_("Grade answers"))
    st.info(_("No grading work is assigned to you yet. A researcher assigns items when creating a campaign."))
    st.stop()

by_id = {c["id"]: c for c in mine}
unfinished = [c for c in mine if c["status"] == "open" and c["done"] < c["total"]]
# The campaign stays the one chosen (by id, also in the URL as ?campaign=<id>): a grade changes the labels'
# counts, which must never move the page -- and the next key press -- to another campaign.
# (the options' labels made here, in the reader's language: a format_func may also be called outside this run)
campaign_labels = {i: (_("{name} — {total} items (closed)") if c["status"] == "closed" else
                        _("{name} — {total} items")).format(name=c["name"], total=c["total"]) for i, c in by_id.items()}
cid = ui.sticky_choice(_("Campaign"), list(by_id), key="grade_campaign", param="campaign",
                       default=(unfinished or mine)[0]["id"], format_func=campaign_labels.get)
# (the label says no "N done": a grade reruns only the panel below, which says how many are done, so a count here
# would go stale while the doctor grades)
revisit_key = f"revisit_skipped_{cid}"
reopen_key = f"reopen_{cid}"  # the ref of an answered item shown again to be answered anew (Z, or the list)

with ui.db() as d:
    pending = cp.needs_acknowledgement(d, user, cid)
    guide = gl.current(d, cid)
shown_version = guide.version if guide else None  # recorded with every grade given on this screen


def _acknowledge(version: int) -> None:
    with ui.db() as d:
        cp.acknowledge(d, user, cid, version)


GUIDE_COLUMNS = dict(answer=N_("tier"), about=N_("aspect type"))  # (guidelines_body translates them)
# the columns of the failed qualification's review, on screen (the rows keep their keys)
REVIEW_LABELS = {"disease": N_("disease"), "aspect": N_("aspect"), "model's answer": N_("model's answer"),
                 "your grade": N_("your grade"), "expected": N_("expected"), "why": N_("why"),
                 "as expected": N_("as expected")}
ui.guidelines_gate(by_id[cid]["name"], pending, guide, _acknowledge, **GUIDE_COLUMNS)


SAVED_FOR_S = 600  # a "Saved" note older than this (an earlier sitting, an earlier round) is not shown


def _token(item_id: int, prior: int | None, action: str, note: str = "") -> str:
    """The same answer to the same item state gives the same token, so a double click saves once."""
    digest = hashlib.sha256(note.encode()).hexdigest()[:12] if note else ""
    return f"{item_id}:{prior or 0}:{action}:{digest}"


def _answer(ref: str, item_id: int, prior: int | None, *, tier: int | None = None, skipped: bool = False,
            flagged: bool = False, note: str | None = None, what: str = "", changed: bool = False,
            screen: str | None = None) -> None:
    """Button callback: runs before the rerun, so the next item is drawn from what was just saved.

    A grade or skip (not a change of a recent answer) is stored only for the item this session drew last: a press
    that reached any other item's button is refused, like one for an item answered meanwhile (``StaleGrade``)."""
    st.session_state.pop("grade_error", None)
    if not changed and st.session_state.get("grade_drawn_ref") != ref:
        st.session_state["grade_stale"] = True
        return
    grade_screen.test_submit_delay()
    # what the browser measured for this item (None: a skip, a change from the list, a flag, or no measurement)
    shown = reading.fully_shown(f"reading_{screen}", screen) if screen and not skipped else None
    action = "skip" if skipped else f"t{tier}"
    if flagged:
        action += ":flag"
    try:
        with ui.db() as d:
            _id, feedback = answers.submit(
                d, user, cid, ref, answers.Answer.from_tier_form(tier, skipped=skipped, flagged=flagged, note=note,
                                                                 fully_shown=shown),
                client_token=_token(item_id, prior, action, note or ""), expected=prior, guideline_version=shown_version)
    except cp.StaleGrade:
        # a key that reached the previous item's button (Streamlit keeps it mounted during a rerun)
        st.session_state["grade_stale"] = True
        return
    except (MedevalError, sqlite3.Error) as e:
        st.session_state["grade_error"] = _("Not saved: {error}. Press the key again; nothing else was "
                                            "changed.").format(error=e)
        return
    st.session_state.pop(reopen_key, None)  # a reopened item, answered again: on with the queue
    saved = _("Changed: {what} → {answer}") if changed else _("Saved: {what} → {answer}")
    st.session_state["saved"] = saved.format(what=ui.md_escape(what),
                                             answer=tier_label(tier, skipped, flagged))  # imported names: literally
    st.session_state["saved_for"] = cid  # shown only on this campaign's screen (an active round is a campaign)
    st.session_state["saved_at"] = time.time()
    st.session_state["gold_feedback"] = feedback  # the campaign's optional feedback after a hidden gold item
    st.session_state["grade_stale"] = False
    st.session_state["flagging"] = False


def _reopen(ref: str | None) -> None:
    """Show an answered item again to answer it anew (None: back to the queue, the answer left as it was)."""
    st.session_state.pop("grade_error", None)
    if ref is None:
        st.session_state.pop(reopen_key, None)
    else:
        st.session_state[reopen_key] = ref


def _open_flag() -> None:
    st.session_state["flagging"] = True


def _close_flag() -> None:
    st.session_state["flagging"] = False


def _set_revisit(value: bool) -> None:
    st.session_state[revisit_key] = value


def _start_qualification() -> None:
    st.session_state.pop("grade_error", None)
    try:
        with ui.db() as d:
            cp.start_attempt(d, user, cid)
    except MedevalError as e:
        st.session_state["grade_error"] = _("Not started: {error}").format(error=e)


def _continue(value: bool = True) -> None:
    st.session_state[f"qualification_done_{cid}"] = value


def _undo() -> None:
    """Z: the item answered last, shown again to be answered anew (the earlier answer stays in the history). The
    button is drawn once with the page, not with each item (a key redraws less): the answer it undoes is read at
    the press."""
    st.session_state.pop("grade_error", None)
    if st.session_state.get("flagging") or st.session_state.get("reading_guidelines"):
        return  # (the flag note or the guidelines are open: nothing is answered meanwhile)
    with ui.db() as d:
        last = cp.recent_grades(d, user, cid, limit=1)
    if last:
        st.session_state[reopen_key] = last[0].ref
    else:
        st.toast(_("Nothing to undo yet: you have not answered an item of this campaign."), icon=":material/info:")


head, undo = st.columns([6, 1], vertical_alignment="bottom")
head.subheader(ui.md_escape(by_id[cid]["name"]), anchor=False)  # drawn once: a key reruns only the panel below
undo.button(_("Undo"), key="undo_last", shortcut="Z", width="stretch", on_click=_undo,
            help=_("Show the item you answered last again and answer it anew (Z)"))


@st.fragment
def screen() -> None:
    """The grading panel (status line, progress, item, keys, flag note, last answers): a key reruns only this
    function, not the page (the campaign choice, the sidebar and the guidelines gate stay as drawn)."""
    try:
        with ui.db() as d:
            try:
                s = cp.grading_state(d, user, cid, revisit_skipped=st.session_state.get(revisit_key, False),
                                     reopen=st.session_state.get(reopen_key), recent=0)
            except MedevalError as e:  # (the campaign closed meanwhile): said, and the queue instead
                st.session_state.pop(reopen_key, None)
                st.session_state["grade_error"] = _("Not reopened: {error}").format(error=e)
                s = cp.grading_state(d, user, cid, revisit_skipped=st.session_state.get(revisit_key, False), recent=0)
    except (gl.GuidelinesPending, gold.QualificationPending):
        st.rerun()  # the campaign changed under this screen (new guidelines): the whole page again
    if st.session_state.get(revisit_key) and s.item is None:
        st.session_state[revisit_key] = False

    if st.session_state.get("saved_for") != cid or time.time() - st.session_state.get("saved_at", 0) > SAVED_FOR_S:
        st.session_state.pop("saved", None)  # another campaign's, or an earlier sitting's (round): never shown here
        st.session_state.pop("gold_feedback", None)
    # the status line and the progress share one row: the item's texts get the height
    # (a horizontal container, not columns: fewer elements for the server to send on each key)
    top = st.container(horizontal=True, key="gradetop", vertical_alignment="center")
    with top, st.container(key="gradestatus"):  # one line of constant height: a message never moves the item
        if error := st.session_state.get("grade_error"):
            st.error(ui.md_escape(error), icon=":material/error:")
        elif st.session_state.pop("grade_stale", False):
            st.info(_("A key press for an item already answered was ignored (nothing saved from it)."),
                    icon=":material/info:")
        elif saved := st.session_state.get("saved"):
            st.success(saved, icon=":material/check_circle:")
        else:
            st.caption(_("Every answer is saved the moment you give it. {done} of {total} done so far.").format(
                done=s.done, total=s.total))
    if (saved := st.session_state.get("saved")) and (feedback := st.session_state.get("gold_feedback")):
        st.toast(ui.md_escape(feedback), icon=":material/school:")  # the hidden gold item's feedback, over the screen
        st.session_state.pop("gold_feedback", None)  # once

    def recent_answers(editable: bool) -> None:
        """The list of my answers in this campaign, each with the start of the model's answer; any can be reopened
        to answer it again (while the campaign is open). On every screen, answers or none: a qualification or hidden
        check item looks like any other."""

        def read(status):
            with ui.db() as d:
                return cp.my_answers(d, user, cid, status=status)

        my_answers_list(
            "recent", read=read, on_reopen=_reopen, editable=editable,
            reopened=s.reopened.ref if s.reopened is not None else None,
            line=lambda g: (f"{g.disease} · {g.aspect} — {g.snippet}", tier_label(g.tier, g.skipped, g.flagged)))

    if not s.open:
        st.warning(_("This campaign is closed: answers can no longer be given or changed."))
        recent_answers(editable=False)
        return

    guide_open = guide is not None and st.session_state.get("reading_guidelines", False)

    def guidelines_button(where, *, disabled: bool = False) -> None:
        ui.guidelines_button(where, guide, "reading_guidelines", disabled=disabled, **GUIDE_COLUMNS)

    q = s.qualification
    if s.phase == "qualification" and s.item is None:
        def _review() -> list[dict]:
            with ui.db() as d:
                rows = gold.review(d, user, cid)
            return [{"disease": r["disease"], "aspect": r["aspect"], "model's answer": r["response"],
                     "your grade": tier_label(r["answer"], r["skipped"]), "expected": tier_label(r["expected"]),
                     "why": r["reason"], "as expected": r["correct"]} for r in rows]

        ui_gold.qualification_round(q, answer="grade", review=_review, on_start=_start_qualification,
                                    intro_key="qualification_intro", review_key="qualification_review",
                                    labels=REVIEW_LABELS)
    if q is not None and q.results and q.status == "passed" and s.done == 0 and s.item is not None \
            and not st.session_state.get(f"qualification_done_{cid}"):
        ui_gold.qualification_passed(q, answer="grade", on_continue=_continue)

    if s.item is None:
        all_answered(s.done, s.total, s.skipped, finished="graded", every=N_("Every item has an answer."),
                     revisit=N_("Grade the skipped items now"), revisit_key="revisit", on_revisit=_set_revisit,
                     guidelines_button=guidelines_button, columns=3)
        recent_answers(editable=True)
        return

    item = s.item
    # (the saved line names the item as its reader names the aspect)
    what = f"{item.disease} · {item.aspect_zh if current() == 'zh-CN' and item.aspect_zh else item.aspect}"
    changing = s.reopened is not None
    if changing:
        was = tier_label(s.reopened.tier, s.reopened.skipped, s.reopened.flagged)
        top.progress(s.done / s.total, text=_("Answering again — your answer was: {answer}").format(answer=was))
        st.button(_("Leave it as it was (Esc)"), key="stop_reopen", shortcut="Escape", on_click=_reopen, args=(None,))
    elif s.prior is not None:
        top.progress(s.done / s.total, text=_("Revisiting a skipped item — {skipped} skipped left").format(
            skipped=s.skipped))
        st.button(_("Stop revisiting"), key="stop_revisit", on_click=_set_revisit, args=(False,))
    else:
        text = _("Qualification item {n} of {total}") if s.phase == "qualification" else _("Item {n} of {total}")
        top.progress((s.position - 1) / s.total, text=text.format(n=s.position, total=s.total))

    st.session_state["grade_drawn_ref"] = item.ref  # the only item a grade or skip is stored for (see _answer)
    # Few elements: every element is a message the server builds and sends on each key (issue 22 §4).
    with st.container(key="gradeitem"):
        # disease · aspect · 中文 and the aspect's definition on one line (names shown literally), the definition in
        # the reader's language (the aspects' own Chinese definition)
        asp = BY_NAME.get(item.aspect)
        definition = asp.definition_zh if asp and asp.definition_zh and current() == "zh-CN" else item.definition
        st.markdown(f"**{ui.md_escape(item.disease)}** · {ui.md_escape(item.aspect)} · {ui.md_escape(item.aspect_zh)}"
                    + (f" — *{ui.md_escape(definition)}*" if definition else ""))
        c1, c2 = st.columns(2)  # side by side where the width allows (stacked on a narrow screen)
        with c1:
            ui.plain(_("Reference answer"), item.reference, key="item_reference")
        with c2:
            ui.plain(_("Model's answer"), item.response, key="item_response")

    flagging = st.session_state.get("flagging", False)
    locked = flagging or guide_open  # no grade key while the flag form or the guidelines are open
    # The grade buttons are a form's submit buttons: the browser's word on whether the item's texts were shown in
    # full (webui/reading.py, a value of this form) reaches the server with the press itself, in the same message.
    with st.container(key=grade_screen.SLOT), st.form(key="grade_form", border=False, enter_to_submit=False):
        with st.container(horizontal=True, key=grade_screen.KEYS_BOX):
            for key, tier, name, meaning in TIERS:
                st.form_submit_button(name, key=f"grade_{item.key}_{tier}", shortcut=key, help=meaning,
                                      width="stretch", disabled=locked, on_click=_answer,
                                      args=(item.ref, item.item_id, s.prior),
                                      kwargs={"tier": tier, "what": what, "screen": item.key,
                                              "changed": changing})
            st.form_submit_button(_("Skip"), key=f"skip_{item.key}", shortcut="S", disabled=locked, width="stretch",
                                  on_click=_answer, args=(item.ref, item.item_id, s.prior),
                                  kwargs={"skipped": True, "what": what}, help=_("Come back to it after the others"))
            st.form_submit_button(_("Flag…"), key=f"flag_{item.key}", shortcut="F", disabled=locked, width="stretch",
                                  on_click=_open_flag, help=_("Report a problem with this item (with a note)"))
        reading.measure(item.key, grade_screen.BOXES, keys=grade_screen.KEYS_BOX, held=grade_screen.HELD,
                        key=f"reading_{item.key}")
    guidelines_button(st, disabled=flagging)  # G (outside the form: it answers nothing)

    if flagging:
        with st.container(key="gradeflag"), st.form(key=f"flag_form_{item.key}", border=True, enter_to_submit=False):
            st.markdown(_("**Flag this item** · Enter saves, Esc cancels"))
            note = st.text_input(_("What is wrong with it? (required)"), key=f"flag_note_{item.key}",
                                 placeholder=_("e.g. the reference answer is outdated"), max_chars=NOTE_MAX_CHARS)
            choices = {"none": _("No grade (skip)"), **{t: tier_label(t) for t in (0, 1, 2)}}
            grade = st.radio(_("Grade it as well?"), list(choices), horizontal=True, key=f"flag_tier_{item.key}",
                             format_func=choices.get)
            b1, b2 = st.columns(2)
            # (the key guard finds these two by their labels: grade_screen.GUARD's, translated)
            save = b1.form_submit_button(FLAG_NOTE["save"], type="primary", width="stretch")
            b2.form_submit_button(FLAG_NOTE["cancel"], on_click=_close_flag, width="stretch")
        if save:
            if not (note or "").strip():
                st.error(_("Write a short note saying what is wrong, then save the flag again."))
            else:
                _answer(item.ref, item.item_id, s.prior, tier=None if grade == "none" else grade, skipped=grade == "none",
                        flagged=True, note=note.strip(), what=what)
                st.rerun()

    recent_answers(editable=True)


screen()
