"""The Grade page's screen in the browser: which key press counts, and one item on one screen.

**A grade is always for the item on screen.** Every grade (1 / 2 / 3) and skip (S) button is keyed by the item
it was drawn for (``grade_<key>_<tier>``, ``skip_<key>``, where ``<key>`` is the item's opaque per-annotator screen
key, :func:`medeval.annotation.screen_keys.screen_key`), so a press carries that item's identity, and the page
stores it only when that item is the one the server drew last (``drawn_ref``); a press for the item just answered
is refused by the library (``StaleGrade``: nothing saved) and a press for an item that was never drawn has no
button to reach. What remains is time: a second key pressed 10-300 ms after the first can reach the *next* item's
buttons a few milliseconds after they appear, before the doctor has read a word of it. The work pages' one key
guard (:func:`webui.screen.key_guard` with Grade's settings :data:`GUARD`), installed once per browser tab, closes
that gap in the browser, before Streamlit's own shortcut handler sees the key:

* a new item takes no grade key and no click on its grade/skip buttons for :data:`SETTLE_MS` after it appears;
* an item takes one grade press; a second press on it within :data:`SETTLE_MS` is dropped (a key bounce, a
  double click, a quick "1 then 2"). A later second press reaches the server, which refuses it (the item already
  has its answer): a grade is changed only with "Your last answers — change one", recorded as a change.

The guard marks ``<body data-grade-ready="<key>">`` once the item on screen takes keys (tests wait for it).
It also makes F's flag note keyboard-first: the note gets the focus (in view) when it opens, Enter saves the
flag, Esc cancels it.

The model's answer is untrusted text: nothing here puts it into HTML (the pages draw it with ``st.text``).
"""

from __future__ import annotations

import os
import time

import streamlit as st

from medeval.core.i18n import N_
from webui import reading, screen
from webui.screen import SETTLE_MS  # noqa: F401 (the pages' and tests' name for it)

# Grade's settings of the one key guard (webui/screen.py): the grade and skip buttons, keys 1 2 3 S, the flag note;
# the grade keys (not S) wait while a long text has not been read to its end (webui/reading.py).
HELD, CUE = "gradeHeld", "gradeCue"
GUARD = dict(answer="grade_", skip="skip_", keys=["1", "2", "3", "S"], ready="gradeReady",
             note={"box": "gradeflag", "save": N_("Save flag"), "cancel": N_("Cancel")}, hold=HELD, cue=CUE,
             free=["s"])  # (the note's button labels in English: the guard finds them in the reader's language)

# The reading area: reference and answer side by side, each as tall as the screen allows (webui/reading.py).
BOXES = ["item_reference", "item_response"]
KEYS_BOX = "gradekeys"  # the answer buttons: the boxes grow down to just above them
SLOT = "gradeform"  # the answer form's container: a line above its buttons says why the keys wait (the buttons show their keys)
HOLD_TEXT = reading.hold_text("grade")
MORE_TEXT = reading.MORE_TEXT
CUE_TEXTS = reading.cue_texts("item")

# One item on one screen: the whole width, the page's top padding shrunk (Streamlit's header is 3.75 rem), the
# status line a slot of constant height, reference and answer in boxes sized by webui/reading.py.
SCREEN_CSS = "<style>" + reading.PAGE_CSS + """
[data-testid="stMainBlockContainer"] [data-testid="stProgress"] p { margin-bottom: 0; }
.st-key-gradetop { height: 2.6rem; min-height: 2.6rem; overflow: hidden; flex-wrap: nowrap; gap: 1rem; }
.st-key-gradetop > :first-child { flex: 3 1 0; min-width: 0; }
.st-key-gradetop > :last-child { flex: 2 1 0; min-width: 0; }

.st-key-gradestatus { height: 2.4rem; min-height: 2.4rem; overflow: hidden; justify-content: center; }
.st-key-gradestatus [data-testid="stAlert"] > div { padding: 0.4rem 0.8rem; }
.st-key-gradestatus [data-testid="stAlertContainer"] { padding: 0.4rem 0.8rem; }
.st-key-gradestatus p { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.st-key-item_reference, .st-key-item_response { padding: 0.5rem 0.75rem; gap: 0; }
.st-key-item_reference [data-testid="stText"], .st-key-item_response [data-testid="stText"] {
  white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.95rem; line-height: 1.45; }
.st-key-gradeitem { gap: 0.4rem; }
.st-key-gradeitem [data-testid="stCaptionContainer"] p { margin-bottom: 0; }
.st-key-gradeform [data-testid="stForm"] { padding: 0; border: none; }
.st-key-open_guidelines { max-width: 14rem; }
.st-key-gradekeys > * { flex: 1 1 0; min-width: 0; }
.st-key-gradekeys > *:nth-child(n+4) { flex: 0.55 1 0; }

</style>"""


def install() -> None:
    """The key guard and the screen's styles (our own static markup: never data)."""
    screen.key_guard("grade", **GUARD)
    st.html(SCREEN_CSS)
    st.html(reading.cue_css(held=HELD, slot=SLOT, hold_text=HOLD_TEXT, more_text=MORE_TEXT, boxes=BOXES, cue=CUE,
                            cue_texts=CUE_TEXTS))


def test_submit_delay() -> None:
    """A slow server, for the browser tests only: ``MEDEVAL_TEST_SUBMIT_DELAY_MS`` milliseconds before a grade is
    saved (unset everywhere else; not a setting of medeval)."""
    raw = os.environ.get("MEDEVAL_TEST_SUBMIT_DELAY_MS", "")
    if raw.isdigit() and int(raw) > 0:
        time.sleep(min(int(raw), 10_000) / 1000)
