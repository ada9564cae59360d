"""Start-up of the command line and of ``import consistency_bench``, two checkouts compared.

Each side is a whole process run from its checkout's root (so that checkout's code is the
one imported), interleaved, repeated; medians and the ratio after/before are printed::

    python benchmarks/bench_startup.py --before ../main-checkout --after . --repeat 21

Timed commands: ``python -m consistency_bench --help`` (what a user waits for),
``python -c "import consistency_bench"`` (what the Python API costs before its first use)
and ``python -c "import consistency_bench.cli"`` (the CLI's imports without argparse's
work), plus the bare interpreter (``python -c pass``) as the floor.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = {
    "interpreter (python -c pass)": ["-c", "pass"],
    "import consistency_bench": ["-c", "import consistency_bench"],
    "import consistency_bench.cli": ["-c", "import consistency_bench.cli"],
    "consistency-bench --help": ["-m", "consistency_bench", "--help"],
}


def timed(python: str, args: list[str], cwd: Path) -> float:
    """Wall seconds of one whole process."""
    start = time.perf_counter()
    subprocess.run([python, *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    """Run both sides interleaved and print medians in ms and the ratio after/before."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout before")
    parser.add_argument("--after", type=Path, default=Path("."), help="checkout after")
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeat):
        for label, command in COMMANDS.items():
            for side, root in sides.items():
                times.setdefault((label, side), []).append(timed(args.python, command, root))
    print(f"{'command':<32} {'before ms':>10} {'after ms':>10} {'ratio':>7}  (median of "
          f"{args.repeat}, interleaved)")
    for label in COMMANDS:
        before = statistics.median(times[(label, "before")]) * 1000
        after = statistics.median(times[(label, "after")]) * 1000
        print(f"{label:<32} {before:>10.1f} {after:>10.1f} {after / before:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
