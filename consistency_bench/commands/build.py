"""``consistency-bench build``: build suites from the source corpora into a dataset folder.

``--out`` semantics: build owns a folder it created, recognised by its ``suites.json``. Such a
folder is updated (suites that are up to date are kept, the others rebuilt, all in one
rename); a new or empty folder is created; a file, or a non-empty folder that is not a build,
is refused unless ``--overwrite`` is given, which replaces the folder by a fresh build.
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


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse an ``--out`` that build does not own (see the module docstring).

    Raises:
        ConfigError: ``out`` is a file, or a non-empty folder without ``suites.json``, and
            ``overwrite`` is off.

    """
    from bench.errors import ConfigError
    from bench.manifest import MANIFEST

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: is a file; give a folder (new, or an earlier build)")
    cwd = Path.cwd().resolve()
    if out.resolve() == cwd or out.resolve() in cwd.parents:
        raise ConfigError(
            f"--out {out}: is the current folder or contains it; the build replaces --out by "
            "a rename, so give a folder below the current one"
        )
    if overwrite or not out.is_dir() or (out / MANIFEST).is_file():
        return
    if any(out.iterdir()):
        raise ConfigError(
            f"--out {out}: a non-empty folder that is not a consistency-bench build (no "
            f"{MANIFEST}); give a new folder, or --overwrite to replace it"
        )


def run(args: argparse.Namespace) -> int:
    """Build the requested suites."""
    from bench.errors import ConfigError, UnknownNameError
    from bench.sources import SourceResolver
    from builders.catalog import SUITES, get_suite
    from builders.export import build_all

    if args.jobs < 1:
        raise ConfigError(f"--jobs {args.jobs}: give 1 or more processes")
    specs = [get_suite(n) for n in args.suites] if args.suites else list(SUITES.values())
    if args.family:
        families = sorted({s.family for s in SUITES.values()})
        if args.family not in families:
            raise UnknownNameError("family", args.family, families)
        specs = [s for s in specs if s.family == args.family]
        if not specs:
            raise ConfigError(f"--family {args.family}: none of --suites is of that family")
    out = Path(args.out)
    check_out(out, args.overwrite)
    resolver = SourceResolver(args.sources, download=not args.no_download)
    start = time.perf_counter()
    # Building everything skips suites whose sources are unavailable offline (QQP); a suite
    # named with --suites fails with the reason instead.
    report = build_all(
        specs,
        resolver,
        out,
        skip_unavailable=not args.suites,
        jobs=args.jobs,
        fresh=args.overwrite,
    )
    parts = [f"built {len(report.built)} suites"]
    if report.up_to_date:
        parts.append(f"{len(report.up_to_date)} up to date")
    if report.skipped:
        parts.append(f"{len(report.skipped)} skipped (see above)")
    elapsed = time.perf_counter() - start
    print(f"{', '.join(parts)} into {out} in {elapsed:.1f}s")
    return 0
