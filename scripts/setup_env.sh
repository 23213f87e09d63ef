#!/usr/bin/env bash
# Installs what the build and tests need, then builds torch_qplugin in place
# (editable). torch is pinned: a looser spec would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q --disable-pip-version-check "torch==2.13.0" numpy pytest expecttest hypothesis "setuptools>=64" wheel \
  scikit-learn tqdm matplotlib  # the demo (and its end-to-end test): digits data, progress bars, chart
command -v cmake >/dev/null 2>&1 || python -m pip install -q --disable-pip-version-check "cmake>=3.18"
command -v ninja >/dev/null 2>&1 || python -m pip install -q --disable-pip-version-check ninja
python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e .
python -m torch_qplugin
