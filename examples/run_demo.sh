#!/usr/bin/env bash
# README's main command: sets up (installs, builds) and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
python examples/quickstart.py
