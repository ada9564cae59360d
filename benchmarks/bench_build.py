"""Build suites from the local mirror and print time, peak memory and rows per suite.

Usage (from the repository root)::

    PYTHONPATH=. python benchmarks/bench_build.py [--family calm coherence] [--sources DIR]

Each suite is built into a temporary folder with ``builders.export.build_all``; the peak is the
Python heap high-water mark of that build (``tracemalloc``), the process RSS high-water mark
(``resource.getrusage``) is printed at the end. Suites whose sources are unavailable (QQP) are
listed as skipped. Sections for other families are selected with ``--family``.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench.errors import SourceUnavailableError
from bench.sources import SourceResolver
from builders.catalog import SUITES
from builders.export import build_all

DEFAULT_SOURCES = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def bench_family(families: list[str], sources: Path) -> list[tuple[str, str, float, float, int]]:
    """Build every suite of ``families``; (suite, status, seconds, peak MiB, rows) per suite."""
    resolver = SourceResolver(sources, download=False)
    results = []
    with tempfile.TemporaryDirectory() as out:
        for spec in (s for s in SUITES.values() if s.family in families):
            tracemalloc.start()
            start = time.perf_counter()
            try:
                manifest = build_all([spec], resolver, out, log=lambda _: None)
                status, rows = "built", manifest[spec.name]["rows"]
            except SourceUnavailableError:
                status, rows = "skipped (source unavailable)", 0
            seconds = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            results.append((spec.name, status, seconds, peak, rows))
    return results


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", nargs="+", default=["calm", "coherence"])
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    args = parser.parse_args()
    results = bench_family(args.family, args.sources)
    print("| suite | status | rows | seconds | peak Python heap (MiB) |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, status, seconds, peak, rows in results:
        print(f"| {name} | {status} | {rows} | {seconds:.2f} | {peak:.1f} |")
    total = sum(r[2] for r in results)
    print(f"| total | | {sum(r[4] for r in results)} | {total:.2f} | "
          f"{max((r[3] for r in results), default=0):.1f} (max) |")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess peak RSS: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
