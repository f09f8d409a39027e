#!/usr/bin/env python
"""Benchmark of grading in the web app: server time from a grade keystroke to the next item, 1 and 30 annotators.

    .venv/bin/python bench/bench_grading.py            # full run: about 4-8 minutes on 2 cores
    .venv/bin/python bench/bench_grading.py --quick    # fewer grades: about 1.5 minutes
    .venv/bin/python bench/bench_grading.py --json bench/out/grading.json
    .venv/bin/python bench/bench_grading.py --server-arg=--runner.postScriptGC=false   # try a server option
    .venv/bin/python bench/bench_grading.py --proxy-workers 2   # 60 annotators through nginx, 2 app processes

With ``--proxy-workers N`` the server is ``scripts/serve.sh --workers N`` instead: N app processes behind
nginx (TLS, sticky sessions), and the clients go through nginx over HTTPS (wss://); the default phases
become 60 annotators x 20 grades at 0.5-1.5 s think time, and the CPU time is given per app process and
for nginx.

It starts the real server (``streamlit run server.py``, one process, as ``scripts/start.sh``
does, in the repository root so ``.streamlit/config.toml`` applies) on a free port of
127.0.0.1 against a temporary database: the demo data (``python -m medeval demo``: 2,880
scored responses), annotators ``bench001``...``bench030`` and a random campaign
(``create_random_campaign``, k = 3) that gives each of them enough items for every phase.

The annotators are simulated clients that speak Streamlit's own protocol, as the browser
does: ``POST /signin`` for the session cookie, then a WebSocket to ``/_stcore/stream``
(subprotocol ``streamlit``, the cookie and a same-origin ``Origin``) carrying ``BackMsg``
protobufs. A grade keystroke is what the browser sends for the shortcut 1/2/3: a
``rerun_script`` BackMsg whose widget states hold the grade button
(``grade_<item>_<tier>``, its id read from the ``Button`` element of the previous
run) with ``trigger_value = true``. The time measured runs from sending it until the
``script_finished`` ForwardMsg (FINISHED_SUCCESSFULLY, or FINISHED_FRAGMENT_RUN_SUCCESSFULLY when the buttons
are drawn in a fragment: the browser then sends the fragment's id and only the fragment reruns) of that rerun arrives, i.e. the
button's callback has written the grade (``campaigns.submit_grade``) and every delta of the
next item has been sent. Browser rendering is not included. 30 Chromium tabs on a 2-core
machine would take the CPU the server needs, which is why the clients are not browsers.

Phases (the same server throughout; the tier of each grade is drawn at random, seeded):

1. **1 annotator**: ``bench001`` alone (the others are not connected yet), after 3
   untimed warm-up grades: 40 grades with a think time of 0.5-1.5 s before each, then
   40 back to back (the next keystroke as soon as the item is there);
2. **30 annotators**, all signed in and connected, each giving N grades with a think time
   drawn uniformly from LO-HI s before each one (``--concurrent LO,HI:N``); by default
   20 grades at 0.5-1.5 s (a fast pace that saturates the server), 10 grades at 5-15 s
   (about the pace of a doctor reading the answer), then 20 back to back (the worst case).

Checks: every rerun shows the "Saved" message and a different next item; the items come
in each annotator's assignment order; the database holds exactly one grade per click with
the tier clicked (none lost, none duplicated); no ``Not saved`` error, exception element
or timeout; the server log has no ``database is locked`` and no traceback. The exit status
is 1 when a check fails.

Progress goes to stderr; the machine info and the table go to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import http.cookies
import math
import os
import platform
import random
import re
import resource
import shutil
import socket
import sqlite3
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from types import SimpleNamespace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import sqlite_utils  # noqa: E402
import websockets  # noqa: E402
from streamlit.proto.Alert_pb2 import Alert  # noqa: E402
from streamlit.proto.BackMsg_pb2 import BackMsg  # noqa: E402
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402

from bench.benchlib import cpu_model as benchlib_cpu_model  # noqa: E402
from bench.benchlib import finish, loadavg, log, table_lines

SEED = 20240611
PASSWORD = "bench-grading-password"
COOKIE = "medeval_session"  # webui.COOKIE_NAME
RERUN_TIMEOUT_S = 120.0
GRADE_KEY = re.compile(r"-grade_(k[0-9a-f]+|\d+)_([012])$")  # "$$ID-<hash>-grade_<item key>_<tier>" (an id before 23 §3)

# concurrent phases: (think time low, high, grades per annotator); think None = back to back
SIZES = {
    "full": dict(annotators=30, warmup=3, single=40, single_think=(0.5, 1.5),
                 concurrent=[(0.5, 1.5, 20), (5.0, 15.0, 10), (None, None, 20)]),
    "quick": dict(annotators=30, warmup=3, single=15, single_think=(0.5, 1.5),
                  concurrent=[(0.5, 1.5, 5), (None, None, 5)]),
}


# ---------------------------------------------------------------- machine info

def machine_info() -> dict:
    from importlib.metadata import version

    cpu_model = benchlib_cpu_model()
    pkgs = {}
    for p in ("streamlit", "uvicorn", "starlette", "websockets", "protobuf", "sqlite-utils", "argon2-cffi"):
        try:
            pkgs[p] = version(p)
        except Exception:
            pkgs[p] = "?"
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"cpu_count": os.cpu_count(), "cpus_usable": usable, "cpu_model": cpu_model,
            "python": platform.python_version(), "platform": platform.platform(), "sqlite": sqlite3.sqlite_version,
            "packages": pkgs, "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "loadavg_start": loadavg()}


# ---------------------------------------------------------------- database and server

def build_db(path: Path, usernames: list[str], per_user: int, seed: int) -> dict:
    """The demo database plus the benchmark annotators and a random campaign with >= per_user items each."""
    t0 = time.perf_counter()
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    subprocess.run([sys.executable, "-m", "medeval", "demo", "--db", str(path)], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t_demo = time.perf_counter() - t0
    from medeval.accounts import auth
    from medeval.annotation import campaigns as cp
    from medeval.store.db import connect

    k = min(3, len(usernames))
    n_items = math.ceil(per_user * len(usernames) / k)
    with connect(path) as db:
        for u in usernames:
            auth.add_user(db, u, PASSWORD, "annotator")
        cid = cp.create_random_campaign(db, "Grading benchmark", n_items, usernames, k=k, seed=seed, actor=None)
        loads = [n for (n,) in db.conn.execute(
            "SELECT count(*) FROM assignments WHERE campaign_id = ? GROUP BY user_id", (cid,))]
    return {"campaign_id": cid, "items": n_items, "k": k, "items_per_annotator_min": min(loads),
            "items_per_annotator_max": max(loads), "demo_build_seconds": t_demo,
            "build_seconds": time.perf_counter() - t0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    try:
        rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def _rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class ProxyServer:
    """``scripts/serve.sh --workers N``: N app processes behind nginx (HTTPS) on free ports; ``stop`` ends them."""

    def __init__(self, db_path: Path, run_dir: Path, workers: int):
        self.run_dir, self.workers = run_dir, workers
        self.port = free_port()
        first = free_port()
        while any(not _port_free(p) for p in range(first, first + workers)):
            first = free_port()
        self.worker_ports = list(range(first, first + workers))
        self.env = dict(os.environ, MEDEVAL_DB=str(db_path), MEDEVAL_RUN_DIR=str(run_dir))
        self.env.pop("MEDEVAL_DEMO", None)
        t0 = time.perf_counter()
        r = subprocess.run(["bash", "scripts/serve.sh", "--workers", str(workers), "--port", str(self.port),
                            "--first-port", str(first), "--listen", "127.0.0.1", "start"], cwd=ROOT, env=self.env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.stop()
            raise RuntimeError(f"scripts/serve.sh start failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
        self.start_seconds = time.perf_counter() - t0
        self.app_pids = {p: int((run_dir / f"worker-{p}.pid").read_text()) for p in self.worker_ports}
        master = int((run_dir / "nginx.pid").read_text())
        self.nginx_pids = [master] + [int(st.parent.name) for st in Path("/proc").glob("[0-9]*/stat")
                                      if _ppid(st) == master]
        self.pid = master

    def cpu_parts(self) -> dict[str, float]:
        parts = {f"app :{p}": _cpu_seconds(pid) for p, pid in self.app_pids.items()}
        parts["nginx"] = sum(_cpu_seconds(pid) for pid in self.nginx_pids)
        return parts

    def cpu_seconds(self) -> float:
        return sum(self.cpu_parts().values())

    def rss_mib(self) -> float | None:
        rss = [_rss_mib(pid) for pid in self.app_pids.values()]
        return None if None in rss else sum(rss)

    def logs(self) -> list[Path]:
        return [self.run_dir / "logs" / f"worker-{p}.log" for p in self.worker_ports]

    def stop(self) -> None:
        subprocess.run(["bash", "scripts/serve.sh", "stop"], cwd=ROOT, env=self.env, capture_output=True)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _ppid(stat: Path) -> int | None:
    try:
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


class Server:
    """``streamlit run server.py`` in the repository root (so .streamlit/config.toml applies), on a free port."""

    def __init__(self, db_path: Path, log_path: Path, extra_args: list[str] = ()):
        self.port = free_port()
        self.log_path = log_path
        env = dict(os.environ, MEDEVAL_DB=str(db_path))
        env.pop("MEDEVAL_DEMO", None)
        cmd = [sys.executable, "-m", "streamlit", "run", "server.py", "--server.headless=true",
               "--server.address=127.0.0.1", f"--server.port={self.port}", "--browser.gatherUsageStats=false",
               "--server.fileWatcherType=none", *extra_args]
        self._log = open(log_path, "wb")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}; see {log_path}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the server did not answer /_stcore/health within 90 s; see {log_path}")
            time.sleep(0.2)
        self.start_seconds = time.perf_counter() - t0

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server process so far (from /proc; it starts no children)."""
        return _cpu_seconds(self.proc.pid)

    def rss_mib(self) -> float | None:
        return _rss_mib(self.proc.pid)

    def cpu_parts(self) -> dict[str, float]:
        return {"app": self.cpu_seconds()}

    def logs(self) -> list[Path]:
        return [self.log_path]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


# ---------------------------------------------------------------- a simulated annotator

@dataclass
class Page:
    """What one script run sent: the item on screen and its grade buttons, alerts, exceptions, timings."""

    status: str = ""
    item_id: str | None = None  # the item's opaque screen key (medeval.annotation.screen_keys.screen_key)
    grade_ids: dict[int, str] = field(default_factory=dict)  # tier -> widget id
    fragment_id: str = ""  # the fragment the grade buttons are drawn in ("": the page has none)
    alerts: list[tuple[int, str]] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    messages: int = 0
    t_first_delta: float | None = None
    t_done: float | None = None


class Annotator:
    def __init__(self, username: str, port: int, seed: int, tls: ssl.SSLContext | None = None):
        self.username = username
        self.port = port
        self.tls = tls  # through nginx: HTTPS and wss:// (the self-signed certificate is not verified)
        self.rng = random.Random(f"{seed}-{username}")
        self.cookie: str | None = None
        self.ws = None
        self.page: Page | None = None
        self.page_hash = ""  # the page's script hash, as the browser sends it back with every rerun
        self.clicks: list[dict] = []  # every grade sent (warm-ups included), in order
        self.broken = False  # after a timeout or a lost connection this client stops grading

    def sign_in(self) -> float:
        """``POST /signin`` as the sign-in form does; keeps the session cookie. Returns the seconds it took."""
        conn = (http.client.HTTPSConnection("127.0.0.1", self.port, timeout=60, context=self.tls) if self.tls
                else http.client.HTTPConnection("127.0.0.1", self.port, timeout=60))
        body = urllib.parse.urlencode({"username": self.username, "password": PASSWORD, "next": "/grade"})
        t0 = time.perf_counter()
        conn.request("POST", "/signin", body, {"Content-Type": "application/x-www-form-urlencoded",
                                               "Origin": f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"})
        resp = conn.getresponse()
        resp.read()
        dt = time.perf_counter() - t0
        conn.close()
        jar = http.cookies.SimpleCookie(resp.getheader("Set-Cookie") or "")
        if resp.status != 303 or COOKIE not in jar:
            raise RuntimeError(f"sign-in of {self.username} failed: HTTP {resp.status}")
        self.cookie = jar[COOKIE].value
        return dt

    async def connect(self) -> float:
        """Open the WebSocket and run the script once (the page load). Returns the seconds the first run took."""
        http_, ws_ = ("https", "wss") if self.tls else ("http", "ws")
        self.ws = await websockets.connect(
            f"{ws_}://127.0.0.1:{self.port}/_stcore/stream", subprotocols=["streamlit"], max_size=None,
            origin=f"{http_}://127.0.0.1:{self.port}", additional_headers={"Cookie": f"{COOKIE}={self.cookie}"},
            open_timeout=60, **({"ssl": self.tls} if self.tls else {}))
        self.page = await self.rerun()
        if self.page.item_id is None:
            raise RuntimeError(f"{self.username}: no item to grade on the first page "
                               f"(alerts {self.page.alerts}, exceptions {self.page.exceptions})")
        return self.page.t_done

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def rerun(self, trigger: str | None = None, fragment_id: str = "") -> Page:
        """Send a rerun (with one button pressed; of ``fragment_id`` only, as the browser does for a button drawn in
        a fragment) and read ForwardMsgs up to this run's script_finished."""
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = ""
        cs.page_script_hash = self.page_hash
        if fragment_id:
            cs.fragment_id = fragment_id
        cs.widget_states.SetInParent()
        if trigger is not None:
            w = cs.widget_states.widgets.add()
            w.id = trigger
            w.trigger_value = True
        page = Page()
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        deadline = t0 + RERUN_TIMEOUT_S
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), timeout=max(0.001, deadline - time.perf_counter()))
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            page.messages += 1
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fm.new_session.page_script_hash
            elif kind == "delta":
                if page.t_first_delta is None:
                    page.t_first_delta = time.perf_counter() - t0
                if fm.delta.WhichOneof("type") != "new_element":
                    continue
                el = fm.delta.new_element
                et = el.WhichOneof("type")
                if et == "button":
                    m = GRADE_KEY.search(el.button.id)
                    if m:
                        page.item_id = m.group(1)
                        page.grade_ids[int(m.group(2))] = el.button.id
                        page.fragment_id = fm.delta.fragment_id
                elif et == "alert":
                    page.alerts.append((el.alert.format, el.alert.body))
                elif et == "exception":
                    page.exceptions.append(f"{el.exception.type}: {el.exception.message}")
            elif kind == "script_finished":
                status = ForwardMsg.ScriptFinishedStatus.Name(fm.script_finished)
                if fm.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # not ours (never expected: a client sends one rerun at a time)
                page.status = status
                page.t_done = time.perf_counter() - t0
                return page

    async def grade(self, phase: str) -> dict:
        """Press 1, 2 or 3 (seeded at random) on the item on screen; check what comes back."""
        before = self.page
        tier = self.rng.randrange(3)
        rec = {"user": self.username, "phase": phase, "item": before.item_id, "tier": tier, "latency": None,
               "first_delta": None, "next_item": None, "problems": [], "sent": False}
        self.clicks.append(rec)
        if tier not in before.grade_ids:
            self.broken = True
            rec["problems"].append("no grade button on the page")
            return rec
        rec["sent"] = True
        try:
            page = await self.rerun(before.grade_ids[tier], before.fragment_id)
        except asyncio.TimeoutError:
            self.broken = True
            rec["problems"].append(f"timeout: no script_finished within {RERUN_TIMEOUT_S:.0f} s")
            return rec
        except websockets.ConnectionClosed as e:
            self.broken = True
            rec["problems"].append(f"WebSocket closed: {e}")
            return rec
        rec.update(latency=page.t_done, first_delta=page.t_first_delta, next_item=page.item_id,
                   messages=page.messages)
        if page.status not in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"):
            rec["problems"].append(f"script finished with {page.status}")
        for fmt, body in page.alerts:
            if fmt == Alert.ERROR:
                rec["problems"].append(f"error shown: {body}")
        if not any(fmt == Alert.SUCCESS and body.startswith("Saved:") for fmt, body in page.alerts):
            rec["problems"].append("no 'Saved' message")
        rec["problems"] += [f"exception shown: {e}" for e in page.exceptions]
        if page.item_id is None:
            rec["problems"].append("no next item")
        elif page.item_id == before.item_id:
            rec["problems"].append("the same item again")
        self.page = page
        return rec


# ---------------------------------------------------------------- phases

def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    s = sorted(values)
    pos = (len(s) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summary(recs: list[dict]) -> dict:
    lat = [r["latency"] for r in recs if r["latency"] is not None]
    first = [r["first_delta"] for r in recs if r["first_delta"] is not None]
    msgs = [r["messages"] for r in recs if r.get("messages")]
    out = {"grades": len(recs), "timed": len(lat), "problems": sum(bool(r["problems"]) for r in recs),
           "messages_median": statistics.median(msgs) if msgs else None}
    if lat:
        out.update(median_s=statistics.median(lat), p95_s=percentile(lat, 95), max_s=max(lat), min_s=min(lat),
                   mean_s=statistics.fmean(lat), first_delta_median_s=statistics.median(first) if first else None)
    return out


async def run_phase(name: str, clients: list[Annotator], n_each: int, think: tuple[float, float] | None,
                    server: Server) -> dict:
    log(f"{name}: {len(clients)} annotator(s) x {n_each} grades"
        + (f", think time {think[0]}-{think[1]} s" if think else ", back to back"))
    parts0, ru0 = server.cpu_parts(), resource.getrusage(resource.RUSAGE_SELF)
    recs: list[dict] = []

    async def worker(c: Annotator) -> None:
        for _ in range(n_each):
            if c.broken:
                return
            if think:
                await asyncio.sleep(c.rng.uniform(*think))
            recs.append(await c.grade(name))

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in clients))
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    out = summary(recs)
    parts = {k: v - parts0[k] for k, v in server.cpu_parts().items()}
    cpu = sum(parts.values())
    out.update(name=name, annotators=len(clients), grades_each=n_each, think_s=list(think) if think else None,
               wall_s=wall, grades_per_s=len(recs) / wall, server_cpu_s=cpu,
               server_cpu_ms_per_grade=1000 * cpu / max(1, len(recs)), server_cpu_share=cpu / wall,
               client_cpu_s=(ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime), loadavg_end=loadavg(),
               server_rss_mib=server.rss_mib(),
               cpu_ms_per_grade_by_process={k: 1000 * v / max(1, len(recs)) for k, v in parts.items()})
    if "median_s" in out:
        log(f"{name}: median {out['median_s'] * 1000:.0f} ms, p95 {out['p95_s'] * 1000:.0f} ms, "
            f"max {out['max_s'] * 1000:.0f} ms, {out['grades_per_s']:.1f} grades/s, server CPU {cpu:.1f} s")
    return out


def check_db(db_path: Path, campaign_id: int, clients: list[Annotator]) -> dict:
    """Compare what the clients clicked with what the database holds."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT u.username, g.item_id, g.tier, g.skipped, g.supersedes FROM grade_annotations g "
            "JOIN users u ON u.id = g.user_id JOIN assignments a ON a.item_id = g.item_id AND a.user_id = g.user_id "
            "WHERE a.campaign_id = ?", (campaign_id,)).fetchall()
        order: dict[str, list[int]] = {}
        key_of: dict[tuple[str, str], int] = {}  # (user, screen key) -> item id: the page shows only the key
        try:
            from medeval.annotation.screen_keys import screen_key
        except ImportError:  # the code before issue 23 §3 (keys were item ids), measured for comparison
            def screen_key(*_a):
                return ""
        db = sqlite_utils.Database(conn)
        for c in clients:
            uid = conn.execute("SELECT id FROM users WHERE username = ?", (c.username,)).fetchone()[0]
            order[c.username] = [i for (i,) in conn.execute(
                "SELECT a.item_id FROM assignments a JOIN users u ON u.id = a.user_id WHERE a.campaign_id = ? "
                "AND u.username = ? ORDER BY a.position", (campaign_id, c.username))]
            for i in order[c.username]:
                key_of[(c.username, screen_key(db, SimpleNamespace(id=uid), f"i:{i}"))] = i
    finally:
        conn.close()
    def item_of(user: str, key: str) -> int | str:  # (a plain id: the pages before issue 23 §3, to compare with)
        return int(key) if key.isdigit() else key_of.get((user, key), key)

    sent = {c.username: [dict(r, item=item_of(c.username, r["item"])) for r in c.clicks if r["sent"]] for c in clients}
    clicked = {(r["user"], r["item"]): r["tier"] for recs in sent.values() for r in recs}
    stored: dict[tuple[str, int], list[int | None]] = {}
    for user, item, tier, skipped, _sup in rows:
        stored.setdefault((user, item), []).append(None if skipped else tier)
    clicks = sum(len(recs) for recs in sent.values())
    out_of_order = sum([r["item"] for r in recs] != order[u][:len(recs)] for u, recs in sent.items())
    return {"clicks": clicks, "rows": len(rows), "lost": sum(1 for key in clicked if key not in stored),
            "extra": sum(1 for key in stored if key not in clicked),
            "duplicates": sum(len(v) - 1 for v in stored.values()),
            "wrong_tier": sum(1 for key, t in clicked.items() if key in stored and stored[key][-1] != t),
            "same_item_clicked_twice": clicks - len(clicked), "annotators_out_of_assignment_order": out_of_order}


def scan_log(paths: list[Path]) -> dict:
    text = "\n".join(p.read_text(errors="replace") for p in paths)
    lines = text.splitlines()
    bad = [ln for ln in lines if re.search(r"Traceback|Error|Exception|locked", ln)]
    return {"database_is_locked": text.count("database is locked"), "tracebacks": text.count("Traceback"),
            "error_lines": len(bad), "first_error_lines": bad[:10]}


# ---------------------------------------------------------------- main

def think_label(lo, hi) -> str:
    return "back to back" if lo is None else f"think {lo:g}-{hi:g} s"


async def run(cfg: dict, server_args: list[str], tmp: Path, res: dict, proxy_workers: int = 0) -> None:
    n = cfg["annotators"]
    usernames = [f"bench{i:03d}" for i in range(1, n + 1)]
    need = cfg["warmup"] + cfg["single"] * (2 if cfg["single_think"] else 1) + sum(e for _, _, e in cfg["concurrent"])
    db_path = tmp / "grading.db"
    log(f"building the database: medeval demo, {n} annotators, a random campaign with >= {need} items each")
    res["data"] = build_db(db_path, usernames, need + 5, SEED)
    log(f"database built in {res['data']['build_seconds']:.0f} s: {res['data']['items']} items, "
        f"k = {res['data']['k']}, {res['data']['items_per_annotator_min']}-{res['data']['items_per_annotator_max']} "
        "per annotator")
    tls = None
    if proxy_workers:
        server = ProxyServer(db_path, tmp / "run", proxy_workers)
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE  # serve.sh's self-signed certificate
    else:
        server = Server(db_path, tmp / "server.log", server_args)
    res["server"] = {"port": server.port, "start_seconds": server.start_seconds, "extra_args": server_args,
                     "proxy_workers": proxy_workers}
    log(f"server up on port {server.port} in {server.start_seconds:.1f} s"
        + (f" (nginx, {proxy_workers} app processes)" if proxy_workers else f" (pid {server.proc.pid})"))
    clients = [Annotator(u, server.port, SEED, tls) for u in usernames]
    phases = []
    try:
        first = clients[0]
        signin = [first.sign_in()]
        loads = [await first.connect()]
        for _ in range(cfg["warmup"]):
            await first.grade("warm-up")
        if cfg["single_think"]:
            lo, hi = cfg["single_think"]
            phases.append(await run_phase(f"1 annotator, {think_label(lo, hi)}", [first], cfg["single"], (lo, hi),
                                          server))
        phases.append(await run_phase("1 annotator, back to back", [first], cfg["single"], None, server))
        res["server"]["rss_mib_one_session"] = server.rss_mib()
        if cfg["concurrent"] and n > 1:
            log(f"signing in and connecting {n - 1} more annotators")
            for c in clients[1:]:
                signin.append(c.sign_in())
            loads += await asyncio.gather(*(c.connect() for c in clients[1:]))
        for lo, hi, each in cfg["concurrent"]:
            phases.append(await run_phase(f"{n} annotators, {think_label(lo, hi)}", clients, each,
                                          None if lo is None else (lo, hi), server))
        res["server"].update(cpu_seconds_total=server.cpu_seconds(), rss_mib_end=server.rss_mib())
    finally:
        await close_all(clients, server)
    res["signin"] = {"n": len(signin), "median_s": statistics.median(signin), "max_s": max(signin)}
    res["first_page_load"] = {"n": len(loads), "median_s": statistics.median(loads), "max_s": max(loads),
                              "note": "the other annotators connect all at once"}
    res["phases"] = phases
    check_run(res, clients, server, db_path)


async def close_all(clients: list[Annotator], server) -> None:
    """Close every annotator's websocket (whatever state it is in), then stop the server."""
    for c in clients:
        try:
            await c.close()
        except Exception:
            pass
    server.stop()


def check_run(res: dict, clients: list[Annotator], server, db_path: Path) -> None:
    """The checks of a run into ``res``: the clients' problems, the database against the clicks, the server log."""
    problems = [p for c in clients for r in c.clicks for p in r["problems"]]
    res["client_problems"] = {"count": len(problems), "examples": sorted(set(problems))[:10]}
    res["db_check"] = check_db(db_path, res["data"]["campaign_id"], clients)
    res["server_log"] = scan_log(server.logs())
    for line in res["server_log"]["first_error_lines"]:
        log(f"server log: {line}")
    for p in res["client_problems"]["examples"]:
        log(f"client problem: {p}")


def ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.0f} ms"


def table(res: dict) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = [("grade keystroke -> next item sent (rerun BackMsg -> script_finished)", "", "")]
    for p in res["phases"]:
        if "median_s" not in p:
            rows.append((f"{p['name']}: no timed grades", "", ""))
            continue
        rows += [
            (f"{p['name']}: median", ms(p["median_s"]),
             f"{p['timed']} grades; first delta after {ms(p['first_delta_median_s'])} (median); "
             f"{p['messages_median']:.0f} messages a rerun (median)" if p.get("messages_median") else
             f"{p['timed']} grades; first delta after {ms(p['first_delta_median_s'])} (median)"),
            (f"{p['name']}: p95", ms(p["p95_s"]), f"max {ms(p['max_s'])}; mean {ms(p['mean_s'])}"),
            (f"{p['name']}: throughput", f"{p['grades_per_s']:.1f} /s",
             f"server CPU {p['server_cpu_s']:.1f} s = {p['server_cpu_ms_per_grade']:.0f} ms/grade, "
             f"{100 * p['server_cpu_share']:.0f}% of a core; clients {p['client_cpu_s']:.1f} s; "
             f"load {p['loadavg_end']}"),
        ]
        if len(p.get("cpu_ms_per_grade_by_process", {})) > 1:
            rows.append((f"{p['name']}: CPU per grade", "", ", ".join(
                f"{k} {v:.0f} ms" for k, v in p["cpu_ms_per_grade_by_process"].items())))
    d, lg, cp = res["db_check"], res["server_log"], res["client_problems"]
    ok = (d["lost"] == d["extra"] == d["duplicates"] == d["wrong_tier"] == d["same_item_clicked_twice"]
          == d["annotators_out_of_assignment_order"] == 0 and d["rows"] == d["clicks"]
          and cp["count"] == 0 and lg["database_is_locked"] == lg["tracebacks"] == 0)
    rows += [
        ("checks", "", ""),
        ("grades stored / clicks sent", f"{d['rows']} / {d['clicks']}",
         f"lost {d['lost']}, extra {d['extra']}, duplicates {d['duplicates']}, wrong tier {d['wrong_tier']}"),
        ("items in assignment order, never twice", "yes" if d["annotators_out_of_assignment_order"] == 0
         and d["same_item_clicked_twice"] == 0 else "NO",
         f"{d['annotators_out_of_assignment_order']} annotators out of order, "
         f"{d['same_item_clicked_twice']} items clicked twice"),
        ("reruns with a problem", str(cp["count"]),
         "'Not saved' error, exception, no 'Saved' message, same/no next item, timeout"),
        ("server log: 'database is locked' / tracebacks", f"{lg['database_is_locked']} / {lg['tracebacks']}",
         f"{lg['error_lines']} lines mention an error"),
        ("all checks", "pass" if ok else "FAIL", ""),
        ("other figures", "", ""),
        ("sign-in (POST /signin, argon2)", ms(res["signin"]["median_s"]),
         f"median of {res['signin']['n']}, one at a time; max {ms(res['signin']['max_s'])}"),
        ("first page load (WebSocket + first run)", ms(res["first_page_load"]["median_s"]),
         f"median of {res['first_page_load']['n']}; max {ms(res['first_page_load']['max_s'])} "
         "(all but the first connect at once)"),
        ("server start (until /_stcore/health)", f"{res['server']['start_seconds']:.1f} s", ""),
        ("server RSS: 1 session / end", f"{res['server']['rss_mib_one_session']:.0f} / "
         f"{res['server']['rss_mib_end']:.0f} MiB",
         f"after {d['clicks']} grades by {res['first_page_load']['n']} sessions (all still open)")
        if res["server"].get("rss_mib_end") and res["server"].get("rss_mib_one_session") else ("server RSS", "?", ""),
    ]
    res["all_checks_pass"] = ok
    return rows


def header(info: dict, res: dict, mode: str) -> str:
    p = info["packages"]
    d = res.get("data", {})
    return "\n".join([
        f"medeval grading benchmark ({mode}) -- {info['date']}",
        f"CPU: {info['cpu_count']} logical CPUs ({info['cpus_usable']} usable), {info['cpu_model']}",
        f"Python {info['python']} on {info['platform']}; SQLite {info['sqlite']}",
        "packages: " + ", ".join(f"{k} {v}" for k, v in p.items()),
        f"load average at start (1/5/15 min): {info['loadavg_start']}",
        ("server: `scripts/serve.sh --workers {0}`: {0} app processes behind nginx (HTTPS, sticky sessions); "
         .format(res["server"]["proxy_workers"]) if res.get("server", {}).get("proxy_workers") else
         "server: one process, `streamlit run server.py` on 127.0.0.1; ")
        + f"database: demo data (2,880 responses), "
        f"campaign of {d.get('items', '?')} items, k = {d.get('k', '?')}, "
        f"{d.get('items_per_annotator_min', '?')}-{d.get('items_per_annotator_max', '?')} per annotator"
        + (f"; extra server options: {' '.join(res['server']['extra_args'])}"
           if res.get("server", {}).get("extra_args") else ""),
        "", "",
    ])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="fewer grades: 1 x 15 (twice), then 30 x 5 at 0.5-1.5 s and 30 x 5 back to back")
    ap.add_argument("--annotators", type=int, help="annotators in the concurrent phases (default 30)")
    ap.add_argument("--single", type=int, help="timed grades of the lone annotator, per phase (default 40)")
    ap.add_argument("--concurrent", action="append", metavar="LO,HI:N",
                    help="a concurrent phase: every annotator gives N grades, each after a think time drawn "
                         "uniformly from LO-HI s ('0:N' = back to back); repeat for several phases "
                         "(default: 0.5,1.5:20 then 5,15:10 then 0:20)")
    ap.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                    help="extra option for `streamlit run`, e.g. --server-arg=--runner.postScriptGC=false")
    ap.add_argument("--proxy-workers", type=int, default=0, metavar="N",
                    help="run N app processes behind nginx (scripts/serve.sh) and grade through it over HTTPS; "
                         "defaults then: --annotators 60 --concurrent 0.5,1.5:20")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    ap.add_argument("--tmp", default="/tmp", help="folder for the temporary database and server log (default /tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (database, server log)")
    args = ap.parse_args(argv)
    mode = "quick" if args.quick else "full"
    cfg = dict(SIZES[mode])
    if args.proxy_workers < 0 or args.proxy_workers > 32:
        ap.error("--proxy-workers must be from 1 to 32")
    if args.proxy_workers:
        cfg.update(annotators=60, concurrent=[(0.5, 1.5, 20 if mode == "full" else 5)])
    if args.annotators is not None:
        cfg["annotators"] = args.annotators
    if args.single is not None:
        cfg["single"] = args.single
    if cfg["annotators"] < 1 or cfg["single"] < 1:
        ap.error("--annotators and --single must be at least 1")
    if args.concurrent:
        cfg["concurrent"] = []
        for spec in args.concurrent:
            m = re.fullmatch(r"\s*(?:0|([\d.]+),([\d.]+))\s*:\s*(\d+)\s*", spec)
            if not m or int(m.group(3)) < 1:
                ap.error(f"--concurrent {spec!r}: expected LO,HI:N (e.g. 0.5,1.5:20) or 0:N")
            lo, hi = (float(m.group(1)), float(m.group(2))) if m.group(1) else (None, None)
            cfg["concurrent"].append((lo, hi, int(m.group(3))))
    info = machine_info()
    res: dict = {"mode": mode, "machine": info, "sizes": cfg, "seed": SEED}
    t_start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="medeval-bench-grading-", dir=args.tmp))
    try:
        asyncio.run(run(cfg, args.server_arg, tmp, res, args.proxy_workers))
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    total = time.perf_counter() - t_start
    rows = table(res)
    text = header(info, res, mode) + "\n".join(table_lines(rows)) + \
        f"\ntotal benchmark time: {total:.0f} s; load average at end: {loadavg()}"
    finish(res, text, total, args.json)
    return 0 if res["all_checks_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
