"""Write suites as a Hub-style dataset folder: Parquet per config, manifest and dataset card.

The folder is what ``datasets.load_dataset(folder, config)`` reads and what ``publish-suites``
pushes to the Hub. Output is deterministic: the same sources give byte-identical files.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import multiprocessing
import os
import pickle
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from bench import __version__
from bench.atomic import atomic_dir, write_text
from bench.errors import BenchError, ConfigError, DataError, SourceUnavailableError
from bench.manifest import MANIFEST, SPLIT, parquet_path, read_manifest
from bench.sources import SOURCES, SourceResolver
from builders.card import render_card, split_num_bytes
from builders.freshness import code_version, is_up_to_date
from builders.suite import Row, SuiteSpec, merge_parts
from builders.table_io import contract_table, write_parquet


def rows_to_table(spec: SuiteSpec, rows: Sequence[Row]) -> pa.Table:
    """Arrow table of a registered suite's rows (see :func:`contract_table`)."""
    return contract_table(spec.features, rows, spec.name)


def count_variants(rows: Sequence[Row]) -> dict[str, int]:
    """Rows per variant, sorted by variant name."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["variant"]] = counts.get(row["variant"], 0) + 1
    return dict(sorted(counts.items()))


@dataclass(frozen=True)
class BuiltSuite:
    """What was written for one suite."""

    spec: SuiteSpec
    rows: int
    groups: int
    sha256: str
    variants: dict[str, int]
    num_bytes: int = 0  # what ``datasets`` records for the split (card.split_num_bytes)
    parquet_bytes: int = 0


def build_suite(spec: SuiteSpec, resolver: SourceResolver, root: Path) -> BuiltSuite:
    """Build one suite's rows and write its Parquet file under ``root``."""
    return write_suite(spec, list(spec.build(resolver)), root)


def write_suite(spec: SuiteSpec, rows: list[Row], root: Path) -> BuiltSuite:
    """Write a suite's rows as its Parquet file under ``root``."""
    target = parquet_path(root, spec.name)
    digest = write_parquet(rows_to_table(spec, rows), target)
    groups = len({r["group"] for r in rows})
    return BuiltSuite(spec, len(rows), groups, digest, count_variants(rows),
                      split_num_bytes(target), target.stat().st_size)


def manifest_entry(built: BuiltSuite) -> dict:
    """The ``suites.json`` entry of a built suite."""
    spec = built.spec
    return {
        "family": spec.family,
        "task": spec.task,
        "kind": spec.kind,
        "version": spec.version,
        "label_names": list(spec.task_spec.label_names),
        "main_metric": spec.main_metric,
        "higher_is_better": spec.higher_is_better,
        "rows": built.rows,
        "groups": built.groups,
        "variants": built.variants,
        "expected_size": spec.expected_rows,
        "sha256": built.sha256,
        "num_bytes": built.num_bytes,
        "parquet_bytes": built.parquet_bytes,
        "path": f"{spec.name}/{SPLIT}.parquet",
        "sources": [
            {"path": p, "md5": SOURCES[p].md5, "url": SOURCES[p].url} for p in spec.sources
        ],
        "code_version": code_version(),
    }


@dataclass(frozen=True)
class BuildReport:
    """What one :func:`build_all` call did.

    Attributes:
        manifest: The folder's ``suites.json`` entries after the build, sorted by name.
        built: Suites built, in the order asked for.
        up_to_date: Suites kept because nothing they depend on changed.
        skipped: Suites whose sources are unavailable, with the (short) reason.

    """

    manifest: dict[str, dict]
    built: list[str]
    up_to_date: list[str]
    skipped: dict[str, str]


#: ``OSError`` numbers that mean the output folder cannot be written (not a bug in a builder).
WRITE_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}


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


def _short_reason(exc: Exception) -> str:
    """The first clause of a source error ("source file 'x' is not available (...)")."""
    return str(exc).split("; ")[0]


def _link_tree(source: Path, target: Path) -> None:
    """Hard-link (or copy) every file of ``source`` into the empty folder ``target``.

    Parquet files are only ever replaced by rename, never written in place, so the links do
    not let the new build touch the old folder's files.
    """

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=link, dirs_exist_ok=True, symlinks=True)


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


def build_all(
    specs: Sequence[SuiteSpec],
    resolver: SourceResolver,
    out: str | os.PathLike,
    log: Callable[[str], None] = print,
    *,
    skip_unavailable: bool = False,
    jobs: int = 1,
    fresh: bool = False,
) -> BuildReport:
    """Build ``specs`` into ``out``; merge them into an existing manifest; write the card.

    Suites already in ``out`` and not rebuilt are kept, so ``--suites`` can add to a folder.
    A suite whose entry is up to date (:func:`builders.freshness.is_up_to_date`) is not
    rebuilt. The folder is replaced in one rename: the new state is built in a temporary
    sibling (holding hard links to the files kept), so a build killed at any point leaves
    ``out`` as it was, never a folder of Parquet files without their ``suites.json``.

    Args:
        specs: The suites to build, in order.
        resolver: Where source files come from.
        out: The dataset folder.
        log: Receives one line per suite, and one per group of skipped suites.
        skip_unavailable: When building every suite: a suite whose source file is not available
            (offline, not in the mirror: QQP) is skipped with a logged reason instead of
            failing the build. Corrupt files still fail. Suites named explicitly should pass
            ``False`` so that the ``SourceUnavailableError`` reaches the user.
        jobs: Processes building suites at the same time (suites are independent).
        fresh: Ignore what ``out`` holds; the new folder has only the suites built now.

    Raises:
        ConfigError: ``out`` is a file, or the folder cannot be written.
        SourceError: A source is corrupt, or unavailable and ``skip_unavailable`` is off.

    """
    specs = list({s.name: s for s in specs}.values())  # a suite named twice is built once
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise ConfigError(f"--out {root}: is a file; give a folder (new, or a built one)")
    keep = root.is_dir() and not fresh
    manifest = read_manifest(root) if keep and (root / MANIFEST).is_file() else {}
    up_to_date = [s.name for s in specs if is_up_to_date(s, manifest.get(s.name), root)]
    todo = [s for s in specs if s.name not in up_to_date]
    unavailable: dict[str, str] = {}  # source path -> why
    for path in dict.fromkeys(p for s in todo for p in s.sources):
        try:  # resolve (and verify) each source once, before any worker starts
            resolver.path(path)
        except SourceUnavailableError as exc:
            if not skip_unavailable:
                raise
            unavailable[path] = _short_reason(exc)
    skipped = {
        s.name: "; ".join(unavailable[p] for p in s.sources if p in unavailable)
        for s in todo
        if any(p in unavailable for p in s.sources)
    }
    todo = [s for s in todo if s.name not in skipped]
    if not todo and keep and (root / MANIFEST).is_file() and _pools_current(root):
        _log_build(log, specs, manifest, iter(()), up_to_date, skipped)
        return BuildReport(dict(sorted(manifest.items())), [], up_to_date, skipped)
    try:
        with atomic_dir(root) as tmp:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; give what mkdir would
            if keep:
                _link_tree(root, tmp)
            _Job.specs, _Job.resolver, _Job.root = todo, resolver, tmp
            results = _results(len(todo), jobs)
            try:
                with _rare_collections():
                    _log_build(log, specs, manifest, results, up_to_date, skipped)
            finally:
                results.close()
                _Job.specs, _Job.resolver = (), None
            from builders.fewshot import build_pools

            manifest = save_manifest(tmp, manifest, pools=build_pools(resolver, tmp, log))
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        raise ConfigError(
            f"--out {root}: cannot write there ({exc.strerror}: {exc.filename}); nothing changed"
        ) from None
    return BuildReport(manifest, [s.name for s in todo], up_to_date, skipped)


def _log_build(
    log: Callable[[str], None],
    specs: Sequence[SuiteSpec],
    manifest: dict[str, dict],
    results: Iterator[tuple[str, object]],
    up_to_date: list[str],
    skipped: dict[str, str],
) -> None:
    """Take the built entries into ``manifest`` and log one line per suite, in ``specs`` order.

    ``results`` yields the outcome of each suite to build (neither up to date nor skipped), in
    order, so each line is printed as soon as its suite (and every one before it) is written.
    """
    for spec in specs:
        if spec.name in skipped:
            continue
        if spec.name not in up_to_date:
            status, value = next(results)
            if status == "error":
                raise value
            manifest[spec.name] = value
        entry = manifest[spec.name]
        units = entry["groups"] if spec.kind != "transitive" else entry["variants"].get(
            "transitive"
        )
        if spec.name in up_to_date:
            log(f"{spec.name:<24} {entry['rows']:>7} rows {units:>7} test items  up to date")
            continue
        expected = spec.expected_rows
        note = ""
        if expected is not None and units != expected:
            note = f"  (paper: {expected}, difference {units - expected:+d}; see docs/)"
        log(f"{spec.name:<24} {entry['rows']:>7} rows {units:>7} test items{note}")
    if skipped:  # one line: the same missing file (QQP) would otherwise repeat per suite
        reasons = "; ".join(dict.fromkeys(r for text in skipped.values() for r in text.split("; ")))
        log(f"skipped {len(skipped)} suites ({', '.join(skipped)}): {reasons}; see docs/sources.md")


def _pools_current(root: Path) -> bool:
    """Whether the folder's few-shot pools were built by this code (``builders.fewshot``)."""
    from bench.fewshot import read_pools

    pools = read_pools(root)
    return bool(pools) and all(
        e.get("code_version") == code_version() and (root / e["path"]).is_file()
        for e in pools.values())


def save_manifest(root: Path, manifest: dict[str, dict], card_suffix: str = "",
                  pools: dict[str, dict] | None = None) -> dict:
    """Write ``suites.json`` and the dataset card of a folder; return the sorted manifest.

    ``pools`` (``builders.fewshot``) are written under ``"fewshot"``; None keeps the folder's.
    """
    from bench.fewshot import FOLDER, read_pools

    manifest = dict(sorted(manifest.items()))
    if pools is None and (root / MANIFEST).is_file():
        pools = read_pools(root)
    payload = {"harness_version": __version__, "suites": manifest}
    if pools:
        payload[FOLDER] = dict(sorted(pools.items()))
    write_text(root / MANIFEST, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    write_text(root / "README.md", render_card(manifest, root) + card_suffix)
    return manifest
