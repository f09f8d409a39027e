"""The Rate & compare page's screen in the browser: what the question asked now needs, side by side, whole.

The page draws the columns :func:`medeval.annotation.tasks.layout.reading` gives -- the context, and the block(s)
the question is about -- each as one box of plain texts (:func:`column`), and the question with its options in a
form below them. :mod:`webui.reading` sizes the boxes to the screen, marks a longer text "more below", and holds the
option keys until each long box was read to its end; the key guard (:mod:`webui.screen`) says why a key did nothing.
Everything here is our own static markup: the texts of an item are drawn by ``st.text`` (plain text).
"""

from __future__ import annotations

import streamlit as st

from medeval.core.i18n import N_, _
from webui import reading
from webui.page import md_escape

HELD, CUE = "taskHeld", "taskCue"
SLOT = "task_hold"  # the line above the options: the keys' legend, or why the keys wait
BOXES = [f"read_{n}" for n in range(4)]  # the columns (a context and at most three blocks rated side by side)
# the keys' legend above the options (English marked N_(): shown with _() by legend())
LEGEND = N_("Keys: the key on each button · S skip · F flag · G guidelines")
LEGEND_EARLIER = N_("Keys: the key on each button · S skip · F flag · G guidelines · E earlier questions")


def legend(*, earlier: bool = False) -> str:
    """The keys' legend (with E where the case has earlier questions), in the reader's language."""
    return _(LEGEND_EARLIER if earlier else LEGEND)


SCREEN_CSS = "<style>" + reading.PAGE_CSS + """
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] p { margin-bottom: 0; }
.st-key-task_status { height: 2.4rem; min-height: 2.4rem; overflow: hidden; flex-shrink: 0; justify-content: center; }
.st-key-task_status [data-testid="stAlertContainer"] { padding: 0.3rem 0.75rem; min-height: 0; }
[class*="st-key-read_"] { padding: 0.5rem 0.75rem; gap: 0.15rem; }
[class*="st-key-read_"] [data-testid="stText"] { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.95rem;
  line-height: 1.45; }
[class*="st-key-read_"] [data-testid="stMarkdownContainer"] { margin-bottom: 0 !important; }
[class*="st-key-read_"] [data-testid="stMarkdownContainer"] p { font-size: 0.85rem; font-weight: 600; color: #555;
  margin: 0.25rem 0 0;
  line-height: 1.3; }
.st-key-task_folded { max-height: 14rem; overflow-y: auto; }
.st-key-task_form [data-testid="stForm"] { padding: 0; border: none; }
[class*="st-key-ask_"] { gap: 0.3rem; padding: 0.5rem 0.75rem; }
[class*="st-key-ask_"] button { height: auto; min-height: 2.4rem; padding-top: 0.2rem; padding-bottom: 0.2rem; }
[class*="st-key-ask_"] button [data-testid="stMarkdownContainer"], [class*="st-key-ask_"] button
  [data-testid="stMarkdownContainer"] p { white-space: normal; overflow: visible; text-overflow: clip; line-height: 1.2;
  font-size: 0.9rem; }
.st-key-task_hold { min-height: 1.3rem; justify-content: center; }
</style>"""


def install() -> None:
    """The screen's styles (our own static markup: never data); the cue lines' texts in the reader's language, made
    on each run (never at import: the language is the signed-in person's)."""
    st.html(SCREEN_CSS)
    st.html(reading.cue_css(held=HELD, slot=SLOT, hold_text=reading.hold_text("answer"), more_text=_(reading.MORE_TEXT),
                            boxes=BOXES, cue=CUE, cue_texts=reading.cue_texts("question")))


def column(box: str, blocks) -> None:
    """One box (the keyed container ``box``, which webui/reading.py measures) of blocks: each one's label and its
    text, exactly as written (plain text: no Markdown, no HTML)."""
    with st.container(border=True, key=box):
        for b in blocks:
            st.markdown(md_escape(b.label))  # a label may carry an imported name (a case title): plain text
            st.text(b.text if b.text else _("(empty)"))
