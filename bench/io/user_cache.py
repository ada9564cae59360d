"""Where a cache of this tool lives in the user's cache folder, and whether it is used.

Each cache has an environment variable: set to a folder, it moves the cache there; set to
``off`` (or ``0``, ``no``, ``false``, or an empty value), it turns the cache off. Unset, the
cache is ``$XDG_CACHE_HOME/consistency-bench/<kind>``, or ``~/.cache/consistency-bench/<kind>``
without an absolute ``XDG_CACHE_HOME`` (the XDG base directory rule). Never a folder inside
the installed package: a wheel installed system-wide may not be writable.
"""

from __future__ import annotations

import os
from pathlib import Path

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

