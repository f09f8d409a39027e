"""The audit log in words, as the Users & audit page shows it (the CSV export keeps the records as stored)."""

from __future__ import annotations

import json

from medeval.core.display import value_text, words

CODE_VALUES = ("kind", "task", "status")
"""Detail fields whose values are code names ("kind": "bucket_grading"), shown in words too."""


def display_rows(rows: list[dict]) -> list[dict]:
    """Audit records (``auth.audit_rows``) as a page shows them: the action and the detail in words ("gold: mark";
    "campaign: 8; tier: 0; from: —"), not code names and raw JSON. Programs read the CSV export instead.

    >>> display_rows([{"id": 1, "action": "campaign.add_items", "detail": '{"kind": "bucket_grading", "from": null}'}])
    [{'id': 1, 'action': 'campaign: add items', 'detail': 'kind: bucket grading; from: —'}]
    """
    def detail(text):
        try:
            d = json.loads(text) if text else ""
        except ValueError:
            return str(text)
        if isinstance(d, dict):
            d = {k: words(v) if k in CODE_VALUES and isinstance(v, str) else v for k, v in d.items()}
        return value_text(d)

    return [{**r, "action": words(r["action"]), "detail": detail(r["detail"])} for r in rows]
