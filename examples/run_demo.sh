#!/usr/bin/env bash
# README's main command: sets up (keeps an installed torch 2.13-2.15, else installs torch==2.13.0;
# the build deps; builds torch_qplugin) and runs the end-to-end demo.
#   bash examples/run_demo.sh [demo.py options, e.g. --threads 2 --out /tmp/demo]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup_env.sh
# The demo's own dependencies: the digits data set ships in scikit-learn; tqdm for progress bars,
# matplotlib for the chart.
missing=()
for mod in sklearn:scikit-learn tqdm:tqdm matplotlib:matplotlib; do
  python -c "import ${mod%%:*}" 2>/dev/null || missing+=("${mod##*:}")
done
if ((${#missing[@]})); then
  echo "installing demo dependencies: ${missing[*]}"
  python -m pip install -q --disable-pip-version-check "${missing[@]}"
fi
python examples/quickstart.py
exec python examples/demo.py "$@"
