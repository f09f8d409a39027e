#!/usr/bin/env python
"""Benchmark: does a flood of sign-ins stall grading? Grade keystroke latency with and without N concurrent sign-ins.

    .venv/bin/python bench/bench_signin_flood.py                       # 100 concurrent sign-ins, 5 annotators
    .venv/bin/python bench/bench_signin_flood.py --signin-flood 60 --json bench/out/signin-flood-60.json
    .venv/bin/python bench/bench_signin_flood.py --hammer              # retry at once after a 429
    .venv/bin/python bench/bench_signin_flood.py --proxy-workers 2     # through nginx, 2 app processes

The server, the database and the annotators are those of ``bench/bench_grading.py`` (its ``Server``,
``build_db``, ``Annotator`` and ``run_phase``): the real ``streamlit run server.py`` on 127.0.0.1, the demo
data, annotators that speak Streamlit's websocket protocol. Two phases on the same server:

1. **no flood**: the annotators grade (think time 0.5-1.5 s by default), as a baseline;
2. **flood**: N flooders (``--signin-flood N``) keep N sign-ins in flight for the whole phase while the
   annotators grade the same number of items again. Each attempt is ``POST /signin`` with a wrong password
   for an unknown username (the server still does a full argon2 verification, against its dummy hash, so
   an unknown name costs what a known one does) from a **new client address each time**: the TCP connection
   is bound to its own loopback address (127.10.0.1, 127.10.0.2, ...; Linux routes all of 127.0.0.0/8 to
   the loopback), so the per-address budget never refuses it, as for an attacker with many machines. No
   X-Forwarded-For is sent: the server must see the peer address. After a 429 a flooder waits the
   ``Retry-After`` it was given (as a browser user would), or with ``--hammer`` sends the next one at once.

With ``--proxy-workers N`` the server is ``scripts/serve.sh --workers N`` (nginx, TLS) and every client goes
through nginx over HTTPS/wss; nginx forwards the address it saw (the flooder's own loopback address) in
``X-Forwarded-For``, which the app processes believe from nginx alone (``MEDEVAL_TRUSTED_PROXIES``).

Besides the grading figures (median, p95, max), it reports the flood's answers by status (401 = a hash was
done, 429 = refused as busy, with or without ``Retry-After``), their latencies, and a real doctor signing in
every 2 s during the flood (their own account and password, from the workstation they signed in from before
the flood, 10 doctors in turn): how many got in and how long it took.
The checks of ``bench_grading`` apply (no grade lost or doubled, no traceback).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import shutil
import ssl
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_grading import (PASSWORD, SEED, Annotator, ProxyServer, Server, build_db,  # noqa: E402
                                 check_run, close_all, machine_info, ms, percentile, run_phase)
from bench.benchlib import finish, loadavg, log, table_lines  # noqa: E402

FIRST_FLOOD_ADDRESS = int(ipaddress.IPv4Address("127.10.0.1"))
REQUEST_TIMEOUT_S = 120.0


TLS: ssl.SSLContext | None = None  # through nginx (--proxy-workers): its self-signed certificate, not verified


async def post_signin(port: int, source: str, username: str, password: str) -> tuple[int, str | None, float]:
    """``POST /signin`` from the loopback address ``source``: (status, Retry-After, seconds)."""
    body = urllib.parse.urlencode({"username": username, "password": password, "next": "/"}).encode()
    scheme = "https" if TLS else "http"
    head = (f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {scheme}://127.0.0.1:{port}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode()
    t0 = time.perf_counter()

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0), ssl=TLS)
        try:
            writer.write(head + body)
            await writer.drain()
            return await reader.read()
        finally:
            writer.close()

    data = await asyncio.wait_for(exchange(), REQUEST_TIMEOUT_S)
    status_line, _, rest = data.partition(b"\r\n")
    retry = None
    for line in rest.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"retry-after":
            retry = value.strip().decode()
    return int(status_line.split()[1]), retry, time.perf_counter() - t0


class Flood:
    """N flooders, each keeping one sign-in in flight from a fresh loopback address, until ``stop``."""

    def __init__(self, port: int, n: int, hammer: bool):
        self.port, self.n, self.hammer = port, n, hammer
        self.count = 0
        self.answers: list[tuple[int, bool, float]] = []  # (status, has Retry-After, seconds)
        self.errors: Counter = Counter()
        self.in_flight = self.peak = 0
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task] = []

    def _address(self) -> str:
        self.count += 1
        return str(ipaddress.IPv4Address(FIRST_FLOOD_ADDRESS + self.count))

    async def _flooder(self, i: int) -> None:
        k = 0
        while not self._stop.is_set():
            k += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            try:
                status, retry, dt = await post_signin(self.port, self._address(), f"flood{i:03d}x{k}",
                                                      "not the password")
            except (OSError, asyncio.TimeoutError) as e:
                self.errors[type(e).__name__] += 1
                await asyncio.sleep(0.5)
                continue
            finally:
                self.in_flight -= 1
            self.answers.append((status, retry is not None, dt))
            if status == 429 and not self.hammer:
                try:
                    await asyncio.wait_for(self._stop.wait(), float(retry or 1))
                except asyncio.TimeoutError:
                    pass

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._flooder(i)) for i in range(self.n)]

    async def stop(self) -> None:
        self._stop.set()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def summary(self, wall: float) -> dict:
        by = Counter(s for s, _, _ in self.answers)
        out = {"flooders": self.n, "hammer": self.hammer, "attempts": len(self.answers), "wall_s": wall,
               "attempts_per_s": len(self.answers) / wall if wall else None, "peak_in_flight": self.peak,
               "by_status": {str(k): v for k, v in sorted(by.items())},
               "429_with_retry_after": sum(1 for s, r, _ in self.answers if s == 429 and r),
               "429_without_retry_after": sum(1 for s, r, _ in self.answers if s == 429 and not r),
               "connection_errors": dict(self.errors)}
        for status in (401, 429):
            lat = [dt for s, _, dt in self.answers if s == status]
            if lat:
                out[f"{status}_median_s"], out[f"{status}_p95_s"] = statistics.median(lat), percentile(lat, 95)
                out[f"{status}_max_s"] = max(lat)
        return out


def doctor_address(i: int) -> str:
    """Doctor i's workstation (the same address every time)."""
    return f"127.20.0.{i + 1}"


async def doctor_signins(port: int, usernames: list[str], stop: asyncio.Event, every_s: float = 2.0) -> list:
    """A real doctor signs in (right password) every ``every_s`` seconds from their own workstation, in turn."""
    out, i = [], 0
    while not stop.is_set():
        k = i % len(usernames)
        try:
            status, retry, dt = await post_signin(port, doctor_address(k), usernames[k], PASSWORD)
            out.append({"status": status, "retry_after": retry, "seconds": dt})
        except (OSError, asyncio.TimeoutError) as e:
            out.append({"status": type(e).__name__, "retry_after": None, "seconds": None})
        i += 1
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except asyncio.TimeoutError:
            pass
    return out


async def run(args, tmp: Path, res: dict) -> None:
    usernames = [f"bench{i:03d}" for i in range(1, args.annotators + 1)]
    doctors = [f"doctor{i:02d}" for i in range(1, 11)]
    db_path = tmp / "flood.db"
    log(f"building the database: demo data, {args.annotators} annotators")
    res["data"] = build_db(db_path, usernames + doctors, 3 + 2 * args.grades + 5, SEED)
    global TLS
    if args.proxy_workers:
        server = ProxyServer(db_path, tmp / "run", args.proxy_workers)
        TLS = ssl.create_default_context()
        TLS.check_hostname, TLS.verify_mode = False, ssl.CERT_NONE  # serve.sh's self-signed certificate
    else:
        server = Server(db_path, tmp / "server.log", args.server_arg)
    res["server"] = {"port": server.port, "start_seconds": server.start_seconds, "proxy_workers": args.proxy_workers}
    log(f"server up on port {server.port}" + (f" (nginx, {args.proxy_workers} app processes)" if args.proxy_workers
                                              else f" (pid {server.proc.pid})"))
    clients = [Annotator(u, server.port, SEED, TLS) for u in usernames]
    think = (args.think_lo, args.think_hi)
    try:
        for c in clients:
            c.sign_in()
        await asyncio.gather(*(c.connect() for c in clients))
        for c in clients:
            for _ in range(3):
                await c.grade("warm-up")
        morning = [await post_signin(server.port, doctor_address(k), name, PASSWORD)
                   for k, name in enumerate(doctors)]  # each doctor signed in once before, from their workstation
        res["doctors_before_the_flood"] = [status for status, _, _ in morning]
        res["baseline"] = await run_phase(f"{len(clients)} annotators, no flood", clients, args.grades, think, server)
        flood = Flood(server.port, args.signin_flood, args.hammer)
        log(f"flood: {args.signin_flood} concurrent sign-ins from fresh addresses"
            + (" (hammer: no wait after a 429)" if args.hammer else " (a 429's Retry-After is honoured)"))
        cpu0, t0 = server.cpu_seconds(), time.perf_counter()
        flood.start()
        await asyncio.sleep(args.ramp)
        stop_doctors = asyncio.Event()
        doctor_task = asyncio.create_task(doctor_signins(server.port, doctors, stop_doctors))
        res["flood_phase"] = await run_phase(f"{len(clients)} annotators, {args.signin_flood} concurrent sign-ins",
                                             clients, args.grades, think, server)
        stop_doctors.set()
        await flood.stop()
        wall = time.perf_counter() - t0
        res["flood"] = flood.summary(wall)
        res["flood"]["server_cpu_s"] = server.cpu_seconds() - cpu0
        res["doctor_signins"] = await doctor_task
        res["server"]["rss_mib_end"] = server.rss_mib()
    finally:
        await close_all(clients, server)
    check_run(res, clients, server, db_path)


def table(res: dict) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = [("grade keystroke -> next item sent", "", "")]
    for key in ("baseline", "flood_phase"):
        p = res[key]
        rows.append((f"{p['name']}: median / p95 / max",
                     f"{ms(p.get('median_s'))} / {ms(p.get('p95_s'))} / {ms(p.get('max_s'))}",
                     f"{p['timed']} grades; server CPU {p['server_cpu_s']:.1f} s "
                     f"({100 * p['server_cpu_share']:.0f}% of a core); load {p['loadavg_end']}"))
    f = res["flood"]
    rows += [("the flood", "", ""),
             ("sign-in attempts answered", str(f["attempts"]),
              f"{f['attempts_per_s']:.1f}/s over {f['wall_s']:.0f} s; by status {f['by_status']}; "
              f"peak in flight {f['peak_in_flight']}; connection errors {f['connection_errors'] or 0}"),
             ("429 with / without Retry-After", f"{f['429_with_retry_after']} / {f['429_without_retry_after']}", ""),
             ("401 (a hash was done): median / p95", f"{ms(f.get('401_median_s'))} / {ms(f.get('401_p95_s'))}",
              f"max {ms(f.get('401_max_s'))}"),
             ("429: median / p95", f"{ms(f.get('429_median_s'))} / {ms(f.get('429_p95_s'))}",
              f"max {ms(f.get('429_max_s'))}"),
             ("server CPU during the flood", f"{f['server_cpu_s']:.1f} s", "")]
    ds = res["doctor_signins"]
    ok = [d for d in ds if d["status"] == 303]
    rows.append(("doctors' sign-ins during the flood, one at a time, 2 s apart", f"{len(ok)} / {len(ds)} in",
                 "statuses " + str(dict(Counter(str(d["status"]) for d in ds))) +
                 (f"; signed in after median {ms(statistics.median(d['seconds'] for d in ok))}, "
                  f"max {ms(max(d['seconds'] for d in ok))}" if ok else "")))
    d, lg, cp = res["db_check"], res["server_log"], res["client_problems"]
    ok_all = (d["lost"] == d["extra"] == d["duplicates"] == d["wrong_tier"] == 0 and d["rows"] == d["clicks"]
              and cp["count"] == 0 and lg["tracebacks"] == lg["database_is_locked"] == 0)
    rows += [("checks", "", ""),
             ("grades stored / clicks sent", f"{d['rows']} / {d['clicks']}",
              f"lost {d['lost']}, extra {d['extra']}, duplicates {d['duplicates']}, wrong tier {d['wrong_tier']}"),
             ("reruns with a problem", str(cp["count"]), "; ".join(cp["examples"][:3])),
             ("server log: 'database is locked' / tracebacks", f"{lg['database_is_locked']} / {lg['tracebacks']}", ""),
             ("all checks", "pass" if ok_all else "FAIL", "")]
    res["all_checks_pass"] = ok_all
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--signin-flood", type=int, default=100, metavar="N", help="concurrent sign-ins (default 100)")
    ap.add_argument("--annotators", type=int, default=5, help="annotators grading meanwhile (default 5)")
    ap.add_argument("--grades", type=int, default=20, help="grades per annotator in each phase (default 20)")
    ap.add_argument("--think-lo", type=float, default=0.5, help="think time before a grade, low end (s)")
    ap.add_argument("--think-hi", type=float, default=1.5, help="think time before a grade, high end (s)")
    ap.add_argument("--ramp", type=float, default=3.0, help="seconds the flood runs before the grading starts")
    ap.add_argument("--hammer", action="store_true", help="flooders retry at once after a 429")
    ap.add_argument("--server-arg", action="append", default=[], metavar="ARG", help="extra `streamlit run` option")
    ap.add_argument("--proxy-workers", type=int, default=0, metavar="N",
                    help="serve with scripts/serve.sh --workers N (nginx, HTTPS) and go through it")
    ap.add_argument("--json", metavar="PATH", help="also write every figure as JSON to PATH")
    ap.add_argument("--tmp", default="/tmp", help="folder for the temporary database and server log")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args(argv)
    if not 1 <= args.signin_flood <= 5000 or not 1 <= args.annotators <= 60 or args.grades < 1 \
            or not 0 <= args.proxy_workers <= 32:
        ap.error("--signin-flood must be 1-5000, --annotators 1-60, --grades at least 1, --proxy-workers 0-32")
    info = machine_info()
    res: dict = {"machine": info, "args": vars(args), "seed": SEED}
    t_start = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="medeval-bench-flood-", dir=args.tmp))
    try:
        asyncio.run(run(args, tmp, res))
    finally:
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    total = time.perf_counter() - t_start
    text = "\n".join([
        f"medeval sign-in flood benchmark -- {info['date']}",
        f"CPU: {info['cpu_count']} logical CPUs ({info['cpus_usable']} usable), {info['cpu_model']}",
        f"load average at start (1/5/15 min): {info['loadavg_start']}",
        (f"server: `scripts/serve.sh --workers {args.proxy_workers}` (nginx, HTTPS)" if args.proxy_workers else
         "server: one process, `streamlit run server.py` on 127.0.0.1") + "; flood from fresh loopback addresses", "",
    ]) + "\n".join(table_lines(table(res))) + f"\ntotal benchmark time: {total:.0f} s; load average at end: {loadavg()}"
    finish(res, text, total, args.json)
    return 0 if res["all_checks_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
