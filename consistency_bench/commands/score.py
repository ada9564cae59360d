"""``consistency-bench score``: validate a prediction file and score every covered suite."""

from __future__ import annotations

import argparse
import json
import time

from consistency_bench.arguments import add_data, add_suites
from consistency_bench.bench.scorers.params import KNOWN_PARAMS, check_bootstrap, parse_params


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``score`` command."""
    parser = subparsers.add_parser(
        "score",
        help="score a prediction file",
        description="Validate a prediction file (JSONL, CSV or Parquet) against a built suite "
        "folder, score every suite it fully covers, print a table and write results JSON.",
    )
    parser.add_argument("predictions", help="prediction file")
    add_data(parser)
    parser.add_argument("--out", help="write results JSON here (not the prediction file)")
    add_suites(parser, "score only these suites; each must be covered completely")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (>= 0)")
    parser.add_argument("--n-boot", type=int, default=10_000, help="bootstrap resamples (>= 1)")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="family parameter, e.g. calm_theta=0.8 (repeatable); known: "
        + ", ".join(KNOWN_PARAMS),
    )
    parser.add_argument("--verbose", action="store_true",
                        help="list every suite without predictions, not one summary line")
    parser.set_defaults(func=run, quick_exit=True)  # cli.main: no interpreter teardown


def check_args(args: argparse.Namespace) -> None:
    """Reject bad option values before any work.

    Raises:
        ConfigError: ``--n-boot`` outside 1..``MAX_N_BOOT``, ``--seed`` < 0, a bad
            ``--param``, ``--out`` a folder or the input.

    """
    from consistency_bench.bench.io.output_checks import check_output_file

    check_bootstrap(args.seed, args.n_boot)
    parse_params(args.param)
    if args.out:
        check_output_file(args.out, inputs=(args.predictions,))
    if args.suites:  # before the prediction file is read (a 135 MB parse)
        from consistency_bench.bench.errors import UnknownNameError
        from consistency_bench.bench.io.manifest import read_manifest

        manifest = read_manifest(args.data)
        for name in args.suites:
            if name not in manifest:
                raise UnknownNameError("suite", name, manifest)


def run(args: argparse.Namespace) -> int:
    """Score and report."""
    from consistency_bench.bench.io.write import write_text
    from consistency_bench.bench.runtime import system_allocator
    from consistency_bench.bench.scoring.engine import ScoreOptions, score_cache, score_file
    from consistency_bench.bench.scoring.results_json import (
        invalid_warning,
        provenance,
        require_coverage,
        skipped_lines,
    )
    from consistency_bench.bench.scoring.text_report import results_table

    check_args(args)
    system_allocator()
    options = ScoreOptions(seed=args.seed, n_boot=args.n_boot, params=parse_params(args.param))
    start = time.perf_counter()
    results = score_file(args.predictions, args.data, options=options, suites=args.suites,
                         derived=score_cache())
    elapsed = time.perf_counter() - start
    require_coverage(results, args.predictions, args.suites)
    results["provenance"] = provenance("score", args)
    if args.out:  # before printing: `score --out r.json | head` still writes r.json
        write_text(args.out, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(results_table({**results, "skipped": {}}))  # unscored suites: skipped_lines
    for line in skipped_lines(results, args.verbose):
        print(line)
    warning = invalid_warning(results)
    if warning:
        print(warning)
    print(f"scored {len(results['suites'])} suites in {elapsed:.2f}s")
    if args.out:
        print(f"wrote {args.out}")
    return 0
