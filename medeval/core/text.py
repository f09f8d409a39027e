"""Short forms of long texts for lists a person scans (their answers in a campaign, on Grade and Rate & compare)."""

from __future__ import annotations

SNIPPET_CHARS = 60


def snippet(text: str | None, n: int = SNIPPET_CHARS) -> str:
    """The first ``n`` characters of ``text`` on one line (runs of white space made one space), "…" when cut."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= n else flat[:n].rstrip() + "…"
