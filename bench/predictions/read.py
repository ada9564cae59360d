"""Read and validate one prediction file against built suites: the two passes, one result."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench.errors import DataError, PredictionFileError
from bench.json_input import DeepJsonError
from bench.predictions.fast import Halves, fast_columns, start_halves
from bench.predictions.files import check_input_file, detect_format, file_sha256, read_payload
from bench.predictions.records import line_columns
from bench.predictions.resolve import resolve_columns, resolve_fast
from bench.predictions.types import Columns, Predictions


@dataclass(frozen=True)
class Reading:
    """A plain JSONL prediction file being hashed and parsed on threads (:func:`start_reading`).

    Attributes:
        path: The file.
        hashing: The sha256 of its bytes, on a thread of its own.
        halves: Its two halves' parse (:func:`bench.predictions.fast.start_halves`), or
            ``None`` for a file parsed whole.

    """

    path: Path
    hashing: Future
    halves: Halves | None


def start_reading(path: str | Path) -> Reading | None:
    """Start hashing and parsing a plain JSONL file on threads, before it is needed.

    The ``score`` command calls this before it imports the scorers, so that those imports
    run while the file is parsed; :func:`read_predictions` takes the result as ``started``.
    Silent: for anything but a regular, non-empty ``.jsonl``/``.json`` file (not ``.gz``) it
    starts nothing and returns ``None``, and :func:`read_predictions` then reports the
    problem, in its usual order.
    """
    try:
        path = check_input_file(path)
        if path.stat().st_size == 0 or detect_format(path) != "jsonl" or (
                path.suffix.lower() == ".gz"):
            return None
    except (PredictionFileError, OSError):
        return None
    hashing = ThreadPoolExecutor(max_workers=1)
    reading = Reading(path, hashing.submit(file_sha256, path), start_halves(path))
    hashing.shutdown(wait=False)  # the thread ends once the hash is done
    return reading


def read_predictions(path: str | Path, manifest: dict, suite_ids,
                     meanwhile: Callable[[Callable[[], bool]], None] | None = None,
                     started: Reading | None = None) -> Predictions:
    """Read and validate a prediction file against built suites.

    Args:
        path: The prediction file (.jsonl, .csv or .parquet).
        manifest: ``suites.json`` entries of the built folder (name -> entry).
        suite_ids: Callable ``name -> pa.Array`` of that suite's row ids.
        meanwhile: Work for this thread while a large JSONL file is parsed on two others,
            called with a function that tells when the parse is done (``score_file``:
            :meth:`bench.scoring.SuiteFolder.preload`). Not called for other files.
        started: The hash and parse of this file, started by :func:`start_reading`
            (ignored when it is of another path).

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
        if started is not None and started.path == path:  # hashed and parsed from the file
            digest, columns = _started_columns(started, meanwhile)
        elif fmt == "jsonl" and path.suffix.lower() != ".gz":  # hashed and parsed from the file
            with ThreadPoolExecutor(max_workers=1) as pool:  # both release the GIL: in parallel
                hashing = pool.submit(file_sha256, path)
                columns = fast_columns(path, fmt, meanwhile)
                digest = hashing.result()
        else:
            payload = read_payload(path)
            digest = hashlib.sha256(payload).hexdigest()
            columns = fast_columns(payload, fmt)
    except DeepJsonError:  # a line may be nested too deeply: the pass below names it
        columns = None
    if columns is not None:
        try:
            suites = resolve_fast(columns, manifest, suite_ids)
        except DataError:  # a suite file missing or changed: report it in the old order,
            suites = None  # after any problem of the prediction file (the pass below)
        if suites is not None:
            return Predictions(str(path), digest, len(columns.ids), suites)
        # a problem (or a layout the columnar pass does not take): read line by line, so the
        # message names the exact line
    payload = read_payload(path)
    digest = hashlib.sha256(payload).hexdigest()
    columns = line_columns(path, payload, fmt)
    suites = resolve_columns(str(path), columns, manifest, suite_ids)
    return Predictions(str(path), digest, len(columns.ids), suites)


def _started_columns(started: Reading, meanwhile) -> tuple[str, Columns | None]:
    """The file's sha256 and columns from the hash and parse :func:`start_reading` began."""
    try:
        columns = fast_columns(started.path, "jsonl", meanwhile, started.halves)
    finally:
        digest = started.hashing.result()  # the thread ends with the hash: never left running
    return digest, columns
