"""Compare two ``leaderboard.json`` files field by field: which kinds of fields differ, how much.

Prints, per field kind (the path with entry, suite and view names and list positions left out,
e.g. ``cells.*.*.goodness_ci95``), how many values differ, the largest absolute difference of
the numbers among them, and one example. For before/after figures of a change to the ranking
(docs/leaderboard.md, "What issue 33 changed")::

    python benchmarks/compare_boards.py OLD/leaderboard.json NEW/leaderboard.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

#: Keys that name entries, suites or views: left out of a field kind.
_NAMED = ("cells", "views", "suite_tests", "suites", "meta", "suite_order")


def differences(a: object, b: object, path: tuple = ()) -> list[tuple[tuple, object, object]]:
    """Every (path, a value, b value) where the two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in differences(a.get(k), b.get(k), (*path, k))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, (*path, i))]
    return [] if a == b and type(a) is type(b) else [(path, a, b)]


def kind(path: tuple) -> str:
    """``cells.*.*.goodness_ci95``: names after a naming key, and list positions, as ``*``."""
    out, skip = [], 0
    for part in path:
        if isinstance(part, int):
            out.append("*")
        elif skip:
            out.append("*")
            skip -= 1
        else:
            out.append(part)
            skip = {"cells": 2, "views": 1, "suite_tests": 1, "suites": 1, "meta": 1,
                    "suite_order": 1}.get(part, 0) if part in _NAMED else 0
    return ".".join(out)


def main() -> None:
    """Print the comparison of the two files named on the command line."""
    old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in sys.argv[1:3])
    found = differences(old, new)
    counts: Counter[str] = Counter()
    largest: dict[str, float] = {}
    example: dict[str, tuple] = {}
    for path, a, b in found:
        k = kind(path[:-1]) if isinstance(path[-1], int) and len(path) > 1 else kind(path)
        counts[k] += 1
        example.setdefault(k, (".".join(map(str, path)), a, b))
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            largest[k] = max(largest.get(k, 0.0), abs(float(a) - float(b)))
    print(f"{len(found)} values differ")
    for k, n in counts.most_common():
        size = f", largest |difference| {largest[k]:.3g}" if k in largest else ""
        path, a, b = example[k]
        print(f"{n:>6}  {k}{size}; e.g. {path}: {a!r} -> {b!r}")


if __name__ == "__main__":
    main()
