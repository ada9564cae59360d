"""Where the build's caches live, and whether they are used.

``$CONSISTENCY_BENCH_BUILD_CACHE`` names the folder; ``off`` (or ``0``, ``no``, ``false``, or an
empty value) turns every build cache off. Unset, the folder is
``$XDG_CACHE_HOME/consistency-bench/build``, or ``~/.cache/consistency-bench/build`` without
``XDG_CACHE_HOME`` (the XDG base directory rule). Never a folder inside the installed package:
a wheel installed system-wide may not be writable, and a cache there would outlive nothing.
"""

from __future__ import annotations

from pathlib import Path

from consistency_bench.bench.io.user_cache import user_cache_folder

#: The environment variable that moves the build caches or turns them off.
ENV_BUILD_CACHE = "CONSISTENCY_BENCH_BUILD_CACHE"


def cache_root() -> Path | None:
    """The folder of the build caches, or ``None`` when they are turned off."""
    return user_cache_folder(ENV_BUILD_CACHE, "build")


def cache_dir(kind: str) -> Path | None:
    """The folder of one cache (``pbsmt``, ``numba``), or ``None`` when caches are off."""
    root = cache_root()
    return None if root is None else root / kind
