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

from webui import screen
from webui.screen import SETTLE_MS  # noqa: F401 (the pages' and tests' name for it)

# Grade's settings of the one key guard (webui/screen.py): the grade and skip buttons, keys 1 2 3 S, the flag note.
GUARD = dict(answer="grade_", skip="skip_", keys=["1", "2", "3", "S"], ready="gradeReady",
             note={"box": "gradeflag", "save": "Save flag", "cancel": "Cancel"})

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
.st-key-gradekeys > *, .st-key-gradeother > * { flex: 1 1 0; min-width: 0; }
.st-key-gradeitem [data-testid="stCaptionContainer"] p { margin-bottom: 0; }
</style>"""


def install() -> None:
    """The key guard and the screen's styles (our own static markup: never data)."""
    screen.key_guard("grade", **GUARD)
    st.html(SCREEN_CSS % {"max": MAX_TEXT})


def test_submit_delay() -> None:
    """A slow server, for the browser tests only: ``MEDEVAL_TEST_SUBMIT_DELAY_MS`` milliseconds before a grade is
    saved (unset everywhere else; not a setting of medeval)."""
    raw = os.environ.get("MEDEVAL_TEST_SUBMIT_DELAY_MS", "")
    if raw.isdigit() and int(raw) > 0:
        time.sleep(min(int(raw), 10_000) / 1000)
