"""``consistency-bench score``: validate a prediction file and score every covered suite."""

from __future__ import annotations

import argparse
import json
import time


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``score`` command."""
    parser = subparsers.add_parser(
        "score",
        help="score a prediction file",
        description="Validate a prediction file (JSONL, CSV or Parquet) against a built suite "
        "folder, score every suite it fully covers, print a table and write results JSON.",
    )
    parser.add_argument("predictions", help="prediction file")
    parser.add_argument("--data", default="consistency-bench", help="built suite folder")
    parser.add_argument("--out", help="write results JSON here")
    parser.add_argument("--suites", nargs="+", metavar="SUITE", help="score only these suites")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--n-boot", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="family parameter, e.g. calm_theta=0.8 (repeatable)",
    )
    parser.set_defaults(func=run)


def parse_params(items: list[str]) -> dict[str, object]:
    """``KEY=VALUE`` strings to a dict; values parsed as JSON when possible."""
    from bench.errors import ConfigError

    params: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--param {item!r}: expected KEY=VALUE")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def run(args: argparse.Namespace) -> int:
    """Score and report."""
    from bench.atomic import write_text
    from bench.report import results_table
    from bench.scoring import ScoreOptions, score_file

    options = ScoreOptions(seed=args.seed, n_boot=args.n_boot, params=parse_params(args.param))
    start = time.perf_counter()
    results = score_file(args.predictions, args.data, options=options, suites=args.suites)
    elapsed = time.perf_counter() - start
    print(results_table(results))
    print(f"scored {len(results['suites'])} suites in {elapsed:.2f}s")
    if args.out:
        write_text(args.out, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {args.out}")
    return 0
