"""Build benchmark: time, rows and peak memory of building every suite from the local mirror.

For each suite: the time to generate its rows, the time to write them with our exporter
(pyarrow, deterministic settings), and, as the plain baseline in the same process, the time to
write the same rows the straightforward way (``datasets.Dataset.from_list(...).to_parquet``).
Peak memory is the process's resident-set high-water mark after the suite (cumulative).
Suites whose sources are unavailable here (QQP) are listed as skipped. Usage::

    python benchmarks/bench_build.py [--family becel calm coherence salad] [--sources DIR]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import datasets

from bench.errors import SourceError
from bench.sources import SourceResolver
from builders.catalog import SUITES
from builders.export import rows_to_table, write_parquet

DEFAULT_SOURCES = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    """Print one line per suite and the totals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", nargs="+", default=["becel", "calm", "coherence", "salad"])
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    args = parser.parse_args()
    resolver = SourceResolver(args.sources, download=False)
    datasets.disable_progress_bars()
    head = f"{'suite':<28} {'rows':>8} {'generate s':>10} {'write s':>8} {'baseline s':>10}"
    print(head + f" {'vs baseline':>11} {'peak MiB':>9}")
    totals = [0, 0.0, 0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        for spec in (s for s in SUITES.values() if s.family in args.family):
            start = time.perf_counter()
            try:
                rows = list(spec.build(resolver))
            except SourceError as exc:
                print(f"{spec.name:<28} skipped: {str(exc)[:70]}")
                continue
            generated = time.perf_counter() - start
            start = time.perf_counter()
            write_parquet(rows_to_table(spec, rows), Path(tmp) / f"{spec.name}.parquet")
            written = time.perf_counter() - start
            start = time.perf_counter()
            plain = datasets.Dataset.from_list(rows, features=spec.features)
            plain.to_parquet(str(Path(tmp) / f"{spec.name}.plain.parquet"))
            baseline = time.perf_counter() - start
            ratio = baseline / written if written else float("inf")
            print(
                f"{spec.name:<28} {len(rows):>8} {generated:>10.2f} {written:>8.2f} "
                f"{baseline:>10.2f} {ratio:>10.1f}x {_rss_mib():>9.0f}"
            )
            totals = [totals[0] + len(rows), totals[1] + generated, totals[2] + written,
                      totals[3] + baseline]
    n, generated, written, baseline = totals
    print(
        f"{'total':<28} {n:>8} {generated:>10.2f} {written:>8.2f} {baseline:>10.2f} "
        f"{baseline / written if written else 0:>10.1f}x {_rss_mib():>9.0f}"
    )


if __name__ == "__main__":
    main()
