"""Write suites as a Hub-style dataset folder: Parquet per config, manifest and dataset card.

The folder is what ``datasets.load_dataset(folder, config)`` reads and what ``publish-suites``
pushes to the Hub. Output is deterministic: the same sources give byte-identical files.

The parts live in modules of one job each: :mod:`~consistency_bench.builders.suite.write` (a suite's
Parquet
file, its manifest entry, the folder's ``suites.json`` and card) and
:mod:`~consistency_bench.builders.build.pool` (the pool of processes that builds suites, and its
garbage
collection setting); this module builds a folder with them (:func:`build_all`). Import their
names from them; this module re-exports nothing.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, SourceUnavailableError
from consistency_bench.bench.io.manifest import MANIFEST, read_manifest
from consistency_bench.bench.io.staged_folder import atomic_dir
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.build.pool import (
    _Job,
    _rare_collections,
    _results,
)
from consistency_bench.builders.card.render import count_test_items
from consistency_bench.builders.freshness import is_up_to_date
from consistency_bench.builders.suite.spec import SuiteSpec
from consistency_bench.builders.suite.write import (
    _pools_current,
    save_manifest,
)

__all__ = [
    "WRITE_ERRNOS",
    "BuildReport",
    "build_all",
]


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


# One piece (over 60 lines): plan, then build in one temporary folder renamed into place.
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
    A suite whose entry is up to date
    (:func:`consistency_bench.builders.freshness.is_up_to_date`) is not rebuilt. The folder is
    replaced in one rename: the new state is built in a temporary sibling (holding hard links
    to the files kept), so a build killed at any point leaves ``out`` as it was, never a
    folder of Parquet files without their ``suites.json``.

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
    skipped = _unavailable_suites(todo, resolver, skip_unavailable)
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
            from consistency_bench.builders.fewshot import build_pools

            pools = build_pools(resolver, tmp, log, suites=manifest)  # after every suite
            manifest = save_manifest(tmp, manifest, pools=pools)
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        raise ConfigError(
            f"--out {root}: cannot write there ({exc.strerror}: {exc.filename}); nothing changed"
        ) from None
    return BuildReport(manifest, [s.name for s in todo], up_to_date, skipped)


def _unavailable_suites(todo: Sequence[SuiteSpec], resolver: SourceResolver,
                        skip_unavailable: bool) -> dict[str, str]:
    """Resolve (and verify) every source once; the suites skipped for want of one, with why.

    Raises:
        SourceUnavailableError: A source is unavailable and ``skip_unavailable`` is off.

    """
    unavailable: dict[str, str] = {}  # source path -> why
    for path in dict.fromkeys(p for s in todo for p in s.sources):
        try:  # resolve (and verify) each source once, before any worker starts
            resolver.path(path)
        except SourceUnavailableError as exc:
            if not skip_unavailable:
                raise
            unavailable[path] = _short_reason(exc)
    return {
        s.name: "; ".join(unavailable[p] for p in s.sources if p in unavailable)
        for s in todo
        if any(p in unavailable for p in s.sources)
    }


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
        units = count_test_items(entry)
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
