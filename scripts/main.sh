#!/usr/bin/env bash
# The main job on a fresh machine: set up, build every suite from the local corpus mirror,
# score prediction files, print the tables.
# Usage: bash scripts/main.sh [SOURCES_DIR]   (default: ../shared/corpora)
set -euo pipefail
cd "$(dirname "$0")/.."
SOURCES=${1:-${CONSISTENCY_BENCH_SOURCES:-../shared/corpora}}
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
CB=.venv/bin/consistency-bench
$CB build --sources "$SOURCES" --out consistency-bench
mkdir -p out
# 1. Real model outputs released with BECEL (the two transitive sets), converted and scored.
for task in snli wic; do
  $CB convert-becel "$SOURCES/becel/examples/$task-transitive.json" --suite "${task}_transitive" \
    --data consistency-bench --out "out/becel-$task-transitive.jsonl"
done
cat out/becel-snli-transitive.jsonl out/becel-wic-transitive.jsonl > out/becel-examples.jsonl
$CB score out/becel-examples.jsonl --data consistency-bench --out out/becel-examples.results.json
# 2. The lexical-overlap baseline over every suite it covers, scored.
$CB baseline lexical-overlap --data consistency-bench --sources "$SOURCES" --no-download \
  --out out/lexical-overlap.jsonl
$CB score out/lexical-overlap.jsonl --data consistency-bench --out out/lexical-overlap.results.json
