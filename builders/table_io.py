"""Rows to a contract-checked Arrow table, and a table to a deterministic Parquet file.

Shared by :mod:`consistency_bench.builders.export` (which re-exports both) and
:mod:`consistency_bench.builders.fewshot`, so that
neither imports the other for them (no import circle; ``tests/test_layers.py``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from consistency_bench.bench.errors import DataError
from consistency_bench.bench.io.write import atomic_path
from consistency_bench.builders.suite.spec import Row


def contract_table(features: datasets.Features, rows: Sequence[Row], name: str) -> pa.Table:
    """Arrow table of ``rows`` with ``features`` (HF metadata included).

    Raises:
        DataError: A row lacks a column or has an unexpected one, or two rows share an id.

    """
    columns = set(features)
    checked: set[tuple] = set()  # key orders already seen to match: one set comparison each
    for number, row in enumerate(rows):
        keys = tuple(row)
        if keys in checked:
            continue
        if set(keys) == columns:
            checked.add(keys)
        else:
            missing, extra = columns - set(row), set(row) - columns
            raise DataError(
                f"suite {name}: row {number} ({row.get('id')!r}) does not follow the row "
                f"contract: missing {sorted(missing)}, unexpected {sorted(extra)}"
            )
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise DataError(f"suite {name}: duplicate row ids")
    return pa.Table.from_pylist(list(rows), schema=features.arrow_schema)


def write_parquet(table: pa.Table, target: Path) -> str:
    """Write ``table`` deterministically and atomically; return the file's sha256."""
    with atomic_path(target) as tmp:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            row_group_size=65_536,
            write_statistics=False,
            store_schema=True,
        )
        digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    return digest
