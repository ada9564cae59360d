"""The options several commands share, declared once.

Each helper adds one option (or a pair that always goes together) with the same flag,
metavar and default everywhere; a command passes its own ``help`` where the meaning is
narrower (``--data``: the folder to score against, the folder the tasks came from, ...).
"""

from __future__ import annotations

import argparse

#: The built suite folder every command reads by default (what ``build`` writes).
DEFAULT_DATA = "consistency-bench"
#: The folder of stored leaderboard entries.
DEFAULT_SUBMISSIONS = "submissions"
#: The folder ``leaderboard`` renders the site into, and ``publish``/``review`` read.
DEFAULT_SITE = "leaderboard/site"


def add_data(parser: argparse.ArgumentParser, help: str = "built suite folder", *,
             required: bool = False, default: str | None = DEFAULT_DATA) -> None:
    """``--data DIR``: a built suite folder (``default`` None: optional, no folder)."""
    if required:
        parser.add_argument("--data", required=True, metavar="DIR", help=help)
    else:
        parser.add_argument("--data", default=default, metavar="DIR", help=help)


def add_sources(parser: argparse.ArgumentParser,
                help: str = "local mirror of the source corpora") -> None:
    """``--sources DIR`` and ``--no-download``: where the source corpora come from."""
    parser.add_argument("--sources", metavar="DIR", help=help)
    parser.add_argument("--no-download", action="store_true", help="never use the network")


def add_suites(parser: argparse.ArgumentParser, help: str) -> None:
    """``--suites SUITE [SUITE ...]``: the suites to work on (default: the command's)."""
    parser.add_argument("--suites", nargs="+", metavar="SUITE", help=help)


def add_predictions_out(parser: argparse.ArgumentParser, help: str = "JSONL to write") -> None:
    """``--out PREDICTIONS`` (required): the prediction file a command writes."""
    parser.add_argument("--out", required=True, metavar="PREDICTIONS", help=help)


def add_submissions(parser: argparse.ArgumentParser,
                    help: str = "folder of stored entries") -> None:
    """``--submissions DIR``: the leaderboard's stored entries."""
    parser.add_argument("--submissions", default=DEFAULT_SUBMISSIONS, metavar="DIR", help=help)


def add_site(parser: argparse.ArgumentParser, help: str, flag: str = "--site") -> None:
    """``--site DIR`` (``--out DIR`` for ``leaderboard``): the rendered leaderboard site."""
    parser.add_argument(flag, default=DEFAULT_SITE, metavar="DIR", help=help)


def add_dry_run(parser: argparse.ArgumentParser,
                help: str = "list every operation and file, send nothing") -> None:
    """``--dry-run``: say what would be done, do nothing."""
    parser.add_argument("--dry-run", action="store_true", help=help)
