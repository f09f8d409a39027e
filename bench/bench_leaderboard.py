"""The Leaderboard's reads at the paper's scale (issue 22 leftovers, issue 23): which scorers made a metric's scores,
and a set that is not active counted in memory instead of graded on a page view.

    .venv/bin/python bench/bench_leaderboard.py [--responses 575000] [--db /tmp/bench-leaderboard.db]

Builds (once, kept at --db) a database of ``--responses`` responses of 50 models with BLEU-1, ROUGE-1, cosine and
exact-match scores: 575,000 responses make 2.3 million scores, the paper's count. Then times, each the best of 3:

* ``SELECT DISTINCT scorer FROM scores WHERE metric = ?`` without the m020 index (before) and ``lb.scorers`` with it,
  and the scorer counts every report shows (``scorer_notes.scorers``) without and with it;
* creating the index on the existing database (what the m020 migration costs once);
* ``tier_counts`` of the active set (its stored grades) and ``lb.live_tier_counts`` of Table 12 never made active
  (what a page view now computes instead of grading 2.3 M scores into the database);
* ``lb.compare`` of the active set with Table 12, and the grading it replaces (``grade_db`` of Table 12, once),
  checking that the counts in memory equal the grades it wrote (they are then removed again).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.benchlib import loadavg, log  # noqa: E402
from medeval.engine import thresholds as th  # noqa: E402
from medeval.reports import leaderboard as lb  # noqa: E402
from medeval.reports import scorer_notes  # noqa: E402
from medeval.reports.tier_report import tier_counts  # noqa: E402
from medeval.store.db import connect  # noqa: E402

MODEL = "use-multilingual-v3@0.2.1"
TYPES = ("enumerated", "declarative", "numeric")


def build(path: Path, n_responses: int) -> None:
    if path.exists():
        return
    log(f"building {path} ({n_responses:,} responses, {4 * n_responses:,} scores)")
    rng = random.Random(1)
    n_models = 50
    n_kb = -(-n_responses // n_models)
    with connect(path) as db, db.conn:
        c = db.conn
        c.executemany("INSERT INTO kb_entries (id, disease, aspect, aspect_type, reference, processed) "
                      "VALUES (?, ?, ?, ?, 'ref', 'ref')",
                      [(i + 1, f"disease {i // 6}", f"aspect {i % 6}", TYPES[min(i % 6, 2)]) for i in range(n_kb)])
        c.executemany("INSERT INTO models (id, name, kind) VALUES (?, ?, 'general')",
                      [(m + 1, f"model {m:02d}") for m in range(n_models)])
        rows = [(m * n_kb + k + 1, m + 1, k + 1) for m in range(n_models) for k in range(n_kb)][:n_responses]
        c.executemany("INSERT INTO responses (id, model_id, kb_id, raw, processed) VALUES (?, ?, ?, 'a', 'a')", rows)
        tok = th.TABLE12.tokenizer
        for metric, scorer in (("bleu1", tok), ("rouge1", tok), ("cosine", MODEL), ("exact_match", th.EXACT_SCORER_ID)):
            c.executemany("INSERT INTO scores VALUES (?, ?, ?, ?)",
                          ((r[0], metric, scorer, rng.random()) for r in rows))
        c.execute("DROP INDEX IF EXISTS scores_metric_scorer")
    with connect(path) as db:
        th.adopt(db, 1, MODEL, created_by="bench", activate_it=True)  # v2 active (graded), v1 never active
        db.conn.execute("DROP INDEX IF EXISTS scores_metric_scorer")
        db.conn.commit()
        db.conn.execute("VACUUM")


def best(f, n: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(n):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--responses", type=int, default=575_000)
    ap.add_argument("--db", default="/tmp/bench-leaderboard.db")
    a = ap.parse_args()
    path = Path(a.db)
    build(path, a.responses)
    rows = []
    with connect(path, migrate=False) as db:
        c = db.conn
        c.execute("DROP INDEX IF EXISTS scores_metric_scorer")
        n = c.execute("SELECT count(*) FROM scores").fetchone()[0]
        rows.append(("scores", f"{n:,}", ""))
        t, _ = best(lambda: [c.execute("SELECT DISTINCT scorer FROM scores WHERE metric = ? ORDER BY 1", (m,)).fetchall()
                             for m in ("bleu1", "rouge1", "cosine")])
        rows.append(("DISTINCT scorer x3 metrics, no index (before)", f"{t * 1000:.0f} ms", "a scan of every score"))
        ts2 = th.load(db, 2)
        t, _ = best(lambda: scorer_notes.scorers(db, ts2))
        rows.append(("scorer_notes.scorers (each report), no index", f"{t * 1000:.0f} ms", "GROUP BY metric, scorer"))
        t0 = time.perf_counter()
        c.execute("CREATE INDEX scores_metric_scorer ON scores(metric, scorer)")
        c.commit()
        rows.append(("create the m020 index (once)", f"{time.perf_counter() - t0:.1f} s", ""))
        t, _ = best(lambda: [lb.scorers(db, m) for m in ("bleu1", "rouge1", "cosine")])
        rows.append(("lb.scorers x3 metrics (after)", f"{t * 1000:.2f} ms", "index seeks"))
        t, _ = best(lambda: scorer_notes.scorers(db, ts2))
        rows.append(("scorer_notes.scorers, with the index", f"{t * 1000:.0f} ms", "a scan of the index"))
        t, _ = best(lambda: tier_counts(db, 2), 2)
        rows.append(("tier_counts(active v2), stored grades", f"{t:.2f} s", ""))
        t, live = best(lambda: lb.live_tier_counts(db, 1), 2)
        rows.append(("lb.live_tier_counts(v1 never active)", f"{t:.2f} s", "in memory, nothing written"))
        t, _ = best(lambda: lb.compare(db, 2, 1), 1)
        rows.append(("lb.compare(v2, v1), both sides", f"{t:.2f} s", "v1 counted in memory"))
        t, (_, added) = best(lambda: th.grade_db(db, 1), 1)
        rows.append(("grade_db(v1): what a page view did before", f"{t:.1f} s", f"{added:,} grades written"))
        assert lb.live_tier_counts(db, 1) == tier_counts(db, 1) == live, "live counts differ from the grades"
        rows.append(("live counts == stored grades of v1", "yes", ""))
        with db.conn:
            db.conn.execute("DELETE FROM grades WHERE version = 1")  # the next run starts as this one did
    rows.append(("load average (1, 5, 15 min) at the end", str(loadavg()), "2-core machine shared with others"))
    for name, value, note in rows:
        print(f"{name:48s} {value:>12s}  {note}")


if __name__ == "__main__":
    main()
