"""The web server: Streamlit (``app.py``) plus the sign-in routes, as one ASGI app.

Run it with ``streamlit run server.py`` (what ``scripts/start.sh`` does); Streamlit finds
the ``app`` below and serves it with uvicorn, honouring ``.streamlit/config.toml`` and
``--server.*`` options.

Middleware, outermost first: ``TrustedProxies`` (``webui/proxy.py``) believes ``X-Forwarded-For`` and
``X-Forwarded-Proto`` only from the proxies named in ``MEDEVAL_TRUSTED_PROXIES`` (uvicorn's own handling, which
trusts any process on 127.0.0.1, is switched off here, while uvicorn imports this module); ``RequireSession``
sends a signed-out page load to the sign-in form; ``MediaGuard`` (``webui/media.py``) serves Streamlit's
``/media/`` files (downloads, images) only to the live session that owns them; ``WebsocketGuard``
(``webui/websocket.py``) refuses Streamlit's websocket from another origin or without a live session, strips the
messages of one whose session has ended, and passes ``clear_cache`` only from an admin. The lifespan first
records, from Streamlit's start on, which session owns each media file (``webui.media.owning``), then closes the
runtime when the server stops.
"""

import streamlit as st

from medeval.accounts import auth
from medeval.core import runtime, settings
from medeval.engine.plugins import load_plugins
from webui.media import media_middleware, owning
from webui.proxy import disable_uvicorn_proxy_headers, proxy_middleware
from webui.routes import middleware, routes
from webui.websocket import websocket_middleware

runtime.install(runtime.Runtime("web app"))  # this process's state: connection pool, hasher, migrations, models
load_plugins()  # metric plugins (medeval.metrics entry points, MEDEVAL_PLUGINS); a broken one stops the start, named
settings.check_all()  # a malformed setting (MEDEVAL_TRUSTED_PROXIES, MEDEVAL_DEMO, ...) stops the start, named
auth.use_production_hashing()  # the web app's runtime never hashes with MEDEVAL_PASSWORD_HASH_PROFILE=test-only
disable_uvicorn_proxy_headers()
if st.get_option("server.enableAgentApi"):
    # its /_stcore/agent/ routes drive pages and read files past the session cookie every guard here checks
    raise SystemExit("server.enableAgentApi is on: medeval does not start with Streamlit's agent API, which serves "
                     "pages and files without a medeval session. Turn it off (.streamlit/config.toml, "
                     "STREAMLIT_SERVER_ENABLE_AGENT_API) and start again.")
# lifespan: every media file's owner recorded from the start (no file is served without one); the runtime is closed
# when the server stops (idle connections closed, the write-ahead log folded in)
app = st.App("app.py", routes=routes(),
             middleware=proxy_middleware() + middleware() + media_middleware() + websocket_middleware(),
             lifespan=owning(runtime.closing))
