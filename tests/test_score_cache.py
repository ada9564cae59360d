"""The cache of suites' derived columns that ``score`` reads and fills (bench/io/arrow_cache.py).

What must hold: the same results, to the byte, from an empty cache, a filled one, a damaged one
and none; nothing read from a damaged, linked or misfiled entry; the leaderboard's verification
never reads it; loading through it imports no pandas.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from consistency_bench.bench.io.arrow_cache import ArrowCache
from consistency_bench.bench.io.manifest import read_manifest
from consistency_bench.bench.scorers import contract
from consistency_bench.bench.scorers.contract import DERIVED_CACHE_ENV
from consistency_bench.bench.scoring.engine import SuiteFolder, recompute, score_cache, score_file
from tests.helpers import build_suites, python_stdout

SUITES = ["mrpc_salad_shuffle", "mrpc_calm", "wic_transitive", "mrpc_semantic"]


@pytest.fixture(scope="module")
def folder(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_suites(corpora, tmp_path_factory.mktemp("cache") / "built", SUITES)


@pytest.fixture(scope="module")
def predictions(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random labels with probabilities for every row (the salad score cross-fits on them)."""
    out = tmp_path_factory.mktemp("preds") / "predictions.jsonl"
    manifest = read_manifest(folder)
    rng = random.Random(0)
    with open(out, "w") as handle:
        for name in SUITES:
            k = len(manifest[name]["label_names"])
            for row_id in pq.read_table(folder / name / "test.parquet").column("id").to_pylist():
                weights = [rng.random() + 1e-3 for _ in range(k)]
                probs = [w / sum(weights) for w in weights]
                label = max(range(k), key=probs.__getitem__)
                handle.write(json.dumps({"id": row_id, "label": label, "probs": probs}) + "\n")
    return out


def _results(predictions: Path, folder: Path) -> str:
    results = score_file(predictions, folder, n_boot=200, derived=score_cache())
    results.pop("provenance", None)
    return json.dumps(results, sort_keys=True)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(DERIVED_CACHE_ENV, str(tmp_path / "score-cache"))
    contract._KEYS.clear()  # the in-process memo would hide the cache
    yield tmp_path / "score-cache"
    contract._KEYS.clear()


def _parquet_reads(monkeypatch: pytest.MonkeyPatch) -> list:
    calls: list = []
    real = pq.ParquetFile.read

    def counted(self, *args, **kwargs):
        calls.append(kwargs.get("columns"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read", counted)
    return calls


def test_filled_cache_gives_the_same_bytes_and_reads_no_column(folder, predictions, cache,
                                                               monkeypatch):
    monkeypatch.setenv(DERIVED_CACHE_ENV, "off")
    without = _results(predictions, folder)
    contract._KEYS.clear()
    monkeypatch.setenv(DERIVED_CACHE_ENV, str(cache))
    first = _results(predictions, folder)  # fills it
    entries = sorted(cache.glob("*.arrow"))
    # per suite: the core columns and the source files; then original keys, halves, columns
    assert len(entries) >= 2 * len(SUITES)
    contract._KEYS.clear()
    reads = _parquet_reads(monkeypatch)
    second = _results(predictions, folder)
    assert first == without and second == without
    assert reads == []  # every column came from the cache (the file itself is still hashed)


def test_damaged_misfiled_and_linked_entries_are_misses(folder, predictions, cache):
    expected = _results(predictions, folder)
    entries = sorted(cache.glob("*.arrow"))
    damaged, truncated, swapped = entries[:3]
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    truncated.write_bytes(truncated.read_bytes()[:-20])
    # an entry copied over another key: a valid file, but not this key's
    swapped.write_bytes(entries[3].read_bytes())
    contract._KEYS.clear()
    assert _results(predictions, folder) == expected
    # each was made again, in place
    store = ArrowCache(cache)
    for path in (damaged, truncated, swapped):
        assert store.get(path.stem) is not None


def test_a_linked_entry_is_neither_read_nor_replaced(tmp_path):
    store = ArrowCache(tmp_path / "cache")
    table = pa.table({"x": [1, 2, 3]})
    assert store.put("a" * 64, table)
    assert store.get("a" * 64).equals(table)
    outside = tmp_path / "outside.arrow"
    outside.write_bytes(store.path("a" * 64).read_bytes())
    os.symlink(outside, store.path("b" * 64))
    assert store.get("b" * 64) is None  # never followed
    assert not store.put("b" * 64, table)  # never written through
    assert store.path("b" * 64).is_symlink()
    assert store.get("c" * 64) is None
    with pytest.raises(ValueError, match="not a cache key"):
        store.path("../escape")


def test_an_unwritable_cache_is_no_error(folder, predictions, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    contract._KEYS.clear()
    monkeypatch.setenv(DERIVED_CACHE_ENV, "off")
    expected = _results(predictions, folder)
    assert score_cache() is None
    monkeypatch.setenv(DERIVED_CACHE_ENV, str(blocker / "cache"))
    contract._KEYS.clear()
    assert _results(predictions, folder) == expected


def test_verification_never_reads_the_cache(folder, predictions, cache):
    """A forged entry (valid CRC and key, wrong gold labels) changes `score`, not `recompute`."""
    name = "mrpc_semantic"
    truth = recompute(predictions, folder, suites=[name]).suites[name]["metrics"]
    assert score_file(predictions, folder, n_boot=10, suites=[name],
                        derived=score_cache())["suites"][name][
        "metrics"] == truth
    info = read_manifest(folder)[name]
    key = _core_key(info)
    store = ArrowCache(cache)
    core = store.get(key)
    assert core is not None
    label = core.column("label").combine_chunks()
    flipped = pc.subtract(pa.scalar(1, label.type), label)  # MRPC: 0 <-> 1
    assert store.put(key, core.set_column(core.schema.get_field_index("label"), "label",
                                          flipped))
    contract._KEYS.clear()
    forged = score_file(predictions, folder, n_boot=10, suites=[name],
                        derived=score_cache())["suites"][name]
    assert forged["metrics"] != truth  # the cache is only as trusted as its folder ...
    # ... and, in the same process (the in-process memo not cleared), verification and every
    # score_file without the cache never see it
    assert recompute(predictions, folder, suites=[name]).suites[name]["metrics"] == truth
    assert score_file(predictions, folder, n_boot=10, suites=[name])["suites"][name][
        "metrics"] == truth
    assert SuiteFolder(folder).derived is None


def test_a_kept_table_of_other_rows_or_columns_is_not_used(folder, predictions, cache):
    name = "mrpc_semantic"
    expected = score_file(predictions, folder, n_boot=10, suites=[name],
                        derived=score_cache())["suites"][name]
    store, key = ArrowCache(cache), _core_key(read_manifest(folder)[name])
    core = store.get(key)
    for wrong in (core.slice(0, core.num_rows - 1), core.drop_columns(["label"])):
        assert store.put(key, wrong)
        contract._KEYS.clear()
        again = score_file(predictions, folder, n_boot=10, suites=[name],
                        derived=score_cache())["suites"][name]
        assert again == expected
        assert store.get(key).equals(core)  # made and stored again


def _core_key(info: dict) -> str:
    import hashlib

    return hashlib.sha256(f"{contract.derived_code_version()}\0{info['sha256']}\0core"
                          .encode()).hexdigest()


def test_loading_through_the_cache_does_not_import_pandas(folder, tmp_path):
    script = (
        "import sys\n"
        "from consistency_bench.bench.scoring.engine import SuiteFolder, score_cache\n"
        "for _ in range(2):\n"
        f"    folder = SuiteFolder({str(folder)!r}, derived=score_cache())\n"
        "    for name in folder.manifest:\n"
        "        data = folder.load(name)\n"
        "        data.column('source_row'), data.source_files()\n"
        "        data.original_keys(list(range(len(data.gold))))\n"
        "    from consistency_bench.bench.scorers import contract\n"
        "    contract._KEYS.clear()\n"
        "print('pandas' in sys.modules)\n"
    )
    env = {**os.environ, DERIVED_CACHE_ENV: str(tmp_path / "cache")}
    assert python_stdout(script, env=env).strip() == "False"
    assert len(list((tmp_path / "cache").glob("*.arrow"))) >= 3 * len(SUITES)


def test_pruning_keeps_the_recently_used_and_nothing_else(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "notes.txt").write_text("a user's file")  # never ours to delete
    (folder / ("f" * 64 + ".arrow")).mkdir()  # not a regular file
    store = ArrowCache(folder, max_bytes=10 << 20)
    table = pa.table({"x": list(range(100_000))})  # ~0.8 MB each
    keys = [f"{i:064x}" for i in range(20)]
    for i, key in enumerate(keys):
        assert store.put(key, table)
        os.utime(store.path(key), ns=(i * 10**9, i * 10**9))  # oldest first
    assert store.get(keys[0]) is not None  # used now: the most recent
    assert ArrowCache(folder, max_bytes=4 << 20).prune() > 0
    left = {p.stem for p in folder.glob("*.arrow") if p.is_file()}
    assert keys[0] in left and keys[-1] in left and keys[1] not in left
    assert sum(store.path(k).stat().st_size for k in left) <= 4 << 20
    assert (folder / "notes.txt").exists() and (folder / ("f" * 64 + ".arrow")).is_dir()


def test_a_fifo_or_an_unsearchable_folder_is_a_miss(tmp_path, monkeypatch):
    store = ArrowCache(tmp_path / "cache")
    table = pa.table({"x": [1]})
    assert store.put("a" * 64, table)
    os.mkfifo(store.path("b" * 64))
    assert store.get("b" * 64) is None  # no wait for a writer
    # a folder this process may not search: Path.is_symlink raises EACCES (seen as another
    # user; root searches every folder, so the error is made here)
    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_symlink", denied)
    assert not store.put("c" * 64, table)


def test_temporary_files_of_a_killed_writer_are_pruned(tmp_path):
    folder = tmp_path / "cache"
    store = ArrowCache(folder)
    assert store.put("a" * 64, pa.table({"x": [1]}))
    old = folder / f".{'b' * 64}.arrow.x1y2.tmp"
    fresh = folder / f".{'c' * 64}.arrow.x3y4.tmp"
    for path in (old, fresh):
        path.write_bytes(b"half")
    os.utime(old, (0, 0))
    store.prune()
    assert not old.exists() and fresh.exists() and store.path("a" * 64).exists()
