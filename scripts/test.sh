#!/usr/bin/env bash
# README command 2 (and .ci/run): install if needed, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/install-browser.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
