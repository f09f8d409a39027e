"""Gold results for researchers: per annotator, qualification attempts and hidden-gold accuracy over time.

Accuracy is the share of answered (not skipped) hidden gold items whose latest answer is the expected tier;
"over time" is the same share per block of consecutive hidden gold answers (in the order they were given).
An annotator is flagged when their latest block falls below the campaign's alert threshold. Answers to
retired gold items are left out of the hidden figures (a retired item's expected tier was in doubt);
qualification results stay as they were decided.
"""

from __future__ import annotations

import sqlite_utils

from medeval.accounts.auth import User
from medeval.accounts.policy import authorize
from medeval.annotation.gold.backends import TIER, Backend
from medeval.annotation.gold.qualification import qualification_state
from medeval.annotation.gold.settings import active_gold_ids, get_settings, gold_family, require_gold_campaign
from medeval.annotation.gold.task_backend import TASK
from medeval.core.display import percent, words
from medeval.core.errors import MedevalError
from medeval.core.i18n import N_, _, ngettext

BLOCK = 5  # hidden gold answers per point of "accuracy over time"

QUALIFICATION_WORDS = {"not_required": N_("not required"), "not_started": N_("not started"),
                       "in_progress": N_("in progress"), "passed": N_("passed"),
                       "failed_retry": N_("failed, may try again"), "failed_final": N_("failed, no tries left")}
"""An annotator's qualification status (``QualificationState.status``) in words (English, marked N_():
:func:`qualification_words` gives them in the current language)."""

# the columns of :func:`results_rows` as a page names them (English, marked N_(); the keys stay as they are)
RESULTS_LABELS = {"annotator": N_("annotator"), "qualification": N_("qualification"), "attempts": N_("attempts"),
                  "hidden answered": N_("hidden answered"), "hidden correct": N_("hidden correct"),
                  "accuracy": N_("accuracy"), "over time": N_("over time"), "flagged": N_("flagged")}


def gold_accuracy(db: sqlite_utils.Database, campaign_id: int, *, actor: User | None, block: int = BLOCK,
                  backend: Backend = TIER) -> dict:
    """Everything the Campaigns and Agreement pages show about gold answers, as plain data (JSON-ready).

    ``{"campaign_id", "settings", "gold_items" (active), "block", "threshold", "annotators": [{"annotator",
    "qualification": status, "attempts": [{attempt, items, answered, correct, share, pass_mark, complete,
    passed}], "hidden_answered", "hidden_correct", "hidden_skipped", "accuracy" (None: no answer),
    "blocks": [{"block", "first", "last", "answers", "correct", "accuracy", "until"}], "latest_accuracy",
    "flagged"}]}``. Researchers and admins only.
    """
    authorize(actor, "gold.manage", db=db)
    require_gold_campaign(db, campaign_id, backend.family)
    if isinstance(block, bool) or not isinstance(block, int) or not 1 <= block <= 100:
        raise MedevalError(_("the block size (hidden gold answers per point over time) must be a whole number "
                             "1..100"))
    s = get_settings(db, campaign_id)
    users = db.conn.execute(f"SELECT DISTINCT u.id, u.username, u.role, u.active FROM {backend.tables[1]} a JOIN "
                            "users u ON u.id = a.user_id WHERE a.campaign_id = ? ORDER BY u.username",
                            (campaign_id,)).fetchall()
    out = []
    for uid, name, role, active in users:
        user = User(uid, name, role, bool(active))
        q = qualification_state(db, user, campaign_id, backend)
        rows = backend.hidden_rows(db, uid, campaign_id)
        answered = [(c, at) for c, at in rows if c is not None]
        blocks = []
        for i in range(0, len(answered), block):
            chunk = answered[i:i + block]
            ok = sum(c for c, _ in chunk)
            blocks.append({"block": len(blocks) + 1, "first": i + 1, "last": i + len(chunk), "answers": len(chunk),
                           "correct": ok, "accuracy": ok / len(chunk), "until": chunk[-1][1]})
        correct = sum(c for c, _ in answered)
        latest = blocks[-1]["accuracy"] if blocks else None
        out.append({"annotator": name, "qualification": q.status, "attempts": [dict(r) for r in q.results],
                    "hidden_answered": len(answered), "hidden_correct": correct,
                    "hidden_skipped": sum(1 for c, _ in rows if c is None),
                    "accuracy": correct / len(answered) if answered else None, "blocks": blocks,
                    "latest_accuracy": latest,
                    "flagged": latest is not None and latest < s["alert_threshold"] - 1e-9})
    return {"campaign_id": campaign_id, "settings": s, "gold_items": len(active_gold_ids(db, campaign_id)),
            "block": block, "threshold": s["alert_threshold"], "annotators": out}


def qualification_words(status: str) -> str:
    return _(QUALIFICATION_WORDS[status]) if status in QUALIFICATION_WORDS else words(status)


def results_rows(results: dict) -> list[dict]:
    """"Results per annotator" in words, one row per annotator (``results``: :func:`gold_accuracy`): the
    qualification, its attempts ("3 of 4"), the hidden gold answered and correct, the accuracy (a share: pages show
    it as a percentage), its points over time (a chart) and the flag. The keys stay English (a page names the columns
    in the reader's language: :data:`RESULTS_LABELS`); the words in the cells are in the current language."""
    return [{"annotator": a["annotator"], "qualification": qualification_words(a["qualification"]),
             "attempts": ", ".join(_("{correct} of {total}").format(correct=t["correct"], total=t["items"])
                                   for t in a["attempts"]),
             "hidden answered": a["hidden_answered"], "hidden correct": a["hidden_correct"],
             "accuracy": a["accuracy"], "over time": [b["accuracy"] for b in a["blocks"]], "flagged": a["flagged"]}
            for a in results["annotators"]]


def results_caption(results: dict) -> str:
    """How "accuracy over time" and the flag are computed, in a sentence."""
    return _("Hidden-gold accuracy over time: per block of {block} consecutive hidden gold answers. Flagged: the "
             "latest block is below {below}.").format(block=results["block"], below=percent(results["threshold"]))


def methods_sentence(db: sqlite_utils.Database, campaign_id: int) -> str:
    """One sentence for the methods paragraph saying how gold items were used and treated ("" without gold)."""
    family = gold_family(db, campaign_id)[0]
    table = (TIER if family == "tier" else TASK).tables[2]
    n = db.conn.execute(f"SELECT count(*) FROM {table} WHERE campaign_id = ?", (campaign_id,)).fetchone()[0]
    if not n:
        return ""
    s = get_settings(db, campaign_id)
    uses = []
    if s["qualification_required"]:
        uses.append(_("a qualification round ({items} items, pass mark {mark})").format(
            items=s["qualification_items"], mark=percent(s["pass_mark"])))
    if s["hidden_share"] > 0:
        uses.append(_("hidden quality checks (about {share} of each annotator's queue)").format(
            share=percent(s["hidden_share"])))
    how = _(" and ").join(uses) if uses else _("reference")
    if family == "tier":
        what = _("responses with an expected tier set by the researchers, none of them a real item of the campaign")
        return ngettext("{n} gold item ({what}) served as {how}; answers to gold items are stored apart from the "
                        "grades and count in no agreement statistic and no calibration.",
                        "{n} gold items ({what}) served as {how}; answers to gold items are stored apart from the "
                        "grades and count in no agreement statistic and no calibration.", n).format(
            n=n, what=what, how=how)
    what = _("items with expected answers set by the researchers, none of them a real item of the campaign")
    if s["score_tolerance"]:
        what = _("{what}; a 1-5 score within {tolerance} of the expected one counted as expected").format(
            what=what, tolerance=s["score_tolerance"])
    return ngettext("{n} gold item ({what}) served as {how}; answers to gold items are stored apart from the real "
                    "answers and count in no agreement statistic and no calibration.",
                    "{n} gold items ({what}) served as {how}; answers to gold items are stored apart from the real "
                    "answers and count in no agreement statistic and no calibration.", n).format(
        n=n, what=what, how=how)
