"""Predictions given in memory (the Python API): records, or a pandas or Arrow table.

They are checked by the same per-record checks as a file's lines
(:mod:`consistency_bench.bench.predictions.records`), written as JSONL (one ``{"id", "label"[,
"probs"]}``
object per record, ``json.dumps`` with ``ensure_ascii=False``) and read back through the same
two passes as a JSONL file, so that a record is accepted, refused and scored exactly as the
same line of a file would be. The ``sha256`` of the result is that of this JSONL text, so the
records written to a file that way have the hash the results record. An error names the
record (counted from 1, in the order given), the field and the value:
``predictions record 3: field 'label' value 1.5: must be an integer label index ...``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from consistency_bench.bench.errors import DataError, PredictionFileError
from consistency_bench.bench.predictions.fast import fast_columns
from consistency_bench.bench.predictions.records import _record, line_columns
from consistency_bench.bench.predictions.resolve import resolve_columns, resolve_fast
from consistency_bench.bench.predictions.types import Predictions

#: What the results' ``predictions.path`` and the messages call in-memory predictions.
SOURCE = "predictions"


def _native(value: object) -> object:
    """A numpy scalar or array (a pandas cell) as the Python value a JSON line would give."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_native(v) for v in value]
    return value


def table_records(table: object) -> Iterator[object] | None:
    """The records of a pandas ``DataFrame`` or a pyarrow ``Table`` / ``RecordBatch``.

    ``None`` for anything else (then ``predictions`` is iterated as records). Only the
    ``id``, ``label`` and ``probs`` columns are read; other columns are ignored, as in a
    Parquet file. pandas is never imported here: a ``DataFrame`` is recognised by its
    ``to_dict`` method and its module.
    """
    import pyarrow as pa

    if isinstance(table, (pa.Table, pa.RecordBatch)):
        wanted = [c for c in ("id", "label", "probs") if c in table.column_names]
        return iter(table.select(wanted).to_pylist())
    if type(table).__module__.startswith("pandas") and hasattr(table, "to_dict"):
        columns = [c for c in ("id", "label", "probs") if c in table.columns]
        return iter(table[columns].to_dict("records"))
    return None


def records_jsonl(records: Iterable[object]) -> bytes:
    """Every record checked (as a file's line is) and written as one JSONL line.

    Raises:
        PredictionFileError: The first record that is not an object with a non-empty string
            ``id``, a label index or name and optional finite ``probs`` summing to 1
            (``predictions`` as its path, its number as its line).

    """
    lines = []
    for number, record in enumerate(records, start=1):
        if isinstance(record, Mapping):
            record = {key: _native(value) for key, value in record.items()}
        row_id, label, probs = _record(SOURCE, number, record)
        item: dict[str, object] = {"id": row_id, "label": label}
        if probs is not None:
            item["probs"] = probs
        lines.append(json.dumps(item, ensure_ascii=False, allow_nan=False) + "\n")
    return "".join(lines).encode("utf-8")


def read_records(records: Iterable[object], manifest: dict, suite_ids) -> Predictions:
    """Validate in-memory predictions against built suites, as :func:`read_predictions` does.

    Args:
        records: Mappings with ``id``, ``label`` and optional ``probs``, or a pandas or
            Arrow table with those columns.
        manifest: ``suites.json`` entries of the built folder (name -> entry).
        suite_ids: Callable ``name -> pa.Array`` of that suite's row ids.

    Raises:
        PredictionFileError: A malformed record, an unknown or duplicate id, a label or
            ``probs`` that does not fit its suite; the message names the record, the field
            and the value.

    """
    if isinstance(records, (str, bytes, Path)):
        raise TypeError("read_records takes records or a table; read a file with "
                        "read_predictions")
    rows = table_records(records)
    try:
        payload = records_jsonl(records if rows is None else rows)
        digest = hashlib.sha256(payload).hexdigest()
        columns = fast_columns(payload, "jsonl") if payload else None
        suites = None
        if columns is not None:
            try:
                suites = resolve_fast(columns, manifest, suite_ids)
            except DataError:  # a suite file missing or changed: reported by the pass below
                suites = None
        if suites is None:
            columns = line_columns(Path(SOURCE), payload, "jsonl")
            suites = resolve_columns(SOURCE, columns, manifest, suite_ids)
    except PredictionFileError as exc:
        raise record_error(exc) from None
    return Predictions(SOURCE, digest, len(columns.ids), suites)


def record_error(exc: PredictionFileError) -> PredictionFileError:
    """A file error of the in-memory JSONL told as records: ``predictions record 3: ...``."""
    if exc.path != SOURCE:
        return exc
    reason = exc.reason.replace(" on line ", " in record ").replace(
        "the file has no prediction records", "no prediction records were given")
    where = SOURCE if exc.line is None else f"{SOURCE} record {exc.line}"
    return PredictionFileError(where, reason, field=exc.field, value=exc.value,
                               has_value=exc.has_value)
