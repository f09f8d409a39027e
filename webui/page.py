"""Helpers every Streamlit page shares: who is signed in, role guards, database access, plain text.

Identity is looked up again on every rerun from the session cookie, so a sign-out,
an idle timeout, a disabled account or a changed role takes effect at the next click.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

import sqlite_utils
import streamlit as st

from medeval.accounts import auth
from medeval.accounts.auth import User
from medeval.core import settings
from medeval.store.db import connect

from . import COOKIE_NAME, SIGNIN_PATH, SIGNOUT_PATH

# AppTest cannot send cookies; tests put a real session token here instead (only server code can set it).
TEST_TOKEN_KEY = "_medeval_session_token"


@contextmanager
def db() -> Iterator[sqlite_utils.Database]:
    """A new connection for one operation (never kept across reruns: SQLite objects are per thread)."""
    with connect(settings.db_path(), migrate=False) as d:
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
        st.info("Sign in first.")
        signin_link()
        st.stop()
    if roles and u.role not in roles:
        st.error(f"This page is for the role {' or '.join(roles)}; you are signed in as {u.role}.")
        st.stop()
    return u


def demo_mode() -> bool:
    return settings.get("MEDEVAL_DEMO") == "1"


def _link(href: str, text: str, testid: str) -> None:
    # our own static markup (never data): a plain link that opens in this tab
    st.html(f'<a href="{href}" target="_self" data-testid="{testid}" '
            f'style="font-size:0.95rem">{text}</a>')


def signin_link(next_path: str = "/") -> None:
    _link(f"{SIGNIN_PATH}?next={next_path}", "Sign in", "medeval-signin")


def signout_link() -> None:
    _link(SIGNOUT_PATH, "Sign out", "medeval-signout")


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text: str) -> str:
    """Text that Markdown shows literally (for data inside an alert, caption or heading, which render Markdown)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def campaign_choice(camps: list[dict], *, key: str) -> dict:
    """A campaign picked from ``camps`` (the newest by default)."""
    by_id = {c["id"]: c for c in camps}
    cid = st.selectbox("Campaign", list(by_id), index=len(by_id) - 1, key=key,
                       format_func=lambda i: f"#{i} {by_id[i]['name']} ({by_id[i]['status']})")
    return by_id[cid]


def plain(label: str, text: str | None, *, key: str | None = None) -> None:
    """A labelled block of untrusted text, shown exactly as written: no Markdown, no HTML."""
    st.caption(md_escape(label))  # labels may carry imported names (a case title)
    with st.container(border=True, key=key):
        st.text(text if text else "(empty)")


def open_close_button(container, campaign: dict, actor, *, key_prefix: str) -> None:
    """Close an open campaign (no more answers or changes) or reopen a closed one; audited by the library."""
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
        st.error(err)
    if campaign["status"] == "open":
        container.button("Close campaign", key=f"{key_prefix}_close", on_click=_set, args=("closed",),
                         width="stretch", help="No more answers or changes; annotators see it as closed. "
                                               "Can be reopened.")
    else:
        container.button("Reopen campaign", key=f"{key_prefix}_reopen", on_click=_set, args=("open",),
                         width="stretch")
