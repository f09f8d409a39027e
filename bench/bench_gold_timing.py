#!/usr/bin/env python
"""Does the server's time give a hidden gold item away? (issue 23 §3)

    .venv/bin/python bench/bench_gold_timing.py            # about 20 s
    .venv/bin/python bench/bench_gold_timing.py --reps 50

A temporary database: 12 diseases x 4 aspects x 2 models, a random campaign of 40 items for two annotators
(k = 2), 10 gold items, a hidden share of 0.2 (so about a fifth of the queue is gold). For one annotator it walks
the whole queue as the Grade page does: for every screen it times ``grading_state`` (what draws the screen: the
next item, gold or real, with its opaque key) ``--reps`` times on a pooled connection, then the save of the answer
(``submit_answer``, once: a save cannot be repeated). It prints the medians and spreads for gold and real screens
and the difference of the medians against the spread within each kind -- the server-side part of what a
keystroke-to-next-item time could show. Network, Streamlit and the browser add their own jitter on top (the grading
benchmark's p95 - median is tens of milliseconds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.benchlib import loadavg  # noqa: E402
from medeval.accounts import auth  # noqa: E402
from medeval.annotation import campaigns as cp  # noqa: E402
from medeval.annotation import gold
from medeval.engine.importer import import_files  # noqa: E402
from medeval.store.db import connect, pooled  # noqa: E402

ASPECTS = ("Primary Symptoms", "Medications", "Physical Examinations", "Secondary Diseases")
PW = "bench password 123"


def build(folder: Path) -> tuple[str, int]:
    path = str(folder / "gold_timing.db")
    kb = ["disease,aspect,reference"] + [f"病{d},{a},参考答案{d}{i}" for d in range(12) for i, a in enumerate(ASPECTS)]
    resp = ["model,disease,aspect,response"] + [f"M{m},病{d},{a},回答{m}{d}{i}" for m in "AB" for d in range(12)
                                                for i, a in enumerate(ASPECTS)]
    (folder / "kb.csv").write_text("\n".join(kb) + "\n", encoding="utf-8")
    (folder / "r.csv").write_text("\n".join(resp) + "\n", encoding="utf-8")
    (folder / "m.csv").write_text("model,backbone,kind\nMA,,general\nMB,MA,medical\n", encoding="utf-8")
    with connect(path) as db:
        import_files(db, kb=folder / "kb.csv", responses=folder / "r.csv", models=folder / "m.csv")
        with db.conn:
            db.conn.executemany("INSERT INTO scores (response_id, metric, scorer, score) VALUES (?, 'rouge1', 'rouge1', ?)",
                                [(r, (r % 10) / 10) for (r,) in db.conn.execute("SELECT id FROM responses")])
        for name, role in (("aa", "annotator"), ("bb", "annotator"), ("res", "researcher")):
            auth.add_user(db, name, PW, role)
        cid = cp.create_random_campaign(db, "timing", 40, ["aa", "bb"], k=2, seed=3, actor=None)
        res = auth.get_user(db, "res")
        free = [r for (r,) in db.conn.execute(
            "SELECT id FROM responses WHERE id NOT IN (SELECT response_id FROM campaign_items) ORDER BY id LIMIT 10")]
        for r in free:
            gold.mark_gold(db, cid, r, 1, f"reason {r}", actor=res)
        gold.set_settings(db, cid, {"hidden_share": 0.2}, actor=res)
    return path, cid


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=30, help="timings of each screen's draw (default 30)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="medeval-gold-timing-") as tmp:
        path, cid = build(Path(tmp))
        draw: dict[str, list[float]] = {"gold": [], "real": []}
        save: dict[str, list[float]] = {"gold": [], "real": []}
        with pooled(path) as db:
            aa = auth.get_user(db, "aa")
        n = 0
        while True:
            times = []
            for _ in range(args.reps):
                with pooled(path) as db:
                    t0 = time.perf_counter()
                    s = cp.grading_state(db, aa, cid)
                    times.append(time.perf_counter() - t0)
            if s.item is None:
                break
            kind = "gold" if s.item.ref.startswith("h:") else "real"
            draw[kind].append(statistics.median(times))
            with pooled(path) as db:
                t0 = time.perf_counter()
                cp.submit_answer(db, aa, cid, s.item.ref, tier=1, client_token=f"t{n}")
                save[kind].append(time.perf_counter() - t0)
            n += 1
    print(f"medeval hidden-gold timing -- {n} screens ({len(draw['gold'])} gold, {len(draw['real'])} real), "
          f"{args.reps} draws each; load average {loadavg()}")
    for name, d in (("draw the screen (grading_state)", draw), ("save the answer (submit_answer)", save)):
        print(name)
        for kind in ("real", "gold"):
            v = sorted(d[kind])
            print(f"  {kind}: median {1000 * statistics.median(v):.2f} ms, min {1000 * v[0]:.2f}, "
                  f"max {1000 * v[-1]:.2f}, spread (sd) {1000 * statistics.pstdev(v):.2f} ms")
        diff = statistics.median(d["gold"]) - statistics.median(d["real"])
        print(f"  gold - real (medians): {1000 * diff:+.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
