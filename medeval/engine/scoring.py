"""Score every response not yet scored, in chunks: flat memory, resumable after an interrupt.

Each chunk of responses (ordered by id) is scored and committed in its own
short ``BEGIN IMMEDIATE`` transaction (the scores are computed before it opens),
so an interrupted run keeps what it finished, the next run continues with the
rest, and an annotator's grade never waits long for the write lock. Responses of
an import still being written are not scored (``importer.visible_responses``). Scores carry their scorer id: the
tokenizer for BLEU-1/ROUGE-1 (``cjk-med-v3+t2s``: with OpenCC's traditional -> simplified conversion, setting
``MEDEVAL_TRADITIONAL_TO_SIMPLIFIED``, which also applies to the texts embedded for cosine), the embedding model
id for cosine, a plugin metric's own id (``medeval.engine.registry``; a plugin's scores go through its batch form
when it has one, and each is checked against the metric's range before its chunk is written).
Embeddings are computed outside the write transaction (a slow model must not
hold the database lock) and cached by (model id, text hash).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
import sqlite_utils

from medeval.core import settings
from medeval.core.i18n import _, ngettext
from medeval.core.chinese import to_simplified
from medeval.engine import tokenize as tok
from medeval.engine.aspects import NUMERIC
from medeval.engine.embeddings import (POOL_MIN_TEXTS, EmbeddingBackend, get_backend, lookup_cached, resolve_device,
                                       resolve_workers, store_cached)
from medeval.engine.importer import visible_responses
from medeval.engine.metrics import EXACT_SCORER_ID, RefProfile, lexical_scores, ref_profile
from medeval.engine.registry import BUILTINS, METRICS, Metric, get_metric
from medeval.store.db import transaction

DEFAULT_METRICS = ("bleu1", "rouge1", "cosine", "exact_match")
VECTORS_PER_TX = 500
"""Embeddings cached per write transaction (a 768-d vector is 3 KB: 500 of them write in a few ms)."""
REF_PROFILES_MAX = 10_000
"""Reference profiles (tokens counted once) kept per scoring run, keyed by the processed reference text: every
model answers the same knowledge base, so each reference is tokenised once per run, not once per response.
Beyond this many the oldest is dropped: about 2 KB each for 30-character references, so about 20 MB at most
(a bigger knowledge base costs re-tokenising, never more memory)."""


@dataclass
class ScoreSummary:
    responses_seen: int = 0
    scores_added: int = 0
    embeddings_computed: int = 0
    embeddings_cached: int = 0
    embedding_model: str | None = None


def scorer_id(metric: str, backend: EmbeddingBackend | None, t2s: bool | None = None) -> str:
    """The id stored with a score of ``metric``; ``t2s``: OpenCC traditional -> simplified (default: the setting).
    A plugin metric's is its own (:meth:`medeval.engine.registry.Metric.current_scorer_id`)."""
    if metric not in BUILTINS:
        return get_metric(metric).current_scorer_id()
    if metric in ("bleu1", "rouge1"):
        return tok.scorer_id(t2s)
    if metric == "exact_match":
        return EXACT_SCORER_ID
    assert backend is not None
    # cosine embeds the converted texts too, so its id records the conversion the same way (``+t2s``)
    return backend.model_id + (tok.T2S_SUFFIX if tok.traditional_to_simplified(t2s) else "")


def score_db(db: sqlite_utils.Database, *, metrics: Iterable[str] = DEFAULT_METRICS,
             embedding_model: str | None = None, batch_size: int | None = None,
             progress: Callable[[int], None] | None = None, total_callback: Callable[[int], None] | None = None,
             stop_after_chunks: int | None = None, device: str | None = None,
             workers: int | None = None, t2s: bool | None = None) -> ScoreSummary:
    """Score what is not yet scored. ``progress(n)`` is called after each committed chunk of n responses.

    ``device`` and ``workers`` (default: their settings) say where embeddings are encoded; with ``workers`` > 1
    and more than ``POOL_MIN_TEXTS`` visible responses, every chunk's new texts go to one pool of processes.
    ``t2s`` (default: setting ``MEDEVAL_TRADITIONAL_TO_SIMPLIFIED``): convert traditional Chinese to simplified
    with OpenCC before tokenising and before embedding. ``batch_size`` (default: setting ``MEDEVAL_BATCH_SIZE``):
    responses scored and committed per chunk."""
    batch_size = settings.value("MEDEVAL_BATCH_SIZE", batch_size)
    metrics = [get_metric(m).name for m in metrics]
    plugins = [METRICS[m] for m in dict.fromkeys(metrics) if m not in BUILTINS]  # scored per chunk, batch form first
    t2s = tok.traditional_to_simplified(t2s)
    tokenize = tok.scoring_tokenizer(t2s)
    prep = to_simplified if t2s else str  # the text that is embedded
    workers = resolve_workers(workers)
    device = resolve_device(device, check="cosine" in metrics)  # checked before anything is loaded or read
    backend = get_backend(embedding_model, device) if "cosine" in metrics else None
    pooled = False
    if backend is not None and workers > 1:
        pooled = db.conn.execute(f"SELECT count(*) FROM responses r WHERE {visible_responses('r')}").fetchone()[0] \
            > POOL_MIN_TEXTS
    scorers = {m: scorer_id(m, backend, t2s) for m in metrics}
    summary = ScoreSummary(embedding_model=backend.model_id if backend else None)
    conn = db.conn
    if total_callback:
        total_callback(conn.execute(f"SELECT count(*) FROM responses r WHERE {visible_responses('r')}").fetchone()[0])
    last_id, chunks = 0, 0
    ref_profiles: dict[str, RefProfile] = {}  # per run, across chunks (REF_PROFILES_MAX)
    while True:
        rows = conn.execute(
            "SELECT r.id, r.processed, k.processed, k.aspect_type FROM responses r JOIN kb_entries k ON k.id = r.kb_id "
            f"WHERE r.id > ? AND {visible_responses('r')} ORDER BY r.id LIMIT ?", (last_id, batch_size)).fetchall()
        if not rows:
            break
        last_id = rows[-1][0]
        ids = [r[0] for r in rows]
        have: set[tuple[int, str]] = set()
        for i in range(0, len(ids), 900):
            part = ids[i:i + 900]
            q = (f"SELECT response_id, metric, scorer FROM scores WHERE response_id IN ({','.join('?' * len(part))})")
            for rid, metric, scorer in conn.execute(q, part):
                if scorers.get(metric) == scorer:
                    have.add((rid, metric))
        todo = [(rid, cand, ref, t) for rid, cand, ref, t in rows
                if any((rid, m) not in have for m in metrics if t in METRICS[m].aspect_types)]
        new_scores: list[tuple[int, str, str, float]] = []
        new_vectors: dict[str, np.ndarray] = {}
        vectors: dict[str, np.ndarray] = {}
        if backend and any(t != NUMERIC for *_, t in todo):
            need = {x for rid, cand, ref, t in todo if t != NUMERIC and (rid, "cosine") not in have and cand.strip()
                    for x in (prep(cand), prep(ref))}
            vectors = lookup_cached(db, backend.model_id, need)
            missing = [t for t in need if t not in vectors]
            summary.embeddings_cached += len(need) - len(missing)
            if missing:
                enc = backend.encode(missing, workers=workers, min_pool_texts=0) if pooled else backend.encode(missing)
                new_vectors = dict(zip(missing, enc))
                vectors.update(new_vectors)
                summary.embeddings_computed += len(missing)
        for rid, cand, ref, t in todo:
            if t == NUMERIC:
                if "exact_match" in metrics and (rid, "exact_match") not in have:
                    new_scores.append((rid, "exact_match", scorers["exact_match"],
                                       1.0 if cand != "" and ref != "" and float(cand) == float(ref) else 0.0))
                continue
            if ("bleu1" in metrics and (rid, "bleu1") not in have) or ("rouge1" in metrics and (rid, "rouge1") not in have):
                rp = ref_profiles.get(ref)
                if rp is None:
                    if len(ref_profiles) >= REF_PROFILES_MAX:
                        del ref_profiles[next(iter(ref_profiles))]  # the oldest
                    rp = ref_profiles[ref] = ref_profile(tokenize(ref))
                f1, b = lexical_scores(rp, tokenize(cand))
                if "bleu1" in metrics and (rid, "bleu1") not in have:
                    new_scores.append((rid, "bleu1", scorers["bleu1"], b))
                if "rouge1" in metrics and (rid, "rouge1") not in have:
                    new_scores.append((rid, "rouge1", scorers["rouge1"], f1))
            if "cosine" in metrics and (rid, "cosine") not in have:
                if not cand.strip():
                    c = 0.0
                else:
                    c = float(np.clip(vectors[prep(cand)] @ vectors[prep(ref)], -1.0, 1.0))
                new_scores.append((rid, "cosine", scorers["cosine"], c))
        for metric in plugins:
            new_scores += _plugin_scores(metric, scorers[metric.name], todo, have)
        items = list(new_vectors.items())
        for i in range(0, len(items), VECTORS_PER_TX):  # the cache first, in its own short transactions
            with transaction(db):
                store_cached(db, backend.model_id, dict(items[i:i + VECTORS_PER_TX]))
        with transaction(db):
            conn.executemany("INSERT OR IGNORE INTO scores (response_id, metric, scorer, score) VALUES (?, ?, ?, ?)",
                             new_scores)
        summary.responses_seen += len(rows)
        summary.scores_added += len(new_scores)
        if progress:
            progress(len(rows))
        chunks += 1
        if stop_after_chunks is not None and chunks >= stop_after_chunks:
            break
    if pooled:
        backend.close_pool()
    return summary


def _plugin_scores(metric: Metric, scorer: str, todo: list, have: set) -> list[tuple[int, str, str, float]]:
    """A plugin metric's scores of a chunk's pairs (the processed reference and answer, as stored), each checked: a
    value outside the metric's range or not a number is an error naming the pair, raised before the chunk is
    written."""
    pairs = [(rid, ref, cand) for rid, cand, ref, t in todo
             if t in metric.aspect_types and (rid, metric.name) not in have]
    if not pairs:
        return []
    values = metric.score_pairs([p[1] for p in pairs], [p[2] for p in pairs])
    return [(rid, metric.name, scorer,
             metric.check_score(v, f"response {rid} (reference {ref[:60]!r}, answer {cand[:60]!r})"))
            for (rid, ref, cand), v in zip(pairs, values)]


def severity_ranges(db: sqlite_utils.Database, models: Iterable[str] | None = None) -> dict[str, int]:
    """Per model: its Severity Level answers that name a range or a choice of levels ("三至四级", "level 2 or 3").

    Such an answer is no single level: post-processing gives it no number and the note ``range``
    (``medeval.engine.postprocess.severity_level``), and its exact match scores 0. A report says how many
    there are, so a model's numeric score is not read as wrong answers only. Every model of ``models``
    (default: every model with a visible response) appears, with 0 when it has none.
    """
    conn = db.conn
    rows = conn.execute(
        "SELECT m.name, sum(CASE WHEN k.aspect_type = 'numeric' AND r.note = 'range' THEN 1 ELSE 0 END) "
        "FROM responses r JOIN models m ON m.id = r.model_id JOIN kb_entries k ON k.id = r.kb_id "
        f"WHERE {visible_responses('r')} GROUP BY m.name ORDER BY m.name").fetchall()
    counts = {name: int(n or 0) for name, n in rows}
    if models is None:
        return counts
    return {name: counts.get(name, 0) for name in models}


def severity_ranges_text(db: sqlite_utils.Database) -> str:
    """A sentence for a report: how many Severity Level answers named a range of levels, per model (said also when
    none did, so a reader knows they were looked for)."""
    counts = {m: n for m, n in severity_ranges(db).items() if n}
    if not counts:
        return " " + _("No Severity Level answer named a range of levels (e.g. 三至四级).")
    total = sum(counts.values())
    per = ", ".join(f"{m} {n}" for m, n in counts.items())
    return " " + ngettext("{n} Severity Level answer named a range of levels (e.g. 三至四级) rather than one level "
                          "and scored 0 on exact match ({per}).",
                          "{n} Severity Level answers named a range of levels (e.g. 三至四级) rather than one level "
                          "and scored 0 on exact match ({per}).", total).format(n=total, per=per)
