#!/usr/bin/env bash
# README command 1: install, build the demo database on first start, run the app.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export MEDEVAL_DB="${MEDEVAL_DB:-annotations.db}"
if [ ! -f "$MEDEVAL_DB" ]; then
  echo "[start] $MEDEVAL_DB does not exist: building the demo database (import, score, grade)" >&2
  tmp="$MEDEVAL_DB.building"
  rm -f "$tmp" "$tmp-wal" "$tmp-shm"
  .venv/bin/python -m medeval demo --db "$tmp"   # built aside: an interrupted build leaves no half database
  mv "$tmp" "$MEDEVAL_DB"
fi
if .venv/bin/python -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); sys.exit(0 if c.execute(\"select count(*) from models where name like 'Demo%'\").fetchone()[0] else 1)" "$MEDEVAL_DB" 2>/dev/null; then
  export MEDEVAL_DEMO=1
fi
exec .venv/bin/python -m streamlit run server.py \
  --server.address="${MEDEVAL_ADDRESS:-127.0.0.1}" --server.port="${MEDEVAL_PORT:-8501}" "$@"
