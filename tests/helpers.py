"""Test helpers: where the corpus mirror is; prediction files made from a built folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq

from bench.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[1]
#: The local corpus mirror: ``../shared/corpora`` beside the repository, or
#: ``$CONSISTENCY_BENCH_TEST_CORPORA``.
CORPORA = Path(os.environ.get("CONSISTENCY_BENCH_TEST_CORPORA", ROOT.parent / "shared" / "corpora"))


def oracle_label(row: dict, label_names: list[str]) -> int:
    """The gold label, or for a row without one a label its constraint allows."""
    if row["label"] is not None:
        return row["label"]
    op, _, name = row["constraint"].partition(":")
    assert op == "not"
    return next(i for i, n in enumerate(label_names) if n != name)


def write_predictions(folder: Path, out: Path, suites: list[str], choose=oracle_label) -> Path:
    """A JSONL prediction file for every row of ``suites``, labels from ``choose``."""
    manifest = read_manifest(folder)
    with open(out, "w") as handle:
        for name in suites:
            names = manifest[name]["label_names"]
            for row in pq.read_table(folder / name / "test.parquet").to_pylist():
                handle.write(json.dumps({"id": row["id"], "label": choose(row, names)}) + "\n")
    return out
