"""The ``consistency-bench`` command line.

Each command lives in its own module under ``bench/commands/`` and is listed in ``COMMANDS``
(explicitly, no scanning). A command module exposes ``add_parser(subparsers)``, which sets
``func`` on its parser; ``func(args)`` returns the exit code. Any ``BenchError`` becomes one
line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from bench import __version__
from bench.errors import BenchError

#: Command modules, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = (
    "bench.commands.build",
    "bench.commands.generate",
    "bench.commands.score",
    "bench.commands.convert_becel",
    "bench.commands.predict",
    "bench.commands.lm_eval",
    "bench.commands.baseline",
    "bench.commands.train",
    "bench.commands.submit",
    "bench.commands.leaderboard",
    "bench.commands.publish",
    "bench.commands.salad",
)


def make_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="consistency-bench",
        description="Build consistency test suites, score prediction files, rank and publish.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        importlib.import_module(module).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code."""
    args = make_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
