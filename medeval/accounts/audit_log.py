"""The audit log's writer: one append-only record per sign-in, account change and decision (``audit_log``; the
database refuses changes to it). ``medeval.accounts.auth`` re-exports :func:`audit`; reading the log is an admin's
(``auth.audit_rows``), its words for people are ``audit_text``'s."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from medeval.accounts import throttle

if TYPE_CHECKING:  # only the parameters' type: writing a record needs no sqlite-utils import
    import sqlite_utils


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# The tier codes in words (README "Tier codes"; equal to medeval.engine.thresholds.TIERS, tested): an audited tier
# keeps its numeric code and gets its name beside it ("tier": 1, "tier_name": "Partially Correct").
TIER_WORDS = {0: "Completely Wrong", 1: "Partially Correct", 2: "Basically Correct"}
_TIER_FIELDS = {"annotation.change": ("from", "to"), "adjudication.record": ("tier", "from"), "gold.mark": ("tier",)}


def _with_tier_names(action: str, detail: dict | None) -> dict:
    detail = dict(detail or {})
    for key in _TIER_FIELDS.get(action, ()):
        value = detail.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value in TIER_WORDS:
            detail[f"{key}_name"] = TIER_WORDS[value]
    return detail


def audit(db: sqlite_utils.Database, actor: str, action: str, target: str | None = None,
          detail: dict | None = None, *, now: float | None = None) -> None:
    """Append one audit record (inside the caller's transaction when there is one); a tier in the detail of a grade,
    an adjudication or a gold item gets its name beside its code."""
    detail = _with_tier_names(action, detail)
    at = _now_iso() if now is None else throttle.iso(now)
    db.conn.execute("INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)",
                    (at, actor, action, target, json.dumps(detail or {}, ensure_ascii=False)))
