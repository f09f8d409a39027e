"""Reading tabular input files (CSV, TSV, JSONL, JSON) with errors a user can act on.

:func:`read_table` returns ``(header, rows)`` where each row is ``(location, dict)``;
``location`` is the 1-based line of a CSV/JSONL file (the CSV header is line 1)
or the 1-based item of a JSON array, so every later error can name the row.
:func:`open_table` gives the same rows one at a time, with the same errors, for files too large to hold
(CSV, TSV and JSONL are read line by line; a ``.json`` array is still parsed whole, as the standard
library cannot parse JSON incrementally).

JSON is nested at most :data:`JSON_MAX_DEPTH` levels per row: deeper text is refused by a scan of its
brackets *before* it reaches the parser (which recurses once per level and would fail with a
RecursionError a thousand levels down). The scan costs two ``str.count`` calls for a row that has
no more brackets than the limit, which is almost every row.
"""

from __future__ import annotations

import codecs
import csv
import json
import re
from itertools import accumulate, chain
from pathlib import Path

from medeval.core.errors import InputError

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}

JSON_MAX_DEPTH = 20
"""Nesting depth of a row of a JSON/JSONL file: the same number as ``medeval.core.limits.JSON_MAX_DEPTH``
(a test keeps them equal; this module cannot import ``limits``, which imports it)."""
JSON_WRAPPER_LEVELS = 2
"""Levels a .json file may add around its rows: the array, and an object holding that array."""

# a JSON string (escapes included; an unterminated one runs to the end), then everything but brackets
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth_bound(text: str, max_depth: int) -> int:
    """How deep JSON ``text`` nests lists/objects (brackets inside strings ignored): exact when above
    ``max_depth``, else a number no greater than ``max_depth``.

    No recursion and no Python loop per character: a text with at most ``max_depth`` brackets cannot be
    deeper (two ``str.count``, the answer for almost every row); otherwise strings are cut out and the
    brackets summed in C.
    """
    brackets = text.count("[") + text.count("{")
    if brackets <= max_depth:
        return brackets
    only = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, only)), default=0)


def _too_deep_error(path: Path, row: int | None, what: str) -> InputError:
    return InputError(f"{what} is nested more than {JSON_MAX_DEPTH} levels deep", file=str(path), row=row,
                      fix=f"flatten it to at most {JSON_MAX_DEPTH} levels of lists and objects")


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(
            f"the file is not UTF-8 (byte 0x{data[e.start]:02x} at byte offset {e.start}, line {line})",
            file=str(path),
            fix="save it as UTF-8 (e.g. in Excel: Save As > CSV UTF-8; or `iconv -f GB18030 -t UTF-8 in.csv > out.csv`)",
        ) from None


def detect_format(path: Path, fmt: str | None = None) -> str:
    if fmt:
        return fmt
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"unknown file type {path.suffix or '(no extension)'!r}", file=str(path),
                         fix="use .csv, .tsv, .jsonl or .json")
    return kind


def _norm_col(c: object) -> str:
    return str(c).strip().lower().lstrip("\ufeff")


def _check_path(path: Path) -> None:
    if not path.exists():
        raise InputError("file not found", file=str(path), fix="check the path")
    if path.is_dir():
        raise InputError("is a folder, not a file", file=str(path), fix="give the path of a .csv, .jsonl or .json file")


def _empty_error(path: Path) -> InputError:
    return InputError("the file is empty", file=str(path),
                      fix="export the data again; it needs a header and at least one row")


def read_table(path: str | Path, fmt: str | None = None) -> tuple[list[str], list[tuple[int, dict]]]:
    """The whole file: ``(header, rows)``; a JSONL file's header is every key of every row, in order of first
    appearance. :func:`open_table` reads the same rows one at a time."""
    with open_table(path, fmt) as table:
        rows = list(table)
        return table.header, rows


class Table:
    """The rows of a file read one at a time (:func:`open_table`): iterate it once for ``(location, row)``.

    ``header``: a CSV file's header row; for JSONL the keys seen so far (the first row's when opened, every
    key once the rows are read); for JSON every key. :meth:`columns` gives every column of the file.
    The errors are those of :func:`read_table`, raised when the row that has them is reached.
    """

    def __init__(self, path: Path, kind: str, header: list[str], rows, complete: bool, close=None):
        self.path, self.kind, self.header, self._rows, self.complete = path, kind, header, rows, complete
        self._close = close

    def __iter__(self):
        return self._rows

    def columns(self) -> list[str]:
        """Every column of the file (a JSONL file is read once more for its keys, row by row, unless every
        row has already been read)."""
        if self.complete:
            return self.header
        header: dict[str, None] = {}
        for _, obj in _jsonl_rows(self.path, _text(self.path), {}):
            header.update(dict.fromkeys(obj))
        return list(header)

    def close(self) -> None:
        if self._close:
            self._close()

    def __enter__(self) -> Table:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_table(path: str | Path, fmt: str | None = None) -> Table:
    """Open a CSV/TSV/JSONL file to read its rows one at a time, in memory that does not grow with the file
    (a ``.json`` array is parsed whole: the standard library's JSON cannot stream). The header, an empty
    file and the first row are checked here; later rows raise their errors when they are reached."""
    path = Path(path)
    _check_path(path)
    kind = detect_format(path, fmt)
    if kind == "json":
        text = _decode(path)
        if not text.strip():
            raise _empty_error(path)
        header, rows = _read_json(path, text)
        return Table(path, kind, header, iter(rows), True)
    f = _text(path)
    try:
        if kind == "jsonl":
            seen: dict[str, None] = {}
            gen = _jsonl_rows(path, f, seen)
            first = next(gen)
            table = Table(path, kind, list(first[1]), None, False, f.close)
            table._rows = _tracking(chain([first], gen), seen, table)
            return table
        header, gen = _csv_rows(path, f, "\t" if kind == "tsv" else ",")
        first = next(gen)
        return Table(path, kind, header, chain([first], gen), True, f.close)
    except BaseException:
        f.close()
        raise


def _tracking(rows, seen: dict, table: Table):
    """JSONL rows, keeping ``table.header`` the keys seen so far (every key once the last row is read)."""
    for item in rows:
        if len(seen) != len(table.header):
            table.header = list(seen)
        yield item
    table.header, table.complete = list(seen), True


def _text(path: Path):
    return open(path, encoding="utf-8-sig", newline="")


def _blank_rest(path: Path, f) -> bool:
    """Whether the rest of text stream ``f`` is white space (read until the first other character)."""
    try:
        while block := f.read(1 << 16):
            if block.strip():
                return False
    except UnicodeDecodeError:
        raise _utf8_error(path) from None
    return True


def _utf8_error(path: Path) -> InputError:
    """The not-UTF-8 error of a file, naming its first bad byte (read line by line, not whole)."""
    offset = 0
    with open(path, "rb") as f:
        for n, line in enumerate(f, start=1):
            skip = 3 if n == 1 and line.startswith(codecs.BOM_UTF8) else 0
            try:
                line[skip:].decode("utf-8")
            except UnicodeDecodeError as e:
                at = skip + e.start
                return InputError(
                    f"the file is not UTF-8 (byte 0x{line[at]:02x} at byte offset {offset + at}, line {n})",
                    file=str(path),
                    fix="save it as UTF-8 (e.g. in Excel: Save As > CSV UTF-8; or "
                        "`iconv -f GB18030 -t UTF-8 in.csv > out.csv`)")
            offset += len(line)
    return InputError("the file is not UTF-8", file=str(path), fix="save it as UTF-8")  # pragma: no cover


def _csv_rows(path: Path, f, delimiter: str):
    """The header, and a generator of the rows ``(line, dict)`` of a CSV text stream."""
    reader = csv.reader(f, delimiter=delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        raise _empty_error(path) from None
    except csv.Error as e:
        raise InputError(f"malformed CSV header: {e}", file=str(path), row=1) from None
    except UnicodeDecodeError:
        raise _utf8_error(path) from None
    header = [_norm_col(c) for c in header]
    if not any(header):
        if _blank_rest(path, f):
            raise _empty_error(path)
        raise InputError("the header row is blank", file=str(path), row=1, fix="the first line must name the columns")
    seen = set()
    for c in header:
        if c in seen:
            raise InputError(f"column {c!r} appears twice in the header", file=str(path), row=1,
                             fix="keep one column of each name")
        seen.add(c)
    return header, _csv_body(path, reader, header)


def _csv_body(path: Path, reader, header: list[str]):
    n = 0
    start = reader.line_num + 1
    width = len(header)
    try:
        for values in reader:
            line = start
            start = reader.line_num + 1
            if not values or all(not v.strip() for v in values):
                continue
            if len(values) > width:
                raise InputError(f"{len(values)} values but the header has {width} columns",
                                 file=str(path), row=line,
                                 fix="quote values that contain the delimiter (\"a, b\") or remove the extra values")
            if len(values) < width:
                values = values + [""] * (width - len(values))
            n += 1
            yield line, dict(zip(header, values))
    except csv.Error as e:
        raise InputError(f"malformed CSV: {e}", file=str(path), row=reader.line_num,
                         fix="check the quotes on this line") from None
    except UnicodeDecodeError:
        raise _utf8_error(path) from None
    if not n:
        raise InputError("the file has a header but no rows", file=str(path), fix="add data rows below the header")


def _jsonl_rows(path: Path, f, seen: dict):
    """The rows ``(line, dict)`` of a JSONL text stream, keys normalised; ``seen`` collects the keys."""
    n = 0
    try:
        with f:
            for i, line in enumerate(f, start=1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                if json_depth_bound(line, JSON_MAX_DEPTH) > JSON_MAX_DEPTH:
                    raise _too_deep_error(path, i, "the row")
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InputError(f"invalid JSON: {e.msg} (column {e.colno})", file=str(path), row=i,
                                     fix="each line must be one JSON object") from None
                except ValueError:  # Python refuses a JSON integer of thousands of digits
                    raise _huge_number_error(path, i) from None
                if not isinstance(obj, dict):
                    raise InputError(f"expected a JSON object, found {type(obj).__name__}", file=str(path), row=i,
                                     fix="each line must be one JSON object like {\"disease\": ..., ...}")
                obj = {_norm_col(k): v for k, v in obj.items()}
                if not obj.keys() <= seen.keys():
                    seen.update(dict.fromkeys(obj))
                n += 1
                yield i, obj
    except UnicodeDecodeError:
        raise _utf8_error(path) from None
    if not n:  # every line is blank
        raise _empty_error(path)


def _huge_number_error(path: Path, row: int | None) -> InputError:
    return InputError("a number in it has thousands of digits, more than any value it can hold", file=str(path),
                      row=row, fix="check the file: write the value as text (in quotes) if it is meant as text")


def _read_json(path: Path, text: str):
    depth = json_depth_bound(text, JSON_MAX_DEPTH)
    if depth > JSON_MAX_DEPTH + JSON_WRAPPER_LEVELS:  # before the parser recurses into it
        raise _too_deep_error(path, None, "the JSON")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg} at line {e.lineno}, column {e.colno}", file=str(path),
                         fix="fix the JSON syntax (a JSON array of objects is expected)") from None
    except ValueError:
        raise _huge_number_error(path, None) from None
    wrapper = 1
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            data, wrapper = lists[0], 2
    if depth > JSON_MAX_DEPTH + wrapper:  # exact here: a row is deeper than the limit
        raise _too_deep_error(path, None, "a row of the JSON")
    if not isinstance(data, list):
        raise InputError("expected a JSON array of objects", file=str(path),
                         fix='write [{"disease": ..., ...}, ...] (or JSONL, one object per line)')
    rows = []
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise InputError(f"item {i} is a {type(obj).__name__}, not an object", file=str(path),
                             fix="every item of the array must be a JSON object")
        rows.append((i, obj))
    if not rows:
        raise InputError("the JSON array is empty", file=str(path), fix="add at least one object")
    return _normalise_objects(rows)


def _normalise_objects(rows: list[tuple[int, dict]]) -> tuple[list[str], list[tuple[int, dict]]]:
    """Normalise keys like CSV headers; the header is every key seen, in order of first appearance."""
    header: dict[str, None] = {}
    out = []
    for i, obj in rows:
        obj = {_norm_col(k): v for k, v in obj.items()}
        header.update(dict.fromkeys(obj))
        out.append((i, obj))
    return list(header), out


def require_columns(path, header: list[str], required: list[str], optional: list[str] = ()) -> None:
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(
            f"column{'s' if len(missing) > 1 else ''} {', '.join(repr(c) for c in missing)} "
            f"{'are' if len(missing) > 1 else 'is'} missing (found: {', '.join(header) or 'nothing'})",
            file=str(path),
            fix=f"the file needs the columns {', '.join(required)}"
                + (f" (optional: {', '.join(optional)})" if optional else ""),
        )


def cell(row: dict, key: str) -> str:
    """A value as stripped text; None, NaN and missing become ''."""
    v = row.get(key)
    if v is None:
        return ""
    if isinstance(v, float) and v != v:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v).strip()
