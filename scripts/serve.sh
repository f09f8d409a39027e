#!/usr/bin/env bash
# Serving a department: N app processes (`streamlit run server.py`, as scripts/start.sh runs one) on
# 127.0.0.1 behind nginx (TLS, sticky sessions, websockets), all sharing the one SQLite database (WAL).
#
#   bash scripts/serve.sh --workers 4 [--port 8443] [--http-port 8080] [--first-port 8601]
#                         [--listen 0.0.0.0] [--cert F --key F] [start|stop|status]
#
# Settings from the environment, as scripts/start.sh: MEDEVAL_DB (default annotations.db; the demo database
# is built when it does not exist), MEDEVAL_RUN_DIR (default ./run: generated nginx.conf, pid files, logs, the
# self-signed certificate when no --cert/--key is given). `stop` and `status` need the same MEDEVAL_RUN_DIR.
# The app processes get MEDEVAL_TRUSTED_PROXIES=127.0.0.1: they believe the client address and scheme that this
# nginx forwards (it replaces X-Forwarded-For with the address it saw), and nobody else's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

die() { echo "Error: $*" >&2; exit 1; }
say() { echo "[serve] $*" >&2; }

workers=2 port=8443 http_port="" first_port=8601 listen=0.0.0.0 cert="" key="" action=start
wait_s=${MEDEVAL_SERVE_WAIT_S:-180}
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers=${2-}; shift 2 || die "--workers needs a number" ;;
    --port) port=${2-}; shift 2 || die "--port needs a number" ;;
    --http-port) http_port=${2-}; shift 2 || die "--http-port needs a number" ;;
    --first-port) first_port=${2-}; shift 2 || die "--first-port needs a number" ;;
    --listen) listen=${2-}; shift 2 || die "--listen needs an address" ;;
    --cert) cert=${2-}; shift 2 || die "--cert needs a file" ;;
    --key) key=${2-}; shift 2 || die "--key needs a file" ;;
    start|stop|status) action=$1; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1'; see 'bash scripts/serve.sh --help'" ;;
  esac
done

RUN=${MEDEVAL_RUN_DIR:-$ROOT/run}
mkdir -p "$RUN"
RUN=$(cd "$RUN" && pwd)

alive() {  # pid file -> 0 when its process runs and is what we started (not a recycled pid)
  local f=$1 pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ -r "/proc/$pid/cmdline" ] || return 1
  [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" != Z ] || return 1  # a zombie has ended
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -Eq "streamlit run server.py|nginx: master process|nginx -c $RUN/"
}

stop_all() {
  local f pid i
  if alive "$RUN/nginx.pid"; then
    pid=$(cat "$RUN/nginx.pid")
    kill -QUIT "$pid" 2>/dev/null || true  # graceful: open websockets are closed, workers exit
    for i in $(seq 50); do alive "$RUN/nginx.pid" || break; sleep 0.2; done
    alive "$RUN/nginx.pid" && kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 50); do alive "$RUN/nginx.pid" || break; sleep 0.2; done
    say "nginx stopped"
  fi
  rm -f "$RUN/nginx.pid"
  for f in "$RUN"/worker-*.pid; do
    [ -e "$f" ] || continue
    if alive "$f"; then
      pid=$(cat "$f")
      kill -TERM "$pid" 2>/dev/null || true
      for i in $(seq 75); do alive "$f" || break; sleep 0.2; done
      if alive "$f"; then kill -KILL "$pid" 2>/dev/null || true; sleep 0.2; fi
      say "app process $(basename "$f" .pid) stopped"
    fi
    rm -f "$f"
  done
}

status_all() {
  local f n=0 up=0
  if alive "$RUN/nginx.pid"; then say "nginx: running (pid $(cat "$RUN/nginx.pid"))"; else say "nginx: not running"; fi
  for f in "$RUN"/worker-*.pid; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    if alive "$f"; then up=$((up + 1)); say "$(basename "$f" .pid): running (pid $(cat "$f"))"
    else say "$(basename "$f" .pid): not running"; fi
  done
  [ "$n" -gt 0 ] && [ "$up" = "$n" ] && alive "$RUN/nginx.pid"
}

case "$action" in
  stop) stop_all; exit 0 ;;
  status) status_all; exit $? ;;
esac

# ---------------------------------------------------------------- start: check the options first
num() { [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] || die "$1 must be a whole number from $3 to $4 (got '$2')"; }
num --workers "$workers" 1 32
num --port "$port" 1 65535
num --first-port "$first_port" 1024 $((65535 - workers + 1))
[ -z "$http_port" ] || num --http-port "$http_port" 1 65535
if [ -n "$cert$key" ]; then
  [ -n "$cert" ] && [ -n "$key" ] || die "give both --cert and --key (or neither, for a self-signed certificate)"
  [ -r "$cert" ] || die "--cert $cert cannot be read"
  [ -r "$key" ] || die "--key $key cannot be read"
  cert=$(cd "$(dirname "$cert")" && pwd)/$(basename "$cert")
  key=$(cd "$(dirname "$key")" && pwd)/$(basename "$key")
fi
for f in "$RUN/nginx.pid" "$RUN"/worker-*.pid; do  # running already: refuse; left over from a crash: forget
  [ -e "$f" ] || continue
  alive "$f" && die "already running from $RUN ($(basename "$f" .pid)): run 'bash scripts/serve.sh stop' first"
  rm -f "$f"
done

bash scripts/install.sh
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  [ "$(id -u)" = "0" ] || die "nginx is not installed and this is not root: run 'apt-get install -y nginx' as root"
  say "installing Debian's nginx (first time only)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq </dev/null
  apt-get install -y -qq --no-install-recommends nginx </dev/null >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# ---------------------------------------------------------------- the database: built once, migrated once
export MEDEVAL_DB="${MEDEVAL_DB:-annotations.db}"
if [ ! -f "$MEDEVAL_DB" ]; then
  say "$MEDEVAL_DB does not exist: building the demo database (import, score, grade)"
  tmp="$MEDEVAL_DB.building"
  rm -f "$tmp" "$tmp-wal" "$tmp-shm"
  .venv/bin/python -m medeval demo --db "$tmp"
  mv "$tmp" "$MEDEVAL_DB"
fi
# migrate (and switch to WAL) once here, not N processes racing on their first request
.venv/bin/python -c "
import sys
from medeval.store.db import connect
with connect(sys.argv[1]) as db:
    mode = db.conn.execute('PRAGMA journal_mode').fetchone()[0]
sys.exit(0 if mode.lower() == 'wal' else 'Error: ' + sys.argv[1] + ' is not in WAL mode (' + mode + '); N processes need WAL')
" "$MEDEVAL_DB"
if .venv/bin/python -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); sys.exit(0 if c.execute(\"select count(*) from models where name like 'Demo%'\").fetchone()[0] else 1)" "$MEDEVAL_DB" 2>/dev/null; then
  export MEDEVAL_DEMO=1
fi

# ---------------------------------------------------------------- TLS: the given certificate or a self-signed one
if [ -z "$cert" ]; then
  cert=$RUN/tls/selfsigned.crt key=$RUN/tls/selfsigned.key
  if [ ! -s "$cert" ] || [ ! -s "$key" ]; then
    mkdir -p "$RUN/tls"
    say "no --cert/--key: generating a self-signed certificate in $RUN/tls (browsers will warn; use the hospital's)"
    (umask 077; openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=$(hostname)" \
      -addext "subjectAltName=DNS:$(hostname),DNS:localhost,IP:127.0.0.1" \
      -keyout "$key" -out "$cert" 2>/dev/null) || die "openssl could not generate a certificate in $RUN/tls"
  fi
fi

# ---------------------------------------------------------------- the app processes
mkdir -p "$RUN/logs" "$RUN/tmp"
ports=()
for ((i = 0; i < workers; i++)); do
  p=$((first_port + i))
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    die "port $p (app process $((i + 1)) of $workers) is already in use: choose another --first-port"
  fi
  ports+=("$p")
done
ok=0
trap '[ "$ok" = 1 ] || { say "start failed: stopping what was started"; stop_all; }' EXIT
for p in "${ports[@]}"; do
  # nginx (on 127.0.0.1) replaces X-Forwarded-For/-Proto with what it saw: the app processes believe it alone
  MEDEVAL_TRUSTED_PROXIES=127.0.0.1 setsid .venv/bin/python -m streamlit run server.py --server.headless=true --server.address=127.0.0.1 \
    --server.port="$p" --browser.gatherUsageStats=false --server.fileWatcherType=none --server.runOnSave=false \
    </dev/null >"$RUN/logs/worker-$p.log" 2>&1 &
  echo $! >"$RUN/worker-$p.pid"
done
say "started ${#ports[@]} app processes on 127.0.0.1:${ports[0]}..${ports[-1]} (logs in $RUN/logs)"

# ---------------------------------------------------------------- nginx: render the template, check, start
user_line="# (not root: nginx runs as this user)"
[ "$(id -u)" = "0" ] && user_line="user www-data;"
http_server=""
if [ -n "$http_port" ]; then
  host_port=":$port"; [ "$port" = 443 ] && host_port=""
  http_server="    server {  # plain HTTP only redirects to HTTPS
        listen $listen:$http_port;
        server_name _;
        return 308 https://\$host$host_port\$request_uri;
    }"
fi
upstreams=""
for p in "${ports[@]}"; do upstreams+="        server 127.0.0.1:$p max_fails=1 fail_timeout=5s;"$'\n'; done
SERVE_USER_LINE=$user_line SERVE_UPSTREAMS=${upstreams%$'\n'} SERVE_HTTP_SERVER=$http_server SERVE_LISTEN=$listen \
SERVE_PORT=$port SERVE_CERT=$cert SERVE_KEY=$key .venv/bin/python - "$ROOT/scripts/nginx.conf.template" "$RUN/nginx.conf" <<'PY'
import os, sys
from webui import COOKIE_NAME
text = open(sys.argv[1], encoding="utf-8").read()
values = {"COOKIE": COOKIE_NAME, "USER_LINE": os.environ["SERVE_USER_LINE"], "UPSTREAM_SERVERS": os.environ["SERVE_UPSTREAMS"],
          "HTTP_SERVER": os.environ["SERVE_HTTP_SERVER"], "LISTEN": os.environ["SERVE_LISTEN"],
          "PORT": os.environ["SERVE_PORT"], "CERT": os.environ["SERVE_CERT"], "KEY": os.environ["SERVE_KEY"]}
for name, value in values.items():
    text = text.replace("@@" + name + "@@", value)
if "@@" in text:
    sys.exit("Error: scripts/nginx.conf.template has a placeholder serve.sh does not fill: " + text.split("@@")[1])
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write("# generated by scripts/serve.sh -- edit scripts/nginx.conf.template\n" + text)
PY
"$NGINX" -t -q -c "$RUN/nginx.conf" -p "$RUN/" -e "$RUN/logs/nginx-error.log" \
  || die "nginx refused the generated $RUN/nginx.conf (see above)"

# wait until every app process answers its health check, then start nginx and check through it
deadline=$((SECONDS + wait_s))
for p in "${ports[@]}"; do
  until [ "$(curl -s --max-time 2 "http://127.0.0.1:$p/_stcore/health" 2>/dev/null)" = "ok" ]; do
    alive "$RUN/worker-$p.pid" || { tail -n 20 "$RUN/logs/worker-$p.log" >&2; die "app process on port $p exited (log: $RUN/logs/worker-$p.log)"; }
    [ $SECONDS -lt $deadline ] || die "app process on port $p not healthy within $wait_s s (log: $RUN/logs/worker-$p.log)"
    sleep 0.3
  done
done
"$NGINX" -c "$RUN/nginx.conf" -p "$RUN/" -e "$RUN/logs/nginx-error.log" \
  || die "nginx did not start (port $port in use? see $RUN/logs/nginx-error.log)"
probe=$listen; [ "$probe" = "0.0.0.0" ] && probe=127.0.0.1
until [ "$(curl -sk --max-time 2 "https://$probe:$port/_stcore/health" 2>/dev/null)" = "ok" ]; do
  [ $SECONDS -lt $deadline ] || die "no answer through nginx on https://$probe:$port within $wait_s s (see $RUN/logs)"
  sleep 0.3
done
ok=1
say "serving https://$(hostname):$port/ with ${#ports[@]} app processes (stop: MEDEVAL_RUN_DIR=$RUN bash scripts/serve.sh stop)"
