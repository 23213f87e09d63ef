#!/usr/bin/env bash
# Sets up and runs the test suite (README's test command; .ci/run calls it).
#   bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
set +e
python -m pytest -q "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "scripts/test.sh: pytest collected no tests -- treating as failure" >&2
  exit 1
fi
exit "$rc"
