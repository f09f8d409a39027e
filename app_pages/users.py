"""Users & audit (admins): add users, change roles, reset passwords, unlock, disable / enable; read and export the
audit log."""

import time

import streamlit as st

from medeval.accounts import audit_text, auth
from medeval.core.csvsafe import csv_text
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _, ngettext
from webui import page as ui
from webui import tables

user = ui.require_page("users")
st.title(_("Users & audit"))
ui.start_here("users", **ui.TIPS["users"])  # i18n: not text

USER_LABELS = {"username": N_("username"), "role": N_("role"), "active": N_("active"), "locked out": N_("locked out")}


def role_name(role: str) -> str:
    return _(ui.ROLE_NAMES.get(role, role))


def _run(fn, *args, done: str, **kwargs) -> None:
    try:
        with ui.db() as d:
            fn(d, *args, actor=user, **kwargs)
    except MedevalError as e:
        st.session_state["users_msg"] = ("error", ui.md_escape(str(e)))
    else:
        st.session_state["users_msg"] = ("ok", ui.md_escape(done))


if msg := st.session_state.pop("users_msg", None):
    (st.error if msg[0] == "error" else st.success)(msg[1])

with ui.db() as d:
    users = auth.list_users(d, actor=user)
    locked = auth.locked_users(d, actor=user)  # username -> when its lock-out ends
tables.dataframe([{"username": u.username, "role": role_name(u.role), "active": u.active,
                   "locked out": u.username in locked} for u in users], key="users_table", labels=USER_LABELS)

tab_add, tab_edit, tab_audit = st.tabs([_("Add a user"), _("Change a user"), _("Audit log")])

with tab_add:
    with st.form("add_user", clear_on_submit=False):
        new_name = st.text_input(_("Username"), key="add_username")
        new_role = st.selectbox(_("Role"), auth.ROLES, key="add_role", format_func=role_name)
        pw1 = st.text_input(_("Password (at least {n} characters)").format(n=auth.MIN_PASSWORD_LENGTH),
                            type="password", key="add_pw1")
        pw2 = st.text_input(_("Password again"), type="password", key="add_pw2")
        if st.form_submit_button(_("Add user"), type="primary"):
            if pw1 != pw2:
                st.error(_("The two passwords differ; type them again."))
            else:
                _run(auth.add_user, new_name, pw1, new_role,
                     done=_("User {name} added as {role}.").format(name=new_name.strip(), role=role_name(new_role)))
                if st.session_state.get("users_msg", ("",))[0] == "ok":
                    for key in ("add_username", "add_pw1", "add_pw2"):
                        st.session_state.pop(key, None)
                st.rerun()

with tab_edit:
    names = [u.username for u in users]
    target = st.selectbox(_("User"), names, key="edit_user")
    t = next(u for u in users if u.username == target)
    lock_note = ""
    if t.username in locked:
        until = time.strftime("%H:%M", time.localtime(locked[t.username]))
        state = _("{user}: {role}, {state}, locked out after failed sign-ins from several addresses until {time}")
    else:
        until, state = "", _("{user}: {role}, {state}")
    st.caption(ui.md_escape(state.format(user=t.username, role=role_name(t.role),
                                         state=_("active") if t.active else _("disabled"), time=until)))
    if t.username in locked:
        st.button(_("Unlock (the user can sign in again at once)"), key="unlock_user", on_click=_run,
                  args=(auth.unlock, t.username), kwargs={"done": _("{user} unlocked.").format(user=t.username)})
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    role = c1.selectbox(_("Role"), auth.ROLES, index=auth.ROLES.index(t.role), key="edit_role", format_func=role_name)
    c2.button(_("Set role"), key="set_role", disabled=role == t.role, on_click=_run,
              args=(auth.set_role, t.username, role),
              kwargs={"done": _("{user} is now {role}.").format(user=t.username, role=role_name(role))})
    with st.form("reset_pw", clear_on_submit=True):
        pw = st.text_input(_("New password"), type="password", key="reset_pw1")
        if st.form_submit_button(_("Reset password (ends the user's sessions)")):
            _run(auth.reset_password, t.username, pw,
                 done=_("Password of {user} reset; their sessions ended.").format(user=t.username))
            st.rerun()
    if t.active:
        st.button(_("Disable user…"), key="disable_user", on_click=ui.ask_first,
                  args=(f"disable_user_ask_{t.id}",),  # i18n: not text
                  help=_("Ends their sessions; their annotations are kept; can be enabled again"))
        ui.confirm(f"disable_user_ask_{t.id}",  # i18n: not text
                   question=_("Disable {user}?").format(user=ui.md_escape(t.username)),
                   details=_("Their sessions end now and they cannot sign in; their annotations are kept."),
                   yes=_("Disable the account"), on_yes=_run, args=(auth.disable, t.username),
                   kwargs={"done": _("{user} disabled.").format(user=t.username)})
    else:
        st.button(_("Enable user"), key="enable_user", on_click=_run, args=(auth.enable, t.username),
                  kwargs={"done": _("{user} enabled.").format(user=t.username)})

with tab_audit:
    with ui.db() as d:
        rows = auth.audit_rows(d, actor=user)
    if len(rows) <= 500:
        st.caption(ngettext("{n} record, newest first (the download has every record, oldest first); the log is "
                            "append-only (the database refuses changes).",
                            "{n} records, newest first (the download has every record, oldest first); the log is "
                            "append-only (the database refuses changes).", len(rows)).format(n=len(rows)))
    else:
        st.caption(_("{n} records, newest first (the latest 500 shown here, the download has every record, oldest "
                     "first); the log is append-only (the database refuses changes).").format(n=len(rows)))
    tables.dataframe(audit_text.display_rows(rows[-500:][::-1]), key="audit_table", labels=audit_text.COLUMN_LABELS,
                     times=("at",))
    st.download_button(_("Download the whole audit log (CSV)"), csv_text(rows, header=auth.AUDIT_COLUMNS),
                       file_name="medeval-audit.csv", mime="text/csv", key="audit_csv")
