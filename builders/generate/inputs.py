"""Read the corpus a generator runs on: a local CSV / TSV / JSONL file or a Hub dataset id."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, SourceError

SUFFIXES = {".csv": ",", ".tsv": "\t", ".jsonl": None, ".json": None}


@dataclass(frozen=True)
class Record:
    """One input example.

    Attributes:
        row: 0-based data row in the source (file order).
        line: 1-based line in the file (for error messages; equals ``row + 1`` for Hub data).
        fields: Column name to value, as read.
        label: Label index into the label names.

    """

    row: int
    line: int
    fields: dict[str, str]
    label: int


@dataclass(frozen=True)
class Corpus:
    """Records read from one source."""

    source: str
    sha256: str
    records: tuple[Record, ...]


def _read_file(path: Path) -> list[tuple[int, dict]]:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigError(f"{path}: unsupported file type {suffix!r}; use .csv, .tsv or .jsonl")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SourceError(
            f"{path}:{line}: not valid UTF-8 ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    if SUFFIXES[suffix] is None:
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SourceError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
            if not isinstance(value, dict):
                raise SourceError(f"{path}:{number}: expected a JSON object, got {value!r:.60}")
            rows.append((number, value))
        return rows
    # TSV is read with CSV quoting too (as csv.writer, pandas' to_csv(sep="\t") and GLUE's
    # quoted files write it): without it a quoted field keeps its quotes, '"""HELP ME"""'
    # instead of '"HELP ME"' (issue 21).
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=SUFFIXES[suffix],
                            quoting=csv.QUOTE_MINIMAL)
    try:
        return [(reader.line_num, dict(r)) for r in reader]
    except csv.Error as exc:  # e.g. a field over the csv module's 131,072-character limit
        raise SourceError(
            f"{path}:{reader.line_num}: not readable as {suffix[1:].upper()} ({exc}); an "
            "unbalanced quote makes one field swallow the rest of the file"
        ) from None


def _read_hub(name: str, split: str) -> list[tuple[int, dict]]:
    import datasets  # heavy: only for Hub ids

    try:
        data = datasets.load_dataset(name, split=split)
    except Exception as exc:
        raise SourceError(
            f"--data {name!r} is neither a local file nor a loadable Hub dataset (split "
            f"{split!r}): {type(exc).__name__}: {str(exc)[:200]}. Offline (HF_HUB_OFFLINE=1) only "
            "datasets already in the local cache load; pass a local .csv/.tsv/.jsonl instead"
        ) from None
    return [(number + 1, dict(r)) for number, r in enumerate(data)]


def _label(value: object, labels: Sequence[str], where: str, column: str) -> int:
    folded = [x.strip().lower() for x in labels]
    text = str(value).strip()
    if text.lower() in folded:
        return folded.index(text.lower())
    try:
        index = int(text)
    except ValueError:
        index = -1
    if 0 <= index < len(labels):
        return index
    raise SourceError(
        f"{where}: field {column!r} value {value!r} is not a label index 0-{len(labels) - 1} "
        f"nor one of {list(labels)}"
    )


def load_corpus(
    data: str,
    columns: Sequence[str],
    labels: Sequence[str],
    *,
    label_column: str = "label",
    split: str = "test",
) -> Corpus:
    """Read ``data`` and check it has ``columns`` and a valid label in every row.

    Args:
        data: A local ``.csv`` / ``.tsv`` / ``.jsonl`` file, or a Hub dataset id.
        columns: Input columns that must be present (task-type order).
        labels: Label names in index order; labels in the data may be indices or names.
        label_column: Column with the gold label.
        split: Split of a Hub dataset.

    Returns:
        The records in source order.

    """
    path = Path(data)
    if path.is_file():
        raw, source = _read_file(path), str(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    elif path.suffix.lower() in SUFFIXES or path.exists():
        raise SourceError(f"--data {data}: not a readable .csv/.tsv/.jsonl file")
    else:
        raw, source = _read_hub(data, split), f"hf://{data}@{split}"
        digest = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()
    if not raw:
        raise SourceError(f"{source}: no data rows")
    records = []
    for row, (line, fields) in enumerate(raw):
        where = f"{source}:{line}"
        for column in (*columns, label_column):
            if column not in fields or fields[column] is None:
                raise SourceError(
                    f"{where}: field {column!r} missing (columns present: {sorted(fields)})"
                )
        label = _label(fields[label_column], labels, where, label_column)
        clean = {k: str(v) for k, v in fields.items() if v is not None}
        records.append(Record(row, line, clean, label))
    return Corpus(source, digest, tuple(records))
