"""Helpers shared by the benchmark scripts: progress log, load average, the figure table."""

from __future__ import annotations

import os
import sys
import time


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def table_lines(rows) -> list[str]:
    """Rows of (name, value, note) as aligned lines; a row with only a name is a section heading."""
    w1 = max(len(r[0]) for r in rows)
    w2 = max(len(r[1]) for r in rows)
    lines = []
    for name, value, note in rows:
        if not value and not note:
            lines.append(name)
        else:
            lines.append(f"  {name:<{w1}}  {value:>{w2}}  {note}".rstrip())
    return lines
