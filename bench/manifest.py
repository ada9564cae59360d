"""The manifest (``suites.json``) of a built suite folder; no heavy imports."""

from __future__ import annotations

import json
from pathlib import Path

from bench.errors import DataError

MANIFEST = "suites.json"
SPLIT = "test"


def parquet_path(root: Path, suite: str) -> Path:
    """Where a suite's Parquet file lives inside a built folder."""
    return Path(root) / suite / f"{SPLIT}.parquet"


def read_manifest(root: str | Path) -> dict[str, dict]:
    """The ``suites.json`` entries of a built folder, by suite name."""
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise DataError(
            f"{path} not found: {root} is not a built suite folder; run "
            "`consistency-bench build --out DIR` first"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))["suites"]
    except (json.JSONDecodeError, KeyError) as exc:
        raise DataError(f"{path}: not a valid suite manifest ({exc})") from None
