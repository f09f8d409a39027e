"""Users, roles, sessions and the audit log -- enforced here, in the data layer, not only in the pages.

* Passwords are hashed with argon2 (argon2-cffi); no plain-text password is
  stored or logged anywhere.
* Roles: ``annotator`` (clinician), ``researcher``, ``admin``, ``adjudicator`` (a senior clinician who
  settles the annotators' disagreements: ``medeval.annotation.adjudication``). Functions that
  manage users take the acting user and refuse unless it is an admin (``medeval.accounts.policy``: every
  permission is declared there; the command line acts as its local actor, ``policy.local_actor()``).
* Sessions: a random token goes into the browser's signed, HttpOnly cookie;
  only its SHA-256 is stored. A session ends on logout, on idle timeout, at the
  end of its lifetime (``MEDEVAL_SESSION_LIFETIME``, however active it is), when
  the user is disabled, or when the password is reset.
* Sign-in: password hashing is bounded per process and failures are throttled per
  (username, client address); a username is locked for everyone only under failures
  from several addresses (``medeval.accounts.throttle``). A username that does not
  exist (perhaps a password typed into the wrong field) is never logged in clear.
* The audit log is append-only: SQLite triggers refuse UPDATE and DELETE.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
import time
from typing import TYPE_CHECKING

from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from medeval.accounts import policy, throttle
from medeval.accounts.audit_log import TIER_WORDS, audit  # noqa: F401 (re-exported: auth.audit, auth.TIER_WORDS)
from medeval.accounts.cookies import secret_key, sign_token, unsign_token  # noqa: F401 (re-exported)
from medeval.accounts.passwords import ProfileHasher, hasher, use_production_hashing  # noqa: F401 (re-exported)
from medeval.accounts.policy import User  # noqa: F401 (re-exported: a user, or the command line's local actor)
from medeval.accounts.transactions import transaction
from medeval.core import i18n, settings
from medeval.core.errors import MedevalError, PermissionDenied  # noqa: F401 (re-exported)
from medeval.core.i18n import _, ngettext

if TYPE_CHECKING:  # the parameters' type only: reading accounts needs no sqlite-utils
    import sqlite_utils

ROLES = policy.ROLES
# who may read the adjudication queue and record a final tier (researchers and admins adjudicate too)
ADJUDICATING_ROLES = policy.ADJUDICATING
MIN_PASSWORD_LENGTH = 10
# the lock-out's limits (see medeval.accounts.throttle)
BACKOFF_AFTER, BACKOFF_BASE_S = throttle.BACKOFF_AFTER, throttle.BACKOFF_BASE_S
LOCKOUT_FAILURES, LOCKOUT_ADDRESSES, LOCKOUT_WINDOW_S = (throttle.LOCKOUT_FAILURES, throttle.LOCKOUT_ADDRESSES,
                                                         throttle.LOCKOUT_WINDOW_S)
Busy = throttle.Busy  # too many sign-ins at once (a MedevalError with retry_after)
SEEN_GRANULARITY_S = 30  # last_seen is written at most this often (a write per rerun would be wasted)
_USERNAME_RE = re.compile(r"^[A-Za-z0-9_.@-]{2,64}$")
HASH_GATE = throttle.HashGate(slots=2, wait_s=10.0)  # 64 MiB per argon2 hash: at most two at once per process


def _dummy_hash() -> str:
    """The dummy hash of the runtime's hasher and profile in force (see :func:`_dummy_hash_of`)."""
    h = hasher()
    return _dummy_hash_of(h.profile() if isinstance(h, ProfileHasher) else f"hasher {id(h)}")


@functools.lru_cache(maxsize=4)
def _dummy_hash_of(_key: str) -> str:
    """Verified against for unknown users, so a wrong username costs the same as a wrong password.

    Computed on first use, not at import: argon2 takes 64 MiB and ~0.1 s, which every command would pay.
    """
    return hasher().hash("medeval-dummy-password-for-timing")


_dummy_hash.cache_clear = _dummy_hash_of.cache_clear  # (tests that swap the hasher start afresh)


class AuthError(MedevalError):
    """Login failed. The message never says whether the user exists."""


class Throttled(AuthError):
    """Sign-in refused without checking the password (too many failures); ``retry_after`` in seconds."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


def _hash(password: str) -> str:
    with HASH_GATE.slot():
        return hasher().hash(password)


def _verify(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored``; with no stored hash the same work is done for nothing."""
    with HASH_GATE.slot():
        try:
            return bool(hasher().verify(stored or _dummy_hash(), password))
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _actor_name(actor: User | None) -> str:
    return actor.username if actor else "cli"


def require_role(user: User | None, *roles: str) -> User:
    """The user, if signed in, active and in one of ``roles``; otherwise PermissionDenied.

    The library checks actions through :func:`medeval.accounts.policy.authorize`; this is its role check alone."""
    return policy.require_roles(user, *roles)


def _require_admin(db, actor: User | None) -> None:
    policy.authorize(actor, "users.manage", db=db)


def _check_username(username: str) -> str:
    username = (username or "").strip()
    if not _USERNAME_RE.match(username):
        raise MedevalError("a username is 2-64 characters: letters, digits and . _ @ -")
    return username


def _check_password(password: str) -> str:
    if password is None or len(password) < MIN_PASSWORD_LENGTH:
        raise MedevalError(f"the password must be at least {MIN_PASSWORD_LENGTH} characters")
    if password != password.strip():
        raise MedevalError("the password must not start or end with a space")
    return password


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise MedevalError(f"role {role!r} is not one of {', '.join(ROLES)}")
    return role


def _check_language(language: str | None) -> str | None:
    if language is None:
        return None
    try:
        return i18n.check(language)
    except ValueError as e:
        raise MedevalError(str(e)) from None


def _row_user(row) -> User:
    return User(row[0], row[1], row[2], bool(row[3]), language=row[4])


def get_user(db: sqlite_utils.Database, username: str) -> User:
    row = db.conn.execute("SELECT id, username, role, active, language FROM users WHERE username = ?",
                          (username,)).fetchone()
    if row is None:
        raise MedevalError(f"no user {username!r}")
    return _row_user(row)


def add_user(db: sqlite_utils.Database, username: str, password: str, role: str, *, actor: User | None = None,
             language: str | None = None) -> User:
    """A new account; ``language`` (zh-CN or en) is the interface it sees, None: ``MEDEVAL_LANGUAGE``'s until
    the person chooses."""
    _require_admin(db, actor)
    username, role = _check_username(username), _check_role(role)
    language = _check_language(language)
    _check_password(password)
    with transaction(db):
        if db.conn.execute("SELECT 1 FROM users WHERE username = ?", (username,)).fetchone():
            raise MedevalError(f"user {username!r} already exists")
        db.conn.execute("INSERT INTO users (username, password_hash, role, active, created_at) VALUES (?, ?, ?, 1, ?)",
                        (username, _hash(password), role, _now_iso()))
        if language is not None:  # (chosen: written; else NULL, MEDEVAL_LANGUAGE's until the person chooses)
            db.conn.execute("UPDATE users SET language = ? WHERE username = ?", (language, username))
        audit(db, _actor_name(actor), "user.add", username,
              {"role": role, **({"language": language} if language else {})})
    return get_user(db, username)


def set_language(db: sqlite_utils.Database, username: str, language: str, *, actor: User | None = None) -> User:
    """Set the interface language of ``username`` (zh-CN or en): a person their own (any role), an admin anyone's."""
    language = _check_language(language)
    if actor is not None and not actor.local and actor.username == username:
        policy.authorize(actor, "language.own", db=db)
    else:
        _require_admin(db, actor)
    with transaction(db):
        u = get_user(db, username)
        if u.language != language:
            db.conn.execute("UPDATE users SET language = ? WHERE id = ?", (language, u.id))
            audit(db, _actor_name(actor), "user.set_language", u.username, {"from": u.language, "to": language})
    return get_user(db, username)


def list_users(db: sqlite_utils.Database, *, actor: User | None = None) -> list[User]:
    _require_admin(db, actor)
    return [_row_user(r) for r in db.conn.execute("SELECT id, username, role, active, language FROM users ORDER BY username")]


def _end_sessions(db, user_id: int, reason: str) -> None:
    db.conn.execute("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE user_id = ? AND ended_at IS NULL",
                    (time.time(), reason, user_id))


def set_role(db: sqlite_utils.Database, username: str, role: str, *, actor: User | None = None) -> User:
    _require_admin(db, actor)
    _check_role(role)
    with transaction(db):
        u = get_user(db, username)
        _guard_last_admin(db, u, new_role=role)
        db.conn.execute("UPDATE users SET role = ? WHERE id = ?", (role, u.id))
        audit(db, _actor_name(actor), "user.set_role", u.username, {"from": u.role, "to": role})
    return get_user(db, username)


def reset_password(db: sqlite_utils.Database, username: str, password: str, *, actor: User | None = None) -> None:
    """Set a new password; ends the user's sessions and any lock-out of the username."""
    _require_admin(db, actor)
    _check_password(password)
    new_hash = _hash(password)
    with transaction(db):
        u = get_user(db, username)
        db.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?", (new_hash, u.id))
        _end_sessions(db, u.id, "password reset")
        audit(db, _actor_name(actor), "user.reset_password", u.username)


def enable(db: sqlite_utils.Database, username: str, *, actor: User | None = None) -> None:
    """Let a disabled user sign in again (their old sessions stay ended)."""
    _require_admin(db, actor)
    with transaction(db):
        u = get_user(db, username)
        if u.active:
            return
        db.conn.execute("UPDATE users SET active = 1 WHERE id = ?", (u.id,))
        audit(db, _actor_name(actor), "user.enable", u.username)


def disable(db: sqlite_utils.Database, username: str, *, actor: User | None = None) -> None:
    _require_admin(db, actor)
    with transaction(db):
        u = get_user(db, username)
        _guard_last_admin(db, u, new_role=None)
        db.conn.execute("UPDATE users SET active = 0 WHERE id = ?", (u.id,))
        _end_sessions(db, u.id, "user disabled")
        audit(db, _actor_name(actor), "user.disable", u.username)


def _guard_last_admin(db, u: User, new_role: str | None) -> None:
    if u.role != "admin" or new_role == "admin":
        return
    n = db.conn.execute("SELECT count(*) FROM users WHERE role = 'admin' AND active = 1").fetchone()[0]
    if n <= 1 and u.active:
        raise MedevalError(f"{u.username} is the last active admin; make another admin first")


def unknown_user_label(db: sqlite_utils.Database, username: str) -> str:
    """How the audit log names a username that does not exist: never the text itself (it may be a password
    typed into the wrong field), but a short keyed hash of it, so repeated attempts can be told apart."""
    digest = hmac.new(secret_key(db).encode(), (username or "").strip().lower().encode(), hashlib.sha256)
    return f"unknown user {digest.hexdigest()[:12]}"


def locked_until(db: sqlite_utils.Database, username: str, *, now: float | None = None) -> float | None:
    """When the lock-out of ``username`` ends (seconds since the epoch), or None when it is not locked."""
    return throttle.locked_until(db, (username or "").strip(), time.time() if now is None else now)


def locked_users(db: sqlite_utils.Database, *, actor: User | None = None, now: float | None = None) -> dict:
    """The usernames locked out now, with when each lock ends (admins and the command line only)."""
    _require_admin(db, actor)
    return throttle.locked_targets(db, time.time() if now is None else now)


def unlock(db: sqlite_utils.Database, username: str, *, actor: User | None = None) -> bool:
    """End the lock-out of ``username`` and the waits of the addresses that failed for it; audited.

    True when it was locked. (Resetting the password unlocks too.)
    """
    _require_admin(db, actor)
    with transaction(db):
        u = get_user(db, username)
        was_locked = locked_until(db, u.username) is not None
        audit(db, _actor_name(actor), "user.unlock", u.username, {"was_locked": was_locked})
    return was_locked


def _refuse(db, key: str, address: str, now: float, reason: str, message: str, retry_after: int):
    with transaction(db):
        audit(db, key, "login.refused", key, {"reason": reason, "address": address}, now=now)
    return Throttled(message, retry_after)


def authenticate(db: sqlite_utils.Database, username: str, password: str, *, address: str | None = None,
                 now: float | None = None) -> User:
    """The user for a correct username and password; AuthError otherwise. Every outcome is audited.

    ``address`` is the client's (the web routes pass it). Before any password is checked: a locked
    username, or an address that failed too often for this username, is refused as ``Throttled``
    (see ``medeval.accounts.throttle``); another address signs in as usual.
    """
    now = time.time() if now is None else now
    address = (address or "local")[:64]
    name = (username or "").strip()
    row = db.conn.execute("SELECT id, username, role, active, password_hash, language FROM users WHERE username = ?",
                          (name,)).fetchone()
    key = row[1] if row else unknown_user_label(db, name)  # what the audit log calls this username
    until = throttle.locked_until(db, key, now)
    if until is not None:
        minutes = max(1, round((until - now) / 60))
        raise _refuse(db, key, address, now, "locked",
                      ngettext("this username is locked after failed sign-ins from several addresses: wait {n} "
                               "minute, or ask an administrator to unlock it or reset the password",
                               "this username is locked after failed sign-ins from several addresses: wait {n} "
                               "minutes, or ask an administrator to unlock it or reset the password",
                               minutes).format(n=minutes),
                      throttle.whole_seconds(until - now))
    wait = throttle.backoff_wait(db, key, address, now)
    if wait:
        raise _refuse(db, key, address, now, "backoff",
                      ngettext("too many failed sign-ins for this username from this address: wait {n} second, "
                               "or ask an administrator to reset the password",
                               "too many failed sign-ins for this username from this address: wait {n} seconds, "
                               "or ask an administrator to reset the password", wait).format(n=wait), wait)
    ok = _verify(row[4] if row else None, password or "")  # the same work for unknown users
    failed = not row or not ok or not row[3]
    new_hash = _hash(password) if not failed and hasher().check_needs_rehash(row[4]) else None
    with transaction(db):  # the audit record is committed before the failure is raised
        if failed:
            audit(db, key, "login.failed", key,
                  {"reason": "disabled" if row and ok else "bad credentials", "address": address}, now=now)
            if evidence := throttle.lock_due(db, key, now):
                audit(db, "system", "login.locked_out", key, evidence, now=now)
        else:
            audit(db, row[1], "login", row[1], {"address": address}, now=now)
            if new_hash:
                db.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?", (new_hash, row[0]))
    if failed:
        raise AuthError(_("wrong username or password"))
    return _row_user((*row[:4], row[5]))


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_session(db: sqlite_utils.Database, user: User) -> str:
    """A new session for ``user``; returns the token for the cookie (only its hash is stored)."""
    token = secrets.token_urlsafe(32)
    now = time.time()
    with transaction(db):
        db.conn.execute("INSERT INTO sessions (token_hash, user_id, created_at, last_seen) VALUES (?, ?, ?, ?)",
                        (_token_hash(token), user.id, now, now))
    return token


def session_user(db: sqlite_utils.Database, token: str | None, *, idle_timeout: float | None = None,
                 lifetime: float | None = None, now: float | None = None) -> User | None:
    """The signed-in user of a session token, or None (unknown, ended, idle too long, too old, user disabled).

    A live session's idle clock restarts; an idle one (``idle_timeout`` seconds, default:
    ``MEDEVAL_IDLE_TIMEOUT``), or one older than ``lifetime`` seconds (default: ``MEDEVAL_SESSION_LIFETIME``)
    however active, is ended server-side.
    """
    if not token:
        return None
    now = time.time() if now is None else now
    lifetime = settings.session_lifetime() if lifetime is None else lifetime
    idle_timeout = settings.idle_timeout() if idle_timeout is None else idle_timeout
    th = _token_hash(token)
    row = db.conn.execute(
        "SELECT s.last_seen, s.ended_at, u.id, u.username, u.role, u.active, s.created_at, u.language FROM sessions s "
        "JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?", (th,)).fetchone()
    if row is None or row[1] is not None or not row[5]:
        return None
    user = User(row[2], row[3], row[4], bool(row[5]), session=th, language=row[7])
    if now - row[6] > lifetime:
        with transaction(db):
            db.conn.execute("UPDATE sessions SET ended_at = ?, end_reason = 'lifetime' WHERE token_hash = ? "
                            "AND ended_at IS NULL", (now, th))
            audit(db, row[3], "session.lifetime", row[3], {"hours": round(lifetime / 3600, 2)})
        return None
    if 0 <= now - row[0] < SEEN_GRANULARITY_S:
        return user
    with transaction(db):
        if now - row[0] > idle_timeout:
            db.conn.execute("UPDATE sessions SET ended_at = ?, end_reason = 'idle timeout' WHERE token_hash = ?",
                            (now, th))
            audit(db, row[3], "session.timeout", row[3])
            return None
        db.conn.execute("UPDATE sessions SET last_seen = ? WHERE token_hash = ?", (now, th))
    return user


def logout(db: sqlite_utils.Database, token: str | None) -> None:
    if not token:
        return
    th = _token_hash(token)
    with transaction(db):
        row = db.conn.execute("SELECT u.username FROM sessions s JOIN users u ON u.id = s.user_id "
                              "WHERE s.token_hash = ? AND s.ended_at IS NULL", (th,)).fetchone()
        if row:
            db.conn.execute("UPDATE sessions SET ended_at = ?, end_reason = 'logout' WHERE token_hash = ?",
                            (time.time(), th))
            audit(db, row[0], "logout", row[0])


AUDIT_COLUMNS = ["id", "at", "actor", "action", "target", "detail"]


def audit_rows(db: sqlite_utils.Database, *, actor: User | None = None) -> list[dict]:
    """The whole audit log, oldest first (admins and the command line only)."""
    _require_admin(db, actor)
    return [dict(zip(AUDIT_COLUMNS, r)) for r in
            db.conn.execute(f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit_log ORDER BY id")]
