"""One cache entry: a JSON value stored gzip-compressed under a key, written atomically.

An entry is a file ``<cache>/<kind>/<key>.json.gz``; the key is a hex digest of everything the
value depends on (:func:`key_of`). Reading never fails a build: a missing, unreadable,
damaged or linked entry is a miss (``None``). Writing never fails a build either: an entry is
written to a temporary file beside it and renamed into place (a reader sees the old entry or
the new one, never half of one), and a folder that cannot be written (read-only, full disk)
only means there is no entry the next time.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

from consistency_bench.bench.io.write import store_entry
from consistency_bench.builders.cache.folder import cache_dir

SUFFIX = ".json.gz"


def key_of(*parts: object) -> str:
    """A sha256 hex digest of ``parts`` (each written as JSON, in order)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(json.dumps(part, sort_keys=True).encode())
        digest.update(b"\x1f")
    return digest.hexdigest()


def entry_path(kind: str, key: str) -> Path | None:
    """The file of an entry, or ``None`` when the caches are off."""
    folder = cache_dir(kind)
    return None if folder is None else folder / f"{key}{SUFFIX}"


def load(kind: str, key: str) -> object | None:
    """The value stored under ``key``, or ``None`` (no entry, caches off, or not readable)."""
    path = entry_path(kind, key)
    if path is None:
        return None
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(handle, "rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
            return json.load(text)
    except (OSError, EOFError, ValueError):  # damaged: gzip, JSON or UTF-8 errors
        return None


def store(kind: str, key: str, value: object) -> bool:
    """Store ``value`` under ``key`` atomically; whether it was stored.

    ``False`` when the caches are off or the folder cannot be written; an entry already there
    that is not a regular file (a link) is left alone.
    """
    path = entry_path(kind, key)
    if path is None or path.is_symlink():
        return False

    def write(raw) -> None:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as packed:
            packed.write(json.dumps(value, separators=(",", ":")).encode())

    return store_entry(path, write)
