"""Input limits of medeval, declared once, and the checks that enforce them.

Everything a user, a form or a file hands to the library is checked where it enters:
text is plain text of bounded length without NUL bytes, JSON is of bounded size and
nesting depth, numbers are finite and in range. Each check raises
:class:`~medeval.core.errors.InputError` with a one-line message that names the value,
the limit and what to do, so the CLI prints ``Error: …`` and a page shows the same line.

>>> check_text("Cold campaign", what="campaign name", max_chars=NAME_MAX_CHARS, allow_newlines=False)
'Cold campaign'
>>> check_text("a\\x00b", what="note")
Traceback (most recent call last):
...
medeval.core.errors.InputError: note contains a NUL byte (character 2) -- remove it; text must be plain text
>>> json_depth('{"a": [1, [2, "]]]"]]}')
3
"""

from __future__ import annotations

import json
import math
from typing import Any

from medeval.core import i18n
from medeval.core.errors import InputError
from medeval.core.i18n import _

NAME_MAX_CHARS = 200
"""Names: campaigns (grading and task), models, users, datasets."""
NOTE_MAX_CHARS = 2000
"""Free-text notes: flag notes on grades, items and task items."""
TEXT_MAX_CHARS = 20_000
"""Imported texts: answers, rationales, references, case descriptions, questions."""
JSON_MAX_DEPTH = 20
"""Nesting depth of user-supplied JSON (rubric criteria, settings, JSON input files)."""
JSON_MAX_BYTES = 1_000_000
"""Size of user-supplied JSON given as text (rubric criteria, settings); files are read whole."""
LIST_MAX_ITEMS = 1000
"""Entries of a user-supplied list (rubric criteria, answer options)."""
COUNT_MAX = 100_000
"""Counts a user asks for: items per interval, items drawn, questions or claims per campaign."""
ANNOTATORS_MAX = 1000
"""Annotators per item (k)."""
BOOT_MAX = 10_000
"""Bootstrap resamples (``--n-boot``)."""
SEED_MAX = 2**32 - 1
"""Seeds: a whole number from 0 to 2^32 - 1 (what every random generator accepts)."""
JUDGE_SCORE_MIN, JUDGE_SCORE_MAX = 0.0, 10.0
"""A judge's score of a response (imported or read from its rationale): 1-5 and 1-10 scales fit."""

LIMITS = {
    "NAME_MAX_CHARS": NAME_MAX_CHARS, "NOTE_MAX_CHARS": NOTE_MAX_CHARS, "TEXT_MAX_CHARS": TEXT_MAX_CHARS,
    "JSON_MAX_DEPTH": JSON_MAX_DEPTH, "JSON_MAX_BYTES": JSON_MAX_BYTES, "LIST_MAX_ITEMS": LIST_MAX_ITEMS,
    "COUNT_MAX": COUNT_MAX, "ANNOTATORS_MAX": ANNOTATORS_MAX, "BOOT_MAX": BOOT_MAX, "SEED_MAX": SEED_MAX,
    "JUDGE_SCORE_MIN": JUDGE_SCORE_MIN, "JUDGE_SCORE_MAX": JUDGE_SCORE_MAX,
}

_LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c")


def _w(what: str) -> str:
    """What a value is, in the current language where the catalogue has it (callers mark it ``N_()``)."""
    return _(what) if what else what


def _error(message: str, fix: str, file: str | None, row: int | None) -> InputError:
    return InputError(message, file=file, row=row, fix=fix)


def check_text(value: Any, *, what: str, max_chars: int = TEXT_MAX_CHARS, allow_newlines: bool = True,
               required: bool = False, file: str | None = None, row: int | None = None) -> str:
    """``value`` as plain text of at most ``max_chars`` characters, or an InputError.

    Refused: a value that is not a string, a NUL byte, more than ``max_chars`` characters,
    and (``allow_newlines=False``, for names) line breaks and other control characters.
    ``required=True`` also refuses an empty or blank value. ``file``/``row`` locate the
    value in an input file for the message. Returns the value unchanged.
    """
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise _error(_("{what} must be text, not {kind}").format(what=_w(what), kind=type(value).__name__),
                     _("give it as plain text"), file, row)
    nul = value.find("\x00")
    if nul >= 0:
        raise _error(_("{what} contains a NUL byte (character {n})").format(what=_w(what), n=nul + 1),
                     _("remove it; text must be plain text"), file, row)
    if len(value) > max_chars:
        raise _error(_("{what} is {n} characters long; the limit is {limit}").format(
            what=_w(what), n=f"{len(value):,}", limit=f"{max_chars:,}"),
            _("shorten it to at most {limit} characters").format(limit=f"{max_chars:,}"), file, row)
    if not allow_newlines:
        for i, ch in enumerate(value):
            if ch in _LINE_BREAKS or (ord(ch) < 32 and ch != "\t") or ord(ch) == 127:
                raise _error(_("{what} contains a line break or control character (character {n})").format(
                    what=_w(what), n=i + 1), _("give it on one line"), file, row)
    if required and not value.strip():
        raise _error(_("{what} is empty").format(what=_w(what)), _give(what), file, row)
    return value


def _give(what: str) -> str:
    """The fix for an empty value: 'give a campaign name', 'give the reason' (no second article; issue 23 §7)."""
    if not what.strip():
        return _("give a value")
    if i18n.current() != i18n.SOURCE:  # (the articles below are English grammar)
        return _("give {what}").format(what=_w(what))
    if what.split(maxsplit=1)[0].lower() in ("the", "a", "an", "its", "their", "this", "each", "every"):
        return f"give {what}"
    return f"give {'an' if what[:1].lower() in 'aeiou' else 'a'} {what}"


def check_name(value: Any, *, what: str, file: str | None = None, row: int | None = None) -> str:
    """A required one-line name of at most NAME_MAX_CHARS characters, stripped."""
    return check_text(value, what=what, max_chars=NAME_MAX_CHARS, allow_newlines=False, required=True,
                      file=file, row=row).strip()


def check_note(value: Any, *, what: str = "note") -> str:
    """An optional note of at most NOTE_MAX_CHARS characters (line breaks allowed)."""
    return check_text(value, what=what, max_chars=NOTE_MAX_CHARS, allow_newlines=True)


def _fmt(x: float) -> str:
    """A bound as written: 4294967295, 0.5."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def check_number(value: Any, *, what: str, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, integer: bool = False,
                 file: str | None = None, row: int | None = None) -> float | int:
    """A finite number in the range [low, high] (``low_open``/``high_open``: that end excluded).

    Booleans, NaN and infinities are refused; ``integer=True`` also refuses fractions and
    returns an int. The message shows the range as an interval, e.g. ``(0, 1]``.
    """
    lo = "-inf" if low is None else _fmt(low)
    hi = "inf" if high is None else _fmt(high)
    interval = ("(" if low_open or low is None else "[") + f"{lo}, {hi}" + (")" if high_open or high is None else "]")
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:60] + "..."
    if integer:
        bad = _error(_("{what} must be a whole number in {interval}; got {shown}").format(
            what=_w(what), interval=interval, shown=shown),
            _("give a whole number between {low} and {high}").format(low=lo, high=hi), file, row)
    else:
        bad = _error(_("{what} must be a number in {interval}; got {shown}").format(
            what=_w(what), interval=interval, shown=shown),
            _("give a number between {low} and {high}").format(low=lo, high=hi), file, row)
    if isinstance(value, bool):
        raise bad
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise bad from None
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise bad from None
    if not math.isfinite(x):
        raise bad
    if integer and x != int(x):
        raise bad
    if low is not None and (x < low or (low_open and x == low)):
        raise bad
    if high is not None and (x > high or (high_open and x == high)):
        raise bad
    if integer:
        return int(value) if isinstance(value, int) else int(x)
    return value if isinstance(value, (int, float)) else x


def json_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in JSON text, brackets inside strings ignored (no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def value_depth(value: Any) -> int:
    """Nesting depth of an already parsed value (lists and dicts), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, tuple)):
            children = v
        elif isinstance(v, dict):
            children = v.values()
        else:
            continue
        deepest = max(deepest, d)
        if d > JSON_MAX_DEPTH + 1:  # deep enough to refuse; stop walking
            return d
        stack.extend((c, d + 1) for c in children)
    return deepest


def check_depth(value: Any, *, what: str, max_depth: int = JSON_MAX_DEPTH,
                file: str | None = None, row: int | None = None) -> Any:
    """``value`` if its lists/dicts nest at most ``max_depth`` deep, else an InputError."""
    if value_depth(value) > max_depth:
        raise _error(_("{what} is nested more than {n} levels deep").format(what=_w(what), n=max_depth),
                     _("flatten it to at most {n} levels of lists and objects").format(n=max_depth), file, row)
    return value


def load_json_limited(text: str | bytes, what: str, *, max_depth: int = JSON_MAX_DEPTH,
                      max_bytes: int | None = JSON_MAX_BYTES, file: str | None = None,
                      row: int | None = None) -> Any:
    """Parse JSON text from a user or a file with its size and nesting depth bounded.

    Depth is checked by a scan of the brackets before parsing, so a 100 000-deep
    document is refused with the limit named instead of a RecursionError.
    ``max_bytes=None`` leaves the size unchecked (a file already read whole).
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise _error(_("{what} is not UTF-8 text").format(what=_w(what)), _("save it as UTF-8"), file,
                         row) from None
    check_json_text(text, what, max_depth=max_depth, max_bytes=max_bytes, file=file, row=row)
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the scan above refuses this first
        raise _error(_("{what} is nested more than {n} levels deep").format(what=_w(what), n=max_depth),
                     _("flatten it to at most {n} levels").format(n=max_depth), file, row) from None
    except ValueError as e:
        raise _error(_("{what} is not valid JSON ({error})").format(what=_w(what), error=e),
                     _("check its brackets, quotes and commas"), file, row) from None


def check_json_text(text: str, what: str, *, max_depth: int = JSON_MAX_DEPTH, max_bytes: int | None = JSON_MAX_BYTES,
                    file: str | None = None, row: int | None = None) -> str:
    """JSON text checked before it is parsed: its size, no NUL byte, brackets nested at most ``max_depth``."""
    if not isinstance(text, str):
        raise _error(_("{what} must be JSON text, not {kind}").format(what=_w(what), kind=type(text).__name__),
                     _("give it as JSON text"), file, row)
    if max_bytes is not None and len(text.encode("utf-8")) > max_bytes:
        raise _error(_("{what} is {n} bytes; the limit is {limit}").format(
            what=_w(what), n=f"{len(text.encode('utf-8')):,}", limit=f"{max_bytes:,}"), _("make it smaller"),
            file, row)
    if "\x00" in text:
        raise _error(_("{what} contains a NUL byte").format(what=_w(what)), _("remove it; JSON must be plain text"),
                     file, row)
    if json_depth(text) > max_depth:
        raise _error(_("{what} is nested more than {n} levels deep").format(what=_w(what), n=max_depth),
                     _("flatten it to at most {n} levels of lists and objects").format(n=max_depth), file, row)
    return text


def check_seed(value: Any, *, what: str = "seed") -> int:
    """A seed: a whole number in [0, SEED_MAX]."""
    return check_number(value, what=what, low=0, high=SEED_MAX, integer=True)


def check_row(obj: Any, *, file: str | None = None, row: int | None = None, max_chars: int = TEXT_MAX_CHARS,
              max_depth: int = JSON_MAX_DEPTH) -> Any:
    """A row of an input file: every text in it (keys and nested values too) without NUL bytes and at most
    ``max_chars`` long, nested at most ``max_depth`` deep. The message names the column."""
    check_depth(obj, what="the row", max_depth=max_depth, file=file, row=row)
    stack = [(None, obj)]
    while stack:
        col, v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                name = col or f"column {str(k)[:40]!r}"
                if isinstance(k, str):
                    check_text(k, what=f"a key in {name}" if col else "a column name", max_chars=max_chars,
                               file=file, row=row)
                stack.append((name, x))
        elif isinstance(v, (list, tuple)):
            stack.extend((col, x) for x in v)
        elif isinstance(v, str):
            check_text(v, what=col or "a value", max_chars=max_chars, file=file, row=row)
    return obj


def read_table_limited(path, fmt: str | None = None) -> tuple[list[str], list[tuple[int, dict]]]:
    """:func:`medeval.core.tables.read_table` with the limits: every row through :func:`check_row`, and a
    JSON file nested too deep for the parser refused with the limit named (not a RecursionError)."""
    from medeval.core.tables import read_table

    try:
        header, rows = read_table(path, fmt)
    except RecursionError:
        raise InputError(f"the JSON is nested more than {JSON_MAX_DEPTH} levels deep", file=str(path),
                         fix=f"flatten it to at most {JSON_MAX_DEPTH} levels of lists and objects") from None
    for n, obj in rows:
        check_row(obj, file=str(path), row=n)
    return header, rows
