"""The language of this browser session: the signed-in person's choice, and the sidebar that changes it.

``medeval.core.i18n`` translates with whatever language its provider names; this module registers the provider
(this session's language, from ``st.session_state``), so ``_()`` in a page, in a callback, and in a library
function a page calls all speak the person's language, while the command line (no provider) stays English.

Which language a session gets (``resolve``): the account's own choice (``users.language``), else the sign-in
page's choice (its cookie), else ``MEDEVAL_LANGUAGE`` (``auto``: the browser's ``Accept-Language``).
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from medeval.accounts import auth
from medeval.accounts.auth import User
from medeval.core import i18n
from medeval.core.i18n import _

from . import LANGUAGE_COOKIE

LANGUAGE_KEY = "_medeval_language"  # this session's language (what the provider reads)
SWITCH_KEY = "ui_language"


def _session_language() -> str | None:
    if get_script_run_ctx(suppress_warning=True) is None:  # a server thread, not a page: no session to ask
        return None
    try:
        return st.session_state.get(LANGUAGE_KEY)
    except Exception:  # (a session state being torn down) the source language, never a failed page
        return None


i18n.set_provider(_session_language)


def _chosen_at_signin() -> str | None:
    cookie = st.context.cookies.get(LANGUAGE_COOKIE)
    return i18n.normalize(cookie) if isinstance(cookie, str) else None  # (AppTest's cookie jar is a mock)


def _browser_header() -> str | None:
    header = st.context.headers.get("Accept-Language")
    return header if isinstance(header, str) else None


def resolve(user: User | None) -> str:
    """The language this session is shown in."""
    if user is not None and user.language in i18n.LANGUAGES:
        return user.language
    return _chosen_at_signin() or i18n.default_language(_browser_header())


def use(user: User | None) -> str:
    """Make ``user``'s language this session's for the run (``app.py`` calls it first thing)."""
    lang = resolve(user)
    st.session_state[LANGUAGE_KEY] = lang
    return lang


def switcher(user: User, db) -> None:
    """A language choice in the sidebar: saved to the account at once, and the page redrawn in place (the item
    on screen, typed notes and the queue live in session state and the database, so nothing moves)."""

    def _changed() -> None:
        lang = st.session_state.get(SWITCH_KEY)
        if lang not in i18n.LANGUAGES:
            return
        with db() as d:
            auth.set_language(d, user.username, lang, actor=user)
        st.session_state[LANGUAGE_KEY] = lang

    st.session_state[SWITCH_KEY] = st.session_state[LANGUAGE_KEY]
    st.selectbox(_("Language"), i18n.LANGUAGES, key=SWITCH_KEY, format_func=i18n.NAMES.get, on_change=_changed)
