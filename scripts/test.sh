#!/usr/bin/env bash
# Set up from nothing (idempotent) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
.venv/bin/ruff check .
# type check of bench/metrics and leaderboard ([tool.mypy] in pyproject.toml); once the layers
# install under consistency_bench (issue 29) mypy runs in a tree of that layout
.venv/bin/python scripts/typecheck.py
.venv/bin/python -m pytest -q "$@"
