"""The web server: Streamlit (``app.py``) plus the sign-in routes, as one ASGI app.

Run it with ``streamlit run server.py`` (what ``scripts/start.sh`` does); Streamlit finds
the ``app`` below and serves it with uvicorn, honouring ``.streamlit/config.toml`` and
``--server.*`` options.
"""

import streamlit as st

from webui.routes import middleware, routes

app = st.App("app.py", routes=routes(), middleware=middleware())
