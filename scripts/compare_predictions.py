"""Compare two prediction files row by row, as ``reproduce`` compares a sample (all rows here).

    python scripts/compare_predictions.py A.jsonl B.jsonl --data consistency-bench [--suites S ...]

Prints, per suite and overall: rows, label agreement, the largest and the 99th-percentile
absolute probability difference (docs/maintain.md, "Pass thresholds", measured with it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from consistency_bench.bench.predictions.files import read_payload
from consistency_bench.bench.reproduce.compare import label_index, prob_diff


def rows_of(path: Path) -> dict[str, dict]:
    """Row id -> record of a prediction file (JSONL or .jsonl.gz)."""
    return {item["id"]: item for item in map(json.loads, read_payload(path).decode().splitlines())}


def main() -> int:
    """Print the comparison table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--suites", nargs="+")
    args = parser.parse_args()
    manifest = json.loads((args.data / "suites.json").read_text())["suites"]
    a, b = rows_of(args.a), rows_of(args.b)
    by_suite: dict[str, list[tuple[bool, float | None]]] = {}
    for row_id in sorted(set(a) & set(b)):
        suite = row_id.split("/", 1)[0]
        if args.suites and suite not in args.suites:
            continue
        names = manifest[suite]["label_names"]
        same = label_index(a[row_id].get("label"), names) == label_index(
            b[row_id].get("label"), names)
        by_suite.setdefault(suite, []).append(
            (same, prob_diff(a[row_id].get("probs"), b[row_id].get("probs"))))
    every = [x for rows in by_suite.values() for x in rows]
    print("suite\trows\tagreement\tmax_prob_diff\tp99_prob_diff")
    for suite, rows in [*sorted(by_suite.items()), ("all", every)]:
        diffs = sorted(d for _, d in rows if d is not None)
        p99 = diffs[min(len(diffs) - 1, int(0.99 * len(diffs)))] if diffs else None
        print(f"{suite}\t{len(rows)}\t{sum(s for s, _ in rows) / len(rows):.4%}\t"
              f"{max(diffs) if diffs else 'n/a'}\t{p99 if diffs else 'n/a'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
