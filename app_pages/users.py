"""Users & audit (admins): add users, change roles, reset passwords, unlock, disable / enable; read and export the
audit log."""

import time

import streamlit as st

from medeval.accounts import audit_text, auth
from medeval.core.csvsafe import csv_text
from medeval.core.errors import MedevalError
from webui import page as ui
from webui import tables

user = ui.require_page("users")
st.title("Users & audit")
ui.start_here("users", **ui.TIPS["users"])


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
tables.dataframe([{"username": u.username, "role": u.role, "active": u.active, "locked out": u.username in locked}
                  for u in users], key="users_table")

tab_add, tab_edit, tab_audit = st.tabs(["Add a user", "Change a user", "Audit log"])

with tab_add:
    with st.form("add_user", clear_on_submit=False):
        new_name = st.text_input("Username", key="add_username")
        new_role = st.selectbox("Role", auth.ROLES, key="add_role")
        pw1 = st.text_input(f"Password (at least {auth.MIN_PASSWORD_LENGTH} characters)", type="password",
                            key="add_pw1")
        pw2 = st.text_input("Password again", type="password", key="add_pw2")
        if st.form_submit_button("Add user", type="primary"):
            if pw1 != pw2:
                st.error("The two passwords differ; type them again.")
            else:
                _run(auth.add_user, new_name, pw1, new_role, done=f"User {new_name.strip()} added as {new_role}.")
                if st.session_state.get("users_msg", ("",))[0] == "ok":
                    for key in ("add_username", "add_pw1", "add_pw2"):
                        st.session_state.pop(key, None)
                st.rerun()

with tab_edit:
    names = [u.username for u in users]
    target = st.selectbox("User", names, key="edit_user")
    t = next(u for u in users if u.username == target)
    lock_note = ""
    if t.username in locked:
        lock_note = (", locked out after failed sign-ins from several addresses until "
                     + time.strftime("%H:%M", time.localtime(locked[t.username])))
    st.caption(ui.md_escape(f"{t.username}: {t.role}, {'active' if t.active else 'disabled'}{lock_note}"))
    if t.username in locked:
        st.button("Unlock (the user can sign in again at once)", key="unlock_user", on_click=_run,
                  args=(auth.unlock, t.username), kwargs={"done": f"{t.username} unlocked."})
    c1, c2 = st.columns([2, 1], vertical_alignment="bottom")
    role = c1.selectbox("Role", auth.ROLES, index=auth.ROLES.index(t.role), key="edit_role")
    c2.button("Set role", key="set_role", disabled=role == t.role, on_click=_run,
              args=(auth.set_role, t.username, role), kwargs={"done": f"{t.username} is now {role}."})
    with st.form("reset_pw", clear_on_submit=True):
        pw = st.text_input("New password", type="password", key="reset_pw1")
        if st.form_submit_button("Reset password (ends the user's sessions)"):
            _run(auth.reset_password, t.username, pw, done=f"Password of {t.username} reset; their sessions ended.")
            st.rerun()
    if t.active:
        st.button("Disable user…", key="disable_user", on_click=ui.ask_first, args=(f"disable_user_ask_{t.id}",),
                  help="Ends their sessions; their annotations are kept; can be enabled again")
        ui.confirm(f"disable_user_ask_{t.id}", question=f"Disable {ui.md_escape(t.username)}?",
                   details="Their sessions end now and they cannot sign in; their annotations are kept.",
                   yes="Disable the account", on_yes=_run, args=(auth.disable, t.username),
                   kwargs={"done": f"{t.username} disabled."})
    else:
        st.button("Enable user", key="enable_user", on_click=_run, args=(auth.enable, t.username),
                  kwargs={"done": f"{t.username} enabled."})

with tab_audit:
    with ui.db() as d:
        rows = auth.audit_rows(d, actor=user)
    shown = "" if len(rows) <= 500 else "the latest 500 shown here, "
    st.caption(f"{len(rows)} records, newest first ({shown}the download has every record, oldest first); "
               "the log is append-only (the database refuses changes).")
    tables.dataframe(audit_text.display_rows(rows[-500:][::-1]), key="audit_table")
    st.download_button("Download the whole audit log (CSV)", csv_text(rows, header=auth.AUDIT_COLUMNS), file_name="medeval-audit.csv",
                       mime="text/csv", key="audit_csv")
