"""``consistency-bench build``: build suites from the source corpora into a dataset folder."""

from __future__ import annotations

import argparse
import time


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``build`` command."""
    parser = subparsers.add_parser(
        "build",
        help="build suites into a Hub-style Parquet folder",
        description="Build suites from the source corpora into a folder that "
        "datasets.load_dataset(folder, config) reads.",
    )
    parser.add_argument(
        "--suites", nargs="+", metavar="SUITE", help="suites to build (default: all)"
    )
    parser.add_argument("--family", help="build only the suites of this family (becel, calm, ...)")
    parser.add_argument("--sources", metavar="DIR", help="local mirror of the source corpora")
    parser.add_argument("--out", default="consistency-bench", help="output folder")
    parser.add_argument("--no-download", action="store_true", help="never use the network")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the requested suites."""
    from bench.sources import SourceResolver
    from builders.catalog import SUITES, get_suite
    from builders.export import build_all

    specs = [get_suite(n) for n in args.suites] if args.suites else list(SUITES.values())
    if args.family:
        specs = [s for s in specs if s.family == args.family]
    resolver = SourceResolver(args.sources, download=not args.no_download)
    start = time.perf_counter()
    # Building everything skips suites whose sources are unavailable offline (QQP); a suite
    # named with --suites fails with the reason instead.
    manifest = build_all(specs, resolver, args.out, skip_unavailable=not args.suites)
    built = sum(spec.name in manifest for spec in specs)
    skipped = f" ({len(specs) - built} skipped, see above)" if built < len(specs) else ""
    elapsed = time.perf_counter() - start
    print(f"built {built} suites{skipped} into {args.out} in {elapsed:.1f}s")
    return 0
