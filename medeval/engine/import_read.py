"""Reading and checking the files of an import (:mod:`medeval.engine.importer`): row by row, no database.

The knowledge base and the models files are small and read whole; the responses file is read one row at
a time (:func:`open_responses`, :func:`response_row`) so that an import's memory does not grow with it.
"""

from __future__ import annotations

import unicodedata

from medeval.core.errors import InputError, MedevalError
from medeval.core.tables import Table, cell, open_table, read_table, require_columns
from medeval.engine.aspects import ASPECT_TYPES, Aspect, resolve_aspect

KIND_ALIASES = {"general": "general", "general-purpose": "general", "通用": "general", "": "general",
                "medical": "medical", "医疗": "medical", "医学": "medical", "medicine": "medical"}
RESPONSE_COLUMNS = ["model", "disease", "aspect", "response"]


def key(text: str) -> str:
    """A disease, model or backbone name as stored and compared: NFKC, white space collapsed. Names only -- as
    ``annotation/cases/formats.py`` compares them; the texts that are scored (reference, response) are read as
    written and normalised once, by post-processing (``medeval.engine.tokenize.normalize``)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def plain(path, line, row: dict, columns) -> None:
    """Refuse a NUL byte in any of ``columns`` of a row (text must be plain text)."""
    for c in columns:
        v = row.get(c)
        if isinstance(v, str) and "\x00" in v:
            raise InputError(f"the {c} contains a NUL byte (character {v.index(chr(0)) + 1})", file=str(path),
                             row=line, fix="remove it: the file must be plain UTF-8 text (a NUL byte usually means "
                                           "a binary or UTF-16 file)")


def custom_aspect(name: str, type_: str) -> Aspect:
    return Aspect(name, name, type_, "", "")


def _aspect_for(path, line, name: str, explicit_type: str) -> Aspect:
    if explicit_type:
        t = explicit_type.strip().lower()
        aliases = {"enumerate": "enumerated", "枚举": "enumerated", "declarative": "declarative",
                   "描述": "declarative", "numeric": "numeric", "数值": "numeric"}
        t = aliases.get(t, t)
        if t not in ASPECT_TYPES:
            raise InputError(f"aspect_type {explicit_type!r} is not one of {', '.join(ASPECT_TYPES)}",
                             file=str(path), row=line, fix="use enumerated, declarative or numeric")
        try:
            a = resolve_aspect(name)
            return a if a.type == t else Aspect(a.name, a.name_zh, t, a.definition, a.definition_zh, a.aliases)
        except MedevalError:
            return custom_aspect(name, t)
    try:
        return resolve_aspect(name)
    except MedevalError as e:
        raise InputError(str(e), file=str(path), row=line) from None


def read_kb(path) -> list[tuple[int, str, str, Aspect, str]]:
    header, rows = read_table(path)
    require_columns(path, header, ["disease", "aspect", "reference"], ["aspect_type", "disease_en"])
    out, seen = [], {}
    for line, row in rows:
        plain(path, line, row, ("disease", "aspect", "reference", "aspect_type", "disease_en"))
        disease, aspect_name, ref = key(cell(row, "disease")), cell(row, "aspect"), cell(row, "reference")
        if not disease:
            raise InputError("the disease is empty", file=str(path), row=line, fix="fill in the disease name")
        if not aspect_name:
            raise InputError("the aspect is empty", file=str(path), row=line, fix="fill in one of the 18 aspects")
        if not ref:
            raise InputError(f"the reference for {disease} / {aspect_name} is empty", file=str(path), row=line,
                             fix='write the reference; use "无" when the knowledge base says there is none')
        aspect = _aspect_for(path, line, aspect_name, cell(row, "aspect_type"))
        k = (disease, aspect.name)
        if k in seen:
            raise InputError(f"duplicate row: {disease} / {aspect.name} is also on row {seen[k]}",
                             file=str(path), row=line, fix="keep one reference per disease and aspect")
        seen[k] = line
        out.append((line, disease, cell(row, "disease_en") or None, aspect, ref))
    return out


def read_models(path) -> list[tuple[int, str, str | None, str]]:
    header, rows = read_table(path)
    require_columns(path, header, ["model"], ["backbone", "kind"])
    out, seen = [], {}
    for line, row in rows:
        plain(path, line, row, ("model", "backbone", "kind"))
        name = key(cell(row, "model"))
        if not name:
            raise InputError("the model name is empty", file=str(path), row=line)
        kind_raw = cell(row, "kind").lower()
        if kind_raw not in KIND_ALIASES:
            raise InputError(f"kind {cell(row, 'kind')!r} is not 'general' or 'medical'", file=str(path), row=line,
                             fix="write general (a general-domain model) or medical (further trained on medical data)")
        if name in seen:
            raise InputError(f"duplicate model {name!r} (also on row {seen[name]})", file=str(path), row=line,
                             fix="list each model once")
        seen[name] = line
        backbone = key(cell(row, "backbone")) or None
        if backbone == name:
            raise InputError(f"model {name!r} names itself as its backbone", file=str(path), row=line,
                             fix="leave backbone empty for a base model")
        out.append((line, name, backbone, KIND_ALIASES[kind_raw]))
    return out


def open_responses(path) -> Table:
    """The responses file opened for reading row by row, its columns checked (no row beyond the first read)."""
    table = open_table(path)
    try:
        if not all(c in table.header for c in RESPONSE_COLUMNS):
            require_columns(path, table.columns(), RESPONSE_COLUMNS)
    except BaseException:
        table.close()
        raise
    return table


def response_row(path, line: int, row: dict) -> tuple[str, str, str, str]:
    """``(model, disease, aspect, raw response)`` of a row of the responses file, or an InputError."""
    plain(path, line, row, RESPONSE_COLUMNS)
    model, disease, aspect = key(cell(row, "model")), key(cell(row, "disease")), cell(row, "aspect")
    if not model:
        raise InputError("the model is empty", file=str(path), row=line, fix="name the model that answered")
    if not disease or not aspect:
        raise InputError("the disease or aspect is empty", file=str(path), row=line)
    raw = row.get("response")
    return model, disease, aspect, raw if isinstance(raw, str) else cell(row, "response")
