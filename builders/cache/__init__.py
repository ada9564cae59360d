"""The build's caches in the user's cache folder: derived data a build can make again.

:mod:`~consistency_bench.builders.cache.folder` says where the caches live
(``$XDG_CACHE_HOME/consistency-bench``
by default, never inside the installed package) and whether they are on;
:mod:`~consistency_bench.builders.cache.entries` reads and writes one entry (compressed JSON,
written atomically,
a damaged or missing entry is a miss); :mod:`~consistency_bench.builders.cache.compiled` points
numba's cache of
compiled functions there. Every cache is safe to delete: a build without it makes the same
suites, byte for byte (``tests/test_build_cache.py``), only slower.
"""
