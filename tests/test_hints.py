"""The "start here" tips a user has hidden (medeval.accounts.hints): per user, persistent, names checked."""

import pytest

from medeval.accounts import auth, hints
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.store.db import connect

PW = "correct horse battery"


@pytest.fixture
def users(db):
    return {name: auth.add_user(db, name, PW, role) for name, role in
            [("res1", "researcher"), ("res2", "researcher"), ("doc", "annotator")]}


def test_a_tip_is_shown_until_dismissed_and_dismissing_twice_changes_nothing(db, users):
    u = users["res1"]
    assert not hints.is_dismissed(db, u, "campaigns")
    hints.dismiss(db, u, "campaigns")
    assert hints.is_dismissed(db, u, "campaigns")
    hints.dismiss(db, u, "campaigns")  # a double click
    assert db.conn.execute("SELECT count(*) FROM user_hints").fetchone()[0] == 1
    assert not hints.is_dismissed(db, u, "grade")  # only that tip


def test_restore_shows_every_tip_again_for_that_user_only(db, users):
    for name in ("campaigns", "grade", "rate-and-compare"):
        hints.dismiss(db, users["res1"], name)
    hints.dismiss(db, users["res2"], "campaigns")
    assert hints.restore(db, users["res1"]) == 3
    assert not any(hints.is_dismissed(db, users["res1"], n) for n in ("campaigns", "grade", "rate-and-compare"))
    assert hints.is_dismissed(db, users["res2"], "campaigns")
    assert hints.restore(db, users["res1"]) == 0


def test_one_users_dismissal_does_not_hide_the_tip_for_another(db, users):
    hints.dismiss(db, users["res1"], "campaigns")
    assert hints.is_dismissed(db, users["res1"], "campaigns")
    assert not hints.is_dismissed(db, users["res2"], "campaigns")
    assert not hints.is_dismissed(db, users["doc"], "campaigns")


def test_a_dismissal_persists_across_connections(db_path, db, users):
    hints.dismiss(db, users["doc"], "grade")
    with connect(db_path) as other:
        assert hints.is_dismissed(other, users["doc"], "grade")
        hints.restore(other, users["doc"])
    with connect(db_path) as third:
        assert not hints.is_dismissed(third, users["doc"], "grade")


@pytest.mark.parametrize("bad", ["", "Campaigns", "1st", "a b", "x" * 41, "hint;drop", "tip\n", "ü", None, 3])
def test_bad_tip_names_are_refused_with_a_clear_error_and_nothing_written(db, users, bad):
    for call in (lambda: hints.dismiss(db, users["res1"], bad), lambda: hints.is_dismissed(db, users["res1"], bad)):
        with pytest.raises(MedevalError, match="a tip's name is 1-40 characters.*use a name such as"):
            call()
    assert db.conn.execute("SELECT count(*) FROM user_hints").fetchone()[0] == 0


def test_the_longest_allowed_name_is_accepted(db, users):
    hints.dismiss(db, users["res1"], "a" + "b_-9" * 9 + "c" * 3)  # 40 characters
    assert db.conn.execute("SELECT count(*) FROM user_hints").fetchone()[0] == 1


def test_only_a_signed_in_active_user_changes_tips(db, users):
    with pytest.raises(PermissionDenied):
        hints.dismiss(db, None, "campaigns")
    from medeval.accounts.policy import local_actor

    auth.disable(db, users["res1"].username, actor=local_actor())  # the account as the database has it counts
    with pytest.raises(PermissionDenied):
        hints.restore(db, users["res1"])
    assert db.conn.execute("SELECT count(*) FROM user_hints").fetchone()[0] == 0


def test_the_functions_take_no_other_users_id():
    # the acting User is the only user a call can touch: no parameter names another one
    import inspect

    for fn in (hints.is_dismissed, hints.dismiss, hints.restore):
        assert [p for p in inspect.signature(fn).parameters if p not in ("db", "user", "hint")] == [], fn
