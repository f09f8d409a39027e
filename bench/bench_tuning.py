#!/usr/bin/env python
"""Benchmark of live cut-off tuning on a full-size corpus: 2.3 million scores.

    .venv/bin/python bench/bench_tuning.py             # about 2 minutes on 2 cores (building the database is most)
    .venv/bin/python bench/bench_tuning.py --scores 230000   # a tenth, quicker
    .venv/bin/python bench/bench_tuning.py --json bench/out/tuning.json

It builds a temporary database at the paper's scale -- 100 models x 7,680 knowledge-base
entries = 768,000 responses, each scored by BLEU-1, ROUGE-1 and cosine (2.3M scores; the
scores are synthetic, drawn per model from Beta distributions, because only the count
matters here) -- grades it under the active set, adds a researcher and a small graded
campaign, and times:

1. loading every score once into the read-only ``ScoreIndex`` the page caches;
2. regrading all 2.3M scores under new cut-offs: ``tuning.regrade`` on the score arrays
   (the tiers of every score), and the tier counts of one (metric, type) by binary search;
3. what one slider move computes: pooled tier shares, agreement with the experts and the
   leaderboard of all 100 models under the draft (plus the active set's, for the moves);
4. a slider move end to end on the real page (AppTest: the Streamlit script of the tuning
   page with its cached index, from the new slider value to the finished run), median of
   10 moves -- the page is a fragment, so only it reruns.

For scale, grading the same 2.3M scores in SQL (``thresholds.grade_db``) is timed once.
Aims: regrade under 100 ms, slider move under 300 ms. Figures: median of 5 runs after a
warm-up (min-max in the note) unless said otherwise.
"""

from __future__ import annotations

import time

_T_PROCESS = time.perf_counter()

import argparse
import platform
import statistics
import tempfile
from pathlib import Path

import numpy as np

from bench.benchlib import finish, loadavg, log, table_lines  # noqa: E402
from medeval.accounts import auth
from medeval.calibration import tuning  # noqa: E402
from medeval.engine import thresholds as th  # noqa: E402
from medeval.store.db import connect  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def timed(fn, runs=5):
    fn()
    times = []
    out = None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times), min(times), max(times)


def ms(med, lo, hi) -> tuple[str, str]:
    return f"{med * 1000:.1f} ms", f"min-max {lo * 1000:.1f}-{hi * 1000:.1f} ms"


def build(path: Path, n_models: int, n_kb: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ts = None
    with connect(path) as db:
        ts = th.active(db)
        db.conn.execute("BEGIN IMMEDIATE")
        db.conn.executemany("INSERT INTO kb_entries (id, disease, aspect, aspect_type, reference, processed) "
                            "VALUES (?, ?, ?, ?, 'r', 'r')",
                            [(i + 1, f"d{i // 16}", f"a{i % 16}", "enumerated" if i % 2 else "declarative")
                             for i in range(n_kb)])
        db.conn.executemany("INSERT INTO models (id, name) VALUES (?, ?)",
                            [(m + 1, f"model{m:03d}") for m in range(n_models)])
        rid = 0
        for m in range(n_models):
            ids = np.arange(rid + 1, rid + n_kb + 1)
            db.conn.executemany("INSERT INTO responses (id, model_id, kb_id, raw, processed) VALUES (?, ?, ?, 'x', 'x')",
                                zip(ids.tolist(), [m + 1] * n_kb, range(1, n_kb + 1)))
            a, b = rng.uniform(1, 4, 2)
            for metric in ("bleu1", "rouge1", "cosine"):
                s = rng.beta(a, b, n_kb)
                if metric == "cosine":
                    s = s * 2 - 1 if m % 10 == 0 else s
                scorer = ts.scorer_for(metric) if metric != "cosine" else ts.embedding_model
                db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, ?, ?, ?)",
                                    zip(ids.tolist(), [metric] * n_kb, [scorer] * n_kb, s.round(4).tolist()))
            rid += n_kb
        db.conn.commit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scores", type=int, default=2_304_000, help="about this many scores (3 per response)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    n_models = 100
    n_kb = max(16, args.scores // 3 // n_models)
    res = {"machine": platform.platform(), "cpus": __import__("os").cpu_count(), "loadavg_start": loadavg(),
           "models": n_models, "kb_entries": n_kb}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tuning.db"
        log(f"building {n_models} models x {n_kb} entries x 3 metrics = {n_models * n_kb * 3:,} scores")
        t = time.perf_counter()
        build(path, n_models, n_kb, seed=0)
        res["build_seconds"] = time.perf_counter() - t
        log(f"built in {res['build_seconds']:.0f} s; grading in SQL once")
        with connect(path) as db:
            t = time.perf_counter()
            th.grade_db(db)
            res["sql_grade_seconds"] = time.perf_counter() - t
            t = time.perf_counter()
            index = tuning.ScoreIndex.load(db)
            res["index_load_seconds"] = time.perf_counter() - t
            act = th.active(db)
            auth.add_user(db, "researcher", "benchmark password", "researcher")
        rows.append((f"live tuning, {index.n_scores:,} scores, {n_models} models", "", ""))
        rows.append(("load the score index once (cached by the page)", f"{res['index_load_seconds']:.1f} s", ""))
        rows.append(("for scale: grade every score in SQL (grade_db)", f"{res['sql_grade_seconds']:.1f} s", "once"))

        all_scores = {m: np.concatenate([a for k, a in index.arrays.items() if k[0] == m])
                      for m in ("bleu1", "rouge1", "cosine")}
        n_all = sum(len(a) for a in all_scores.values())

        def regrade_all():
            return sum(int(tuning.regrade(a, 0.2, 0.6).sum()) for a in all_scores.values())

        _, med, lo, hi = timed(regrade_all)
        res["regrade_all_ms"] = med * 1000
        rows.append((f"regrade all {n_all:,} scores under new cut-offs", *ms(med, lo, hi)))
        _, med, lo, hi = timed(lambda: index.counts("rouge1", "declarative", 0.2, 0.6))
        res["counts_ms"] = med * 1000
        rows.append(("tier counts of one (metric, type), binary search", *ms(med, lo, hi)))

        rng = np.random.default_rng(1)
        ex_scores = rng.uniform(0, 1, 300)
        ex_tiers = np.clip((ex_scores * 3).astype(int) + rng.choice([-1, 0, 1], 300), 0, 2)
        draft = {**act.cutoffs, ("rouge1", "declarative"): (0.2, 0.6)}

        def slider_move():
            index.counts("rouge1", "declarative", 0.2, 0.6)
            tuning.against_experts(ex_scores, ex_tiers, 0.2, 0.6)
            tuning.leaderboard(index, draft)
            return tuning.leaderboard(index, act.cutoffs)

        _, med, lo, hi = timed(slider_move)
        res["slider_compute_ms"] = med * 1000
        rows.append(("one slider move's numbers (shares, experts, 2 leaderboards)", *ms(med, lo, hi)))

        log("slider moves on the real page (AppTest)")
        import os

        from streamlit.testing.v1 import AppTest

        from webui.page import TEST_TOKEN_KEY

        os.environ["MEDEVAL_DB"] = str(path)
        with connect(path) as db:
            token = auth.create_session(db, auth.authenticate(db, "researcher", "benchmark password"))
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state[TEST_TOKEN_KEY] = token
        t = time.perf_counter()
        at.run()
        at.switch_page("app_pages/tuning.py").run()
        at.selectbox(key="tune_metric").set_value("rouge1").run()
        at.selectbox(key="tune_type").set_value("declarative").run()
        res["page_first_load_seconds"] = time.perf_counter() - t
        assert not at.exception, at.exception
        moves = []
        for k in range(11):
            lo_, hi_ = 0.05 + 0.01 * k, 0.5 + 0.01 * k
            t = time.perf_counter()
            at.slider(key="cut_rouge1_declarative").set_value((lo_, hi_)).run()
            moves.append(time.perf_counter() - t)
            assert not at.exception, at.exception
        moves = moves[1:]
        res["slider_page_ms"] = statistics.median(moves) * 1000
        rows.append(("slider move on the page, end to end (AppTest, 10 moves)", f"{res['slider_page_ms']:.0f} ms",
                     f"min-max {min(moves) * 1000:.0f}-{max(moves) * 1000:.0f} ms; first load "
                     f"{res['page_first_load_seconds']:.1f} s (index load included)"))
    text = "\n".join([f"machine: {res['machine']}, {res['cpus']} CPUs, load {res['loadavg_start']}",
                      *table_lines(rows)])
    finish(res, text, time.perf_counter() - _T_PROCESS, args.json)


if __name__ == "__main__":
    main()
