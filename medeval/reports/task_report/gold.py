"""Gold items in a task campaign's report: the methods sentence and one row per annotator.

:func:`with_gold` adds ``r["gold"]`` to the results of :func:`medeval.annotation.tasks.results`: None when the
campaign has no gold items, else ``{"methods": the sentence of
:func:`medeval.annotation.gold_results.methods_sentence`, "accuracy": :func:`gold_accuracy` with the task
backend}``. The report (:mod:`medeval.reports.task_report.document`, and the methods paragraph) reads it from there, as the Agreement report reads
``s["gold"]`` for a tier-grading campaign. Gold answers are stored apart from the real answers
(``task_gold_answers``), so none of the results' statistics counts them.
"""

from __future__ import annotations

import sqlite_utils

from medeval.annotation.gold import gold_accuracy, methods_sentence, qualification_words
from medeval.annotation.gold import TASK
from medeval.core.display import percent
from medeval.core.i18n import N_, _, ngettext
from medeval.reports import html_kit as kit

COLUMNS = [("annotator", N_("annotator")), ("qualification", N_("qualification")),
           ("hidden_answered", N_("hidden gold answered")), ("hidden_correct", N_("correct")),
           ("accuracy", N_("accuracy")), ("accuracy_by_block", N_("accuracy per block")), ("flagged", N_("flagged"))]
"""The "Gold items" table's columns: the keys of :func:`gold_rows` and their heads (shown with ``_()``)."""


def gold_part(db: sqlite_utils.Database, campaign_id: int) -> dict | None:
    """The report's gold part of a task campaign (None: it has no gold items)."""
    if not db.conn.execute("SELECT 1 FROM task_gold_items WHERE campaign_id = ?", (campaign_id,)).fetchone():
        return None
    return {"methods": methods_sentence(db, campaign_id),
            "accuracy": gold_accuracy(db, campaign_id, actor=None, backend=TASK)}


def with_gold(db: sqlite_utils.Database, r: dict) -> dict:
    """The results ``r`` with their gold part (``r["gold"]``) for the report."""
    return {**r, "gold": gold_part(db, r["campaign"]["id"])}


def gold_methods(r: dict) -> str:
    """The methods sentence about gold items ("" without them)."""
    return ((r.get("gold") or {}).get("methods") or "").strip()


def gold_rows(r: dict) -> list[dict]:
    """One row per annotator: qualification, hidden gold answered/correct, accuracy overall and per block."""
    g = (r.get("gold") or {}).get("accuracy") or {}
    return [{"annotator": a["annotator"], "qualification": a["qualification"],
             "hidden_answered": a["hidden_answered"], "hidden_correct": a["hidden_correct"],
             "accuracy": a["accuracy"], "accuracy_by_block": [round(b["accuracy"], 3) for b in a["blocks"]],
             "flagged": a["flagged"]} for a in g.get("annotators", [])]


def gold_html(r: dict) -> str:
    """The report's "Gold items" section ("" without gold items), in the current language."""
    g = (r.get("gold") or {}).get("accuracy")
    if not g:
        return ""
    text = ngettext(
        "{n} active gold item; accuracy over time in blocks of {block} hidden gold answers; flagged when the latest "
        "block is below {threshold}. Gold answers are kept apart from the real answers and count in none of the "
        "results above.",
        "{n} active gold items; accuracy over time in blocks of {block} hidden gold answers; flagged when the latest "
        "block is below {threshold}. Gold answers are kept apart from the real answers and count in none of the "
        "results above.", g["gold_items"]).format(n=g["gold_items"], block=g["block"],
                                                   threshold=percent(g["threshold"]))
    rows = [{**row, "qualification": qualification_words(row["qualification"]),  # (the CSV: as stored)
             "accuracy": percent(row["accuracy"]) if row["accuracy"] is not None else None,
             "flagged": _("yes") if row["flagged"] else _("no")} for row in gold_rows(r)]
    return (f"<h2>{kit.esc(_('Gold items'))}</h2><p>{kit.esc(text)}</p>"
            + kit.table(rows, [(k, _(label)) for k, label in COLUMNS],
                        caption=_("gold items per annotator")))
