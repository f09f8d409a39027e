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

    def __init__(self, model_id: str | None = None, dims: int = 8):
        self.encoded = []
        if model_id is not None:
            self.model_id = model_id
        self.dims = dims

    def encode(self, texts):
        import numpy as np

        self.encoded.extend(texts)
        out = []
        for t in texts:
            v = np.zeros(self.dims, dtype=np.float32)
            for ch in t:
                v[ord(ch) % self.dims] += 1
            n = np.linalg.norm(v)
            out.append(v / n if n else v)
        return np.array(out, dtype=np.float32)


def test_cosine_uses_and_fills_the_embedding_cache(db, small_files, monkeypatch):
    backend = CountingBackend()
    monkeypatch.setitem(embeddings.backends().loaded, "counting", backend)
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
    # the model id is recorded with every cosine score, with +t2s: texts converted to simplified Chinese (the default)
    assert scorers == {"counting-test-model+t2s"}
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


# ---------------------------------------------------------------- per-run reference cache

_KB = """disease,aspect,reference
感冒,Primary Symptoms,咳嗽;打喷嚏;流鼻涕;发热
感冒,药物,对乙酰氨基酚;布洛芬
感冒,Physical Examinations,咽部充血，扁桃体无肿大
感冒,危重等级,4
"""
_ANSWERS = {  # per aspect: one answer per model, none equal to a reference
    "Primary Symptoms": ["感冒的主要症状包括：咳嗽、流涕和发烧。", "骨折", "咳嗽咳嗽咳嗽，发热", "", "打喷嚏；流鼻涕；发热；咳嗽"],
    "Medications": ["布洛芬", "无", "对乙酰氨基酚（扑热息痛）", "布洛芬；布洛芬", "Ibuprofen 0.2g"],
    "Physical Examinations": ["咽部充血", "建议就医", "扁桃体Ⅱ度肿大，咽部充血", "体温39.5℃", "咽部无充血"],
    "Severity Level": ["危重等级为4级", "二级", "4", "三级", "4级"],
}


def _many_models(tmp_path):
    """Five models answering the same four KB entries: every reference is shared by five responses."""
    names = [f"Model{i}" for i in range(5)]
    (tmp_path / "kb.csv").write_text(_KB, encoding="utf-8")
    (tmp_path / "models.csv").write_text("model,backbone,kind\n" + "".join(f"{m},,general\n" for m in names),
                                         encoding="utf-8")
    lines = ["model,disease,aspect,response"]
    for i, m in enumerate(names):  # model-major, as an import writes them
        lines += [f'{m},感冒,{aspect},"{answers[i]}"' for aspect, answers in _ANSWERS.items()]
    (tmp_path / "responses.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"kb": tmp_path / "kb.csv", "responses": tmp_path / "responses.csv", "models": tmp_path / "models.csv"}


def _lexical_rows(db):
    return db.conn.execute("SELECT r.processed, k.processed, s.metric, s.score FROM scores s "
                           "JOIN responses r ON r.id = s.response_id JOIN kb_entries k ON k.id = r.kb_id "
                           "WHERE s.metric IN ('bleu1', 'rouge1')").fetchall()


def _assert_equal_to_direct(db):
    rows = _lexical_rows(db)
    assert len(rows) == 2 * 15  # 5 models x 3 lexical entries, two metrics each
    for cand, ref, metric, score in rows:  # == not approx: the cache must not change a single bit
        assert score == (bleu1(ref, cand) if metric == "bleu1" else rouge1(ref, cand).fmeasure), (metric, ref, cand)


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 2000])
def test_cached_reference_profiles_give_the_direct_scores_across_chunks(db, tmp_path, batch_size):
    import_files(db, **_many_models(tmp_path))
    s = score_db(db, metrics=["bleu1", "rouge1", "exact_match"], batch_size=batch_size)
    assert s.responses_seen == 20
    _assert_equal_to_direct(db)


def _count_tokenize(monkeypatch):
    from medeval.engine import scoring

    calls = []
    scoring_tokenizer = scoring.tok.scoring_tokenizer

    def counting_tokenizer(t2s=None):
        tokenize = scoring_tokenizer(t2s)

        def counting(text):
            calls.append(text)
            return tokenize(text)
        return counting

    monkeypatch.setattr(scoring.tok, "scoring_tokenizer", counting_tokenizer)
    return calls


def test_each_reference_is_tokenised_once_per_run_not_once_per_chunk(db, tmp_path, monkeypatch):
    import_files(db, **_many_models(tmp_path))
    refs = [r[0] for r in db.conn.execute("SELECT processed FROM kb_entries WHERE aspect_type != 'numeric'")]
    calls = _count_tokenize(monkeypatch)
    score_db(db, metrics=["bleu1", "rouge1"], batch_size=2)  # 10 chunks; each reference is in 5 of them
    assert {r: calls.count(r) for r in refs} == {r: 1 for r in refs}
    _assert_equal_to_direct(db)


def test_reference_cache_is_bounded_and_eviction_keeps_the_scores(db, tmp_path, monkeypatch):
    from medeval.engine import scoring

    import_files(db, **_many_models(tmp_path))
    monkeypatch.setattr(scoring, "REF_PROFILES_MAX", 1)  # one reference kept: the three alternate, so they are evicted
    calls = _count_tokenize(monkeypatch)
    score_db(db, metrics=["bleu1", "rouge1"], batch_size=2)
    refs = [r[0] for r in db.conn.execute("SELECT processed FROM kb_entries WHERE aspect_type != 'numeric'")]
    assert all(calls.count(r) == 5 for r in refs)  # re-tokenised for every model: the cache never grew past 1
    _assert_equal_to_direct(db)
