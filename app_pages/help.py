"""Help: the signed-in person's own guide -- a doctor's, an adjudicator's, a researcher's or an admin's -- with the
other guides one click away.

It opens with how to use the page the user came from (``?from=<url path>``, else the last page of this session, which
app.py records in ``help_from``): that page's section of the guide that explains it (``webui.help.PAGE_HELP``). Then
the guide: the role's own by default, another one chosen above it or with ``?guide=<name>``. ``/help?section=<slug>``
(the "Read more" links of the start-here panels; ``&guide=<name>`` picks the guide) shows one section. The guides are
our own Markdown files (docs/help/<language>/, in the reader's language: English where a guide has no translation),
rendered as Markdown (never HTML); their image lines are drawn only from picture files inside the repository
(``webui.help.image_file``).
"""

import streamlit as st

from medeval.accounts import hints
from medeval.core.i18n import _
from webui import help as guide
from webui import page as ui

user = ui.require_page("help")
st.title(_("Help"))
own = guide.role_guides(user.role)


def _restore_tips() -> None:
    with ui.db() as d:
        st.session_state["help_restored"] = hints.restore(d, user)


def _whole_guide(name: str) -> None:
    st.query_params.pop("section", None)
    st.query_params["guide"] = name
    st.session_state["help_guide"] = name


def _picked() -> None:
    # the choice goes into the address too, so a reload or a link opens the same guide
    picked = st.session_state.get("help_guide")
    if picked in guide.GUIDES:
        st.query_params["guide"] = picked


def _draw(parts, name: str) -> None:
    base = guide.guide_file(name).parent  # an image line's path starts at its guide's folder, as on GitHub
    for part in parts:
        if part[0] == "image":
            file = guide.image_file(part[2], base=base)
            if file is None:
                st.caption(ui.md_escape(_("(picture not available: {name})").format(name=part[1] or part[2])))
            else:
                st.image(str(file), caption=part[1] or None)
        else:
            st.markdown(part[1])


try:  # every guide, once a run (small files): a missing one is said at once, not on some later click
    guides = {name: guide.guide_sections(name) for name in guide.GUIDES}
except OSError as e:
    st.error(ui.md_escape(_("A guide cannot be read: {error}").format(error=e)))
    st.stop()
_load = guides.__getitem__

asked = st.query_params.get("guide")
wanted = st.query_params.get("section")
order = (asked, *own) if asked in guide.GUIDES else own
found = guide.locate(wanted, order, load=_load)
if wanted and found is None:
    st.info(_("That part of the guide does not exist (any more); here is the whole guide."))
if found is not None:
    name, sec = found
    st.button(_("Show the whole guide"), key="help_whole", on_click=_whole_guide, args=(name,),
              icon=":material/menu_book:")
    _draw(sec.parts, name)
else:
    came_from = st.query_params.get("from") or st.session_state.get("help_from")
    here = guide.page_help(came_from, load=_load)
    if here is not None:  # first what the user needs now: how to use the page they came from
        with st.container(border=True, key="help_this_page"):
            st.subheader(_("How to use {page}").format(page=_(here.title)), anchor=False)
            _draw(here.section.body(), here.guide)
            if here.related:
                links = " · ".join(f"[{t}]({guide.link(here.guide, s)})" for t, s in here.related)
                st.markdown(_("More: {links}").format(links=links))
    # the guide: the role's own unless another is asked for (the address, or the choice below, which it keeps)
    if asked in guide.GUIDES:
        st.session_state["help_guide"] = asked
    elif st.session_state.get("help_guide") not in guide.GUIDES:
        st.session_state["help_guide"] = own[0]
    st.segmented_control(_("Guide for"), list(guide.GUIDES), key="help_guide",
                         format_func=lambda name: _(guide.GUIDES[name]), required=True, on_change=_picked,
                         help=_("Your own guide is chosen first; the others explain the other roles' pages."))
    shown = st.session_state.get("help_guide") or own[0]
    for sec in _load(shown):
        if here is not None and here.guide == shown and sec.slug == here.section.slug:
            continue  # already above, as how to use the page the user came from
        _draw(sec.parts, shown)

st.divider()
if (n := st.session_state.pop("help_restored", None)) is not None:
    st.success(_("The start-here tips are shown again.") if n else _("No start-here tip was hidden."))
st.button(_("Show the start-here tips again"), key="help_restore_tips", on_click=_restore_tips,
          help=_("The short panels at the top of your first pages, which you hid with \"{got_it}\".").format(
              got_it=_("Got it, hide this")))
