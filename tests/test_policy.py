"""The permission policy (``medeval.accounts.policy``), the pages' table (``webui.pages``) and who acts where.

The expected tables below are written out by hand from the checks as they stood before the policy (issue 25 §4):
``require_role(actor, "researcher", "admin")`` and friends in each module, ``ui.require(...)`` on each page and the
navigation per role in ``app.py``. They are not generated from the policy, so a changed rule fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from medeval.accounts import auth, policy
from medeval.accounts.policy import Graded, User
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.store.db import connect

ROOT = Path(__file__).resolve().parent.parent
PW = "correct horse battery"

PEOPLE = {role: User(i, f"{role[:3]}{i}", role, True) for i, role in
          enumerate(("annotator", "adjudicator", "researcher", "admin"), start=1)}


@pytest.fixture(scope="module")
def pdb(tmp_path_factory):
    """A database whose accounts are PEOPLE (ids 1-4) and a disabled admin ``gone`` (id 5): ``authorize`` reads a
    person's role from the database it acts on."""
    with connect(tmp_path_factory.mktemp("policy") / "people.db") as d:
        rows = [(u.id, u.username, u.role, 1) for u in PEOPLE.values()] + [(5, "gone", "admin", 0)]
        d.conn.executemany("INSERT INTO users (id, username, password_hash, role, active, created_at) "
                           "VALUES (?, ?, 'x', ?, ?, '2026-01-01')", rows)
        d.conn.commit()
        yield d

# action: the roles that may take it (A annotator, J adjudicator, R researcher, M admin), and whether it is
# personal (taken as oneself: None and the command line are refused). From the checks of each module.
MATRIX = """
users.manage        M     no    auth.add_user, set_role, reset_password, enable, disable, unlock, audit_rows
help.read           AJRM  yes   the Help page (ui.require() with no role)
hints.own           AJRM  yes   hints.is_dismissed, dismiss, restore (require_role(user))
language.own        AJRM  yes   auth.set_language of one's own account (another's: users.manage)
grade               ARM   yes   campaigns.grading.*, gold.start_attempt/review/submit_gold, guidelines.acknowledge
task.answer         ARM   yes   tasks.answering.*, gold.submit_gold(backend=TASK), gold.review(backend=TASK)
adjudicate          JRM   yes   adjudication.adjudicate
adjudication.read   JRM   no    adjudication.campaigns, queue
campaign.create     RM    no    campaigns.assignment.create_*, annotator_choices; tasks.campaigns.preview, create
campaign.manage     RM    no    campaigns.status.set_campaign_status, add_items, guidelines.set, rounds.next_round
campaign.read       RM    no    campaigns.status.list/progress/review_item/current_grades, tasks.reporting.*
gold.manage         RM    no    gold (items, task_items, settings), gold.gold_accuracy
reports.read        RM    no    validation.machine_agreement, dashboard.campaign_agreement
cases.import        RM    no    cases.store.import_cases, import_fact_claims
exam.review         RM    no    exam_review.*
thresholds.publish  RM    no    thresholds.activate, cutoffs.publish_set, leaderboard.grade_missing
thresholds.tune     RM    yes   tuning.draft, save_draft, discard_draft
"""
LETTER = {"A": "annotator", "J": "adjudicator", "R": "researcher", "M": "admin"}
EXPECTED = {line.split()[0]: ({LETTER[c] for c in line.split()[1]}, line.split()[2] == "yes")
            for line in MATRIX.strip().splitlines()}


def test_the_declared_actions_are_exactly_the_expected_ones():
    assert set(policy.ACTIONS) == set(EXPECTED)


@pytest.mark.parametrize("action", sorted(EXPECTED))
@pytest.mark.parametrize("role", sorted(PEOPLE))
def test_role_by_action(role, action, pdb):
    roles, _personal = EXPECTED[action]
    assert policy.allowed(PEOPLE[role], action) is (role in roles)
    if role in roles:
        assert policy.authorize(PEOPLE[role], action, db=pdb) is PEOPLE[role]
    else:
        with pytest.raises(PermissionDenied):
            policy.authorize(PEOPLE[role], action, db=pdb)


@pytest.mark.parametrize("action", sorted(EXPECTED))
def test_none_and_the_local_actor_take_every_action_but_the_personal_ones(action):
    _roles, personal = EXPECTED[action]
    assert policy.allowed(None, action) is not personal  # None: an in-process trusted caller
    assert policy.allowed(policy.local_actor(), action) is not personal
    assert policy.allowed(policy.demo_actor(), action) is not personal


def test_the_refusals_keep_the_texts_require_role_gave(pdb):
    with pytest.raises(PermissionDenied) as e:
        policy.authorize(PEOPLE["annotator"], "campaign.create", db=pdb)
    assert str(e.value) == "this needs the role researcher or admin; you are annotator"
    with pytest.raises(PermissionDenied) as e:
        policy.authorize(PEOPLE["researcher"], "users.manage", db=pdb)
    assert str(e.value) == "this needs the role admin; you are researcher"
    with pytest.raises(PermissionDenied) as e:
        policy.authorize(PEOPLE["annotator"], "adjudicate", db=pdb)
    assert str(e.value) == "this needs the role adjudicator or researcher or admin; you are annotator"
    with pytest.raises(PermissionDenied) as e:
        policy.authorize(PEOPLE["adjudicator"], "grade", db=pdb)
    assert str(e.value) == "this needs the role annotator or researcher or admin; you are adjudicator"
    for who in (None, User(5, "gone", "admin", False)):  # nobody signed in, a disabled account
        with pytest.raises(PermissionDenied, match="^sign in first$"):
            policy.authorize(who, "grade", db=pdb)
    with pytest.raises(PermissionDenied, match="^sign in first$"):
        policy.authorize(User(5, "gone", "admin", False), "campaign.read", db=pdb)
    with pytest.raises(PermissionDenied, match="'cli:.+' is not a person with an account"):
        policy.authorize(policy.local_actor(), "task.answer")
    assert auth.require_role(PEOPLE["admin"], "admin") is PEOPLE["admin"]  # the old name answers as before


def test_an_unknown_action_is_a_clear_error_not_a_refusal_nor_a_pass():
    with pytest.raises(MedevalError, match=r"no action 'campaign.delete' .*known: adjudicate, adjudication.read"):
        policy.allowed(PEOPLE["admin"], "campaign.delete")


def test_the_local_and_demo_actors_are_named_admins_without_an_account():
    cli, demo = policy.local_actor(), policy.demo_actor()
    assert (cli.username, cli.role, cli.active, cli.local, cli.id) == (f"cli:{policy.os_user()}", "admin", True, True, 0)
    assert (demo.username, demo.role, demo.local) == ("demo", "admin", True)
    assert not PEOPLE["admin"].local and PEOPLE["admin"].is_admin and cli.is_admin


# ---------------------------------------------------------------- the object rule

def test_an_adjudicator_may_not_adjudicate_an_item_they_grade(pdb):
    senior, res = PEOPLE["adjudicator"], PEOPLE["researcher"]
    theirs = Graded(17, frozenset({senior.id, 9}))
    with pytest.raises(PermissionDenied, match=r"'adj2' is one of item 17's graders .*nothing was saved"):
        policy.authorize(senior, "adjudicate", theirs, db=pdb)
    assert not policy.allowed(senior, "adjudicate", theirs)
    assert policy.allowed(res, "adjudicate", theirs)  # a researcher who is not one of its graders
    assert policy.allowed(senior, "adjudicate", Graded(18, frozenset()))
    assert not policy.allowed(PEOPLE["annotator"], "adjudicate", Graded(18, frozenset()))  # the role comes first
    # (adjudication.adjudicate reads the item's graders and asks this rule: tests/test_adjudication_own.py)


# ---------------------------------------------------------------- the command line acts as the local actor

def test_a_cli_command_records_the_local_actor_in_the_audit_log(db_path):
    from medeval.cli import main

    res = CliRunner().invoke(main, ["users", "add", "senior", "--role", "adjudicator", "--db", str(db_path)],
                             input=PW + "\n")
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["users", "disable", "senior", "--db", str(db_path)])
    assert res.exit_code == 0, res.output
    with connect(db_path) as db:
        rows = db.conn.execute("SELECT actor, action, target FROM audit_log WHERE action LIKE 'user.%' "
                               "ORDER BY id").fetchall()
    assert rows == [(policy.local_actor().username, "user.add", "senior"),
                    (policy.local_actor().username, "user.disable", "senior")]
    import pwd

    assert rows[0][0] == f"cli:{pwd.getpwuid(os.getuid()).pw_name}"  # the audit names the account that ran it


def test_the_local_actor_names_the_os_account_and_who_ran_sudo(monkeypatch):
    import pwd

    me = pwd.getpwuid(os.getuid()).pw_name
    monkeypatch.setenv("USER", "someone-else")  # the environment does not decide who ran the command
    monkeypatch.delenv("SUDO_USER", raising=False)
    assert policy.local_actor().username == f"cli:{me}"
    monkeypatch.setenv("SUDO_USER", "wang")
    assert policy.local_actor().username == f"cli:{me} (sudo by wang)"


# ---------------------------------------------------------------- no production caller passes actor=None

SCANNED = ("app_pages", "webui", "medeval/cli", "medeval/demo")


def _aliases(tree: ast.AST) -> dict[str, tuple[str, str | None]]:
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("medeval"):
                    out[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("medeval"):
            for a in node.names:
                out[a.asname or a.name] = (node.module, a.name)
    return out


def _resolve(func: ast.AST, aliases: dict):
    chain = []
    while isinstance(func, ast.Attribute):
        chain.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in aliases:
        return None
    module, name = aliases[func.id]
    obj = importlib.import_module(module)
    if name is not None:
        obj = getattr(obj, name) if hasattr(obj, name) else importlib.import_module(f"{module}.{name}")
    for attr in reversed(chain):
        obj = getattr(obj, attr, None)
    return obj


def actor_violations(source: str, where: str) -> list[str]:
    """Calls in ``source`` that pass ``actor=None``, or call a medeval function that takes an actor without one."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found = []
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        kw = {k.arg: k.value for k in call.keywords}
        if isinstance(kw.get("actor"), ast.Constant) and kw["actor"].value is None:
            found.append(f"{where}:{call.lineno}: actor=None")
            continue
        obj = _resolve(call.func, aliases)
        if not callable(obj) or not (getattr(obj, "__module__", None) or "").startswith("medeval"):
            continue
        try:
            params = list(inspect.signature(obj).parameters.values())
        except (TypeError, ValueError):
            continue
        names = [p.name for p in params]
        if "actor" not in names or "actor" in kw or None in kw:  # (None: **kwargs passed on)
            continue
        i = names.index("actor")
        if params[i].kind is not inspect.Parameter.KEYWORD_ONLY and len(call.args) > i:
            continue
        found.append(f"{where}:{call.lineno}: {obj.__qualname__} without an actor")
    return found


def test_the_scan_finds_both_kinds_of_mistake():
    bad = ("from medeval.accounts import auth\nfrom medeval.annotation.campaigns import status as st\n"
           "def f(db, a):\n    auth.list_users(db)\n    st.list_campaigns(db, actor=None)\n"
           "    st.list_campaigns(db, actor=a)\n    auth.get_user(db, 'x')\n")
    assert actor_violations(bad, "x.py") == ["x.py:4: list_users without an actor", "x.py:5: actor=None"]


def test_pages_the_cli_and_the_demo_never_pass_actor_none_nor_omit_the_actor():
    files = [p for d in SCANNED for p in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 40
    found = [v for p in files for v in actor_violations(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


# ---------------------------------------------------------------- each page declared once

NAVIGATION = {  # app.py before the table: the pages of each role, in order
    "annotator": ["grade", "annotate", "help"],
    "adjudicator": ["adjudicate", "help"],
    "researcher": ["campaigns", "agreement", "adjudicate", "tuning", "leaderboard", "task-results", "exam",
                   "new-campaign", "new-task", "grade", "annotate", "help"],
    "admin": ["users", "campaigns", "agreement", "adjudicate", "tuning", "leaderboard", "task-results", "exam",
              "new-campaign", "new-task", "grade", "annotate", "help"],
}
PAGE_ROLES = {  # each page's ui.require(...) before the table
    "grade": ("annotator", "researcher", "admin"), "annotate": ("annotator", "researcher", "admin"),
    "adjudicate": ("adjudicator", "researcher", "admin"), "help": (), "users": ("admin",),
    **{p: ("researcher", "admin") for p in ("campaigns", "agreement", "tuning", "leaderboard", "task-results", "exam",
                                            "new-campaign", "new-task")}}


@pytest.mark.parametrize("role", sorted(NAVIGATION))
def test_each_role_gets_the_same_pages_in_the_same_order(role):
    from webui import pages

    assert [p.url_path for p in pages.for_role(role)] == NAVIGATION[role]


def test_each_page_needs_the_roles_it_needed():
    from webui import pages

    assert {p.url_path: p.roles for p in pages.PAGES} == PAGE_ROLES


def test_each_page_script_checks_its_own_entry_of_the_table():
    from webui import pages

    for p in pages.PAGES:
        tree = ast.parse((ROOT / p.script).read_text(encoding="utf-8"))
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr in ("require", "require_page")]
        assert [(c.func.attr, [a.value for a in c.args]) for c in calls] == [("require_page", [p.url_path])], p.script
    assert {f"app_pages/{f.name}" for f in (ROOT / "app_pages").glob("*.py")} == {p.script for p in pages.PAGES}


def test_wide_pages_come_from_the_table():
    from webui import page as ui
    from webui import pages

    assert ui.WIDE_PAGES == pages.WIDE_PAGES == {"campaigns", "agreement", "tuning", "leaderboard", "task-results",
                                                 "users", "new-campaign", "new-task", "exam", "grade", "adjudicate",
                                                 "annotate"}
    with pytest.raises(KeyError, match="no page 'nope'"):
        pages.get("nope")


def test_every_declared_action_is_checked_somewhere():
    used = set()
    for d in ("medeval", "webui"):
        for p in (ROOT / d).rglob("*.py"):
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "authorize":
                    used |= {a.value for a in n.args[1:2] if isinstance(a, ast.Constant)}
    from webui import pages

    used |= {p.action for p in pages.PAGES}
    assert used == set(policy.ACTIONS)
