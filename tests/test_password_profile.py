"""MEDEVAL_PASSWORD_HASH_PROFILE: cheap argon2 for test suites, never for the web app's accounts (issue 25 §7)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from medeval.accounts import auth
from medeval.cli import main
from medeval.core import runtime, settings
from medeval.core.errors import MedevalError
from medeval.core.runtime import Runtime

PW = "correct horse battery"


def params(stored: str) -> str:
    return stored.split("$")[3]  # $argon2id$v=19$m=...,t=...,p=...$salt$hash


def hash_of(db, username: str) -> str:
    return db.conn.execute("SELECT password_hash FROM users WHERE username = ?", (username,)).fetchone()[0]


def test_the_test_suite_sets_the_test_only_profile_unless_told_otherwise():
    from tests.conftest import ROOT

    assert 'os.environ.setdefault("MEDEVAL_PASSWORD_HASH_PROFILE", "test-only")' in (
        ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def test_only(monkeypatch):
    """The tests below start from the suite's profile, whatever the environment says."""
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", "test-only")


def test_test_only_and_production_parameters(db, monkeypatch):
    auth.add_user(db, "cheap", PW, "annotator")
    assert params(hash_of(db, "cheap")) == "m=8,t=1,p=1"
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", "production")
    auth.add_user(db, "strong", PW, "annotator")
    assert params(hash_of(db, "strong")) == "m=65536,t=3,p=4"  # argon2-cffi's RFC 9106 low-memory profile
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", "")
    assert settings.password_hash_profile() == "production"  # empty: the default


def test_the_web_app_hashes_with_production_whatever_the_setting(db, monkeypatch):
    auth.add_user(db, "doc", PW, "annotator")  # made by a test suite: test-only parameters
    assert params(hash_of(db, "doc")) == "m=8,t=1,p=1"
    with runtime.use(Runtime("web app")):  # what server.py installs, then switches to production hashing
        auth.use_production_hashing()
        assert settings.password_hash_profile() == "test-only"
        auth.add_user(db, "new", PW, "annotator")
        assert params(hash_of(db, "new")) == "m=65536,t=3,p=4"
        auth.authenticate(db, "doc", PW)  # the weak hash verifies (it carries its parameters) and is re-hashed
        assert params(hash_of(db, "doc")) == "m=65536,t=3,p=4"
        with pytest.raises(auth.AuthError):
            auth.authenticate(db, "doc", PW + "x")
        auth.authenticate(db, "doc", PW)


def test_server_py_switches_production_on():
    from tests.conftest import ROOT

    text = (ROOT / "server.py").read_text(encoding="utf-8")
    assert "auth.use_production_hashing()" in text.split("app = st.App(")[0]  # before the app is built


@pytest.mark.parametrize("value", ["fast", "TEST-ONLY", "test_only", "none"])
def test_an_unknown_profile_is_refused_with_the_choices(db, monkeypatch, value):
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", value)
    with pytest.raises(MedevalError, match="production, test-only"):
        auth.add_user(db, "x1", PW, "annotator")
    assert db.conn.execute("SELECT count(*) FROM users").fetchone()[0] == 0


def test_users_add_says_when_the_hash_is_test_only(db_path, monkeypatch):
    res = CliRunner().invoke(main, ["users", "add", "--db", str(db_path), "doc9", "--role", "annotator"],
                             input=f"{PW}\n")
    assert res.exit_code == 0, res.output
    assert "added doc9" in res.stdout and "test-only argon2 parameters" in res.stderr
    monkeypatch.setenv("MEDEVAL_PASSWORD_HASH_PROFILE", "production")
    res = CliRunner().invoke(main, ["users", "add", "--db", str(db_path), "doc8", "--role", "annotator"],
                             input=f"{PW}\n")
    assert res.exit_code == 0 and res.stderr == ""
