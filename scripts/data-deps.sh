#!/usr/bin/env bash
# Language data the NLP features need (WordNet for NLTK, ...), installed from system packages
# into .venv. Each feature adds its step here. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
