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
from medeval.core.errors import MedevalError
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
                    hold_text="▼ Read each text to its end before saving.")

with ui.db() as d:
    camps = adj.campaigns(d, actor=user)
if not camps:
    st.subheader("Adjudicate", anchor=False)
    st.info("No grading campaigns yet: there is nothing to adjudicate.")
    st.stop()
def _refilter() -> None:
    """A new campaign or filter opens on its first item still to settle, never on the item chosen before."""
    st.session_state.pop("adj_item", None)


with st.sidebar:  # the queue's settings: the item has the page
    cid = ui.campaign_choice(camps, key="adj_campaign")["id"]
if st.session_state.get("adj_for_campaign") != cid:  # (the campaign choice keeps its own state: compared here)
    st.session_state["adj_for_campaign"] = cid
    _refilter()
distance = st.sidebar.radio("Disagreement of at least", adj.DISTANCES, index=1, horizontal=True, key="adj_distance",
                            on_change=_refilter,
                            format_func=lambda n: "1 tier (any)" if n == 1 else "2 tiers (Completely Wrong vs "
                                                                                "Basically Correct)")
show_names = st.sidebar.toggle("Show annotator names", value=False, key="adj_names",
                       help="Off: the annotators are numbered, so the final tier does not lean on who gave which.")

with st.sidebar:  # (the scripts take no room from the item)
    screen.keys_after_clicks("adj_item")  # 1 2 3 work after a click on any control of this page
    screen.key_to_focus("adj_item", "r", '[class*="st-key-adj_reason_"] textarea')  # R: the reason, one key away
msg = st.session_state.pop("adj_msg", None)

try:
    with ui.db() as d:
        q = adj.queue(d, cid, min_distance=distance, actor=user, include_own=True)
except MedevalError as e:
    st.subheader("Adjudicate", anchor=False)
    st.error(ui.md_escape(str(e)))
    st.stop()
n_own = sum(r["yours"] for r in q)  # items this user grades: not theirs to settle (the library refuses them too)
q = [r for r in q if not r["yours"]]
own_note = (f"{n_own} item{'s' if n_own != 1 else ''} of this queue left out: you are one of their graders, so "
            "another adjudicator must settle them." if n_own else "")
if not q:
    far = "No other item" if own_note else "No item"
    st.subheader("Adjudicate", anchor=False)
    st.info(f"{own_note} {far} of this campaign has annotators this far apart. Choose 1 tier to see every "
            "disagreement.".lstrip())
    st.stop()

open_items = [r["item"] for r in q if r["adjudication"] is None]
st.sidebar.caption(f"{len(q)} items in the queue, {len(q) - len(open_items)} adjudicated · widest disagreement "
                   "first")
if not open_items:  # said, not left to be guessed from the list
    st.info(f"Every item of this queue is settled ({len(q)} of {len(q)})."
            + (" Choose 1 tier in the sidebar to see every disagreement." if distance > 1 else "")
            + " An item below can still be looked at again.", icon=":material/task_alt:")
if own_note:
    st.sidebar.caption(own_note)


def _who(n: int, name: str) -> str:
    return name if show_names else f"Annotator {n}"


def _label(r: dict) -> str:
    done = f" · adjudicated: {cp.tier_label(r['adjudication']['tier'])}" if r["adjudication"] else ""
    return f"Item {r['item']} · {r['disease']} · {r['aspect']} · range {r['range']}{done}"  # a select box: plain


by_item = {r["item"]: r for r in q}
current = st.session_state.get("adj_item")
if current not in by_item:
    current = (open_items or [q[0]["item"]])[0]
st.session_state["adj_item"] = current
st.selectbox("Item", list(by_item), key="adj_item", format_func=lambda i: _label(by_item[i]),
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
        st.session_state["adj_msg"] = ("error", "Choose the final tier first (1, 2 or 3): nothing was saved.")
        return
    if reading.fully_shown(f"reading_adj_{item}", f"adj{item}") is False:  # the browser: a box not read to its end
        st.session_state["adj_msg"] = ("error", "Scroll each box marked ▼ to its end first: the final tier rests on "
                                                "the whole text. Nothing was saved; your reason is kept.")
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
        st.session_state["adj_msg"] = ("error", ui.md_escape(f"Not saved: {e}"))
        return
    st.session_state["adj_msg"] = ("ok", ui.md_escape(f"Saved: item {item} → {cp.tier_label(tier)}."))
    rest = [i for i in open_items if i != item]
    st.session_state["adj_item"] = rest[0] if rest else item  # on to the next item still open


if pending := st.session_state.get(replace_key):  # asked above the item, the whole width: in view, whole
    a = r["adjudication"]
    ui.confirm(replace_key, question=f"Replace the adjudication of item {item}?",
               details=ui.md_escape(f"Now: {cp.tier_label(a['tier'])} by {a['by']}. Yours: "
                                    f"{cp.tier_label(pending[0])}. The earlier one stays in the history."),
               yes="Replace it", on_yes=_store, args=pending)

# The texts take the height of the window, side by side; the controls and what the annotators said stand beside
# them (a text of 600 characters is whole at 1366x768).
left, middle, panel = st.columns([8, 8, 3])
with left:
    ui.plain("Reference answer", r["reference"], key="adj_reference")
with middle:
    ui.plain("Model's answer", r["response"], key="adj_response")
notes = [f"{_who(n, g['annotator'])}: {g['note']}" for n, g in enumerate(r["annotators"], 1) if g["note"]]


def annotators() -> None:
    """The annotators' tiers, their flag notes and the current adjudication, under the controls."""
    st.caption("The annotators' tiers (latest answer of each; skips left out)")
    with st.container(key="adj_tiers"):  # lines, not a table: each whole in the narrow column (names: plain text)
        st.text("\n".join(f"{_who(n, g['annotator'])}: {cp.tier_label(g['tier'])}"
                           for n, g in enumerate(r["annotators"], 1)))
    if notes:
        ui.plain("Flag notes", "\n".join(notes), key="adj_notes")
    if r["adjudication"]:
        a = r["adjudication"]
        ui.plain("Current adjudication", f"{cp.tier_label(a['tier'])} by {a['by']}: {a['reason']}", key="adj_current")


chosen = st.session_state.get(tier_key)
with panel, st.container(key="adj_panel"):  # down to the window's bottom at most: what does not fit scrolls inside
    with st.container(key="adj_disease"):
        st.text(f"{r['disease']} · {r['aspect']}")  # (disease · aspect) plain text
    with st.container(key="adj_status"):  # right above the controls it is about (as tall as its message)
        if msg:
            (st.error if msg[0] == "error" else st.success)(msg[1])
        else:
            st.caption("**Final tier** · keys **1 2 3**, **R** the reason, **Ctrl+Enter** saves")
    st.caption(f"Chosen: {cp.tier_label(chosen)}" if chosen is not None else "Chosen: none yet")
    for key, tier, name, meaning in cp.TIER_GUIDE:  # one under the other: each name whole in a narrow panel
        st.button(name, key=f"adj_pick_{item}_{tier}", shortcut=key, help=meaning, width="stretch",
                  type="primary" if chosen == tier else "secondary", on_click=_pick, args=(tier,))
    with st.container(key="adj_form"), st.form(key=f"adj_form_{item}", border=False):
        st.text_area("Reason (required; kept with the adjudication)", key=f"adj_reason_{item}", height=68,
                     label_visibility="collapsed",
                     placeholder="Reason (required; kept with the adjudication), e.g. the answer names the right "
                                 "first-line drug but a wrong dose")
        st.form_submit_button("Save adjudication", type="primary", on_click=_save, width="stretch")
        # the boxes' height from the window, and whether each was read to its end (sent with Save: _save refuses
        # a save before that, and the adjudication records it)
        reading.measure(f"adj{item}", ["adj_reference", "adj_response"], keys="adj_form", held="adjHeld",
                        key=f"reading_adj_{item}")
    annotators()
