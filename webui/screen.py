"""One item on one screen (issue 22 §2): the styles and the small scripts the work pages (Grade, Rate & compare,
Adjudicate) add so that an item and its controls fit 1366×768 without scrolling the page, and the one key guard
that makes a key count only for the item on screen (issue 22 §1).

Everything here is our own static markup, never data: the texts of an item are drawn by Streamlit elements
(``st.text``, plain text). The styles are page-scoped (drawn by the page, gone when it is left); the scripts
install their listeners once per browser tab and act only while the page's marker element is on screen.
"""

from __future__ import annotations

import json

import streamlit as st

from medeval.core.i18n import N_, _, current
from webui.page import md_escape


def _js(value) -> str:
    """``value`` as a JavaScript literal that cannot end the <script> element it is written in."""
    return json.dumps(value).replace("</", "<\\/")

# a text box (a bordered container with one st.text) never grows past this: a longer text scrolls inside it
BOX_MAX = "clamp(3.5rem, 12vh, 10rem)"  # context: a case, a question, a reference
SIDE_MAX = "clamp(5rem, calc(100vh - 42rem), 26rem)"  # what is rated (a response, one side of a pair): the rest


def _box_css(prefix: str, max_height: str) -> str:
    sel = f'[class*="st-key-{prefix}"]'
    return (f"{sel} {{max-height: {max_height}; overflow-y: auto; padding: 0.3rem 0.6rem; gap: 0.25rem;}}\n"
            f"{sel} [data-testid='stText'] {{white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.95rem;"
            f" line-height: 1.45;}}\n")


def compact(*, boxes: dict[str, str] | None = None, wrap_buttons: tuple[str, ...] = (),
            slot: str | None = None) -> None:
    """Styles for a work page: less padding above the page, tighter gaps, text boxes of ``boxes`` ({key prefix:
    max height}) that scroll inside, full button labels (wrapped) in the containers whose keys start with a
    prefix of ``wrap_buttons``, and a status line ``slot`` (a keyed container) of a fixed height, so a "Saved"
    line never pushes the item down."""
    css = ["[data-testid='stMainBlockContainer'] {padding-top: 3.75rem; padding-bottom: 0.25rem;}",
           "[data-testid='stMainBlockContainer'] h3 {padding-top: 0; padding-bottom: 0.25rem;}",
           "[data-testid='stMainBlockContainer'] [data-testid='stVerticalBlock'] {gap: 0.5rem;}",
           "[data-testid='stMainBlockContainer'] [data-testid='stCaptionContainer'] p {margin-bottom: 0;}",
           # Streamlit pulls a caption's box up by the 1rem its paragraph's margin had: with that margin gone, the
           # element below was drawn over a caption's last line. Half a rem (the gap) ends the caption's box at its
           # text: the next element starts right below it, and a reading box keeps all but the gap of its room
           "[data-testid='stMainBlockContainer'] [data-testid='stCaptionContainer'] {margin-bottom: -0.5rem;}"]
    css += [_box_css(prefix, height) for prefix, height in (boxes or {}).items()]
    for prefix in wrap_buttons:
        sel = f'[class*="st-key-{prefix}"] button'
        css.append(f"{sel} {{height: auto; min-height: 2.5rem; padding-top: 0.25rem; padding-bottom: 0.25rem;}}")
        css.append(f"{sel} [data-testid='stMarkdownContainer'], {sel} [data-testid='stMarkdownContainer'] p "
                   "{white-space: normal; overflow: visible; text-overflow: clip; line-height: 1.2; font-size: 0.9rem;}")
    if slot:
        sel = f".st-key-{slot}"
        css.append(f"{sel} {{height: 2.6rem; min-height: 2.6rem; overflow-y: auto; flex-shrink: 0;}}")
        css.append(f"{sel} [data-testid='stAlert'] > div {{padding: 0.3rem 0.75rem; min-height: 0;}}")
        css.append(f"{sel} [data-testid='stAlertContainer'] {{padding: 0.3rem 0.75rem; min-height: 0;}}")
    st.html("<style>\n" + "\n".join(css) + "\n</style>")


# After a click on a button, toggle, radio or an option of a select box, the focus stays on that control, and
# Streamlit's shortcuts do not fire while a control holds the focus: keys "stop working after a click". The
# focus goes back to the page once the click is done (never out of a text field: typing stays there).
# A key that arrives before that (the browser runs input before timers: a busy page, a fast hand; 1 CI run and 3 local
# runs in 15 lost "2" pressed 5-10 ms after a click on a radio) while a toggle or radio holds the focus is taken from
# the control and sent again from the page, so it reaches Streamlit's shortcuts. Only a printable key without Ctrl,
# Alt or Cmd: Space, Tab, the arrows, Enter and Esc stay with the control.
_KEYS_AFTER_CLICK_JS = """
(() => {
  const marker = %(marker)s;
  if (window.__medevalKeysAfterClick) { window.__medevalKeysAfterClick.add(marker); return; }
  window.__medevalKeysAfterClick = new Set([marker]);
  const active = () => [...window.__medevalKeysAfterClick].some(m => document.querySelector('.st-key-' + m));
  const typing = el => el && (el.tagName === 'TEXTAREA' || (el.tagName === 'INPUT' &&
      !['checkbox', 'radio', 'button', 'submit', 'range'].includes(el.type) && el.getAttribute('role') !== 'combobox'));
  const release = () => {
    const el = document.activeElement;
    if (!active() || !el || el === document.body || typing(el)) return;
    if (el.closest('[role="dialog"]') || el.closest('[data-baseweb="popover"]')) return;
    if (el.getAttribute('role') === 'combobox' && el.getAttribute('aria-expanded') === 'true') return;
    el.blur();
  };
  document.addEventListener('click', () => setTimeout(release, 0), true);
  window.addEventListener('keydown', (e) => {
    const el = e.target;
    if (!e.isTrusted || !active() || !el || el.tagName !== 'INPUT' || !['checkbox', 'radio'].includes(el.type)) return;
    if (e.key.length !== 1 || e.key === ' ' || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    if (el.closest('[role="dialog"]') || el.closest('[data-baseweb="popover"]')) return;
    e.preventDefault(); e.stopImmediatePropagation();
    el.blur();
    document.body.dispatchEvent(new KeyboardEvent('keydown', {key: e.key, code: e.code, keyCode: e.keyCode,
      which: e.which, shiftKey: e.shiftKey, repeat: e.repeat, location: e.location, bubbles: true, cancelable: true}));
  }, true);
  document.addEventListener('change', () => setTimeout(release, 0), true);
  // a select box keeps the focus after an option is picked: release it once the menu has closed
  new MutationObserver(() => {
    const el = document.activeElement;
    if (active() && el && el.getAttribute('role') === 'combobox' && el.getAttribute('aria-expanded') === 'false'
        && !el.closest('[role="dialog"]')) el.blur();
  }).observe(document.body, {attributes: true, subtree: true, attributeFilter: ['aria-expanded']});
})();
"""


def keys_after_clicks(marker: str) -> None:
    """Give the keyboard back to the page after a click on a control, while an element of the key ``marker`` (one
    the page always draws) is on screen."""
    st.html(f"<script>{_KEYS_AFTER_CLICK_JS % {'marker': _js(marker)}}</script>", unsafe_allow_javascript=True)


# One key that puts the cursor in a text field (Adjudicate's R: the reason), pressed anywhere but in a text field,
# while the page's marker is on screen. Taken before Streamlit's own shortcuts (its R reruns the page).
_KEY_TO_FOCUS_JS = """
(() => {
  const cfg = %(cfg)s;
  window.__medevalKeyToFocus = window.__medevalKeyToFocus || {};
  const id = cfg.marker + ':' + cfg.key;
  if (window.__medevalKeyToFocus[id]) return;
  window.__medevalKeyToFocus[id] = true;
  window.addEventListener('keydown', (e) => {
    if (e.key.toLowerCase() !== cfg.key || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const t = e.target;
    if (t && t.closest && t.closest('input:not([type="checkbox"]):not([type="radio"]), textarea, select, '
                                    + '[contenteditable="true"], [role="dialog"]')) return;
    if (!document.querySelector('.st-key-' + cfg.marker)) return;
    const el = document.querySelector(cfg.selector);
    if (!el) return;
    e.preventDefault(); e.stopImmediatePropagation();
    if (t && t.blur && t !== document.body) t.blur();
    el.scrollIntoView({block: 'nearest'});
    el.focus();
  }, true);
})();
"""


def key_to_focus(marker: str, key: str, selector: str) -> None:
    """Pressing ``key`` (a letter; our own) outside a text field puts the cursor in the element ``selector`` (our own
    CSS selector), while an element of the key ``marker`` is on screen."""
    cfg = {"marker": marker, "key": key.lower(), "selector": selector}
    st.html(f"<script>{_KEY_TO_FOCUS_JS % {'cfg': _js(cfg)}}</script>", unsafe_allow_javascript=True)


_FOCUS_JS = """
(() => {
  const selector = %(selector)s;
  let tries = 0;
  const go = () => {
    const el = document.querySelector(selector);
    if (el) { el.scrollIntoView({block: 'nearest'}); if (document.activeElement !== el) el.focus(); return; }
    if (++tries < 100) setTimeout(go, 50);
  };
  go();
})();
"""


def focus(selector: str) -> None:
    """Put the keyboard focus in the element ``selector`` (our own CSS selector) once it is drawn."""
    st.html(f"<script>{_FOCUS_JS % {'selector': _js(selector)}}</script>", unsafe_allow_javascript=True)


# ---------------------------------------------------------------- a key counts only for the item on screen

SETTLE_MS = 500  # a new item (or question) takes keys half a second after it appears: nobody reads an answer faster

# The one key guard of the work pages (issue 22 §1): Grade (``grade_<key>_<tier>``, ``skip_<key>``) and Rate &
# compare (``opt_<key>_<question>_<value>``, ``task_skip_<key>``) -- pages whose answer buttons are keyed
# ``<answer><screen>_<option>``. Capture listeners on window run before Streamlit's shortcut handler (hotkeys bound
# on document), so a dropped key never reaches any button.
# A new screen (the next item, an item's next question) takes no answer key and no click on its answer or skip
# buttons for SETTLE_MS after it appears; a screen takes one press; a second press within SETTLE_MS is dropped (a key
# bounce, a quick "1 then 2"). A later second press reaches the server, which refuses it (the item or question
# already has its answer: ``campaigns.StaleGrade``, ``tasks.StaleAnswer``): nothing is saved for an unseen item.
# ``<body data-<ready>="<screen>">`` says the screen on display takes keys (tests wait for it).
# ``note`` (optional): a keyed container holding a note form (Grade's F): its text field gets the focus, in view, when
# it opens; Enter clicks its ``save`` button and Esc its ``cancel`` button.
_GUARD_JS = """
(() => {
  const cfg = %(cfg)s;
  window.__medevalKeyGuards = window.__medevalKeyGuards || {};
  const installed = window.__medevalKeyGuards[cfg.name];
  if (installed) {  // the keys of the question now on screen; the note's buttons in the language now on screen
    installed.keys = new Set(cfg.keys);
    if (cfg.note && installed.cfg && installed.cfg.note) Object.assign(installed.cfg.note, cfg.note);
    return;
  }
  const G = window.__medevalKeyGuards[cfg.name] = {keys: new Set(cfg.keys), cfg};
  const ANSWER = new RegExp('^st-key-' + cfg.answer + '(.+)_[^_]+$');
  const seen = new Map(), pressed = new Map();
  let note = null;
  const screens = () => {
    const ids = new Set();
    document.querySelectorAll('[class*="st-key-' + cfg.answer + '"]').forEach((el) => {
      for (const c of el.classList) { const m = ANSWER.exec(c); if (m) ids.add(m[1]); }
    });
    return [...ids];
  };
  const refresh = () => {
    const now = performance.now(), ids = screens();
    for (const id of [...seen.keys()]) if (!ids.includes(id)) { seen.delete(id); pressed.delete(id); }
    for (const id of ids) if (!seen.has(id)) { seen.set(id, now); setTimeout(refresh, cfg.settle + 30); }
    const ready = ids.length === 1 && now - seen.get(ids[0]) >= cfg.settle ? ids[0] : '';
    if ((document.body.dataset[cfg.ready] || '') !== ready) document.body.dataset[cfg.ready] = ready;
    if (!cfg.note) return;
    const input = document.querySelector('.st-key-' + cfg.note.box + ' input[type="text"], .st-key-' + cfg.note.box
                                          + ' textarea');
    if (input && input !== note) { note = input; input.scrollIntoView({block: 'center'}); input.focus(); }
    if (!input) note = null;
  };
  let cueTimer = null;
  const flash = (reason) => {  // the page's cue line says why a key did nothing, for a moment
    if (!cfg.cue) return;
    document.body.dataset[cfg.cue] = reason;
    clearTimeout(cueTimer);
    cueTimer = setTimeout(() => { document.body.dataset[cfg.cue] = ''; }, cfg.cueMs);
  };
  const held = (id) => cfg.hold && document.body.dataset[cfg.hold] === id;
  const allow = (id, answering) => {
    const now = performance.now();
    if (!seen.has(id) || now - seen.get(id) < cfg.settle) { flash('soon'); return false; }
    if (pressed.has(id) && now - pressed.get(id) < cfg.settle) { flash('twice'); return false; }
    if (answering && held(id)) { flash('held'); return false; }
    pressed.set(id, now);
    return true;
  };
  const drop = (e) => { e.preventDefault(); e.stopImmediatePropagation(); };
  const editing = (t) => t && t.closest && t.closest('input, textarea, select, [contenteditable="true"]');
  const noteButton = (label) => [...document.querySelectorAll('.st-key-' + cfg.note.box + ' button')]
    .find((b) => b.textContent.trim() === label);
  window.addEventListener('keydown', (e) => {
    if (editing(e.target)) {
      if (!cfg.note || !e.target.closest('.st-key-' + cfg.note.box) || e.isComposing) return;
      const b = e.key === 'Enter' ? noteButton(cfg.note.save) : e.key === 'Escape' ? noteButton(cfg.note.cancel) : null;
      if (b) { drop(e); e.target.blur(); setTimeout(() => b.click(), 0); }
      return;
    }
    if (!G.keys.has(e.key) || e.ctrlKey || e.metaKey || e.altKey) return;
    refresh();
    const ids = screens();
    if (ids.length === 0) return;
    if (ids.length > 1 || e.repeat) { flash(e.repeat ? 'twice' : 'soon'); drop(e); return; }
    const first = document.querySelector('[class*="st-key-' + cfg.answer + '"] button');
    if (first && first.disabled) return;  // locked (flag note, guidelines): Streamlit ignores the key itself
    if (!allow(ids[0], !cfg.free.includes(e.key.toLowerCase()))) drop(e);
  }, true);
  window.addEventListener('click', (e) => {
    const el = e.target && e.target.closest && e.target.closest('button');
    const box = el && el.closest('[class*="st-key-' + cfg.answer + '"], [class*="st-key-' + cfg.skip + '"]');
    if (!box) return;
    refresh();
    const ids = screens();
    const answering = !box.closest('[class*="st-key-' + cfg.skip + '"]');
    if (ids.length !== 1 || !allow(ids[0], answering)) drop(e);
  }, true);
  new MutationObserver(refresh).observe(document.body, {childList: true, subtree: true});
  refresh();
})();
"""

_KEY_NAMES = {"left": "ArrowLeft", "right": "ArrowRight", "up": "ArrowUp", "down": "ArrowDown"}


def all_answered(done: int, total: int, skipped: int, *, finished: str, every: str, revisit: str, revisit_key: str,
                 on_revisit, guidelines_button, columns: int) -> None:
    """The screen after the last item, the same on Grade and Rate & compare (each in its own words): the full
    progress bar; the count of skipped items and a button back to them (``on_revisit(True)``), or the thanks
    ("All N items are ``finished``": "graded" or "done", :data:`_FINISHED`); and the guidelines button in the first
    of ``columns`` (G works here too). ``every`` and ``revisit`` are English marked ``N_()`` (shown with ``_()``).
    ``done``: the items passed, answered or skipped; ``skipped``: those skipped -- real and hidden gold items alike
    in both, as the library counts them."""
    # one count per thing: the answered, and the skipped apart (a skip is not an answer)
    st.progress(1.0, text=(_("{answered} of {total} answered · {skipped} skipped") if skipped else
                           _("{answered} of {total} answered")).format(answered=done - skipped, total=total,
                                                                       skipped=skipped))
    if skipped:
        st.info(("" if current() == "zh-CN" else " ").join(
            (_(every), _("{skipped} skipped: they wait for you.").format(skipped=skipped))))
        st.button(_(revisit), key=revisit_key, type="primary", on_click=on_revisit, args=(True,))
    else:
        thanks = _FINISHED.get(finished) or _FINISHED["done"]
        st.success(_(thanks).format(total=total))
    guidelines_button(st.columns(columns)[0])


# the thanks after the last item, by what the items were (``all_answered``'s ``finished``), each sentence whole
_FINISHED = {"graded": N_("All {total} items are graded. Thank you!"),
             "done": N_("All {total} items are done. Thank you!")}


CUE_MS = 1600  # how long the cue line says why a key did nothing


def key_guard(name: str, *, answer: str, skip: str, keys: list[str], ready: str,
              note: dict[str, str] | None = None, hold: str | None = None, cue: str | None = None,
              free: list[str] | tuple[str, ...] = ()) -> None:
    """Install the key guard once per tab for a page whose answer buttons' keys start with ``answer`` (``skip``: the
    skip button's); ``keys``: the shortcuts (as ``st.button(shortcut=...)`` takes them) it watches; ``ready``: the
    ``document.body.dataset`` name of the marker; ``note``: ``{"box": <container key>, "save": <label>,
    "cancel": <label>}`` of a note form to make keyboard-first (the labels in English marked ``N_()``: the guard
    looks for them in the reader's language); ``hold``: the ``document.body.dataset`` name that
    holds the answer keys while it names the screen on display (:mod:`webui.reading`: a long text not yet read to
    its end); ``free``: keys that answer nothing and are never held (skip); ``cue``: the ``document.body.dataset``
    name set for a moment to why a key was dropped ("soon": a new screen, "twice": a second press, "held"), which
    the page's styles turn into a line on screen. Our own static settings, never data."""
    if note:
        note = {**note, **{b: _(note[b]) for b in ("save", "cancel") if b in note}}
    names = sorted({k2 for k in keys for k2 in ((_KEY_NAMES[k.lower()],) if k.lower() in _KEY_NAMES
                                               else (k.lower(), k.upper()))})
    cfg = {"name": name, "answer": answer, "skip": skip, "keys": names, "ready": ready, "settle": SETTLE_MS,
           "note": note, "hold": hold, "cue": cue, "cueMs": CUE_MS, "free": [k.lower() for k in free]}
    st.html(f"<script>{_GUARD_JS % {'cfg': _js(cfg)}}</script>", unsafe_allow_javascript=True)


ANSWERS_PAGE = 20  # answers listed at a time in "Your answers in this campaign"
_FILTERS = {"all": N_("All"), "answered": N_("Answered"), "skipped": N_("Skipped"), "flagged": N_("Flagged")}
# "No item of yours in this campaign is <filter>.", by filter, each sentence whole
_NONE = {"answered": N_("No item of yours in this campaign is answered."),
         "skipped": N_("No item of yours in this campaign is skipped."),
         "flagged": N_("No item of yours in this campaign is flagged.")}


def my_answers_list(prefix: str, *, read, line, on_reopen, reopened: str | None, editable: bool) -> None:
    """"Your answers in this campaign" on a work page (Grade, Rate & compare): a toggle, then -- drawn only when
    opened, so a key redraws less -- a filter (all / answered / skipped / flagged) and every item the annotator
    answered, newest first, ``ANSWERS_PAGE`` at a time, each with a Reopen button while the campaign is open.

    ``read(status or None)``: the answers (objects with ``ref``, ``key``); ``line(answer)``: (the item's text on one
    line, its answer in words), both drawn as plain text; ``on_reopen(ref)``: the button's callback; ``reopened``:
    the ref on screen again now (its button is off). Widget keys start with ``prefix``."""
    shown = st.session_state.get(f"{prefix}_open", False)

    def toggle() -> None:
        st.session_state[f"{prefix}_open"] = not shown

    st.button(_("Your answers in this campaign — reopen one to change it"), key=f"{prefix}_toggle", type="tertiary",
              icon=":material/expand_less:" if shown else ":material/expand_more:", on_click=toggle)
    if not shown:
        return
    with st.container(border=True, key=f"{prefix}_list"):
        which = st.radio(_("Show"), list(_FILTERS), horizontal=True, key=f"{prefix}_filter",
                         label_visibility="collapsed", format_func={f: _(t) for f, t in _FILTERS.items()}.get)
        mine = read(None if which == "all" else which)
        if not mine:
            st.caption(_("You have no answers in this campaign yet.") if which == "all" else _(_NONE[which]))
        limit = st.session_state.get(f"{prefix}_limit", ANSWERS_PAGE)
        for g in mine[:limit]:
            text, said = line(g)
            c1, c2 = st.columns([5, 1], vertical_alignment="center")
            c1.text(text)  # imported text: plain
            c1.caption(md_escape(said))  # a rubric's own words may be in it: shown literally
            if editable:
                c2.button(_("Reopen"), key=f"reopen_{g.key}", width="stretch", on_click=on_reopen, args=(g.ref,),
                          disabled=reopened == g.ref,
                          help=_("Show this item again, whole, and answer it anew (your earlier answer is kept "
                                 "in the history)"))
        if len(mine) > limit:
            st.button(_("Show {n} more of {total}").format(n=min(ANSWERS_PAGE, len(mine) - limit), total=len(mine)),
                      key=f"{prefix}_more",
                      type="tertiary", on_click=lambda: st.session_state.__setitem__(f"{prefix}_limit",
                                                                                      limit + ANSWERS_PAGE))
