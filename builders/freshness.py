"""When a built suite is up to date, so that a rebuild skips it.

A suite in a built folder is up to date when everything its rows depend on is what it was at
its build: the suite version, the pinned md5 of every source file, the *code version* (a hash
of the builder code and of the library versions that shape the Parquet bytes) and the Parquet
file itself (its sha256 still matches ``suites.json``). Nothing here reads a source corpus, so
checking a whole folder takes milliseconds.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import metadata
from pathlib import Path

from consistency_bench.bench.io.digest import file_sha256
from consistency_bench.bench.registries.source_files import SOURCES
from consistency_bench.builders.suite.spec import SuiteSpec

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

#: Files whose content shapes the rows or the bytes of a built suite or few-shot pool: every
#: builder module and the ``bench`` modules the builders import
#: (``tests/test_build_command.py`` checks that this list covers every module that importing
#: the catalogue loads).
CODE_GLOBS = (
    "builders/**/*.py",
    "bench/__init__.py",
    "bench/io/__init__.py",
    "bench/prompting/__init__.py",
    "bench/registries/__init__.py",
    "bench/scoring/__init__.py",
    "bench/scoring/contamination.py",
    "bench/errors.py",
    "bench/registries/families.py",
    "bench/prompting/demonstrations.py",
    "bench/io/digest.py",
    "bench/io/manifest.py",
    "bench/registries/registry.py",
    "bench/registries/source_files.py",
    "bench/registries/tasks.py",
    "bench/io/tsv.py",
    "bench/io/user_cache.py",
    "bench/io/write.py",
    "bench/io/output_checks.py",
    "bench/metrics/__init__.py",
    "bench/metrics/salad.py",
)

#: Libraries whose version can change the Parquet bytes (writer, HF features metadata) or the
#: generated rows (tokenisers, random number generators).
CODE_PACKAGES = ("pyarrow", "datasets", "numpy", "nltk")


def code_files() -> list[Path]:
    """The files hashed into the code version, sorted."""
    files = {p for pattern in CODE_GLOBS for p in PACKAGE_ROOT.glob(pattern) if p.is_file()}
    return sorted(files)


@cache
def code_version() -> str:
    """sha256 over the builder code and the versions of :data:`CODE_PACKAGES`.

    Any edit to a builder module (or an upgrade of pyarrow, datasets, ...) changes it, so a
    build after the edit rebuilds every suite instead of trusting what is on disk.
    """
    digest = hashlib.sha256()
    for path in code_files():
        digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for package in CODE_PACKAGES:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{package}=={version}\0".encode())
    return digest.hexdigest()


def source_md5s(spec: SuiteSpec) -> list[dict] | None:
    """``[{"path", "md5"}]`` of the suite's sources, or ``None`` when one has no pinned md5.

    A source without a pinned md5 (QQP) can change under the same name, so a suite reading it
    is never considered up to date.
    """
    pinned = [{"path": p, "md5": SOURCES[p].md5} for p in spec.sources]
    return None if any(s["md5"] is None for s in pinned) else pinned


def is_up_to_date(spec: SuiteSpec, entry: dict | None, root: Path) -> bool:
    """Whether the ``suites.json`` ``entry`` of ``spec`` in ``root`` can be kept as it is."""
    if not entry:
        return False
    pinned = source_md5s(spec)
    recorded = [{"path": s.get("path"), "md5": s.get("md5")} for s in entry.get("sources", [])]
    if (
        pinned is None
        or entry.get("version") != spec.version
        or entry.get("code_version") != code_version()
        or recorded != pinned
    ):
        return False
    path = root / entry.get("path", "")
    return path.is_file() and file_sha256(path) == entry.get("sha256")
