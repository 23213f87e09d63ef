#!/usr/bin/env bash
# aarch64 on an x86-64 Debian machine, no Arm hardware needed:
#   1. installs the cross toolchain and qemu-user (Debian's g++-aarch64-linux-gnu, qemu-user)
#      when missing;
#   2. downloads PyPI's torch aarch64 wheel (manylinux_2_28_aarch64, about 430 MB) and unpacks
#      its headers and libraries;
#   3. cross-builds the library against it (cmake/aarch64-linux-gnu.cmake) with the kernel
#      testers (test/kernels);
#   4. runs every kernel tester under qemu-aarch64 for two CPU models: `-cpu max` (NEON,
#      dotprod, i8mm: the testers compare neon, dotprod and i8mm with scalar) and
#      `-cpu cortex-a53` (ARMv8.0: neon against scalar);
#   5. with --smoke, the whole package under qemu (scripts/test_aarch64_smoke.sh): arm64 Python,
#      the torch wheel, a converted model's outputs against the x86 build's, byte for byte.
# Prints the time each step took. CI (scripts/test.sh) runs all five.
#
#   bash scripts/test_aarch64.sh [--smoke] [--work DIR]     # DIR: default build/aarch64-ci
# Environment: QPLUGIN_AARCH64_TORCH (default 2.13.0), QPLUGIN_KT_ITERS (trials per tester case),
# QPLUGIN_X86_PYTHON (--smoke: an x86 Python with torch_qplugin installed, for the reference bytes;
# default python3).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WORK="$ROOT/build/aarch64-ci"
SMOKE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) SMOKE=1; shift ;;
    --work) WORK="$2"; shift 2 ;;
    *) echo "scripts/test_aarch64.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
TORCH_V="${QPLUGIN_AARCH64_TORCH:-2.13.0}"
JOBS="${QPLUGIN_JOBS:-$(nproc)}"
mkdir -p "$WORK"
PLATFORMS=()
for t in manylinux_2_28_aarch64 manylinux_2_17_aarch64 manylinux2014_aarch64; do PLATFORMS+=(--platform "$t"); done

step_start=$SECONDS
timings=()
step_done() { timings+=("$(printf '%-34s %4d s' "$1" $((SECONDS - step_start)))"); step_start=$SECONDS; }

echo "== aarch64: toolchain"
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q g++-aarch64-linux-gnu qemu-user >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q g++-aarch64-linux-gnu qemu-user >/dev/null; }
fi
aarch64-linux-gnu-g++ --version | head -1
qemu-aarch64 --version | head -1
step_done "toolchain (apt)"

echo "== aarch64: torch $TORCH_V wheel"
TORCH_DIR="$WORK/torch-$TORCH_V"
if [ ! -f "$TORCH_DIR/torch/include/ATen/ATen.h" ]; then
  python3 -m pip download -q --no-deps --only-binary=:all: "${PLATFORMS[@]}" --python-version 3.11 \
    --implementation cp "torch==$TORCH_V" -d "$WORK/wheels"
  rm -rf "$TORCH_DIR"
  python3 -m zipfile -e "$WORK"/wheels/torch-"$TORCH_V"-*aarch64*.whl "$TORCH_DIR.tmp"
  mkdir -p "$TORCH_DIR/torch"
  mv "$TORCH_DIR.tmp/torch/include" "$TORCH_DIR.tmp/torch/lib" "$TORCH_DIR/torch/"
  rm -rf "$TORCH_DIR.tmp"
fi
step_done "torch wheel (download, unpack)"

echo "== aarch64: cross-build (library and kernel testers)"
BUILD="$WORK/build"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/aarch64-linux-gnu.cmake" \
  -DQPLUGIN_TORCH_DIR="$TORCH_DIR/torch" -DQPLUGIN_PY_OUT="$BUILD/py" -DQPLUGIN_KERNEL_TESTS=ON \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" --parallel "$JOBS"
for lib in libtorch_qplugin_plain.so libtorch_qplugin.so; do
  echo "   $lib: $(aarch64-linux-gnu-readelf -h "$BUILD/py/lib/$lib" | grep -E 'Machine' | sed 's/ *Machine: *//')"
done
step_done "cross-build"

echo "== aarch64: kernel testers under qemu"
status=0
for cpu in max cortex-a53; do
  for t in "$BUILD"/kernel_tests/kernel_test_*; do
    if ! out="$(qemu-aarch64 -cpu "$cpu" -L /usr/aarch64-linux-gnu "$t" 2>&1)"; then
      status=1
      echo "$out"
    fi
    echo "   -cpu $cpu: $(basename "$t"): $(echo "$out" | tail -1)  [$(echo "$out" | head -1 | sed 's/.*scalar: //')]"
  done
done
step_done "kernel testers (qemu, 2 CPU models)"

if [ "$SMOKE" -eq 1 ]; then
  echo "== aarch64: whole package under qemu"
  bash "$ROOT/scripts/test_aarch64_smoke.sh" --build "$BUILD" --work "$WORK/smoke" \
    --x86-python "${QPLUGIN_X86_PYTHON:-python3}" || status=1
  step_done "whole-package smoke (qemu)"
fi

echo "== aarch64: timings"
printf '   %s\n' "${timings[@]}"
exit "$status"
