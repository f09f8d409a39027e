"""Helpers every Streamlit page shares: who is signed in, role guards, database access, plain text.

Identity is looked up again on every rerun from the session cookie, so a sign-out,
an idle timeout, a disabled account or a changed role takes effect at the next click.
"""

from __future__ import annotations

import re
from html import escape as html_escape
from contextlib import contextmanager
from typing import Callable, Iterator

import sqlite_utils
import streamlit as st

from medeval.accounts import auth, hints
from medeval.accounts.auth import User
from medeval.annotation.guidelines import gate_state
from medeval.core import settings
from medeval.core.csvsafe import csv_text
from medeval.core.i18n import N_, _
from medeval.store.db import pooled

from . import COOKIE_NAME, SIGNIN_PATH, SIGNOUT_PATH, pages

# AppTest cannot send cookies; tests put a real session token here instead (only server code can set it).
TEST_TOKEN_KEY = "_medeval_session_token"


@contextmanager
def db() -> Iterator[sqlite_utils.Database]:
    """A connection for one operation, to itself until it ends (from the pool of the runtime ``server.py`` created:
    ``medeval.store.db.pooled``)."""
    with pooled(settings.db_path()) as d:
        yield d


def session_token(d: sqlite_utils.Database) -> str | None:
    cookie = st.context.cookies.get(COOKIE_NAME)
    if isinstance(cookie, str) and cookie:  # (under AppTest the cookie jar is a mock object)
        return auth.unsign_token(auth.secret_key(d), cookie)
    return st.session_state.get(TEST_TOKEN_KEY)


def current_user() -> User | None:
    """The user of this browser's live session, or None (signed out, timed out, disabled)."""
    with db() as d:
        return auth.session_user(d, session_token(d), idle_timeout=settings.idle_timeout())


def user() -> User | None:
    """The user ``app.py`` resolved for this rerun."""
    return st.session_state.get("user")


def require(*roles: str) -> User:
    """Stop the page unless a user with one of ``roles`` is signed in (the library checks again)."""
    u = user()
    if u is None:
        st.info(_("Sign in first."))
        signin_link()
        st.stop()
    if roles and u.role not in roles:
        st.error(_("This page is for the role {roles}; you are signed in as {role}.").format(
            roles=_(" or ").join(_(ROLE_NAMES[r]) for r in roles), role=_(ROLE_NAMES[u.role])))
        st.stop()
    return u


def require_page(url_path: str) -> User:
    """Stop the page at ``url_path`` unless the signed-in user may take its action (``webui.pages.PAGES``)."""
    return require(*pages.get(url_path).roles)


# the roles and a campaign's states as people read them (the stored values stay English identifiers)
ROLE_NAMES = {"annotator": N_("annotator"), "researcher": N_("researcher"), "admin": N_("admin"),
              "adjudicator": N_("adjudicator")}
STATUS_NAMES = {"open": N_("open"), "closed": N_("closed")}


def demo_mode() -> bool:
    return settings.value("MEDEVAL_DEMO")


def _link(href: str, text: str, testid: str) -> None:
    # our own static markup (never data): a plain link that opens in this tab
    st.html(f'<a href="{href}" target="_self" data-testid="{testid}" '
            f'style="font-size:0.95rem">{text}</a>')


def signin_link(next_path: str = "/") -> None:
    _link(f"{SIGNIN_PATH}?next={next_path}", html_escape(_("Sign in")), "medeval-signin")


def signout_link() -> None:
    """A "Sign out" that POSTs to /signout (a GET would let any site's link or image sign a user out)."""
    # our own static markup (never data): a one-button form that looks like the links next to it
    st.html(f'<form method="post" action="{SIGNOUT_PATH}" style="margin:0">'
            '<button type="submit" data-testid="medeval-signout" style="background:none;border:0;padding:0;'
            'font:inherit;font-size:0.95rem;color:inherit;text-decoration:underline;cursor:pointer">'
            f'{html_escape(_("Sign out"))}</button></form>')


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])")
# Places where Streamlit's Markdown turns text into something else *after* backslash escapes are resolved
# (remark-gfm's autolink literals run on the parsed text: "http://…", "www.…", "a@b.c"; Streamlit's
# ":material/…:" icons and emoji shortcodes): a word joiner there (invisible, zero width) stops it.
_AUTOLINKS = re.compile(r"(?<=[:@])(?=\S)|(?<=www)(?=\.)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def md_escape(text: str) -> str:
    """``text`` as Markdown that Streamlit shows exactly as written, to the eye: no link, image, emphasis,
    HTML, colour, icon, emoji, maths or heading, and no autolinked URL or e-mail address.

    Use it for every string that came from a file, a form or a user and is shown by an element that renders
    Markdown: ``st.title/header/subheader/markdown/caption/info/success/warning/error/write/toast``, and the
    labels and help texts of expanders, tabs, buttons, metrics and widgets. Every ASCII punctuation mark
    Markdown could read is backslash-escaped; an invisible word joiner (U+2060) goes after ``:`` and ``@``
    when text follows, and between ``www`` and ``.``, because the autolink, icon and emoji rewrites see the
    text after the escapes are resolved. (Copying such text copies the joiner too.) Prefer an element that
    does not render Markdown at all where one fits: ``st.text``, ``st.dataframe``, select box options.
    """
    return _MD_SPECIAL.sub(r"\\\1", _AUTOLINKS.sub(WORD_JOINER, str(text)))


def _id_from_url(param: str, ids: list[int]) -> int | None:
    """The id in the query parameter ``param`` if it is one of ``ids`` (anything else is ignored, silently)."""
    raw = st.query_params.get(param)
    value = int(raw) if isinstance(raw, str) and raw.isascii() and raw.isdigit() else None
    return value if value in ids else None


def sticky_choice(label: str, ids: list[int], *, key: str, param: str, default: int,
                  format_func: Callable[[int], str], show_single: bool = False,
                  label_visibility: str = "visible") -> int:
    """One of ``ids`` (campaign ids), chosen in a select box, that stays chosen until the user picks another.

    The choice is kept by id -- in session state and in the URL (``?<param>=<id>``, so a reload or a
    bookmark opens it) -- never by the select box's label: Streamlit's browser side sends back the label it
    was given, so when a label changes (a "3 of 9 done" count after an answer, a status) the widget would
    fall back to ``default`` and the page would switch to another campaign under the user's next key press.
    An id in the URL that is not in ``ids`` (a typo, someone else's campaign) is ignored. ``format_func``'s
    labels are shown as plain text (select box options do not render Markdown). With one id there is no
    select box unless ``show_single``.
    """
    chosen_key = f"{key}__chosen"

    def _picked() -> None:
        picked = st.session_state.get(key)
        if picked in ids:  # (not a stale label a rerun raced with: that changes nothing)
            st.session_state[chosen_key] = picked
            st.query_params[param] = str(picked)

    chosen = _id_from_url(param, ids)
    if chosen is None:
        chosen = st.session_state.get(chosen_key)
        if chosen not in ids:
            chosen = default
    st.session_state[chosen_key] = chosen  # shown once, kept: the page never moves on by itself
    if len(ids) > 1 or show_single:
        st.session_state[key] = chosen  # the id, re-labelled now: the browser's stale label cannot override it
        st.selectbox(label, ids, key=key, format_func=format_func, on_change=_picked,
                     label_visibility=label_visibility)
        if st.query_params.get(param) != str(chosen):
            st.query_params[param] = str(chosen)
    elif param in st.query_params and _id_from_url(param, ids) is None:
        del st.query_params[param]  # nothing to choose: no stale or foreign id left in the URL
    return chosen


def campaign_choice(camps: list[dict], *, key: str, param: str = "campaign") -> dict:
    """A campaign picked from ``camps`` (the newest by default), kept in the URL as ``?campaign=<id>``."""
    by_id = {c["id"]: c for c in camps}
    # the labels made in the run, in its language (a select box may read them again outside the run)
    labels = {i: f"#{i} {c['name']} ({_(STATUS_NAMES.get(c['status'], c['status']))})" for i, c in by_id.items()}
    cid = sticky_choice(_("Campaign"), list(by_id), key=key, param=param, default=camps[-1]["id"], show_single=True,
                        format_func=labels.__getitem__)
    return by_id[cid]


def safe_table(rows: list[dict], *, key: str, file_name: str, label: str | None = None,
               **dataframe_args) -> None:
    """A table whose cells may hold imported or typed text, with the project's CSV export of it below: every cell a
    spreadsheet would run (``=HYPERLINK(...)``, ``+``, ``-``, ``@`` ...) neutralised (:mod:`medeval.core.csvsafe`).
    The dataframe's own "Download as CSV", which writes such cells raw, is off for the whole app
    (``client.disableDataExport`` in ``.streamlit/config.toml``; issue 23 §5). For Grade, Annotate and Tune cut-offs
    too: call this instead of ``st.dataframe`` where a table should be downloadable. The table on screen follows
    ``webui.tables.dataframe`` (a missing value "—", no column empty in every row); the CSV keeps every column."""
    from . import tables

    tables.dataframe(rows, key=key, **dataframe_args)
    st.download_button(label or _("Download this table (CSV)"), csv_text(rows), file_name=file_name, mime="text/csv",
                       key=f"{key}_csv",
                       disabled=not rows)


def plain(label: str, text: str | None, *, key: str | None = None) -> None:
    """A labelled block of untrusted text, shown exactly as written: no Markdown, no HTML."""
    st.caption(md_escape(label))  # labels may carry imported names (a case title)
    with st.container(border=True, key=key):
        st.text(text if text else _("(empty)"))


def ask_first(key: str) -> None:
    """A button's callback for a consequential action: ask before doing it (:func:`confirm` draws the question)."""
    st.session_state[key] = True


def confirm(key: str, *, question: str, yes: str, on_yes: Callable, args: tuple = (), kwargs: dict | None = None,
            no: str | None = None, details: str | None = None) -> bool:
    """Ask once before a consequential action (closing a campaign, publishing, disabling, retiring): while
    ``st.session_state[key]`` is set (a first button's ``on_click=ask_first, args=(key,)``), draw ``question``
    (our own words, Markdown; ``details`` a second line) with ``yes`` -- which runs ``on_yes(*args, **kwargs)`` --
    and ``no``, which only closes the question. Returns whether the question is on screen."""
    if not st.session_state.get(key):
        return False

    def _yes() -> None:
        st.session_state.pop(key, None)
        on_yes(*args, **(kwargs or {}))

    def _no() -> None:
        st.session_state.pop(key, None)

    with st.container(border=True, key=f"{key}_confirm"):
        st.markdown(f"**{question}**" + (f"  \n{details}" if details else ""))
        with st.container(horizontal=True):  # each label whole, side by side where the width allows
            st.button(yes, type="primary", key=f"{key}_yes", on_click=_yes)
            st.button(no or _("Cancel"), key=f"{key}_no", on_click=_no)
    return True


def open_close_button(container, campaign: dict, actor, *, key_prefix: str) -> None:
    """Close an open campaign (no more answers or changes; asked once) or reopen a closed one; audited by the
    library."""
    from medeval.annotation import campaigns as cp
    from medeval.core.errors import MedevalError

    error_key = f"{key_prefix}_status_error"

    def _set(status: str) -> None:
        try:
            with db() as d:
                cp.set_campaign_status(d, campaign["id"], status, actor=actor)
        except MedevalError as e:
            st.session_state[error_key] = str(e)

    if err := st.session_state.pop(error_key, None):
        st.error(md_escape(err))
    if campaign["status"] == "open":
        ask = f"{key_prefix}_close_ask_{campaign['id']}"  # the question is about this campaign only
        container.button(_("Close campaign…"), key=f"{key_prefix}_close", on_click=ask_first, args=(ask,),
                         width="stretch", help=_("No more answers or changes; annotators see it as closed. "
                                                 "Can be reopened."))
        confirm(ask, question=_("Close campaign #{id} “{name}”?").format(id=campaign["id"],
                                                                          name=md_escape(campaign["name"])),
                details=_("Its annotators can no longer give or change answers until it is reopened."),
                yes=_("Close the campaign"), on_yes=_set, args=("closed",))
    else:
        container.button(_("Reopen campaign"), key=f"{key_prefix}_reopen", on_click=_set, args=("open",),
                         width="stretch")


# Researcher and admin work pages (tables, charts) and the reading screens use the whole width; pages of prose stay
# centered (each page's layout is declared in webui.pages.PAGES).
WIDE_PAGES = pages.WIDE_PAGES


def page_layout(url_path: str) -> str:
    """The layout of the page at ``url_path`` (an ``st.Page``'s url_path): "wide" or "centered"."""
    return "wide" if url_path in WIDE_PAGES else "centered"


def sidebar_state(url_path: str) -> str:
    """How the sidebar starts on the page at ``url_path``: folded away on a reading screen (its texts get the
    width; one click on the arrow opens it), as Streamlit decides elsewhere."""
    return "collapsed" if url_path in pages.READING_PAGES else "auto"


HELP_PATH = "/help"

# The start-here panels of each role's first pages: ``start_here(name, **TIPS[name])``. Short, plain words (no
# statistics for annotators); help_section is the slug of a "## " section of a Help guide (docs/help/, the Help page).
TIPS = {
    "campaigns": {
        "title": N_("Start here"),
        "body": N_("Campaigns shows how far each grading campaign has come: who graded what, which items still need "
                   "grades, and the grades as a CSV file."),
        "next_step": N_("Next: open Agreement to see how the clinicians agree (in the demo they are simulated), "
                        "then Tune cut-offs."),
        "help_section": "campaigns"},
    "users": {
        "title": N_("Start here"),
        "body": N_("Add an account for each clinician (annotator) and researcher, change roles, reset passwords, and "
                   "read the audit log of sign-ins and changes."),
        "next_step": N_("Next: give each new user their password in person; they sign in at this address."),
        "help_section": "users-audit"},
    "grade": {
        "title": N_("Start here"),
        "body": N_("Read the reference and the answer, then press 1, 2 or 3 (S skip, F flag); the sidebar says what "
                   "each grade means."),
        "next_step": N_("Your grades save as you go; you can stop any time and carry on later."),
        "help_section": "grade"},
    "annotate": {
        "title": N_("Start here"),
        "body": N_("Read what is shown and press the key written on the button of your answer (S skip, F flag)."),
        "next_step": N_("Each answer saves at once; you can stop any time and carry on later."),
        "help_section": "rate-compare"},
}


def start_here(hint: str, *, title: str, body: str, next_step: str, help_section: str) -> None:
    """A compact "start here" panel for a page: what it is for, the next step, a link to the Help page's
    section, and a "Got it, hide this" button. Hidden for good, for this user only, once they press it
    (``medeval.accounts.hints``; the Help page shows them all again). The texts are the page's own."""
    u = user()
    if u is None:
        return
    with db() as d:
        if hints.is_dismissed(d, u, hint):
            return

    def _dismiss() -> None:
        with db() as d:
            hints.dismiss(d, u, hint)

    with st.container(border=True, key=f"start_here_{hint}"):
        link = f"{HELP_PATH}?section={help_section}"
        st.markdown(f"**{_(title)}** · {_(body)}  \n{_(next_step)} [{_('Read more')}]({link})")
        st.button(_("Got it, hide this"), key=f"start_here_{hint}_hide", on_click=_dismiss, type="tertiary",
                  icon=":material/check:")


# the worked examples' columns as the editor heads them (the stored names stay)
EXAMPLE_HEADERS = {"aspect_type": N_("aspect type"), "answer": N_("answer"), "tier": N_("tier"), "why": N_("why")}


def guidelines_editor(cid: int, actor, key: str) -> None:
    """A compact editor of a campaign's guidelines (Campaigns, Task results): text and worked examples; each save
    is a new version (``medeval.annotation.guidelines``, which checks the role and the input)."""
    import pandas as pd

    from medeval.annotation import guidelines as gl
    from medeval.core.errors import MedevalError

    with db() as d:
        g = gl.current(d, cid)
    with st.expander(_("Guidelines (v{version})").format(version=g.version) if g else _("Guidelines (none yet)")):
        if msg := st.session_state.pop(f"{key}_saved", None):
            st.success(msg)
        st.caption(_("What annotators read, and confirm, before their first item (again after each new version). "
                     "Markdown: headings, lists, emphasis, http(s) links; HTML and images are not shown."))
        text = st.text_area(_("Text (Markdown)"), value=g.text if g else "", height=220, key=f"{key}_text_{cid}")
        rows = pd.DataFrame([dict(e) for e in g.examples] if g else [], columns=list(gl.EXAMPLE_COLUMNS), dtype=str)
        st.caption(_("Worked examples: an answer, the tier (or rating) it deserves and one line why."))
        widths = {"aspect_type": 110, "answer": 380, "tier": 80, "why": 250}  # fits a 1366-px screen
        edited = st.data_editor(rows, num_rows="dynamic", hide_index=True, width="stretch", key=f"{key}_ex_{cid}",
                                column_config={c: st.column_config.TextColumn(_(EXAMPLE_HEADERS[c]),
                                                                              width=widths.get(c))
                                               for c in gl.EXAMPLE_COLUMNS})
        if st.button(_("Save as new version"), key=f"{key}_save_{cid}", type="primary"):
            try:
                with db() as d:
                    v = gl.set_guidelines(d, cid, text or "", examples=edited.to_dict("records"), actor=actor)
            except MedevalError as e:
                st.error(md_escape(_("Not saved: {error}").format(error=e)))
            else:
                st.session_state[f"{key}_saved"] = _("Saved: guidelines version {version}").format(version=v)
                st.rerun()


def guidelines_button(where, guide, state_key: str, *, disabled: bool = False, **columns) -> None:
    """G: the campaign's guidelines in a dialog over the screen, which stays as it is (``st.session_state[state_key]``
    says whether it is open; a page reads it to lock its answer keys meanwhile). Nothing without guidelines.
    ``columns``: as :func:`guidelines_body` (its ``key_prefix`` also prefixes the two buttons' keys)."""
    if guide is None:
        return
    prefix = columns.get("key_prefix", "")

    def _set(value: bool) -> None:
        st.session_state[state_key] = value

    title = _("Guidelines (v{version})").format(version=guide.version)
    where.button(title, key=f"{prefix}open_guidelines", shortcut="G", width="stretch",
                 disabled=disabled, on_click=_set, args=(True,),
                 help=_("Read the guidelines again; this screen stays as it is"))
    if st.session_state.get(state_key, False):
        @st.dialog(title, width="large", on_dismiss=lambda: _set(False))
        def _dialog() -> None:
            guidelines_body(guide, **columns)
            if st.button(_("Close"), key=f"{prefix}close_guidelines", type="primary"):
                _set(False)
                st.rerun()

        _dialog()


def guidelines_body(g, *, answer: str = N_("tier"), about: str = N_("aspect type"), rating: str = N_("tier"),
                    key_prefix: str = "") -> None:
    """A campaign's guidelines: the researcher's text (sanitized by the library: no HTML, no images, http(s)
    links only), the definitions and the worked examples. ``answer``, ``about`` and ``rating`` name the columns
    (a tier for grading, a rating for a task), in English marked ``N_()``."""
    st.markdown(g.markdown)  # sanitized by the library; raw HTML stays off (the default)
    # static tables: every row shown and long cells wrapped (a data grid cut them); cells escaped, shown as written
    if g.definitions:
        st.markdown(f"**{_('Definitions')}**")
        with st.container(key=f"{key_prefix}guidelines_definitions"):
            # (the default definitions are stored in English: _() finds them in the catalogue, and leaves a
            # researcher's own words as written)
            st.table([{_("key"): md_escape(x["key"]), _(answer): md_escape(_(x["name"]) if x["name"] else ""),
                       _("meaning"): md_escape(_(x["meaning"]) if x["meaning"] else "")} for x in g.definitions],
                     hide_index=True)
    if g.examples:
        st.markdown(f"**{_('Worked examples')}**")
        with st.container(key=f"{key_prefix}guidelines_examples"):
            st.table([{_(about): md_escape(x["aspect_type"]), _("answer"): md_escape(x["answer"]),
                       _(rating): md_escape(_(x["tier"]) if x["tier"] else ""), _("why"): md_escape(x["why"])}
                      for x in g.examples],
                     hide_index=True)


def guidelines_gate(title: str, pending: int | None, guide, acknowledge, **body) -> None:
    """Before the first item (and after each new version): the guidelines and "I have read these"; stops the page
    until then. ``acknowledge(version)`` records it (the library refuses work until it has). The line above them
    says "before your first item" only to someone who has not answered in the campaign yet (the library knows)."""
    if pending is None:
        return
    user = current_user()
    state = {"answered": False, "read_earlier": False}
    if user is not None and guide is not None:
        with db() as d:
            state = gate_state(d, user, guide.campaign_id)
    if state["answered"] and state["read_earlier"]:
        line = _("This campaign's guidelines have changed since you last read them: please read them before your "
                 "next item.")
    elif state["answered"]:
        line = _("This campaign has guidelines now: please read them before your next item.")
    elif state["read_earlier"]:
        line = _("Please read this campaign's guidelines before your first item (they have changed since you last "
                 "read them).")
    else:
        line = _("Please read this campaign's guidelines before your first item.")
    st.subheader(md_escape(title), anchor=False)
    st.info(line, icon=":material/menu_book:")
    with st.container(border=True, key="guidelines_screen"):
        st.markdown(f"**{_('Guidelines (v{version})').format(version=pending)}**")
        guidelines_body(guide, **body)
    st.button(_("I have read these"), key="guidelines_ack", type="primary", on_click=acknowledge, args=(pending,))
    st.stop()
