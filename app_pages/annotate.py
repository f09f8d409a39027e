"""Annotate: every task type of ``medeval.annotation.tasks`` (rubric rating, double-blind preference, fact-check reasons).

One item at a time, one keystroke per answer, each answer saved at once. The page draws what
the task type declares: blocks of untrusted text (plain text only) and, under the block it is
about, the question to answer now with a button per option (its key in the label). A later
part (the judge's assessment) appears only once the earlier part is complete -- the library
decides, so the page cannot show it early. Answers on the item can be changed; S skips the item;
G opens the campaign's guidelines over the item (and on the "all done" screen). The guidelines are shown, to be
confirmed, before the first item and again after each new version.
A campaign may start with a qualification round of items whose expected answers are known (an intro, the items
drawn exactly like real ones, answers that cannot be changed, then the result: passed -> the real items; failed ->
the expected answers with their reasons and "Try again" while retries are left). Hidden items of the same kind in
the queue are drawn exactly like real ones too; everything on screen is answered through its opaque ``ref``.
"""

import sqlite3

import streamlit as st

from medeval.annotation import answers, gold, tasks
from medeval.annotation import guidelines as gl
from medeval.annotation.tasks import layout
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import NOTE_MAX_CHARS
from webui import gold as ui_gold
from webui import page as ui
from webui import reading, screen
from webui import task_screen
from webui.grade_screen import test_submit_delay
from webui.screen import SETTLE_MS, all_answered

user = ui.require_page("annotate")
# one question on one screen (1366×768 and up): what it needs side by side, each box as tall as the screen allows
# (webui/reading.py), full option labels, a fixed status line
task_screen.install()
with st.sidebar:
    ui.start_here("annotate", **ui.TIPS["annotate"])  # i18n: not text (in the sidebar: a first
    # visit's item fits the screen too)

with ui.db() as d:
    mine = tasks.my_task_campaigns(d, user)
if not mine:
    st.title(_("Rate and compare"))
    st.info(_("No rating, preference or fact-check work is assigned to you yet. A researcher assigns it when "
              "creating a task campaign."))
    st.stop()

by_id = {c["id"]: c for c in mine}
unfinished = [c for c in mine if c["status"] == "open" and c["done"] < c["total"]]
# The task stays the one chosen (by id, also in the URL as ?task=<id>): answering changes the labels' counts,
# which must never move the page -- and the next key press -- to another task. (On the page, in the place of its
# heading: the sidebar starts folded on this reading screen.)


def _task_line(i: int) -> str:
    """A task in the choice: its campaign's name (as written), its type and how far this annotator has come."""
    c = by_id[i]
    line = (_("{name} · {task} — {done} of {total} done (closed)") if c["status"] == "closed"
            else _("{name} · {task} — {done} of {total} done"))
    return line.format(name=c["name"], task=c["task"], done=c["done"], total=c["total"])


# (the labels made now, in this run's language: a select box's format_func may also be called outside the run)
task_lines = {i: _task_line(i) for i in by_id}
cid = ui.sticky_choice(_("Task"), list(by_id), key="task_campaign", param="task", default=(unfinished or mine)[0]["id"],
                       format_func=task_lines.__getitem__, label_visibility="collapsed")
revisit_key = f"task_revisit_{cid}"
reopen_key = f"task_reopen_{cid}"  # the ref of an answered item shown again to be answered anew (Z, or the list)

with ui.db() as d:
    pending = tasks.needs_acknowledgement(d, user, cid)
    guide = gl.current(d, cid)
shown_version = guide.version if guide else None  # recorded with every answer given on this screen


def _acknowledge(version: int) -> None:
    with ui.db() as d:
        tasks.acknowledge(d, user, cid, version)


GUIDE_COLUMNS = dict(answer=N_("answer"), about=N_("about"), rating=N_("rating"), key_prefix="task_")
# the headers of the qualification round's review table (its rows keep their English keys)
REVIEW_LABELS = {"item": N_("item"), "question": N_("question"), "your answer": N_("your answer"),
                 "expected": N_("expected"), "why": N_("why"), "as expected": N_("as expected")}
ui.guidelines_gate(by_id[cid]["name"], pending, guide, _acknowledge, **GUIDE_COLUMNS)


def _answer(ref: str, question: str | None, value: str | None, revision: int, what: str,
            screen_id: str | None = None) -> None:
    """Button callback: runs before the rerun, so the screen is drawn from what was just saved.

    ``ref``: what is on screen (a real item or not: the library knows). The token names the item's state (how
    many answers it has), so a double press saves once.
    """
    st.session_state.pop("task_error", None)
    if st.session_state.get("task_drawn_ref") != ref:  # a press for an item this session has not drawn last
        st.session_state["task_stale"] = True
        return
    test_submit_delay()  # (a slow server, in the browser tests only)
    token = f"{ref}:{revision}:{question or 'skip'}:{value or ''}"
    # what the browser measured for this question's texts (None: a skip, a change, or no measurement)
    shown = reading.fully_shown(f"reading_{screen_id}", screen_id) if screen_id else None
    try:
        with ui.db() as d:
            _id, feedback = answers.submit(d, user, cid, ref, answers.Answer.skip() if question is None else
                                           answers.Answer.questions({question: value}, fully_shown=shown),
                                           client_token=token, expected=revision, guideline_version=shown_version)
    except tasks.StaleAnswer:
        # a key press that reached a button of the previous screen (Streamlit keeps it mounted during a rerun)
        st.session_state["task_stale"] = True
        return
    except (MedevalError, sqlite3.Error) as e:
        st.session_state["task_error"] = _("Not saved: {error}. Press the key again; nothing else was changed.").format(
            error=e)
        return
    st.session_state.pop(reopen_key, None)  # a reopened item, answered again: on with the queue
    st.session_state["task_saved"] = (cid, _("Saved: {what}").format(what=what))  # shown on this task only
    st.session_state["task_feedback"] = (cid, feedback)  # the campaign's optional feedback after a hidden check
    st.session_state["task_stale"] = False


def _said(q, o, *, changed: bool = False) -> str:
    """An answer as the "Saved:" line words it: what was rated, on which criterion, and the answer."""
    said = f"{q.target} · {q.criterion} → {o.label}"
    return _("{answer} (changed)").format(answer=said) if changed else said


def _set_revisit(value: bool) -> None:
    st.session_state[revisit_key] = value


def _reopen(ref: str | None) -> None:
    """Show an answered item again to answer it anew (None: back to the queue, the answer left as it was)."""
    st.session_state.pop("task_error", None)
    if ref is None:
        st.session_state.pop(reopen_key, None)
    else:
        st.session_state[reopen_key] = ref


def _flagging(value: bool) -> None:
    st.session_state["task_flagging"] = value


def _start_qualification() -> None:
    st.session_state.pop("task_error", None)
    st.session_state.pop("task_saved", None)
    try:
        with ui.db() as d:
            gold.start_attempt(d, user, cid, gold.TASK)
    except MedevalError as e:
        st.session_state["task_error"] = _("Not started: {error}").format(error=e)


def _continue() -> None:
    st.session_state.pop("task_saved", None)
    st.session_state.pop("task_feedback", None)
    st.session_state[f"task_qualification_done_{cid}"] = True


with ui.db() as d:
    try:
        s = tasks.task_state(d, user, cid, revisit_skipped=st.session_state.get(revisit_key, False),
                             reopen=st.session_state.get(reopen_key))
    except MedevalError as e:  # (the campaign closed meanwhile): said, and the queue instead
        if reopen_key not in st.session_state:
            raise
        st.session_state.pop(reopen_key, None)
        st.session_state["task_error"] = _("Not reopened: {error}").format(error=e)
        s = tasks.task_state(d, user, cid, revisit_skipped=st.session_state.get(revisit_key, False))
    last = tasks.last_answer(d, user, cid) if s.phase == "items" else None  # what Z undoes

if len(mine) == 1:  # (several: the task's select box above names it)
    st.subheader(ui.md_escape(f"{s.campaign_name} · {s.title}"), anchor=False)  # a researcher's name: plain text


def _this_task(key: str) -> str | None:
    """A message kept in session state for this task only (never a "Saved:" of another task)."""
    value = st.session_state.get(key)
    return value[1] if isinstance(value, tuple) and value[0] == cid else None


with st.container(key="task_status"):  # one line of fixed height: a message never pushes the item down
    if error := st.session_state.get("task_error"):
        st.error(ui.md_escape(error), icon=":material/error:")
    elif st.session_state.pop("task_stale", False):
        st.info(_("A key press arrived after the screen had moved on and was not saved. Check the question below "
                  "and press again if needed."), icon=":material/info:")
    elif feedback := _this_task("task_feedback"):
        st.info(ui.md_escape(feedback), icon=":material/school:")  # a researcher's reason: plain text
    elif saved := _this_task("task_saved"):
        st.success(ui.md_escape(saved), icon=":material/check_circle:")
    else:
        st.caption(_("Every answer is saved the moment you give it. {done} of {total} done so far.").format(
            done=s.done, total=s.total))



def my_answers(editable: bool) -> None:
    """The list of my answers in this campaign, each with the start of the item's text; any can be reopened to
    answer it again (while the campaign is open). On every screen, answers or none: a qualification or hidden check
    item looks like any other."""

    def read(status):
        with ui.db() as d:
            return tasks.my_answers(d, user, cid, status=status)

    screen.my_answers_list("task_answers", read=read, on_reopen=_reopen, editable=editable,
                           reopened=s.reopened.ref if s.reopened is not None else None,
                           line=lambda g: (g.snippet, _("{answer} · flagged").format(answer=g.last)
                                           if g.status == "flagged" else g.last))


def undo_button(where, *, disabled: bool = False) -> None:
    """Z: the question answered last, shown again to be answered anew (the earlier answer stays in the history)."""
    where.button(_("Undo"), key="task_undo", shortcut="Z", width="stretch", on_click=_reopen,
                 args=(last.ref if last else None,), disabled=disabled or last is None,
                 help=_("Show the question you answered last again and answer it anew (Z)"))


if not s.open:
    st.warning(_("This campaign is closed: answers can no longer be given or changed."))
    my_answers(editable=False)
    st.stop()

guide_open = guide is not None and st.session_state.get("task_reading_guidelines", False)


def guidelines_button(where, *, disabled: bool = False) -> None:
    ui.guidelines_button(where, guide, "task_reading_guidelines", disabled=disabled, **GUIDE_COLUMNS)


q = s.qualification
if s.phase == "qualification" and s.item is None:
    def _review() -> list[dict]:
        with ui.db() as d:
            rows = gold.review(d, user, cid, backend=gold.TASK)
        return [{"item": r["item"], "question": r["question"], "your answer": r["answer"], "expected": r["expected"],
                 "why": r["reason"], "as expected": r["correct"]} for r in rows]

    ui_gold.qualification_round(q, answer="answers", review=_review, on_start=_start_qualification,
                                intro_key="task_qualification_intro", review_key="task_qualification_review",
                                extra=N_("Answers in this round cannot be changed."), labels=REVIEW_LABELS)
if q is not None and q.results and q.status == "passed" and s.phase == "items" and s.item is not None \
        and s.done == 0 and s.skipped == 0 and s.item.revision == 0 \
        and not st.session_state.get(f"task_qualification_done_{cid}"):
    ui_gold.qualification_passed(q, answer="answers", on_continue=_continue)

if s.item is None:  # (a task item's "done" is complete: the skipped ones are passed too, as all_answered counts)
    all_answered(s.done + s.skipped, s.total, s.skipped, finished="done", every=N_("Every other item is done."),
                 revisit=N_("Go back to the skipped items"), revisit_key="task_revisit", on_revisit=_set_revisit,
                 guidelines_button=guidelines_button, columns=4)
    undo_button(st.columns(4)[0])
    my_answers(editable=True)
    st.stop()

item = s.item
st.sidebar.caption(ui.md_escape(s.instructions))  # read once; the item keeps the page
flagging = st.session_state.get("task_flagging", False)
# one row: where the annotator is, and the item's own keys (S skip, F flag, G guidelines)
c0, c1, c2, c5, c3, c4 = st.columns([4, 2, 2, 2, 3, 3], vertical_alignment="bottom")
changing = s.reopened is not None
if changing:
    where_text = _("Answering again — your answer was: {answer}").format(answer=ui.md_escape(s.reopened.last))
elif item.revisiting:
    where_text = _("Revisiting a skipped item — {n} skipped").format(n=s.skipped)
elif s.phase == "qualification":
    where_text = _("Qualification item {n} of {total}").format(n=s.position, total=s.total)
else:
    where_text = _("Item {n} of {total}").format(n=s.position, total=s.total)
c0.progress(s.done / s.total, text=where_text)
c1.button(_("Skip item"), key=f"task_skip_{item.key}", shortcut="S", width="stretch", on_click=_answer,
          args=(item.ref, None, None, item.revision, _("item skipped")), help=_("Come back to it after the others"),
          disabled=flagging or guide_open)
c2.button(_("Flagged") if item.flagged else _("Flag…"), key=f"task_flag_{item.key}", shortcut="F", width="stretch",
          on_click=_flagging, args=(True,), disabled=flagging or guide_open,
          help=_("Report a problem with this item (a wrong reference, an unreadable answer) with a note"))
guidelines_button(c4, disabled=flagging)
undo_button(c5, disabled=flagging or guide_open or changing or s.phase != "items")
if changing:
    st.button(_("Leave it as it was (Esc)"), key="task_stop_reopen", shortcut="Escape", on_click=_reopen, args=(None,))
elif item.revisiting:
    st.button(_("Stop revisiting"), key="task_stop_revisit", on_click=_set_revisit, args=(False,))

pending = item.pending
st.session_state["task_drawn_ref"] = item.ref  # the only item an answer or skip is stored for (see _answer)
# a key counts for the question on screen, once (webui.screen.key_guard: the Grade page's rule)
with st.sidebar:  # (the sidebar: the scripts take no room from the item)
    screen.keys_after_clicks("task_status")  # the keys work after a click (the task's select box, a button)
    screen.key_guard("task", answer="opt_", skip="task_skip_", ready="taskReady", hold=task_screen.HELD,
                     cue=task_screen.CUE, free=["s"],
                     keys=[o.key for o in pending.options] + ["S"] if pending is not None else ["S"])
    st.caption(_("A key counts for the question on screen, once: a new question takes keys {ms} ms after it "
                 "appears, and a second key within that time is ignored. An answer given can be changed below the "
                 "item.").format(ms=SETTLE_MS))
by_target: dict[str, list] = {}
for q in item.questions:
    by_target.setdefault(q.target, []).append(q)


def given_line(target: str) -> None:
    qs = by_target.get(target, [])
    if not qs:
        return
    parts = [f"{q.criterion}: {q.option(item.answers[q.id]).label if q.id in item.answers else '—'}" for q in qs]
    st.caption(ui.md_escape(" · ".join(parts)))


def _show_earlier() -> None:
    st.session_state["task_earlier"] = not st.session_state.get("task_earlier", False)


# Only what the question asked now needs, side by side: the context, and the block(s) it is about (issue 32 §2);
# earlier questions of a case are one key away (E).
folded, columns = layout.reading(item.blocks, pending.target if pending is not None else None, item.open_part)
if folded:
    earlier = st.session_state.get("task_earlier", False)
    toggle = _("Hide earlier questions ({n})") if earlier else _("Show earlier questions ({n})")
    c3.button(toggle.format(n=len(folded)), key="task_earlier_toggle", shortcut="E", width="stretch", on_click=_show_earlier,
              help=_("The case's earlier questions and their reference answers (E)"))
    if earlier:
        with st.container(border=True, key="task_folded"):
            for b in folded:
                st.caption(ui.md_escape(b.label))
                st.text(b.text)
boxes = [f"read_{n}" for n in range(len(columns))]
# the context is the longest read: it gets more width than each block beside it
widths = [1.4 if not any(b.target for b in c) else 1 for c in columns]
for col, blocks, box in zip(st.columns(widths) if len(columns) > 1 else [st.container()], columns, boxes):
    with col:
        task_screen.column(box, blocks)
        for b in blocks:
            if b.target and b.part == item.open_part:  # the answers given so far on what this question is about
                given_line(b.target)


def ask(q, screen_id: str) -> None:
    """The question to answer now: one button per option, its key shown and bound (not while flagging), in the
    form that carries the reading area's measure. Each label is shown in full (wrapped); hovering a button shows
    what the criterion asks and what the option means."""
    with st.container(key="task_form"), st.form(key="task_answer_form", border=False, enter_to_submit=False):
        with st.container(border=True, key=f"ask_{item.key}"):
            # rubric texts may come from a researcher's file: shown literally
            part = ("" if item.parts <= 1 else " · *" + (
                _("Part {part} of {parts} (the next part opens when every question here has an answer)")
                if item.open_part < item.parts else _("Part {part} of {parts}")).format(
                    part=item.open_part, parts=item.parts) + "*")
            st.markdown(f"**{ui.md_escape(q.target)} — {ui.md_escape(q.criterion)}** · {ui.md_escape(q.prompt)}{part}")
            with st.container(key=task_screen.SLOT):
                st.caption(task_screen.legend(earlier=bool(folded)))
            cols = st.columns(len(q.options))
            for col, o in zip(cols, q.options):
                # the button shows its key itself (Streamlit's shortcut badge); a score's label is its anchor
                about = f"{q.criterion}: {q.prompt}" + (f"\n\n{o.label}: {o.meaning}" if o.meaning else "")
                with col:
                    st.form_submit_button(ui.md_escape(o.meaning if o.label == o.key and o.meaning else o.label),
                                          key=f"opt_{item.key}_{q.id}_{o.value}", shortcut=o.key,
                                          help=ui.md_escape(about), width="stretch", on_click=_answer,
                                          disabled=flagging or guide_open,
                                          args=(item.ref, q.id, o.value, item.revision,
                                                _said(q, o, changed=changing), screen_id))
        reading.measure(screen_id, boxes, keys=f"ask_{item.key}", held=task_screen.HELD, key=f"reading_{screen_id}")


if pending is not None:
    ask(pending, f"{item.key}_{pending.id}")  # the key guard's screen: the item and its question


def _save_flag() -> None:
    """The flag form's callback: a note is required; the dialog closes once the flag is saved."""
    note = st.session_state.get(f"task_flag_note_{item.key}", "")
    if not (note or "").strip():
        st.session_state["task_flag_error"] = _("Write a short note saying what is wrong, then press Enter again.")
        return
    try:
        with ui.db() as d:
            answers.submit(d, user, cid, item.ref, answers.Answer.flag(note),
                           client_token=f"{item.ref}:{item.revision}:flag")
    except (MedevalError, sqlite3.Error) as e:
        st.session_state["task_flag_error"] = _("Not saved: {error}. Your note is still here; press Enter to save it "
                                                "again.").format(error=e)
        return
    st.session_state.pop("task_flag_error", None)
    st.session_state["task_saved"] = (cid, _("Flag saved: a researcher will see your note"))
    st.session_state["task_flagging"] = False


if flagging:
    # F: the note opens over the item, in view, with the focus in it; Enter saves, Esc (or Cancel) closes it
    @st.dialog(_("Flag this item"), on_dismiss=lambda: _flagging(False))
    def _flag_dialog() -> None:
        with st.form(key=f"task_flag_form_{item.key}", border=False):
            st.text_input(_("What is wrong with it? (required)"), key=f"task_flag_note_{item.key}",
                          placeholder=_("e.g. the reference answer is outdated"), max_chars=NOTE_MAX_CHARS)
            st.caption(_("Enter saves the flag · Esc cancels"))
            b1, b2 = st.columns(2)
            b1.form_submit_button(_("Save flag"), type="primary", width="stretch", on_click=_save_flag)
            b2.form_submit_button(_("Cancel"), on_click=_flagging, args=(False,), width="stretch")
        if err := st.session_state.pop("task_flag_error", None):
            st.error(ui.md_escape(err))
        elif not st.session_state.get("task_flagging"):  # saved or cancelled: the whole page again
            st.rerun()
        screen.focus(f'.st-key-task_flag_note_{item.key} input')

    _flag_dialog()


if item.answers and item.changeable:  # (not in a qualification round)
    with st.expander(_("Change an answer on this item"), expanded=False):
        for q in item.questions:
            if q.id not in item.answers:
                continue
            st.caption(ui.md_escape(f"{q.target} · {q.criterion}"))
            cols = st.columns(len(q.options))
            for col, o in zip(cols, q.options):
                col.button(ui.md_escape(o.label), key=f"chg_{item.key}_{q.id}_{o.value}",
                           disabled=item.answers[q.id] == o.value, width="stretch", on_click=_answer,
                           args=(item.ref, q.id, o.value, item.revision, _said(q, o, changed=True)))


my_answers(editable=item.changeable)
