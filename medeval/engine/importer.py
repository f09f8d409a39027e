"""Import a knowledge base, models and model responses -- all or nothing, without blocking other writers.

The knowledge base and models files are read, validated and post-processed before anything is written,
outside any write transaction. The responses file is then read as a stream, ``chunk_rows`` rows at a time
(:func:`medeval.core.tables.open_table`): each chunk is validated against the knowledge base and the stored
responses (one indexed query per chunk), post-processed and written, so memory does not grow with the
file -- a chunk of rows, and one bit per (model, knowledge-base entry) to find duplicates
(:mod:`medeval.engine.import_plan`). A bad row raises :class:`InputError` naming the file, the row and the
fix; nothing of the import reaches the database. Importing the same files again changes nothing (and writes
nothing).

The rows are written aside (:mod:`medeval.store.aside`: a side file next to the database) a chunk of
``CHUNK_ROWS`` rows a transaction, holding no lock of the database, so annotators grade meanwhile; one last
transaction copies them in with the new models under an import batch (``import_batches``, ``m009``) marked
``done``: the whole import becomes visible at once. A failed import (a bad row late in the file, a full disk, any
error) reaches nothing of the database: the side file is removed and the write-ahead log emptied, so the disk is
as it was and sign-ins keep working, and a one-line error says why. The last transaction holds the write lock
while SQLite copies the rows (a few microseconds a row), so a grade waits that long, once. A killed import leaves
only its side file, which the next import removes (as it removes the ``staging`` batch that a killed import of an
older version left in the database: :func:`_discard_abandoned`). One import at a time per database.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path

import sqlite_utils

from medeval.core.errors import InputError, MedevalError
from medeval.core.settings import value as _setting
from medeval.core.tables import Table
from medeval.engine.import_plan import KbIndex, PairSet, duplicate_error
from medeval.engine.import_read import (
    KIND_ALIASES,
    open_responses,
    read_kb,
    read_models,
    response_row,
)
from medeval.engine.postprocess import process
from medeval.engine.tokenize import TOKENIZER_BASE
from medeval.store import aside
from medeval.store.db import job_lock, transaction, write_failure

CHUNK_ROWS = 2000
"""Rows per write transaction (a few ms each; a grade waits at most about that long), and rows of the
responses file read, checked and post-processed at a time."""
CHUNK_CHARS = 500_000
"""Characters of text per write transaction, so that long answers make smaller chunks."""
BUSY = "another import into this database is running: wait for it to finish, then run this import again"
__all__ = ["BUSY", "CHUNK_CHARS", "CHUNK_ROWS", "KIND_ALIASES", "ImportSummary", "import_files", "visible_responses"]


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


def visible_responses(alias: str = "r") -> str:
    """SQL: response ``alias`` is not part of an import still being written (scoring skips those, so no
    score, grade, sample, campaign item or report row reaches them)."""
    return f"({alias}.batch IS NULL OR {alias}.batch IN (SELECT id FROM import_batches WHERE state = 'done'))"


@dataclass
class _Plan:
    """What an import writes, with the ids it will have (one import at a time, so the ids are free). The
    responses are not here: they are read, checked and written a chunk at a time (:func:`_responses`)."""
    kb: list[tuple] = field(default_factory=list)  # (id, disease, disease_en, aspect, type, reference, processed)
    models_new: list[tuple] = field(default_factory=list)  # (id, name, backbone, kind)
    models_changed: list[tuple] = field(default_factory=list)  # (backbone, kind, name)
    model_ids: dict[str, int] = field(default_factory=dict)  # every model name -> id, the new ones too
    stored_models: set[int] = field(default_factory=set)  # ids of the models already in the database
    kb_index: KbIndex | None = None
    next_model: int = 1
    next_resp: int = 1


def import_files(db: sqlite_utils.Database, *, kb: str | Path | None = None, responses: str | Path | None = None,
                 models: str | Path | None = None, chunk_rows: int = CHUNK_ROWS) -> ImportSummary:
    """Validate the given files and write them all or nothing (module docstring). InputError: bad input,
    nothing imported; MedevalError: the write failed or another import is running, nothing imported."""
    if not (kb or responses or models):
        raise MedevalError("nothing to import: give --kb, --responses and/or --models")
    kb_rows = read_kb(kb) if kb else []
    model_rows = read_models(models) if models else []
    table = open_responses(responses) if responses else None  # the header and the first row only
    try:
        with job_lock(db, "import", busy=BUSY):
            _discard_abandoned(db)
            summary, plan = _plan(db, kb, kb_rows, model_rows, responses is not None)
            kb_rows.clear()  # planned: only the rows to write are kept
            _write(db, plan, summary, chunk_rows, table, {k: str(v) for k, v in
                                                          (("kb", kb), ("models", models), ("responses", responses))
                                                          if v})
    finally:
        if table is not None:
            table.close()
    return summary


def _plan(db, kb, kb_rows, model_rows, with_responses: bool) -> tuple[ImportSummary, _Plan]:
    """Check the knowledge base and models against the database and post-process the references; reads only
    (one snapshot)."""
    summary, plan = ImportSummary(), _Plan()
    conn = db.conn
    conn.execute("BEGIN")  # a read transaction: one consistent snapshot, no write lock
    try:
        existing_kb = {(d, a): (i, r, t) for i, d, a, r, t in
                       conn.execute("SELECT id, disease, aspect, reference, aspect_type FROM kb_entries")}
        existing_models = {n: (i, b, k) for i, n, b, k in conn.execute("SELECT id, name, backbone, kind FROM models")}
        next_kb, plan.next_model, plan.next_resp = (
            conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {t}").fetchone()[0]
            for t in ("kb_entries", "models", "responses"))
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
        if p.note in ("range", "no_number"):  # every answer would score 0 against it, silently
            raise InputError(f"the {aspect.name} reference of {disease} is {ref!r}, which "
                             f"{'names a range of levels' if p.note == 'range' else 'has no level'}: a numeric "
                             "reference must be one number", file=str(kb), row=line,
                             fix="write one level, e.g. 2 (or 二级, Ⅱ级)")
        plan.kb.append((next_kb, disease, disease_en, aspect.name, aspect.type, ref, p.text))
        all_kb.append((next_kb, disease, aspect.name, aspect.type))
        next_kb += 1
    summary.kb_added = len(plan.kb)

    # -- models
    plan.model_ids = {n: v[0] for n, v in existing_models.items()}
    plan.stored_models = set(plan.model_ids.values())
    for line, name, backbone, kind in model_rows:
        old = existing_models.get(name)
        if old is None:
            plan.models_new.append((plan.next_model, name, backbone, kind))
            plan.model_ids[name] = plan.next_model
            plan.next_model += 1
            summary.models_added += 1
        elif (old[1], old[2]) != (backbone, kind):
            plan.models_changed.append((backbone, kind, name))
            summary.models_updated += 1
        else:
            summary.models_unchanged += 1
    if with_responses:
        plan.kb_index = KbIndex(all_kb)
    return summary, plan


def _responses(conn, plan: _Plan, summary: ImportSummary, table: Table, chunk_rows: int):
    """The new responses of the file, ready to insert, in parts of at most ``chunk_rows`` rows: the file is read,
    checked and post-processed ``chunk_rows`` rows at a time. A model the database does not have is added to
    ``plan.models_new`` (created by the final transaction)."""
    path, kbi, model_ids = table.path, plan.kb_index, plan.model_ids
    pairs = PairSet(kbi.max_id)
    rows = iter(table)
    while chunk := list(islice(rows, chunk_rows)):
        checked, error = [], None
        try:
            for line, row in chunk:
                model, disease, aspect_name, raw = response_row(path, line, row)
                kb_id, aspect = kbi.find(path, line, model, disease, aspect_name)
                mid = model_ids.get(model)
                if mid is None:  # created with the import, as a general model without backbone
                    mid = model_ids[model] = plan.next_model
                    plan.models_new.append((mid, model, None, "general"))
                    plan.next_model += 1
                    summary.models_implicit.append(model)
                    summary.models_added += 1
                if pairs.add(mid, kb_id):
                    raise duplicate_error(path, line, model, disease, aspect_name, aspect, (mid, kb_id), model_ids, kbi)
                checked.append((line, model, disease, aspect, raw, mid, kb_id))
        except InputError as e:
            error = e  # the rows before it are checked against the database first: the first error is named
        del chunk
        stored = _stored(conn, [(mid, kb_id) for *_, mid, kb_id in checked if mid in plan.stored_models])
        out = []
        for line, model, disease, aspect, raw, mid, kb_id in checked:
            old = stored.get((mid, kb_id))
            if old is not None:
                if old != raw:
                    raise InputError(
                        f"{model} already has a different response for {disease} / {aspect.name} in the database",
                        file=str(path), row=line,
                        fix="responses are not overwritten (scores depend on them): import the new run as a new "
                            "model name (e.g. 'model-v2') or into a new database")
                summary.responses_unchanged += 1
                continue
            p = process(raw, disease, aspect)
            out.append((plan.next_resp, mid, kb_id, raw, p.text, p.note))
            plan.next_resp += 1
        if error is not None:
            raise error
        summary.responses_added += len(out)
        yield from _chunks(out, chunk_rows, (3, 4))


def _stored(conn, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """The stored raw response of each (model id, kb id) of ``pairs`` that has one (indexed look-ups)."""
    by_model: dict[int, list[int]] = {}
    for mid, kb_id in pairs:
        by_model.setdefault(mid, []).append(kb_id)
    out = {}
    for mid, ids in by_model.items():
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            for kb_id, raw in conn.execute(f"SELECT kb_id, raw FROM responses WHERE model_id = ? AND kb_id IN "
                                           f"({','.join('?' * len(part))})", (mid, *part)):
                out[(mid, kb_id)] = raw
    return out


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


_ASIDE = {"kb_entries": "id, disease, disease_en, aspect, aspect_type, reference, processed",
          "responses": "id, model_id, kb_id, raw, processed, note"}


def _write(db, plan: _Plan, summary: ImportSummary, chunk_rows: int, table: Table | None, files: dict) -> None:
    """Write the rows aside (:mod:`medeval.store.aside`) a chunk a transaction, without the database's write lock,
    then copy them in with the new models in one transaction: the whole import becomes visible at once, or nothing
    of it reaches the database. Nothing is written when nothing changes. On any failure the side file is removed
    and the write-ahead log emptied (:func:`medeval.store.aside.give_back`): the disk is as it was."""
    conn, started = db.conn, _now()
    first_kb = plan.kb[0][0] if plan.kb else 0
    first_resp = plan.next_resp if table is not None else 0
    try:
        with aside.rows(db, "import") as side:
            made = False

            def staging():
                nonlocal made
                if not made:
                    with transaction(side):
                        for name, columns in _ASIDE.items():
                            side.conn.execute(f"CREATE TABLE {name} ({columns})")
                    made = True
                return side

            for part in _chunks(plan.kb, chunk_rows, (5, 6)):
                with transaction(staging()):
                    side.conn.executemany("INSERT INTO kb_entries VALUES (?, ?, ?, ?, ?, ?, ?)", part)
            plan.kb = []  # written: not held while the responses are read
            for part in (_responses(conn, plan, summary, table, chunk_rows) if table is not None else ()):
                with transaction(staging()):
                    side.conn.executemany("INSERT INTO responses VALUES (?, ?, ?, ?, ?, ?)", part)
            if not made and not (plan.models_new or plan.models_changed):
                return  # nothing changes
            with aside.attached(db, staging()), transaction(db):  # the flip: the batch, models and rows together
                batch = conn.execute(
                    "INSERT INTO import_batches (state, started_at, finished_at, first_kb_id, first_response_id, "
                    "summary) VALUES ('done', ?, ?, ?, ?, ?)", (started, _now(), first_kb, first_resp, json.dumps(
                        {"files": files, **asdict(summary), "read_with": read_with()}, ensure_ascii=False))).lastrowid
                conn.execute(f"INSERT INTO kb_entries ({_ASIDE['kb_entries']}, batch) SELECT *, {batch} "
                             "FROM aside.kb_entries ORDER BY id")
                conn.executemany("INSERT INTO models (id, name, backbone, kind) VALUES (?, ?, ?, ?)", plan.models_new)
                conn.executemany("UPDATE models SET backbone = ?, kind = ? WHERE name = ?", plan.models_changed)
                conn.execute(f"INSERT INTO responses ({_ASIDE['responses']}, batch) SELECT *, {batch} "
                             "FROM aside.responses ORDER BY id")
    except BaseException as e:
        aside.give_back(db)  # after the side file's removal, whose room the checkpoint may need on a full disk
        if isinstance(e, sqlite3.Error):
            raise MedevalError(f"{write_failure(e)} and run the import again; nothing was imported") from e
        raise


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
    """Remove the ``staging`` batches that killed imports of an older version left in the database (called with the
    import lock held, so none is alive); a killed import of this version left only its side file, which the next
    :func:`medeval.store.aside.rows` removes."""
    for batch, first_kb, first_resp in db.conn.execute(
            "SELECT id, first_kb_id, first_response_id FROM import_batches WHERE state = 'staging'").fetchall():
        try:
            _discard(db, batch, first_kb, first_resp)
        except sqlite3.Error as e:
            raise MedevalError(f"cannot remove the rows of an interrupted import: {write_failure(e)} and run the "
                               "import again; nothing was imported") from e


def read_with() -> dict:
    """How this import read its answers, kept with its batch: the stored texts and levels follow these rules, so a
    later change of setting or of normalisation leaves them as they were read (``import_batches.summary``)."""
    return {"severity_reading": _setting("MEDEVAL_SEVERITY_READING"), "normalisation": TOKENIZER_BASE}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())