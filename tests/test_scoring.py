"""`score`: every applicable metric once per response, chunked, resumable, with an embedding cache."""

import pytest

from medeval.engine import embeddings
from medeval.engine.importer import import_files
from medeval.engine.metrics import bleu1, rouge1
from medeval.engine.scoring import score_db


def _counts(db):
    return dict(db.conn.execute("SELECT metric, count(*) FROM scores GROUP BY metric").fetchall())


def test_lexical_scores_match_the_metric_functions(db, small_files):
    import_files(db, **small_files)
    s = score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    assert s.responses_seen == 8
    assert _counts(db) == {"bleu1": 6, "rouge1": 6, "exact_match": 2}
    rows = db.conn.execute("SELECT r.processed, k.processed, s.metric, s.score FROM scores s "
                           "JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id").fetchall()
    for cand, ref, metric, score in rows:
        if metric == "bleu1":
            assert score == bleu1(ref, cand)
        elif metric == "rouge1":
            assert score == rouge1(ref, cand).fmeasure
    em = dict(db.conn.execute("SELECT m.name, s.score FROM scores s JOIN responses r ON r.id = s.response_id "
                              "JOIN models m ON m.id = r.model_id WHERE s.metric = 'exact_match'").fetchall())
    assert em == {"ModelA": 1.0, "ModelB": 0.0}  # "危重等级为4级" vs 4; "二级" vs 4


def test_resumable_after_interrupt_no_duplicates(db, small_files):
    import_files(db, **small_files)
    first = score_db(db, metrics=["bleu1", "rouge1", "exact_match"], batch_size=3, stop_after_chunks=1)
    assert first.responses_seen == 3 and 0 < first.scores_added < 14
    second = score_db(db, metrics=["bleu1", "rouge1", "exact_match"], batch_size=3)
    assert first.scores_added + second.scores_added == 14
    assert _counts(db) == {"bleu1": 6, "rouge1": 6, "exact_match": 2}
    again = score_db(db, metrics=["bleu1", "rouge1", "exact_match"])
    assert again.scores_added == 0


class CountingBackend:
    """A deterministic backend that counts what it encodes (the cache must prevent re-encoding)."""

    model_id = "counting-test-model"

    def __init__(self):
        self.encoded = []

    def encode(self, texts):
        import numpy as np

        self.encoded.extend(texts)
        out = []
        for t in texts:
            v = np.zeros(8, dtype=np.float32)
            for ch in t:
                v[ord(ch) % 8] += 1
            n = np.linalg.norm(v)
            out.append(v / n if n else v)
        return np.array(out, dtype=np.float32)


def test_cosine_uses_and_fills_the_embedding_cache(db, small_files, monkeypatch):
    backend = CountingBackend()
    monkeypatch.setitem(embeddings._backends, "counting", backend)
    import_files(db, **small_files)
    s = score_db(db, metrics=["cosine"], embedding_model="counting")
    assert s.embedding_model == "counting-test-model"
    assert _counts(db) == {"cosine": 6}
    first = len(backend.encoded)
    assert first == len(set(backend.encoded))  # each distinct text encoded once
    assert db.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == first
    # re-scoring from scratch costs nothing: every embedding comes from the cache
    db.conn.execute("DELETE FROM scores")
    s2 = score_db(db, metrics=["cosine"], embedding_model="counting")
    assert len(backend.encoded) == first and s2.embeddings_computed == 0 and s2.embeddings_cached == first
    scorers = {r[0] for r in db.conn.execute("SELECT DISTINCT scorer FROM scores WHERE metric='cosine'")}
    assert scorers == {"counting-test-model"}  # the model id is recorded with every cosine score
    empty = db.conn.execute("SELECT s.score FROM scores s JOIN responses r ON r.id = s.response_id "
                            "WHERE r.processed = '' AND s.metric = 'cosine'").fetchall()
    assert all(x == (0.0,) for x in empty)


@pytest.mark.slow
def test_memory_is_bounded_by_chunk_not_data(db, small_files):
    """The chunk query never loads more than batch_size responses (keyset pagination)."""
    import_files(db, **small_files)
    seen = []
    score_db(db, metrics=["bleu1"], batch_size=2, progress=seen.append)
    assert seen == [2, 2, 2, 2]
