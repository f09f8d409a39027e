#!/usr/bin/env bash
# Debian's Chromium for the browser tests and the PDF reports (Playwright drives it; nothing is downloaded by
# Playwright itself), the CJK font the Chinese pages and PDFs are drawn with (fonts-noto-cjk), and poppler-utils
# (pdftotext, pdffonts, pdftoppm) with which the tests read a PDF back.
# Idempotent: does nothing when all three are there. Needs root (CI runs as root).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
{ command -v fc-list >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; } || need+=(fonts-noto-cjk)
command -v pdffonts >/dev/null 2>&1 || need+=(poppler-utils)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "[browser] missing ${need[*]} and this is not root: run 'apt-get update && apt-get install -y ${need[*]}' as root" >&2
  exit 1
fi
echo "[browser] installing Debian's ${need[*]} (first time only)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq </dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" </dev/null >/dev/null
command -v chromium >/dev/null 2>&1 && echo "[browser] $(chromium --version)" >&2
