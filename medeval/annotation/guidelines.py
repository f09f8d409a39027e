"""Campaign guidelines: the researcher's text, the tier or rubric definitions and worked examples.

Every campaign (tier grading or a task type; both live in ``campaigns``) may carry guidelines. Each save
adds a version (``campaign_guidelines``, append-only, numbered per campaign, audited); nothing is ever
changed or removed. Annotators acknowledge each version once (``guideline_acks``) before they get an
item of that campaign: :func:`needs_acknowledgement` says which version is pending, and the grading and
answering functions refuse to hand out or accept work while one is (:class:`GuidelinesPending`). Each
grade and answer may record the version that was on screen (``guideline_version``).

The text is Markdown written by a researcher and shown to other people, so it is never rendered as
written: :func:`safe_markdown` parses it and writes it out again with only the harmless constructs
(headings, emphasis, lists, quotes, code, tables, http/https links); raw HTML is shown as text, images
become their alt text, other links become plain text.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import sqlite_utils

from medeval.accounts.auth import User, audit
from medeval.accounts.policy import authorize
from medeval.annotation import answer_rows
from medeval.core.errors import InputError, MedevalError
from medeval.core.i18n import N_, _
from medeval.core.limits import (
    NAME_MAX_CHARS,
    NOTE_MAX_CHARS,
    TEXT_MAX_CHARS,
    check_text,
)
from medeval.core.safe_markdown import safe_markdown
from medeval.engine import thresholds as th
from medeval.engine.aspects import ASPECT_TYPES
from medeval.store.db import transaction

# What an annotator sees while grading: the key to press, the tier it records, and what it means
# (MedDisKEval's three tiers, METHOD.md section 1). The definitions are the guide clinicians grade by and
# the default definitions of a tier-grading campaign's guidelines. In English (stored with the guidelines); a page
# shows the name and the meaning with _() (:func:`tier_guide`).
TIER_GUIDE: tuple[tuple[str, int, str, str], ...] = (
    ("1", 0, th.TIERS[0], N_("The answer is wrong, irrelevant or empty: it gets none of the reference's key "
                             "points right, or contradicts it.")),
    ("2", 1, th.TIERS[1], N_("Some of the reference's key points are right, but important ones are missing, "
                             "wrong or mixed with errors.")),
    ("3", 2, th.TIERS[2], N_("The answer conveys the reference's key points; wording, order and harmless extra "
                             "detail may differ.")),
)


def tier_guide() -> list[tuple[str, int, str, str]]:
    """:data:`TIER_GUIDE` in the current interface language (key, tier, name, meaning): what a page shows."""
    return [(key, tier, _(name), _(meaning)) for key, tier, name, meaning in TIER_GUIDE]
EDITING_ROLES = ("researcher", "admin")
ANNOTATING_ROLES = ("annotator", "researcher", "admin")
EXAMPLE_COLUMNS = ("aspect_type", "answer", "tier", "why")
EXAMPLES_MAX = 200


class GuidelinesPending(MedevalError):
    """The annotator has not acknowledged the campaign's current guidelines: no item until they do."""


@dataclass(frozen=True)
class Guidelines:
    campaign_id: int
    version: int
    text: str  # the researcher's Markdown as written: show it only through safe_markdown
    definitions: tuple[dict, ...]  # {"key", "name", "meaning"}
    examples: tuple[dict, ...]  # {"aspect_type", "answer", "tier", "why"}
    created_by: str
    created_at: str

    @property
    def markdown(self) -> str:
        return safe_markdown(self.text)



def _campaign(db, campaign_id: int) -> tuple[str, str]:
    row = db.conn.execute("SELECT kind, status FROM campaigns WHERE id = ?", (campaign_id,)).fetchone()
    if row is None:
        raise MedevalError(_("no campaign {id}; list them with `python -m medeval campaign list`").format(
            id=campaign_id))
    return row[0], row[1]


def _grading(kind: str) -> bool:
    """Tier grading (every campaign kind that is not a task type)."""
    from medeval.annotation.tasks.registry import (
        is_task_kind,  # (lazily: the tasks package imports us)
    )

    return not is_task_kind(kind)


def default_definitions(db: sqlite_utils.Database, campaign_id: int) -> list[dict]:
    """The tier definitions (tier grading: :data:`TIER_GUIDE`) or the task type's answers and what they mean."""
    kind, _status = _campaign(db, campaign_id)
    if _grading(kind):
        return [{"key": k, "name": name, "meaning": meaning} for k, _t, name, meaning in TIER_GUIDE]
    from medeval.annotation.tasks.registry import get

    t = get(kind)
    row = db.conn.execute("SELECT ti.payload, a.layout FROM task_items ti JOIN task_assignments a ON a.item_id = "
                          "ti.id WHERE ti.campaign_id = ? ORDER BY ti.id LIMIT 1", (campaign_id,)).fetchone()
    if row is None:
        return []
    out, seen = [], set()
    for q in t.questions(json.loads(row[0]), json.loads(row[1])):
        for o in q.options:
            name = f"{q.criterion}: {o.label}"
            if name not in seen:
                seen.add(name)
                out.append({"key": o.key, "name": name, "meaning": o.meaning})
    return out


def _row(r) -> Guidelines:
    return Guidelines(r[0], r[1], r[2], tuple(json.loads(r[3])), tuple(json.loads(r[4])), r[5], r[6])


_COLS = "campaign_id, version, text, definitions, examples, created_by, created_at"


def current(db: sqlite_utils.Database, campaign_id: int) -> Guidelines | None:
    """The campaign's latest guidelines, or None when it has none."""
    r = db.conn.execute(f"SELECT {_COLS} FROM campaign_guidelines WHERE campaign_id = ? ORDER BY version DESC "
                        "LIMIT 1", (campaign_id,)).fetchone()
    return _row(r) if r else None


def get_version(db: sqlite_utils.Database, campaign_id: int, version: int) -> Guidelines:
    r = db.conn.execute(f"SELECT {_COLS} FROM campaign_guidelines WHERE campaign_id = ? AND version = ?",
                        (campaign_id, version)).fetchone()
    if r is None:
        raise MedevalError(_no_version(db, campaign_id, version))
    return _row(r)


def history(db: sqlite_utils.Database, campaign_id: int) -> list[Guidelines]:
    """Every version, oldest first."""
    return [_row(r) for r in db.conn.execute(f"SELECT {_COLS} FROM campaign_guidelines WHERE campaign_id = ? "
                                             "ORDER BY version", (campaign_id,))]


def _no_version(db, campaign_id: int, version) -> str:
    n = db.conn.execute("SELECT max(version) FROM campaign_guidelines WHERE campaign_id = ?",
                        (campaign_id,)).fetchone()[0]
    have = _("it has versions 1 to {n}").format(n=n) if n else _("it has no guidelines yet")
    return _("guideline version {version} does not exist for campaign {id} ({have}); reload the page to see the "
             "current guidelines").format(version=repr(str(version)[:20]), id=campaign_id, have=have)


def check_version(db: sqlite_utils.Database, campaign_id: int, version) -> int | None:
    """``version`` if it is a version of the campaign's guidelines (None stays None); MedevalError otherwise."""
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int) or not db.conn.execute(
            "SELECT 1 FROM campaign_guidelines WHERE campaign_id = ? AND version = ?",
            (campaign_id, version)).fetchone():
        raise MedevalError(_no_version(db, campaign_id, version))
    return version


def examples_from_file(path) -> list[dict]:
    """The worked examples in a CSV/TSV/JSON(L) file with the columns aspect_type, answer, tier, why."""
    from medeval.core.limits import read_table_limited
    from medeval.core.tables import require_columns

    header, rows = read_table_limited(path)
    require_columns(path, [h.replace(" ", "_") for h in header], list(EXAMPLE_COLUMNS))
    return [{k.replace(" ", "_"): v for k, v in row.items()} for _n, row in rows]


def _check_examples(examples, definitions: list[dict], grading: bool, file: str | None) -> list[dict]:
    if examples is None:
        return []
    if not isinstance(examples, (list, tuple)):
        raise MedevalError(_("the examples must be a list of rows (aspect_type, answer, tier, why)"))
    if len(examples) > EXAMPLES_MAX:
        raise InputError(_("{n} examples; the limit is {max}").format(n=f"{len(examples):,}", max=EXAMPLES_MAX),
                         file=file, fix=_("keep a few worked examples per aspect type"))
    keys = {d["key"].lower(): d["name"] for d in definitions}
    names = {d["name"].lower(): d["name"] for d in definitions}
    out = []
    for n, ex in enumerate(examples, start=2 if file else 1):
        row = n if file else None
        where = "" if file else _("example {n}: ").format(n=n)
        if not isinstance(ex, dict):
            raise InputError(where + _("an example is a row with {columns}").format(columns=", ".join(EXAMPLE_COLUMNS)),
                             file=file, row=row)
        cells = {c: ex.get(c) if ex.get(c) is not None else ex.get(c.replace("_", " "), "") for c in EXAMPLE_COLUMNS}
        cells = {c: ("" if v is None or (isinstance(v, float) and v != v) else str(v)).strip()
                 for c, v in cells.items()}
        if not any(cells.values()):
            continue  # an empty row of the editor
        asp = check_text(cells["aspect_type"], what=f"{where}aspect_type", max_chars=NAME_MAX_CHARS,
                         allow_newlines=False, required=True, file=file, row=row)
        if grading and asp.lower() not in ASPECT_TYPES:
            raise InputError(where + _("aspect_type {value} is not one of {types}").format(
                value=repr(asp[:40]), types=", ".join(ASPECT_TYPES)), file=file, row=row,
                fix=_("use an aspect type of this campaign"))
        answer = check_text(cells["answer"], what=f"{where}answer", max_chars=NOTE_MAX_CHARS, required=True,
                            file=file, row=row)
        tier = check_text(cells["tier"], what=f"{where}tier", max_chars=NAME_MAX_CHARS, allow_newlines=False,
                          required=True, file=file, row=row)
        if grading:
            if tier.lower() not in keys and tier.lower() not in names:
                raise InputError(where + _("tier {value} is not a tier of this campaign").format(value=repr(tier[:40])),
                                 file=file, row=row, fix=_("give its key ({keys}) or its name ({names})").format(
                                     keys=", ".join(d["key"] for d in definitions),
                                     names=", ".join(d["name"] for d in definitions)))
            tier = keys.get(tier.lower()) or names[tier.lower()]
        why = check_text(cells["why"], what=f"{where}why", max_chars=NOTE_MAX_CHARS, allow_newlines=False,
                         required=True, file=file, row=row)
        out.append({"aspect_type": asp.lower() if grading else asp, "answer": answer, "tier": tier, "why": why})
    return out


def _check_definitions(definitions) -> list[dict]:
    if not isinstance(definitions, (list, tuple)) or len(definitions) > EXAMPLES_MAX:
        raise MedevalError(_("the definitions must be a list of at most {max} rows (key, name, meaning)").format(
            max=EXAMPLES_MAX))
    out = []
    for d in definitions:
        if not isinstance(d, dict):
            raise MedevalError(_("a definition is a row with key, name and meaning"))
        out.append({"key": check_text(str(d.get("key", "")), what="a definition's key", max_chars=20,
                                      allow_newlines=False),
                    "name": check_text(str(d.get("name", "")), what="a definition's name", max_chars=NAME_MAX_CHARS,
                                       allow_newlines=False, required=True),
                    "meaning": check_text(str(d.get("meaning", "")), what="a definition's meaning",
                                          max_chars=NOTE_MAX_CHARS)})
    return out


def set_guidelines(db: sqlite_utils.Database, campaign_id: int, text: str, *, examples: list[dict] | None = None,
                   definitions: list[dict] | None = None, actor: User | None, file: str | None = None) -> int:
    """Save the campaign's guidelines as a new version; returns its number (researchers and admins only).

    ``definitions`` default to the campaign's (:func:`default_definitions`). Saving exactly what the latest
    version holds adds nothing and returns that version (so annotators are not asked to read it again).
    ``file``: where ``examples`` came from, for the messages. Bad input stores nothing.
    """
    authorize(actor, "campaign.manage", db=db)
    kind, _status = _campaign(db, campaign_id)
    text = check_text(text, what="the guidelines text", max_chars=TEXT_MAX_CHARS)
    defs = _check_definitions(definitions if definitions is not None else default_definitions(db, campaign_id))
    exs = _check_examples(examples, defs, _grading(kind), file)
    payload = (text, json.dumps(defs, ensure_ascii=False), json.dumps(exs, ensure_ascii=False))
    with transaction(db):
        last = db.conn.execute("SELECT version, text, definitions, examples FROM campaign_guidelines WHERE "
                               "campaign_id = ? ORDER BY version DESC LIMIT 1", (campaign_id,)).fetchone()
        if last and tuple(last[1:]) == payload:
            return last[0]
        version = (last[0] if last else 0) + 1
        who = actor.username if actor else "cli"
        db.conn.execute(f"INSERT INTO campaign_guidelines ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (campaign_id, version, *payload, who, _now()))
        audit(db, who, "guidelines.set", f"campaign:{campaign_id}",
              {"version": version, "chars": len(text), "examples": len(exs)})
    return version


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ---------------------------------------------------------------- acknowledgement


def needs_acknowledgement(db: sqlite_utils.Database, user: User, campaign_id: int) -> int | None:
    """The guideline version ``user`` must acknowledge before working on this open campaign, or None."""
    row = db.conn.execute(
        "SELECT g.version FROM campaign_guidelines g JOIN campaigns c ON c.id = g.campaign_id WHERE "
        "g.campaign_id = ? AND c.status = 'open' ORDER BY g.version DESC LIMIT 1", (campaign_id,)).fetchone()
    if row is None:
        return None
    done = db.conn.execute("SELECT 1 FROM guideline_acks WHERE user_id = ? AND campaign_id = ? AND version = ?",
                           (user.id, campaign_id, row[0])).fetchone()
    return None if done else row[0]


def require_acknowledged(db: sqlite_utils.Database, user: User, campaign_id: int) -> None:
    """GuidelinesPending while ``user`` has not acknowledged the campaign's current guidelines."""
    pending = needs_acknowledgement(db, user, campaign_id)
    if pending is not None:
        raise GuidelinesPending(_("read the guidelines of this campaign (version {version}) and confirm you have "
                                  "read them before grading; nothing was saved").format(version=pending))


def acknowledge(db: sqlite_utils.Database, user: User, campaign_id: int, version: int) -> None:
    """Record that ``user`` has read version ``version`` (idempotent; audited once)."""
    authorize(user, "grade", db=db)
    _campaign(db, campaign_id)
    with transaction(db):
        version = check_version(db, campaign_id, version)
        if version is None:
            raise MedevalError(_("say which guideline version was read"))
        cur = db.conn.execute("INSERT OR IGNORE INTO guideline_acks (user_id, campaign_id, version, acknowledged_at) "
                              "VALUES (?, ?, ?, ?)", (user.id, campaign_id, version, _now()))
        if cur.rowcount:
            audit(db, user.username, "guidelines.acknowledge", f"campaign:{campaign_id}", {"version": version})


def gate_state(db: sqlite_utils.Database, user: User, campaign_id: int) -> dict:
    """What the guidelines screen says to ``user`` (issue 23 §7): ``answered`` -- they have answered in this campaign
    already (a grade, a skip, a task answer, a gold answer: "before your next item", not "your first");
    ``read_earlier`` -- they acknowledged an earlier version (the guidelines "have changed since you last read them").
    """
    answered = answer_rows.answered_in(db, user.id, campaign_id)
    read = db.conn.execute("SELECT EXISTS (SELECT 1 FROM guideline_acks WHERE user_id = ? AND campaign_id = ?)",
                           (user.id, campaign_id)).fetchone()[0]
    return {"answered": bool(answered), "read_earlier": bool(read)}
