"""The sha256 of a file's bytes: the one implementation every layer uses (issue 29)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

#: Bytes read at a time: a prediction file or a Parquet suite is never held whole.
BLOCK = 1 << 20


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks (``hashlib.file_digest`` needs 3.11)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def add_files(digest, files: Iterable[tuple[str, Path]]) -> None:
    """Feed ``digest`` each ``(name, path)``: ``name``, NUL, the size, NUL, then the bytes.

    The code hashes of the caches (``leaderboard/cache/keys.py``, the score cache in
    ``bench/scorers/contract.py``) are made this way, so a renamed or moved file changes them.
    """
    for name, path in files:
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
