"""The audit log in words, as the Users & audit page shows it (the CSV export keeps the records as stored).

The words are English marked ``N_()`` and given in the current language (``medeval.core.i18n``): the signed-in
person's on the page. In English an action or a detail's field reads as :func:`medeval.core.display.words` writes
its code name ("campaign: add items", "base version"); a code name no table below names is written that way in
every language.
"""

from __future__ import annotations

import json

from medeval.core.display import MISSING, value_text, words
from medeval.core.i18n import N_, _

CODE_VALUES = ("kind", "task", "status")
"""Detail fields whose values are code names ("kind": "bucket_grading"), shown in words too."""

COLUMN_LABELS = {"id": N_("id"), "at": N_("at"), "actor": N_("actor"), "action": N_("action"),
                 "target": N_("target"), "detail": N_("detail")}
"""The audit log's columns as the page heads them (``webui.tables.dataframe(labels=...)``)."""

ACTIONS = {
    "adjudication.record": N_("adjudication: record"), "annotation.change": N_("annotation: change"),
    "campaign.add_items": N_("campaign: add items"), "campaign.create": N_("campaign: create"),
    "campaign.close": N_("campaign: close"), "campaign.reopen": N_("campaign: reopen"),
    "cases.import": N_("cases: import"), "exam.settle": N_("exam: settle"),
    "factcheck.import": N_("factcheck: import"), "gold.import": N_("gold: import"), "gold.mark": N_("gold: mark"),
    "gold.qualification.start": N_("gold: qualification: start"), "gold.retire": N_("gold: retire"),
    "gold.settings": N_("gold: settings"), "guidelines.acknowledge": N_("guidelines: acknowledge"),
    "guidelines.set": N_("guidelines: set"), "login": N_("login"), "login.failed": N_("login: failed"),
    "login.locked_out": N_("login: locked out"), "login.refused": N_("login: refused"), "logout": N_("logout"),
    "session.lifetime": N_("session: lifetime"), "session.timeout": N_("session: timeout"),
    "task.answer": N_("task: answer"), "thresholds.activate": N_("thresholds: activate"),
    "thresholds.publish": N_("thresholds: publish"), "user.add": N_("user: add"),
    "user.disable": N_("user: disable"), "user.enable": N_("user: enable"),
    "user.reset_password": N_("user: reset password"), "user.set_language": N_("user: set language"),
    "user.set_role": N_("user: set role"), "user.unlock": N_("user: unlock"),
}
"""Each audit action in words (English: as :func:`medeval.core.display.words` writes the code)."""

FIELDS = {
    "address": N_("address"), "annotators": N_("annotators"), "attempt": N_("attempt"),
    "base_version": N_("base version"), "campaign": N_("campaign"), "campaign_name": N_("campaign name"),
    "examples": N_("examples"), "expected": N_("expected"), "file": N_("file"), "files": N_("files"),
    "flagged": N_("flagged"), "from": N_("from"), "gold": N_("gold"), "hours": N_("hours"), "items": N_("items"),
    "items_added": N_("items added"), "items_graded": N_("items graded"), "items_present": N_("items present"),
    "kind": N_("kind"), "language": N_("language"), "letters": N_("letters"), "model": N_("model"),
    "models": N_("models"), "name": N_("name"), "question": N_("question"), "reason": N_("reason"),
    "response": N_("response"), "role": N_("role"), "round": N_("round"), "seed": N_("seed"),
    "settlement": N_("settlement"), "source": N_("source"), "status": N_("status"), "strata": N_("strata"),
    "supersedes": N_("supersedes"), "task": N_("task"), "tier": N_("tier"), "tier_name": N_("tier name"),
    "to": N_("to"), "version": N_("version"), "was_locked": N_("was locked"),
}
"""The detail's fields in words (English: as :func:`medeval.core.display.words` writes the code)."""

VALUES = {
    "bucket_grading": N_("bucket grading"), "random_validation": N_("random validation"),
    "active_calibration": N_("active calibration"), "open": N_("open"), "closed": N_("closed"),
    "annotator": N_("annotator"), "researcher": N_("researcher"), "admin": N_("admin"),
    "adjudicator": N_("adjudicator"), "Completely Wrong": N_("Completely Wrong"),
    "Partially Correct": N_("Partially Correct"), "Basically Correct": N_("Basically Correct"),
}
"""Code values of the fields below in words (English: as :func:`medeval.core.display.words` writes the code)."""
WORDED = CODE_VALUES + ("role", "from", "to", "tier_name")
"""Fields whose values :data:`VALUES` names ("from"/"to": a campaign's status before and after)."""


def _field(key: str) -> str:
    return _(FIELDS[key]) if key in FIELDS else words(key)


def _detail_value(key: str, value) -> str:
    if isinstance(value, str) and key in WORDED:
        if value in VALUES:
            return _(VALUES[value])
        return words(value) if key in CODE_VALUES else value
    if isinstance(value, dict):
        return _("; ").join(_("{key}: {value}").format(key=words(k), value=value_text(v)) for k, v in value.items()) \
            if value else MISSING
    return value_text(value)


def display_rows(rows: list[dict]) -> list[dict]:
    """Audit records (``auth.audit_rows``) as a page shows them: the action and the detail in words ("gold: mark";
    "campaign: 8; tier: 0; from: —"), not code names and raw JSON, in the current language. Programs read the CSV
    export instead.

    >>> display_rows([{"id": 1, "action": "campaign.add_items", "detail": '{"kind": "bucket_grading", "from": null}'}])
    [{'id': 1, 'action': 'campaign: add items', 'detail': 'kind: bucket grading; from: —'}]
    """
    def detail(text):
        try:
            d = json.loads(text) if text else ""
        except ValueError:
            return str(text)
        if isinstance(d, dict):
            if not d:
                return MISSING
            return _("; ").join(_("{key}: {value}").format(key=_field(k), value=_detail_value(k, v))
                                for k, v in d.items())
        return value_text(d)

    return [{**r, "action": _(ACTIONS[r["action"]]) if r["action"] in ACTIONS else words(r["action"]),
             "detail": detail(r["detail"])} for r in rows]
