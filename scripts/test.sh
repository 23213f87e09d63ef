#!/usr/bin/env bash
# README's test command (.ci/run calls it): sets up and runs the whole test suite against a
# REGULAR install of torch_qplugin, not the source tree:
#   1. a fresh virtual environment (default build/test-venv; QPLUGIN_TEST_VENV moves it) with
#      torch==2.13.0 (the CPU build; never a looser spec) and the test dependencies;
#   2. a wheel built from this checkout (pip wheel --no-build-isolation --no-deps .);
#   3. the wheel installed into the venv, and pytest run by the venv's Python with the checkout
#      kept off sys.path (PYTHONSAFEPATH), so a module or data file missing from the wheel fails.
#   bash scripts/test.sh [pytest args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
PY="${PYTHON:-python3}"
VENV="${QPLUGIN_TEST_VENV:-$ROOT/build/test-venv}"
DIST="$ROOT/build/dist"

echo "== test venv: $VENV"
"$PY" -m venv --clear "$VENV"
VPY="$VENV/bin/python"
"$VPY" -m pip install -q "torch==2.13.0" numpy pytest expecttest hypothesis "setuptools>=64" wheel \
  scikit-learn tqdm matplotlib  # the demo's end-to-end test: digits data, progress bars, chart
# build tools: the machine's cmake / ninja when present, else from PyPI into the venv
command -v cmake >/dev/null 2>&1 || "$VPY" -m pip install -q "cmake>=3.18"
command -v ninja >/dev/null 2>&1 || "$VPY" -m pip install -q ninja

echo "== wheel"
rm -rf "$DIST"
"$VPY" -m pip wheel -q --no-build-isolation --no-deps . -w "$DIST"
"$VPY" -m pip install -q --no-deps "$DIST"/torch_qplugin-*.whl

echo "== tests (installed package)"
export PYTHONSAFEPATH=1 QPLUGIN_TEST_INSTALLED=1
(cd /tmp && "$VPY" -m torch_qplugin)
set +e
"$VPY" -m pytest -q -p no:cacheprovider "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "scripts/test.sh: pytest collected no tests -- treating as failure" >&2
  exit 1
fi
exit "$rc"
