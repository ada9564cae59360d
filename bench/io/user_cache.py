"""Where a cache of this tool lives in the user's cache folder, and whether it is used.

Each cache has an environment variable: set to a folder, it moves the cache there; set to
``off`` (or ``0``, ``no``, ``false``, or an empty value), it turns the cache off. Unset, the
cache is ``$XDG_CACHE_HOME/consistency-bench/<kind>``, or ``~/.cache/consistency-bench/<kind>``
without an absolute ``XDG_CACHE_HOME`` (the XDG base directory rule). Never a folder inside
the installed package: a wheel installed system-wide may not be writable.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

#: Values of a cache's environment variable that turn the cache off.
OFF = frozenset({"", "0", "off", "no", "false"})


def user_cache_folder(env: str, kind: str) -> Path | None:
    """The folder of the cache ``kind`` (``$env`` when set), or ``None`` when turned off."""
    value = os.environ.get(env)
    if value is not None:
        return None if value.strip().lower() in OFF else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "consistency-bench" / kind


def store_entry(path: Path, write: Callable[[BinaryIO], None]) -> bool:
    """Write a cache entry atomically with ``write(file)``; whether it was stored.

    The bytes go to a temporary file beside ``path`` (``.<name>.<random>.tmp``), renamed into
    place: a reader sees the old entry or the new one, never half of one. A folder that cannot
    be written (read-only, full disk) only means there is no entry: ``False``, nothing left.
    """
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            write(out)
        os.replace(tmp, path)
        tmp = None
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
