"""Short forms of long texts for lists a person scans (their answers in a campaign, on Grade and Rate & compare), and
looks around a place in a long text that do not copy the text before it (the readers stay linear in its length)."""

from __future__ import annotations

SNIPPET_CHARS = 60


def snippet(text: str | None, n: int = SNIPPET_CHARS) -> str:
    """The first ``n`` characters of ``text`` on one line (runs of white space made one space), "…" when cut."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= n else flat[:n].rstrip() + "…"


def char_before(s: str, i: int) -> str:
    """The last character before ``i`` that is not white space ('' when none): the end of ``s[:i].rstrip()``,
    found without copying the text before ``i`` (a copy per match is quadratic in a long text).

    >>> char_before("A (  B", 5), char_before("   B", 3), char_before("x" + " " * 5000 + "B", 5001)
    ('(', '', 'x')
    """
    w = 16
    while True:
        head = s[max(0, i - w):i].rstrip()
        if head or w >= i:
            return head[-1:]
        w *= 4
