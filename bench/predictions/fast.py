"""The columnar pass: pyarrow parses a JSONL or Parquet file, a large JSONL as two halves at once.

The fast path of :func:`consistency_bench.bench.predictions.read.read_predictions` for well-formed
files. Any
failure here returns ``None`` (or raises
:class:`consistency_bench.bench.io.json_input.DeepJsonError`),
and the
file is read again by the line-by-line pass, which names the line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.json as pajson
import pyarrow.parquet as pq

from consistency_bench.bench.io.arrays import float64, offsets, valid
from consistency_bench.bench.io.json_input import LineScanner
from consistency_bench.bench.predictions.types import PROB_TOLERANCE, Columns
from consistency_bench.bench.runtime import release_free_memory

#: A JSONL file at least this large is parsed as two halves at once, split at a line break
#: (:func:`_parse_jsonl`): the parse is most of the time of ``score``, and pyarrow's own
#: threaded reader reads ahead, costing ~200 MiB more at the peak on a 135 MB file.
SPLIT_PARSE_BYTES = 16 << 20
#: Bytes pyarrow's JSON reader parses at a time (its default is 1 MiB).
JSON_BLOCK_BYTES = 2 << 20
#: Evenly spaced windows of a large JSONL file read by :func:`sampled_suites`, and their size.
SAMPLE_WINDOWS = 64
SAMPLE_BYTES = 4096
#: A row id's suite in raw JSONL bytes: ``"id": "SUITE/`` (``/`` may be escaped as ``\/``).
_SAMPLED_ID = re.compile(rb'"id"\s*:\s*"([^"\\/]+)(?:/|\\/)')


class _ByteRange(io.RawIOBase):
    """The bytes ``[start, stop)`` of a file, as a readable stream checked for deep nesting.

    Every block is passed through a :class:`consistency_bench.bench.io.json_input.LineScanner`
    before
    pyarrow gets
    it: a line nested deeper than :data:`consistency_bench.bench.io.json_input.MAX_DEPTH` would
    crash
    pyarrow's
    reader (SIGSEGV at ~20,000 levels), so a suspect block raises
    :class:`consistency_bench.bench.io.json_input.DeepJsonError` instead (pyarrow passes it on
    unchanged).
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


@dataclass(frozen=True)
class Halves:
    """The two halves of a large JSONL file being parsed on two threads (:func:`start_halves`).

    Attributes:
        pool: The two threads; :func:`_parse_jsonl` shuts them down.
        parses: The parse of each half, in file order.

    """

    pool: ThreadPoolExecutor
    parses: tuple[Future, Future]


def start_halves(path: Path) -> Halves | None:
    """Start parsing the two halves of a large JSONL file, each on a thread of its own.

    ``None`` for a file below :data:`SPLIT_PARSE_BYTES` (or with no line break after its
    middle): that file is parsed whole, on the caller's thread.
    """
    ranges = _halves(path)
    if ranges is None:
        return None
    pool = ThreadPoolExecutor(max_workers=2)
    first, second = (pool.submit(_read_half, pa.PythonFile(_ByteRange(path, *r), mode="r"))
                     for r in ranges)
    return Halves(pool, (first, second))


def _read_half(source) -> tuple[pa.Table, bool]:
    """One half parsed (:func:`_read_json`), and whether :func:`_refused` refuses it.

    The checks run here, on the half's parsing thread, while the other half is parsed: what
    is left after the parse is to join the halves.
    """
    table = _read_json(source)
    return table, _refused(table)


def _parse_jsonl(path: Path, meanwhile: Callable[[Callable[[], bool]], None] | None = None
                 ) -> Columns | None:
    """The JSONL file's columns as one parse of the whole file gives them, or ``None``.

    ``None`` when the columnar pass does not take them (:func:`_columns`).

    A large file is parsed as two halves on two threads (pyarrow releases the GIL) and the
    tables concatenated; this thread meanwhile runs ``meanwhile(done)``, which should return
    once ``done()`` is true. Each half infers its own column types, so when the halves'
    schemas differ (labels as numbers in one half, a column missing in the other) or a half
    fails, the whole file is parsed again on one thread: the result (or the error) is always
    that of the whole-file parse. Each half is checked on its own thread (:func:`_read_half`;
    every check is of single rows, so the halves pass exactly when the whole file does).
    """
    halves = start_halves(path)
    if halves is not None:
        try:
            if meanwhile is not None:
                meanwhile(lambda: all(half.done() for half in halves.parses))
            try:
                (first, refused), (second, also) = (half.result() for half in halves.parses)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
                first = second = None
        finally:
            halves.pool.shutdown(wait=True)
        if first is not None:
            release_free_memory()  # each parsing thread freed its blocks in its own arena
            if first.schema == second.schema:
                return None if refused or also else _joined(pa.concat_tables([first, second]))
    return _columns(_read_json(_checked(path)))


def sampled_suites(path: str | Path, names: Iterable[str]) -> list[str]:
    """The suites of ``names`` whose row ids occur in evenly spaced windows of a JSONL file.

    A cheap look (:data:`SAMPLE_WINDOWS` reads of :data:`SAMPLE_BYTES`) at which suites a
    large file covers before it is parsed, so that only those are loaded meanwhile
    (:meth:`consistency_bench.bench.scoring.engine.SuiteFolder.preload`). A hint, not a check: a
    suite
    smaller than
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


def fast_columns(payload: bytes | Path, fmt: str,
                 meanwhile: Callable[[Callable[[], bool]], None] | None = None) -> Columns | None:
    """Columns from pyarrow, or ``None`` when the file needs the line-by-line pass.

    ``payload`` is the file's content, or for JSONL its path: pyarrow then reads the file in
    blocks (a large file as two halves at once, while this thread runs ``meanwhile``:
    :func:`_parse_jsonl`), and the whole content is never held in memory next to the parsed
    columns. The parsed JSON goes to the system allocator, which gives the parser's scratch
    memory back (the default mimalloc pool keeps ~100 MiB more at the peak on a 135 MB file).
    """
    try:
        if fmt == "jsonl":
            if isinstance(payload, Path):
                return _parse_jsonl(payload, meanwhile)
            _check_payload(payload)
            table = _read_json(pa.BufferReader(payload))
        elif fmt == "parquet":
            table = pq.read_table(pa.BufferReader(payload))
        else:
            return None
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
        return None
    return _columns(table)


def _columns(table: pa.Table) -> Columns | None:
    """The checked columns of a parsed table; ``None`` when :func:`_refused` refuses it."""
    return None if _refused(table) else _joined(table)


def _joined(table: pa.Table) -> Columns:
    """The ``id``, ``label`` and ``probs`` columns of a table :func:`_refused` took."""
    probs = table.column("probs").combine_chunks() if "probs" in table.column_names else None
    return Columns(table.column("id").combine_chunks(), table.column("label").combine_chunks(),
                   probs, None)


def _refused(table: pa.Table) -> bool:
    """Whether the columnar pass leaves the table to the line-by-line pass.

    It does for invalid UTF-8, a missing ``id`` or ``label``, an id that is not a non-empty
    string, a null or non-integer, non-string label, and ``probs`` that are not lists of
    finite, non-negative numbers, each list non-empty and summing to 1 (within
    :data:`PROB_TOLERANCE`). Every check is of single rows, made chunk by chunk: a table
    passes exactly when each part of it does (the halves of :func:`_read_half`).
    """
    names = table.column_names
    try:
        for name in ("id", "label"):  # e.g. invalid UTF-8 in strings
            if name in names:
                table.column(name).validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return True
    if "id" not in names or "label" not in names:
        return True
    ids, labels = table.column("id"), table.column("label")
    if ids.type != pa.string() or ids.null_count or any(
            (np.diff(offsets(chunk)) == 0).any() for chunk in ids.chunks):
        return True
    if labels.null_count or not (pa.types.is_integer(labels.type) or labels.type == pa.string()):
        return True
    if "probs" not in names:
        return False
    probs = table.column("probs")
    if not (pa.types.is_list(probs.type) or pa.types.is_large_list(probs.type)):
        return True
    if not (
        pa.types.is_floating(probs.type.value_type)
        or pa.types.is_integer(probs.type.value_type)
    ):
        return True
    return not all(_probs_valid(chunk) for chunk in probs.chunks)


def _probs_valid(probs: pa.Array) -> bool:
    """Whether every row of ``probs`` is null or a non-empty distribution.

    Finite, non-negative values that sum to 1 within :data:`PROB_TOLERANCE`.
    """
    values = float64(probs.flatten())
    if values is None or not np.isfinite(values).all() or (values < 0).any():
        return False
    present = valid(probs)
    filled = np.where(present, np.diff(offsets(probs)), 0)
    if (filled[present] == 0).any():
        return False
    starts = np.concatenate([[0], np.cumsum(filled)])[:-1]
    sums = np.add.reduceat(values, starts[present]) if len(values) else np.zeros(0)
    return not (np.abs(sums - 1.0) > PROB_TOLERANCE).any()
