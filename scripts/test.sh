#!/usr/bin/env bash
# README command 2 (and .ci/run): install if needed, then run the tests.
#   bash scripts/test.sh                  everything, in two passes: all but the browser tests on
#                                         $MEDEVAL_TEST_WORKERS processes (pytest-xdist, default 2), then the
#                                         real-browser tests on their own (they time a real Streamlit server)
#   bash scripts/test.sh -m "not slow"    the fast unit layer (no subprocess CLI, AppTest, browser, demo build)
#   bash scripts/test.sh -k metrics       any pytest arguments: one run with them, in parallel (-n 0: one process)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/install-browser.sh
# Python keeps compiled modules (and pytest its assertion-rewritten tests) in __pycache__ (git-ignored): a second run,
# and the second xdist worker, skip recompiling ~300 modules (about 12 s of the unit layer on 2 cores)
unset PYTHONDONTWRITEBYTECODE
workers=${MEDEVAL_TEST_WORKERS:-2}
pytest=(.venv/bin/python -m pytest -q -p no:cacheprovider)
if [ $# -gt 0 ]; then
  exec "${pytest[@]}" -n "$workers" "$@"
fi
"${pytest[@]}" -n "$workers" -m "not browser"
exec "${pytest[@]}" -m browser
