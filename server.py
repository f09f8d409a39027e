"""The web server: Streamlit (``app.py``) plus the sign-in routes, as one ASGI app.

Run it with ``streamlit run server.py`` (what ``scripts/start.sh`` does); Streamlit finds
the ``app`` below and serves it with uvicorn, honouring ``.streamlit/config.toml`` and
``--server.*`` options.

Middleware, outermost first: ``RequireSession`` sends a signed-out page load to the sign-in
form; ``WebsocketGuard`` (``webui/websocket.py``) refuses Streamlit's websocket from another
origin or without a live session, and strips the messages of one whose session has ended.
"""

import streamlit as st

from webui.routes import middleware, routes
from webui.websocket import websocket_middleware

app = st.App("app.py", routes=routes(), middleware=middleware() + websocket_middleware())
