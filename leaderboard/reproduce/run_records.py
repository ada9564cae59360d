"""An entry's ``run.json`` and ``reproduction.json``: reading them; the record ``submit`` stores.

``submit`` looks for the run record beside the prediction file (``<PRED>.run.json``, or for
``X.jsonl.gz`` also ``X.jsonl.run.json``) unless one is named, checks it and that it
describes exactly this file (its ``predictions.sha256`` is the sha256 of the JSONL stored),
and stores it as ``run.json``. A file that has no record is stored without one: the entry
then shows as not reproducible.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.runrecord.schema import (
    ENTRY_FILE,
    read_record,
    record_path,
    record_text,
)

#: The run record inside an entry.
RUN = ENTRY_FILE
#: What ``reproduce`` found, inside an entry.
REPRODUCTION = "reproduction.json"
#: Largest ``reproduction.json`` read (it holds a few figures per suite).
MAX_REPRODUCTION_BYTES = 1 << 20
#: Values of ``reproduction.json``'s ``status``.
STATUSES = ("passed", "failed", "not-reproducible")


def find_record(predictions: str | os.PathLike) -> Path | None:
    """The run record beside a prediction file, or None."""
    text = os.fspath(predictions)
    candidates = [record_path(text)]
    if text.endswith(".gz"):
        candidates.append(record_path(text[:-3]))
    return next((p for p in candidates if p.is_file() and not p.is_symlink()), None)


def entry_record(predictions: str | os.PathLike, jsonl: bytes,
                 run_record: str | os.PathLike | None = None) -> bytes | None:
    """The ``run.json`` an entry made from ``predictions`` stores, or None without a record.

    Args:
        predictions: The prediction file submitted.
        jsonl: Its JSONL bytes (what the entry stores).
        run_record: The record to store (default: the one beside the file, if any).

    Raises:
        ConfigError: The record is not valid, or describes another file than ``predictions``.

    """
    path = Path(run_record) if run_record is not None else find_record(predictions)
    if path is None:
        return None
    record = read_record(path)
    digest = hashlib.sha256(jsonl).hexdigest()
    if record["predictions"]["sha256"] != digest:
        raise ConfigError(
            f"{path}: the run record describes another prediction file (sha256 "
            f"{record['predictions']['sha256'][:12]}..., {predictions} is {digest[:12]}...): "
            "the file was changed after `predict` wrote it, or the record belongs to another "
            "run; submit the file predict wrote, or move the record away to submit without it")
    return record_text(record).encode("utf-8")


def read_run(entry: str | os.PathLike) -> dict | None:
    """The entry's run record, or None when it has none.

    Raises:
        ConfigError: ``run.json`` is a link, not a regular file, or not a valid record.

    """
    path = Path(entry) / RUN
    if path.is_symlink():
        raise ConfigError(f"{path}: is a symbolic link; an entry's files must be its own")
    if not os.path.lexists(path):
        return None
    return read_record(path)


def reproduction_text(report: Mapping) -> str:
    """A ``reproduction.json``'s text (``reproduce``, and ``submit`` for ``review --merge``)."""
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def entry_reproduction(report: Mapping, results: Mapping, slug: str) -> bytes:
    """The ``reproduction.json`` an entry stores with ``results``, as bytes.

    Raises:
        ConfigError: The report judged another prediction file than the entry's.

    """
    checked = report.get("predictions_sha256")
    stored = (results.get("predictions") or {}).get("sha256")
    if checked != stored:
        raise ConfigError(f"{slug}: the reproduction checked another prediction file (sha256 "
                          f"{str(checked)[:12]}..., the entry's is {str(stored)[:12]}...); "
                          "nothing was stored")
    return reproduction_text({**report, "entry": slug}).encode("utf-8")


def read_reproduction(entry: str | os.PathLike) -> dict | None:
    """The entry's ``reproduction.json``, or None when it has none.

    Raises:
        ConfigError: A link, not JSON, or without a known ``status`` (names the file).

    """
    from consistency_bench.bench.io.json_input import JsonFileError, load_json_file

    path = Path(entry) / REPRODUCTION
    if path.is_symlink():
        raise ConfigError(f"{path}: is a symbolic link; an entry's files must be its own")
    if not os.path.lexists(path):
        return None
    try:
        data = load_json_file(path, max_bytes=MAX_REPRODUCTION_BYTES)
    except JsonFileError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict) or data.get("status") not in STATUSES:
        status = data.get("status") if isinstance(data, dict) else data
        raise ConfigError(f"{path}: field 'status' value {status!r}: expected one of "
                          f"{', '.join(STATUSES)}")
    return data
