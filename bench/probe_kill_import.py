#!/usr/bin/env python
"""Probe: an import, then ``kill -9`` of an app process, while annotators grade through nginx (docs/SECURITY.md).

    .venv/bin/python bench/probe_kill_import.py            # 12 annotators, 2 app processes; about 2-3 minutes
    .venv/bin/python bench/probe_kill_import.py --annotators 30 --json bench/out/probe-kill.json

``scripts/serve.sh --workers 2`` (nginx, TLS, sticky sessions) on the benchmark database of
``bench/bench_grading.py``; its annotators sign in and grade through nginx over HTTPS/wss at 0.5-1.5 s
think time. After 10 s, ``python -m medeval import`` adds 20 new models' responses (one per knowledge-base
entry each, traditional Chinese text) while they grade; 5 s after the import, the first app process is
killed with SIGKILL. A client whose websocket drops reconnects with its cookie (nginx sends it to the
other process) and goes on. After 25 s more everything stops and the database is compared with the
clicks: every answered grade stored once; a grade in flight at the kill stored or not, never twice, and
if not stored the same item shown again. Prints JSON; exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import random
import signal
import sqlite3
import ssl
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_grading import SEED, Annotator, ProxyServer, build_db, percentile, scan_log  # noqa: E402
from bench.benchlib import loadavg, log  # noqa: E402

THINK = (0.5, 1.5)


def write_import(folder: Path, db_path: Path, n_models: int = 20) -> tuple[Path, Path, int]:
    conn = sqlite3.connect(db_path)
    kb = conn.execute("SELECT disease, aspect FROM kb_entries").fetchall()
    conn.close()
    models, responses = folder / "models.csv", folder / "responses.csv"
    names = [f"ProbeModel{i:02d}" for i in range(n_models)]
    with open(models, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["model", "backbone", "kind"])
        w.writerows([n, "", "general"] for n in names)
    rng, rows = random.Random(1), 0
    with open(responses, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["model", "disease", "aspect", "response"])
        for n in names:
            for disease, aspect in kb:
                w.writerow([n, disease, aspect, "患者應多休息，按時服藥；若持續發熱請就醫。" * rng.randint(1, 6)])
                rows += 1
    return models, responses, rows


def latency(recs: list[dict]) -> dict:
    lat = [r["latency"] for r in recs if r.get("latency") is not None]
    return {"grades": len(lat), "median_ms": 1000 * statistics.median(lat) if lat else None,
            "p95_ms": 1000 * percentile(lat, 95) if lat else None}


async def grader(c: Annotator, stop: asyncio.Event, events: list) -> None:
    while not stop.is_set():
        await asyncio.sleep(c.rng.uniform(*THINK))
        if not c.broken:
            await c.grade("probe")
            continue
        in_flight = c.clicks[-1]["item"]
        try:
            await c.connect()
            c.broken = False
            events.append({"user": c.username, "in_flight_item": in_flight, "now_on": c.page.item_id})
        except Exception as e:  # noqa: BLE001 -- reported, and tried again
            events.append({"user": c.username, "reconnect_failed": repr(e)[:200]})
            await asyncio.sleep(1)


def check(db_path: Path, campaign_id: int, clients: list[Annotator], events: list) -> dict:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        per_user = dict(conn.execute(
            "SELECT u.username, count(*) FROM grade_annotations g JOIN users u ON u.id = g.user_id JOIN assignments a "
            "ON a.item_id = g.item_id AND a.user_id = g.user_id WHERE a.campaign_id = ? GROUP BY u.username",
            (campaign_id,)).fetchall())
        dups = conn.execute("SELECT count(*) FROM (SELECT 1 FROM grade_annotations WHERE supersedes IS NULL "
                            "GROUP BY user_id, item_id HAVING count(*) > 1)").fetchone()[0]
    finally:
        conn.close()
    answered = {c.username: sum(1 for r in c.clicks if r["sent"] and r.get("latency") is not None) for c in clients}
    cut = {c.username: sum(1 for r in c.clicks if r["sent"] and r.get("latency") is None) for c in clients}
    stored_in_flight = {u: per_user.get(u, 0) - answered[u] for u in answered}
    reconnected = [e for e in events if "now_on" in e]
    out = {"clicks_answered": sum(answered.values()), "rows": sum(per_user.values()),
           "clicks_cut_by_the_kill": sum(cut.values()), "of_which_stored": sum(stored_in_flight.values()),
           "answered_but_not_stored": [u for u, d in stored_in_flight.items() if d < 0],
           "more_rows_than_clicks": [u for u, d in stored_in_flight.items() if d > cut[u]],
           "items_graded_twice": dups, "reconnected": len(reconnected),
           "reconnect_failures": [e for e in events if "reconnect_failed" in e],
           "same_item_again_after_reconnect": sum(e["now_on"] == e["in_flight_item"] for e in reconnected)}
    out["pass"] = (not out["answered_but_not_stored"] and not out["more_rows_than_clicks"] and dups == 0
                   and not out["reconnect_failures"] and out["reconnected"] == out["clicks_cut_by_the_kill"]
                   and out["same_item_again_after_reconnect"] == out["reconnected"] - out["of_which_stored"])
    return out


async def run(args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="probe-kill-", dir=args.tmp))
    users = [f"bench{i:03d}" for i in range(1, args.annotators + 1)]
    db = tmp / "probe.db"
    log(f"building the database: demo data, {args.annotators} annotators")
    data = build_db(db, users, 200, SEED)
    server = ProxyServer(db, tmp / "run", 2)
    tls = ssl.create_default_context()
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE  # serve.sh's self-signed certificate
    clients = [Annotator(u, server.port, SEED, tls) for u in users]
    out: dict = {"loadavg_start": loadavg(), "annotators": args.annotators}
    try:
        for c in clients:
            c.sign_in()
        await asyncio.gather(*(c.connect() for c in clients))
        stop, events = asyncio.Event(), []
        tasks = [asyncio.create_task(grader(c, stop, events)) for c in clients]
        await asyncio.sleep(10)
        models, responses, rows = write_import(tmp, db)
        mark = {c.username: len(c.clicks) for c in clients}
        log(f"importing {rows} responses while they grade")
        t0 = time.perf_counter()
        imp = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "medeval", "import", "--db", str(db), "--responses", str(responses), "--models",
            str(models), cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        said, _ = await imp.communicate()
        out["import"] = {"responses": rows, "seconds": time.perf_counter() - t0, "exit": imp.returncode,
                         "said": said.decode(errors="replace").strip()[-300:]}
        out["grading_during_import"] = latency([r for c in clients for r in c.clicks[mark[c.username]:]])
        await asyncio.sleep(5)
        port, pid = next(iter(server.app_pids.items()))
        mark = {c.username: len(c.clicks) for c in clients}
        log(f"kill -9 of the app process on port {port} (pid {pid})")
        os.kill(pid, signal.SIGKILL)
        out["killed"] = {"port": port, "pid": pid}
        await asyncio.sleep(25)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        out["grading_after_kill"] = latency([r for c in clients for r in c.clicks[mark[c.username]:]])
    finally:
        for c in clients:
            try:
                await c.close()
            except Exception:  # noqa: BLE001
                pass
        server.stop()
    out["check"] = check(db, data["campaign_id"], clients, events)
    out["server_log"] = scan_log(server.logs())
    out["loadavg_end"] = loadavg()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--annotators", type=int, default=12)
    ap.add_argument("--json", metavar="PATH", help="also write the result to PATH")
    ap.add_argument("--tmp", default="/tmp")
    args = ap.parse_args(argv)
    out = asyncio.run(run(args))
    text = json.dumps(out, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text, encoding="utf-8")
    return 0 if out["check"]["pass"] and out["server_log"]["tracebacks"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
