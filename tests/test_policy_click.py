"""Roles are checked at the click: a user object kept from an earlier run is judged as the database says now.

A Streamlit button's callback runs before the page script, with the user object the previous run read. Every
action of ``medeval.accounts.policy`` is tried here through a library function that takes it, with such a kept
object, after the account was demoted, disabled or its session ended -- each is refused with nothing written --
and, as the control that shows the call reaches its work, with the account as it was.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from medeval.accounts import auth, hints, policy
from medeval.annotation import adjudication, exam_review
from medeval.annotation.campaigns import assignment, grading, status
from medeval.annotation.cases import store as cases_store
from medeval.annotation.gold import items as gold_items
from medeval.annotation.tasks import answering
from medeval.calibration import tuning
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.engine import thresholds
from medeval.reports import dashboard
from medeval.store.db import connect

from .conftest import copy_db, db_dump

ROOT = Path(__file__).resolve().parent.parent
LOCAL = policy.local_actor()


def _ids(db) -> dict:
    one = lambda sql, *a: db.conn.execute(sql, a).fetchone()  # noqa: E731
    tier_item = one("SELECT a.item_id, a.campaign_id FROM assignments a JOIN users u ON u.id = a.user_id "
                    "JOIN campaigns c ON c.id = a.campaign_id WHERE u.username = 'doctor1' AND c.status = 'open' "
                    "ORDER BY a.item_id LIMIT 1")
    task_item = one("SELECT a.item_id, a.campaign_id FROM task_assignments a JOIN users u ON u.id = a.user_id "
                    "JOIN campaigns c ON c.id = a.campaign_id WHERE u.username = 'doctor1' AND c.status = 'open' "
                    "ORDER BY a.item_id LIMIT 1")
    response = one("SELECT r.id FROM responses r JOIN campaign_items ci ON ci.response_id != r.id LIMIT 1")
    return {"item": tier_item[0], "campaign": tier_item[1], "task_item": task_item[0],
            "task_campaign": task_item[1], "response": response[0],
            "version": one("SELECT max(version) FROM threshold_sets")[0]}


# action: (the demo account that takes it, a role it may not have, the call)
CALLS = {
    "users.manage": ("admin", "researcher", lambda db, u, i: auth.set_role(db, "doctor2", "researcher", actor=u)),
    "hints.own": ("doctor1", None, lambda db, u, i: hints.dismiss(db, u, "grade-start")),
    "language.own": ("doctor1", None, lambda db, u, i: auth.set_language(db, "doctor1", "en", actor=u)),
    "grade": ("doctor1", "adjudicator", lambda db, u, i: grading.submit_grade(
        db, u, i["item"], tier=1, client_token="click-test")),
    "task.answer": ("doctor1", "adjudicator", lambda db, u, i: answering.flag_item(
        db, u, i["task_item"], "unclear", client_token="click-test")),
    "adjudicate": ("senior1", "annotator", lambda db, u, i: adjudication.adjudicate(
        db, u, i["item"], 1, "the reference says so")),
    "adjudication.read": ("senior1", "annotator", lambda db, u, i: adjudication.queue(db, i["campaign"], actor=u)),
    "campaign.create": ("researcher", "annotator", lambda db, u, i: assignment.create_random_campaign(
        db, "click test", 3, ["doctor1"], k=1, actor=u)),
    "campaign.manage": ("researcher", "annotator", lambda db, u, i: status.set_campaign_status(
        db, i["campaign"], "closed", actor=u)),
    "campaign.read": ("researcher", "annotator", lambda db, u, i: status.current_grades(db, i["campaign"], actor=u)),
    "gold.manage": ("researcher", "annotator", lambda db, u, i: gold_items.list_gold(db, i["campaign"], actor=u)),
    "reports.read": ("researcher", "annotator", lambda db, u, i: dashboard.campaign_agreement(
        db, i["campaign"], actor=u, n_boot=20, include_machine=False)),
    "cases.import": ("researcher", "annotator", lambda db, u, i: cases_store.import_cases(db, "click", actor=u)),
    "exam.review": ("researcher", "annotator", lambda db, u, i: exam_review.decisions(db, "exam", actor=u)),
    "thresholds.publish": ("researcher", "annotator", lambda db, u, i: thresholds.activate(
        db, i["version"], actor=u)),
    "thresholds.tune": ("researcher", "annotator", lambda db, u, i: tuning.save_draft(
        db, u, "rouge1", "enumerated", 0.2, 0.6)),
}


def test_every_action_is_tried():
    # help.read has no library call: the Help page only reads the guides, each run with that run's user
    assert set(CALLS) == set(policy.ACTIONS) - {"help.read"}


@pytest.fixture
def demo(full_demo_template, tmp_path):
    path = copy_db(full_demo_template, tmp_path / "demo.db")
    with connect(path) as db:
        auth.add_user(db, "admin2", "another admin's password", "admin", actor=LOCAL)  # admin may be demoted
        db.test_path = path
        yield db


def _kept_user(db, username: str) -> tuple[policy.User, str]:
    """The user object a page run read from its session cookie, and the session's token."""
    token = auth.create_session(db, auth.get_user(db, username))
    return auth.session_user(db, token), token


def _lose(db, how: str, username: str, role: str | None, token: str) -> None:
    if how == "demoted":
        auth.set_role(db, username, role, actor=LOCAL)
    elif how == "disabled":
        auth.disable(db, username, actor=LOCAL)
    else:
        auth.logout(db, token)


@pytest.mark.parametrize("how", ["demoted", "disabled", "signed out"])
@pytest.mark.parametrize("action", sorted(CALLS))
def test_a_kept_user_object_is_refused_once_the_account_lost_the_right(demo, action, how):
    username, demoted_to, call = CALLS[action]
    if how == "demoted" and demoted_to is None:
        pytest.skip(f"{action} is open to every role: nothing to demote to")
    ids = _ids(demo)
    kept, token = _kept_user(demo, username)
    assert kept is not None and policy.allowed(kept, action)  # the page's run allowed it
    _lose(demo, how, username, demoted_to, token)
    before = db_dump(demo.test_path)
    with pytest.raises(PermissionDenied) as e:
        call(demo, kept, ids)
    if how == "demoted":
        assert f"you are {demoted_to}" in str(e.value)
    elif how == "signed out":
        assert "session has ended" in str(e.value)
    assert db_dump(demo.test_path) == before  # nothing written, not even an audit record under the old role


@pytest.mark.parametrize("action", sorted(CALLS))
def test_the_same_call_with_the_account_as_it_was_gets_past_the_check(demo, action):
    username, _, call = CALLS[action]
    kept, _token = _kept_user(demo, username)
    try:
        call(demo, kept, _ids(demo))
    except PermissionDenied:
        raise
    except MedevalError:
        pass  # refused for what the call asked (no files given, say), not for who asked


def test_a_role_changed_but_still_allowed_acts_under_the_role_it_has_now(demo):
    kept, _ = _kept_user(demo, "admin")
    auth.set_role(demo, "admin", "researcher", actor=LOCAL)
    assert policy.authorize(kept, "campaign.read", db=demo).role == "researcher"
    assert not policy.allowed(kept, "users.manage", db=demo) and policy.allowed(kept, "users.manage")


def test_every_library_check_reads_the_database():
    """``authorize`` refuses a person without ``db`` (a programming error, said clearly); this finds such a call
    in the source before a page does."""
    missing = []
    for p in (ROOT / "medeval").rglob("*.py"):
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "authorize"
                    and not any(k.arg == "db" for k in n.keywords)):
                missing.append(f"{p.relative_to(ROOT)}:{n.lineno}")
    assert missing == [] or all(m.startswith("medeval/accounts/policy.py") for m in missing), missing
    with pytest.raises(MedevalError, match="needs the database"):
        policy.authorize(policy.User(1, "doc", "annotator", True), "grade")
