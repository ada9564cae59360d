"""The prediction file on disk: checked to be a regular file, its format, its bytes and hash."""

from __future__ import annotations

import gzip
import io
import stat
import zlib
from pathlib import Path

from consistency_bench.bench.errors import PredictionFileError

#: Most bytes a ``.gz`` prediction file may decompress to (1 GiB: about 8 times the
#: 135 MB file of every suite). A gzip bomb (10 MB of zeros compress to 10 KB) is refused
#: at that size instead of filling the memory; ``review`` reads such files from anyone.
MAX_DECOMPRESSED_BYTES = 1 << 30
FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}


def check_input_file(path: str | Path) -> Path:
    """``path`` as a :class:`Path` when it is a regular file (or a link to one).

    Raises:
        PredictionFileError: ``-`` (standard input is not read: a prediction file is read
            twice, hashed and parsed), a folder, a FIFO, socket or device, or nothing at all;
            the message says which.

    """
    if str(path) == "-":
        raise PredictionFileError(
            "-", "reading predictions from standard input is not supported; save them to a "
            "file and pass its path (a file named '-': pass ./-)")
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise PredictionFileError(str(path), "file not found") from None
    except NotADirectoryError:
        raise PredictionFileError(str(path), "file not found (a parent is a file)") from None
    if stat.S_ISREG(mode):
        return path
    what = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise PredictionFileError(str(path), f"is {what}, not a prediction file; pass a "
                              ".jsonl, .csv or .parquet file")


def detect_format(path: Path) -> str:
    """File format from the extension (``.jsonl``/``.json``, ``.csv``, ``.parquet``)."""
    suffixes = [s.lower() for s in path.suffixes]
    for suffix in reversed(suffixes):
        if suffix in FORMATS:
            return FORMATS[suffix]
    raise PredictionFileError(
        str(path),
        f"unknown file type {''.join(suffixes) or '(none)'}: use .jsonl, .csv or .parquet",
    )


def read_payload(path: Path) -> bytes:
    """The file's bytes, decompressed when it ends in ``.gz``.

    Raises:
        PredictionFileError: A corrupt or truncated gzip file, or one that decompresses to
            more than :data:`MAX_DECOMPRESSED_BYTES`.

    """
    payload = path.read_bytes()
    if path.suffix.lower() == ".gz":
        cap = MAX_DECOMPRESSED_BYTES
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(payload), mode="rb") as handle:
                payload = handle.read(cap + 1)  # never more than the cap in memory
        except (OSError, EOFError, zlib.error) as exc:
            raise PredictionFileError(str(path), f"not a valid gzip file ({exc})") from None
        if len(payload) > cap:
            raise PredictionFileError(
                str(path), f"decompresses to more than {cap:,} bytes (a gzip bomb?); "
                "prediction files are read up to that size")
    return payload


