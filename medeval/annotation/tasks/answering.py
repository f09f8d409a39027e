"""The answer flow of an annotator: the blind item view, next item, append-only answers, skips and flags."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation import answers, gold, item_rows
from medeval.annotation import guidelines as gl
from medeval.annotation.screen_keys import screen_key
from medeval.annotation.tasks import state
from medeval.annotation.tasks.campaigns import campaign
from medeval.annotation.tasks.registry import get, is_task_kind
from medeval.annotation.tasks.state import (  # noqa: F401 (re-exported: the package's names)
    ANNOTATING_ROLES,
    FLAG,
    SKIP,
    ItemView,
    StaleAnswer,
)
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.i18n import _
from medeval.core.text import snippet

@dataclass(frozen=True)
class TaskState:
    campaign_id: int
    campaign_name: str
    task: str
    title: str
    instructions: str
    open: bool
    item: ItemView | None  # None: nothing left
    done: int  # items complete
    total: int
    skipped: int  # items skipped and not complete
    position: int  # 1-based number of the item on screen (skipped items count as passed)
    phase: str = "items"  # "qualification": the qualification round (see ``qualification``); "items" otherwise
    qualification: gold.QualificationState | None = None
    reopened: GivenAnswer | None = None  # ``item`` was answered before and is shown again to answer anew


@dataclass(frozen=True)
class GivenAnswer:
    """An item the annotator has answered (some or all of its questions), skipped or flagged: a line of the list of
    their answers, from which it can be reopened. Hidden gold items are listed exactly like real ones."""

    ref: str  # opaque reference for ``task_state(reopen=...)``
    key: str  # what the screen's widgets carry (per annotator, opaque)
    status: str  # "flagged", "skipped" or "answered"
    complete: bool  # every question of the item has an answer
    question: str | None  # the id of the question answered last (None: the item was skipped)
    last: str  # the last answer as the screen words it ("Response 1 · Fluency → 4"), or "skipped" (in the reader's
    # language)
    snippet: str  # the start of the item's first text, on one line (to tell items apart)
    order: int  # the id of the annotator's latest row on the item: newest first


def _assignment(db, user: User, item_id: int) -> tuple[dict, dict, str, str, int]:
    row = db.conn.execute(
        "SELECT ti.payload, a.layout, c.kind, c.status, c.id FROM task_assignments a JOIN task_items ti ON "
        "ti.id = a.item_id JOIN campaigns c ON c.id = a.campaign_id WHERE a.item_id = ? AND a.user_id = ?",
        (item_id, user.id)).fetchone()
    if row is None:
        raise PermissionDenied(_("this item is not assigned to you"))
    return json.loads(row[0]), json.loads(row[1]), row[2], row[3], row[4]


def item_view(db: sqlite_utils.Database, user: User, item_id: int) -> ItemView:
    """The blind view of one assigned item: what the open parts show, and the annotator's own answers."""
    authorize(user, "task.answer", db=db)
    payload, layout, kind, _status, _cid = _assignment(db, user, item_id)
    st = state.latest(db, user.id, [item_id]).get(item_id, state.EMPTY)
    return state.view(get(kind), payload, layout, st, item_id=item_id, ref=f"i:{item_id}",
                      key=screen_key(db, user, f"i:{item_id}", "task"))


def my_task_campaigns(db: sqlite_utils.Database, user: User) -> list[dict]:
    """Task campaigns with work assigned to ``user`` (open ones first), with their own progress (their hidden
    gold items counted with the real ones, as on their screen)."""
    authorize(user, "task.answer", db=db)
    out = []
    for cid, name, kind, status in db.conn.execute(
            "SELECT c.id, c.name, c.kind, c.status FROM campaigns c WHERE EXISTS (SELECT 1 FROM task_assignments a "
            "WHERE a.campaign_id = c.id AND a.user_id = ?) ORDER BY c.status = 'closed', c.id", (user.id,)):
        if not is_task_kind(kind):
            continue
        s = state.progress(db, user.id, cid)
        g_done, g_total = gold.hidden_counts(db, user, cid, gold.TASK)
        g_done -= len(gold.hidden_skipped(db, user, cid, gold.TASK))  # a skipped item is not done, gold or real
        out.append({"id": cid, "name": name, "task": _(get(kind).title), "kind": kind, "status": status,
                    "done": s["done"] + g_done, "total": s["total"] + g_total})
    return out


_STATUSES = ("answered", "skipped", "flagged")


def _rows(db, user: User, campaign_id: int, ref: str | None = None) -> dict[str, list[tuple]]:
    """The annotator's rows on the campaign's real and hidden gold items, by item ref (only ``ref``'s, if given):
    (item or gold id, row id, question, value, skipped), oldest first."""
    mode, ident, _attempt = gold.parse_ref(ref) if ref is not None else (None, None, None)
    out: dict[str, list[tuple]] = {}
    if mode in (None, "real"):
        one = "" if ref is None else " AND t.item_id = ?"
        for r in db.conn.execute(
                "SELECT t.item_id, t.id, t.question, t.value, t.skipped FROM task_answers t JOIN task_assignments a "
                f"ON a.item_id = t.item_id AND a.user_id = t.user_id WHERE a.campaign_id = ? AND t.user_id = ?{one} "
                "ORDER BY t.id", (campaign_id, user.id, *(() if ref is None else (ident,)))):
            out.setdefault(f"i:{r[0]}", []).append(r)
    if mode in (None, "hidden"):
        one = "" if ref is None else " AND a.gold_id = ?"
        for r in db.conn.execute(
                "SELECT a.gold_id, a.id, a.question, a.value, a.skipped FROM task_gold_answers a JOIN task_gold_items g "
                f"ON g.id = a.gold_id WHERE a.user_id = ? AND g.campaign_id = ? AND a.mode = 'hidden'{one} ORDER BY a.id",
                (user.id, campaign_id, *(() if ref is None else (ident,)))):
            out.setdefault(f"h:{r[0]}", []).append(r)
    return out


def _view(db, user: User, campaign_id: int, ref: str) -> ItemView:
    mode, ident, _attempt = gold.parse_ref(ref)
    return item_view(db, user, ident) if mode == "real" else gold.gold_view(db, user, campaign_id, ident, "hidden", None)


def _given(ref: str, rows: list[tuple], view: ItemView) -> GivenAnswer:
    """The line of the list of one's answers for the item ``ref``, from its rows and its view."""
    st = state.fold(rows)[rows[0][0]]
    done = view.pending is None and view.open_part == view.parts
    said = [r for r in rows if r[2] != FLAG]  # a flag answers nothing
    question = said[-1][2] if said and not said[-1][4] else None
    last = _("not answered yet")
    if said and said[-1][4]:
        last = _("skipped")
    elif question is not None:
        q = next((q for q in view.questions if q.id == question), None)
        last = (f"{q.target} · {q.criterion} → {q.option(view.answers[question]).label}"
                if q is not None and question in view.answers else _("answered"))
    status = "flagged" if st["flagged"] else "skipped" if st["skipped"] and not done else "answered"
    text = next((b.text for b in view.blocks if b.text), "")
    return GivenAnswer(ref, view.key, status, done, question, last, snippet(text), rows[-1][1])


def my_answers(db: sqlite_utils.Database, user: User, campaign_id: int, *, status: str | None = None
               ) -> list[GivenAnswer]:
    """Every item of the campaign the annotator has answered (wholly or in part), skipped or flagged, newest
    first; ``status`` ("answered", "skipped", "flagged") keeps only those. Hidden gold items are listed like the
    others (nothing tells them apart); a retired one is left out (it takes no more answers)."""
    authorize(user, "task.answer", db=db)
    if status not in (None, *_STATUSES):
        raise MedevalError(_("an answer's status is answered, skipped or flagged, not {status}").format(
            status=repr(str(status)[:20])))
    out = []
    for ref, rows in _rows(db, user, campaign_id).items():
        mode, ident, _a = gold.parse_ref(ref)
        if mode == "hidden" and item_rows.gold_retired(db, item_rows.TASK_FAMILY, campaign_id, ident):
            continue
        g = _given(ref, rows, _view(db, user, campaign_id, ref))
        if status is None or g.status == status:
            out.append(g)
    return sorted(out, key=lambda g: g.order, reverse=True)


def last_answer(db: sqlite_utils.Database, user: User, campaign_id: int) -> GivenAnswer | None:
    """The item the annotator answered (or skipped) last in the campaign, with that answer: what Z undoes."""
    authorize(user, "task.answer", db=db)
    # one row, not the campaign's history: this is read on every rerun of the answer screen (a flag answers nothing)
    latest = db.conn.execute(
        "SELECT 'i:' || t.item_id, t.id FROM task_answers t JOIN task_assignments a ON a.item_id = t.item_id AND "
        "a.user_id = t.user_id WHERE a.campaign_id = ? AND t.user_id = ? AND t.question != ? UNION ALL "
        "SELECT 'h:' || a.gold_id, a.id FROM task_gold_answers a JOIN task_gold_items g ON g.id = a.gold_id "
        "WHERE a.user_id = ? AND g.campaign_id = ? AND a.mode = 'hidden' AND a.question != ? ORDER BY 2 DESC LIMIT 1",
        (campaign_id, user.id, FLAG, user.id, campaign_id, FLAG)).fetchone()
    if latest is None:
        return None
    ref = latest[0]
    return _given(ref, _rows(db, user, campaign_id, ref)[ref], _view(db, user, campaign_id, ref))


def _reopen(db, user: User, campaign_id: int, ref: str) -> tuple[ItemView, GivenAnswer]:
    """The item ``ref`` the annotator answered, drawn again with the question answered last on it as the question to
    answer (a skipped item: its first open question), and that answer."""
    mode, _ident, _attempt = gold.parse_ref(ref)
    if mode not in ("real", "hidden"):
        raise MedevalError(_("only an item of the campaign you answered can be reopened"))
    rows = _rows(db, user, campaign_id, ref).get(ref)
    if not rows:
        raise MedevalError(_("this item has no answer of yours in this campaign to change"))
    view = _view(db, user, campaign_id, ref)
    given = _given(ref, rows, view)
    q = next((q for q in view.questions if q.id == given.question), None)
    return (replace(view, pending=q) if q is not None else view), given


def task_state(db: sqlite_utils.Database, user: User, campaign_id: int, *, revisit_skipped: bool = False,
               reopen: str | None = None) -> TaskState:
    """The item to show (the next unfinished one in the annotator's order; skipped ones at the end).

    While a required qualification is not passed the state is its round (``phase`` "qualification": its next
    gold item, or none -- not started, or failed -- with ``qualification`` saying which). Otherwise a hidden
    gold item due at this point of the queue comes instead of the next real item; ``done``/``total``/``skipped``
    count hidden gold items with the real ones, and ``revisit_skipped`` gives back skipped items real and gold
    alike, in the order the queue first gave them (:func:`medeval.annotation.gold.revisit_queue`). Refused
    (:class:`medeval.annotation.guidelines.GuidelinesPending`) while the annotator has not acknowledged the
    campaign's current guidelines.

    ``reopen``: the ref of an item the annotator answered (:attr:`GivenAnswer.ref`), shown again with the question
    answered last on it to answer anew (``reopened``: that answer; a new answer supersedes it) -- the undo of the
    last answer, or any item from the list of one's answers. Refused (MedevalError) for an item they have not
    answered, in a qualification round, or while the campaign is closed.
    """
    authorize(user, "task.answer", db=db)
    c = campaign(db, campaign_id)
    gl.require_acknowledged(db, user, campaign_id)
    p = state.progress(db, user.id, campaign_id)
    if p["total"] == 0:
        raise PermissionDenied(_("no items of this campaign are assigned to you"))
    t = get(c["kind"])
    is_open = c["status"] == "open"
    head = (campaign_id, c["name"], c["kind"], _(t.title), _(t.instructions), is_open)  # (the reader's language)
    q = gold.qualification_state(db, user, campaign_id, gold.TASK)
    if not q.cleared:
        if reopen is not None:
            raise MedevalError(_("answers of a qualification round cannot be changed"))
        view = (gold.gold_view(db, user, campaign_id, q.next_gold, "qualification", q.attempt)
                if q.next_gold is not None and is_open else None)
        return TaskState(*head, view, q.answered, q.items, 0, min(q.answered + 1, q.items), "qualification", q)
    # a skipped item, real or gold, is passed (it places the hidden gold items), counted as skipped, not done, and
    # comes back in the revisit: nothing in the counts or the order tells a gold item from a real one
    passed = p["done"] + len(p["skipped"])
    due, g_done, g_total = gold.hidden_now(db, user, campaign_id, gold.TASK, real_counts=(passed, p["total"]))
    g_skipped = gold.hidden_skipped(db, user, campaign_id, gold.TASK)
    done, total, skipped = p["done"] + g_done - len(g_skipped), p["total"] + g_total, len(p["skipped"]) + len(g_skipped)
    position = min(done + skipped + 1, total)
    if reopen is not None:
        if not is_open:
            raise MedevalError(_("this campaign is closed: answers can no longer be changed"))
        view, given = _reopen(db, user, campaign_id, reopen)
        return TaskState(*head, view, done, total, skipped, position, "items", q, given)
    if not is_open:
        due = None
    # (revisiting: a gold item can only be due here as a skipped one partly answered since, which stays on screen to
    # be finished as a real one does -- from ``todo``)
    if due is not None:
        view = gold.gold_view(db, user, campaign_id, due, "hidden", None)
    elif p["todo"] or not revisit_skipped:
        view = item_view(db, user, p["todo"][0]) if p["todo"] else None
    else:
        refs = gold.revisit_queue(db, user, campaign_id, p["skipped"], gold.TASK)
        view = _view(db, user, campaign_id, refs[0]) if refs else None
    return TaskState(*head, view, done, total, skipped, position, "items", q)


def _expected(revision: int | None):
    return answers.ANY if revision is None else revision


def submit_answer(db: sqlite_utils.Database, user: User, item_id: int, question: str, value: str | None, *,
                  client_token: str, skipped: bool = False, revision: int | None = None,
                  guideline_version: int | None = None) -> int:
    """Record one answer (or an item-level skip: ``skipped=True``, question ``""``); idempotent per token.

    A thin wrapper over the one submit path (:func:`medeval.annotation.answers.submit_item`, the task store).
    A question of a later part is refused while an earlier part has unanswered questions; a change of an
    answer adds a row that supersedes the previous one (both are kept, the change is audited). With
    ``revision`` (the :attr:`ItemView.revision` the screen was drawn from), an answer given on a screen
    that another answer has changed since is refused with :class:`StaleAnswer`: a key press that arrives
    after the screen moved on must not land on the question that was there before. ``guideline_version``:
    the version of the campaign's guidelines on screen (recorded; must exist). Refused while the annotator
    has not acknowledged the current guidelines (:class:`medeval.annotation.guidelines.GuidelinesPending`).
    """
    authorize(user, "task.answer", db=db)
    ans = answers.Answer.skip() if skipped else answers.Answer.questions({question: value})
    return answers.submit_item(db, user, answers.TASK_STORE, item_id, ans, client_token=client_token,
                               expected=_expected(revision), guideline_version=guideline_version)


def flag_item(db: sqlite_utils.Database, user: User, item_id: int, note: str, *, client_token: str) -> int:
    """Flag an assigned item with a note (a wrong reference, an unreadable answer...); idempotent per token.

    A flag does not answer anything and does not move the annotator on (it needs no qualification); researchers
    read the notes with :func:`flags`. The note is untrusted text like everything else the annotator writes.
    """
    authorize(user, "task.answer", db=db)
    return answers.submit_item(db, user, answers.TASK_STORE, item_id, answers.Answer.flag(note),
                               client_token=client_token)


def answer(db: sqlite_utils.Database, user: User, campaign_id: int, ref: str, question: str | None,
           value: str | None, *, client_token: str, skipped: bool = False, revision: int | None = None,
           guideline_version: int | None = None) -> tuple[int, str | None]:
    """Answer whatever :func:`task_state` put on screen, by its ``ref``; returns (row id, feedback or None).

    A thin wrapper over :func:`medeval.annotation.answers.submit` (the task store): a real item's answer
    follows :func:`submit_answer`'s rules; a gold item's goes to ``task_gold_answers``
    (:func:`medeval.annotation.gold.submit_gold`), never to the real answers. ``feedback``: the
    expected answers and their reason once a hidden gold item is done, when the campaign enables it.
    """
    authorize(user, "task.answer", db=db)
    ans = answers.Answer.skip() if skipped else answers.Answer.questions({question or "": value})
    return answers.submit_ref(db, user, answers.TASK_STORE, campaign_id, ref, ans, client_token=client_token,
                              expected=_expected(revision), guideline_version=guideline_version)


def flag(db: sqlite_utils.Database, user: User, campaign_id: int, ref: str, note: str, *, client_token: str) -> int:
    """Flag whatever :func:`task_state` put on screen, by its ``ref`` (see :func:`flag_item`)."""
    authorize(user, "task.answer", db=db)
    return answers.submit_ref(db, user, answers.TASK_STORE, campaign_id, ref, answers.Answer.flag(note),
                              client_token=client_token)[0]
