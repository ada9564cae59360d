"""The manifest (``suites.json``) of a built suite folder; no heavy imports."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from consistency_bench.bench.errors import DataError, shorten
from consistency_bench.bench.io.json_input import load_json_file

MANIFEST = "suites.json"
SPLIT = "test"


def parquet_path(root: Path, suite: str) -> Path:
    """Where a suite's Parquet file lives inside a built folder."""
    return Path(root) / suite / f"{SPLIT}.parquet"


#: Fields of a ``suites.json`` entry (builders/export.py, builders/generate/writer.py) that
#: the scorer, ``predict`` or ``publish`` read, with a check and what each must be.
_HEX64 = re.compile(r"[0-9a-f]{64}")
REQUIRED_FIELDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "family": (lambda v: isinstance(v, str) and bool(v), "a non-empty string"),
    "task": (lambda v: isinstance(v, str) and bool(v), "a non-empty string"),
    "kind": (lambda v: isinstance(v, str) and bool(v), "a non-empty string"),
    "version": (lambda v: isinstance(v, str), "a version string"),
    "label_names": (lambda v: isinstance(v, list) and bool(v)
                    and all(isinstance(n, str) and n for n in v), "a non-empty list of names"),
    "main_metric": (lambda v: isinstance(v, str) and bool(v), "a metric name"),
    "higher_is_better": (lambda v: isinstance(v, bool), "true or false"),
    "rows": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
             "a row count"),
    "sha256": (lambda v: isinstance(v, str) and bool(_HEX64.fullmatch(v)),
               "64 hex digits"),
    "path": (lambda v: isinstance(v, str) and bool(v) and not v.startswith(("/", "\\"))
             and ".." not in v.replace("\\", "/").split("/"),
             "a path inside the folder"),
}


def read_manifest(root: str | Path,
                  required: tuple[str, ...] = ("sha256", "path")) -> dict[str, dict]:
    """The ``suites.json`` entries of a built folder, by suite name.

    Every field of :data:`REQUIRED_FIELDS` an entry has is checked; those in ``required``
    must be there (``sha256`` and ``path`` by default: every reader hash-checks the files;
    :class:`consistency_bench.bench.scoring.engine.SuiteFolder` asks for all).

    Raises:
        DataError: No ``suites.json``, or one that is not an object with a ``suites`` object
            of entries as above (the message names the suite, the field and the value).

    """
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise DataError(
            f"{path} not found: {root} is not a built suite folder; run "
            "`consistency-bench build --out DIR` first"
        )
    manifest = load_json_file(path)  # JsonFileError (a DataError) names the file
    suites = manifest.get("suites") if isinstance(manifest, dict) else None
    if not isinstance(suites, dict):
        raise DataError(f"{path}: not a valid suite manifest (expected an object with a "
                        f"'suites' object, got {type(manifest).__name__}"
                        f"{'' if not isinstance(manifest, dict) else ' without suites'})")
    for name, entry in suites.items():
        if not isinstance(entry, dict):
            raise DataError(f"{path}: suite {shorten(name)} is not an object")
        for field, (check, expected) in REQUIRED_FIELDS.items():
            if field not in entry:
                if field not in required:
                    continue
                raise DataError(f"{path}: suite {shorten(name)} has no {field}; rebuild the "
                                "folder with `consistency-bench build`")
            if not check(entry[field]):
                raise DataError(f"{path}: suite {shorten(name)} field {field!r} value "
                                f"{shorten(entry[field])}: expected {expected}")
    return suites
