"""The language of this browser session: the signed-in person's choice, and the sidebar that changes it.

``medeval.core.i18n`` translates with whatever language its provider names; this module registers the provider
(this session's language, from ``st.session_state``), so ``_()`` in a page, in a callback, and in a library
function a page calls all speak the person's language, while the command line (no provider) stays English.

Which language a session gets (``resolve``): the account's own choice (``users.language``), else the sign-in
page's choice (its cookie), else ``MEDEVAL_LANGUAGE`` (``auto``: the browser's ``Accept-Language``).
"""

from __future__ import annotations

import streamlit as st
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from medeval.accounts import auth
from medeval.accounts.auth import User
from medeval.core import i18n, settings
from medeval.core.i18n import _

from . import LANGUAGE_COOKIE

LANGUAGE_KEY = "_medeval_language"  # this session's language (what the provider reads)
SWITCH_KEY = "ui_language"


_last_used: str | None = None  # (AppTest only: see _session_language)


def _session_language() -> str | None:
    if get_script_run_ctx(suppress_warning=True) is None:  # a server thread, not a page: no session to ask
        # Streamlit's AppTest reads a select box's labels (format_func) in the test's own thread, after the run:
        # without a runtime (never the case in the server, where sessions are many) that run's language applies
        return None if runtime.exists() else _last_used
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
    return _chosen_at_signin() or settings.default_language(_browser_header())


def use(user: User | None) -> str:
    """Make ``user``'s language this session's for the run (``app.py`` calls it first thing)."""
    global _last_used
    lang = resolve(user)
    st.session_state[LANGUAGE_KEY] = lang
    _last_used = lang
    return lang


# The widgets whose shown label is the text of their chosen option: after a switch, the browser still holds the
# old language's label (Streamlit resends a choice only when it changed), so their choice is set again once
_RELABELLED = ("SelectboxSerde", "RadioSerde", "MultiSelectSerde", "SelectSliderSerde")


def _relabel_choices() -> None:
    """Have every keyed choice widget resend its (unchanged) choice, now labelled in the new language. Reads
    Streamlit's widget registry (not a public API): if that changes, the labels only refresh at the next pick."""
    try:
        from streamlit.runtime.state.session_state_proxy import get_session_state

        state = get_session_state()._state  # SessionState, behind its lock-holding wrapper
        mapper, metadata = state._key_id_mapper, state._new_widget_state.widget_metadata
        keys = [k for k in list(st.session_state.keys())
                if (wid := mapper.get_id_from_key(k, None)) in metadata
                and type(getattr(metadata[wid].serializer, "__self__", None)).__name__ in _RELABELLED]
    except Exception:  # noqa: BLE001 (internals moved: a cosmetic refresh is skipped, nothing else)
        return
    for k in keys:
        if k != SWITCH_KEY:
            st.session_state[k] = st.session_state[k]


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
        _relabel_choices()

    st.session_state[SWITCH_KEY] = st.session_state[LANGUAGE_KEY]
    st.selectbox(_("Language"), i18n.LANGUAGES, key=SWITCH_KEY, format_func=i18n.NAMES.get, on_change=_changed)
