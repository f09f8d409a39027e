"""Helpers shared by the benchmark scripts: progress log, load average, the figure table."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo ('' where there is none)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


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


def finish(res: dict, text: str, total: float, json_path: str | None) -> None:
    """Print the table; record the total time and end load average; write every figure as JSON if asked."""
    res["total_seconds"] = total
    res["loadavg_end"] = loadavg()
    print(text, flush=True)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(res, indent=2, ensure_ascii=False), encoding="utf-8")
        log(f"wrote {json_path}")
