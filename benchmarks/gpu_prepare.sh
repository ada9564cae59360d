#!/usr/bin/env bash
# Prepare .gpu/ (git-ignored through .git/info/exclude) for benchmarks/gpu_check.py on a GPU
# machine that has torch and transformers but not this repository's other dependencies:
# four built suites, the MiniLM config and tokenizer (no weights), the RTE and WiC sources the
# GPU tests build from, and the `datasets` wheels the suite builders import.
#
#   bash benchmarks/gpu_prepare.sh MINILM_MODEL_DIR     # from the repository root
set -euo pipefail
model=${1:?usage: gpu_prepare.sh MINILM_MODEL_DIR (a folder with config.json and tokenizer.json)}
CB=${CB:-consistency-bench}
SOURCES=${SOURCES:-../shared/corpora}
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
rm -rf .gpu && mkdir -p .gpu/corpora/becel .gpu/minilm .gpu/whl
$CB build --sources "$SOURCES" --out .gpu/cb --suites rte_semantic rte_negational wic_semantic mnli_calm
cp "$SOURCES/MANIFEST.tsv" .gpu/corpora/
cp -r "$SOURCES/becel/rte" "$SOURCES/becel/wic" .gpu/corpora/becel/
mkdir -p .gpu/corpora/mnli  # the RTE few-shot pool is drawn from MultiNLI dev-matched
cp "$SOURCES/mnli/dev_matched.generative-nli.jsonl" .gpu/corpora/mnli/
cp "$model"/{config.json,tokenizer.json,tokenizer_config.json} .gpu/minilm/
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d .gpu/whl \
  datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
du -sh .gpu
