"""Import a knowledge base, models and model responses -- all or nothing, without blocking other writers.

Every file is read, validated and post-processed before anything is written, outside any write
transaction. A bad file raises :class:`InputError` naming the file, the row and the fix, and the
database is left exactly as it was. Importing the same files again changes nothing.

The rows are then written in short transactions (``CHUNK_ROWS`` rows each), so an annotator's
grade never waits long for the write lock, under an import batch (``import_batches``, migration
``m009``) that stays ``staging`` -- invisible: nothing scores its responses (:func:`visible_responses`),
so no score, grade, sample or report reaches them -- until one last short transaction creates the
new models and marks the batch ``done``: the whole import becomes visible at once. A failed write
(a full disk) removes the batch's rows and raises a one-line :class:`MedevalError`; a killed import
leaves only invisible staging rows, which the next import removes. One import at a time per database.
"""

from __future__ import annotations

import json
import sqlite3
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

import sqlite_utils

from medeval.core.errors import InputError, MedevalError
from medeval.core.tables import cell, read_table, require_columns
from medeval.engine.aspects import ASPECT_TYPES, BY_NAME, Aspect, resolve_aspect
from medeval.engine.postprocess import process
from medeval.store.db import job_lock, transaction, write_failure

CHUNK_ROWS = 2000
"""Rows per write transaction (a few ms each; a grade waits at most about that long)."""
CHUNK_CHARS = 500_000
"""Characters of text per write transaction, so that long answers make smaller chunks."""
BUSY = "another import into this database is running: wait for it to finish, then run this import again"

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


def _plain(path, line, row: dict, columns) -> None:
    """Refuse a NUL byte in any of ``columns`` of a row (text must be plain text)."""
    for c in columns:
        v = row.get(c)
        if isinstance(v, str) and "\x00" in v:
            raise InputError(f"the {c} contains a NUL byte (character {v.index(chr(0)) + 1})", file=str(path),
                             row=line, fix="remove it: the file must be plain UTF-8 text (a NUL byte usually means "
                                           "a binary or UTF-16 file)")


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
        _plain(path, line, row, ("disease", "aspect", "reference", "aspect_type", "disease_en"))
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
        _plain(path, line, row, ("model", "backbone", "kind"))
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
        _plain(path, line, row, ("model", "disease", "aspect", "response"))
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


def visible_responses(alias: str = "r") -> str:
    """SQL: response ``alias`` is not part of an import still being written (scoring skips those, so no
    score, grade, sample, campaign item or report row reaches them)."""
    return f"({alias}.batch IS NULL OR {alias}.batch IN (SELECT id FROM import_batches WHERE state = 'done'))"


@dataclass
class _Plan:
    """What an import writes, with the ids it will have (one import at a time, so the ids are free)."""
    kb: list[tuple] = field(default_factory=list)  # (id, disease, disease_en, aspect, type, reference, processed)
    responses: list[tuple] = field(default_factory=list)  # (id, model_id, kb_id, raw, processed, note)
    models_new: list[tuple] = field(default_factory=list)  # (id, name, backbone, kind)
    models_changed: list[tuple] = field(default_factory=list)  # (backbone, kind, name)

    @property
    def empty(self) -> bool:
        return not (self.kb or self.responses or self.models_new or self.models_changed)


def import_files(db: sqlite_utils.Database, *, kb: str | Path | None = None, responses: str | Path | None = None,
                 models: str | Path | None = None, chunk_rows: int = CHUNK_ROWS) -> ImportSummary:
    """Validate the given files, then write them all or nothing (module docstring). InputError: bad input,
    nothing written; MedevalError: the write failed or another import is running, nothing imported."""
    if not (kb or responses or models):
        raise MedevalError("nothing to import: give --kb, --responses and/or --models")
    kb_rows = _read_kb(kb) if kb else []
    model_rows = _read_models(models) if models else []
    resp_rows = _read_responses(responses) if responses else []
    with job_lock(db, "import", busy=BUSY):
        _discard_abandoned(db)
        summary, plan = _plan(db, kb, kb_rows, model_rows, responses, resp_rows)
        if not plan.empty:
            _write(db, plan, summary, chunk_rows, {k: str(v) for k, v in
                                                   (("kb", kb), ("models", models), ("responses", responses)) if v})
    return summary


def _plan(db, kb, kb_rows, model_rows, responses, resp_rows) -> tuple[ImportSummary, _Plan]:
    """Check the rows against the database and post-process them; reads only (one snapshot)."""
    summary, plan = ImportSummary(), _Plan()
    conn = db.conn
    conn.execute("BEGIN")  # a read transaction: one consistent snapshot, no write lock
    try:
        existing_kb = {(d, a): (i, r, t) for i, d, a, r, t in
                       conn.execute("SELECT id, disease, aspect, reference, aspect_type FROM kb_entries")}
        existing_models = {n: (i, b, k) for i, n, b, k in conn.execute("SELECT id, name, backbone, kind FROM models")}
        next_kb, next_model, next_resp = (conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {t}").fetchone()[0]
                                          for t in ("kb_entries", "models", "responses"))
        names = {m for _, m, *_ in resp_rows}
        mids = [existing_models[n][0] for n in names if n in existing_models]
        existing_resp: dict[tuple[int, int], str] = {}
        for i in range(0, len(mids), 500):
            chunk = mids[i:i + 500]
            for mid, kid, raw in conn.execute(
                    f"SELECT model_id, kb_id, raw FROM responses WHERE model_id IN ({','.join('?' * len(chunk))})", chunk):
                existing_resp[(mid, kid)] = raw
    finally:
        conn.execute("COMMIT")

    # -- knowledge base
    all_kb = [(i, d, a, t) for (d, a), (i, _, t) in existing_kb.items()]
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
        plan.kb.append((next_kb, disease, disease_en, aspect.name, aspect.type, ref, p.text))
        all_kb.append((next_kb, disease, aspect.name, aspect.type))
        next_kb += 1
    summary.kb_added = len(plan.kb)

    # -- models
    model_ids = {n: v[0] for n, v in existing_models.items()}
    for line, name, backbone, kind in model_rows:
        old = existing_models.get(name)
        if old is None:
            plan.models_new.append((next_model, name, backbone, kind))
            model_ids[name] = next_model
            next_model += 1
            summary.models_added += 1
        elif (old[1], old[2]) != (backbone, kind):
            plan.models_changed.append((backbone, kind, name))
            summary.models_updated += 1
        else:
            summary.models_unchanged += 1

    # -- responses
    if resp_rows:
        kb_index: dict[tuple[str, str], tuple[int, Aspect]] = {}
        for i, d, a, t in all_kb:
            base = BY_NAME.get(a)
            asp = base if base and base.type == t else (
                Aspect(a, base.name_zh, t, base.definition, base.definition_zh, base.aliases) if base
                else _custom_aspect(a, t))
            kb_index[(d, _key(a).lower())] = (i, asp)
            if base:
                for alias in (base.name_zh, *base.aliases):
                    kb_index.setdefault((d, _key(alias).lower()), (i, asp))
        diseases = {d for d, _ in kb_index}
        for line, model, disease, aspect, raw in resp_rows:
            if model not in model_ids:
                plan.models_new.append((next_model, model, None, "general"))
                model_ids[model] = next_model
                next_model += 1
                summary.models_implicit.append(model)
                summary.models_added += 1
        in_file: dict[tuple[int, int], int] = {}
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
            plan.responses.append((next_resp, mid, kb_id, raw, p.text, p.note))
            next_resp += 1
        summary.responses_added = len(plan.responses)
    return summary, plan


def _chunks(rows: list[tuple], size: int, text_columns: tuple[int, ...]):
    """``rows`` in parts of at most ``size`` rows and about CHUNK_CHARS characters of text."""
    part, chars = [], 0
    for r in rows:
        part.append(r)
        chars += sum(len(r[i] or "") for i in text_columns)
        if len(part) >= size or chars >= CHUNK_CHARS:
            yield part
            part, chars = [], 0
    if part:
        yield part


def _write(db, plan: _Plan, summary: ImportSummary, chunk_rows: int, files: dict) -> None:
    """Stage the rows in short transactions under a new batch, then make the batch visible in one short one."""
    conn = db.conn
    fk = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    first_kb = plan.kb[0][0] if plan.kb else 0
    first_resp = plan.responses[0][0] if plan.responses else 0
    batch = None
    try:
        with transaction(db):
            batch = conn.execute("INSERT INTO import_batches (state, started_at, first_kb_id, first_response_id) "
                                 "VALUES ('staging', ?, ?, ?)", (_now(), first_kb, first_resp)).lastrowid
        # A staged response may name a model that only the last transaction creates (a model is
        # visible on the leaderboard as soon as it exists); the ids are reserved by the import lock.
        conn.execute("PRAGMA foreign_keys=OFF")
        for part in _chunks(plan.kb, chunk_rows, (5, 6)):
            with transaction(db):
                conn.executemany("INSERT INTO kb_entries (id, disease, disease_en, aspect, aspect_type, reference, "
                                 f"processed, batch) VALUES (?, ?, ?, ?, ?, ?, ?, {batch})", part)
        for part in _chunks(plan.responses, chunk_rows, (3, 4)):
            with transaction(db):
                conn.executemany("INSERT INTO responses (id, model_id, kb_id, raw, processed, note, batch) "
                                 f"VALUES (?, ?, ?, ?, ?, ?, {batch})", part)
        conn.execute(f"PRAGMA foreign_keys={fk}")
        with transaction(db):  # the flip: models and the whole batch become visible together
            conn.executemany("INSERT INTO models (id, name, backbone, kind) VALUES (?, ?, ?, ?)", plan.models_new)
            conn.executemany("UPDATE models SET backbone = ?, kind = ? WHERE name = ?", plan.models_changed)
            done = conn.execute(
                "UPDATE import_batches SET state = 'done', finished_at = ?, summary = ? WHERE id = ? AND state = 'staging'",
                (_now(), json.dumps({"files": files, **asdict(summary)}, ensure_ascii=False), batch))
            if done.rowcount != 1:
                raise MedevalError("this import's staged rows were removed by another process: nothing was imported; "
                                   "run the import again")
    except BaseException as e:
        try:
            if batch is not None:
                _discard(db, batch, first_kb, first_resp)
        except sqlite3.Error:
            pass  # the rows stay invisible; the next import removes them
        if isinstance(e, sqlite3.Error):
            raise MedevalError(f"{write_failure(e)} and run the import again; nothing was imported") from e
        raise
    finally:
        conn.execute(f"PRAGMA foreign_keys={fk}")


def _discard(db, batch: int, first_kb: int, first_resp: int, chunk: int = 5000) -> None:
    """Delete a staging batch's rows in short transactions, then the batch (invisible rows: nothing refers to them)."""
    conn = db.conn
    fk = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    conn.execute("PRAGMA foreign_keys=OFF")  # nothing refers to staged rows; the checks would scan grades per row
    try:
        for table, first in (("responses", first_resp), ("kb_entries", first_kb)):
            while True:
                with transaction(db):
                    n = conn.execute(f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE id >= ? AND "
                                     "batch = ? ORDER BY id LIMIT ?)", (first, batch, chunk)).rowcount
                if n < chunk:
                    break
        with transaction(db):
            conn.execute("DELETE FROM import_batches WHERE id = ? AND state = 'staging'", (batch,))
    finally:
        conn.execute(f"PRAGMA foreign_keys={fk}")


def _discard_abandoned(db) -> None:
    """Remove what killed imports left (called with the import lock held, so no staging batch is alive)."""
    for batch, first_kb, first_resp in db.conn.execute(
            "SELECT id, first_kb_id, first_response_id FROM import_batches WHERE state = 'staging'").fetchall():
        try:
            _discard(db, batch, first_kb, first_resp)
        except sqlite3.Error as e:
            raise MedevalError(f"cannot remove the rows of an interrupted import: {write_failure(e)} and run the "
                               "import again; nothing was imported") from e


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())