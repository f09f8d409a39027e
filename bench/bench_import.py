#!/usr/bin/env python
"""Benchmark of ``medeval import`` on a generated, paper-shaped data set.

    .venv/bin/python bench/bench_import.py --quick          # 576 KB entries x 70 models = 40,320 responses
    .venv/bin/python bench/bench_import.py                  # also 2,000 diseases x 18 aspects x 16 models (576k)
    .venv/bin/python bench/bench_import.py --responses 2300000   # the MedDisKEval paper's size
    .venv/bin/python bench/bench_import.py --responses 2300000 --models 64   # same size, the 576k run's KB
    .venv/bin/python bench/bench_import.py --quick --profile     # cProfile of the import, top 25 by cumulative time

The data is seeded (``random.Random(20261123)``) and varied so that no cache hides a per-row cost:
every disease has its own name (one of the demo knowledge base's 32 diseases plus a numbered
subtype and a random two-character qualifier), every response is different (segments of the
reference kept, dropped, swapped with another disease's, a prose prefix, and in one response out
of five the prompt's own pattern "<disease>的<aspect>包括：…" that post-processing extracts).

Each size is imported once into a fresh SQLite file by a child process that does nothing else
(``medeval.engine.importer.import_files``: read, validate, post-process, write), which reports
wall time, CPU time and peak RSS (``ru_maxrss``). Files are written to ``--tmp`` and removed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.benchlib import cpu_model, finish, loadavg, log  # noqa: E402

SEED = 20261123
PREFIXES = ["", "", "根据现有医学资料，", "一般来说，", "参考指南：", "According to the literature, "]
QUALIFIERS = "急慢轻重早晚原继型性期度"


def _kb():
    from medeval.demo.generate import load_kb  # the demo knowledge base: 32 diseases x 18 aspects

    return load_kb()


def generate(folder: Path, n_diseases: int, n_models: int, rng: random.Random) -> dict:
    """Write kb.csv, models.csv and responses.jsonl; return the counts."""
    import csv

    base = _kb()
    by_disease: dict[str, list] = {}
    for e in base:
        by_disease.setdefault(e["disease"], []).append(e)
    names = sorted(by_disease)
    kb_rows = []
    for i in range(n_diseases):
        src = names[i % len(names)]
        disease = f"{src}{rng.choice(QUALIFIERS)}{rng.choice(QUALIFIERS)}-{i:05d}型"
        for e in by_disease[src]:
            kb_rows.append((disease, e["aspect"], e["reference"]))
    with open(folder / "kb.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["disease", "aspect", "reference"])
        w.writerows(kb_rows)
    models = [f"BenchModel-{j:03d}" for j in range(n_models)]
    with open(folder / "models.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["model", "backbone", "kind"])
        w.writerows([(m, "", "general") for m in models])
    refs = [r for _, _, r in kb_rows]
    n = 0
    with open(folder / "responses.jsonl", "w", encoding="utf-8") as f:
        for model in models:
            for disease, aspect, ref in kb_rows:
                segs = [s for s in ref.replace("；", ";").replace("，", ";").split(";") if s] or [ref]
                segs = [s for s in segs if rng.random() > 0.3] or segs[:1]
                if rng.random() < 0.4:
                    other = rng.choice(refs).split(";")
                    segs.append(rng.choice(other))
                rng.shuffle(segs)
                body = rng.choice(["；", "、", "，", ";"]).join(segs) + f"（{rng.randrange(10 ** 6)}）"
                text = (f"{disease}的{aspect}包括：{body}" if rng.random() < 0.2 else rng.choice(PREFIXES) + body)
                f.write(json.dumps({"model": model, "disease": disease, "aspect": aspect, "response": text},
                                   ensure_ascii=False) + "\n")
                n += 1
    return {"kb_entries": len(kb_rows), "models": n_models, "responses": n}


CHILD = r"""
import json, resource, sys, time
from pathlib import Path
folder, db_path, profile = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
from medeval.store.db import connect
from medeval.engine.importer import import_files
t0, c0 = time.perf_counter(), time.process_time()
def run():
    with connect(db_path) as db:
        return import_files(db, kb=folder / "kb.csv", models=folder / "models.csv",
                            responses=folder / "responses.jsonl")
if profile:
    import cProfile, pstats
    prof = cProfile.Profile()
    s = prof.runcall(run)
    pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
else:
    s = run()
print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(folder: Path, profile: bool) -> dict:
    db_path = folder / "bench.db"
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(db_path), "1" if profile else "0"],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"import failed:\n{out.stderr[-3000:]}")
    if profile:
        print(out.stderr, file=sys.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="only the 40,320-response size")
    ap.add_argument("--responses", type=int, default=None,
                    help="one extra size: about this many responses (diseases x 18 aspects x --models models)")
    ap.add_argument("--models", type=int, default=16,
                    help="models of the --responses size (default 16); more models means a smaller knowledge base "
                         "for the same number of responses (64 keeps the 576k run's 36,000 entries at 2.3M)")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of each import (slower)")
    ap.add_argument("--tmp", default=None, help="folder for the generated files (default: the system's)")
    ap.add_argument("--json", default=None, help="also write the figures as JSON")
    args = ap.parse_args()
    sizes = [(32, 70)]  # 576 KB entries x 70 models: the "new user" data set
    if not args.quick:
        sizes.append((2000, 16))
    if args.responses:
        sizes.append((max(1, round(args.responses / (18 * args.models))), args.models))
    print(f"machine: {os.cpu_count()} CPUs ({cpu_model()}), Python {sys.version.split()[0]}, load {loadavg()}")
    rng = random.Random(SEED)
    rows, res, t_all = [("KB entries", "models", "responses", "wall s", "responses/s", "CPU s", "peak RSS MiB")], {}, \
        time.perf_counter()
    for n_diseases, n_models in sizes:
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            folder = Path(tmp)
            log(f"generating {n_diseases} diseases x 18 aspects x {n_models} models")
            counts = generate(folder, n_diseases, n_models, rng)
            log(f"importing {counts['responses']:,} responses")
            m = measure(folder, args.profile)
        key = f"{counts['responses']}"
        res[key] = {**counts, **m, "responses_per_s": counts["responses"] / m["wall_s"]}
        rows.append((f"{counts['kb_entries']:,}", counts["models"], f"{counts['responses']:,}", f"{m['wall_s']:.1f}",
                     f"{counts['responses'] / m['wall_s']:,.0f}", f"{m['cpu_s']:.1f}", f"{m['peak_rss_mib']:.0f}"))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    text = "\n".join("  ".join(f"{str(v):>{w}}" for v, w in zip(r, widths)) for r in rows)
    finish(res, text, time.perf_counter() - t_all, args.json)


if __name__ == "__main__":
    main()
