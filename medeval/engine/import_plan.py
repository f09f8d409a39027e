"""Matching the rows of a responses file to the knowledge base, in memory that does not grow with the file.

:class:`KbIndex` finds a row's knowledge-base entry by disease and aspect (any of the aspect's names);
:class:`PairSet` remembers which (model, entry) pairs the file has given, one bit per entry and model,
so a duplicate is found without keeping the rows; :func:`duplicate_error` then reads the file again up to
that row to name the earlier one (an error, so the second reading costs nothing on a good file).
"""

from __future__ import annotations

from medeval.core.errors import InputError, MedevalError
from medeval.core.tables import open_table
from medeval.engine.aspects import BY_NAME, Aspect, resolve_aspect
from medeval.engine.import_read import custom_aspect, key, response_row

FIX_DUPLICATE = "keep one response per model, disease and aspect"


class KbIndex:
    """The knowledge base by disease, then by aspect name in lower case: ``(kb id, aspect)``. Another name of a
    built-in aspect (药物 for Medications) is found through :func:`resolve_aspect`, not stored per entry."""

    def __init__(self, entries):
        """``entries``: ``(id, disease, aspect, aspect type)`` of every entry, stored and imported."""
        self.index: dict[str, dict[str, tuple[int, Aspect]]] = {}
        self.max_id = 0
        names: dict[str, str] = {}  # one lower-case key string per aspect name, shared by its entries
        for i, d, a, t in entries:
            base = BY_NAME.get(a)
            asp = base if base and base.type == t else (
                Aspect(a, base.name_zh, t, base.definition, base.definition_zh, base.aliases) if base
                else custom_aspect(a, t))
            k = names.get(a)
            if k is None:
                k = names[a] = key(a).lower()
            self.index.setdefault(d, {})[k] = (i, asp)
            self.max_id = max(self.max_id, i)

    def find(self, path, line: int, model: str, disease: str, aspect_name: str) -> tuple[int, Aspect]:
        """The entry a response answers, or an InputError naming the row."""
        entries = self.index.get(disease, {})
        hit = entries.get(key(aspect_name).lower())
        if hit is None:
            try:
                canonical = resolve_aspect(aspect_name).name
            except MedevalError as e:
                raise InputError(str(e), file=str(path), row=line) from None
            hit = entries.get(key(canonical).lower())
        if hit is None:
            where = ("this disease is not in the knowledge base" if disease not in self.index
                     else "the knowledge base has no reference for this aspect of the disease")
            raise InputError(f"response of {model} for {disease} / {aspect_name}: {where}",
                             file=str(path), row=line,
                             fix="import the knowledge-base entry first (--kb), or check the spelling of "
                                 "the disease and aspect")
        return hit


class PairSet:
    """A set of (model id, kb id): one bit per knowledge-base id for each model seen."""

    def __init__(self, max_kb_id: int):
        self.size = (max_kb_id >> 3) + 1
        self.bits: dict[int, bytearray] = {}

    def add(self, model_id: int, kb_id: int) -> bool:
        """Add the pair; True when it was already there."""
        b = self.bits.get(model_id)
        if b is None:
            b = self.bits[model_id] = bytearray(self.size)
        i, m = kb_id >> 3, 1 << (kb_id & 7)
        if b[i] & m:
            return True
        b[i] |= m
        return False


def duplicate_error(path, line: int, model: str, disease: str, aspect_name: str, aspect: Aspect,
                    pair: tuple[int, int], model_ids: dict[str, int], kb: KbIndex) -> InputError:
    """The error for row ``line``, whose (model, entry) ``pair`` an earlier row also gives: the file is read
    again up to ``line`` to find that row."""
    text_key = (model, disease, key(aspect_name).lower())
    with open_table(path) as table:
        for n, row in table:
            if n >= line:
                break
            m, d, a, _ = response_row(path, n, row)
            if (model_ids.get(m), kb.find(path, n, m, d, a)[0]) != pair:
                continue
            if (m, d, key(a).lower()) == text_key:
                return InputError(f"duplicate response of {model} for {disease} / {aspect_name} (also on row {n})",
                                  file=str(path), row=line, fix=FIX_DUPLICATE)
            return InputError(f"duplicate response of {model} for {disease} / {aspect.name} "
                              f"(also on row {n}, under another name of the aspect)",
                              file=str(path), row=line, fix=FIX_DUPLICATE)
    return InputError(f"duplicate response of {model} for {disease} / {aspect.name}", file=str(path), row=line,
                      fix=FIX_DUPLICATE)  # pragma: no cover - an earlier row gave the pair
