#!/usr/bin/env bash
# README's test command (.ci/run calls it): sets up and runs the whole test suite against a
# REGULAR install of torch_qplugin, not the source tree, once per torch version:
#   1. a fresh virtual environment per version (build/test-venv-<version>; QPLUGIN_TEST_VENV
#      names its prefix) with exactly torch==<version> and the test dependencies;
#   2. a wheel built from this checkout against that torch (pip wheel --no-build-isolation);
#   3. the wheel installed into the venv, and pytest run by the venv's Python with the checkout
#      kept off sys.path (PYTHONSAFEPATH), so a module or data file missing from the wheel fails.
# Before the tests, once: scripts/lint.sh (ruff check and format, clang-format, the generated-asm
# check, the history check) with ruff and clang-format installed into the first version's venv; a
# lint failure fails the run, after the tests.
# Each version's build also builds the torch-free kernel testers (test/kernels), run before its
# pytest; the plain library alone is built once more, on torch's stable ABI (QPLUGIN_STABLE_ABI=ON)
# against the first version, into a package of its own, and the plain suite (STABLE_PLAIN_TESTS:
# test/plain_only, the wall, the plain ops, weights and buffers) runs against that one binary under
# every version; and scripts/test_aarch64.sh --smoke
# (cross-build for aarch64, the kernel testers and the whole package under qemu, its outputs against
# the first version's x86 install) runs after the first version's tests (QPLUGIN_SKIP_AARCH64=1
# skips it). The versions' suites run side by side in the background, each as soon as its wheel is
# installed; their logs (build/test-logs) are printed in order at the end, with the time each step
# took. Where ccache is installed the builds go through it (CMAKE_CXX_COMPILER_LAUNCHER): the
# kernels compile to the same bytes under every torch version, so the second build reuses them.
#
#   bash scripts/test.sh                          # torch 2.13.0 (CPU wheel), then 2.14.1 (CUDA wheel)
#   bash scripts/test.sh --torch 2.15.0 [...]     # any version(s); pytest args follow the options
#   bash scripts/test.sh --torch 2.13.0 -k quantize -x
#
# torch 2.13.0 and 2.14.1 install from this machine's local package files. A release beyond the
# machine's pip constraint (2.15.0) is downloaded (about 3 GB with its CUDA libraries): the
# constraint refuses it, and the install is retried once without the machine's pip config
# (PIP_CONFIG_FILE=/dev/null), which this script says when it does.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  # paths under the checkout hashed relative to it, so clones elsewhere share the cache
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$ROOT"
fi
PY="${PYTHON:-python3}"
VENV_PREFIX="${QPLUGIN_TEST_VENV:-$ROOT/build/test-venv}"
DEFAULT_TORCH=(2.13.0 2.14.1)

TORCH_VERSIONS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --torch) TORCH_VERSIONS+=("$2"); shift 2 ;;
    --torch=*) TORCH_VERSIONS+=("${1#--torch=}"); shift ;;
    *) break ;;
  esac
done
[ ${#TORCH_VERSIONS[@]} -gt 0 ] || TORCH_VERSIONS=("${DEFAULT_TORCH[@]}")

install_torch() {  # venv python, version
  local vpy="$1" v="$2" log
  log="$(mktemp)"
  if "$vpy" -m pip install "torch==$v" >"$log" 2>&1; then rm -f "$log"; return 0; fi
  if grep -q "(constraint)" "$log"; then  # pip: "The user requested (constraint) torch<=..."
    echo "== torch==$v is beyond this machine's pip constraint: installing it without the machine's"
    echo "   pip config (PIP_CONFIG_FILE=/dev/null); a download of about 3 GB"
    rm -f "$log"
    PIP_CONFIG_FILE=/dev/null "$vpy" -m pip install -q "torch==$v"
    return
  fi
  cat "$log" >&2; rm -f "$log"; return 1
}

prepare() {  # version: venv with torch and the test deps, wheel built against it and installed
  local v="$1"
  local venv="$VENV_PREFIX-$v" dist="$ROOT/build/dist-torch$v"
  echo "== torch $v: test venv $venv"
  "$PY" -m venv --clear "$venv"
  local vpy="$venv/bin/python"
  install_torch "$vpy" "$v"
  "$vpy" -m pip install -q numpy pytest expecttest hypothesis "setuptools>=64" wheel \
    scikit-learn tqdm matplotlib \
    onnx onnxscript onnxruntime openvino  # the demo's end-to-end test (data, progress bars, chart); ONNX export
  # test/compat/test_torchvision_models.py: torchvision's model definitions; --no-deps keeps the
  # venv's torch (its C++ ops load only with torch 2.14; the test loads the Python models alone)
  "$vpy" -m pip install -q --no-deps "torchvision==0.29.1" pillow
  # build tools: the machine's cmake / ninja when present, else from PyPI into the venv
  command -v cmake >/dev/null 2>&1 || "$vpy" -m pip install -q "cmake>=3.18"
  command -v ninja >/dev/null 2>&1 || "$vpy" -m pip install -q ninja
  "$vpy" -c "import torch, sys; v = torch.__version__.split('+')[0]; sys.exit(0 if v == '$v' else \
    f'scripts/test.sh: asked for torch $v, the venv has {torch.__version__}')"
  echo "== torch $v: wheel"
  rm -rf "$dist"
  QPLUGIN_KERNEL_TESTS=1 "$vpy" -m pip wheel -q --no-build-isolation --no-deps . -w "$dist"
  "$vpy" -m pip install -q --no-deps "$dist"/torch_qplugin-*.whl
}

kernel_testers() {  # version: the torch-free kernel testers of that version's build
  local v="$1" t
  echo "== torch $v: kernel testers (x86-64, every tier this CPU runs against scalar)"
  for t in "$ROOT/build/cmake-release-torch$v"/kernel_tests/kernel_test_*; do
    "$t" >"$LOGS/$(basename "$t")-$v.log" 2>&1 || { cat "$LOGS/$(basename "$t")-$v.log"; return 1; }
    echo "   $(basename "$t"): $(tail -1 "$LOGS/$(basename "$t")-$v.log")"
  done
}

run_suite() {  # version, pytest args...: the whole suite against the installed package
  local v="$1"; shift
  local vpy="$VENV_PREFIX-$v/bin/python"
  echo "== torch $v: tests (installed package)"
  (cd /tmp && PYTHONSAFEPATH=1 "$vpy" -m torch_qplugin)
  local rc=0
  # a pytest temp root per version, outside the checkout: the versions' suites run side by side
  local tmp
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/qplugin-pytest-$v.XXXXXX")"
  PYTHONSAFEPATH=1 QPLUGIN_TEST_INSTALLED=1 "$vpy" -m pytest -q -p no:cacheprovider --basetemp="$tmp" "$@" || rc=$?
  [ "$rc" -ne 0 ] || rm -rf "$tmp"
  if [ "$rc" -eq 5 ]; then
    echo "scripts/test.sh: pytest collected no tests under torch $v -- treating as failure" >&2
    rc=1
  fi
  return "$rc"
}

# A background job's step: its output to $LOGS/<name>.log, "<exit code> <seconds>" to <name>.rc.
# (The step runs in a subshell outside any `||`, so that `set -e` still stops it at a failure.)
logged() {  # name, command...
  local name="$1" t0=$SECONDS rc
  shift
  (set -e; "$@") >"$LOGS/$name.log" 2>&1
  rc=$?
  echo "$rc $((SECONDS - t0))" >"$LOGS/$name.rc"
  return "$rc"
}

# The plain tier's suite, run against the stable-ABI plain library alone (its tests whose oracle is
# the quantized tier deselected: the full suite runs them).
STABLE_PLAIN_TESTS=(test/plain_only test/test_plain_wall.py test/ops/test_plain_ops.py test/ops/test_plain_weights.py
  test/ops/test_plain_buffer_integrity.py)

stable_plain_build() {  # version: the plain library alone on torch's stable ABI, built against it
  local v="$1"
  local vpy="$VENV_PREFIX-$v/bin/python" build="$ROOT/build/cmake-stable-torch$v"
  local pkg="$ROOT/build/plain-stable-torch$v"
  echo "== torch $v: the plain library alone on torch's stable ABI (QPLUGIN_STABLE_ABI=ON)"
  rm -rf "$pkg"
  mkdir -p "$pkg"
  "$vpy" -c 'import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2], ignore=shutil.ignore_patterns(
    "lib", "__pycache__", "_build_info.py", "*.so"))' "$ROOT/torch_qplugin" "$pkg/torch_qplugin"
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  cmake -S "$ROOT" -B "$build" "${gen[@]}" -DPython_EXECUTABLE="$vpy" -DQPLUGIN_STABLE_ABI=ON \
    -DQPLUGIN_PY_OUT="$pkg/torch_qplugin" >/dev/null
  cmake --build "$build" --parallel 2
  local libs
  libs="$(cd "$pkg/torch_qplugin/lib" && echo *.so)"
  [ "$libs" = "libtorch_qplugin_plain.so" ] || { echo "the stable-ABI build made: $libs" >&2; return 1; }
}

stable_plain_tests() {  # running version, built version: the plain suite against the stable build
  local v="$1" built="$2"
  local vpy="$VENV_PREFIX-$v/bin/python" pkg="$ROOT/build/plain-stable-torch$built"
  echo "== torch $v: the plain suite against the stable-ABI plain library built against torch $built"
  (cd /tmp && PYTHONPATH="$pkg" PYTHONSAFEPATH=1 "$vpy" -m torch_qplugin | grep -E "built against|running|library")
  local tmp
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/qplugin-pytest-stable-$v.XXXXXX")"
  PYTHONPATH="$pkg" QPLUGIN_PLAIN_ONLY_PKG="$pkg" PYTHONSAFEPATH=1 "$vpy" -m pytest -q -p no:cacheprovider \
    --basetemp="$tmp" -m "not quantized_tier" "${STABLE_PLAIN_TESTS[@]}"
  rm -rf "$tmp"
}

# Each foreground step runs in a subshell outside any `||`, so that `set -e` still stops a failed
# command inside it. The versions' suites (mostly single-threaded) run side by side in the
# background, each started once its venv and wheel are ready: the first version's while the next
# one builds, and so on; the aarch64 smoke follows the first version's suite. Their logs are printed
# in order at the end.
LOGS="$ROOT/build/test-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
status=0
summary=()
jobs_bg=()
set +e
start=$SECONDS
(set -e; prepare "${TORCH_VERSIONS[0]}")
prep_rc=$?
summary+=("torch ${TORCH_VERSIONS[0]} venv and wheel: $((SECONDS - start)) s")
if [ "$prep_rc" -eq 0 ]; then
  lint_py="$VENV_PREFIX-${TORCH_VERSIONS[0]}/bin/python"
  start=$SECONDS
  "$lint_py" -m pip install -q ruff clang-format==18.1.8 && PYTHON="$lint_py" bash scripts/lint.sh
  lint_rc=$?
  summary+=("lint: $([ "$lint_rc" -eq 0 ] && echo passed || echo "FAILED (exit $lint_rc)"), $((SECONDS - start)) s")
  [ "$lint_rc" -eq 0 ] || status=1
fi
for i in "${!TORCH_VERSIONS[@]}"; do
  v="${TORCH_VERSIONS[$i]}"
  next="${TORCH_VERSIONS[$((i + 1))]:-}"
  if [ "$prep_rc" -ne 0 ]; then
    echo "scripts/test.sh: setting up torch $v failed (exit $prep_rc)" >&2
    summary+=("torch $v: FAILED (setting up, exit $prep_rc)")
    status=1
  else
    (set -e; kernel_testers "$v")
    rc=$?
    [ "$rc" -eq 0 ] || { summary+=("torch $v kernel testers: FAILED (exit $rc)"); status=1; }
    echo "== torch $v: the suite runs in the background (build/test-logs/tests-$v.log)"
    if [ "$i" -eq 0 ] && [ "${QPLUGIN_SKIP_AARCH64:-0}" != 1 ]; then
      { logged "tests-$v" run_suite "$v" "$@"
        QPLUGIN_JOBS=2 QPLUGIN_X86_PYTHON="$VENV_PREFIX-$v/bin/python" \
          logged aarch64 bash scripts/test_aarch64.sh --smoke; } &
    else
      logged "tests-$v" run_suite "$v" "$@" &
    fi
    jobs_bg+=($!)
    start=$SECONDS
    if [ "$i" -eq 0 ]; then
      (set -e; stable_plain_build "$v")
      stable_rc=$?
      summary+=("torch $v stable-ABI plain library: $([ "$stable_rc" -eq 0 ] && echo built || echo "FAILED (exit $stable_rc)"), $((SECONDS - start)) s")
      [ "$stable_rc" -eq 0 ] || status=1
      start=$SECONDS
    fi
    if [ "${stable_rc:-1}" -eq 0 ]; then
      (set -e; stable_plain_tests "$v" "${TORCH_VERSIONS[0]}")
      rc=$?
      summary+=("torch $v: plain suite on the stable-ABI build of torch ${TORCH_VERSIONS[0]}: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)"), $((SECONDS - start)) s")
      [ "$rc" -eq 0 ] || status=1
    fi
  fi
  if [ -n "$next" ]; then
    start=$SECONDS
    (set -e; prepare "$next")
    prep_rc=$?
    summary+=("torch $next venv and wheel (beside the tests): $((SECONDS - start)) s")
  fi
done
start=$SECONDS
for j in "${jobs_bg[@]}"; do wait "$j"; done
for name in $(printf 'tests-%s\n' "${TORCH_VERSIONS[@]}") aarch64; do
  [ -f "$LOGS/$name.log" ] || continue
  echo "== $name (build/test-logs/$name.log)"
  cat "$LOGS/$name.log"
  read -r rc secs <"$LOGS/$name.rc" 2>/dev/null || { rc=1; secs="?"; }
  summary+=("$name: $([ "$rc" -eq 0 ] && echo passed || echo "FAILED (exit $rc)"), $secs s")
  [ "$rc" -eq 0 ] || status=1
done
summary+=("waited $((SECONDS - start)) s for the background suites after the last setup")
set -e
echo "== summary ($SECONDS s in all)"
printf '   %s\n' "${summary[@]}"
exit "$status"
