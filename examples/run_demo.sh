#!/usr/bin/env bash
# One command: set up and run the end-to-end demo (examples/demo.py).
#   bash examples/run_demo.sh [demo.py options, e.g. --threads 2 --out /tmp/demo]
# Installs the demo's Python dependencies if missing (scikit-learn for the bundled digits data,
# tqdm for progress bars, matplotlib for the chart), builds torch_qplugin in place if it is not
# importable, then runs the demo. Needs torch 2.13 already installed (the plugin is built against it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python}"
cd "$ROOT"

"$PY" -c "import torch" 2>/dev/null || { echo "torch is not installed: pip install torch==2.13.0" >&2; exit 1; }

missing=()
for mod in sklearn:scikit-learn tqdm:tqdm matplotlib:matplotlib; do
  "$PY" -c "import ${mod%%:*}" 2>/dev/null || missing+=("${mod##*:}")
done
if ((${#missing[@]})); then
  echo "installing demo dependencies: ${missing[*]}"
  "$PY" -m pip install -q "${missing[@]}"
fi

export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c "import torch_qplugin" 2>/dev/null; then
  echo "building torch_qplugin in place (first build takes a few minutes) ..."
  mkdir -p torch_qplugin/lib
  MAX_JOBS="${MAX_JOBS:-$(nproc)}" "$PY" setup.py -q build_ext --inplace
  # a first in-place build may leave the generated build info only under build/
  if [ ! -f torch_qplugin/_build_info.py ]; then
    cp build/lib*/torch_qplugin/_build_info.py torch_qplugin/ 2>/dev/null || true
  fi
  "$PY" -c "import torch_qplugin" || echo "WARNING: torch_qplugin still not importable; the demo will report why" >&2
fi

exec "$PY" examples/demo.py "$@"
