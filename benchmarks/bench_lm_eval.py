"""Causal runner (`consistency-bench predict`) vs lm-eval's own `hf` model: whole processes.

    PYTHONPATH=. nice -n 10 python benchmarks/bench_lm_eval.py --sources ../shared/corpora \
        --runs 3

Both sides score the same suites with the same random GPT-2 (speed does not depend on the
weights) and the same prompts and verbalisers, each as the process a user runs:

1. ``predict``: ``python -m consistency_bench predict --model M --data D --suites ... --out P``.
2. ``lm-eval``: ``python -m lm_eval --model hf --model_args pretrained=M,dtype=float32
   --include_path TASKS --tasks consistency_bench --log_samples --output_path O
   --batch_size B`` after ``export-lm-eval`` (the export is not timed); with
   ``--convert``, ``convert-lm-eval`` is timed too (what a user needs for a prediction file).

The two run interleaved (the order alternates each run), ``--runs`` times; the script prints
every time, the medians, rows/s (suite rows over the median wall time) and the ratio. The
model is a GPT-2 of ``--layers`` x ``--hidden`` with a byte-level BPE tokenizer of
``--vocab`` tokens trained on the suites' texts (no download) and an output layer of
``--model-vocab`` logits (GPT-2's 50,257 by default, so the cost of the output layer is
realistic). lm-eval batches
``--lm-eval-batch-size`` requests (default 32); the runner uses ``--batch-size auto``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_SUITES = ["rte_semantic", "rte_negational", "mrpc_semantic", "wic_semantic",
                  "sst2_semantic"]


def make_model(data: Path, suites: list[str], out: Path, layers: int, hidden: int,
               vocab: int, model_vocab: int) -> Path:
    import pyarrow.parquet as pq

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.tiny_models import tiny_gpt2

    texts = []
    for suite in suites:
        for row in pq.read_table(data / suite / "test.parquet").to_pylist():
            texts += [row["text"], row["text_pair"] or ""]
    texts += ["Question: Answer: True False Neither yes no positive negative"] * 50
    return tiny_gpt2(out, corpus=texts, layers=layers, hidden=hidden, vocab_size=vocab,
                     model_vocab=model_vocab)


def timed(cmd: list[str], env: dict, cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])} ... failed:\n{done.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="built folder (default: build --suites from --sources)")
    parser.add_argument("--sources", default="../shared/corpora")
    parser.add_argument("--suites", nargs="+", default=DEFAULT_SUITES)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=8000, help="tokenizer vocabulary")
    parser.add_argument("--model-vocab", type=int, default=50257,
                        help="output layer width (GPT-2's 50,257 by default)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lm-eval-batch-size", default="32")
    parser.add_argument("--convert", action="store_true", help="time convert-lm-eval too")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()

    repo = Path(__file__).resolve().parents[1]
    tmp = Path(tempfile.mkdtemp(prefix="bench_lm_eval."))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(repo),
           "HF_DATASETS_CACHE": str(tmp / "hf-cache")}
    if args.data:
        data = Path(args.data)
    else:
        from consistency_bench.bench.registries.source_files import SourceResolver
        from consistency_bench.builders.catalog import get_suite
        from consistency_bench.builders.export import build_all

        data = tmp / "cb"
        build_all([get_suite(s) for s in args.suites],
                  SourceResolver(args.sources, download=False), data, log=lambda _: None)
    model = make_model(data, args.suites, tmp / "model", args.layers, args.hidden, args.vocab,
                       args.model_vocab)
    tasks = tmp / "tasks"
    py = sys.executable
    subprocess.run([py, "-m", "consistency_bench", "export-lm-eval", "--data", str(data), "--out",
                    str(tasks), "--suites", *args.suites], env=env, check=True, cwd=tmp)
    rows = sum(json.loads((data / "suites.json").read_text())["suites"][s]["rows"]
               for s in args.suites)

    def run_predict(i: int) -> float:
        return timed([py, "-m", "consistency_bench", "predict", "--model", str(model), "--data",
                      str(data), "--suites", *args.suites, "--out", str(tmp / f"p{i}.jsonl"),
                      "--device", args.device, "--no-progress"], env, tmp)

    def run_lm_eval(i: int) -> float:
        out = tmp / f"lm{i}"
        seconds = timed([py, "-m", "lm_eval", "--model", "hf", "--model_args",
                         f"pretrained={model},dtype=float32", "--include_path", str(tasks),
                         "--tasks", "consistency_bench", "--log_samples", "--output_path",
                         str(out), "--batch_size", args.lm_eval_batch_size, "--device",
                         args.device], env, tmp)
        if args.convert:
            seconds += timed([py, "-m", "consistency_bench", "convert-lm-eval", str(out), "--data",
                              str(data), "--out", str(tmp / f"c{i}.jsonl")], env, tmp)
        return seconds

    sides = {"predict": run_predict, "lm-eval": run_lm_eval}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(args.runs):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for name in order:
            times[name].append(sides[name](i))
            print(f"run {i} {name:<8} {times[name][-1]:.2f}s", file=sys.stderr)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    figures = {
        "device": args.device + ("" if args.device.startswith("cuda") else
                                 f" ({platform.processor() or platform.machine()}, "
                                 f"{os.cpu_count()} cores)"),
        "model": f"random GPT-2, {args.layers} layers x {args.hidden}, tokenizer vocab "
                 f"{args.vocab}, output layer {args.model_vocab}",
        "suites": args.suites, "rows": rows, "runs": args.runs,
        "predict_s_runs": [round(t, 2) for t in times["predict"]],
        "lm_eval_s_runs": [round(t, 2) for t in times["lm-eval"]],
        "predict_rows_per_s": round(rows / med["predict"], 1),
        "lm_eval_rows_per_s": round(rows / med["lm-eval"], 1),
        "predict_vs_lm_eval": round(med["lm-eval"] / med["predict"], 2),
        "lm_eval_includes_convert": args.convert,
        "lm_eval_batch_size": args.lm_eval_batch_size,
    }
    for key, value in figures.items():
        print(f"{key:<26} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
