"""``scripts/serve.sh``: several app processes behind a real nginx (TLS, sticky sessions, websockets).

One module-scoped deployment: the browser tests' small database (``tests/browser_support.py``), then
``bash scripts/serve.sh --workers 2`` on free ports with its own run folder (``MEDEVAL_RUN_DIR``), a
self-signed certificate and a plain-HTTP port that redirects. Everything goes through nginx over
HTTPS, as a browser would (the certificate is not verified: it is self-signed). Checked:

1. sign-in through the proxy works and its cookie is ``Secure`` (X-Forwarded-Proto from the trusted nginx), and
   the app charges a sign-in to the address nginx saw, not to a forged X-Forwarded-For;
2. a session cookie keeps a client on one process, before sign-in its address does, and different
   sessions are spread over both processes (nginx's response header ``X-Medeval-Upstream``);
3. a session made on one process is valid on the other (one database, one cookie secret);
4. the websocket through the proxy with the cookie and the proxy's Origin opens, runs the app for the
   user and lands on the process that served the page; another Origin is still refused (Host passes
   through with its port);
5. the plain-HTTP port redirects to HTTPS;
6. ``stop`` leaves no process behind and ``status`` says so.

Needs nginx (``serve.sh`` installs Debian's package as root); skipped with the reason when it cannot.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import ssl
import subprocess
from contextlib import closing
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests import browser_support as bs
from tests.test_security_websocket import rerun

websockets = pytest.importorskip("websockets")
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

pytestmark = pytest.mark.slow  # starts nginx and two servers

ROOT = Path(__file__).resolve().parents[1]
WORKERS = 2
TIMEOUT_S = 60  # generous: the machine has 2 shared cores
UPSTREAM = "X-Medeval-Upstream"
USER = "doc_login"  # an annotator of browser_support.build_db with a campaign of their own


def _tls() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # serve.sh's self-signed certificate
    return ctx


def _free_run(n: int) -> int:
    """The first of ``n`` consecutive free ports on 127.0.0.1."""
    for _ in range(200):
        base = bs.free_port()
        if base + n > 65535:
            continue
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


class Deployment:
    def __init__(self, folder: Path, db: Path):
        self.run_dir = folder / "run"
        self.port, self.http_port, self.first = bs.free_port(), bs.free_port(), _free_run(WORKERS)
        self.env = {**os.environ, "MEDEVAL_DB": str(db), "MEDEVAL_RUN_DIR": str(self.run_dir),
                    "MEDEVAL_IDLE_TIMEOUT": "86400", "MEDEVAL_SECRET_KEY": "", "PYTHONUNBUFFERED": "1"}
        self.origin = f"https://127.0.0.1:{self.port}"

    def serve(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "scripts/serve.sh", *args], cwd=ROOT, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def start(self) -> subprocess.CompletedProcess:
        return self.serve("--workers", str(WORKERS), "--port", str(self.port), "--http-port", str(self.http_port),
                          "--first-port", str(self.first), "--listen", "127.0.0.1", "start")

    def request(self, method: str, path: str, *, cookie: str | None = None, body: str | None = None,
                headers: dict | None = None, port: int | None = None):
        """One request through the proxy (HTTPS) or, with ``port``, straight to an app process (HTTP)."""
        if port is None:
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=TIMEOUT_S, context=_tls())
        else:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
        hdrs = dict(headers or {})
        if body is not None:
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
        if cookie:
            hdrs["Cookie"] = f"medeval_session={cookie}"
        try:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            resp.read()
            return resp
        finally:
            conn.close()

    def pids(self) -> set[int]:
        """Every process the deployment runs: the app processes, nginx's master and its workers."""
        found = set()
        for f in self.run_dir.glob("*.pid"):
            found.add(int(f.read_text().strip()))
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid in found:
                found.add(int(stat.parent.name))
        return found


def _running(pid: int) -> bool:
    """Whether the process exists and has not ended (a zombie waiting for its parent has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def dep(tmp_path_factory):
    if not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()) and os.geteuid() != 0:
        pytest.skip("nginx is not installed and this is not root, so serve.sh cannot install it "
                    "(apt-get install -y nginx)")
    folder = tmp_path_factory.mktemp("serve")
    fx = bs.build_db(folder)
    d = Deployment(folder, fx.db)
    try:
        started = d.start()
        if started.returncode != 0:
            if not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()):
                pytest.skip(f"nginx could not be installed: {started.stderr.strip()[-500:]}")
            raise AssertionError(f"serve.sh start failed ({started.returncode}):\n{started.stderr[-3000:]}")
        yield d
    finally:
        d.serve("stop", timeout=120)


def sign_in(dep: Deployment, username: str = USER):
    """``POST /signin`` through the proxy as the sign-in form sends it (with the proxy's Origin)."""
    resp = dep.request("POST", "/signin", body=urlencode({"username": username, "password": bs.PASSWORD, "next": "/"}),
                       headers={"Origin": dep.origin})
    assert resp.status == 303, resp.status
    cookies = [h for h in resp.headers.get_all("Set-Cookie") if h.startswith("medeval_session=")]
    assert len(cookies) == 1, resp.headers.get_all("Set-Cookie")
    jar = SimpleCookie()
    jar.load(cookies[0])
    return jar["medeval_session"].value, cookies[0], resp.headers[UPSTREAM]


# ---------------------------------------------------------------- 1. sign-in over HTTPS

def test_signin_through_the_proxy_sets_a_secure_cookie(dep):
    value, header, upstream = sign_in(dep)
    attrs = {a.strip().lower() for a in header.split(";")[1:]}
    assert "secure" in attrs, header  # the app believed X-Forwarded-Proto from nginx (MEDEVAL_TRUSTED_PROXIES)
    assert "httponly" in attrs and "samesite=lax" in attrs, header
    assert upstream in {f"127.0.0.1:{dep.first + i}" for i in range(WORKERS)}, upstream


def test_the_app_sees_the_address_nginx_saw_not_a_forged_one(dep):
    """serve.sh names its nginx in MEDEVAL_TRUSTED_PROXIES, and nginx replaces X-Forwarded-For: a client that
    forges the header is charged to its own address (here 127.0.0.9, a loopback address of its own)."""
    import json

    conn = http.client.HTTPSConnection("127.0.0.1", dep.port, timeout=TIMEOUT_S, context=_tls(),
                                       source_address=("127.0.0.9", 0))
    try:
        conn.request("POST", "/signin", body=urlencode({"username": USER, "password": "wrong password!", "next": "/"}),
                     headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": dep.origin,
                              "X-Forwarded-For": "203.0.113.66"})
        resp = conn.getresponse()
        resp.read()
    finally:
        conn.close()
    assert resp.status == 401, resp.status
    detail = bs.query(Path(dep.env["MEDEVAL_DB"]), "SELECT detail FROM audit_log WHERE action = 'login.failed' "
                                                   "ORDER BY id DESC LIMIT 1")[0][0]
    assert json.loads(detail)["address"] == "127.0.0.9", detail


# ---------------------------------------------------------------- 2-3. sticky sessions, one database

def test_a_cookie_keeps_a_client_on_one_process_and_sessions_spread(dep):
    cookie, _, _ = sign_in(dep)
    seen = {dep.request("GET", "/", cookie=cookie, headers={"Accept": "text/html"}).headers[UPSTREAM]
            for _ in range(6)}
    seen |= {dep.request("GET", "/_stcore/health", cookie=cookie).headers[UPSTREAM] for _ in range(4)}
    assert len(seen) == 1, seen
    # before sign-in (no cookie) the client's address decides, so it stays put too
    assert len({dep.request("GET", "/_stcore/health").headers[UPSTREAM] for _ in range(6)}) == 1
    # every request here comes from 127.0.0.1: only a cookie-keyed hash spreads these sessions over both
    # processes (fixed values: nginx's consistent hash is deterministic)
    by_cookie = {f"session-{i}": dep.request("GET", "/_stcore/health", cookie=f"session-{i}").headers[UPSTREAM]
                 for i in range(16)}
    assert len(set(by_cookie.values())) == WORKERS, by_cookie
    again = {c: dep.request("GET", "/_stcore/health", cookie=c).headers[UPSTREAM] for c in by_cookie}
    assert again == by_cookie


def test_a_session_from_one_process_is_valid_on_every_process(dep):
    cookie, _, _ = sign_in(dep)
    for i in range(WORKERS):  # straight to each app process: signed in (no redirect to the sign-in form)
        resp = dep.request("GET", "/grade", cookie=cookie, headers={"Accept": "text/html"}, port=dep.first + i)
        assert resp.status == 200, (dep.first + i, resp.status, resp.headers.get("location"))
    resp = dep.request("GET", "/grade", headers={"Accept": "text/html"}, port=dep.first)
    assert resp.status == 303  # the check above can fail: without the cookie it redirects


# ---------------------------------------------------------------- 4. the websocket through the proxy

def _open_ws(dep: Deployment, cookie: str, origin: str):
    return ws_connect(f"wss://127.0.0.1:{dep.port}/_stcore/stream", ssl=_tls(), origin=origin,
                      additional_headers={"Cookie": f"medeval_session={cookie}"}, proxy=None,
                      open_timeout=TIMEOUT_S, compression=None)


def _rerun(ws) -> list[ForwardMsg]:
    return rerun(ws, timeout_s=TIMEOUT_S)


def test_websocket_through_the_proxy_opens_on_the_pages_process(dep):
    cookie, _, _ = sign_in(dep)
    page = dep.request("GET", "/grade", cookie=cookie, headers={"Accept": "text/html"})
    assert page.status == 200, page.status
    with _open_ws(dep, cookie, dep.origin) as ws:
        assert ws.response.headers[UPSTREAM] == page.headers[UPSTREAM]  # the session's process
        msgs = _rerun(ws)
    assert msgs[-1].script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
    buttons = [m.delta.new_element.button.id for m in msgs if m.WhichOneof("type") == "delta"
               and m.delta.new_element.WhichOneof("type") == "button"]
    assert any("-grade_" in b for b in buttons), "the Grade page was not drawn for the signed-in annotator"
    # the guard still compares Origin with the Host nginx passes on: another origin is refused
    for origin in ("https://evil.example", f"https://127.0.0.1:{dep.http_port}"):
        with pytest.raises(InvalidStatus) as refused:
            _open_ws(dep, cookie, origin)
        assert refused.value.response.status_code == 403


# ---------------------------------------------------------------- 5. plain HTTP

def test_the_http_port_redirects_to_https(dep):
    conn = http.client.HTTPConnection("127.0.0.1", dep.http_port, timeout=TIMEOUT_S)
    try:
        conn.request("GET", "/grade?x=1")
        resp = conn.getresponse()
        resp.read()
    finally:
        conn.close()
    assert resp.status == 308
    assert resp.headers["Location"] == f"https://127.0.0.1:{dep.port}/grade?x=1"


# ---------------------------------------------------------------- 6. stop (last: it ends the deployment)

def test_stop_leaves_no_process_behind(dep):
    assert dep.serve("status").returncode == 0
    pids = dep.pids()
    assert len(pids) >= WORKERS + 2, pids  # the app processes, nginx's master and at least one worker
    assert all(_running(p) for p in pids)
    stopped = dep.serve("stop", timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert [p for p in pids if _running(p)] == []
    assert not list(dep.run_dir.glob("*.pid"))
    assert dep.serve("status").returncode != 0
    with closing(socket.socket()) as s:
        assert s.connect_ex(("127.0.0.1", dep.port)) != 0  # nothing listens on the proxy's port any more


# ---------------------------------------------------------------- bad options: one line, exit 1, nothing started

@pytest.mark.parametrize("args, says", [
    (["--workers", "0"], "--workers must be a whole number from 1 to 32 (got '0')"),
    (["--workers", "two"], "--workers must be a whole number from 1 to 32 (got 'two')"),
    (["--port", "70000"], "--port must be a whole number from 1 to 65535"),
    (["--cert", "/etc/hostname"], "give both --cert and --key"),
    (["--cert", "/nonexistent.crt", "--key", "/nonexistent.key"], "--cert /nonexistent.crt cannot be read"),
    (["--wrokers", "2"], "unknown option '--wrokers'"),
])
def test_bad_options_give_one_clear_line_and_start_nothing(tmp_path, args, says):
    env = {**os.environ, "MEDEVAL_RUN_DIR": str(tmp_path / "run"), "MEDEVAL_DB": str(tmp_path / "none.db")}
    r = subprocess.run(["bash", "scripts/serve.sh", *args, "start"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and says in lines[0], r.stderr
    assert not (tmp_path / "none.db").exists() and not list((tmp_path / "run").glob("*.pid"))
