"""Print the docs/baselines.md score tables from the stored submissions.

    python scripts/baseline_table.py [--family becel] [--ranked] NAME...

reads submissions/NAME/results.json.

Each cell: the suite's main score in % (with ``--ranked``: the chance-corrected consistent
accuracy the leaderboard ranks on) and, in parentheses, the accuracy on the originals the
scorer reports, in %; ``n/a`` where the score is undefined, ``–`` where the entry does not
cover the suite.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def cell(entry: dict | None, key: str = "main_score") -> str:
    """One table cell of a results-JSON suite entry (``key``: the score shown)."""
    if entry is None:
        return "–"
    main = entry.get(key)
    metrics = entry.get("metrics", {})
    accuracy = metrics.get("accuracy", metrics.get("accuracy_original"))
    text = "n/a" if main is None else f"{100 * main:.1f}"
    return text if accuracy is None else f"{text} ({100 * accuracy:.1f})"


def main() -> None:
    """Print one Markdown table: a row per suite, a column per submission."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--submissions", default="submissions")
    parser.add_argument("--family", default=None, help="only suites of this family")
    parser.add_argument("--ranked", action="store_true",
                        help="show the ranked score (consistent_accuracy_cc), not the paper's")
    args = parser.parse_args()
    results = {
        n: json.loads((Path(args.submissions) / n / "results.json").read_text())["suites"]
        for n in args.names
    }
    suites = sorted({s for r in results.values() for s in r})
    key = "consistent_accuracy_cc" if args.ranked else "main_score"
    print("| suite | metric | " + " | ".join(args.names) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in args.names) + " |")
    for suite in suites:
        entries = [results[n].get(suite) for n in args.names]
        known = next(e for e in entries if e is not None)
        if args.family and known.get("family") != args.family:
            continue
        cells = " | ".join(cell(e, key) for e in entries)
        metric = "score (cc)" if args.ranked else known["main_metric"]
        print(f"| {suite} | {metric} | {cells} |")


if __name__ == "__main__":
    main()
