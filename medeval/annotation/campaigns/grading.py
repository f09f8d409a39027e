"""Grading: the blind item an annotator sees, their next item and progress, the append-only grade flow.

Gold items (:mod:`medeval.annotation.gold`) take part here: a required qualification comes first (no real
item is given or accepted before it is passed), and hidden gold items are interleaved into the queue that
:func:`grading_state` hands out, drawn as the same :class:`BlindItem`. The page answers whatever is on
screen through :func:`submit_answer` with the item's opaque ``ref``; gold answers go to ``gold_answers``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation import answers, gold
from medeval.annotation import guidelines as gl
from medeval.annotation.answer_input import ANY as _ANY
from medeval.annotation.answer_input import StaleGrade  # noqa: F401 (re-exported: a StaleAnswer of a grade)
from medeval.annotation.screen_keys import keyer, screen_key
from medeval.core.errors import MedevalError, PermissionDenied
from medeval.core.i18n import _
from medeval.core.text import SNIPPET_CHARS, snippet  # noqa: F401 (the package's names)
from medeval.engine.aspects import BY_NAME

TIER_GUIDE = gl.TIER_GUIDE  # (defined with the guidelines: they are the default tier definitions)


def tier_label(tier: int | None, skipped: bool = False) -> str:
    """``"Partially Correct"`` for tier 1: the tier's name, never a number (a key 1-3 is not a tier code; README
    "Tier codes"), in the current language (``medeval.core.i18n``)."""
    if skipped or tier is None:
        return _("Skipped")
    name = TIER_GUIDE[tier][2]
    return _(name)


@dataclass(frozen=True)
class BlindItem:
    """What an annotator may see: never the score, the model or anyone else's grade."""

    item_id: int
    disease: str
    aspect: str
    aspect_zh: str
    definition: str
    reference: str
    response: str  # untrusted text: show as plain text only
    ref: str = ""  # opaque reference for submit_answer (a real item or a gold item): never shown
    key: str = ""  # what the screen's widgets carry (gold.screen_key): opaque, per annotator


def _assigned(db, user: User, item_id: int) -> str:
    """The status of the item's campaign, if the item is assigned to ``user``; PermissionDenied otherwise."""
    row = db.conn.execute("SELECT c.status FROM assignments a JOIN campaigns c ON c.id = a.campaign_id "
                          "WHERE a.item_id = ? AND a.user_id = ?", (item_id, user.id)).fetchone()
    if not row:
        raise PermissionDenied(_("this item is not assigned to you"))
    return row[0]


def blind_item(db: sqlite_utils.Database, user: User, item_id: int) -> BlindItem:
    authorize(user, "grade", db=db)
    _assigned(db, user, item_id)
    d, a, ref, raw = db.conn.execute(
        "SELECT k.disease, k.aspect, k.reference, r.raw FROM campaign_items ci JOIN responses r ON r.id = ci.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE ci.id = ?", (item_id,)).fetchone()
    asp = BY_NAME.get(a)
    return BlindItem(item_id, d, a, asp.name_zh if asp else a, asp.definition if asp else "", ref, raw, f"i:{item_id}",
                     screen_key(db, user, f"i:{item_id}"))


def _gold_blind(db, user: User, campaign_id: int, gold_id: int, ref: str) -> BlindItem:
    """A gold item drawn exactly like a real one (its widgets' key: :func:`medeval.annotation.screen_keys.screen_key`)."""
    d, a, reference, raw = db.conn.execute(
        "SELECT k.disease, k.aspect, k.reference, r.raw FROM gold_items g JOIN responses r ON r.id = g.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE g.id = ?", (gold_id,)).fetchone()
    asp = BY_NAME.get(a)
    return BlindItem(gold.display_id(db, user, campaign_id, gold_id), d, a, asp.name_zh if asp else a,
                     asp.definition if asp else "", reference, raw, ref, screen_key(db, user, ref))


def _current(db, user_id: int, item_id: int):
    return db.conn.execute("SELECT id, tier, skipped, flagged, note FROM grade_annotations WHERE item_id = ? AND "
                           "user_id = ? ORDER BY id DESC LIMIT 1", (item_id, user_id)).fetchone()


def next_item(db: sqlite_utils.Database, user: User, campaign_id: int, *, skipped: bool = False) -> int | None:
    """The annotator's next item without a grade or skip, in their own order; None when done.

    With ``skipped=True``: the next item whose latest answer is a skip (to go back to them at the end).
    Refused (:class:`medeval.annotation.guidelines.GuidelinesPending`) while the annotator has not
    acknowledged the campaign's current guidelines, and (:class:`medeval.annotation.gold.QualificationPending`)
    while a required qualification is not passed. Real items only: :func:`grading_state` interleaves hidden gold.
    """
    authorize(user, "grade", db=db)
    gl.require_acknowledged(db, user, campaign_id)
    gold.require_qualified(db, user, campaign_id)
    if skipped:
        row = db.conn.execute(
            "SELECT a.item_id FROM assignments a JOIN latest_grade_annotations g ON g.item_id = a.item_id AND "
            "g.user_id = a.user_id WHERE a.campaign_id = ? AND a.user_id = ? AND g.skipped = 1 ORDER BY a.position "
            "LIMIT 1", (campaign_id, user.id)).fetchone()
    else:
        row = db.conn.execute(
            "SELECT a.item_id FROM assignments a WHERE a.campaign_id = ? AND a.user_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM grade_annotations g WHERE g.item_id = a.item_id AND g.user_id = a.user_id) "
            "ORDER BY a.position LIMIT 1", (campaign_id, user.id)).fetchone()
    return row[0] if row else None


def progress(db: sqlite_utils.Database, user: User, campaign_id: int) -> tuple[int, int]:
    """(items done, items assigned) for this annotator."""
    total = db.conn.execute("SELECT count(*) FROM assignments WHERE campaign_id = ? AND user_id = ?",
                            (campaign_id, user.id)).fetchone()[0]
    done = db.conn.execute("SELECT count(DISTINCT g.item_id) FROM grade_annotations g JOIN assignments a ON "
                           "a.item_id = g.item_id AND a.user_id = g.user_id WHERE a.campaign_id = ? AND g.user_id = ?",
                           (campaign_id, user.id)).fetchone()[0]
    return done, total


def submit_grade(db: sqlite_utils.Database, user: User, item_id: int, *, tier: int | None, client_token: str,
                 skipped: bool = False, flagged: bool = False, note: str | None = None,
                 expected_prior: int | None | object = _ANY, at: float | None = None,
                 guideline_version: int | None = None) -> int:
    """Record a grade (0/1/2), a skip or a flag; idempotent per client token. Returns the annotation id.

    A thin wrapper over the one submit path (:func:`medeval.annotation.answers.submit_item` with the tier
    store): a second grade of the same item supersedes the first (both are kept). With ``expected_prior`` (the
    annotation the screen showed for this item, None for a new item) a grade given on a screen that has
    changed since raises :class:`StaleGrade`: a key typed ahead of the next item must not regrade the last.
    ``at``: when the grade was given (seconds since the epoch; default now) -- for grades recorded after the
    fact, e.g. the demo's simulated grading sessions. ``guideline_version``: the version of the campaign's
    guidelines that was on screen (recorded with the grade; must exist). Refused while the annotator has not
    acknowledged the current guidelines (:class:`medeval.annotation.guidelines.GuidelinesPending`).
    """
    authorize(user, "grade", db=db)
    answer = answers.Answer.from_tier_form(tier, skipped=skipped, flagged=flagged, note=note)
    return answers.submit_item(db, user, answers.TIER_STORE, item_id, answer, client_token=client_token,
                               expected=expected_prior, guideline_version=guideline_version, at=at)


@dataclass(frozen=True)
class GivenGrade:
    """One of the annotator's own latest answers (for "change a recent grade")."""

    item_id: int
    annotation_id: int
    tier: int | None
    skipped: bool
    flagged: bool
    note: str | None
    disease: str
    aspect: str
    at: float
    ref: str = ""  # opaque reference for submit_answer
    key: str = ""  # what the screen's widgets carry (gold.screen_key)
    snippet: str = ""  # the start of the model's answer, on one line (to tell items of one disease apart)

    @property
    def status(self) -> str:
        """"flagged", "skipped" or "answered" (the list of one's answers filters by it)."""
        return "flagged" if self.flagged else "skipped" if self.skipped else "answered"


@dataclass(frozen=True)
class GradingState:
    """Everything the grading screen shows, read in one go."""

    campaign_id: int
    campaign_name: str
    open: bool
    item: BlindItem | None  # None: nothing left (see ``skipped``)
    prior: int | None  # latest annotation of ``item`` by this user (a skipped item being revisited)
    done: int  # items with an answer (grade or skip)
    total: int
    skipped: int
    recent: tuple[GivenGrade, ...]
    phase: str = "items"  # "qualification": the qualification round (see ``qualification``); "items" otherwise
    qualification: gold.QualificationState | None = None
    reopened: GivenGrade | None = None  # ``item`` is one answered before, reopened to answer again (this answer)

    @property
    def position(self) -> int:
        """1-based number of the item on screen ("14 of 60")."""
        return min(self.done + (1 if self.item is not None and self.prior is None else 0), self.total) or 1


def recent_grades(db: sqlite_utils.Database, user: User, campaign_id: int, *,
                  limit: int | None = 5) -> list[GivenGrade]:
    """The annotator's latest answer on each of their ``limit`` most recently answered items (None: every item
    they answered), newest first."""
    authorize(user, "grade", db=db)
    n = -1 if limit is None else limit  # (SQLite: a negative LIMIT is none)
    rows = db.conn.execute(
        "SELECT g.item_id, g.id, g.tier, g.skipped, g.flagged, g.note, k.disease, k.aspect, g.created_at, r.raw "
        "FROM latest_grade_annotations g JOIN assignments a ON a.item_id = g.item_id AND a.user_id = g.user_id "
        "JOIN campaign_items ci ON ci.id = g.item_id JOIN responses r ON r.id = ci.response_id "
        "JOIN kb_entries k ON k.id = r.kb_id WHERE a.campaign_id = ? AND g.user_id = ? "
        "ORDER BY g.id DESC LIMIT ?", (campaign_id, user.id, n)).fetchall()
    key = keyer(db, user)
    out = [GivenGrade(r[0], r[1], r[2], bool(r[3]), bool(r[4]), r[5], r[6], r[7], r[8], f"i:{r[0]}",
                      key(f"i:{r[0]}"), snippet(r[9])) for r in rows]
    hidden = gold.recent_hidden(db, user, campaign_id, n)
    if hidden:  # hidden gold answers are listed (and changed) like grades: nothing tells them apart
        out += [GivenGrade(gold.display_id(db, user, campaign_id, r[0]), r[1], r[2], bool(r[3]), bool(r[4]), r[5],
                           r[6], r[7], r[8], f"h:{r[0]}", key(f"h:{r[0]}"), snippet(r[9])) for r in hidden]
        out = sorted(out, key=lambda g: g.at, reverse=True)[:limit]
    return out


def my_answers(db: sqlite_utils.Database, user: User, campaign_id: int, *, status: str | None = None) -> list[GivenGrade]:
    """Every item the annotator answered in the campaign (their latest answer on each), newest first; ``status``
    ("answered", "skipped", "flagged") keeps only those. Hidden gold items are listed like the others."""
    if status not in (None, "answered", "skipped", "flagged"):
        raise MedevalError(_("an answer's status is answered, skipped or flagged, not {status}").format(
            status=repr(str(status)[:20])))
    given = recent_grades(db, user, campaign_id, limit=None)
    return [g for g in given if status is None or g.status == status]


def _counts(db, user: User, campaign_id: int) -> tuple[int, int]:
    """(answered, total) as the annotator sees them: real items plus their planned hidden gold items."""
    done, total = progress(db, user, campaign_id)
    g_done, g_total = gold.hidden_counts(db, user, campaign_id)
    return done + g_done, total + g_total


def my_campaigns(db: sqlite_utils.Database, user: User) -> list[dict]:
    """Campaigns with work assigned to ``user`` (open ones first), with their own progress."""
    authorize(user, "grade", db=db)
    out = []
    for cid, name, status in db.conn.execute(
            "SELECT c.id, c.name, c.status FROM campaigns c WHERE EXISTS (SELECT 1 FROM assignments a WHERE "
            "a.campaign_id = c.id AND a.user_id = ?) ORDER BY c.status = 'closed', c.id", (user.id,)):
        done, total = _counts(db, user, cid)
        out.append({"id": cid, "name": name, "status": status, "done": done, "total": total})
    return out


def _reopen(db, user: User, campaign_id: int, ref: str) -> tuple[BlindItem, GivenGrade]:
    """The item ``ref`` that ``user`` answered in this campaign, drawn again, and their latest answer on it."""
    mode, ident, _attempt = gold.parse_ref(ref)
    if mode not in ("real", "hidden"):
        raise MedevalError(_("only an item of the campaign you answered can be reopened"))
    given = next((g for g in recent_grades(db, user, campaign_id, limit=None) if g.ref == ref), None)
    if given is None:
        raise MedevalError(_("this item has no answer of yours in this campaign to change"))
    item = blind_item(db, user, ident) if mode == "real" else _gold_blind(db, user, campaign_id, ident, ref)
    return item, given


def _recent(db, user: User, campaign_id: int, n: int) -> tuple[GivenGrade, ...]:
    return tuple(recent_grades(db, user, campaign_id, limit=n)) if n else ()


def _revisit(db, user: User, campaign_id: int, real_skipped: list[int]) -> tuple[BlindItem | None, int | None]:
    """The first skipped item to go back to, real or hidden gold, in the queue's order, and the latest answer on
    it (its skip: what a new answer supersedes); (None, None) when none is left."""
    refs = gold.revisit_queue(db, user, campaign_id, real_skipped)
    if not refs:
        return None, None
    mode, ident, _attempt = gold.parse_ref(refs[0])
    if mode == "real":
        return blind_item(db, user, ident), _current(db, user.id, ident)[0]
    return _gold_blind(db, user, campaign_id, ident, refs[0]), gold.latest_hidden_id(db, user, ident)


def grading_state(db: sqlite_utils.Database, user: User, campaign_id: int, *, revisit_skipped: bool = False,
                  recent: int = 5, reopen: str | None = None) -> GradingState:
    """The item to show next (or a skipped one to revisit), progress and recent answers, for one annotator.

    While a required qualification is not passed the state is its round (``phase`` "qualification"): the next
    qualification item, or none with the qualification's status (to start, failed, ...). Otherwise the next
    item is the next real one or a hidden gold item due at this point of the queue; ``done``/``total``/``skipped``
    count hidden gold items with the real ones. With ``revisit_skipped`` the next item is the first skipped one,
    real or hidden gold alike, in the order the queue first gave them (:func:`medeval.annotation.gold.revisit_queue`).

    ``reopen``: the ref of an item the annotator answered (:attr:`GivenGrade.ref`), shown again so it can be answered
    anew (``prior``: their latest answer, which a new one supersedes; ``reopened``: that answer) -- the undo of the
    last answer, or any answer from the list of one's answers. Refused (MedevalError) for an item they have not
    answered in this campaign, or while the campaign is closed. ``recent``: how many of their latest answers to
    give (0: none, and their queries are not run -- a screen that lists them only when asked).
    """
    authorize(user, "grade", db=db)
    row = db.conn.execute("SELECT name, status FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}").format(id=campaign_id))
    real_done, real_total = progress(db, user, campaign_id)
    if real_total == 0:
        raise PermissionDenied(_("no items of this campaign are assigned to you"))
    gl.require_acknowledged(db, user, campaign_id)
    is_open = row[1] == "open"
    q = gold.qualification_state(db, user, campaign_id)
    if not q.cleared:
        if reopen is not None:
            raise MedevalError(_("answers of a qualification round cannot be changed"))
        item = None
        if q.next_gold is not None:
            item = _gold_blind(db, user, campaign_id, q.next_gold, f"q:{q.next_gold}:{q.attempt}")
        return GradingState(campaign_id, row[0], is_open, item, None, q.answered, q.items, 0,
                            _recent(db, user, campaign_id, recent), "qualification", q)
    due, g_done, g_total = gold.hidden_now(db, user, campaign_id, real_counts=(real_done, real_total))
    done, total = real_done + g_done, real_total + g_total
    real_skipped = [r[0] for r in db.conn.execute(
        "SELECT a.item_id FROM latest_grade_annotations g JOIN assignments a ON a.item_id = g.item_id AND "
        "a.user_id = g.user_id WHERE a.campaign_id = ? AND g.user_id = ? AND g.skipped = 1 ORDER BY a.position",
        (campaign_id, user.id))]
    # a skipped hidden gold item is a skipped item like any other: counted, and given back in the revisit
    gold_skipped = gold.hidden_skipped(db, user, campaign_id)
    skipped = len(real_skipped) + len(gold_skipped)
    if reopen is not None:
        if not is_open:
            raise MedevalError(_("this campaign is closed: answers can no longer be changed"))
        item, given = _reopen(db, user, campaign_id, reopen)
        return GradingState(campaign_id, row[0], is_open, item, given.annotation_id, done, total, skipped,
                            _recent(db, user, campaign_id, recent), "items", q, given)
    if not is_open or revisit_skipped:
        due = None
    if due is not None:
        item, prior = _gold_blind(db, user, campaign_id, due, f"h:{due}"), None
    elif revisit_skipped:
        item, prior = _revisit(db, user, campaign_id, real_skipped)
    else:
        iid = next_item(db, user, campaign_id)
        item, prior = (blind_item(db, user, iid) if iid is not None else None), None
    return GradingState(campaign_id, row[0], is_open, item, prior, done, total, skipped,
                        _recent(db, user, campaign_id, recent), "items", q)


def submit_answer(db: sqlite_utils.Database, user: User, campaign_id: int, ref: str, *, tier: int | None,
                  client_token: str, skipped: bool = False, flagged: bool = False, note: str | None = None,
                  expected_prior: int | None | object = _ANY, at: float | None = None,
                  guideline_version: int | None = None) -> tuple[int, str | None]:
    """Answer whatever :func:`grading_state` put on screen, by its ``ref``; returns (answer id, feedback or None).

    A thin wrapper over :func:`medeval.annotation.answers.submit` (the tier store): a real item's answer is a
    grade (:func:`submit_grade`'s rules); a gold item's goes to ``gold_answers``
    (:func:`medeval.annotation.gold.submit_gold`), never to the grades. ``feedback``: the expected grade and
    its reason after a hidden gold item, when the campaign enables it.
    """
    authorize(user, "grade", db=db)
    answer = answers.Answer.from_tier_form(tier, skipped=skipped, flagged=flagged, note=note)
    return answers.submit_ref(db, user, answers.TIER_STORE, campaign_id, ref, answer, client_token=client_token,
                              expected=expected_prior, guideline_version=guideline_version, at=at)
