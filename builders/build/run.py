"""One ``build`` run: choose the suites, check the output folder, build them.

What ``consistency-bench build`` does. ``out`` semantics: build owns a folder it created,
recognised by its ``suites.json``. Such a folder is updated (suites that are up to date are
kept, the others rebuilt, all in one rename); a new or empty folder is created; a file, or a
non-empty folder that is not a build, is refused unless ``overwrite`` is given, which replaces
the folder by a fresh build.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from consistency_bench.bench.errors import ConfigError, UnknownNameError
from consistency_bench.bench.io.manifest import MANIFEST
from consistency_bench.builders.export import BuildReport
from consistency_bench.builders.suite.spec import SuiteSpec


def check_out(out: Path, overwrite: bool,
              sources: str | os.PathLike | None = None) -> None:
    """Refuse an ``--out`` that build does not own (see the module docstring).

    Raises:
        ConfigError: ``out`` is a file; the current folder, a folder the sources are read
            from (:func:`consistency_bench.bench.registries.source_files.source_folders`) or one
            holding them, even
            with
            ``overwrite``; or a non-empty folder without ``suites.json`` and ``overwrite``
            is off.

    """
    from consistency_bench.bench.io.output_checks import refuse_input_folders
    from consistency_bench.bench.registries.source_files import source_folders

    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: is a file; give a folder (new, or an earlier build)")
    cwd = Path.cwd().resolve()
    if out.resolve() == cwd or out.resolve() in cwd.parents:
        raise ConfigError(
            f"--out {out}: is the current folder or contains it; the build replaces --out by "
            "a rename, so give a folder below the current one"
        )
    refuse_input_folders(out, source_folders(sources))
    if overwrite or not out.is_dir() or (out / MANIFEST).is_file():
        return
    if any(out.iterdir()):
        raise ConfigError(
            f"--out {out}: a non-empty folder that is not a consistency-bench build (no "
            f"{MANIFEST}); give a new folder, or --overwrite to replace it"
        )


def select_suites(names: Sequence[str] | None, family: str | None) -> list[SuiteSpec]:
    """The registered suites named (all when ``names`` is empty), kept to ``family``.

    Raises:
        UnknownNameError: An unknown suite or family.
        ConfigError: None of ``names`` is of ``family``.

    """
    from consistency_bench.builders.catalog import SUITES, get_suite

    specs = [get_suite(n) for n in names] if names else list(SUITES.values())
    if family:
        families = sorted({s.family for s in SUITES.values()})
        if family not in families:
            raise UnknownNameError("family", family, families)
        specs = [s for s in specs if s.family == family]
        if not specs:
            raise ConfigError(f"--family {family}: none of --suites is of that family")
    return specs


def build_suites(out: str | os.PathLike, names: Sequence[str] | None = None,
                 family: str | None = None, *, sources: str | os.PathLike | None = None,
                 download: bool = True, jobs: int = 1, overwrite: bool = False,
                 log: Callable[[str], None] = print) -> BuildReport:
    """Build the chosen suites into ``out`` (every check first, then one rename).

    Building everything (no ``names``) skips suites whose sources are unavailable offline
    (QQP); a suite named in ``names`` fails with the reason instead.

    Raises:
        ConfigError: ``jobs`` < 1, a bad ``out``, or a family none of ``names`` is of.
        UnknownNameError: An unknown suite or family.

    """
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.export import build_all

    if jobs < 1:
        raise ConfigError(f"--jobs {jobs}: give 1 or more processes")
    specs = select_suites(names, family)
    folder = Path(out)
    check_out(folder, overwrite, sources)
    resolver = SourceResolver(sources, download=download)
    return build_all(specs, resolver, folder, log, skip_unavailable=not names, jobs=jobs,
                     fresh=overwrite)
