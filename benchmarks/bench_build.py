"""Build benchmarks: time and peak memory of building suite families from the local mirror.

Run ``PYTHONPATH=. python benchmarks/bench_build.py [--corpora DIR]``; prints a table. Each
family has its own function returning rows ``(suite, rows, seconds, peak RSS MiB)``; others add
theirs to ``BENCHMARKS``. Peak memory is the process's maximum resident set size so far
(``ru_maxrss``): cumulative, so a row shows the peak of everything built up to it.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _measure(specs, corpora: Path) -> list[tuple[str, int, float, float]]:
    from bench.sources import SourceResolver
    from builders.export import build_all

    resolver = SourceResolver(corpora, download=False)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            start = time.perf_counter()
            manifest = build_all([spec], resolver, tmp, log=lambda _: None)
            seconds = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
            out.append((spec.name, manifest[spec.name]["rows"], seconds, peak))
    return out


def bench_salad(corpora: Path) -> list[tuple[str, int, float, float]]:
    """Every static word-salad suite whose sources are in the mirror (QQP is not)."""
    from bench.sources import SOURCES
    from builders.catalog import SUITES

    specs = [s for s in SUITES.values()
             if s.family == "salad" and all(p in SOURCES for p in s.sources)]
    return _measure(specs, corpora)


BENCHMARKS = {"salad": bench_salad}


def main() -> None:
    """Print the benchmark table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora")
    parser.add_argument("--family", nargs="+", default=list(BENCHMARKS))
    args = parser.parse_args()
    print(f"| {'suite':<26} | {'rows':>7} | {'seconds':>8} | {'peak RSS MiB':>12} |")
    print(f"| {'-' * 26} | {'-' * 7}: | {'-' * 8}: | {'-' * 12}: |")
    total = 0.0
    for family in args.family:
        for name, rows, seconds, peak in BENCHMARKS[family](args.corpora):
            total += seconds
            print(f"| {name:<26} | {rows:>7} | {seconds:>8.2f} | {peak:>12.1f} |", flush=True)
    print(f"total {total:.1f} s")


if __name__ == "__main__":
    main()
