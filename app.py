"""medeval web app -- the entry point: who is signed in, and which pages their role may open.

Run it through ``server.py`` (``scripts/start.sh``), which adds the sign-in routes.
The navigation holds only the pages of the user's role (each page and the action it needs are declared once,
in ``webui.pages.PAGES``), so another role's page does not exist for this session, whatever URL is typed; each
page checks its action again, and so does every ``medeval`` function it calls (``medeval.accounts.policy``).
"""

import streamlit as st

from medeval.core import settings
from medeval.core.errors import MedevalError
from medeval.core.i18n import _
from medeval.store.db import connect
from medeval.store.migrate import applied_count
from webui import i18n as lang
from webui import page as ui
from webui import pages as site


@st.cache_resource(show_spinner=False)
def init_db(path: str) -> int:
    """Run migrations once per process (not on every rerun: that causes 'database is locked')."""
    with connect(path) as db:
        return applied_count(db)


PAGE = {"page_title": "medeval", "page_icon": "🩺"}

try:
    init_db(settings.db_path())
    user = ui.current_user()
except MedevalError as e:
    lang.use(None)
    st.set_page_config(**PAGE, layout="centered")
    st.title("medeval")  # i18n: not text (the name)
    st.error(ui.md_escape(str(e)))
    st.stop()
st.session_state["user"] = user
lang.use(user)  # before any text: every _() of this run (pages, callbacks, the library) speaks this language


def signed_out() -> None:
    st.title("medeval")  # i18n: not text (the name)
    st.caption(_("Aligning automated evaluation of medical LLMs with clinicians' judgement."))
    st.info(_("You are not signed in, or your session has ended."))
    ui.signin_link()


if user is None:
    pages = [st.Page(signed_out, title=_("Sign in"), url_path="signed-out")]
else:  # the pages whose action the user's role may take, in the order of webui.pages.PAGES (an adjudicator, a
    # senior clinician who settles disagreements, does not grade: stays independent)
    pages = [st.Page(p.script, title=_(p.title), icon=p.icon, url_path=p.url_path) for p in site.for_role(user.role)]

if user is not None:
    # A hidden home page at "/" forwards to the role's first page, so every real page keeps its own URL
    # (Streamlit serves the default page only at "/": a bookmark of /campaigns would say "page not found").
    first = pages[0]

    def home() -> None:
        st.switch_page(first)

    pages = [st.Page(home, title=_("Home"), url_path="home", default=True, visibility="hidden"), *pages]

# The tab's icon and title before the navigation: otherwise the browser is first given the page's own icon, a
# Material symbol that Streamlit fetches from an outside font server (a hospital network has none).
st.set_page_config(**PAGE)
nav = st.navigation(pages)
# One page config per run, with this page's own layout, before anything is drawn: researchers' and admins' tables
# and charts get the whole width, reading and grading screens stay narrow. (A first call with another layout --
# "centered", then this page's -- made every rerun of a wide page draw narrow until the second call arrived, so a
# wide page flipped to narrow and back, and one whose run was slow or cut short stayed narrow.)
st.set_page_config(layout=ui.page_layout(nav.url_path), initial_sidebar_state=ui.sidebar_state(nav.url_path))
if ui.demo_mode():
    st.warning(_("DEMO MODE: demo data and demo accounts, written for testing, not clinical advice."),
               icon=":material/warning:")
if user is not None:
    with st.sidebar:
        # a name is plain text
        st.markdown(_("Signed in as **{name}** · {role}").format(name=ui.md_escape(user.username),
                                                                  role=_(ui.ROLE_NAMES[user.role])))
        ui.signout_link()
        lang.switcher(user, ui.db)
if nav.url_path != "help":  # Help opens at how to use the page the user was on (app_pages/help.py)
    st.session_state["help_from"] = nav.url_path
nav.run()
