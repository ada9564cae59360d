"""``consistency-bench predict``: run a Hugging Face model over built suites."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``predict`` command."""
    parser = subparsers.add_parser(
        "predict",
        help="run a Hugging Face classifier or text-to-text model over built suites",
        description="Predict every row of the chosen suites with an "
        "AutoModelForSequenceClassification or AutoModelForSeq2SeqLM model and write a "
        "prediction file (JSONL with id, label, probs). Interrupted runs resume. "
        "Several GPUs: accelerate launch -m bench.cli predict ...",
    )
    parser.add_argument("--model", required=True, metavar="NAME_OR_PATH")
    parser.add_argument("--data", default="consistency-bench", metavar="DIR",
                        help="built suite folder")
    parser.add_argument("--out", required=True, metavar="PREDICTIONS", help="JSONL to write")
    parser.add_argument("--suites", nargs="+", metavar="SUITE",
                        help="suites to predict (default: every built suite whose task the "
                        "model's labels cover)")
    parser.add_argument("--tasks", nargs="+", metavar="TASK",
                        help="with no --suites: only the built suites of these tasks")
    parser.add_argument("--batch-size", default="auto", metavar="auto|N",
                        help="inputs per batch; auto fills a token budget and halves on OOM")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: auto)")
    parser.add_argument("--dtype", default=None,
                        help="weight dtype: float32, bfloat16, float16 (default: checkpoint's)")
    parser.add_argument("--label-map", default=None, metavar="SPEC|FILE.json",
                        help="task:label=model_label,...;task:... or a JSON file")
    parser.add_argument("--wic-format", default="word-prefix", choices=("word-prefix", "pair"),
                        help="WiC input: '<word>: sentence1' + sentence2, or the plain pair")
    parser.add_argument("--max-length", type=int, default=512, help="truncation in tokens")
    parser.add_argument("--no-amp", action="store_true", help="no autocast on CUDA")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def parse_batch_size(text: str) -> int | None:
    """``auto`` -> None, else a positive int."""
    from bench.errors import ConfigError

    if text == "auto":
        return None
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"--batch-size {text!r}: use auto or a positive integer")
    return int(text)


def default_suites(data_dir, loaded, label_map, tasks=None) -> list[str]:
    """Built suites whose task the model can answer (label mapping resolves)."""
    from bench.errors import ConfigError
    from bench.inputs import T5_PROMPTS
    from bench.manifest import read_manifest
    from bench.modeling import resolve_label_mapping
    from bench.tasks import get_task

    chosen, skipped = [], []
    for suite, entry in read_manifest(data_dir).items():
        task = entry["task"]
        if tasks and task not in tasks:
            continue
        if loaded.is_seq2seq:
            ok = task in T5_PROMPTS
        else:
            try:
                resolve_label_mapping(loaded.id2label, get_task(task), label_map)
                ok = True
            except ConfigError:
                ok = False
        (chosen if ok else skipped).append(suite)
    if skipped:
        print(f"skipping {len(skipped)} suites whose labels the model does not cover: "
              f"{', '.join(skipped)}", file=sys.stderr)
    if not chosen:
        raise ConfigError(
            f"the model's labels {loaded.id2label} cover no built suite in {data_dir}; "
            "pass --suites and --label-map"
        )
    return chosen


def run(args: argparse.Namespace) -> int:
    """Load the model, predict, print a summary line."""
    from bench.modeling import load_classifier, parse_label_map
    from bench.runner import RunnerOptions, predict

    label_map = parse_label_map(args.label_map)
    batch_size = parse_batch_size(args.batch_size)
    loaded = load_classifier(args.model, device=args.device, dtype=args.dtype)
    suites = args.suites or default_suites(args.data, loaded, label_map, args.tasks)
    options = RunnerOptions(
        batch_size=batch_size, max_length=args.max_length, wic_format=args.wic_format,
        label_map=label_map, progress=not args.no_progress, amp=not args.no_amp,
    )
    stats = predict(loaded, args.model, args.data, suites, args.out, options)
    print(
        f"wrote {stats.rows} rows of {len(suites)} suites to {args.out}: {stats.unique} unique "
        f"inputs ({stats.resumed} resumed, {stats.computed} computed) in {stats.seconds:.1f}s, "
        f"{stats.rows_per_second:.0f} rows/s"
    )
    return 0
