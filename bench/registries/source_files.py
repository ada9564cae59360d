"""Resolve the source corpus files that suites are built from.

Every file has a pinned public location and an md5 checksum (``bench/data/sources.tsv``, the
provenance table of the local mirror). A file is looked up, in order:

1. in the directory given with ``--sources DIR`` (argument ``sources_dir``);
2. in ``$CONSISTENCY_BENCH_SOURCES``;
3. in the download cache (``$CONSISTENCY_BENCH_CACHE``, default ``~/.cache/consistency-bench``);
4. downloaded from its pinned location into the cache.

A directory uses the layout of the mirror (``shared/corpora``): ``becel/snli/test.tsv`` etc.
A file that is found but fails its checksum is an error, never silently used.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from consistency_bench.bench.errors import (
    SourceError,
    SourceUnavailableError,
)
from consistency_bench.bench.registries.registry import Registry

ENV_SOURCES = "CONSISTENCY_BENCH_SOURCES"
ENV_CACHE = "CONSISTENCY_BENCH_CACHE"
RAW_GITHUB = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


@dataclass(frozen=True)
class SourceFile:
    """One pinned source file.

    Attributes:
        path: Path in the mirror layout, e.g. ``"becel/snli/test.tsv"``.
        md5: Expected md5 hex digest, or ``None`` when no checksum could be pinned.
        url: Where the file (or the archive holding it) is downloaded from.
        member: Member name inside ``url`` when that is a zip archive, else ``None``.
        nbytes: Expected size in bytes (informational).

    """

    path: str
    md5: str | None
    url: str
    member: str | None = None
    nbytes: int | None = None


SOURCES: Registry[SourceFile] = Registry("source file")


def register_source(source: SourceFile) -> SourceFile:
    """Add a source file (one outside the mirror manifest, e.g. QQP); once per path."""
    return SOURCES.register(source.path, source)


def _url_for(path: str, provenance: str) -> tuple[str, str | None]:
    """Turn a manifest provenance cell (``owner/repo@commit:pathspec``) into a URL and member."""
    repo, rest = provenance.split("@", 1)
    commit, spec = rest.split(":", 1)
    spec = spec.split(" (+", 1)[0].strip()
    name = path.rsplit("/", 1)[-1]
    if "<same name>" in spec:
        spec = spec.replace("<same name>", name)
    if "<same path>" in spec:
        spec = spec.replace("<same path>", path.split("/", 1)[1])
    if "<task>" in spec:
        spec = spec.replace("<task>", name.split("-v", 1)[0])
    member = None
    if spec.endswith(".zip") and not path.endswith(".zip"):
        # A file extracted from a zip archive: download the archive, take the member.
        member = "/".join(path.split("/")[1:])
    return RAW_GITHUB.format(repo=repo, commit=commit, path=spec), member


def _load_manifest() -> None:
    bench = (__package__ or "").rpartition(".")[0]  # bench/data/ is the layer package's
    text = resources.files(bench).joinpath("data/sources.tsv").read_text(encoding="utf-8")
    for row in csv.DictReader(io.StringIO(text), delimiter="\t"):
        url, member = _url_for(row["path"], row["source"])
        register_source(
            SourceFile(row["path"], row["md5"], url, member=member, nbytes=int(row["bytes"]))
        )


_load_manifest()

# Sources outside the mirror manifest. QQP is too large for the mirror; its GLUE dev split is
# read from the GLUE download (the archive the GLUE ``download_glue_data.py`` script fetches).
# No md5 is pinned: the archive could not be fetched from this build machine to checksum it
# (docs/suites/calm.md). Any local copy at ``qqp/dev.tsv`` / ``qqp/train.tsv`` is used unverified.
QQP_DEV = register_source(
    SourceFile(
        path="qqp/dev.tsv",
        md5=None,
        url="https://dl.fbaipublicfiles.com/glue/data/QQP-clean.zip",
        member="QQP/dev.tsv",
    )
)
QQP_TRAIN = register_source(
    SourceFile(
        path="qqp/train.tsv",
        md5=None,
        url="https://dl.fbaipublicfiles.com/glue/data/QQP-clean.zip",
        member="QQP/train.tsv",
    )
)


def md5_of(path: Path) -> str:
    """md5 hex digest of a file, read in 1 MiB blocks."""
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_cache_dir() -> Path:
    """The download cache: ``$CONSISTENCY_BENCH_CACHE`` or ``~/.cache/consistency-bench``."""
    env = os.environ.get(ENV_CACHE)
    return Path(env) if env else Path.home() / ".cache" / "consistency-bench" / "sources"


def source_folders(sources_dir: str | os.PathLike | None = None) -> tuple[Path, ...]:
    """Every folder a :class:`SourceResolver` of ``sources_dir`` reads source files from.

    ``sources_dir`` (``--sources``), ``$CONSISTENCY_BENCH_SOURCES`` and the download cache:
    a command's output may be none of them nor inside them (``build --sources S --out S
    --overwrite`` replaced the mirror; ``baseline --out S/becel/boolq/validation.tsv``
    overwrote the corpus it trained on).
    """
    dirs = [Path(sources_dir)] if sources_dir is not None else []
    if os.environ.get(ENV_SOURCES):
        dirs.append(Path(os.environ[ENV_SOURCES]))
    return (*dirs, default_cache_dir())


class SourceResolver:
    """Finds, verifies and (if allowed) downloads source files.

    Args:
        sources_dir: Directory in the mirror layout given on the command line.
        cache_dir: Download cache; defaults to :func:`default_cache_dir`.
        download: Whether to try the network when no local copy exists.

    """

    def __init__(
        self,
        sources_dir: str | os.PathLike | None = None,
        *,
        cache_dir: str | os.PathLike | None = None,
        download: bool = True,
    ):
        dirs = []
        if sources_dir is not None:
            dirs.append(Path(sources_dir))
        if os.environ.get(ENV_SOURCES):
            dirs.append(Path(os.environ[ENV_SOURCES]))
        for folder in dirs:
            if not folder.is_dir():
                raise SourceError(f"sources directory {str(folder)!r} does not exist")
        self.local_dirs = dirs
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.download = download
        self._verified: dict[str, Path] = {}

    def used(self) -> dict[str, str | None]:
        """The source files served so far, each with its pinned md5 (run records list them)."""
        return {path: SOURCES[path].md5 for path in sorted(self._verified)}

    def has(self, path: str) -> bool:
        """Whether ``path`` is available without downloading."""
        return any((d / path).is_file() for d in [*self.local_dirs, self.cache_dir])

    def path(self, path: str) -> Path:
        """Return a verified local path for the source file ``path``.

        Raises:
            SourceError: The file is nowhere to be found, cannot be downloaded, or fails its
                checksum.

        """
        if path in self._verified:
            return self._verified[path]
        source = SOURCES[path]  # UnknownNameError with the closest paths
        for folder in [*self.local_dirs, self.cache_dir]:
            candidate = folder / path
            if candidate.is_file():
                self._check(candidate, source)
                self._verified[path] = candidate
                return candidate
        if not self.download:
            raise SourceUnavailableError(self._missing_message(source, "downloads are disabled"))
        target = self.cache_dir / path
        self._download(source, target)
        self._check(target, source)
        self._verified[path] = target
        return target

    def _check(self, candidate: Path, source: SourceFile) -> None:
        if source.md5 is None:
            return
        actual = md5_of(candidate)
        if actual != source.md5:
            raise SourceError(
                f"{candidate}: md5 {actual} does not match the pinned {source.md5} for "
                f"{source.path!r} (from {source.url}); the file is corrupt or a different "
                "version: replace it with the pinned one"
            )

    def _missing_message(self, source: SourceFile, why: str) -> str:
        tried = ", ".join(str(d) for d in [*self.local_dirs, self.cache_dir])
        return (
            f"source file {source.path!r} is not available ({why}); looked in: {tried}. "
            f"It is downloaded from {source.url}. Without network, point at a local mirror "
            f"with --sources DIR or {ENV_SOURCES}=DIR, where DIR/{source.path} exists "
            "(the layout of shared/corpora)."
        )

    def _download(self, source: SourceFile, target: Path) -> None:
        """Fetch ``source`` into ``target``; verified before it is renamed into place."""
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with urllib.request.urlopen(source.url, timeout=30) as response:
                payload = response.read()
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise SourceUnavailableError(
                self._missing_message(source, f"download failed: {exc}")
            ) from exc
        if source.member is not None:
            try:
                with zipfile.ZipFile(io.BytesIO(payload)) as archive:
                    payload = archive.read(source.member)
            except (zipfile.BadZipFile, KeyError) as exc:
                raise SourceError(
                    f"{source.url}: cannot take {source.member!r} out of the download ({exc})"
                ) from None
        if source.md5 is not None and hashlib.md5(payload).hexdigest() != source.md5:
            raise SourceError(
                f"{source.url}: downloaded {source.path!r} has md5 "
                f"{hashlib.md5(payload).hexdigest()}, not the pinned {source.md5}; nothing was "
                "cached"
            )
        handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.replace(tmp, target)
