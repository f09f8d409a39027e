"""CSV exports that a spreadsheet cannot run: every cell is neutralised against formula injection.

A spreadsheet (Excel, LibreOffice Calc, Google Sheets) treats a cell that begins with
``= + - @``, a tab or a carriage return as a formula, so a model named
``=HYPERLINK("http://x","y")`` would become a live link in an exported report. As OWASP
recommends (CSV Injection), such a cell is written with a single quote ``'`` in front, which
the spreadsheet reads as "this is text". Numbers stay numbers: an ``int`` or ``float`` is never
touched, nor is text that is entirely a plain number such as ``-0.25`` or ``-3``.

Every CSV the app or the command line writes goes through :func:`writer`, :func:`dict_writer`
or :func:`csv_text` (input files we generate, such as the demo data, are not exports).

>>> [safe_cell(v) for v in ['=HYPERLINK("http://x","y")', "+1", "-cmd", "@SUM(1)", "\\tx", "ok"]]
['\\'=HYPERLINK("http://x","y")', "'+1", "'-cmd", "'@SUM(1)", "'\\tx", 'ok']
>>> [safe_cell(v) for v in [-0.25, -3, "-0.25", "-3", "1e-3", None]]
[-0.25, -3, '-0.25', '-3', '1e-3', None]
>>> csv_text([{"model": "=1+1", "score": -0.5}])
"model,score\\n'=1+1,-0.5\\n"
"""

from __future__ import annotations

import csv
import io
import numbers
import re
from collections.abc import Iterable
from typing import Any

DANGEROUS_LEADING = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP CSV Injection)."""

# text that is a plain number: may start with "-" (a negative number), never with "+" or "="
_PLAIN_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: Any) -> Any:
    """``value`` ready for a CSV cell: text that a spreadsheet would run gets a leading ``'``.

    Numbers (``int``, ``float``, numpy numbers, booleans) and ``None`` are returned as they are;
    any other value is written as its text, prefixed when it begins with ``= + - @``, a tab or a
    carriage return -- unless the text is a plain number (``-0.25``).
    """
    if value is None or isinstance(value, numbers.Number):
        return value
    text = value if isinstance(value, str) else str(value)
    if text.startswith(DANGEROUS_LEADING) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def safe_row(row: Iterable[Any]) -> list[Any]:
    """Every cell of a row through :func:`safe_cell`."""
    return [safe_cell(v) for v in row]


class SafeWriter:
    """A ``csv.writer`` whose cells go through :func:`safe_cell`."""

    def __init__(self, f, *args, **kwargs):
        self._w = csv.writer(f, *args, **kwargs)

    @property
    def dialect(self):
        return self._w.dialect

    def writerow(self, row: Iterable[Any]):
        return self._w.writerow(safe_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class SafeDictWriter(csv.DictWriter):
    """A ``csv.DictWriter`` whose cells (the header included) go through :func:`safe_cell`."""

    def writerow(self, rowdict: dict):
        return super().writerow({k: safe_cell(v) for k, v in rowdict.items()})

    def writerows(self, rowdicts: Iterable[dict]) -> None:
        for row in rowdicts:
            self.writerow(row)


def writer(f, *args, **kwargs) -> SafeWriter:
    """Like ``csv.writer(f, ...)``, with every cell neutralised."""
    return SafeWriter(f, *args, **kwargs)


def dict_writer(f, fieldnames, *args, **kwargs) -> SafeDictWriter:
    """Like ``csv.DictWriter(f, fieldnames, ...)``, with every cell (and the header) neutralised."""
    return SafeDictWriter(f, fieldnames, *args, **kwargs)


def csv_text(rows: Iterable[dict] | Iterable[Iterable[Any]], header: list[str] | None = None, *,
             lineterminator: str = "\n") -> str:
    """The CSV text of ``rows``, every cell neutralised.

    ``rows`` are dicts (the header: ``header``, else every key in order of first appearance)
    or sequences (written under ``header`` when given). For a page's download button.
    """
    rows = list(rows)
    buf = io.StringIO()
    if rows and isinstance(rows[0], dict):
        cols = header or list(dict.fromkeys(k for r in rows for k in r))
        w = dict_writer(buf, fieldnames=cols, lineterminator=lineterminator, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    else:
        w = writer(buf, lineterminator=lineterminator)
        if header is not None:
            w.writerow(header)
        w.writerows(rows)
    return buf.getvalue()
