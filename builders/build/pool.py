"""Building suites in a pool of processes (:mod:`consistency_bench.builders.export`): tasks, workers, results.

The pool's tasks (a suite, or one part of a split suite, costliest first), the workers'
functions (only indices are pickled: :class:`_Job` is set before the pool forks), the results
in the order asked for, the workers' end with their parent, and the rare garbage collections
while suites are built.
"""  # noqa: E501

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from consistency_bench.bench.errors import BenchError, DataError
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.suite.spec import SuiteSpec, merge_parts
from consistency_bench.builders.suite.write import build_suite, manifest_entry, write_suite


class _Job:
    """What pool workers need; set before the pool forks, so nothing is pickled but indices."""

    specs: Sequence[SuiteSpec] = ()
    resolver: SourceResolver | None = None
    root: Path = Path()


def _sendable(exc: BenchError) -> BenchError:
    """``exc``, or a ``DataError`` with its message if it does not survive pickling."""
    try:  # an error whose constructor takes several arguments does not unpickle
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return DataError(str(exc))
    return exc


def _build_indexed(index: int) -> tuple[str, object]:
    """Build ``_Job.specs[index]``; ``("built", entry)``, or ``("error", exception)``."""
    try:
        return "built", manifest_entry(build_suite(_Job.specs[index], _Job.resolver, _Job.root))
    except BenchError as exc:
        return "error", _sendable(exc)


def _build_part(index: int, part: int) -> tuple[str, object]:
    """Rows of part ``part`` of ``_Job.specs[index]``; ``("part", keyed rows)``, or an error."""
    spec = _Job.specs[index]
    try:
        return "part", spec.build_part(_Job.resolver, spec.parts[part])
    except BenchError as exc:
        return "error", _sendable(exc)


def _write_parts(index: int, outcomes: list[tuple[str, object]]) -> tuple[str, object]:
    """Merge the parts of ``_Job.specs[index]`` and write it; the first error if one failed."""
    for status, value in outcomes:
        if status == "error":
            return status, value
    spec = _Job.specs[index]
    try:
        rows = merge_parts(value for _, value in outcomes)
        return "built", manifest_entry(write_suite(spec, rows, _Job.root))
    except BenchError as exc:
        return "error", exc


def pool_tasks(specs: Sequence[SuiteSpec]) -> list[tuple[int, int | None]]:
    """The pool's tasks, ``(suite index, part index or None)``, in the order they start.

    A suite with ``parts`` is one task per part, each costing its share of ``build_cost``.
    Costliest first (the longest task must not be the last to start, or it alone sets the
    wall time), then in suite and part order: the order depends on the specs only.
    """
    tasks = [(i, p) for i, spec in enumerate(specs)
             for p in (range(len(spec.parts)) if spec.parts else (None,))]

    def cost(task: tuple[int, int | None]) -> float:
        spec = specs[task[0]]
        return spec.build_cost / max(1, len(spec.parts))

    return sorted(tasks, key=lambda t: (-cost(t), t[0], -1 if t[1] is None else t[1]))


def _results(count: int, jobs: int) -> Iterator[tuple[str, object]]:
    """Results of :func:`_build_indexed` for ``range(count)``, in that order.

    With ``jobs > 1`` (and ``fork`` available) the suites are built by a pool of processes,
    a suite with ``parts`` as one task per part (:func:`pool_tasks`), merged and written by
    this process; results still come back in the order asked for, so the output does not
    depend on timing.
    """
    jobs = min(jobs, sum(max(1, len(s.parts)) for s in _Job.specs[:count]))
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from (_build_indexed(i) for i in range(count))
        return
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=die_with_parent, initargs=(os.getpid(),))
    try:
        futures = {
            (i, p): pool.submit(_build_indexed, i) if p is None else pool.submit(_build_part, i, p)
            for i, p in pool_tasks(_Job.specs[:count])
        }
        for i in range(count):
            if not _Job.specs[i].parts:
                yield futures[(i, None)].result()
            else:
                parts = range(len(_Job.specs[i].parts))
                yield _write_parts(i, [futures[(i, p)].result() for p in parts])
    finally:  # on an error (or Ctrl-C) do not start the suites still queued
        pool.shutdown(wait=True, cancel_futures=True)


#: ``prctl`` option: the signal a process gets when its parent dies (linux/prctl.h).
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this worker when ``parent`` (the build) dies, however it dies.

    A worker is forked by the build; after ``kill -9`` (or SIGTERM, whose default action runs
    no clean-up) of the build it would live on with parent 1, holding hundreds of MB. On Linux
    the kernel sends SIGKILL to the worker when its parent goes (``prctl(PR_SET_PDEATHSIG)``
    through ctypes); elsewhere a daemon thread polls ``os.getppid()`` once a second. A parent
    that died before the call is caught by comparing ``os.getppid()`` afterwards.
    """
    import signal
    import sys
    import threading

    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:
        os._exit(1)
    if armed:
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


#: Allocations between young-generation collections while suites are built (Python's default
#: is 700). Building allocates millions of short-lived tuples next to large long-lived tables
#: (the phrase-based systems' language models), and every collection cycle that reaches the
#: oldest generation walks those tables again: 10% of the CPU time of the three
#: ``*_salad_pbsmt`` suites (``--jobs 1``: 58.1 s -> 52.0 s, docs/benchmarks.md). Builders
#: make no reference cycles that matter, so collecting rarely costs no memory.
BUILD_GC_THRESHOLD = 100_000


@contextlib.contextmanager
def _rare_collections() -> Iterator[None]:
    """Run the body (and the workers it forks) with ``BUILD_GC_THRESHOLD``; restore after."""
    old = gc.get_threshold()
    gc.set_threshold(BUILD_GC_THRESHOLD, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
