"""Helpers for the submission tests: a scorer double that validates like the real one.

The storage layer is what these tests exercise; scoring itself is tested with the scorer.
The double rejects lines that are not JSON objects with an ``id`` and a ``label``, and scores
one suite ``toy`` from the labels, so results differ between prediction files.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from consistency_bench.bench.errors import PredictionFileError


def fake_score_file(path, data_dir, **_):
    from consistency_bench.bench.predictions.files import read_payload

    path = Path(path)
    rows = []
    for number, line in enumerate(read_payload(path).decode("utf-8").splitlines(), 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise PredictionFileError(str(path), "not JSON", line=number) from None
        if not isinstance(rec, dict) or "id" not in rec or "label" not in rec:
            raise PredictionFileError(str(path), "needs 'id' and 'label'", line=number)
        rows.append(rec)
    if not rows:
        raise PredictionFileError(str(path), "empty prediction file")
    vfile = Path(data_dir) / "VERSION"
    version = vfile.read_text().strip() if vfile.exists() else "1"
    score = sum(1 for r in rows if r["label"] == 0) / len(rows)
    return {
        "schema_version": 1, "harness_version": "0.1.0",
        "predictions": {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                        "rows": len(rows)},
        "data": {"path": str(data_dir)}, "seed": 0,
        "suites": {"toy": {"family": "becel", "task": "snli", "kind": "symmetric",
                           "content_hash": "hash-v" + version, "version": version,
                           "main_metric": "tau_sym", "main_score": score,
                           "higher_is_better": False, "n": len(rows),
                           "ci95": [max(0.0, score - 0.05), min(1.0, score + 0.05)],
                           "metrics": {"tau_sym": score}}},
        "skipped": {},
    }


def main(argv):
    """Subprocess entry: submit PRED NAME META ROOT DATA [--replace]."""
    from consistency_bench.bench.errors import BenchError
    from consistency_bench.leaderboard.submissions.storage import submit

    pred, name, meta, root, data = argv[:5]
    try:
        submit(pred, name=name, meta_path=meta, root=root, data_dir=data,
               replace="--replace" in argv, scorer=fake_score_file)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
