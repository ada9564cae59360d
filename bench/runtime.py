"""Process tuning, in one place: OpenBLAS threads, glibc's malloc arenas, pyarrow's allocator.

Each setting is measured in docs/benchmarks.md. :func:`one_blas_thread` is applied by
``consistency_bench.cli`` before a command imports numpy; :func:`system_allocator` by the ``score``
command; :func:`release_free_memory` by the two-thread JSONL parse in
:mod:`consistency_bench.bench.predictions.fast`. This module imports only the standard library at
load time
(``ctypes`` and ``pyarrow`` on first use), so the CLI's start stays light.
"""

from __future__ import annotations

import os
from functools import cache

#: Commands that never call BLAS through numpy: they run with one OpenBLAS thread
#: (:func:`one_blas_thread`). numpy's OpenBLAS starts a thread per core when numpy is imported,
#: and each spins for ~0.1 s of CPU before it sleeps; on two cores that time comes out of a
#: JSONL parse running on both (docs/benchmarks.md). The commands that run models (``predict``,
#: ``train``, ``baseline``, ``generate``) keep the library's default.
ONE_BLAS_THREAD: frozenset[str] = frozenset({
    "build", "score", "submit", "rescore", "leaderboard", "convert-becel", "convert-lm-eval",
    "merge-predictions", "verify", "review",
})


def one_blas_thread(command: str) -> None:
    """Ask for one OpenBLAS thread for ``command`` (in :data:`ONE_BLAS_THREAD`).

    Takes effect when numpy has not been imported yet (the command modules import it lazily),
    and leaves a value the user set alone.
    """
    if command in ONE_BLAS_THREAD:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def release_free_memory() -> None:
    """Give the C allocator's free memory back to the system (glibc ``malloc_trim``).

    glibc gives every thread its own arena and keeps what a thread frees there: after a
    parse on two threads, ~130 MiB of freed JSON blocks stayed in the process until it
    ended (peak of scoring every suite: 570-590 MiB, 428-436 MiB with this call). A no-op
    where the C library has no ``malloc_trim``.
    """
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is not None:
        trim(0)


#: glibc's ``mallopt`` parameter for the most arenas (``malloc.h``).
M_ARENA_MAX = -8


def one_malloc_arena() -> bool:
    """Have every thread created from now on allocate from glibc's main arena.

    glibc gives each new thread an arena of its own, which keeps the blocks that thread
    freed: the two threads that parse the halves of a large JSONL file left ~100 MiB of freed
    blocks in their arenas at the end of the parse, on top of the parsed table and the suites
    loaded meanwhile (the peak of scoring every suite). With one arena the blocks freed by
    one parser are reused by the other and by the main thread. For the ``score`` command's
    process (docs/benchmarks.md); a no-op (``False``) where the C library has no ``mallopt``.
    """
    mallopt = getattr(_libc(), "mallopt", None)
    return bool(mallopt is not None and mallopt(M_ARENA_MAX, 1))


@cache
def _libc():
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def system_allocator() -> None:
    """Have pyarrow allocate with malloc, from one arena, for the rest of this process.

    Scoring reads many short-lived Parquet pages and JSON blocks; pyarrow's default pool
    (mimalloc) keeps the freed pages, which put the peak of scoring every suite at ~550 MiB
    against ~445 MiB with malloc, for the same CPU time; and glibc's per-thread arenas kept
    what the parsing threads freed (:func:`one_malloc_arena`;
    docs/benchmarks.md).
    """
    import pyarrow as pa  # local: keeps ``import consistency_bench.cli`` light

    pa.set_memory_pool(pa.system_memory_pool())
    one_malloc_arena()
