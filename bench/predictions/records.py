"""The line-by-line pass: every record of a JSONL, CSV or Parquet file checked on its own.

Authoritative for errors: whenever the columnar pass
(:mod:`consistency_bench.bench.predictions.fast`) fails,
the file is read here, so that the error names the exact line, field and value. Also writes a
CSV or Parquet file's records as JSONL (:func:`to_jsonl`, what ``submit`` stores).
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from consistency_bench.bench.errors import PredictionFileError
from consistency_bench.bench.io.json_input import (
    JsonTextError,
    depth_above,
    parse_json,
    too_deep_message,
)
from consistency_bench.bench.predictions.files import check_input_file, detect_format, read_payload
from consistency_bench.bench.predictions.types import PROB_TOLERANCE, Columns


def _check_text(path: str, line: int, field: str, value: str) -> None:
    """Refuse a string that is not valid Unicode (a lone surrogate from a ``\\udc80`` escape)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PredictionFileError(
            path,
            f"not valid Unicode (a lone surrogate {value[exc.start]!r} at character "
            f"{exc.start}); write the text as UTF-8",
            line=line,
            field=field,
            value=value,
            has_value=True,
        ) from None


def _check_label(path: str, line: int, value: object) -> object:
    if isinstance(value, str):
        _check_text(path, line, "label", value)
    if isinstance(value, float) and value.is_integer():
        return int(value)  # 1.0: an index written as a float (CSV exports, pandas)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise PredictionFileError(
            path,
            "must be an integer label index (1 or 1.0) or a label name string",
            line=line,
            field="label",
            value=value,
            has_value=True,
        )
    return value


def _check_probs(path: str, line: int, value: object) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise PredictionFileError(
            path,
            "must be a non-empty list of numbers",
            line=line,
            field="probs",
            value=value,
            has_value=True,
        )
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise PredictionFileError(
                path,
                "every probability must be a number",
                line=line,
                field="probs",
                value=value,
                has_value=True,
            )
        if not math.isfinite(item) or item < 0:
            raise PredictionFileError(
                path,
                "probabilities must be finite and >= 0",
                line=line,
                field="probs",
                value=value,
                has_value=True,
            )
        out.append(float(item))
    if abs(sum(out) - 1.0) > PROB_TOLERANCE:
        raise PredictionFileError(
            path,
            f"probabilities must sum to 1 (±{PROB_TOLERANCE}); they sum to {sum(out):.6g}",
            line=line,
            field="probs",
            value=value,
            has_value=True,
        )
    return out


def _record(path: str, line: int, record: object) -> tuple[str, object, list[float] | None]:
    if not isinstance(record, dict):
        raise PredictionFileError(
            path, "each line must be a JSON object", line=line, value=record, has_value=True
        )
    for field in ("id", "label"):
        if field not in record:
            raise PredictionFileError(path, "required field is missing", line=line, field=field)
    row_id = record["id"]
    if not isinstance(row_id, str) or not row_id:
        raise PredictionFileError(
            path, "must be a non-empty string", line=line, field="id", value=row_id, has_value=True
        )
    _check_text(path, line, "id", row_id)
    label = _check_label(path, line, record["label"])
    probs = _check_probs(path, line, record.get("probs"))
    return row_id, label, probs


def _decode_lines(path: Path, raw: bytes) -> list[tuple[int, str]]:
    out = []
    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        try:
            out.append((number, chunk.decode("utf-8").rstrip("\r")))
        except UnicodeDecodeError as exc:
            raise PredictionFileError(
                str(path), f"not valid UTF-8 ({exc.reason} at byte {exc.start})", line=number
            ) from None
    while out and not out[-1][1].strip():
        out.pop()
    return out


def collect_records(path: Path, records: Iterable[tuple[int, object]]) -> Columns:
    """Validate ``(line, record)`` pairs into columns (one checker for every format)."""
    ids, labels, probs, lines = [], [], [], []
    for number, record in records:
        row_id, label, prob = _record(str(path), number, record)
        ids.append(row_id)
        labels.append(label)
        probs.append(prob)
        lines.append(number)
    return Columns(ids, labels, probs, np.asarray(lines, dtype=np.int64))


def _jsonl_records(path: Path, payload: bytes) -> Iterator[tuple[int, object]]:
    for number, text in _decode_lines(path, payload):
        if not text.strip():
            raise PredictionFileError(str(path), "empty line inside the file", line=number)
        try:
            record = parse_json(text, line=True)
        except JsonTextError as exc:  # too deep, not JSON, a key given twice (the field)
            raise PredictionFileError(str(path), exc.reason, line=number,
                                      field=exc.key) from None
        yield number, record


def _csv_records(path: Path, payload: bytes) -> Iterator[tuple[int, object]]:
    if payload.startswith(codecs.BOM_UTF8):  # Excel's "CSV UTF-8" export starts with one
        payload = payload[len(codecs.BOM_UTF8):]
    decoded = _decode_lines(path, payload)
    reader = csv.reader(io.StringIO("\n".join(text for _, text in decoded)))
    header = next(reader, None)
    if header is None:
        raise PredictionFileError(str(path), "the file is empty")
    first_seen: dict[str, int] = {}
    for column, name in enumerate(header, start=1):
        if name in first_seen:
            raise PredictionFileError(
                str(path),
                f"column given twice in the header (columns {first_seen[name]} and {column}; "
                "which one is meant?)",
                line=1,
                field=name,
            )
        first_seen[name] = column
    for field in ("id", "label"):
        if field not in header:
            raise PredictionFileError(str(path), "required column is missing", line=1, field=field)
    position = {name: i for i, name in enumerate(header)}
    for offset, fields in enumerate(reader):
        number = decoded[offset + 1][0] if offset + 1 < len(decoded) else offset + 2
        if len(fields) != len(header):
            raise PredictionFileError(
                str(path), f"{len(fields)} fields, header has {len(header)}", line=number
            )
        label = fields[position["label"]]  # "1", "1.0" and names are resolved by resolve_labels
        prob = None
        if "probs" in position and fields[position["probs"]].strip():
            depth = depth_above(fields[position["probs"]])
            if depth is not None:
                raise PredictionFileError(str(path), too_deep_message(depth), line=number,
                                          field="probs")
            try:
                prob = json.loads(fields[position["probs"]])
            except ValueError:  # not JSON, or an integer of more than 4,300 digits
                raise PredictionFileError(
                    str(path),
                    "must be a JSON list of numbers",
                    line=number,
                    field="probs",
                    value=fields[position["probs"]],
                    has_value=True,
                ) from None
        yield number, {"id": fields[position["id"]], "label": label, "probs": prob}


def _parquet_records(path: Path, payload: bytes) -> Iterator[tuple[int, object]]:
    table = _read_parquet(path, payload)
    wanted = [c for c in ("id", "label", "probs") if c in table.column_names]
    yield from enumerate(table.select(wanted).to_pylist(), start=1)  # other columns ignored


_RECORDS = {"jsonl": _jsonl_records, "csv": _csv_records, "parquet": _parquet_records}


def line_columns(path: Path, payload: bytes, fmt: str) -> Columns:
    """Every record of ``payload`` (a ``fmt`` file's bytes) validated, as columns.

    Raises:
        PredictionFileError: The first malformed record, naming its line, field and value.

    """
    return collect_records(path, _RECORDS[fmt](path, payload))


def _read_parquet(path: Path, payload: bytes) -> pa.Table:
    try:
        return pq.read_table(pa.BufferReader(payload))
    except (pa.ArrowInvalid, OSError) as exc:
        raise PredictionFileError(str(path), f"not a readable Parquet file ({exc})") from None


def to_jsonl(path: str | Path) -> bytes:
    """The prediction file as JSONL bytes, as the scorer reads it (what ``submit`` stores).

    A JSONL file (or ``.jsonl.gz``) is kept byte for byte. CSV and Parquet records are
    validated by the same per-record checks as :func:`read_predictions` and written as
    ``{"id", "label"[, "probs"]}`` objects: labels keep their value (``"1.0"`` stays a string
    the scorer reads as index 1), other columns (a timestamp, a model name) are dropped.

    Raises:
        PredictionFileError: The file is missing, of an unknown type, or malformed.

    """
    path = check_input_file(path)
    fmt = detect_format(path)
    payload = read_payload(path)
    if fmt == "jsonl":
        return payload
    records = {"csv": _csv_records, "parquet": _parquet_records}[fmt](path, payload)
    out = []
    for number, record in records:
        row_id, label, probs = _record(str(path), number, record)
        item = {"id": row_id, "label": label}
        if probs is not None:
            item["probs"] = probs
        out.append(json.dumps(item, ensure_ascii=False).encode("utf-8") + b"\n")
    if not out:
        raise PredictionFileError(str(path), "the file has no prediction records")
    return b"".join(out)
