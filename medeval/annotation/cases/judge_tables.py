"""Scores written in a Markdown table of a judge's rationale: one row per response ("| 医生1 | 4 |") or one column
per response ("| | Response 1 | Response 2 |" then "| Score | 4 | 3 |").

A table with several numeric columns (criteria and a total) is read in its total column when one header says so
(总分, overall, total, final ...), else in its one score column (得分, score, rating ...); otherwise its scores
name no column and are returned as unassigned, never guessed.
"""

from __future__ import annotations

import re

from medeval.annotation.cases import judge_patterns as jp

_TOTAL = re.compile(r"总分|总评|总体|综合|合计|overall|total|final|sum", re.I)
_SCOREWORD = re.compile(r"得分|评分|分数|打分|分值|评级|score|rating|points?|grade", re.I)
_CELL = re.compile(rf"[\s*_`]*{jp.SCORE}{jp.UNIT}[\s*_`]*", re.I)
_SEPARATOR = re.compile(r"[\s|:\-–—]+")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


# a cell whose score the judge corrected ("4→5", "4 -> 5", "~~4~~ 5"): the score after the change is the cell's
_FIXED_CELL = re.compile(rf"[\s*_`]*(?:~~[^~|]*~~|{jp.NUM}\s*(?:分|points?|/\s*\d+)?\s*(?:→|->|=>|⇒))[\s*_`]*"
                         rf"{jp.SCORE}{jp.UNIT}[\s*_`]*", re.I)


def _score(cell: str):
    m = _CELL.fullmatch(cell) or _FIXED_CELL.fullmatch(cell)
    return m if m else None


def _position(cell: str, pos_of) -> int | None:
    found = {pos_of(m) for m in jp.MENTION_RE.finditer(cell)}
    return found.pop() if len(found) == 1 else None


def _pick(headers: list[str], candidates: list[int]) -> int | None:
    """The index (into ``headers``) of the score column/row among ``candidates``: the one total, else the one
    score word, else the only candidate; None when that does not decide."""
    for rx in (_TOTAL, _SCOREWORD):
        hit = [j for j in candidates if j < len(headers) and rx.search(headers[j])]
        if len(hit) == 1:
            return hit[0]
        if len(hit) > 1:
            return None
    return candidates[0] if len(candidates) == 1 else None


def tables(s: str, pos_of) -> tuple[list[tuple], list[tuple[int, int]], list[str]]:
    """``(events, spans, unassigned)`` of the Markdown tables in ``s``: events ``(start, end, [position], match)``
    of each score cell read, the tables' spans (no other reading may take a number inside them), and the text of
    rows whose score no column names."""
    events, spans, unassigned = [], [], []
    lines, off = [], 0
    for line in s.splitlines(keepends=True):
        lines.append((off, line))
        off += len(line)
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j][1].lstrip().startswith("|"):
            j += 1
        if j - i < 2:
            i = max(j, i + 1)
            continue
        block = [(o, ln) for o, ln in lines[i:j] if not _SEPARATOR.fullmatch(ln.strip())]
        spans.append((lines[i][0], lines[j - 1][0] + len(lines[j - 1][1])))
        rows = [(o, ln, _cells(ln)) for o, ln in block]
        _read(rows, pos_of, events, unassigned)
        i = j
    return events, spans, unassigned


def _read(rows, pos_of, events, unassigned) -> None:
    if len(rows) < 2:
        return
    header = rows[0][2]
    cols = {k: p for k, c in enumerate(header) if (p := _position(c, pos_of)) is not None}
    if len(cols) >= 2:  # one column per response: the score row
        numeric = [r for r in rows[1:] if any(_score(c) for c in r[2][1:])]
        pick = _pick([r[2][0] for r in numeric], list(range(len(numeric))))
        if pick is None:
            unassigned.extend(r[1].strip() for r in numeric)
            return
        o, ln, cells = numeric[pick]
        for k, p in cols.items():
            m = _score(cells[k]) if k < len(cells) else None
            if m is not None:
                events.append((o, o + len(ln), [p], m))
        return
    body = [r for r in rows[1:] if _position(" ".join(r[2][:1]), pos_of) is not None
            or any(_position(c, pos_of) is not None for c in r[2] if not _score(c))]
    numeric_cols = sorted({k for r in body for k, c in enumerate(r[2]) if _score(c)})
    col = _pick(header, numeric_cols)
    for o, ln, cells in body:
        label = next((p for c in cells if not _score(c) and (p := _position(c, pos_of)) is not None), None)
        m = _score(cells[col]) if col is not None and col < len(cells) else None
        if label is not None and m is not None:
            events.append((o, o + len(ln), [label], m))
        elif any(_score(c) for c in cells):
            unassigned.append(ln.strip())
