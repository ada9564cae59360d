"""Shared fixtures: the local corpus mirror and a folder with every BECEL suite built once."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# A private `datasets` cache per test session: the shared ~/.cache keeps prepared configs keyed
# by folder and config name, so a suite rebuilt with other rows would load stale rows from it.
_CACHE = tempfile.mkdtemp(prefix="cb-hf-datasets-")
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)
os.environ["HF_DATASETS_CACHE"] = _CACHE
# A private build cache (PBSMT n-best lists, numba's compiled decoder) per test session: tests
# never read or fill the user's ~/.cache/consistency-bench/build (builders/cache/folder.py).
_BUILD_CACHE = tempfile.mkdtemp(prefix="cb-build-cache-")
atexit.register(shutil.rmtree, _BUILD_CACHE, ignore_errors=True)
os.environ["CONSISTENCY_BENCH_BUILD_CACHE"] = _BUILD_CACHE
# The same for the cache of suites' derived columns that `score` fills (bench/io/arrow_cache.py).
os.environ["CONSISTENCY_BENCH_SCORE_CACHE"] = os.path.join(_BUILD_CACHE, "score")
# The key of the verified-cells cache (leaderboard/cache/store.py): one per test session, never
# the user's ~/.cache.
os.environ.setdefault("CONSISTENCY_BENCH_CACHE_KEY", os.path.join(_CACHE, "cells.key"))

from tests.helpers import CORPORA  # noqa: E402  (after the offline variables are set)


@pytest.fixture(scope="session")
def corpora() -> Path:
    """The local mirror of the source corpora (``../shared/corpora``)."""
    if not (CORPORA / "MANIFEST.tsv").is_file():
        pytest.skip(f"corpus mirror not found at {CORPORA}")
    return CORPORA


@pytest.fixture(scope="session")
def becel_folder(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every BECEL suite built from the mirror into ``<tmp>/consistency-bench``."""
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.catalog import SUITES
    from consistency_bench.builders.export import build_all

    out = tmp_path_factory.mktemp("built") / "consistency-bench"
    specs = [s for s in SUITES.values() if s.family == "becel"]
    build_all(specs, SourceResolver(corpora, download=False), out, log=lambda _: None)
    return out


@pytest.fixture(scope="session")
def all_folder(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every suite of every family that the mirror can build, into ``<tmp>/consistency-bench``."""
    from consistency_bench.bench.registries.source_files import SourceResolver
    from consistency_bench.builders.catalog import SUITES
    from consistency_bench.builders.export import build_all

    out = tmp_path_factory.mktemp("built-all") / "consistency-bench"
    build_all(list(SUITES.values()), SourceResolver(corpora, download=False), out,
              log=lambda _: None, skip_unavailable=True)
    return out
