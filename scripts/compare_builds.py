"""Compare two built folders suite by suite by the sha256 their ``suites.json`` records.

Used to show that a change to the build (speed, caching, the process pool) leaves every suite
byte-identical. Each recorded hash is also checked against the file on disk. Usage::

    python scripts/compare_builds.py BEFORE_DIR AFTER_DIR

Prints one line per suite that differs or is only in one folder, then a summary; exits 1 when
anything differs.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from consistency_bench.bench.io.manifest import read_manifest


def _checked(root: Path) -> dict[str, str]:
    """Suite -> recorded sha256, after checking each against its file."""
    out = {}
    for name, entry in read_manifest(root).items():
        actual = hashlib.sha256((root / entry["path"]).read_bytes()).hexdigest()
        if actual != entry["sha256"]:
            sys.exit(f"{root / entry['path']}: sha256 differs from {root}/suites.json")
        out[name] = entry["sha256"]
    return out


def main() -> int:
    """Print the differences; 0 when the folders hold identical suites."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    before, after = _checked(args.before), _checked(args.after)
    differ = 0
    for name in sorted(before.keys() | after.keys()):
        if name not in after or name not in before:
            where = args.before if name in before else args.after
            print(f"{name:<28} only in {where}")
            differ += 1
        elif before[name] != after[name]:
            print(f"{name:<28} differs: {before[name][:12]} -> {after[name][:12]}")
            differ += 1
    same = len(before.keys() & after.keys()) - sum(
        before[n] != after[n] for n in before.keys() & after.keys()
    )
    print(f"{same} suites byte-identical, {differ} differ or are missing")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
