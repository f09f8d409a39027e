"""Who may do what: every permission of medeval declared once, and the one check every layer calls.

The model is Argilla's policies ("may this user do this to this object", answered in one place and called by every
route). Each :data:`ACTIONS` entry names an action, the roles that may take it (in the order the refusal names
them) and whether it is *personal*: taken as oneself (one's own grades, answers, drafts, tips), so only a signed-in
person may take it. :func:`authorize` is the check (it raises :class:`PermissionDenied` with the text
:func:`medeval.accounts.auth.require_role` always gave); :func:`allowed` is the same question as a bool; a page
declares one action (``webui.pages``), the library checks it again.

Who acts:

* a signed-in :class:`User` (the web app passes the user of the session);
* the **local actor** (:func:`local_actor`): the command line, an admin named ``cli`` with ``local=True``, created
  once per command and passed explicitly; whoever can run the command on the server owns the database. What it
  does is recorded under its name (the audit log, ``created_by``, ``decided_by``): ``cli:<OS user>``, the account
  that ran the command (and who ran ``sudo``), so the audit log names a person on a server several people
  administer. It takes no personal action (it is nobody's grader);
* the demo builder's named actor (:func:`demo_actor`), an admin named ``demo``;
* ``None``: an **in-process trusted caller** -- a library function calling another after its own check (the
  adjudication queue reads items with ``actor=None`` after checking the adjudicator's role) and the tests. The
  library still accepts it for every non-personal action; pages, the command line and the demo never pass it
  (``tests/test_policy.py`` scans them).

Object rules that need no SQL live here too (:data:`OBJECT_RULES`): an adjudicator may not adjudicate an item
they grade (``authorize(actor, "adjudicate", Graded(item_id, graders))``; the graders are read by the caller).
The data checks that need a query stay where the query is, after :func:`authorize`: an annotator answers and
sees only the items assigned to them (``annotation.campaigns.grading``, ``annotation.tasks.answering`` select
by ``user_id``), a closed campaign takes no grades or answers (``campaigns.grading.submit_grade``,
``tasks.answering``), a hidden-gold
qualification gates grading (``annotation.gold``), the last active admin may not be demoted or disabled
(``auth._guard_last_admin``), and a user's tips and tuning drafts are read by their own ``user_id``.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field, replace
from typing import Callable

from medeval.core.errors import MedevalError, PermissionDenied

ROLES = ("annotator", "researcher", "admin", "adjudicator")
RESEARCH = ("researcher", "admin")
ANNOTATING = ("annotator", "researcher", "admin")
ADJUDICATING = ("adjudicator", "researcher", "admin")  # researchers and admins adjudicate too


@dataclass(frozen=True)
class User:
    """Someone who acts: a row of ``users``, or (``local=True``) the command line or the demo builder."""

    id: int
    username: str
    role: str
    active: bool
    local: bool = False
    # the hash of the session token this user object was read for (``auth.session_user``): a callback that runs
    # with the previous run's object is checked against that very session, which may have ended since
    session: str | None = field(default=None, compare=False, repr=False)
    # the interface language the person chose (``medeval.core.i18n.LANGUAGES``); None: not chosen, the setting's
    language: str | None = field(default=None, compare=False)

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


@dataclass(frozen=True)
class Action:
    name: str
    roles: tuple[str, ...]  # () = any signed-in user
    personal: bool  # taken as oneself: a signed-in person only (not None, not the local actor)
    what: str


ACTIONS: dict[str, Action] = {a.name: a for a in (
    Action("users.manage", ("admin",), False, "add users, change roles, reset passwords, disable, unlock; "
                                              "read the users and the audit log"),
    Action("help.read", (), True, "read the Help page"),
    Action("hints.own", (), True, "hide or show again one's own start-here tips"),
    Action("language.own", (), True, "choose one's own interface language"),
    Action("grade", ANNOTATING, True, "grade one's assigned items of a tier campaign, answer its gold items, "
                                      "acknowledge its guidelines"),
    Action("task.answer", ANNOTATING, True, "answer one's assigned items of a task campaign and its gold items"),
    Action("adjudicate", ADJUDICATING, True, "record a final tier for an item the annotators disagree on"),
    Action("adjudication.read", ADJUDICATING, False, "read the adjudication queue and the campaigns to adjudicate"),
    Action("campaign.create", RESEARCH, False, "create tier and task campaigns (and preview them, pick annotators)"),
    Action("campaign.manage", RESEARCH, False, "close, reopen, add items, set guidelines, run an active campaign's "
                                               "next round"),
    Action("campaign.read", RESEARCH, False, "read campaigns: progress, every annotator's grades and answers, "
                                             "flags, task results, an active campaign's rounds"),
    Action("gold.manage", RESEARCH, False, "mark, retire and import gold items; set a campaign's gold settings; "
                                           "read the gold items and the annotators' accuracy on them"),
    Action("reports.read", RESEARCH, False, "read the agreement statistics, clinicians vs machine, the leaderboard"),
    Action("cases.import", RESEARCH, False, "import cases, judge rationales and fact claims"),
    Action("exam.review", RESEARCH, False, "score exam answers and settle the ambiguous ones"),
    Action("thresholds.publish", RESEARCH, False, "publish or activate a threshold set; grade stored scores under "
                                                  "a version"),
    Action("thresholds.tune", RESEARCH, True, "keep one's own draft cut-offs in Tune cut-offs"),
)}


def get(action: str) -> Action:
    """The declared action ``action``; a name not declared is a programming error, said clearly."""
    try:
        return ACTIONS[action]
    except KeyError:
        raise MedevalError(f"no action {action!r} in medeval.accounts.policy.ACTIONS "
                           f"(known: {', '.join(sorted(ACTIONS))})") from None


def roles_for(action: str) -> tuple[str, ...]:
    """The roles that may take ``action`` (empty: any signed-in user)."""
    return get(action).roles


def require_roles(user: User | None, *roles: str) -> User:
    """The user, if signed in, active and in one of ``roles``; otherwise PermissionDenied (``auth.require_role``)."""
    if user is None or not user.active:
        raise PermissionDenied("sign in first")
    if roles and user.role not in roles:
        raise PermissionDenied(f"this needs the role {' or '.join(roles)}; you are {user.role}")
    return user


@dataclass(frozen=True)
class Graded:
    """An item and the ids of the users it is assigned to (its graders): the object of ``adjudicate``."""

    item_id: int
    graders: frozenset[int]


def _not_own_item(actor: User, obj: Graded) -> None:
    if actor.id in obj.graders:
        raise PermissionDenied(
            f"{actor.username!r} is one of item {obj.item_id}'s graders (it is assigned to them), so cannot "
            "adjudicate it: an adjudication must not weigh the adjudicator's own tier. Another adjudicator, "
            "researcher or admin must settle it; nothing was saved")


OBJECT_RULES: dict[str, Callable[[User, object], None]] = {"adjudicate": _not_own_item}


def authorize(actor: User | None, action: str, obj: object = None, *, db=None) -> User | None:
    """Refuse (PermissionDenied) unless ``actor`` may take ``action`` (on ``obj``, where a rule needs it).

    A signed-in person is judged as the database says now, not as the object passed says: ``db`` (the database
    the action acts on) is read again for the account's role and whether it is enabled, and for whether the
    session the object was read for is still live (:func:`current`). A page's button callback runs with the
    user object of the previous run, so without this a demoted admin could still make someone admin with one
    click, or a researcher turned annotator close a campaign. ``db`` is required for a person (a call without
    it is a programming error); the local actor and ``None`` have no account to read.

    Returns the actor as it is now. ``None`` is an in-process trusted caller (see the module): allowed every
    action that is not personal, and for a personal one "sign in first", as before.
    """
    a = get(action)
    if actor is not None and not actor.local:
        if db is None:
            raise MedevalError(f"authorize({actor.username!r}, {action!r}) needs the database, to read the "
                               "account's role and session as they are now")
        actor = current(db, actor)
    return _judge(actor, a, obj)


def _judge(actor: User | None, a: Action, obj: object) -> User | None:
    """The checks of :func:`authorize` on ``actor`` as given."""
    if actor is None:
        if a.personal:
            raise PermissionDenied("sign in first")
        return None
    if a.personal and actor.local:
        raise PermissionDenied(f"{actor.username!r} is not a person with an account; sign in to {a.what}")
    require_roles(actor, *a.roles)
    rule = OBJECT_RULES.get(a.name)
    if rule is not None and obj is not None:
        rule(actor, obj)
    return actor


def current(db, user: User) -> User:
    """``user`` as the database has it now: the same account with its role and whether it is enabled read again,
    refused (PermissionDenied) when the account is gone or disabled, or when the session ``user`` was read for has
    ended (signed out, timed out, ended by an administrator). One indexed read; no write."""
    row = db.conn.execute("SELECT username, role, active FROM users WHERE id = ?", (user.id,)).fetchone()
    if row is None or not row[2]:
        raise PermissionDenied("sign in first")  # the text a disabled account has always been refused with
    if user.session is not None:
        ended = db.conn.execute("SELECT ended_at IS NOT NULL FROM sessions WHERE token_hash = ? AND user_id = ?",
                                (user.session, user.id)).fetchone()
        if ended is None or ended[0]:
            raise PermissionDenied("your session has ended: sign in again; nothing was saved")
    if (row[0], row[1]) == (user.username, user.role) and user.active:
        return user
    return replace(user, username=row[0], role=row[1], active=True)


def allowed(actor: User | None, action: str, obj: object = None, *, db=None) -> bool:
    """Whether :func:`authorize` would let ``actor`` take ``action`` (on ``obj``). Without ``db`` the user object is
    judged as it is (what a page shows or hides for the user of its run); the library's own check reads again."""
    try:
        if db is None:
            _judge(actor, get(action), obj)
        else:
            authorize(actor, action, obj, db=db)
    except PermissionDenied:
        return False
    return True


def local_actor() -> User:
    """The command line: an admin named ``cli:<OS user>`` (:func:`os_user`), local, with no account (id 0). Create
    one per command and pass it explicitly."""
    return User(0, f"cli:{os_user()}", "admin", True, local=True)


def os_user() -> str:
    """The operating-system account running this process, by its user id (an environment variable could say
    anything); under ``sudo`` also the account that ran it, e.g. ``root (sudo by wang)``."""
    try:
        import pwd

        name = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):  # no pwd module (Windows), or a uid without an entry (a bare container)
        try:
            name = getpass.getuser()
        except Exception:
            name = f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"
    by = os.environ.get("SUDO_USER", "")
    return f"{name} (sudo by {by})" if by and by != name else name


def demo_actor() -> User:
    """The demo builder: an admin named ``demo``, local, with no account."""
    return User(0, "demo", "admin", True, local=True)
