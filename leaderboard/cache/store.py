"""Record files of the verified-cells cache: written atomically, authenticated, disposable.

One file per entry, ``<submissions>/.verified-cells/<slug>.cells``::

    MAGIC  key-id (16 hex digits) "\\n"  header length (8 bytes, little endian)
    header (JSON: the record's key, its data, and where each array lies in the payload)
    payload (the arrays' bytes)
    HMAC-SHA256 of everything above (32 bytes)

The HMAC key is a random 32-byte file outside the submissions folder
(``$CONSISTENCY_BENCH_CACHE_KEY``, default ``~/.cache/consistency-bench/verified-cells.key``,
mode 0600), made on first use. A record is trusted only when its HMAC checks, before anything
in it is parsed: a record edited by hand, or committed by someone else (made with another key),
is recomputed, never believed. So the cache is no way around the checks of
:mod:`consistency_bench.leaderboard.stored`: the comparison of ``results.json`` with the recomputed
results runs
on every render, and the recomputed results come from this machine's scorer.

The folder holds nothing but these records and a ``.gitignore`` of ``*``; it may be deleted at
any time (the next render recomputes). A folder or record that is a symbolic link is never read
or written through.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: The cache folder's name inside the submissions folder (a dot-folder: never an entry).
FOLDER = ".verified-cells"
SUFFIX = ".cells"
MAGIC = b"consistency-bench verified cells 1\n"
#: Where the HMAC key lives (a file path); default under the user's cache folder.
KEY_ENV = "CONSISTENCY_BENCH_CACHE_KEY"
#: Largest record read (a record of every suite is about 0.5 MB).
MAX_RECORD = 256 << 20
#: The only array types a record holds.
DTYPES = ("<f8", "|b1")
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class CacheUnavailable(OSError):
    """The cache cannot be used here (no key file, a link, an unwritable folder)."""


def default_key_path() -> Path:
    """``$CONSISTENCY_BENCH_CACHE_KEY``, or ``~/.cache/consistency-bench/verified-cells.key``."""
    env = os.environ.get(KEY_ENV)
    return Path(env) if env else Path.home() / ".cache" / "consistency-bench" / \
        "verified-cells.key"


def load_key(path: Path | None = None) -> bytes:
    """The HMAC key: read, or made (32 random bytes, mode 0600) when there is none.

    Raises:
        CacheUnavailable: The key cannot be read or made.

    """
    path = path or default_key_path()
    try:
        if not os.path.lexists(path):
            _make_key(path)
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            raise CacheUnavailable(f"{path}: the cache key is not a regular file")
        key = path.read_bytes()
    except OSError as exc:
        if isinstance(exc, CacheUnavailable):
            raise
        raise CacheUnavailable(f"{path}: cannot read or make the cache key "
                               f"({exc.strerror or exc})") from None
    if len(key) < 32:
        raise CacheUnavailable(f"{path}: the cache key is shorter than 32 bytes; delete it")
    return key


def _make_key(path: Path) -> None:
    """Write a new key whole, then link it into place: never a half-written key file."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(32))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it: use theirs
            os.link(tmp, path)
    finally:
        os.unlink(tmp)


@dataclass(frozen=True)
class Record:
    """One entry's cached verification.

    Attributes:
        key: What it was computed from (:mod:`consistency_bench.leaderboard.cache.keys`).
        data: JSON data (recomputed results, the samples' descriptions).
        arrays: Named arrays (the samples' scores, 0/1 unit outcomes).

    """

    key: Mapping
    data: Mapping
    arrays: Mapping[str, np.ndarray]


def encode(record: Record, secret: bytes) -> bytes:
    """The bytes of a record file."""
    layout, blobs, offset = [], [], 0
    for name, array in record.arrays.items():
        array = np.ascontiguousarray(array)
        if array.dtype.str not in DTYPES:
            raise ValueError(f"array {name!r}: dtype {array.dtype.str} is not one of {DTYPES}")
        data = array.tobytes()
        layout.append([name, array.dtype.str, list(array.shape), offset, len(data)])
        blobs.append(data)
        offset += len(data)
    header = json.dumps({"key": record.key, "data": record.data, "arrays": layout},
                        sort_keys=True, separators=(",", ":"), allow_nan=True).encode()
    body = (MAGIC + key_id(secret).encode() + b"\n" + len(header).to_bytes(8, "little")
            + header + b"".join(blobs))
    return body + hmac.new(secret, body, hashlib.sha256).digest()


def key_id(secret: bytes) -> str:
    """A short public name of the key (which key wrote a record)."""
    return hashlib.sha256(b"key-id:" + secret).hexdigest()[:16]


class Tampered(ValueError):
    """A record made with this machine's key whose bytes no longer match their HMAC."""


def decode(blob: bytes, secret: bytes) -> Record | None:
    """The record in ``blob``; ``None`` when it was made with another key or is not a record.

    Raises:
        Tampered: Made with this key, but changed since (the HMAC does not match).

    """
    head = len(MAGIC) + 17
    if len(blob) < head + 8 + 32 or not blob.startswith(MAGIC):
        return None
    if blob[len(MAGIC):head - 1].decode("ascii", "replace") != key_id(secret):
        return None
    body, mac = blob[:-32], blob[-32:]
    if not hmac.compare_digest(mac, hmac.new(secret, body, hashlib.sha256).digest()):
        raise Tampered("its HMAC does not match its content")
    size = int.from_bytes(body[head:head + 8], "little")
    header = json.loads(body[head + 8:head + 8 + size])  # authenticated: written by us
    payload = memoryview(body)[head + 8 + size:]
    arrays = {}
    for name, dtype, shape, offset, nbytes in header["arrays"]:
        arrays[name] = np.frombuffer(payload[offset:offset + nbytes],
                                     dtype=np.dtype(dtype)).reshape(shape)
    return Record(header["key"], header["data"], arrays)


class CellStore:
    """The records of one submissions folder.

    Args:
        root: The submissions folder.
        secret: The HMAC key (:func:`load_key`).
        warn: Receives one line per record that was changed by hand (recomputed).
        folder: The cache folder's name in ``root`` (a dot-folder; default :data:`FOLDER`;
            the details cache of ``leaderboard.details.reuse`` keeps its records in another).

    """

    def __init__(self, root: str | os.PathLike, secret: bytes,
                 warn: Callable[[str], None] = lambda line: None, folder: str = FOLDER):
        self.folder = Path(root) / folder
        self.secret = secret
        self.warn = warn
        if self.folder.is_symlink():
            raise CacheUnavailable(f"{self.folder}: is a symbolic link; the cache is not used")

    def can_hold(self, slug: str) -> bool:
        """``slug`` names a record (a submissions folder's entry name)."""
        return bool(_SLUG.fullmatch(slug))

    def path(self, slug: str) -> Path:
        """The record file of an entry."""
        if not _SLUG.fullmatch(slug):
            raise ValueError(f"not an entry name: {slug!r}")
        return self.folder / f"{slug}{SUFFIX}"

    def read(self, slug: str) -> Record | None:
        """The entry's record, or ``None`` (none, another key's, a link, unreadable, edited)."""
        path = self.path(slug)
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_RECORD:
                return None
            blob = path.read_bytes()
        except OSError:
            return None
        try:
            return decode(blob, self.secret)
        except Tampered as exc:
            self.warn(f"{path}: {exc} (changed after it was written); entry recomputed")
        except (ValueError, KeyError, TypeError, IndexError):
            self.warn(f"{path}: not a readable record; entry recomputed")
        return None

    def write(self, slug: str, record: Record) -> None:
        """Write the entry's record atomically (a temporary file, then one rename).

        Raises:
            CacheUnavailable: The folder or the record cannot be written.

        """
        from consistency_bench.bench.io.write import atomic_path

        path = self.path(slug)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if self.folder.is_symlink() or path.is_symlink():
                raise CacheUnavailable(f"{path}: is (in) a symbolic link; not written")
            ignore = self.folder / ".gitignore"
            if not os.path.lexists(ignore):
                with atomic_path(ignore) as tmp:
                    tmp.write_text("# a cache of `consistency-bench` (verified cells, entry "
                                   "details): never committed\n*\n",
                                   encoding="utf-8")
            with atomic_path(path) as tmp:
                tmp.write_bytes(encode(record, self.secret))
        except CacheUnavailable:
            raise
        except Exception as exc:  # an OSError, or refuse_special's ConfigError
            raise CacheUnavailable(f"{path}: cannot write the cache record ({exc})") from None

    def prune(self, keep: set[str]) -> None:
        """Remove the records of entries not in ``keep`` (only files named like a record)."""
        if self.folder.is_symlink() or not self.folder.is_dir():
            return
        for path in self.folder.iterdir():
            slug = path.name[:-len(SUFFIX)] if path.name.endswith(SUFFIX) else None
            if slug is None or not _SLUG.fullmatch(slug) or slug in keep:
                continue
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    path.unlink()
            except OSError:
                pass  # a record that cannot be removed is harmless: it is keyed
