"""Print the docs/baselines.md score tables from the stored submissions.

    python scripts/baseline_table.py [--family becel] NAME...   # submissions/NAME/results.json

Each cell: the suite's main score in % and, in parentheses, the accuracy on the originals the
scorer reports, in %; ``n/a`` where the main score is undefined, ``–`` where the entry does not
cover the suite.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def cell(entry: dict | None) -> str:
    """One table cell of a results-JSON suite entry."""
    if entry is None:
        return "–"
    main = entry.get("main_score")
    accuracy = entry.get("metrics", {}).get("accuracy")
    text = "n/a" if main is None else f"{100 * main:.1f}"
    return text if accuracy is None else f"{text} ({100 * accuracy:.1f})"


def main() -> None:
    """Print one Markdown table: a row per suite, a column per submission."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--submissions", default="submissions")
    parser.add_argument("--family", default=None, help="only suites of this family")
    args = parser.parse_args()
    results = {
        n: json.loads((Path(args.submissions) / n / "results.json").read_text())["suites"]
        for n in args.names
    }
    suites = sorted({s for r in results.values() for s in r})
    print("| suite | metric | " + " | ".join(args.names) + " |")
    print("| --- | --- | " + " | ".join("---:" for _ in args.names) + " |")
    for suite in suites:
        entries = [results[n].get(suite) for n in args.names]
        known = next(e for e in entries if e is not None)
        if args.family and known.get("family") != args.family:
            continue
        cells = " | ".join(cell(e) for e in entries)
        print(f"| {suite} | {known['main_metric']} | {cells} |")


if __name__ == "__main__":
    main()
