"""Task campaigns (medeval.annotation.tasks): what one keystroke costs on the server, and how long the results take.

Builds a temporary database with synthetic cases (questions x 3 models, two judges), a rubric campaign
with the judge's part 2 (5 annotators, k = 3) and a preference campaign between the judges, answers every
question through the library exactly as the annotate page does (``task_state`` to draw the screen, then
``submit_answer``), and times:

* drawing the screen (``task_state``: progress, next item, its blind view) and saving one answer;
* the results of each campaign (``tasks.results``, bootstrap CIs included);
* for the preference results, ``medeval.stats.preference.summarise`` on the same choices directly, as the
  reference for what the task layer adds.

    .venv/bin/python bench/bench_tasks.py            # 200 questions: about a minute on 2 cores
    .venv/bin/python bench/bench_tasks.py --quick    # 40 questions
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.benchlib import cpu_model, finish, loadavg, log, table_lines  # noqa: E402
from medeval.accounts.auth import add_user, get_user  # noqa: E402
from medeval.annotation import cases as cs  # noqa: E402
from medeval.annotation import tasks  # noqa: E402
from medeval.stats import preference as pf  # noqa: E402
from medeval.store.db import connect  # noqa: E402

MODELS = ("model-a", "model-b", "model-c")


def build(folder: Path, n_questions: int, rng: np.random.Generator) -> Path:
    cases, resp, judge = [], [], []
    for i in range(n_questions):
        cases.append({"id": f"c{i}", "title": f"病例{i}", "description": "男，58岁，胸痛2小时。" * 5,
                      "QA_pairs": [{"question": "最可能的诊断是什么？", "answer": "急性心肌梗死。" * 4}]})
        for m in MODELS:
            resp.append({"case": f"c{i}", "question": 1, "model": m, "response": f"{m}：考虑急性冠脉综合征。" * 6})
        for j in ("judge-1", "judge-2"):
            scores = rng.integers(1, 6, size=3)
            judge.append({"case": f"c{i}", "question": 1, "judge": j, "models": list(MODELS),
                          "rationale": " ".join(f"Doctor {k + 1}: {s} points." for k, s in enumerate(scores))})
    paths = {}
    for name, rows in (("cases.json", None), ("resp.jsonl", resp), ("judge.jsonl", judge)):
        p = folder / name
        if rows is None:
            p.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
        else:
            p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
        paths[name] = p
    db_path = folder / "bench.db"
    with connect(db_path) as db:
        cs.import_cases(db, "bench", cases=paths["cases.json"], responses=paths["resp.jsonl"],
                        judgements=paths["judge.jsonl"])
        for n in range(5):
            add_user(db, f"doc{n}", "bench-password-1", "annotator")
    return db_path


def answer_everything(db_path: Path, cid: int, pick, rng) -> tuple[list[float], list[float]]:
    draw, save = [], []
    with connect(db_path) as db:
        users = [get_user(db, f"doc{n}") for n in range(5)]
    for u in users:
        while True:
            with connect(db_path, migrate=False) as db:  # a new connection per operation, as the page does
                t0 = time.perf_counter()
                s = tasks.task_state(db, u, cid)
                draw.append(time.perf_counter() - t0)
            if s.item is None:
                break
            q = s.item.pending
            with connect(db_path, migrate=False) as db:
                t0 = time.perf_counter()
                tasks.submit_answer(db, u, s.item.item_id, q.id, pick(q, rng),
                                    client_token=f"{s.item.item_id}:{s.item.revision}:{q.id}")
                save.append(time.perf_counter() - t0)
    return draw, save


def ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"median {1000 * statistics.median(xs):.1f} ms, p95 {1000 * xs[int(0.95 * (len(xs) - 1))]:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    n_q = 40 if args.quick else 200
    rng = np.random.default_rng(20261122)
    res: dict = {"cpu": cpu_model(), "loadavg_start": loadavg(), "questions": n_q}
    start = time.perf_counter()
    rows = [("Task campaigns", "", "")]
    with tempfile.TemporaryDirectory() as tmp:
        db_path = build(Path(tmp), n_q, rng)
        log(f"{n_q} questions x 3 models, 2 judges imported")
        with connect(db_path) as db:
            rub = tasks.create_campaign(db, "rubric", "bench rubric", [f"doc{n}" for n in range(5)], k=3, seed=1,
                                        config={"dataset": "bench", "judge": "judge-1"}, actor=None)
            pref = tasks.create_campaign(db, "preference", "bench pref", [f"doc{n}" for n in range(5)], k=3,
                                         seed=1, config={"dataset": "bench", "compare": "judges"}, actor=None)
        draw, save = answer_everything(db_path, rub, lambda q, r: str(int(r.integers(1, 6))), rng)
        n_answers = len(save)
        rows += [("rubric: answers given (9 + 3 per item, 3 annotators)", f"{n_answers}", ""),
                 ("  draw the screen (task_state)", ms(draw), ""),
                 ("  save one answer (submit_answer)", ms(save), "")]
        res["rubric"] = {"answers": n_answers,
                         "draw_median_ms": 1000 * statistics.median(draw),
                         "save_median_ms": 1000 * statistics.median(save)}
        log("rubric answered")
        draw_p, save_p = answer_everything(db_path, pref, lambda q, r: ("left", "right", "tie")[int(r.integers(0, 3))],
                                           rng)
        rows += [("preference: answers given", f"{len(save_p)}", ""),
                 ("  draw the screen", ms(draw_p), ""), ("  save one answer", ms(save_p), "")]
        with connect(db_path) as db:
            t0 = time.perf_counter()
            r = tasks.results(db, rub, actor=None)
            t_rub = time.perf_counter() - t0
            t0 = time.perf_counter()
            tasks.results(db, pref, actor=None)
            t_pref = time.perf_counter() - t0
            items = {iid: json.loads(p) for iid, p in db.conn.execute("SELECT id, payload FROM task_items")}
            lay = {(i, u): json.loads(x) for i, u, x in db.conn.execute(
                "SELECT a.item_id, u.username, a.layout FROM task_assignments a JOIN users u ON u.id = a.user_id")}
            choices = []
            for a in tasks.answers(db, pref):
                if a.question == "knowledge":
                    p, lr = items[a.item_id], lay[(a.item_id, a.annotator)]
                    left, right = (p["a"], p["b"]) if lr["left"] == "a" else (p["b"], p["a"])
                    choices.append((a.item_id, a.annotator, left["source"], right["source"], a.value))
            t0 = time.perf_counter()
            pf.summarise(choices, n_boot=500, rng=1)
            t_ref = time.perf_counter() - t0
        rows += [("results, rubric (per model, ICC + alpha per criterion, judge vs clinicians, part 2)",
                  f"{1000 * t_rub:.0f} ms", f"{len(r['sections'])} sections"),
                 ("results, preference (3 criteria)", f"{1000 * t_pref:.0f} ms",
                  f"preference.summarise alone, one criterion: {1000 * t_ref:.0f} ms "
                  f"(x3 = {3000 * t_ref:.0f} ms)")]
        res.update({"results_rubric_ms": 1000 * t_rub, "results_preference_ms": 1000 * t_pref,
                    "preference_summarise_one_criterion_ms": 1000 * t_ref,
                    "preference": {"draw_median_ms": 1000 * statistics.median(draw_p),
                                   "save_median_ms": 1000 * statistics.median(save_p)}})
    finish(res, "\n".join(table_lines(rows)), time.perf_counter() - start, args.json)


if __name__ == "__main__":
    main()
