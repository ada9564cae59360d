"""``consistency-bench salad``: gradient-based word-salad configs for one model.

The work (model, importance, configs) is
:func:`consistency_bench.builders.salad.model_configs.build_gradient_suites`.
"""

from __future__ import annotations

import argparse
import time

from consistency_bench.arguments import add_data, add_sources


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``salad`` command."""
    parser = subparsers.add_parser(
        "salad",
        help="build the model-specific gradient word-salad configs",
        description="Compute token importance with a model and write the gradient-based "
        "word-salad configs (drop, repeat, replace, copyone) into a suite folder.",
    )
    parser.add_argument("--model", required=True, metavar="PATH", help="fine-tuned model folder")
    parser.add_argument(
        "--suite", nargs="+", required=True, metavar="SUITE",
        help="<task>_salad_<drop|repeat|replace|copyone>, or <task>_salad_gradient for all four",
    )
    add_data(parser, "suite folder to write into", required=True)
    parser.add_argument("--name", help="model tag in the config names (default: folder name)")
    add_sources(parser)
    parser.add_argument(
        "--ratio", type=float, default=0.5, help="share r of the least important tokens",
    )
    parser.add_argument("--batch-size", type=int, default=16,
                        help="examples per gradient pass (>= 1)")
    parser.add_argument("--limit", type=int, help="only the first N examples, N >= 1 (quick runs)")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the gradient configs into ``--data`` (:mod:`consistency_bench.builders.salad.model_configs`)."""  # noqa: E501
    from consistency_bench.builders.salad.model_configs import build_gradient_suites

    start = time.perf_counter()
    count = build_gradient_suites(
        args.model, args.suite, args.data, name=args.name, sources=args.sources,
        download=not args.no_download, ratio=args.ratio, batch_size=args.batch_size,
        limit=args.limit, device=args.device,
    )
    print(f"wrote {count} gradient configs into {args.data} in "
          f"{time.perf_counter() - start:.1f}s")
    return 0
