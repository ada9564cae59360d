"""``consistency-bench score``: validate a prediction file and score every covered suite."""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable

from consistency_bench.arguments import add_data, add_suites

#: Every ``--param`` key a scorer reads (``options.params`` in bench/scorers/); anything else
#: is a typo and is rejected. tests/test_bad_input.py checks this list against the scorers.
KNOWN_PARAMS: dict[str, str] = {
    "calm_theta": "CALM C_S threshold (default 1.0)",
    "coherence_theta": "coherence threshold (default: best of the grid)",
    "coherence_theta_grid": "coherence threshold grid, a JSON list",
    "salad_theta": "word-salad threshold",
    "salad_tolerance": "word-salad tolerance",
    "salad_temperature": "word-salad temperature scaling before thresholding: T > 0 or fit",
}


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
    parser.set_defaults(func=run)


#: Most bootstrap resamples (each costs 8 bytes per suite and a draw; 10^12 asked for 7 TiB).
MAX_N_BOOT = 1_000_000


def _fraction(value: object) -> bool:
    """A JSON number (not a bool) in [0, 1]."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0.0 <= value <= 1.0)


#: Per known key: the check of its (JSON-parsed) value and what it must be.
PARAM_CHECKS: dict[str, tuple[Callable[[object], bool], str]] = {
    "calm_theta": (_fraction, "a number in [0, 1]"),
    "coherence_theta": (_fraction, "a number in [0, 1]"),
    "coherence_theta_grid": (
        lambda v: isinstance(v, list) and 0 < len(v) <= 1000 and all(map(_fraction, v)),
        "a JSON list of 1 to 1000 numbers in [0, 1], e.g. [0.5,0.6,0.7]"),
    "salad_theta": (_fraction, "a number in [0, 1] (a probability threshold)"),
    "salad_tolerance": (_fraction, "a number in [0, 1] (an allowed drop of accuracy)"),
    "salad_temperature": (
        lambda v: v == "fit" or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                 and math.isfinite(v) and v > 0),
        'a positive number or "fit"'),
}


def parse_params(items: list[str]) -> dict[str, object]:
    """``KEY=VALUE`` strings to a dict; values parsed as JSON and checked, all of them.

    Every value is checked here, before any work, whether or not a suite of its family is
    scored (a typo in ``salad_theta`` is an error even when scoring BECEL only).

    Raises:
        ConfigError: An item without ``=``, a key no scorer reads, a key given twice, or a
            value of the wrong type or range.

    """
    from bench.errors import ConfigError, shorten

    params: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--param {shorten(item)}: expected KEY=VALUE")
        if key not in KNOWN_PARAMS:
            raise ConfigError(
                f"--param {shorten(item)}: unknown key {shorten(key)}; known: "
                f"{', '.join(KNOWN_PARAMS)}"
            )
        if key in params:
            raise ConfigError(f"--param {shorten(item)}: {key} is given twice")
        try:
            parsed = json.loads(value, parse_constant=lambda c: None)  # NaN, Infinity: refused
        except (json.JSONDecodeError, RecursionError):
            parsed = value
        check, expected = PARAM_CHECKS[key]
        if not check(parsed):
            raise ConfigError(f"--param {shorten(item)}: {key} must be {expected}")
        params[key] = parsed
    if "coherence_theta" in params and "coherence_theta_grid" in params:
        raise ConfigError("--param coherence_theta and coherence_theta_grid: give one (a fixed "
                          "threshold, or the grid to search)")
    return params


def check_args(args: argparse.Namespace) -> None:
    """Reject bad option values before any work.

    Raises:
        ConfigError: ``--n-boot`` outside 1..:data:`MAX_N_BOOT`, ``--seed`` < 0, a bad
            ``--param``, ``--out`` a folder or the input.

    """
    from bench.atomic import check_output_file
    from bench.errors import ConfigError

    if not 1 <= args.n_boot <= MAX_N_BOOT:
        raise ConfigError(f"--n-boot {args.n_boot}: must be 1 to {MAX_N_BOOT:,} "
                          "(default 10000)")
    if args.seed < 0:
        raise ConfigError(f"--seed {args.seed}: must be >= 0")
    parse_params(args.param)
    if args.out:
        check_output_file(args.out, inputs=(args.predictions,))
    if args.suites:  # before the prediction file is read (a 135 MB parse)
        from bench.errors import UnknownNameError
        from bench.manifest import read_manifest

        manifest = read_manifest(args.data)
        for name in args.suites:
            if name not in manifest:
                raise UnknownNameError("suite", name, manifest)


def run(args: argparse.Namespace) -> int:
    """Score and report."""
    from bench.atomic import write_text
    from bench.report import results_table
    from bench.results import invalid_warning, provenance, require_coverage, skipped_lines
    from bench.runtime import system_allocator
    from bench.scoring import ScoreOptions, score_file

    check_args(args)
    system_allocator()
    options = ScoreOptions(seed=args.seed, n_boot=args.n_boot, params=parse_params(args.param))
    start = time.perf_counter()
    results = score_file(args.predictions, args.data, options=options, suites=args.suites)
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
