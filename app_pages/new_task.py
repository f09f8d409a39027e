"""New task campaign (researchers): pick a task type, fill in the settings it declares, choose annotators, k and
a seed; preview how many items it makes before anything is stored."""

import secrets

import streamlit as st

from medeval.annotation import campaigns as cp
from medeval.annotation import cases as cs
from medeval.annotation import tasks
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _
from webui import page as ui
from webui import tables

user = ui.require_page("new-task")
st.title(_("New task campaign"))

with ui.db() as d:
    people = cp.annotator_choices(d, actor=user)
    data = cs.datasets(d)
if not people:
    st.info(_("There are no active users to assign work to. An admin adds them on the Users page."))
    st.stop()
if not data:
    st.info(_("No cases or fact-check answers are imported yet: `python -m medeval import-cases` or "
              "`python -m medeval import-factcheck` (see the README)."))
    st.stop()
# After a create the form starts again from its defaults: its widgets take new keys (a browser keeps what a
# widget of the same key showed), numbered by how many campaigns this session created here
form = st.session_state.get("new_task_form", 0)


def key(name: str) -> str:
    return name if not form else f"{name}__{form}"


created = st.session_state.pop("new_task_created", None)
if created:  # the form below is back to its defaults; the message names what was created
    st.success(created, icon=":material/check_circle:")
    st.page_link("app_pages/task_results.py", label=_("See its results"),  # i18n: not text
                 icon=":material/analytics:")
if key("new_task_seed") not in st.session_state:
    st.session_state[key("new_task_seed")] = secrets.randbelow(10**6)

types = list(tasks.REGISTRY)
task = st.radio(_("Task"), types, horizontal=True, key=key("new_task_type"),  # i18n: not text (ids)
                format_func=lambda t: _(tasks.get(t).title))
t = tasks.get(task)
st.caption(_(t.description))
name = st.text_input(_("Name"), key=key("new_task_name"), placeholder=_("e.g. Judge rating round 1"))

config = {}
with ui.db() as d:
    settings = t.settings(d)
for s in settings:
    wkey = key(f"new_task_{task}_{s.name}")
    if s.kind == "choice":
        if not s.choices:
            st.warning(_("{setting}: nothing to choose from. {help}").format(setting=s.label, help=s.help))
            st.stop()
        config[s.name] = st.selectbox(s.label, list(s.choices), index=list(s.choices).index(s.default)
                                      if s.default in s.choices else 0, help=s.help or None, key=wkey,
                                      format_func=lambda c, names=s.labels or {}: names.get(c, str(c)))
    elif s.kind == "multichoice":
        config[s.name] = st.multiselect(s.label, list(s.choices), default=list(s.default or []),
                                        help=s.help or None, key=wkey,
                                        format_func=lambda c, names=s.labels or {}: names.get(c, str(c)))
    elif s.kind == "int":  # bounded as the library bounds it (Setting.low/high), so a refused value is not offered
        low = int(s.low) if s.low is not None else None
        high = int(s.high) if s.high is not None else None
        value = int(s.default or 0)
        value = max(value, low) if low is not None else value
        value = min(value, high) if high is not None else value
        config[s.name] = int(st.number_input(s.label, min_value=low, max_value=high, value=value, step=1,
                                             help=s.help or None, key=wkey))
    elif s.kind == "json":
        config[s.name] = st.text_area(s.label, value=s.default or "", help=s.help or None, key=wkey, height=120)
    else:
        config[s.name] = st.text_input(s.label, value=s.default or "", help=s.help or None, key=wkey)

labels = {p["username"]: _("{name} ({role})").format(name=p["username"],
                                                     role=_(ui.ROLE_NAMES.get(p["role"], p["role"]))) for p in people}
default_people = [p["username"] for p in people if p["role"] == "annotator"][:3]
annotators = st.multiselect(_("Annotators"), list(labels), default=default_people, format_func=labels.get,
                            key=key("new_task_annotators"))
c1, c2 = st.columns(2)
k = int(c1.number_input(_("Annotators per item (k)"), min_value=1, max_value=max(1, len(people)),
                        value=min(2, len(people)), step=1, key=key("new_task_k")))
seed = int(c2.number_input(_("Seed (stored; the same seed and data give the same items and orders)"),
                           min_value=0, step=1, key=key("new_task_seed")))

st.subheader(_("Preview"), anchor=False)
try:
    with ui.db() as d:
        pv = tasks.preview(d, task, config, seed=seed, actor=user)
except MedevalError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()
st.write(_("{n} items; each goes to {k} annotators: about {each} per annotator.").format(
    n=pv["items"], k=k, each=pv["items"] * k // max(1, len(annotators))))
with st.expander(_("First items (sources: never shown to annotators)")):
    tables.dataframe([{"source": s} for s in pv["sources"]], key=key("new_task_preview"), width="content",
                     labels={"source": N_("source")})

problems = []
if not name.strip():
    problems.append(_("Give the campaign a name."))
if len(annotators) < k:
    problems.append(_("Choose at least k = {k} annotators ({n} chosen).").format(k=k, n=len(annotators)))
for p in problems:
    st.caption(f"• {p}")
signature = repr((task, name.strip(), sorted(annotators), k, seed, sorted(config.items())))
# Never disabled by what a field holds: a click that ends the typing in a field must count (see New campaign).
if st.button(_("Create campaign"), type="primary", key="create_task"):
    if problems:
        st.error(_("Not created: {problems}").format(problems=" ".join(problems)))
        st.stop()
    if st.session_state.get("created_task_signature") == signature:  # a double click: create it once
        st.info(_("This campaign was just created; change something to create another."))
        st.stop()
    st.session_state["created_task_signature"] = signature
    try:
        with ui.db() as d:
            cid = tasks.create_campaign(d, task, name, annotators, k=k, seed=seed, config=config, actor=user)
    except MedevalError as e:
        st.session_state.pop("created_task_signature", None)
        st.error(ui.md_escape(str(e)))
    else:
        st.session_state["new_task_form"] = form + 1  # every field back to its default, and a new seed
        st.session_state.pop("created_task_signature", None)
        st.session_state["new_task_created"] = _("Campaign #{id} “{name}” created. Its annotators see it on their "
                                                 "Rate & compare page now.").format(id=cid,
                                                                                    name=ui.md_escape(name.strip()))
        st.rerun()
