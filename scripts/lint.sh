#!/usr/bin/env bash
# The repository's lint, run by scripts/test.sh (and so by CI) before the tests:
#   1. ruff check over the Python tree (rules in pyproject.toml, [tool.ruff]);
#   2. ruff format --check: the Python tree is as ruff formats it;
#   3. clang-format 18 --dry-run over the tracked C / C++ files (.clang-format);
#   4. scripts/gen_qgemm_asm.py --check: the generated inline-asm bodies of qgemm_kernel.cpp are
#      what the generator writes;
#   5. scripts/check_history.py: no comment, docstring, help text or doc names a work item
#      ("stop N", "issue N"), and no code holds a before -> after timing.
# Every step runs; the exit status is 1 if any failed.
#
#   bash scripts/lint.sh    # ruff: $RUFF, else `$PYTHON -m ruff` where installed, else the PATH's;
#                           # clang-format: $CLANG_FORMAT, else the one beside $PYTHON, else the PATH's
#   pip install ruff clang-format==18.1.8   # if either is missing
#   ruff format . && git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format -i   # to apply both
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ -n "${RUFF:-}" ]; then
  ruff=("$RUFF")
elif "$PY" -c "import ruff" >/dev/null 2>&1; then
  ruff=("$PY" -m ruff)
elif command -v ruff >/dev/null 2>&1; then
  ruff=(ruff)
else
  echo "scripts/lint.sh: ruff not found (pip install ruff, or set RUFF)" >&2
  exit 1
fi

clang_format="${CLANG_FORMAT:-}"
if [ -z "$clang_format" ]; then
  clang_format="$(dirname "$("$PY" -c 'import sys; print(sys.executable)')")/clang-format"
  [ -x "$clang_format" ] || clang_format="$(command -v clang-format || true)"
fi
if [ -z "$clang_format" ] || ! "$clang_format" --version | grep -q "version 18\."; then
  echo "scripts/lint.sh: clang-format 18 not found (pip install clang-format==18.1.8, or set CLANG_FORMAT)" >&2
  exit 1
fi

status=0
start=$SECONDS
echo "== lint: ruff check"
"${ruff[@]}" check --no-cache --quiet . || { echo "scripts/lint.sh: ruff check failed" >&2; status=1; }
echo "== lint: ruff format --check"
"${ruff[@]}" format --check --no-cache --quiet . || {
  echo "scripts/lint.sh: Python files differ from ruff's format: run ruff format ." >&2
  status=1
}
echo "== lint: clang-format --dry-run"
git ls-files -z '*.cpp' '*.h' '*.c' | xargs -0 "$clang_format" --dry-run --Werror || {
  echo "scripts/lint.sh: C++ files differ from .clang-format: run clang-format -i on the files above" >&2
  status=1
}
echo "== lint: generated asm (scripts/gen_qgemm_asm.py --check)"
"$PY" scripts/gen_qgemm_asm.py --check || {
  echo "scripts/lint.sh: qgemm_kernel.cpp's generated asm is out of date: run python scripts/gen_qgemm_asm.py" >&2
  status=1
}
echo "== lint: history in comments and docs (scripts/check_history.py)"
"$PY" scripts/check_history.py || status=1
echo "== lint: $([ "$status" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
exit "$status"
