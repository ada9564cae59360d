"""The largest honest ``predictions.jsonl.gz`` a pull request can hold: what sets the review cap.

A prediction for every row of every suite of ``--data``, with ``probs`` of full precision drawn
at random (seeded), which compress worst, gzipped as ``submit --hub`` sends it
(``consistency_bench.leaderboard.submissions.storage.gzip_bytes``: level 9, mtime 0).
``consistency_bench.leaderboard.hub.pull_requests.MAX_REQUEST_BYTES`` must stay above the size
printed;
re-run when
suites are added::

    python benchmarks/request_size.py --data consistency-bench

Measured on the 51 suites of 2026-11-27: 942,511 rows, 114,092,730 bytes of JSONL,
28,923,311 bytes gzipped (27.6 MiB), under the 32 MiB cap.
"""

from __future__ import annotations

import argparse
import json
import random

import pyarrow.parquet as pq

from consistency_bench.bench.io.manifest import parquet_path, read_manifest
from consistency_bench.leaderboard.hub.pull_requests import MAX_REQUEST_BYTES
from consistency_bench.leaderboard.submissions.storage import gzip_bytes


def main() -> None:
    """Print the rows, the JSONL size, the gzip size and the cap."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="consistency-bench", help="built suite folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lines = []
    for suite, entry in sorted(read_manifest(args.data).items()):
        k = len(entry["label_names"])
        ids = pq.read_table(parquet_path(args.data, suite), columns=["id"]).column("id")
        for row_id in ids.to_pylist():
            weights = [rng.random() for _ in range(k)]
            probs = [w / sum(weights) for w in weights]
            label = max(range(k), key=probs.__getitem__)
            lines.append(json.dumps({"id": row_id, "label": label, "probs": probs}))
    raw = ("\n".join(lines) + "\n").encode()
    packed = gzip_bytes(raw)
    cap = MAX_REQUEST_BYTES["predictions.jsonl.gz"]
    print(f"{len(lines):,} rows, {len(raw):,} bytes JSONL, {len(packed):,} bytes gzip "
          f"({len(packed) / 2**20:.1f} MiB); cap {cap:,} bytes: "
          f"{'under' if len(packed) <= cap else 'OVER'} it")


if __name__ == "__main__":
    main()
