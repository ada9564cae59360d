"""The sha256 of a file's bytes: the one implementation every layer uses (issue 29)."""

from __future__ import annotations

import hashlib
import os

#: Bytes read at a time: a prediction file or a Parquet suite is never held whole.
BLOCK = 1 << 20


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks (``hashlib.file_digest`` needs 3.11)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()
