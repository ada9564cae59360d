"""The build caches (issue 32 item 12): same suites with and without them, safe to delete.

The PBSMT n-best lists and numba's compiled decoder live in the user's cache folder
(``builders/cache``); a build that reads them writes the same bytes as one that trains and
decodes, a damaged entry is a miss, and nothing is written inside the package.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from consistency_bench.bench.io.manifest import read_manifest
from consistency_bench.bench.registries.source_files import SourceResolver
from consistency_bench.builders.cache import entries, folder
from consistency_bench.builders.catalog import get_suite
from consistency_bench.builders.export import build_all
from consistency_bench.builders.salad import statistical

ROOT = Path(__file__).resolve().parents[1]
SUITE = "sst2_salad_pbsmt"  # the smallest PBSMT suite: 2 parts, ~4 s to train and decode


def _build(corpora: Path, out: Path) -> str:
    build_all([get_suite(SUITE)], SourceResolver(corpora, download=False), out,
              log=lambda _: None)
    return read_manifest(out)[SUITE]["sha256"]


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "pbsmt").glob(f"*{entries.SUFFIX}"))


@pytest.fixture(scope="module")
def cold(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A build in a fresh process with an empty cache: ``(cache folder, suite sha256)``.

    ``NUMBA_CACHE_DIR`` is unset, so numba's cache goes where the toolkit points it.
    """
    tmp = tmp_path_factory.mktemp("cold")
    cache, out = tmp / "cache", tmp / "built"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update({"CONSISTENCY_BENCH_BUILD_CACHE": str(cache), "PYTHONPATH": str(ROOT)})
    subprocess.run([sys.executable, "-m", "consistency_bench", "build", "--sources",
                    str(corpora), "--no-download", "--out", str(out), "--suites", SUITE],
                   env=env, cwd=ROOT, check=True, capture_output=True)
    return cache, read_manifest(out)[SUITE]["sha256"]


def test_cold_build_fills_the_user_cache_not_the_package(cold):
    cache, _ = cold
    assert len(_entries(cache)) == 2  # one entry per part (label)
    compiled = list((cache / "numba").rglob("*.nbi"))
    assert compiled, "numba's index files belong in the build cache"
    assert all(ROOT not in p.resolve().parents for p in _entries(cache) + compiled)


def test_warm_build_is_byte_identical_and_decodes_nothing(cold, corpora, tmp_path,
                                                          monkeypatch):
    cache, sha = cold
    monkeypatch.setenv(folder.ENV_BUILD_CACHE, str(cache))

    def no_decoding(*_):
        raise AssertionError("a warm build trained and decoded a part")

    monkeypatch.setattr(statistical, "part_nbest", no_decoding)
    assert _build(corpora, tmp_path / "warm") == sha


def test_build_without_the_cache_is_byte_identical(cold, corpora, tmp_path, monkeypatch):
    _, sha = cold
    monkeypatch.setenv(folder.ENV_BUILD_CACHE, "off")
    assert folder.cache_root() is None
    assert _build(corpora, tmp_path / "off") == sha
    assert not list(tmp_path.rglob(f"*{entries.SUFFIX}"))


@pytest.mark.parametrize("damage", [b"", b"not gzip at all", "truncated"])
def test_a_damaged_file_reads_as_a_miss(tmp_path, monkeypatch, damage):
    monkeypatch.setenv(folder.ENV_BUILD_CACHE, str(tmp_path))
    assert entries.store("k", "a", {"nbest": {"x": ["y z"]}})
    path = entries.entry_path("k", "a")
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2] if damage == "truncated" else damage)
    assert entries.load("k", "a") is None


def test_an_entry_of_another_shape_or_for_other_sources_is_a_miss():
    sources = {("a", "b"), ("c",)}
    whole = {"system": True, "nbest": {"a b": ["x y", "z"], "c": ["w"], "extra": ["v"]}}
    assert statistical._decode(whole, sources) == (
        True, {("a", "b"): [["x", "y"], ["z"]], ("c",): [["w"]]})
    assert statistical._decode({"system": False, "nbest": {}}, sources) == (True, None)
    for value in (None, [], {"nbest": [1, 2]}, {"system": True, "nbest": {"a b": ["x"]}},
                  {"system": True, "nbest": {"a b": "x y", "c": ["w"]}},
                  {"system": True, "nbest": {"a b": [1], "c": ["w"]}}):
        assert statistical._decode(value, sources) == (False, None), value


def test_a_damaged_entry_is_rebuilt_and_rewritten(cold, corpora, tmp_path, monkeypatch):
    cache, sha = cold
    copy = tmp_path / "cache" / "pbsmt"
    copy.mkdir(parents=True)
    for path in _entries(cache):
        (copy / path.name).write_bytes(path.read_bytes())
    target = _entries(tmp_path / "cache")[0]
    good = target.read_bytes()
    target.write_bytes(good[: len(good) // 2])
    monkeypatch.setenv(folder.ENV_BUILD_CACHE, str(tmp_path / "cache"))
    assert _build(corpora, tmp_path / "built") == sha
    assert gzip.decompress(target.read_bytes()) == gzip.decompress(good)  # rewritten whole


def test_the_key_follows_sources_code_and_version(corpora, monkeypatch):
    resolver = SourceResolver(corpora, download=False)
    key = statistical.part_key("sst2", 0, resolver)
    assert key == statistical.part_key("sst2", 0, resolver)
    assert key != statistical.part_key("sst2", 1, resolver)
    monkeypatch.setattr(statistical, "DECODER_VERSION", "test")
    assert statistical.part_key("sst2", 0, resolver) != key
    monkeypatch.undo()
    monkeypatch.setattr(statistical, "file_sha256", lambda path: f"other {path.name}")
    assert statistical.part_key("sst2", 0, resolver) != key
    monkeypatch.undo()
    monkeypatch.setattr(statistical, "code_digest", lambda: "other code")
    assert statistical.part_key("sst2", 0, resolver) != key


def test_entries_are_written_atomically_and_never_through_a_link(tmp_path, monkeypatch):
    monkeypatch.setenv(folder.ENV_BUILD_CACHE, str(tmp_path / "cache"))
    assert entries.store("k", "a", {"x": [1]}) and entries.load("k", "a") == {"x": [1]}
    assert entries.load("k", "missing") is None
    assert [p.name for p in (tmp_path / "cache" / "k").iterdir()] == [f"a{entries.SUFFIX}"]
    (tmp_path / "file").write_text("x")  # a cache folder that cannot be made: no entry
    monkeypatch.setenv(folder.ENV_BUILD_CACHE, str(tmp_path / "file"))
    assert not entries.store("k", "b", {"y": 2}) and entries.load("k", "b") is None
    monkeypatch.setenv(folder.ENV_BUILD_CACHE, str(tmp_path / "cache"))
    outside = tmp_path / "outside.json.gz"
    outside.write_bytes(gzip.compress(b'{"secret": 1}'))
    (tmp_path / "cache" / "k" / f"l{entries.SUFFIX}").symlink_to(outside)
    assert entries.load("k", "l") is None  # a link is not followed
    assert not entries.store("k", "l", {"y": 2}) and outside.read_bytes()


def test_cache_folder_follows_xdg_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.delenv(folder.ENV_BUILD_CACHE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert folder.cache_root() == tmp_path / "consistency-bench" / "build"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert folder.cache_root() == Path.home() / ".cache" / "consistency-bench" / "build"
    for off in ("off", "0", ""):
        monkeypatch.setenv(folder.ENV_BUILD_CACHE, off)
        assert folder.cache_root() is None
