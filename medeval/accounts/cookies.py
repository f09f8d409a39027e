"""The session cookie: the key that signs it, and signing and reading a session token.

Re-exported by ``medeval.accounts.auth`` (``auth.secret_key``, ``auth.sign_token``, ``auth.unsign_token``).
"""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING

from medeval.accounts.transactions import transaction
from medeval.core import settings

if TYPE_CHECKING:  # the parameters' type only: reading the key needs no sqlite-utils
    import sqlite_utils


def secret_key(db: sqlite_utils.Database) -> str:
    """The key that signs session cookies: MEDEVAL_SECRET_KEY, else one generated once and kept in the database.

    Keeping it in the database means sign-ins survive a restart without any setup; whoever can read the
    database can already do anything, so it protects nothing less by living there.
    """
    configured = settings.get("MEDEVAL_SECRET_KEY")
    if configured:
        return configured
    row = db.conn.execute("SELECT secret FROM app_secret WHERE id = 1").fetchone()
    if row:
        return row[0]
    with transaction(db):
        db.conn.execute("INSERT OR IGNORE INTO app_secret (id, secret, created_at) VALUES (1, ?, ?)",
                        (secrets.token_urlsafe(48), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        return db.conn.execute("SELECT secret FROM app_secret WHERE id = 1").fetchone()[0]


def _signer(key: str):
    from itsdangerous import URLSafeSerializer

    return URLSafeSerializer(key, salt="medeval-session")


def sign_token(key: str, token: str) -> str:
    """The cookie value for a session token (signed: a tampered cookie is rejected before any lookup)."""
    return _signer(key).dumps(token)


def unsign_token(key: str, value: str | None) -> str | None:
    """The session token inside a cookie value, or None when it is missing or its signature is wrong."""
    from itsdangerous import BadSignature

    if not value:
        return None
    try:
        token = _signer(key).loads(value)
    except BadSignature:
        return None
    return token if isinstance(token, str) else None
