"""The Grade page's screen in the browser: which key press counts, and one item on one screen.

**A grade is always for the item on screen.** Every grade (1 / 2 / 3) and skip (S) button is keyed by the item
it was drawn for (``grade_<item>_<tier>``, ``skip_<item>``), so a press carries that item's identity, and the page
stores it only when that item is the one the server drew last (``drawn_ref``); a press for the item just answered
is refused by the library (``StaleGrade``: nothing saved) and a press for an item that was never drawn has no
button to reach. What remains is time: a second key pressed 10-300 ms after the first can reach the *next* item's
buttons a few milliseconds after they appear, before the doctor has read a word of it. :data:`GUARD_JS`, installed
once per browser tab, closes that gap in the browser, before Streamlit's own shortcut handler sees the key:

* a new item takes no grade key and no click on its grade/skip buttons for :data:`SETTLE_MS` after it appears;
* an item takes one grade press; a second press on it within :data:`SETTLE_MS` is dropped (a key bounce, a
  double click, a quick "1 then 2"). A later second press reaches the server, which refuses it (the item already
  has its answer): a grade is changed only with "Your last answers — change one", recorded as a change.

The guard marks ``<body data-grade-ready="<item>">`` once the item on screen takes keys (tests wait for it).
It also makes F's flag note keyboard-first: the note gets the focus (in view) when it opens, Enter saves the
flag, Esc cancels it.

The model's answer is untrusted text: nothing here puts it into HTML (the pages draw it with ``st.text``).
"""

from __future__ import annotations

import os
import time

import streamlit as st

SETTLE_MS = 500  # a new item takes keys half a second after it appears: nobody reads an answer faster

# Our own static script (no data in it). Capture listeners on window run before Streamlit's shortcut handler
# (hotkeys bound on document), so a dropped key never reaches any button.
GUARD_JS = """<script>
(() => {
  if (window.__medevalGradeGuard) return;
  window.__medevalGradeGuard = true;
  const SETTLE = %(settle)d;
  const KEYS = new Set(['1', '2', '3', 's', 'S']);
  const seen = new Map(), pressed = new Map();
  let note = null;
  const idOf = (el) => {
    for (const c of el.classList) {
      const m = /^st-key-(?:grade_(.+)_[0-2]|skip_(.+))$/.exec(c);
      if (m) return m[1] || m[2];
    }
    return null;
  };
  const items = () => {
    const ids = new Set();
    document.querySelectorAll('[class*="st-key-grade_"]').forEach((el) => {
      for (const c of el.classList) { const m = /^st-key-grade_(.+)_[0-2]$/.exec(c); if (m) ids.add(m[1]); }
    });
    return [...ids];
  };
  const refresh = () => {
    const now = performance.now(), ids = items();
    for (const id of [...seen.keys()]) if (!ids.includes(id)) { seen.delete(id); pressed.delete(id); }
    for (const id of ids) if (!seen.has(id)) { seen.set(id, now); setTimeout(refresh, SETTLE + 30); }
    const ready = ids.length === 1 && now - seen.get(ids[0]) >= SETTLE ? ids[0] : '';
    if ((document.body.dataset.gradeReady || '') !== ready) document.body.dataset.gradeReady = ready;
    const input = document.querySelector('.st-key-gradeflag input[type="text"], .st-key-gradeflag textarea');
    if (input && input !== note) { note = input; input.scrollIntoView({block: 'center'}); input.focus(); }
    if (!input) note = null;
  };
  const allow = (id) => {
    const now = performance.now();
    if (!seen.has(id) || now - seen.get(id) < SETTLE) return false;
    if (pressed.has(id) && now - pressed.get(id) < SETTLE) return false;
    pressed.set(id, now);
    return true;
  };
  const drop = (e) => { e.preventDefault(); e.stopImmediatePropagation(); };
  const editing = (t) => t && t.closest && t.closest('input, textarea, select, [contenteditable="true"]');
  const flagButton = (label) => [...document.querySelectorAll('.st-key-gradeflag button')]
    .find((b) => b.textContent.trim() === label);
  window.addEventListener('keydown', (e) => {
    if (editing(e.target)) {
      if (!e.target.closest('.st-key-gradeflag') || e.isComposing) return;
      const b = e.key === 'Enter' ? flagButton('Save flag') : e.key === 'Escape' ? flagButton('Cancel') : null;
      if (b) { drop(e); e.target.blur(); setTimeout(() => b.click(), 0); }
      return;
    }
    if (!KEYS.has(e.key) || e.ctrlKey || e.metaKey || e.altKey) return;
    refresh();
    const ids = items();
    if (ids.length === 0) return;
    if (ids.length > 1 || e.repeat) { drop(e); return; }
    const first = document.querySelector('.st-key-grade_' + CSS.escape(ids[0]) + '_0 button');
    if (first && first.disabled) return;  // locked (flag note, guidelines): Streamlit ignores the key itself
    if (!allow(ids[0])) drop(e);
  }, true);
  window.addEventListener('click', (e) => {
    const el = e.target && e.target.closest && e.target.closest('[class*="st-key-grade_"], [class*="st-key-skip_"]');
    const id = el && idOf(el);
    if (id === null || id === undefined || !e.target.closest('button')) return;
    refresh();
    if (!allow(id)) drop(e);
  }, true);
  new MutationObserver(refresh).observe(document.body, {childList: true, subtree: true});
  refresh();
})();
</script>"""

# One item on one screen: the page's top padding shrunk (Streamlit's header is 3.75 rem), the status line a slot of
# constant height, reference and answer in boxes of at most MAX_TEXT that scroll on their own.
MAX_TEXT = "10rem"
SCREEN_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.5rem; padding-bottom: 2rem; }
.st-key-gradestatus { height: 2.6rem; min-height: 2.6rem; overflow: hidden; justify-content: center; }
.st-key-gradestatus [data-testid="stAlert"] > div { padding: 0.45rem 0.8rem; }
.st-key-gradestatus [data-testid="stAlertContainer"] { padding: 0.45rem 0.8rem; }
.st-key-gradestatus p { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.st-key-item_reference, .st-key-item_response { max-height: %(max)s; overflow: auto; }
.st-key-gradeitem { gap: 0.5rem; }
.st-key-gradeitem [data-testid="stCaptionContainer"] p { margin-bottom: 0; }
</style>"""


def install() -> None:
    """The key guard and the screen's styles (our own static markup: never data)."""
    st.html(GUARD_JS % {"settle": SETTLE_MS}, unsafe_allow_javascript=True)
    st.html(SCREEN_CSS % {"max": MAX_TEXT})


def test_submit_delay() -> None:
    """A slow server, for the browser tests only: ``MEDEVAL_TEST_SUBMIT_DELAY_MS`` milliseconds before a grade is
    saved (unset everywhere else; not a setting of medeval)."""
    raw = os.environ.get("MEDEVAL_TEST_SUBMIT_DELAY_MS", "")
    if raw.isdigit() and int(raw) > 0:
        time.sleep(min(int(raw), 10_000) / 1000)
