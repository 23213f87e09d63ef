#!/usr/bin/env bash
# Installs what the build and tests need into the current Python, then builds torch_qplugin in
# place (editable). A torch already installed in the supported range (2.13-2.15, CPU or CUDA
# wheel) is kept: setting up never changes the user's torch. Without one, QPLUGIN_TORCH names the
# release to install (default 2.13.0, the CPU wheel); never a bare `torch`, which would pull a
# multi-GB CUDA build of whatever is newest.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP=(python -m pip install -q --disable-pip-version-check)
if python - <<'PY' 2>/dev/null
import sys
import torch
release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
sys.exit(0 if (2, 13) <= release < (2, 16) else 1)
PY
then
  echo "setup_env: keeping the installed torch $(python -c 'import torch; print(torch.__version__)')"
else
  "${PIP[@]}" "torch==${QPLUGIN_TORCH:-2.13.0}"
fi
"${PIP[@]}" numpy pytest expecttest hypothesis "setuptools>=64" wheel \
  scikit-learn tqdm matplotlib \
  onnx onnxscript onnxruntime  # the demo (and its end-to-end test): data, progress bars, chart; ONNX export
# the tests' torchvision models (test/compat/test_torchvision_models.py); --no-deps keeps the torch
"${PIP[@]}" --no-deps "torchvision==0.29.1" pillow
command -v cmake >/dev/null 2>&1 || "${PIP[@]}" "cmake>=3.18"
command -v ninja >/dev/null 2>&1 || "${PIP[@]}" ninja
"${PIP[@]}" --no-build-isolation --no-deps -e .
python -m torch_qplugin
