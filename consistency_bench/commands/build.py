"""``consistency-bench build``: build suites from the source corpora into a dataset folder.

What ``--out`` may be, and the build itself: :mod:`consistency_bench.builders.build.run`.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from consistency_bench.arguments import add_sources, add_suites


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``build`` command."""
    parser = subparsers.add_parser(
        "build",
        help="build suites into a Hub-style Parquet folder",
        description="Build suites from the source corpora into a folder that "
        "datasets.load_dataset(folder, config) reads. Suites whose sources, version and "
        "builder code are unchanged since the last build into the same folder are kept.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_suites(parser, "suites to build (default: all)")
    parser.add_argument("--family", help="build only the suites of this family (becel, calm, ...)")
    add_sources(parser)
    parser.add_argument(
        "--out",
        default="consistency-bench",
        help="output folder: new, empty, or an earlier build (which is updated)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="suites built at the same time, one process each",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace --out by a fresh build, even when it is not a build folder; rebuilds "
        "every suite asked for and drops the others",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Build the requested suites (:func:`consistency_bench.builders.build.run.build_suites`)."""
    from consistency_bench.builders.build.run import build_suites

    start = time.perf_counter()
    report = build_suites(args.out, args.suites, args.family, sources=args.sources,
                          download=not args.no_download, jobs=args.jobs,
                          overwrite=args.overwrite)
    parts = [f"built {len(report.built)} suites"]
    if report.up_to_date:
        parts.append(f"{len(report.up_to_date)} up to date")
    if report.skipped:
        parts.append(f"{len(report.skipped)} skipped (see above)")
    elapsed = time.perf_counter() - start
    print(f"{', '.join(parts)} into {Path(args.out)} in {elapsed:.1f}s")
    return 0
