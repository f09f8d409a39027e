"""The reading area of a work page: every word an answer rests on is on the doctor's screen.

A page draws an item's texts in keyed boxes (:func:`webui.page.plain`), then, inside the form that holds the
item's answer buttons, :func:`measure`. In the browser that does four things for the item on screen:

* **Sizes the boxes to the screen.** Each box may grow to the height left between its top and the bottom of the
  answer buttons (``--medeval-read-max`` on the page, set again when the window changes size), so a text is cut
  only where the screen has no more room, never at a fixed height.
* **Says when more follows.** A box whose text is longer than it shows a "more below" line at its bottom
  (``data-more="1"``) until it has been scrolled to its end.
* **Holds the answer keys until each long box was read to its end.** While a box still has unread text,
  ``<body data-<held>="<item>">`` is set; the key guard (:mod:`webui.screen`) drops answer keys and clicks then and
  shows why (the page's cue line), so the hold is never silent.
* **Reports it with the answer.** The state ``{"item": <key>, "full": true|false}`` is a component value inside
  the answer form: it reaches the server with the press of an answer button, in the same message, and costs no
  rerun of its own. :func:`fully_shown` reads it for the item the answer is for.

It reads the page's own element sizes only: no text of the item passes through it, and nothing it writes is
HTML (the cue texts are CSS strings of our own).
"""

from __future__ import annotations

import json

import streamlit as st

from medeval.core.i18n import N_, _

# A box may not shrink below this, however little room is left (a very small window): it then scrolls.
MIN_BOX_PX = 120

# The cue texts are English marked N_(): :func:`cue_css` shows them in the reader's language (the pages' modules make
# them at import time, before anyone is signed in).
MORE_TEXT = N_("▼ more below: scroll to read on")

# The rules both reading screens share: the whole width, the page's top padding shrunk to Streamlit's header (3.75
# rem), tighter gaps and compact message lines (a "Saved" line never pushes the texts down).
# a reading box's text: as written (line breaks kept, long tokens broken), a little denser than the page's prose
TEXT_RULES = "white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.95rem; line-height: 1.45;"

PAGE_CSS = """
[data-testid="stMainBlockContainer"] { padding: 3.75rem 1.5rem 1rem; max-width: none; }
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] { gap: 0.4rem; }
[data-testid="stMainBlockContainer"] [data-testid="stAlertContainer"] { padding: 0.35rem 0.8rem; }
[data-testid="stMainBlockContainer"] [data-testid="stAlertContainer"] p { font-size: 0.9rem; }
"""


_HOLD = {"grade": N_("▼ Read each text to its end (scroll its box): the grade keys wait until you have."),
         "answer": N_("▼ Read each text to its end (scroll its box): the answer keys wait until you have.")}
_CUES = {
    "item": {"soon": N_("Key ignored: a new item had just appeared. Read it, then press again."),
             "twice": N_("Second key ignored: this item already has your answer.")},
    "question": {"soon": N_("Key ignored: a new question had just appeared. Read it, then press again."),
                 "twice": N_("Second key ignored: this question already has your answer.")},
}
_HELD = N_("Key ignored: read each text to its end first (scroll the box marked ▼).")


def hold_text(keys: str) -> str:
    """The line above the answer buttons while a long text is unread (``keys``: "grade", "answer"), in English
    (:func:`cue_css` translates it)."""
    return _HOLD[keys]


def cue_texts(thing: str) -> dict[str, str]:
    """Why a key did nothing, by the key guard's reason (``thing``: "item", "question"), in English (:func:`cue_css`
    translates them)."""
    return {**_CUES[thing], "held": _HELD}

_JS = """
export default function ({ data, setStateValue }) {
  const [item, boxKeys, keys, held, margin, min] = data;
  const cfg = {item, boxes: boxKeys, keys, held, margin, min};
  const reached = new Map();
  let last = null, timer = null, stopped = false;
  const boxes = () => cfg.boxes.map((k) => document.querySelector('.st-key-' + k));
  const scroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p).overflowY;
      if ((s === 'auto' || s === 'scroll') && p.scrollHeight > p.clientHeight) return p;
    }
    return null;
  };
  const size = (bs) => {
    const keys = document.querySelector('.st-key-' + cfg.keys);
    if (!keys || !bs.length) return;
    const top = Math.min(...bs.map((b) => b.getBoundingClientRect().top));
    const bottom = Math.max(...bs.map((b) => b.getBoundingClientRect().bottom));
    const below = Math.max(0, keys.getBoundingClientRect().bottom - bottom);
    const sc = scroller(bs[0]);
    const offset = sc ? sc.scrollTop + sc.getBoundingClientRect().top : 0;
    const room = Math.floor(window.innerHeight - (top + (sc ? sc.scrollTop : 0) - offset) - below - cfg.margin);
    const px = Math.max(cfg.min, room) + 'px';
    if (document.documentElement.style.getPropertyValue('--medeval-read-max') !== px)
      document.documentElement.style.setProperty('--medeval-read-max', px);
  };
  const mark = (bs) => {  // "more below" per box; whether every box was whole or read to its end
    let full = true;
    bs.forEach((b, i) => {
      const a = b.dataset.more ? getComputedStyle(b, '::after') : null;
      const cue = a ? (parseFloat(a.height) || 0) + (parseFloat(a.marginTop) || 0) + (parseFloat(a.marginBottom) || 0) : 0;
      const long = b.scrollHeight - Math.max(0, cue) > b.clientHeight + 1;
      if (!long || b.scrollTop + b.clientHeight >= b.scrollHeight - 2) reached.set(cfg.boxes[i], true);
      const read = !long || reached.get(cfg.boxes[i]) === true;
      const more = read ? '' : '1';
      if ((b.dataset.more || '') !== more) b.dataset.more = more;
      if (!read) full = false;
    });
    const held = full ? '' : cfg.item;
    if ((document.body.dataset[cfg.held] || '') !== held) document.body.dataset[cfg.held] = held;
    return full;
  };
  const check = () => {
    if (stopped) return;
    const bs = boxes();
    if (bs.some((b) => !b)) { timer = setTimeout(check, 50); return; }
    size(bs);
    mark(bs);
    size(bs);  // the hold line above the keys may have changed what is left for the boxes
    const full = mark(bs);
    const state = JSON.stringify({item: cfg.item, full});
    if (state !== last) { last = state; setStateValue('shown', {item: cfg.item, full}); }
  };
  const onScroll = (e) => { if (e.target && e.target.classList && cfg.boxes.some((k) =>
      e.target.classList.contains('st-key-' + k))) check(); };
  document.addEventListener('scroll', onScroll, true);
  window.addEventListener('resize', check);
  const mo = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(check, 30); });
  mo.observe(document.body, {childList: true, subtree: true});
  check();
  return () => {
    stopped = true; clearTimeout(timer); mo.disconnect();
    document.removeEventListener('scroll', onScroll, true);
    window.removeEventListener('resize', check);
    if (document.body.dataset[cfg.held] === cfg.item) document.body.dataset[cfg.held] = '';
  };
}
"""

# Sent with every key press (the component is drawn again on each rerun of the grading panel): its indentation
# goes, its line breaks stay (they end statements).
_JS = "\n".join(line.strip() for line in _JS.splitlines() if line.strip())

_component = None


def _reader():
    global _component
    if _component is None:  # registered on first use: a page that never measures registers nothing
        _component = st.components.v2.component("medeval_reading", js=_JS, html="<span></span>",
                                                isolate_styles=False)
    return _component


def _noop() -> None:
    """The component's state needs a change callback to be kept; nothing is done on a change (no rerun)."""


def measure(item: str, boxes: list[str], *, keys: str, held: str, key: str, margin: int = 12) -> None:
    """Measure the boxes (keyed containers ``boxes``) of the item whose screen key is ``item``; ``keys``: the key
    of the container of its answer buttons (the boxes grow down to leave it on screen); ``held``: the
    ``document.body.dataset`` name that says the keys are held. Call it inside the answer form; ``key`` is the
    component's key (one per item, so an item's state never carries over to the next)."""
    # (a list, not a dict: Streamlit looks for data frames in a dict's values, on every key press)
    _reader()(key=key, data=[item, boxes, keys, held, margin, MIN_BOX_PX],
              default={"shown": None}, on_shown_change=_noop, height=0)


def fully_shown(key: str, item: str) -> bool | None:
    """What the browser said for item ``item`` under the component ``key``: True (every text whole, or scrolled
    to its end), False, or None when it said nothing for this item (no browser, or it had not measured yet)."""
    value = st.session_state.get(key)
    shown = value.get("shown") if hasattr(value, "get") else None
    if not isinstance(shown, dict) or shown.get("item") != item or not isinstance(shown.get("full"), bool):
        return None
    return shown["full"]


def page_rules() -> None:
    """The rules the reading screens share (:data:`PAGE_CSS`), for a page that draws no others of this module."""
    st.html("<style>" + PAGE_CSS + "</style>")


def sized_boxes(boxes: list[str], *, held: str, slot: str, hold_text: str = "") -> None:
    """Boxes sized to the window and marked "more below", on a page whose keys the key guard does not watch
    (Adjudicate: the final tier is saved with a reason, and the page refuses a save the browser says came before
    every text was read); ``hold_text`` is shown in ``slot`` while a box has not been read to its end."""
    st.html(cue_css(held=held, slot=slot, hold_text=hold_text, more_text=MORE_TEXT, boxes=boxes, cue=held + "Cue",
                    cue_texts={}))
    text = ", ".join(f".st-key-{b} [data-testid='stText']" for b in boxes)
    st.html(f"<style>{', '.join(f'.st-key-{b}' for b in boxes)} {{ padding: 0.5rem 0.75rem; gap: 0; }}\n"
            f"{text} {{ {TEXT_RULES} }}</style>")


def css_text(text: str) -> str:
    """``text`` (our own words) as a CSS string literal."""
    return json.dumps(text, ensure_ascii=False)


def cue_css(*, held: str, slot: str, hold_text: str, more_text: str, boxes: list[str], cue: str,
            cue_texts: dict[str, str]) -> str:
    """The styles of the reading area: boxes sized by ``--medeval-read-max``; their "more below" line; the slot
    ``slot`` (a keyed container drawn above the answer buttons) shows ``hold_text`` while the keys are held
    (``body[data-<held>]`` set) and, for a moment after the key guard dropped a key, ``cue_texts[reason]``
    (``body[data-<cue>=reason]``). The texts (English marked ``N_()``, or translated already) are shown in the
    reader's language."""
    hold_text, more_text = (_(hold_text) if hold_text else ""), _(more_text)
    cue_texts = {reason: _(text) for reason, text in cue_texts.items()}
    held_attr = "data-" + "".join("-" + c.lower() if c.isupper() else c for c in held)
    cue_attr = "data-" + "".join("-" + c.lower() if c.isupper() else c for c in cue)
    sel = ", ".join(f".st-key-{b}" for b in boxes)
    more = ", ".join(f'.st-key-{b}[data-more="1"]::after' for b in boxes)
    rules = [
        f"{sel} {{ max-height: var(--medeval-read-max, 24rem); overflow-y: auto; }}",
        f"{more} {{ content: {css_text(more_text)}; position: sticky; bottom: -0.5rem; display: block;"
        " margin: 0 -0.75rem -0.5rem; align-self: stretch; padding: 0.35rem 0.6rem 0.3rem; font-size: 0.85rem; font-weight: 600;"
        " color: #8a4b00; background: linear-gradient(to bottom, rgba(255,248,225,0.85), #fff8e1);"
        " border-top: 1px solid #f0c36d; flex-shrink: 0; }",
        f".st-key-{slot} p {{ margin: 0; }}",
        f"body[{held_attr}]:not([{held_attr}=\"\"]) .st-key-{slot} [data-testid='stCaptionContainer'] "
        "{ display: none; }",
        f"body[{held_attr}]:not([{held_attr}=\"\"]) .st-key-{slot}::before {{ content: {css_text(hold_text)};"
        " display: block; font-size: 0.9rem; font-weight: 600; color: #8a4b00; }",
    ]
    for reason, text in cue_texts.items():
        rules.append(f"body[{cue_attr}=\"{reason}\"] .st-key-{slot} [data-testid='stCaptionContainer'] "
                     "{ display: none; }")
        rules.append(f"body[{cue_attr}=\"{reason}\"] .st-key-{slot}::before {{ content: {css_text(text)};"
                     " display: block; font-size: 0.9rem; font-weight: 600; color: #b3261e; }")
    return "<style>\n" + "\n".join(rules) + "\n</style>"
