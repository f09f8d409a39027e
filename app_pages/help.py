"""Help: the repository's README.md as the user guide, one section at a time or whole.

It opens with how to use the page the user came from (``?from=<url path>``, else the last page of this session,
which app.py records in ``help_from``), then the guide: using medeval first, installing and running it last.
``/help?section=<slug>`` (the "Read more" links of the start-here panels) shows one "## " or "### " section. The
README is our own text, so it is rendered as Markdown (never HTML); its image lines are drawn from the repository.
"""

import streamlit as st

from medeval.accounts import hints
from webui import help as guide
from webui import page as ui

user = ui.require_page("help")
st.title("Help")


def _whole_guide() -> None:
    st.query_params.pop("section", None)


def _restore_tips() -> None:
    with ui.db() as d:
        st.session_state["help_restored"] = hints.restore(d, user)


try:
    secs = guide.sections(guide.README.read_text(encoding="utf-8"))
except OSError as e:
    st.error(ui.md_escape(f"The guide (README.md) cannot be read: {e}"))
    st.stop()

def _draw(sec) -> None:
    for part in sec.parts:
        if part[0] == "image":
            file = guide.image_file(part[2])
            if file is None:
                st.caption(ui.md_escape(f"(picture not available: {part[1] or part[2]})"))
            else:
                st.image(str(file), caption=part[1] or None)
        else:
            st.markdown(part[1])


text = guide.README.read_text(encoding="utf-8")
wanted = st.query_params.get("section")
chosen = guide.find(secs, wanted) or guide.find(guide.subsections(text), wanted)
if wanted and chosen is None:
    st.info("That part of the guide does not exist (any more); here is the whole guide.")
if chosen is not None:
    st.button("Show the whole guide", key="help_whole", on_click=_whole_guide, icon=":material/menu_book:")
    _draw(chosen)
else:
    came_from = st.query_params.get("from") or st.session_state.get("help_from")
    here = guide.page_help(text, came_from)
    if here is not None:  # first what the user needs now: how to use the page they came from
        with st.container(border=True, key="help_this_page"):
            st.subheader(f"How to use {here.title}", anchor=False)
            st.markdown(here.body)
            if here.related:
                st.markdown("More: " + " · ".join(f"[{t}](/help?section={s})" for t, s in here.related))
    using, setup = guide.ordered(secs)
    for sec in using:
        _draw(sec)
    if setup:
        st.divider()
        st.subheader("Installing and running medeval", anchor=False)
        st.caption("For whoever installs and looks after medeval (an administrator or a researcher).")
        for sec in setup:
            _draw(sec)

st.divider()
if (n := st.session_state.pop("help_restored", None)) is not None:
    st.success("The start-here tips are shown again." if n else "No start-here tip was hidden.")
st.button("Show the start-here tips again", key="help_restore_tips", on_click=_restore_tips,
          help="The short panels at the top of your first pages, which you hid with \"Got it, hide this\".")
