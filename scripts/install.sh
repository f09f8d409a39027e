#!/usr/bin/env bash
# Create .venv and install the pinned requirements (idempotent: a second run only checks).
# CPU-only torch comes first, from the torch==2.13.0 wheel, so pip never pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
stamp=.venv/.requirements.sha1
link_project() {  # make `python -m medeval` work from any folder (a .pth file, no build step)
  .venv/bin/python -c "import sysconfig,sys; open(sysconfig.get_paths()['purelib'] + '/medeval-project.pth', 'w').write(sys.argv[1] + '\n')" "$PWD"
}
compile_catalogues() {  # the interface's translations: each medeval/locale/*/LC_MESSAGES/medeval.po -> .mo
  .venv/bin/python -m medeval i18n compile >/dev/null
}
want=$(sha1sum requirements.txt | cut -d' ' -f1)
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  link_project
  compile_catalogues
  exit 0
fi
echo "[install] creating .venv and installing requirements (first time: a few minutes)" >&2
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -r requirements.txt
link_project
compile_catalogues
echo "$want" > "$stamp"
echo "[install] done" >&2
