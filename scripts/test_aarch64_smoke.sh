#!/usr/bin/env bash
# Whole-package smoke test of an aarch64 build of torch_qplugin, under qemu-user on an x86 machine.
#
#   bash scripts/test_aarch64_smoke.sh [--work DIR] [--build DIR] [--x86-python PY] [--torch VER]
#
#   --work DIR        everything this script makes (default build/aarch64-smoke)
#   --build DIR       the aarch64 CMake build dir whose py/ holds lib/libtorch_qplugin{,_plain}.so and
#                     _build_info.py (default build/aarch64; DIR/py itself is accepted too)
#   --x86-python PY   an x86 python with torch_qplugin installed, for the reference outputs
#                     (default: python3 on PATH; an active venv's)
#   --torch VER       the aarch64 torch wheel (default 2.13.0, what the build was made against)
#   --py-src DIR      the torch_qplugin Python sources to package (default: this checkout's)
#
# Parts, each timed:
#   apt     host tools (qemu-user, aarch64 binutils / gcc, python3-pip) if missing, then `apt-get download` of
#           Debian's arm64 python3.11 and its libraries (libc, libstdc++, libgomp, ...), unpacked
#           into DIR/sysroot (needs `dpkg --add-architecture arm64`, the only global change).
#   pip     PyPI's manylinux aarch64 torch wheel plus numpy and torch's pure-Python deps into
#           DIR/site, by the x86 pip (--platform / --target, no deps resolved on the target).
#   stubs   scripts/aarch64_cuda_stubs.py: loader stubs for the CUDA sonames the (CUDA) wheel
#           needs, and scripts/aarch64_qemu_cpuinfo.c: qemu-user shows the x86 /proc/cpuinfo,
#           on which torch's cpuinfo crashes; the shim gives it an ARM one.
#   torch   `import torch; torch.ones(3) + 1` under qemu.
#   smoke   the package assembled in DIR/pkg (torch_qplugin/*.py of this checkout + the aarch64
#           lib and _build_info.py), `python -m torch_qplugin`, then scripts/smoke_model.py on
#           every aarch64 kernel path: QPLUGIN_ISA=scalar/neon/dotprod/i8mm under
#           `qemu-aarch64 -cpu max`, neon under `-cpu cortex-a53`; the x86 reference run first
#           (its best path), then the x86 build's other paths.
#   compare outputs.bin of every other run against the x86 reference run, byte for byte.
#
# Steps whose result exists are skipped on a rerun (stamps in DIR); rm -r DIR to start over.
# Exit status: 0 when every run matched the x86 bytes, 1 otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$REPO/build/aarch64-smoke
BUILD=$REPO/build/aarch64
X86_PY=python3
TORCH_VER=2.13.0
PYVER=3.11
PY_SRC=$REPO/torch_qplugin
while [ $# -gt 0 ]; do
    case $1 in
        --work) WORK=$2; shift 2 ;;
        --build) BUILD=$2; shift 2 ;;
        --x86-python) X86_PY=$2; shift 2 ;;
        --torch) TORCH_VER=$2; shift 2 ;;
        --py-src) PY_SRC=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 0 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
SYSROOT=$WORK/sysroot
SITE=$WORK/site
STUBS=$WORK/cuda-stubs
PKG=$WORK/pkg
OUT=$WORK/out
PY=$SYSROOT/usr/bin/python$PYVER
if [ -d "$BUILD/py/lib" ]; then BUILD_PY=$BUILD/py; else BUILD_PY=$BUILD; fi
LIB=$BUILD_PY/lib/libtorch_qplugin.so
if [ ! -f "$LIB" ] || [ ! -f "$BUILD_PY/lib/libtorch_qplugin_plain.so" ] || [ ! -f "$BUILD_PY/_build_info.py" ]; then
    echo "no aarch64 build at $BUILD_PY (needs lib/libtorch_qplugin.so, lib/libtorch_qplugin_plain.so and _build_info.py)" >&2
    exit 2
fi

declare -a TIMES=()
t_start() { T0=$(date +%s%N); echo "== $1"; }
t_end() { local ms=$((($(date +%s%N) - T0) / 1000000)); TIMES+=("$(printf '%-8s %5d.%01d s' "$1" $((ms / 1000)) $((ms % 1000 / 100)))"); }
SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo

# ---------------------------------------------------------------------------------------- apt
# Debian 12's arm64 python3.11 and what it and torch's libraries link.
ARM_DEBS="python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libc6 libgcc-s1 libstdc++6
libgomp1 zlib1g libexpat1 libffi8 libssl3 libbz2-1.0 liblzma5 libsqlite3-0 libncursesw6 libtinfo6
libreadline8 libuuid1 libdb5.3 libgdbm6 libnsl2 libtirpc3 libcrypt1 libgssapi-krb5-2 libk5crypto3
libkrb5-3 libkrb5support0 libcom-err2 libkeyutils1"
t_start apt
need=
for tool in qemu-aarch64:qemu-user aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu \
            aarch64-linux-gnu-readelf:binutils-aarch64-linux-gnu; do
    command -v "${tool%%:*}" >/dev/null || need="$need ${tool##*:}"
done
python3 -m pip --version >/dev/null 2>&1 || need="$need python3-pip"
if [ ! -f "$WORK/.apt-done" ]; then
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        $SUDO dpkg --add-architecture arm64
    fi
    $SUDO apt-get update -qq
    [ -z "$need" ] || $SUDO apt-get install -y -qq $need
    mkdir -p "$WORK/debs" "$SYSROOT"
    (cd "$WORK/debs" && apt-get download -qq $(for p in $ARM_DEBS; do echo "$p:arm64"; done))
    for deb in "$WORK"/debs/*.deb; do dpkg-deb -x "$deb" "$SYSROOT"; done
    touch "$WORK/.apt-done"
elif [ -n "$need" ]; then
    $SUDO apt-get install -y -qq $need
fi
qemu-aarch64 -L "$SYSROOT" "$PY" -c 'import platform, sys; print("arm python", platform.machine(), sys.version.split()[0])'
t_end apt

# ---------------------------------------------------------------------------------------- pip
t_start pip
if [ ! -f "$WORK/.pip-done" ]; then
    PLATS=()
    for p in manylinux_2_28_aarch64 manylinux_2_27_aarch64 manylinux_2_26_aarch64 manylinux_2_17_aarch64 \
             manylinux2014_aarch64 linux_aarch64; do PLATS+=(--platform "$p"); done
    PIPT=(python3 -m pip install -q --target "$SITE" "${PLATS[@]}" --python-version "$PYVER"
          --implementation cp --abi "cp${PYVER/./}" --only-binary=:all: --no-deps --upgrade)
    "${PIPT[@]}" "torch==$TORCH_VER"
    "${PIPT[@]}" numpy sympy mpmath networkx jinja2 markupsafe fsspec filelock typing-extensions
    touch "$WORK/.pip-done"
fi
du -sh "$SITE" | sed 's/^/site: /'
t_end pip

# ---------------------------------------------------------------------------------------- stubs
t_start stubs
if [ ! -f "$WORK/.stubs-done" ]; then
    rm -rf "$STUBS"
    python3 "$REPO/scripts/aarch64_cuda_stubs.py" --libdir "$SITE/torch/lib" --sysroot "$SYSROOT" \
        --out "$STUBS" --provider "$PY"
    aarch64-linux-gnu-gcc -shared -fPIC -O1 -o "$STUBS/libqemu_cpuinfo.so" \
        "$REPO/scripts/aarch64_qemu_cpuinfo.c" -ldl
    touch "$WORK/.stubs-done"
fi
# ARM cpuinfo per emulated CPU: one block per CPU the host's /sys lists (cpuinfo matches them)
NCPU=$(nproc --all)
for cpu in max:0xd0c cortex-a53:0xd03; do
    for ((i = 0; i < NCPU; i++)); do
        printf 'processor\t: %d\nBogoMIPS\t: 100.00\nFeatures\t: fp asimd cpuid\nCPU implementer\t: 0x41\n' "$i"
        printf 'CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: %s\nCPU revision\t: 0\n\n' "${cpu#*:}"
    done > "$STUBS/cpuinfo.${cpu%%:*}"
done
t_end stubs

# qpy CPU [VAR=VALUE...] -- ARGS: the arm python under qemu with a clean environment
qpy() {
    local cpu=$1; shift
    local envs=(-E LD_LIBRARY_PATH="$STUBS" -E LD_PRELOAD="$STUBS/libqemu_cpuinfo.so"
                -E QEMU_FAKE_CPUINFO="$STUBS/cpuinfo.$cpu" -E PYTHONPATH="$PKG:$SITE"
                -E PYTHONNOUSERSITE=1 -E HOME="$WORK" -E PATH=/usr/bin:/bin)
    while [ "$1" != "--" ]; do envs+=(-E "$1"); shift; done
    shift
    (cd "$WORK" && env -i PATH=/usr/bin:/bin qemu-aarch64 -cpu "$cpu" -L "$SYSROOT" "${envs[@]}" "$PY" -X faulthandler "$@") \
        2> >(grep -v "MIDR_EL1 sysfs\|are deprecated and will be removed" >&2)
}

# ---------------------------------------------------------------------------------------- torch
t_start torch
qpy max -- -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), (torch.ones(3) + 1).tolist())'
t_end torch

# ---------------------------------------------------------------------------------------- smoke
t_start smoke
rm -rf "$PKG" "$OUT"
mkdir -p "$PKG" "$OUT"
python3 - "$PY_SRC" "$PKG/torch_qplugin" <<'EOF'
import shutil, sys
shutil.copytree(sys.argv[1], sys.argv[2], ignore=shutil.ignore_patterns(
    "lib", "__pycache__", "_build_info.py", "*.so", "*.in", "*.pyc"))
EOF
cp -r "$BUILD_PY/lib" "$PKG/torch_qplugin/lib"
cp "$BUILD_PY/_build_info.py" "$PKG/torch_qplugin/_build_info.py"

echo "-- x86 reference ($X86_PY)"
(cd "$WORK" && "$X86_PY" "$REPO/scripts/smoke_model.py" --out "$OUT/x86" --save-model "$OUT/model_x86.pt" \
    --load-model "$OUT/model_x86.pt") \
    2> >(grep -v "are deprecated and will be removed" >&2)
# the x86 build's other paths, compared like the aarch64 runs
X86_RUNS=()
for isa in $(sed -n 's/^supported //p' "$OUT/x86/paths.txt"); do
    [ "$isa" = "$(sed -n 's/^active //p' "$OUT/x86/paths.txt")" ] && continue
    (cd "$WORK" && QPLUGIN_ISA=$isa "$X86_PY" "$REPO/scripts/smoke_model.py" --out "$OUT/x86-$isa" \
        --load-model "$OUT/model_x86.pt" >/dev/null 2>&1) || echo "x86 $isa run failed"
    X86_RUNS+=("x86 $isa")
done
echo "-- python -m torch_qplugin (aarch64, -cpu max)"
main_rc=0
qpy max -- -m torch_qplugin || main_rc=$?
RUNS=("max scalar" "max neon" "max dotprod" "max i8mm" "cortex-a53 neon")
for run in "${RUNS[@]}"; do
    set -- $run
    echo "-- aarch64 -cpu $1 QPLUGIN_ISA=$2"
    qpy "$1" QPLUGIN_ISA="$2" -- "$REPO/scripts/smoke_model.py" --out "$OUT/$1-$2" --load-model "$OUT/model_x86.pt" \
        || echo "run failed (exit $?)"
done
t_end smoke

# ---------------------------------------------------------------------------------------- compare
t_start compare
echo "   with the x86 outputs ($OUT/x86/outputs.bin)"
status=0
if [ "$main_rc" -ne 0 ]; then
    echo "  python -m torch_qplugin FAILED (exit $main_rc)"
    status=1
fi
for run in "${X86_RUNS[@]}" "${RUNS[@]}"; do
    set -- $run
    d=$OUT/$1-$2
    active=$(sed -n 's/^active //p' "$d/paths.txt" 2>/dev/null || true)
    if [ -f "$d/outputs.bin" ] && cmp -s "$OUT/x86/outputs.bin" "$d/outputs.bin"; then
        printf '  %-12s %-8s (active %-7s) identical\n' "$1" "$2" "$active"
    else
        printf '  %-12s %-8s (active %-7s) DIFFERS\n' "$1" "$2" "$active"
        diff "$OUT/x86/outputs.txt" "$d/outputs.txt" 2>&1 | sed 's/^/      /' || true
        status=1
    fi
done

t_end compare
echo "== times"
printf '  %s\n' "${TIMES[@]}"
exit $status
