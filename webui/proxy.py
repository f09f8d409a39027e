"""Whose address is the client's: forwarded headers only from the proxies named in ``MEDEVAL_TRUSTED_PROXIES``.

Behind a reverse proxy every connection comes from the proxy, so the client's address and scheme travel in
``X-Forwarded-For`` / ``X-Forwarded-Proto``. Anyone can send those headers, though; they may be believed
only when the connection itself comes from a proxy we run. The sign-in budget and the lock-out are per
address (``medeval.accounts.throttle``), and the session cookie gets ``Secure`` when the scheme is https, so
a believed forgery lets its sender dodge the budget, lock other people's accounts or drop ``Secure``.

uvicorn (which ``streamlit run server.py`` starts) applies these headers itself, in a middleware outside the
app, for every peer in ``FORWARDED_ALLOW_IPS`` -- by default 127.0.0.1 and ::1, whatever the deployment:
any process on the server could claim any address. It rewrites the ASGI scope before the app sees it, so
the app cannot undo it afterwards. Hence two pieces:

* :func:`disable_uvicorn_proxy_headers` (called by ``server.py`` while uvicorn imports it, before uvicorn
  wraps the app) makes uvicorn leave the scope as the connection gave it;
* :class:`TrustedProxies`, the outermost middleware of ``server.py``, applies the headers -- with uvicorn's own
  ``ProxyHeadersMiddleware``, so the parsing is uvicorn's -- only for a peer named in
  ``MEDEVAL_TRUSTED_PROXIES`` (read at each connection; see ``medeval.core.settings``). For such a peer the
  client is the right-most address of ``X-Forwarded-For`` that is not itself a trusted proxy; for any
  other peer the headers are ignored and the client is the peer.

Streamlit itself reads the client address from the same scope (``st.context.ip_address``, its
"loopback only" checks), so it sees what the sign-in routes see.
"""

from __future__ import annotations

import functools

from starlette.middleware import Middleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from medeval.core import settings


def _untrusting(app, trusted_hosts=None):
    """Stands in for uvicorn's ``ProxyHeadersMiddleware``: the app unchanged (``TrustedProxies`` decides)."""
    return app


def disable_uvicorn_proxy_headers() -> None:
    """Make uvicorn's own forwarded-header handling a no-op for the app it is loading now.

    ``uvicorn.Config.load`` imports the app module (``server.py``), then wraps the app in
    ``uvicorn.config.ProxyHeadersMiddleware`` when ``proxy_headers`` is on (the default, with the trusted
    addresses read from ``FORWARDED_ALLOW_IPS`` before the import). Replacing that name before the wrap
    leaves the scope's ``client`` and ``scheme`` as the connection set them. ``tests/test_routes_proxy.py``
    checks the effect on a real ``streamlit run server.py``, so an uvicorn that changes this fails a test.
    """
    import uvicorn.config

    uvicorn.config.ProxyHeadersMiddleware = _untrusting


@functools.lru_cache(maxsize=8)
def _wrapped(app, trusted: tuple[str, ...]):
    return ProxyHeadersMiddleware(app, trusted_hosts=list(trusted))


class TrustedProxies:
    """ASGI middleware: ``X-Forwarded-For`` / ``-Proto`` applied only for a peer in ``MEDEVAL_TRUSTED_PROXIES``."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            trusted = settings.trusted_proxies()
            if trusted:
                return await _wrapped(self.app, trusted)(scope, receive, send)
        return await self.app(scope, receive, send)


def proxy_middleware() -> list[Middleware]:
    return [Middleware(TrustedProxies)]
