"""Accounts, roles (enforced in the library), sessions and the append-only audit log."""

import sqlite3
import subprocess
import sys

import pytest

from medeval.accounts import auth
from medeval.core.errors import MedevalError, PermissionDenied
from tests.conftest import ROOT

PW = "correct horse battery"


@pytest.fixture
def users(db):
    admin = auth.add_user(db, "admin1", PW, "admin")
    doc = auth.add_user(db, "doc1", PW + "!", "annotator", actor=admin)
    res = auth.add_user(db, "res1", PW + "?", "researcher", actor=admin)
    return admin, doc, res


def test_passwords_are_argon2_hashes_and_never_stored_or_logged(db, db_path, users):
    rows = db.conn.execute("SELECT password_hash FROM users").fetchall()
    assert all(h.startswith("$argon2id$") for (h,) in rows)
    with pytest.raises(auth.AuthError):
        auth.authenticate(db, "doc1", "wrong password here")
    dump = b"".join(open(p, "rb").read() for p in [db_path, str(db_path) + "-wal"] if __import__("os").path.exists(p))
    assert PW.encode() not in dump and b"wrong password here" not in dump


def test_authenticate_and_audit(db, users):
    u = auth.authenticate(db, "doc1", PW + "!")
    assert (u.username, u.role) == ("doc1", "annotator")
    assert auth.authenticate(db, "DOC1", PW + "!").username == "doc1"  # usernames are case-insensitive
    for name, pw in [("doc1", "not the password"), ("nobody", PW)]:
        with pytest.raises(auth.AuthError, match="wrong username or password"):  # same message either way
            auth.authenticate(db, name, pw)
    actions = [(r["actor"], r["action"]) for r in auth.audit_rows(db)]
    assert ("doc1", "login") in actions and actions.count(("doc1", "login.failed")) == 1
    # an unknown username is logged as a keyed hash (it may be a password typed into the wrong field)
    assert (auth.unknown_user_label(db, "nobody"), "login.failed") in actions
    assert "nobody" not in str(auth.audit_rows(db))


def test_disabled_user_cannot_log_in_and_loses_sessions(db, users):
    admin, doc, _ = users
    token = auth.create_session(db, doc)
    assert auth.session_user(db, token).username == "doc1"
    auth.disable(db, "doc1", actor=admin)
    assert auth.session_user(db, token) is None
    with pytest.raises(auth.AuthError):
        auth.authenticate(db, "doc1", PW + "!")


def test_sessions_idle_timeout_and_logout_end_server_side(db, users):
    _, doc, _ = users
    token = auth.create_session(db, doc)
    t0 = db.conn.execute("SELECT last_seen FROM sessions").fetchone()[0]
    assert auth.session_user(db, token, idle_timeout=60, now=t0 + 59).username == "doc1"  # restarts the clock
    assert auth.session_user(db, token, idle_timeout=60, now=t0 + 59 + 61) is None  # idle too long
    assert auth.session_user(db, token, idle_timeout=10**9) is None  # ended for good, not just expired
    t2 = auth.create_session(db, doc)
    auth.logout(db, t2)
    assert auth.session_user(db, t2) is None
    assert auth.session_user(db, "forged-token") is None and auth.session_user(db, None) is None
    stored = [r[0] for r in db.conn.execute("SELECT token_hash FROM sessions")]
    assert token not in stored and t2 not in stored  # only hashes are stored


def test_reset_password_ends_sessions(db, users):
    admin, doc, _ = users
    token = auth.create_session(db, doc)
    auth.reset_password(db, "doc1", "a brand new passphrase", actor=admin)
    assert auth.session_user(db, token) is None
    assert auth.authenticate(db, "doc1", "a brand new passphrase").username == "doc1"


@pytest.mark.parametrize("call", [
    lambda db, a: auth.add_user(db, "x1", PW, "admin", actor=a),
    lambda db, a: auth.list_users(db, actor=a),
    lambda db, a: auth.set_role(db, "doc1", "admin", actor=a),
    lambda db, a: auth.reset_password(db, "admin1", "hijacked password!", actor=a),
    lambda db, a: auth.disable(db, "admin1", actor=a),
    lambda db, a: auth.audit_rows(db, actor=a),
    lambda db, a: auth.unlock(db, "doc1", actor=a),
    lambda db, a: auth.locked_users(db, actor=a),
])
@pytest.mark.parametrize("who", ["doc1", "res1"])
def test_non_admins_are_refused_in_the_data_layer(db, users, call, who):
    actor = auth.get_user(db, who)
    before = db.conn.execute("SELECT count(*), group_concat(role) FROM users").fetchone()
    with pytest.raises(PermissionDenied):
        call(db, actor)
    assert db.conn.execute("SELECT count(*), group_concat(role) FROM users").fetchone() == before


def test_require_role():
    doc = auth.User(1, "d", "annotator", True)
    assert auth.require_role(doc, "annotator") is doc
    with pytest.raises(PermissionDenied, match="researcher"):
        auth.require_role(doc, "researcher", "admin")
    with pytest.raises(PermissionDenied, match="sign in"):
        auth.require_role(None, "annotator")
    with pytest.raises(PermissionDenied):
        auth.require_role(auth.User(1, "d", "admin", False), "admin")


def test_validation_and_last_admin_guard(db, users):
    admin = users[0]
    with pytest.raises(MedevalError, match="at least"):
        auth.add_user(db, "x2", "short", "annotator")
    with pytest.raises(MedevalError, match="already exists"):
        auth.add_user(db, "Doc1", PW, "annotator")
    with pytest.raises(MedevalError, match="not one of"):
        auth.add_user(db, "x3", PW, "superuser")
    with pytest.raises(MedevalError, match="username"):
        auth.add_user(db, "a b<script>", PW, "annotator")
    with pytest.raises(MedevalError, match="last active admin"):
        auth.set_role(db, "admin1", "annotator", actor=admin)
    auth.set_role(db, "res1", "admin", actor=admin)
    auth.set_role(db, "admin1", "researcher", actor=admin)  # now allowed: another admin exists


def test_audit_log_is_append_only(db, users):
    assert auth.audit_rows(db)
    for sql in ("UPDATE audit_log SET actor = 'x'", "DELETE FROM audit_log"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.conn.execute(sql)


def _cli(*args, stdin="", db_path=None):
    return subprocess.run([sys.executable, "-m", "medeval", *args, "--db", str(db_path)], input=stdin, cwd=ROOT,
                          capture_output=True, text=True)


@pytest.mark.slow  # runs python -m medeval in a subprocess
def test_cli_users_password_from_stdin(db_path):
    r = _cli("users", "add", "root", "--role", "admin", stdin=PW + "\n", db_path=db_path)
    assert r.returncode == 0, r.stderr
    assert "root\tadmin\tactive" in _cli("users", "list", db_path=db_path).stdout
    assert _cli("users", "add", "x", "--role", "admin", "--password", PW, db_path=db_path).returncode != 0
    r = _cli("users", "add", "nopw", "--role", "annotator", stdin="", db_path=db_path)
    assert r.returncode == 1 and "standard input" in r.stderr
    assert _cli("users", "set-role", "root", "annotator", db_path=db_path).returncode == 1  # last admin
    assert _cli("users", "add", "doc", "--role", "annotator", stdin=PW + "\n", db_path=db_path).returncode == 0
    assert _cli("users", "reset-password", "doc", stdin="another long password\n", db_path=db_path).returncode == 0
    assert _cli("users", "disable", "doc", db_path=db_path).returncode == 0
    audit = _cli("audit", "--format", "csv", db_path=db_path).stdout
    assert "user.add" in audit and "user.reset_password" in audit and "user.disable" in audit
    assert PW not in audit and "another long password" not in audit


def test_cookie_signing_and_the_stored_secret(db, monkeypatch):
    monkeypatch.delenv("MEDEVAL_SECRET_KEY", raising=False)
    key = auth.secret_key(db)
    assert len(key) > 40 and auth.secret_key(db) == key  # generated once, then kept in the database
    value = auth.sign_token(key, "tok")
    assert auth.unsign_token(key, value) == "tok"
    assert auth.unsign_token("another key", value) is None  # another server's (or a forged) cookie
    payload, sig = value.rsplit(".", 1)
    # a changed signature (its first character: the last one of a base64 HMAC carries spare bits, so changing it
    # may decode to the same bytes)
    assert auth.unsign_token(key, f"{payload}.{'A' if sig[0] != 'A' else 'B'}{sig[1:]}") is None
    assert auth.unsign_token(key, f"{payload[:-1]}{'A' if payload[-1] != 'A' else 'B'}.{sig}") is None
    assert auth.unsign_token(key, None) is None and auth.unsign_token(key, "") is None
    monkeypatch.setenv("MEDEVAL_SECRET_KEY", "configured-secret")
    assert auth.secret_key(db) == "configured-secret"


def test_repeated_failures_make_that_address_wait_for_a_while(db, users):
    t = 1_000_000.0
    for _ in range(auth.BACKOFF_AFTER):
        with pytest.raises(auth.AuthError, match="wrong username or password"):
            auth.authenticate(db, "doc1", "not the password", address="a", now=t)
    with pytest.raises(auth.Throttled, match="too many failed sign-ins") as e:
        auth.authenticate(db, "DOC1", PW + "!", address="a", now=t)  # even the right password, any capitalisation
    assert e.value.retry_after == auth.BACKOFF_BASE_S
    assert auth.authenticate(db, "doc1", PW + "!", address="b", now=t).username == "doc1"  # another address
    assert auth.authenticate(db, "res1", PW + "?", address="a", now=t).username == "res1"  # another user
    assert auth.authenticate(db, "doc1", PW + "!", address="a", now=t + auth.BACKOFF_BASE_S).username == "doc1"
    assert auth.locked_until(db, "doc1", now=t) is None  # one address never locks the username


def test_enable_after_disable(db, users):
    admin, doc, _ = users
    auth.disable(db, "doc1", actor=admin)
    with pytest.raises(PermissionDenied):
        auth.enable(db, "doc1", actor=doc)
    auth.enable(db, "doc1", actor=admin)
    assert auth.authenticate(db, "doc1", PW + "!").active
    assert [r["action"] for r in auth.audit_rows(db)].count("user.enable") == 1


def test_last_seen_is_written_at_most_every_few_seconds(db, users):
    _, doc, _ = users
    token = auth.create_session(db, doc)
    t0 = db.conn.execute("SELECT last_seen FROM sessions").fetchone()[0]
    auth.session_user(db, token, now=t0 + auth.SEEN_GRANULARITY_S - 1)
    assert db.conn.execute("SELECT last_seen FROM sessions").fetchone()[0] == t0  # no write per rerun
    auth.session_user(db, token, now=t0 + auth.SEEN_GRANULARITY_S + 1)
    assert db.conn.execute("SELECT last_seen FROM sessions").fetchone()[0] == t0 + auth.SEEN_GRANULARITY_S + 1
