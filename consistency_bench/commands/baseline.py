"""``consistency-bench baseline``: write a baseline's predictions for the built suites."""

from __future__ import annotations

import argparse

from consistency_bench.arguments import add_data, add_predictions_out, add_sources, add_suites

#: Largest seed (numpy's legacy seeding, used by the libraries, takes 32 bits).
MAX_SEED = 2**32 - 1


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``baseline`` command."""
    from consistency_bench.bench.baselines import BASELINES

    parser = subparsers.add_parser(
        "baseline",
        help="predictions of a reference baseline (majority, random, overlap, VADER, TF-IDF)",
        description="Write a prediction file for every built suite the baseline covers. "
        f"Baselines: {', '.join(BASELINES)}. See docs/baselines.md.",
    )
    parser.add_argument("name", metavar="NAME", help=f"one of {', '.join(BASELINES)}")
    add_data(parser)
    add_predictions_out(parser, "JSONL prediction file to write")
    add_sources(parser, "source mirror (training data)")
    add_suites(parser, "suites to predict, each covered by the baseline (default: all covered)")
    parser.add_argument("--seed", type=int, default=0,
                        help=f"seed of the random baseline (0 to {MAX_SEED})")
    parser.set_defaults(func=run)


def check_args(args: argparse.Namespace) -> None:
    """Reject a bad ``--seed``, an ``--out`` that is a folder, and uncovered named suites.

    Raises:
        ConfigError: Naming the uncovered suites and the tasks the baseline covers.

    """
    from consistency_bench.bench.baselines import get_baseline
    from consistency_bench.bench.errors import ConfigError
    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.bench.io.output_checks import check_output_file
    from consistency_bench.bench.registries.source_files import source_folders
    from consistency_bench.bench.runrecord.schema import record_path

    if not 0 <= args.seed <= MAX_SEED:
        raise ConfigError(f"--seed {args.seed}: must be 0 to {MAX_SEED}")
    sources = source_folders(args.sources)  # inputs: never written over
    check_output_file(args.out, inputs=sources)
    check_output_file(record_path(args.out), inputs=sources, flag="run record")
    baseline = get_baseline(args.name)
    if args.suites:
        manifest = read_manifest(args.data)
        uncovered = [s for s in args.suites
                     if s in manifest and manifest[s]["task"] not in baseline.tasks]
        if uncovered:
            raise ConfigError(
                f"baseline {args.name!r} does not cover {', '.join(uncovered)}: it predicts the "
                f"tasks {', '.join(baseline.tasks)}"
            )


def run(args: argparse.Namespace) -> int:
    """Run the baseline and print what it covered."""
    import time

    from consistency_bench.bench.baselines import Context, run_baseline
    from consistency_bench.bench.registries.source_files import SourceResolver

    check_args(args)
    start = time.perf_counter()
    ctx = Context(SourceResolver(args.sources, download=not args.no_download), seed=args.seed)
    written = run_baseline(args.name, args.data, args.out, ctx, args.suites)
    print(f"{args.name}: wrote {sum(written.values())} rows of {len(written)} suites to "
          f"{args.out} in {time.perf_counter() - start:.1f}s; run record {args.out}.run.json")
    return 0
