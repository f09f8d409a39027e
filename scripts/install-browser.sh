#!/usr/bin/env bash
# Debian's Chromium for the browser tests (Playwright drives it; nothing is downloaded by Playwright itself).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (CI runs as root).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "[browser] chromium is not installed and this is not root: run 'apt-get update && apt-get install -y chromium' as root" >&2
  exit 1
fi
echo "[browser] installing Debian's chromium (first time only)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq </dev/null
apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk </dev/null >/dev/null
echo "[browser] $(chromium --version)" >&2
