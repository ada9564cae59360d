"""Read and validate prediction files (JSONL, CSV or Parquet; see docs/predictions.md).

A prediction file (optionally gzip-compressed: ``.jsonl.gz``) has one record per
suite row: ``id``, ``label`` (index or label name) and
optionally ``probs``. Reading happens in two passes of one design:

* a fast columnar pass (pyarrow) for well-formed JSONL and Parquet files;
* a line-by-line pass that is authoritative for errors: whenever the fast pass fails, or the
  validation of its columns fails, the file is read line by line so that the error names the
  exact line, field and value.

Every problem raises :class:`bench.errors.PredictionFileError`; nothing is written.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import math
import re
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson
import pyarrow.parquet as pq

from bench.arrays import float64, indices, int64, offsets, valid
from bench.errors import DataError, PredictionFileError, shorten
from bench.json_input import (
    DeepJsonError,
    DuplicateKeyError,
    LineScanner,
    depth_above,
    too_deep_message,
    unique_object,
)
from bench.metrics.becel import INVALID
from bench.modeling import normalise_label
from bench.runtime import M_ARENA_MAX, one_malloc_arena  # noqa: F401  (re-exported)
from bench.runtime import release_free_memory as _release_free_memory

PROB_TOLERANCE = 1e-3
#: A JSONL file at least this large is parsed as two halves at once, split at a line break
#: (:func:`_parse_jsonl`): the parse is most of the time of ``score``, and pyarrow's own
#: threaded reader reads ahead, costing ~200 MiB more at the peak on a 135 MB file.
SPLIT_PARSE_BYTES = 16 << 20
#: Bytes pyarrow's JSON reader parses at a time (its default is 1 MiB).
JSON_BLOCK_BYTES = 2 << 20
#: Most bytes a ``.gz`` prediction file may decompress to (1 GiB: about 8 times the
#: 135 MB file of every suite). A gzip bomb (10 MB of zeros compress to 10 KB) is refused
#: at that size instead of filling the memory; ``review`` reads such files from anyone.
MAX_DECOMPRESSED_BYTES = 1 << 30
#: Evenly spaced windows of a large JSONL file read by :func:`sampled_suites`, and their size.
SAMPLE_WINDOWS = 64
SAMPLE_BYTES = 4096
#: A row id's suite in raw JSONL bytes: ``"id": "SUITE/`` (``/`` may be escaped as ``\/``).
_SAMPLED_ID = re.compile(rb'"id"\s*:\s*"([^"\\/]+)(?:/|\\/)')
FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}


@dataclass(frozen=True)
class SuitePredictions:
    """The predictions of one suite, in file order.

    Attributes:
        ids: Row ids.
        pred: Label index per row; ``INVALID`` (-1) for answers outside the label set.
        probs: ``(n, n_labels)`` probabilities when every row has them, else ``None``.
        lines: 1-based line (JSONL/CSV) or row (Parquet) of each record, for messages.
        first_invalid: ``(line, value)`` of the first invalid answer, ``None`` when none.
        rows: Position of each prediction among the suite's rows, when the reader already
            matched the ids against the suite (``None``: not matched, or the predictions list
            every row in suite order); saves :func:`bench.scoring.align` a second lookup.

    """

    ids: pa.Array
    pred: np.ndarray
    probs: np.ndarray | None
    lines: np.ndarray
    first_invalid: tuple[int, object] | None = None
    rows: np.ndarray | None = None

    @property
    def n_invalid(self) -> int:
        """Number of invalid answers (labels that are neither a label name nor an index)."""
        return int((self.pred == INVALID).sum())


@dataclass(frozen=True)
class Predictions:
    """A validated prediction file.

    Attributes:
        path: The file.
        sha256: Hash of the file's content (uncompressed for ``.gz``, so a stored
            ``.jsonl.gz`` has the hash of the JSONL it holds).
        rows: Number of records.
        suites: Per suite name, that suite's predictions.

    """

    path: str
    sha256: str
    rows: int
    suites: dict[str, SuitePredictions]

    def invalid_answers(self) -> dict:
        """Invalid answers: total, per suite, and the first one (line and value)."""
        by_suite = {n: s.n_invalid for n, s in sorted(self.suites.items()) if s.n_invalid}
        firsts = [s.first_invalid for s in self.suites.values() if s.first_invalid]
        first = min(firsts, key=lambda item: item[0]) if firsts else None
        return {
            "count": sum(by_suite.values()),
            "by_suite": by_suite,
            "first": {"line": first[0], "value": first[1]} if first else None,
        }


@dataclass
class _Columns:
    ids: list | pa.Array
    labels: list | pa.Array
    probs: list | pa.Array | None
    lines: np.ndarray | None  # None: positions, lines not known exactly (fast pass)


def check_input_file(path: str | Path) -> Path:
    """``path`` as a :class:`Path` when it is a regular file (or a link to one).

    Raises:
        PredictionFileError: ``-`` (standard input is not read: a prediction file is read
            twice, hashed and parsed), a folder, a FIFO, socket or device, or nothing at all;
            the message says which.

    """
    if str(path) == "-":
        raise PredictionFileError(
            "-", "reading predictions from standard input is not supported; save them to a "
            "file and pass its path (a file named '-': pass ./-)")
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise PredictionFileError(str(path), "file not found") from None
    except NotADirectoryError:
        raise PredictionFileError(str(path), "file not found (a parent is a file)") from None
    if stat.S_ISREG(mode):
        return path
    what = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise PredictionFileError(str(path), f"is {what}, not a prediction file; pass a "
                              ".jsonl, .csv or .parquet file")


def detect_format(path: Path) -> str:
    """File format from the extension (``.jsonl``/``.json``, ``.csv``, ``.parquet``)."""
    suffixes = [s.lower() for s in path.suffixes]
    for suffix in reversed(suffixes):
        if suffix in FORMATS:
            return FORMATS[suffix]
    raise PredictionFileError(
        str(path),
        f"unknown file type {''.join(suffixes) or '(none)'}: use .jsonl, .csv or .parquet",
    )


# --------------------------------------------------------------------------- line-by-line pass


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


def _collect(path: Path, records: Iterable[tuple[int, object]]) -> _Columns:
    """Validate ``(line, record)`` pairs into columns (one checker for every format)."""
    ids, labels, probs, lines = [], [], [], []
    for number, record in records:
        row_id, label, prob = _record(str(path), number, record)
        ids.append(row_id)
        labels.append(label)
        probs.append(prob)
        lines.append(number)
    return _Columns(ids, labels, probs, np.asarray(lines, dtype=np.int64))


def _jsonl_records(path: Path, payload: bytes) -> Iterator[tuple[int, object]]:
    for number, text in _decode_lines(path, payload):
        if not text.strip():
            raise PredictionFileError(str(path), "empty line inside the file", line=number)
        depth = depth_above(text)
        if depth is not None:
            raise PredictionFileError(str(path), too_deep_message(depth), line=number)
        try:
            yield number, json.loads(text, object_pairs_hook=unique_object)
        except json.JSONDecodeError as exc:
            raise PredictionFileError(
                str(path),
                f"not valid JSON ({exc.msg} at column {exc.colno}); truncated line?",
                line=number,
            ) from None
        except DuplicateKeyError as exc:
            raise PredictionFileError(
                str(path), "key given twice in one object (which value is meant?)",
                line=number, field=exc.key,
            ) from None
        except ValueError as exc:  # an integer of more than 4,300 digits
            what = "an integer of more than 4,300 digits" if "digits" in str(exc) else exc
            raise PredictionFileError(str(path), f"not valid JSON ({what})", line=number) from None


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
        label = fields[position["label"]]  # "1", "1.0" and names are resolved by _labels
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


def _slow_jsonl(path: Path, payload: bytes) -> _Columns:
    return _collect(path, _jsonl_records(path, payload))


def _slow_csv(path: Path, payload: bytes) -> _Columns:
    return _collect(path, _csv_records(path, payload))


def _slow_parquet(path: Path, payload: bytes) -> _Columns:
    return _collect(path, _parquet_records(path, payload))


def _read_parquet(path: Path, payload: bytes) -> pa.Table:
    try:
        return pq.read_table(pa.BufferReader(payload))
    except (pa.ArrowInvalid, OSError) as exc:
        raise PredictionFileError(str(path), f"not a readable Parquet file ({exc})") from None


# --------------------------------------------------------------------------- fast columnar pass


class _ByteRange(io.RawIOBase):
    """The bytes ``[start, stop)`` of a file, as a readable stream checked for deep nesting.

    Every block is passed through a :class:`bench.json_input.LineScanner` before pyarrow gets
    it: a line nested deeper than :data:`bench.json_input.MAX_DEPTH` would crash pyarrow's
    reader (SIGSEGV at ~20,000 levels), so a suspect block raises
    :class:`bench.json_input.DeepJsonError` instead (pyarrow passes it on unchanged).
    """

    def __init__(self, path: Path, start: int, stop: int):
        super().__init__()
        self._file = open(path, "rb", buffering=0)  # noqa: SIM115 (closed with the stream)
        self._file.seek(start)
        self._left = stop - start
        self._scanner = LineScanner()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (pyarrow reads through this: one copy, scanned)."""
        size = self._left if size is None or size < 0 else min(size, self._left)
        if size <= 0:
            return b""
        data = self._file.read(size)
        self._left -= len(data)
        self._scanner.feed(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        memoryview(buffer)[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._file.close()
        super().close()


def _checked(path: Path) -> pa.PythonFile:
    """The whole file as a stream for pyarrow, checked for deep nesting (:class:`_ByteRange`)."""
    return pa.PythonFile(_ByteRange(path, 0, path.stat().st_size), mode="r")


def _check_payload(payload: bytes) -> None:
    """Raise :class:`DeepJsonError` when a line of ``payload`` may be nested too deeply."""
    scanner, view = LineScanner(), memoryview(payload)
    for start in range(0, len(payload), JSON_BLOCK_BYTES):
        scanner.feed(view[start : start + JSON_BLOCK_BYTES])


def _read_json(source) -> pa.Table:
    """One pyarrow JSON parse on this thread, into the system allocator."""
    options = pajson.ReadOptions(block_size=JSON_BLOCK_BYTES, use_threads=False)
    return pajson.read_json(source, read_options=options, memory_pool=pa.system_memory_pool())


def _halves(path: Path) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """Byte ranges of the two halves of a JSONL file, split after a line break.

    ``None`` when the file is small, or has no line break after its middle.
    """
    size = path.stat().st_size
    if size < SPLIT_PARSE_BYTES:
        return None
    with open(path, "rb") as handle:
        handle.seek(size // 2)
        handle.readline()
        middle = handle.tell()
    if middle >= size:
        return None
    return (0, middle), (middle, size)


def _parse_jsonl(path: Path,
                 meanwhile: Callable[[Callable[[], bool]], None] | None = None) -> pa.Table:
    """The JSONL file parsed by pyarrow, as one parse of the whole file would give it.

    A large file is parsed as two halves on two threads (pyarrow releases the GIL) and the
    tables concatenated; this thread meanwhile runs ``meanwhile(done)``, which should return
    once ``done()`` is true. Each half infers its own column types, so when the halves'
    schemas differ (labels as numbers in one half, a column missing in the other) or a half
    fails, the whole file is parsed again on one thread: the result (or the error) is always
    that of the whole-file parse.
    """
    ranges = _halves(path)
    if ranges is not None:
        with ThreadPoolExecutor(max_workers=2) as pool:
            halves = [pool.submit(_read_json, pa.PythonFile(_ByteRange(path, *r), mode="r"))
                      for r in ranges]
            if meanwhile is not None:
                meanwhile(lambda: all(half.done() for half in halves))
            try:
                first, second = (half.result() for half in halves)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
                first = second = None
        if first is not None:
            _release_free_memory()  # each parsing thread freed its blocks in its own arena
            if first.schema == second.schema:
                return pa.concat_tables([first, second])
    return _read_json(_checked(path))


def sampled_suites(path: str | Path, names: Iterable[str]) -> list[str]:
    """The suites of ``names`` whose row ids occur in evenly spaced windows of a JSONL file.

    A cheap look (:data:`SAMPLE_WINDOWS` reads of :data:`SAMPLE_BYTES`) at which suites a
    large file covers before it is parsed, so that only those are loaded meanwhile
    (:meth:`bench.scoring.SuiteFolder.preload`). A hint, not a check: a suite smaller than
    a window's share of the file may be missed (it is loaded when it is asked for, as
    without the hint), and nothing is validated here.

    Returns:
        The suites found, in the order of ``names``.

    """
    size = Path(path).stat().st_size
    found: set[str] = set()
    with open(path, "rb") as handle:
        for k in range(SAMPLE_WINDOWS):
            handle.seek(size * k // SAMPLE_WINDOWS)
            window = handle.read(SAMPLE_BYTES)
            found.update(m.decode("utf-8", "replace") for m in _SAMPLED_ID.findall(window))
    return [name for name in names if name in found]


def _fast(payload: bytes | Path, fmt: str,
          meanwhile: Callable[[Callable[[], bool]], None] | None = None) -> _Columns | None:
    """Columns from pyarrow, or ``None`` when the file needs the line-by-line pass.

    ``payload`` is the file's content, or for JSONL its path: pyarrow then reads the file in
    blocks (a large file as two halves at once, while this thread runs
    ``meanwhile``: :func:`_parse_jsonl`), and the whole content is never held in memory next
    to the parsed columns. The parsed JSON goes to the system allocator, which gives the
    parser's scratch memory back (the default mimalloc pool keeps ~100 MiB more at the peak
    on a 135 MB file).
    """
    try:
        if fmt == "jsonl":
            if isinstance(payload, Path):
                table = _parse_jsonl(payload, meanwhile)
            else:
                _check_payload(payload)
                table = _read_json(pa.BufferReader(payload))
        elif fmt == "parquet":
            table = pq.read_table(pa.BufferReader(payload))
        else:
            return None
        for name in ("id", "label"):  # e.g. invalid UTF-8 in strings
            if name in table.column_names:
                table.column(name).validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
        return None
    if "id" not in table.column_names or "label" not in table.column_names:
        return None
    ids, labels = table.column("id").combine_chunks(), table.column("label").combine_chunks()
    if ids.type != pa.string() or ids.null_count or (np.diff(offsets(ids)) == 0).any():
        return None
    if labels.null_count or not (pa.types.is_integer(labels.type) or labels.type == pa.string()):
        return None
    probs = None
    if "probs" in table.column_names:
        probs = table.column("probs").combine_chunks()
        if not (pa.types.is_list(probs.type) or pa.types.is_large_list(probs.type)):
            return None
        if not (
            pa.types.is_floating(probs.type.value_type)
            or pa.types.is_integer(probs.type.value_type)
        ):
            return None
        values = float64(probs.flatten())
        if values is None or not np.isfinite(values).all() or (values < 0).any():
            return None
        present = valid(probs)
        filled = np.where(present, np.diff(offsets(probs)), 0)
        if (filled[present] == 0).any():
            return None
        starts = np.concatenate([[0], np.cumsum(filled)])[:-1]
        sums = np.add.reduceat(values, starts[present]) if len(values) else np.zeros(0)
        if (np.abs(sums - 1.0) > PROB_TOLERANCE).any():
            return None
    return _Columns(ids, labels, probs, None)


# --------------------------------------------------------------------------- validation


def _suite_of(ids: pa.Array) -> pa.Array:
    parts = pc.split_pattern(ids, "/", max_splits=1)
    return pc.list_element(parts, 0)


def _resolve(path: str, columns: _Columns, manifest: dict, suite_ids: dict) -> dict:
    ids = columns.ids if isinstance(columns.ids, pa.Array) else pa.array(columns.ids, pa.string())
    n = len(ids)
    if n == 0:
        raise PredictionFileError(path, "the file has no prediction records")
    lines = columns.lines if columns.lines is not None else np.arange(1, n + 1)

    def fail(position: int, message: str, field: str = "id", value: object = None) -> None:
        raise PredictionFileError(
            path,
            message,
            line=int(lines[position]),
            field=field,
            value=ids[position].as_py() if value is None else value,
            has_value=True,
        )

    counts = pc.value_counts(ids)
    dup = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(dup):
        first = dup[0]["values"].as_py()
        where = np.flatnonzero(pc.equal(ids, first).to_numpy(zero_copy_only=False))
        fail(int(where[1]), f"duplicate id (first seen on line {int(lines[where[0]])})")

    encoded = pc.dictionary_encode(_suite_of(ids))
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
    out = {}
    for code, name in enumerate(encoded.dictionary.to_pylist()):
        positions = order[bounds[code] : bounds[code + 1]]
        if name not in manifest:
            fail(
                int(positions[0]),
                f"unknown suite {shorten(name, 40)} (known: {', '.join(sorted(manifest))})",
            )
        entry = manifest[name]
        label_names = entry["label_names"]
        sub_ids = ids.take(pa.array(positions))
        known = pc.is_in(sub_ids, value_set=suite_ids(name)).to_numpy(zero_copy_only=False)
        if not known.all():
            fail(
                int(positions[np.flatnonzero(~known)[0]]),
                f"unknown id: not a row of suite {name!r}",
            )
        pred, first_invalid = _labels(path, columns.labels, positions, label_names, lines)
        probs = _probs(path, columns.probs, positions, len(label_names), lines, ids)
        out[name] = SuitePredictions(sub_ids, pred, probs, lines[positions], first_invalid)
    return out


class _LabelColumn:
    """The file's label column, converted once: int64 indices, or dictionary codes of text."""

    #: Up to this many distinct label strings are resolved once per suite as a lookup table.
    TABLE = 4096

    def __init__(self, labels: pa.Array):
        self.integer = pa.types.is_integer(labels.type)
        if self.integer:
            self.values = int64(labels)
        else:
            encoded = pc.dictionary_encode(labels)
            self.values = int64(encoded.indices)
            self.texts = encoded.dictionary.to_pylist()

    def suite(self, rows: slice | np.ndarray, label_names: list[str]):
        """``(pred, first invalid position in rows or None)``; ``None`` on an out-of-range index."""
        values = self.values[rows]
        n_labels = len(label_names)
        if self.integer:
            if len(values) and (values.min() < 0 or values.max() >= n_labels):
                return None
            return values, None
        lookup = {normalise_label(name): i for i, name in enumerate(label_names)}

        def resolve(codes) -> np.ndarray:
            found = (_label_text(self.texts[c], lookup, n_labels) for c in codes)
            return np.fromiter((INVALID if f is None else f for f in found), np.int64, len(codes))

        if len(self.texts) <= self.TABLE:
            pred = resolve(range(len(self.texts)))[values]
        else:
            distinct, inverse = np.unique(values, return_inverse=True)
            pred = resolve(distinct.tolist())[inverse]
        bad = np.flatnonzero(pred == INVALID)
        return pred, (int(bad[0]) if len(bad) else None)


def _complete_runs(ids: pa.Array, manifest: dict, suite_ids) -> dict[str, int] | None:
    """Start of each suite when the file is whole suites, each in suite order; else ``None``.

    The usual layout (what ``predict`` writes): one comparison of buffers per suite, no split
    of every id, no hashing. A suite met twice is a duplicate: ``None`` too.
    """
    starts: dict[str, int] = {}
    position, n = 0, len(ids)
    while position < n:
        name = ids[position].as_py().split("/", 1)[0]
        if name in starts or name not in manifest:
            return None
        suite = suite_ids(name)
        if position + len(suite) > n or not ids.slice(position, len(suite)).equals(suite):
            return None
        starts[name] = position
        position += len(suite)
    return starts


def _resolve_fast(columns: _Columns, manifest: dict, suite_ids) -> dict | None:
    """Split the columnar pass's columns by suite, or ``None`` when the file has any problem.

    Checks what :func:`_resolve` checks (duplicate, unknown suite, unknown id, integer label out
    of range, probs length), each id once: a suite whose rows the file lists completely and in
    suite order is matched by one buffer comparison, any other by one ``index_in`` that also
    gives the alignment. Any failure returns ``None``: the line-by-line pass then names the
    line. Makes no pyarrow call that imports pandas (bench.arrays).
    """
    ids, n = columns.ids, len(columns.ids)
    if n == 0:
        return None
    runs = _complete_runs(ids, manifest, suite_ids)
    if runs is not None:  # every suite complete and in suite order: nothing to hash
        names, order = list(runs), None
        bounds = np.asarray([*runs.values(), n])
    else:
        parts = pc.split_pattern(ids, "/", max_splits=1)
        encoded = pc.dictionary_encode(parts.values.take(indices(offsets(parts)[:-1])))
        codes, names = int64(encoded.indices), encoded.dictionary.to_pylist()
        del parts, encoded
        if any(name not in manifest for name in names):
            return None
        if (codes[1:] >= codes[:-1]).all():  # suites in runs, in order of first appearance
            order = None
            bounds = np.searchsorted(codes, np.arange(len(names) + 1))
        else:
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    labels = _LabelColumn(columns.labels)
    probs = columns.probs
    if probs is not None:
        present, starts = valid(probs), offsets(probs)
        lengths, child = np.diff(starts), float64(probs.values)
    out = {}
    for code, name in enumerate(names):
        start, stop = int(bounds[code]), int(bounds[code + 1])
        count = stop - start
        positions = np.arange(start, stop) if order is None else order[start:stop]
        contiguous = int(positions[-1]) - int(positions[0]) == count - 1
        rows = slice(int(positions[0]), int(positions[0]) + count) if contiguous else positions
        suite = suite_ids(name)
        if contiguous:
            sub_ids = ids.slice(rows.start, count)
        else:
            sub_ids = ids.take(indices(positions))
        matched = None
        if not (count == len(suite) and sub_ids.equals(suite)):
            matched = int64(pc.index_in(sub_ids, value_set=suite))
            if (matched < 0).any() or np.bincount(matched).max() > 1:
                return None  # an unknown id, or a duplicate
        label_names = manifest[name]["label_names"]
        n_labels = len(label_names)
        resolved = labels.suite(rows, label_names)
        if resolved is None:
            return None
        pred, invalid = resolved
        first_invalid = None
        if invalid is not None:
            value = labels.texts[labels.values[rows][invalid]]
            first_invalid = (int(positions[invalid]) + 1, value)
        suite_probs = None
        if probs is not None:
            here = present[rows]
            if (lengths[rows][here] != n_labels).any():
                return None
            if here.all():
                if child is None:
                    return None
                first = starts[rows]
                if contiguous:
                    suite_probs = child[first[0] : first[0] + count * n_labels]
                    suite_probs = suite_probs.reshape(count, n_labels)
                else:
                    suite_probs = child[first[:, None] + np.arange(n_labels)]
        out[name] = SuitePredictions(
            sub_ids, pred, suite_probs, positions + 1, first_invalid, matched
        )
    return out


def _out_of_range(path, label_names, line: int, value: int) -> PredictionFileError:
    return PredictionFileError(
        path,
        f"label index out of range 0..{len(label_names) - 1} ({label_names})",
        line=line,
        field="label",
        value=value,
        has_value=True,
    )


#: A label index written as text: ASCII digits, optionally ``.0`` (CSV exports), blanks around.
_INDEX_TEXT = re.compile(r"[ \t]*([0-9]{1,18})(?:\.0*)?[ \t]*")


def _index_text(value: str) -> int | None:
    """``"1"``, ``" 1 "``, ``"1.0"`` -> 1; ``None`` for any other text.

    Only ASCII digits: ``float()`` would also read ``"١"`` (Arabic-Indic one), ``"1e0"``,
    ``"1_0"`` or ``"+1"`` as numbers; those are answers, not indices.
    """
    match = _INDEX_TEXT.fullmatch(value)
    return int(match[1]) if match else None


def _label_text(value: str, lookup: dict[str, int], n_labels: int) -> int | None:
    """The label index a label string stands for; ``None`` for an invalid answer.

    A label name (``lookup``: normalised name -> index) first, then an index written as text
    (``"1"``, ``"1.0"``) in range; ``"7"`` on a 2-label task is free text, not an error.
    """
    found = lookup.get(normalise_label(value))
    if found is None:
        found = _index_text(value)
        if found is not None and not 0 <= found < n_labels:
            found = None
    return found


def _labels(path, labels, positions, label_names, lines) -> tuple[np.ndarray, tuple | None]:
    """Label indices (``INVALID`` for invalid answers) and the first invalid answer.

    A string matches a label name ignoring case, spaces, ``_`` and ``-`` (as ``predict``
    matches model labels, :func:`bench.modeling.normalise_label`); otherwise a string that is
    an integer in range (``"1"``, ``"1.0"``) is an index. Anything else, an out-of-range
    ``"7"`` included, is an invalid answer; an out-of-range *integer* is an error.
    """
    lookup = {normalise_label(name): i for i, name in enumerate(label_names)}
    if isinstance(labels, pa.Array):
        taken = labels.take(pa.array(positions))
        if pa.types.is_integer(taken.type):
            values = taken.to_numpy(zero_copy_only=False).astype(np.int64)
            bad = (values < 0) | (values >= len(label_names))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise _out_of_range(path, label_names, int(lines[positions[i]]), int(values[i]))
            return values, None
        texts = taken.to_pylist()
    else:
        texts = [labels[p] for p in positions]
    out = np.empty(len(texts), dtype=np.int64)
    first = None
    cache: dict[str, int | None] = {}
    for i, value in enumerate(texts):
        if isinstance(value, str):
            if value not in cache:
                cache[value] = _label_text(value, lookup, len(label_names))
            index = cache[value]
            if index is None:
                out[i] = INVALID
                if first is None:
                    first = (int(lines[positions[i]]), value)
                continue
            value = index
        if 0 <= value < len(label_names):
            out[i] = value
        else:
            raise _out_of_range(path, label_names, int(lines[positions[i]]), value)
    return out, first


def _probs(path, probs, positions, n_labels, lines, ids) -> np.ndarray | None:
    if probs is None:
        return None
    if isinstance(probs, pa.Array):
        taken = probs.take(pa.array(positions))
        lengths = pc.fill_null(pc.list_value_length(taken), n_labels)
        mismatch = (lengths.to_numpy(zero_copy_only=False) != n_labels).any()
        rows = taken.to_pylist() if mismatch or taken.null_count else None
        if rows is None:
            flat = taken.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
            return flat.reshape(len(positions), n_labels)
    else:
        rows = [probs[p] for p in positions]
    for i, row in enumerate(rows):
        if row is not None and len(row) != n_labels:
            raise PredictionFileError(
                path,
                f"expected {n_labels} probabilities (one per label), got {len(row)}",
                line=int(lines[positions[i]]),
                field="probs",
                value=row,
                has_value=True,
            )
    if any(row is None for row in rows):
        return None
    return np.asarray(rows, dtype=np.float64).reshape(len(positions), n_labels)


def read_payload(path: Path) -> bytes:
    """The file's bytes, decompressed when it ends in ``.gz``.

    Raises:
        PredictionFileError: A corrupt or truncated gzip file, or one that decompresses to
            more than :data:`MAX_DECOMPRESSED_BYTES`.

    """
    payload = path.read_bytes()
    if path.suffix.lower() == ".gz":
        cap = MAX_DECOMPRESSED_BYTES
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(payload), mode="rb") as handle:
                payload = handle.read(cap + 1)  # never more than the cap in memory
        except (OSError, EOFError, zlib.error) as exc:
            raise PredictionFileError(str(path), f"not a valid gzip file ({exc})") from None
        if len(payload) > cap:
            raise PredictionFileError(
                str(path), f"decompresses to more than {cap:,} bytes (a gzip bomb?); "
                "prediction files are read up to that size")
    return payload


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_predictions(path: str | Path, manifest: dict, suite_ids,
                     meanwhile: Callable[[Callable[[], bool]], None] | None = None
                     ) -> Predictions:
    """Read and validate a prediction file against built suites.

    Args:
        path: The prediction file (.jsonl, .csv or .parquet).
        manifest: ``suites.json`` entries of the built folder (name -> entry).
        suite_ids: Callable ``name -> pa.Array`` of that suite's row ids.
        meanwhile: Work for this thread while a large JSONL file is parsed on two others,
            called with a function that tells when the parse is done (``score_file``:
            :meth:`bench.scoring.SuiteFolder.preload`). Not called for other files.

    Returns:
        The validated predictions, split by suite.

    Raises:
        PredictionFileError: On any malformed content; the message names file, line, field
            and value.

    """
    path = check_input_file(path)
    if path.stat().st_size == 0:
        raise PredictionFileError(str(path), "the file is empty")
    fmt = detect_format(path)
    try:
        if fmt == "jsonl" and path.suffix.lower() != ".gz":  # hashed and parsed from the file
            with ThreadPoolExecutor(max_workers=1) as pool:  # both release the GIL: in parallel
                hashing = pool.submit(_file_sha256, path)
                columns = _fast(path, fmt, meanwhile)
                digest = hashing.result()
        else:
            payload = read_payload(path)
            digest = hashlib.sha256(payload).hexdigest()
            columns = _fast(payload, fmt)
    except DeepJsonError:  # a line may be nested too deeply: the pass below names it
        columns = None
    if columns is not None:
        try:
            suites = _resolve_fast(columns, manifest, suite_ids)
        except DataError:  # a suite file missing or changed: report it in the old order,
            suites = None  # after any problem of the prediction file (the pass below)
        if suites is not None:
            return Predictions(str(path), digest, len(columns.ids), suites)
        # a problem (or a layout the columnar pass does not take): read line by line, so the
        # message names the exact line
    payload = read_payload(path)
    digest = hashlib.sha256(payload).hexdigest()
    slow = {"jsonl": _slow_jsonl, "csv": _slow_csv, "parquet": _slow_parquet}[fmt]
    columns = slow(path, payload)
    suites = _resolve(str(path), columns, manifest, suite_ids)
    return Predictions(str(path), digest, len(columns.ids), suites)


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
