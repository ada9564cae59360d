"""A folder of Arrow tables, each stored under a key: read whole, written atomically.

An entry is a file ``<folder>/<key>.arrow``: the table in Arrow's IPC file format (no
compression, so reading it back decodes nothing), then a 12-byte trailer: :data:`MAGIC` and
the CRC-32 of the IPC bytes. The key is also in the table's schema metadata. Reading never
fails the caller: a missing, linked, truncated or damaged entry (wrong trailer, CRC, key or IPC
bytes) is a miss (``None``). Writing never fails the caller either: an entry is written to a
temporary file beside it and renamed into place (a reader sees the old entry or the new one,
never half of one), and a folder that cannot be written only means there is no entry the next
time. The CRC finds damage, not forgery: what is stored is only as trusted as the folder.
Reading an entry marks it used (its modification time); before its first write an
:class:`ArrowCache` deletes the least recently used of its own entries beyond
:data:`MAX_BYTES`.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import struct
import time
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from consistency_bench.bench.io.write import store_entry

SUFFIX = ".arrow"
MAGIC = b"CBARROW1"
_TRAILER = struct.Struct("<8sI")
_KEY = b"consistency_bench.cache_key"
#: The names of the entries :meth:`ArrowCache.prune` may delete (the keys the scorer makes).
_ENTRY = re.compile(r"[0-9a-f]{64}\.arrow")
#: The temporary files of :meth:`ArrowCache.put` (pruned when over an hour old).
_STALE = re.compile(r"\.[0-9a-f]{64}\.arrow\..+\.tmp")


#: What the entries of one folder may take together before the least recently used go
#: (:meth:`ArrowCache.prune`): the 51 suites of one built folder take ~100 MB together.
MAX_BYTES = 2 << 30


class ArrowCache:
    """Arrow tables stored under keys in ``folder`` (created on the first write).

    Args:
        folder: Where the entries live.
        max_bytes: The size the entries are pruned to (:meth:`prune`) before the first write
            of this object.

    """

    def __init__(self, folder: str | os.PathLike, max_bytes: int = MAX_BYTES):
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self._pruned = False

    def path(self, key: str) -> Path:
        """The file of the entry ``key`` (a hex digest or another file-name-safe string)."""
        if not key or not all(c.isalnum() or c in "-_." for c in key) or key.startswith("."):
            raise ValueError(f"not a cache key: {key!r}")
        return self.folder / f"{key}{SUFFIX}"

    def get(self, key: str) -> pa.Table | None:
        """The table stored under ``key``, or ``None`` (no entry, or not readable)."""
        try:
            handle = os.open(self.path(key), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                             | getattr(os, "O_NONBLOCK", 0))  # a FIFO: no wait for a writer
        except OSError:
            return None
        try:
            with os.fdopen(handle, "rb") as raw:
                if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
                    return None
                data = raw.read()
        except OSError:
            return None
        if len(data) <= _TRAILER.size:
            return None
        magic, crc = _TRAILER.unpack_from(data, len(data) - _TRAILER.size)
        body = memoryview(data)[: len(data) - _TRAILER.size]
        if magic != MAGIC or zlib.crc32(body) != crc:
            return None
        try:
            table = ipc.open_file(pa.BufferReader(pa.py_buffer(body))).read_all()
        except (pa.ArrowException, OSError, ValueError):
            return None
        metadata = table.schema.metadata or {}
        if metadata.get(_KEY) != key.encode():
            return None
        with contextlib.suppress(OSError):  # used now: the last to go when pruning
            os.utime(self.path(key), follow_symlinks=False)
        return table.replace_schema_metadata(None)

    def prune(self) -> int:
        """Delete the least recently used entries until the rest fit in ``max_bytes``.

        Only this cache's own files are considered (``<64 hex digits>.arrow``, regular files):
        anything else in the folder is left alone. Returns how many entries went.
        """
        try:
            listing = os.scandir(self.folder)
        except OSError:
            return 0
        entries = []
        with listing:
            for entry in listing:
                if _STALE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):  # a writer killed before its rename
                        if time.time() - entry.stat(follow_symlinks=False).st_mtime > 3600:
                            os.unlink(entry.path)
                    continue
                if _ENTRY.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        entries.append((info.st_mtime_ns, info.st_size, entry.path))
        total, removed = sum(size for _, size, _ in entries), 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size
                removed += 1
        return removed

    def put(self, key: str, table: pa.Table) -> bool:
        """Store ``table`` under ``key`` atomically; whether it was stored.

        An entry already there that is not a regular file (a link) is left alone; a table the
        IPC file format cannot hold (chunks with different dictionaries) is not stored.
        """
        path = self.path(key)
        try:
            if path.is_symlink():
                return False
        except OSError:  # a folder this process may not search
            return False
        if not self._pruned:
            self._pruned = True
            self.prune()
        sink = pa.BufferOutputStream()
        try:
            with ipc.new_file(sink, table.schema.with_metadata({_KEY: key.encode()})) as writer:
                writer.write_table(table)
        except pa.ArrowException:  # e.g. chunks with different dictionaries: not kept
            return False
        body = sink.getvalue()

        def write(out) -> None:
            out.write(body)
            out.write(_TRAILER.pack(MAGIC, zlib.crc32(body)))

        return store_entry(path, write)
