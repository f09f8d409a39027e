"""Import a knowledge base, models and model responses -- all or nothing.

Every file is read and validated completely before anything is written; the
writes then happen in one ``BEGIN IMMEDIATE`` transaction. A bad file raises
:class:`InputError` naming the file, the row and the fix, and the database is
left exactly as it was. Importing the same files again changes nothing.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import sqlite_utils

from medeval.core.errors import InputError, MedevalError
from medeval.core.tables import cell, read_table, require_columns
from medeval.engine.aspects import ASPECT_TYPES, BY_NAME, Aspect, resolve_aspect
from medeval.engine.postprocess import process
from medeval.store.db import transaction

KIND_ALIASES = {"general": "general", "general-purpose": "general", "通用": "general", "": "general",
                "medical": "medical", "医疗": "medical", "医学": "medical", "medicine": "medical"}


@dataclass
class ImportSummary:
    kb_added: int = 0
    kb_unchanged: int = 0
    models_added: int = 0
    models_updated: int = 0
    models_unchanged: int = 0
    models_implicit: list[str] = field(default_factory=list)
    responses_added: int = 0
    responses_unchanged: int = 0

    def lines(self) -> list[str]:
        out = [f"knowledge base: {self.kb_added} added, {self.kb_unchanged} unchanged",
               f"models: {self.models_added} added, {self.models_updated} updated, {self.models_unchanged} unchanged",
               f"responses: {self.responses_added} added, {self.responses_unchanged} unchanged"]
        if self.models_implicit:
            out.append("models created from the responses file (kind=general, no backbone; import a models "
                       "file to set them): " + ", ".join(self.models_implicit))
        return out

    @property
    def changed(self) -> bool:
        return bool(self.kb_added or self.models_added or self.models_updated or self.responses_added)


def _key(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _custom_aspect(name: str, type_: str) -> Aspect:
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
            return _custom_aspect(name, t)
    try:
        return resolve_aspect(name)
    except MedevalError as e:
        raise InputError(str(e), file=str(path), row=line) from None


def _read_kb(path) -> list[tuple[int, str, str, Aspect, str]]:
    header, rows = read_table(path)
    require_columns(path, header, ["disease", "aspect", "reference"], ["aspect_type", "disease_en"])
    out, seen = [], {}
    for line, row in rows:
        disease, aspect_name, ref = _key(cell(row, "disease")), cell(row, "aspect"), cell(row, "reference")
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


def _read_models(path) -> list[tuple[int, str, str | None, str]]:
    header, rows = read_table(path)
    require_columns(path, header, ["model"], ["backbone", "kind"])
    out, seen = [], {}
    for line, row in rows:
        name = _key(cell(row, "model"))
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
        backbone = _key(cell(row, "backbone")) or None
        if backbone == name:
            raise InputError(f"model {name!r} names itself as its backbone", file=str(path), row=line,
                             fix="leave backbone empty for a base model")
        out.append((line, name, backbone, KIND_ALIASES[kind_raw]))
    return out


def _read_responses(path) -> list[tuple[int, str, str, str, str]]:
    header, rows = read_table(path)
    require_columns(path, header, ["model", "disease", "aspect", "response"])
    out, seen = [], {}
    for line, row in rows:
        model, disease, aspect = _key(cell(row, "model")), _key(cell(row, "disease")), cell(row, "aspect")
        if not model:
            raise InputError("the model is empty", file=str(path), row=line, fix="name the model that answered")
        if not disease or not aspect:
            raise InputError("the disease or aspect is empty", file=str(path), row=line)
        raw = row.get("response")
        raw = raw if isinstance(raw, str) else cell(row, "response")
        k = (model, disease, _key(aspect).lower())
        if k in seen:
            raise InputError(f"duplicate response of {model} for {disease} / {aspect} (also on row {seen[k]})",
                             file=str(path), row=line, fix="keep one response per model, disease and aspect")
        seen[k] = line
        out.append((line, model, disease, aspect, raw))
    return out


def import_files(db: sqlite_utils.Database, *, kb: str | Path | None = None, responses: str | Path | None = None,
                 models: str | Path | None = None) -> ImportSummary:
    """Validate the given files, then write them in one transaction. Raises InputError and writes nothing on bad input."""
    if not (kb or responses or models):
        raise MedevalError("nothing to import: give --kb, --responses and/or --models")
    kb_rows = _read_kb(kb) if kb else []
    model_rows = _read_models(models) if models else []
    resp_rows = _read_responses(responses) if responses else []
    summary = ImportSummary()
    conn = db.conn

    with transaction(db):
        # -- knowledge base
        existing_kb = {(d, a): (i, r, t) for i, d, a, r, t in
                       conn.execute("SELECT id, disease, aspect, reference, aspect_type FROM kb_entries")}
        new_kb = []
        for line, disease, disease_en, aspect, ref in kb_rows:
            old = existing_kb.get((disease, aspect.name))
            if old:
                if old[1] != ref or old[2] != aspect.type:
                    raise InputError(
                        f"{disease} / {aspect.name} is already in the database with a different "
                        f"{'reference' if old[1] != ref else 'aspect type'}",
                        file=str(kb), row=line,
                        fix="references are not overwritten (scores depend on them): correct the row, or import "
                            "the corrected knowledge base into a new database (--db)")
                summary.kb_unchanged += 1
                continue
            p = process(ref, disease, aspect, is_reference=True)
            new_kb.append((disease, disease_en, aspect.name, aspect.type, ref, p.text))
        conn.executemany("INSERT INTO kb_entries (disease, disease_en, aspect, aspect_type, reference, processed) "
                         "VALUES (?, ?, ?, ?, ?, ?)", new_kb)
        summary.kb_added = len(new_kb)

        # -- models
        existing_models = {n: (i, b, k) for i, n, b, k in conn.execute("SELECT id, name, backbone, kind FROM models")}
        for line, name, backbone, kind in model_rows:
            old = existing_models.get(name)
            if old is None:
                conn.execute("INSERT INTO models (name, backbone, kind) VALUES (?, ?, ?)", (name, backbone, kind))
                summary.models_added += 1
            elif (old[1], old[2]) != (backbone, kind):
                conn.execute("UPDATE models SET backbone = ?, kind = ? WHERE name = ?", (backbone, kind, name))
                summary.models_updated += 1
            else:
                summary.models_unchanged += 1

        # -- responses
        if resp_rows:
            kb_index: dict[tuple[str, str], tuple[int, Aspect]] = {}
            for i, d, a, t in conn.execute("SELECT id, disease, aspect, aspect_type FROM kb_entries"):
                base = BY_NAME.get(a)
                asp = base if base and base.type == t else (
                    Aspect(a, base.name_zh, t, base.definition, base.definition_zh, base.aliases) if base
                    else _custom_aspect(a, t))
                kb_index[(d, _key(a).lower())] = (i, asp)
                if base:
                    for alias in (base.name_zh, *base.aliases):
                        kb_index.setdefault((d, _key(alias).lower()), (i, asp))
            diseases = {d for d, _ in kb_index}
            model_ids = {n: i for i, n in conn.execute("SELECT id, name FROM models")}
            for line, model, disease, aspect, raw in resp_rows:
                if model not in model_ids:
                    cur = conn.execute("INSERT INTO models (name, backbone, kind) VALUES (?, NULL, 'general')", (model,))
                    model_ids[model] = cur.lastrowid
                    summary.models_implicit.append(model)
                    summary.models_added += 1
            mids = list(set(model_ids[m] for _, m, *_ in resp_rows))
            existing_resp: dict[tuple[int, int], str] = {}
            for i in range(0, len(mids), 500):
                chunk = mids[i:i + 500]
                for mid, kid, raw in conn.execute(
                        f"SELECT model_id, kb_id, raw FROM responses WHERE model_id IN ({','.join('?' * len(chunk))})", chunk):
                    existing_resp[(mid, kid)] = raw
            new_resp, in_file = [], {}
            for line, model, disease, aspect_name, raw in resp_rows:
                hit = kb_index.get((disease, _key(aspect_name).lower()))
                if hit is None:
                    try:
                        canonical = resolve_aspect(aspect_name).name
                    except MedevalError as e:
                        raise InputError(str(e), file=str(responses), row=line) from None
                    hit = kb_index.get((disease, _key(canonical).lower()))
                if hit is None:
                    where = ("this disease is not in the knowledge base" if disease not in diseases
                             else "the knowledge base has no reference for this aspect of the disease")
                    raise InputError(f"response of {model} for {disease} / {aspect_name}: {where}",
                                     file=str(responses), row=line,
                                     fix="import the knowledge-base entry first (--kb), or check the spelling of "
                                         "the disease and aspect")
                kb_id, aspect = hit
                mid = model_ids[model]
                if (mid, kb_id) in in_file:  # the same aspect spelled two ways (药物 / Medications)
                    raise InputError(f"duplicate response of {model} for {disease} / {aspect.name} "
                                     f"(also on row {in_file[(mid, kb_id)]}, under another name of the aspect)",
                                     file=str(responses), row=line,
                                     fix="keep one response per model, disease and aspect")
                in_file[(mid, kb_id)] = line
                if (mid, kb_id) in existing_resp:
                    if existing_resp[(mid, kb_id)] != raw:
                        raise InputError(
                            f"{model} already has a different response for {disease} / {aspect.name} in the database",
                            file=str(responses), row=line,
                            fix="responses are not overwritten (scores depend on them): import the new run as a new "
                                "model name (e.g. 'model-v2') or into a new database")
                    summary.responses_unchanged += 1
                    continue
                p = process(raw, disease, aspect)
                new_resp.append((mid, kb_id, raw, p.text, p.note))
            conn.executemany("INSERT INTO responses (model_id, kb_id, raw, processed, note) VALUES (?, ?, ?, ?, ?)",
                             new_resp)
            summary.responses_added = len(new_resp)
    return summary
