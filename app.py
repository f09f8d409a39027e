"""medeval web app -- the entry point: who is signed in, and which pages their role may open.

Run it through ``server.py`` (``scripts/start.sh``), which adds the sign-in routes.
The navigation holds only the pages of the user's role, so another role's page does
not exist for this session, whatever URL is typed; each page checks the role again,
and so does every ``medeval`` function it calls.
"""

import streamlit as st

from medeval.core import settings
from medeval.core.errors import MedevalError
from medeval.store.db import connect
from medeval.store.migrate import applied_count
from webui import page as ui


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
    st.set_page_config(**PAGE, layout="centered")
    st.title("medeval")
    st.error(ui.md_escape(str(e)))
    st.stop()
st.session_state["user"] = user


def signed_out() -> None:
    st.title("medeval")
    st.caption("Aligning automated evaluation of medical LLMs with clinicians' judgement.")
    st.info("You are not signed in, or your session has ended.")
    ui.signin_link()


GRADE = st.Page("app_pages/grade.py", title="Grade", icon=":material/task_alt:", url_path="grade")
CAMPAIGNS = st.Page("app_pages/campaigns.py", title="Campaigns", icon=":material/monitoring:", url_path="campaigns")
NEW_CAMPAIGN = st.Page("app_pages/new_campaign.py", title="New campaign", icon=":material/add_task:",
                       url_path="new-campaign")
AGREEMENT = st.Page("app_pages/dashboard.py", title="Agreement", icon=":material/insights:", url_path="agreement")
TUNING = st.Page("app_pages/tuning.py", title="Tune cut-offs", icon=":material/tune:", url_path="tuning")
LEADERBOARD = st.Page("app_pages/leaderboard.py", title="Leaderboard", icon=":material/leaderboard:",
                      url_path="leaderboard")
ANNOTATE = st.Page("app_pages/annotate.py", title="Rate & compare", icon=":material/rate_review:",
                   url_path="annotate")
NEW_TASK = st.Page("app_pages/new_task.py", title="New task", icon=":material/playlist_add:", url_path="new-task")
TASK_RESULTS = st.Page("app_pages/task_results.py", title="Task results", icon=":material/analytics:",
                       url_path="task-results")
ADJUDICATE = st.Page("app_pages/adjudicate.py", title="Adjudicate", icon=":material/gavel:", url_path="adjudicate")
USERS = st.Page("app_pages/users.py", title="Users & audit", icon=":material/manage_accounts:", url_path="users")
EXAM = st.Page("app_pages/exam.py", title="Exam results", icon=":material/fact_check:", url_path="exam")
HELP = st.Page("app_pages/help.py", title="Help", icon=":material/help:", url_path="help")

if user is None:
    pages = [st.Page(signed_out, title="Sign in", url_path="signed-out")]
elif user.role == "annotator":
    pages = [GRADE, ANNOTATE, HELP]
elif user.role == "adjudicator":  # a senior clinician: settles disagreements, does not grade (stays independent)
    pages = [ADJUDICATE, HELP]
elif user.role == "researcher":
    pages = [CAMPAIGNS, AGREEMENT, ADJUDICATE, TUNING, LEADERBOARD, TASK_RESULTS, EXAM, NEW_CAMPAIGN, NEW_TASK, GRADE,
             ANNOTATE, HELP]
else:
    pages = [USERS, CAMPAIGNS, AGREEMENT, ADJUDICATE, TUNING, LEADERBOARD, TASK_RESULTS, EXAM, NEW_CAMPAIGN, NEW_TASK,
             GRADE, ANNOTATE, HELP]

if user is not None:
    # A hidden home page at "/" forwards to the role's first page, so every real page keeps its own URL
    # (Streamlit serves the default page only at "/": a bookmark of /campaigns would say "page not found").
    first = pages[0]

    def home() -> None:
        st.switch_page(first)

    pages = [st.Page(home, title="Home", url_path="home", default=True, visibility="hidden"), *pages]

nav = st.navigation(pages)
# One page config per run, with this page's own layout, before anything is drawn: researchers' and admins' tables
# and charts get the whole width, reading and grading screens stay narrow. (A first call with another layout --
# "centered", then this page's -- made every rerun of a wide page draw narrow until the second call arrived, so a
# wide page flipped to narrow and back, and one whose run was slow or cut short stayed narrow.)
st.set_page_config(**PAGE, layout=ui.page_layout(nav.url_path))
if ui.demo_mode():
    st.warning("DEMO MODE: demo data and demo accounts, written for testing, not clinical advice.", icon=":material/warning:")
if user is not None:
    with st.sidebar:
        st.markdown(f"Signed in as **{ui.md_escape(user.username)}** · {user.role}")  # a name is plain text
        ui.signout_link()
if nav.url_path != "help":  # Help opens at how to use the page the user was on (app_pages/help.py)
    st.session_state["help_from"] = nav.url_path
nav.run()
