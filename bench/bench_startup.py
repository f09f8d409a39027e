#!/usr/bin/env python
"""Start-up of the command line against its floor, in one run on one machine.

    .venv/bin/python bench/bench_startup.py            # 7 runs of each, median
    .venv/bin/python bench/bench_startup.py --runs 15

The floor is a fresh interpreter that imports what any command line needs (``import click, sqlite3, csv, json``);
each command is ``python -m medeval ...`` in a fresh interpreter on a demo-sized database made once (``medeval
init`` and ``users add``; its first-start work is not timed). Runs alternate (floor, each command, floor, ...), so a
burst of load slows all of them; the ratio to the floor's median is the figure to compare between machines (they
differ about 3x here). The goal: each command at most 3x the floor. The last column lists the heavy libraries the
command's process had loaded when it ended (``-X importtime``): scipy, pandas, torch and sentence-transformers load
only in commands that use them, and a command that only lists (``users list``, ``campaign list``) reads an up-to-date
database without sqlite-utils and the numpy it imports (``medeval/cli/opening.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.benchlib import cpu_model, loadavg, log, table_lines  # noqa: E402

HEAVY = ("scipy", "pandas", "torch", "sentence_transformers", "sqlite_utils", "numpy", "babel", "plotly")
FLOOR = [sys.executable, "-c", "import click, sqlite3, csv, json"]


def commands(db: str) -> dict[str, list[str]]:
    py = [sys.executable, "-m", "medeval"]
    return {
        "medeval --help": py + ["--help"],
        "medeval settings": py + ["settings"],
        "medeval users list": py + ["users", "list", "--db", db],
        "medeval campaign list": py + ["campaign", "list", "--db", db],
    }


def run(argv: list[str], env: dict) -> float:
    t = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[1:])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took


def heavy_loaded(argv: list[str], env: dict) -> list[str]:
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    # by top-level package: a module imported with importlib.import_module (sqlite-utils imports numpy so) gets no
    # line of its own, only the modules it imports do
    loaded = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    return [h for h in HEAVY if h in loaded]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}
    env.pop("PYTHONDONTWRITEBYTECODE")
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        env["MEDEVAL_DB"] = db
        log("making the database")
        subprocess.run([sys.executable, "-m", "medeval", "init", "--db", db], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        subprocess.run([sys.executable, "-m", "medeval", "users", "add", "doc", "--role", "annotator", "--db", db],
                       input="a-long-enough-password\n", text=True, cwd=ROOT, env=env, check=True,
                       capture_output=True)
        cmds = commands(db)
        for argv in [FLOOR, *cmds.values()]:  # warm the file cache and compiled modules once
            run(argv, env)
        times: dict[str, list[float]] = {"floor": [], **{k: [] for k in cmds}}
        start_load = loadavg()
        for i in range(args.runs):
            log(f"round {i + 1}/{args.runs}")
            times["floor"].append(run(FLOOR, env))
            for name, argv in cmds.items():
                times[name].append(run(argv, env))
        end_load = loadavg()
        heavy = {name: heavy_loaded(argv, env) for name, argv in cmds.items()}
    floor = statistics.median(times["floor"])
    rows = [(f"machine: {os.cpu_count()} CPUs, {cpu_model()}; load {start_load} -> {end_load}", "", ""),
            ("floor: python -c 'import click, sqlite3, csv, json'", f"{floor:.3f} s", "median of the runs"), ]
    for name in cmds:
        med = statistics.median(times[name])
        rows.append((name, f"{med:.3f} s", f"{med / floor:.1f}x the floor (goal <= 3x); heavy: "
                     f"{', '.join(heavy[name]) or 'none'}"))
    print("\n".join(table_lines(rows)))


if __name__ == "__main__":
    main()
