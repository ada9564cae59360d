"""One file written atomically: a temporary file beside the target, then one rename.

Part of :mod:`bench.atomic`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from consistency_bench.bench.errors import ConfigError
from consistency_bench.bench.io.output_checks import refuse_special


def _file_mode() -> int:
    """0666 less the process umask (what ``open`` would have created)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """0777 less the process umask (what ``mkdir`` would have created, usually 0755)."""
    return 0o777 & ~_umask()


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it over ``target`` on success.

    On an exception the temporary file is removed and ``target`` is left untouched.
    """
    target = Path(target)
    refuse_special(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise _cannot_write(exc, target) from None
    os.close(handle)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, _file_mode())  # mkstemp makes 0600; give the usual umask-based mode
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except OSError as exc:
        if exc.filename not in (None, str(tmp_path)):
            raise  # not a write of this file (e.g. an input that could not be read)
        raise _cannot_write(exc, target) from None
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def _cannot_write(exc: OSError, target: Path) -> OSError:
    """The same error, naming the file the user asked for instead of a temporary one."""
    return OSError(exc.errno, f"cannot write it ({exc.strerror or exc}); nothing was written",
                   str(target))


def store_entry(target: Path, write: Callable[[BinaryIO], None]) -> bool:
    """Write a cache entry atomically (:func:`atomic_path`) with ``write(file)``; whether it was.

    For caches, where no entry is never an error: a folder that cannot be written (read-only,
    full disk) or a target that is not a regular file (a link, a FIFO: :func:`refuse_special`)
    gives ``False`` and leaves nothing behind.
    """
    try:
        with atomic_path(target) as tmp, open(tmp, "wb") as out:
            write(out)
    except (OSError, ConfigError):
        return False
    return True


def write_text(target: str | os.PathLike, text: str) -> None:
    """Atomically write ``text`` (UTF-8) to ``target``."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
