"""Each entry's details files kept between publishes: ``<submissions>/.entry-details/``.

An entry's details (``details/<kind>/<entry>.parquet``, :mod:`.publish`) are a function of its
stored predictions (their sha256), the suite files they are joined with (each one's sha256),
and the code (the harness version and the hash of the scoring layer,
:func:`consistency_bench.leaderboard.cache.keys.code_version`, which covers
``bench/inconsistent/details.py``). ``review --merge`` republishes after every merged pull
request; without this cache it made every entry's details again (about 1.5 s each over every
suite: 12 min at 500 entries). Now only an entry whose key changed is made again.

Per entry: ``<entry>.cells`` (a record of :class:`consistency_bench.leaderboard.cache.store
.CellStore`: authenticated with the same HMAC key as the verified cells, holding the key and
each kind file's sha256) and ``<entry>.<kind>.parquet``. A file is reused only when the record
checks, its key is the entry's, and the file's bytes have the sha256 the record gives; so a
hand-edited file or record is made again, never published. The folder may be deleted at any
time; a link is never read or written through.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.leaderboard.cache.store import (
    CacheUnavailable,
    CellStore,
    Record,
    load_key,
)

#: The cache folder's name in the submissions folder.
FOLDER = ".entry-details"
#: Version of what a record holds (bump on any change).
VERSION = 1


def details_key(predictions_sha256: str, suites: Mapping[str, str]) -> dict:
    """What an entry's details depend on: its predictions, its suites' files, the code."""
    from consistency_bench.bench import __version__
    from consistency_bench.leaderboard.cache.keys import code_version

    return {"version": VERSION, "harness_version": __version__, "code": code_version(),
            "predictions": predictions_sha256, "suites": dict(sorted(suites.items()))}


class DetailsCache:
    """The kept details files of one submissions folder.

    Args:
        root: The submissions folder.
        warn: Receives one line when the cache cannot be used, or a record was edited.

    Raises:
        CacheUnavailable: No key can be read or made, or the folder is a link.

    """

    def __init__(self, root: str | os.PathLike, warn: Callable[[str], None]):
        self.store = CellStore(root, load_key(), warn, folder=FOLDER)
        self.warn = warn

    def _file(self, entry: str, kind: str) -> Path:
        return self.store.path(entry).with_name(f"{entry}.{kind}.parquet")

    def get(self, entry: str, key: Mapping) -> dict[str, Path] | None:
        """The entry's kept files by kind when they are current and intact, else ``None``."""
        if not self.store.can_hold(entry):
            return None
        record = self.store.read(entry)
        if record is None or record.key != key:
            return None
        found = {}
        for kind, digest in record.data.get("files", {}).items():
            path = self._file(entry, kind)
            try:
                ok = stat.S_ISREG(os.lstat(path).st_mode) and file_sha256(path) == digest
            except (OSError, ValueError):
                ok = False
            if not ok:
                return None
            found[kind] = path
        return found

    def put(self, entry: str, key: Mapping, files: Mapping[str, Path]) -> None:
        """Keep ``files`` (kind -> a file just written) as the entry's details.

        The files are copied in first, the record written last: a record never names a file
        that is not whole. A failure is one warning; the publish goes on without the cache.
        """
        from consistency_bench.bench.io.write import atomic_path

        if not self.store.can_hold(entry):
            return
        try:
            digests = {}
            for kind, src in sorted(files.items()):
                target = self._file(entry, kind)
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.parent.is_symlink() or target.is_symlink():
                    raise CacheUnavailable(f"{target}: is (in) a symbolic link; not written")
                with atomic_path(target) as tmp:
                    shutil.copyfile(src, tmp)
                digests[kind] = hashlib.sha256(target.read_bytes()).hexdigest()
            self.store.write(entry, Record(dict(key), {"files": digests}, {}))
        except (CacheUnavailable, OSError, ValueError) as exc:
            self.warn(f"the details cache is not written ({exc})")


def open_cache(root: str | os.PathLike | None,
               warn: Callable[[str], None]) -> DetailsCache | None:
    """The details cache of ``root``, or ``None`` (no root, or it cannot be used: warned)."""
    if root is None:
        return None
    try:
        return DetailsCache(root, warn)
    except CacheUnavailable as exc:
        warn(f"the details cache is not used ({exc}); every entry's details are made again")
        return None
