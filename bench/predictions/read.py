"""Read and validate one prediction file against built suites: the two passes, one result."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.errors import DataError, PredictionFileError
from bench.json_input import DeepJsonError
from bench.predictions.fast import fast_columns
from bench.predictions.files import check_input_file, detect_format, file_sha256, read_payload
from bench.predictions.records import line_columns
from bench.predictions.resolve import resolve_columns, resolve_fast
from bench.predictions.types import Predictions


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
