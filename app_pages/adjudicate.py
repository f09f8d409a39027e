"""Adjudicate (adjudicators, researchers, admins): settle the items the annotators disagree on.

The queue holds the items of a campaign whose annotators' tiers lie at least the chosen distance apart,
the widest disagreement first. For each: the item as the annotators saw it (not the model), every
annotator's tier and flag note (names only when asked for), the current adjudication if any, and the
final tier with a reason. Keys: 1 / 2 / 3 pick the tier; R puts the cursor in the reason; Ctrl+Enter in the reason
saves. A campaign or filter opens on its first item still to settle (a queue with none says so); replacing an earlier
adjudication is asked once. Every text from
the data is shown as plain text. The library checks the role again
(:mod:`medeval.annotation.adjudication`), and refuses an item to its own graders: the items assigned to the
signed-in user are not offered, and the sidebar says how many were left out for that reason.

One item fits one screen (1366×768 and up; issue 22 §2): the campaign and the queue's settings are in the sidebar,
the reference and the model's answer side by side in boxes that scroll inside, and a message line of fixed height
right above the final tier. The keys keep working after a click on any control (the focus goes back to the page).
"""

import sqlite3

import streamlit as st

from medeval.annotation import adjudication as adj
from medeval.annotation import campaigns as cp
from medeval.annotation import guidelines as gl
from medeval.core.errors import MedevalError
from medeval.core.i18n import _, ngettext
from medeval.core.i18n import current as language
from medeval.engine.aspects import BY_NAME
from webui import page as ui
from webui import reading, screen

user = ui.require_page("adjudicate")
# the reference and the answer: as tall as the window leaves them above the reason (webui/reading.py measures it;
# this is the height before it has), marked "more below" when longer
TEXT_MAX = "clamp(5rem, calc(100vh - 38.5rem), 24rem)"
reading.page_rules()  # the whole width (compact's padding, drawn after it, wins)
screen.compact(boxes={"adj_notes": "4.5rem", "adj_current": "4.5rem",
                       "adj_panel": "calc(100vh - 10.5rem)"})
reading.sized_boxes(["adj_reference", "adj_response"], held="adjHeld", slot="adj_status",
                    hold_text=_("▼ Read each text to its end before saving."))


def tier_label(tier: int | None) -> str:
    """A tier's name in the reader's language."""
    return _(cp.tier_label(tier))


with ui.db() as d:
    camps = adj.campaigns(d, actor=user)
if not camps:
    st.subheader(_("Adjudicate"), anchor=False)
    st.info(_("No grading campaigns yet: there is nothing to adjudicate."))
    st.stop()
def _refilter() -> None:
    """A new campaign or filter opens on its first item still to settle, never on the item chosen before."""
    st.session_state.pop("adj_item", None)


with st.sidebar:  # the queue's settings: the item has the page
    cid = ui.campaign_choice(camps, key="adj_campaign")["id"]
if st.session_state.get("adj_for_campaign") != cid:  # (the campaign choice keeps its own state: compared here)
    st.session_state["adj_for_campaign"] = cid
    _refilter()
distance = st.sidebar.radio(_("Disagreement of at least"), adj.DISTANCES, index=1, horizontal=True,
                            key="adj_distance", on_change=_refilter,
                            format_func={1: _("1 tier (any)"),
                                         2: _("2 tiers (Completely Wrong vs Basically Correct)")}.get)
show_names = st.sidebar.toggle(_("Show annotator names"), value=False, key="adj_names",
                               help=_("Off: the annotators are numbered, so the final tier does not lean on who gave "
                                      "which."))

with st.sidebar:  # (the scripts take no room from the item)
    screen.keys_after_clicks("adj_item")  # 1 2 3 work after a click on any control of this page
    screen.key_to_focus("adj_item", "r", '[class*="st-key-adj_reason_"] textarea')  # R: the reason, one key away
msg = st.session_state.pop("adj_msg", None)

try:
    with ui.db() as d:
        q = adj.queue(d, cid, min_distance=distance, actor=user, include_own=True)
except MedevalError as e:
    st.subheader(_("Adjudicate"), anchor=False)
    st.error(ui.md_escape(str(e)))
    st.stop()
n_own = sum(r["yours"] for r in q)  # items this user grades: not theirs to settle (the library refuses them too)
q = [r for r in q if not r["yours"]]
own_note = ngettext("{n} item of this queue left out: you are one of their graders, so another adjudicator must "
                    "settle them.", "{n} items of this queue left out: you are one of their graders, so another "
                    "adjudicator must settle them.", n_own).format(n=n_own) if n_own else ""
# sentences one after the other (Chinese sets no space between them)
SPACE = "" if language() == "zh-CN" else " "
if not q:
    far = (_("No other item of this campaign has annotators this far apart. Choose 1 tier to see every "
             "disagreement.") if own_note else
           _("No item of this campaign has annotators this far apart. Choose 1 tier to see every disagreement."))
    st.subheader(_("Adjudicate"), anchor=False)
    st.info(SPACE.join(x for x in (own_note, far) if x))
    st.stop()

open_items = [r["item"] for r in q if r["adjudication"] is None]
st.sidebar.caption(_("{n} items in the queue, {done} adjudicated · widest disagreement first").format(
    n=len(q), done=len(q) - len(open_items)))
if not open_items:  # said, not left to be guessed from the list
    st.info(SPACE.join(x for x in (
        _("Every item of this queue is settled ({n} of {n}).").format(n=len(q)),
        _("Choose 1 tier in the sidebar to see every disagreement.") if distance > 1 else "",
        _("An item below can still be looked at again.")) if x), icon=":material/task_alt:")
if own_note:
    st.sidebar.caption(own_note)


def _who(n: int, name: str) -> str:
    return name if show_names else _("Annotator {n}").format(n=n)


def _aspect(name: str) -> str:
    """An aspect as its reader names it: a Chinese reader the aspect's Chinese name, as the Grade page shows it."""
    return BY_NAME[name].name_zh if language() == "zh-CN" and name in BY_NAME else name


def _label(r: dict) -> str:
    """A select box's option (plain text): the item, its disease and aspect, the range of tiers, its adjudication."""
    if r["adjudication"]:
        return _("Item {id} · {disease} · {topic} · range {range} · adjudicated: {final}").format(
            id=r["item"], disease=r["disease"], topic=_aspect(r["aspect"]), range=r["range"],
            final=tier_label(r["adjudication"]["tier"]))
    return _("Item {id} · {disease} · {topic} · range {range}").format(id=r["item"], disease=r["disease"],
                                                                       topic=_aspect(r["aspect"]), range=r["range"])


by_item = {r["item"]: r for r in q}
current = st.session_state.get("adj_item")
if current not in by_item:
    current = (open_items or [q[0]["item"]])[0]
st.session_state["adj_item"] = current
# (the options' labels made here, in the reader's language: a format_func may also be called outside this run)
item_labels = {i: _label(row) for i, row in by_item.items()}
st.selectbox(_("Item"), list(by_item), key="adj_item", format_func=item_labels.get,
             label_visibility="collapsed")  # (each option starts with "Item <id>"; the menu names the page)
r = by_item[st.session_state["adj_item"]]
item = r["item"]

tier_key = f"adj_tier_{item}"


def _pick(tier: int) -> None:
    st.session_state[tier_key] = tier


replace_key = f"adj_replace_{item}"


def _save() -> None:
    tier = st.session_state.get(tier_key)
    reason = st.session_state.get(f"adj_reason_{item}", "")
    if tier is None:
        st.session_state["adj_msg"] = ("error", _("Choose the final tier first (1, 2 or 3): nothing was saved."))
        return
    if reading.fully_shown(f"reading_adj_{item}", f"adj{item}") is False:  # the browser: a box not read to its end
        st.session_state["adj_msg"] = ("error", _("Scroll each box marked ▼ to its end first: the final tier rests "
                                                  "on the whole text. Nothing was saved; your reason is kept."))
        return
    if r["adjudication"] is not None:  # replacing an earlier adjudication is asked once
        st.session_state[replace_key] = (tier, reason)
        return
    _store(tier, reason)


def _store(tier: int, reason: str) -> None:
    try:
        with ui.db() as d:
            adj.adjudicate(d, user, item, tier, reason,
                           fully_shown=reading.fully_shown(f"reading_adj_{item}", f"adj{item}"))
    except (MedevalError, sqlite3.Error) as e:
        st.session_state["adj_msg"] = ("error", ui.md_escape(_("Not saved: {error}").format(error=e)))
        return
    st.session_state["adj_msg"] = ("ok", ui.md_escape(_("Saved: item {id} → {final}.").format(
        id=item, final=tier_label(tier))))
    rest = [i for i in open_items if i != item]
    st.session_state["adj_item"] = rest[0] if rest else item  # on to the next item still open


if pending := st.session_state.get(replace_key):  # asked above the item, the whole width: in view, whole
    a = r["adjudication"]
    ui.confirm(replace_key, question=_("Replace the adjudication of item {id}?").format(id=item),
               details=ui.md_escape(_("Now: {now} by {name}. Yours: {yours}. The earlier one stays in the "
                                      "history.").format(now=tier_label(a["tier"]), name=a["by"],
                                                         yours=tier_label(pending[0]))),
               yes=_("Replace it"), on_yes=_store, args=pending)

# The texts take the height of the window, side by side; the controls and what the annotators said stand beside
# them (a text of 600 characters is whole at 1366x768).
left, middle, panel = st.columns([8, 8, 3])
with left:
    ui.plain(_("Reference answer"), r["reference"], key="adj_reference")
with middle:
    ui.plain(_("Model's answer"), r["response"], key="adj_response")
notes = [_("{who}: {note}").format(who=_who(n, g["annotator"]), note=g["note"])
         for n, g in enumerate(r["annotators"], 1) if g["note"]]


def annotators() -> None:
    """The annotators' tiers, their flag notes and the current adjudication, under the controls."""
    st.caption(_("The annotators' tiers (latest answer of each; skips left out)"))
    with st.container(key="adj_tiers"):  # lines, not a table: each whole in the narrow column (names: plain text)
        st.text("\n".join(_("{who}: {answer}").format(who=_who(n, g["annotator"]), answer=tier_label(g["tier"]))
                           for n, g in enumerate(r["annotators"], 1)))
    if notes:
        ui.plain(_("Flag notes"), "\n".join(notes), key="adj_notes")
    if r["adjudication"]:
        a = r["adjudication"]
        ui.plain(_("Current adjudication"), _("{final} by {name}: {reason}").format(
            final=tier_label(a["tier"]), name=a["by"], reason=a["reason"]), key="adj_current")


chosen = st.session_state.get(tier_key)
with panel, st.container(key="adj_panel"):  # down to the window's bottom at most: what does not fit scrolls inside
    with st.container(key="adj_disease"):
        # (disease · aspect) plain text, as the menu above names them
        st.text(f"{r['disease']} · {_aspect(r['aspect'])}")
    with st.container(key="adj_status"):  # right above the controls it is about (as tall as its message)
        if msg:
            (st.error if msg[0] == "error" else st.success)(msg[1])
        else:
            st.caption(_("**Final tier** · keys **1 2 3**, **R** the reason, **Ctrl+Enter** saves"))
    st.caption(_("Chosen: {choice}").format(choice=tier_label(chosen)) if chosen is not None else
               _("Chosen: none yet"))
    for key, tier, name, meaning in gl.tier_guide():  # one under the other: each name whole in a narrow panel
        st.button(name, key=f"adj_pick_{item}_{tier}", shortcut=key, help=meaning, width="stretch",
                  type="primary" if chosen == tier else "secondary", on_click=_pick, args=(tier,))
    with st.container(key="adj_form"), st.form(key=f"adj_form_{item}", border=False):
        st.text_area(_("Reason (required; kept with the adjudication)"), key=f"adj_reason_{item}", height=68,
                     label_visibility="collapsed",
                     placeholder=_("Reason (required; kept with the adjudication), e.g. the answer names the right "
                                   "first-line drug but a wrong dose"))
        st.form_submit_button(_("Save adjudication"), type="primary", on_click=_save, width="stretch")
        # the boxes' height from the window, and whether each was read to its end (sent with Save: _save refuses
        # a save before that, and the adjudication records it)
        reading.measure(f"adj{item}", ["adj_reference", "adj_response"], keys="adj_form", held="adjHeld",
                        key=f"reading_adj_{item}")
    annotators()
