"""What the commands add to and read from a results JSON beyond the scores.

* :func:`provenance`: when, with which harness version and git commit, and with which
  arguments the results were computed.
* :func:`require_coverage`: a prediction file that scores no suite, or misses rows of a suite
  the user named, is an error (exit 2), not an empty table.
* :func:`invalid_warning`, :func:`skipped_lines`: the lines a person reads after the table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from consistency_bench.bench import __version__
from consistency_bench.bench.errors import PredictionFileError, shorten

NO_PREDICTIONS = "no predictions for this suite"


@cache
def git_commit() -> str | None:
    """The commit of the harness checkout, ``None`` outside a git work tree (installed wheel)."""
    root = Path(__file__).resolve().parents[2]  # bench/scoring/ -> the checkout
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) == 40 else None


def arguments(args: argparse.Namespace | Mapping | None) -> dict:
    """The command's arguments as JSON values (the ``func`` callback left out)."""
    if args is None:
        return {}
    items = vars(args).items() if isinstance(args, argparse.Namespace) else args.items()
    out = {}
    for key, value in sorted(items):
        if callable(value):
            continue
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, (list, tuple)):
            value = [str(v) if isinstance(v, Path) else v for v in value]
        out[key] = value
    return out


def provenance(command: str, args: argparse.Namespace | Mapping | None = None) -> dict:
    """The ``provenance`` block: UTC date, harness version, git commit, command, arguments."""
    return {
        "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "harness_version": __version__,
        "git_commit": git_commit(),
        "command": command,
        "arguments": arguments(args),
    }


def incomplete(results: Mapping) -> dict[str, str]:
    """Suites the file has predictions for but not for every row (name -> reason)."""
    return {k: v for k, v in results.get("skipped", {}).items() if v != NO_PREDICTIONS}


def require_coverage(results: Mapping, path: str, requested: list[str] | None = None) -> None:
    """Raise when nothing was scored, or when a suite the user named was not scored.

    Raises:
        PredictionFileError: Naming the incomplete suites and how many rows each misses.

    """
    skipped = results.get("skipped", {})
    if requested:
        missing = {name: skipped[name] for name in requested if name in skipped}
        if missing:
            detail = "; ".join(f"{k}: {v}" for k, v in sorted(missing.items()))
            raise PredictionFileError(path, f"requested suite(s) not scored: {detail}")
    if results.get("suites"):
        return
    partial = incomplete(results)
    if partial:
        shown = sorted(partial.items())
        detail = "; ".join(f"{k}: {v}" for k, v in shown[:5])
        more = f"; and {len(shown) - 5} more" if len(shown) > 5 else ""
        raise PredictionFileError(
            path,
            f"no suite is covered completely, nothing was scored. Incomplete: {detail}{more}",
        )
    raise PredictionFileError(path, "no suite could be scored (no predictions for any suite)")


def invalid_warning(results: Mapping, path: str | None = None) -> str | None:
    """One warning line when any answer is not a label of its suite, else ``None``.

    Args:
        results: A results JSON.
        path: The file the lines refer to (default: the results' ``predictions.path``).

    """
    info = results.get("predictions", {}).get("invalid_answers") or {}
    count = info.get("count", 0)
    if not count:
        return None
    first = info.get("first") or {}
    path = path or results.get("predictions", {}).get("path", "predictions")
    suites = ", ".join(f"{k} {v}" for k, v in info.get("by_suite", {}).items())
    example = ""
    if first:
        example = f"; first: {path}:{first.get('line')} value {shorten(first.get('value'))}"
    return (
        f"warning: {count} invalid answer(s) (neither a label name nor a label index; counted "
        f"as wrong and inconsistent): {suites}{example}"
    )


def skipped_lines(results: Mapping, verbose: bool = False) -> list[str]:
    """Lines about unscored suites: each incomplete one, and one summary for the rest."""
    skipped = results.get("skipped", {})
    lines = [f"incomplete, not scored: {k}: {v}" for k, v in sorted(incomplete(results).items())]
    absent = sorted(k for k, v in skipped.items() if v == NO_PREDICTIONS)
    if absent and verbose:
        lines += [f"skipped {k}: {NO_PREDICTIONS}" for k in absent]
    elif absent:
        lines.append(
            f"{len(absent)} suite(s) without predictions not scored (--verbose lists them)"
        )
    return lines
