"""medeval web app -- landing page.

The annotation app proper (login, roles, campaigns, grading screens) is built on
top of this entry point; until then it shows no data, only what the server is
running on. All logic lives in the ``medeval`` library.
"""

import streamlit as st

from medeval import settings
from medeval.db import connect
from medeval.errors import MedevalError


@st.cache_resource(show_spinner=False)
def init_db(path: str) -> str:
    """Run migrations once per process (not on every rerun: that causes 'database is locked')."""
    with connect(path) as db:
        return db.conn.execute("SELECT count(*) FROM _migrations").fetchone()[0]


st.set_page_config(page_title="medeval", page_icon="🩺", layout="centered")
st.title("medeval")
st.caption("Aligning automated evaluation of medical LLMs with clinicians' judgement.")

if settings.get("MEDEVAL_DEMO") == "1":
    st.warning("DEMO MODE: the data here is the project's demo data set, written for testing, "
               "not clinical advice.", icon="⚠️")

try:
    n = init_db(settings.db_path())
except MedevalError as e:
    st.error(str(e))
    st.stop()

st.success(f"Database ready ({n} migrations applied).", icon="✅")
st.markdown(
    "Sign-in, annotation campaigns and the researcher pages are not available yet. "
    "Researchers can already work from the command line: `python -m medeval --help`."
)
