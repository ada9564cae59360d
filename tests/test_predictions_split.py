"""A large JSONL file is parsed as two halves at once: the result is always the whole-file
parse's, and the suites loaded meanwhile change no score and no error.

``SPLIT_PARSE_BYTES`` is lowered so that the tiny inline files are split.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from consistency_bench.bench import runtime
from consistency_bench.bench.errors import DataError
from consistency_bench.bench.predictions import fast
from consistency_bench.bench.predictions.fast import fast_columns
from consistency_bench.bench.scoring.engine import SuiteFolder, score_file
from tests.test_predictions_fast import MANIFEST, _payload, _records


def _first_half_then(second_half) -> bytes:
    """The records, those of the file's second half (as :func:`fast._halves` splits it)
    changed by ``second_half``: each half on its own infers its own column types."""
    records = _records(probs=True)
    for k in range(1, len(records)):
        payload = _payload(records[:k] + [second_half(r) for r in records[k:]])
        size = len(payload)
        start = len(_payload(records[:k]))
        previous = len(_payload(records[: k - 1]))
        if previous <= size // 2 < start:  # record k - 1 holds the middle byte
            return payload
    raise AssertionError("no split point")  # pragma: no cover


CASES = {
    "same types": lambda: _payload(_records(probs=True)),
    "labels as names after the middle": lambda: _first_half_then(
        lambda r: {**r, "label": MANIFEST[r["id"].split("/")[0]]["label_names"][r["label"]]}),
    "probs as integers after the middle": lambda: _first_half_then(
        lambda r: {**r, "probs": [1] + [0] * (len(r["probs"]) - 1)}),
    "no probs after the middle": lambda: _first_half_then(
        lambda r: {k: v for k, v in r.items() if k != "probs"}),
    "a broken line after the middle": lambda: _first_half_then(lambda r: r) + b"{\"id\": \n",
    "probs not summing to 1 in the second half": lambda: _first_half_then(
        lambda r: {**r, "probs": [0.5] * len(r["probs"]) if r["label"] else r["probs"]}),
    "an empty id in the second half": lambda: _first_half_then(
        lambda r: {**r, "id": "" if r["label"] else r["id"]}),
    "no final line break": lambda: _payload(_records())[:-1],
    "one line": lambda: json.dumps({"id": "pairs/r000/original", "label": 0}).encode(),
}


def _same_columns(a, b) -> None:
    assert (a is None) == (b is None)
    if a is not None:
        assert a.ids.equals(b.ids) and a.labels.equals(b.labels)
        assert (a.probs is None) == (b.probs is None)
        if a.probs is not None:
            assert a.probs.equals(b.probs)


@pytest.mark.parametrize("case", CASES)
def test_split_parse_gives_the_whole_file_parse(case, tmp_path, monkeypatch):
    path = tmp_path / "p.jsonl"
    path.write_bytes(CASES[case]())
    whole = fast_columns(path, "jsonl")  # below SPLIT_PARSE_BYTES: one parse
    parses = []
    real = fast._read_json

    def counted(source):
        parses.append(type(source).__name__)
        return real(source)

    monkeypatch.setattr(fast, "SPLIT_PARSE_BYTES", 1)
    monkeypatch.setattr(fast, "_read_json", counted)
    _same_columns(fast_columns(path, "jsonl"), whole)
    if case == "same types":  # split, and the halves kept: no parse of the whole file
        assert parses == ["PythonFile", "PythonFile"]
    if case == "one line":  # nothing after the middle to split at
        assert parses == ["PythonFile"]  # the whole file, through the depth check too
    if "second half" in case:  # checked on the half's thread: refused, no second parse
        assert whole is None and parses == ["PythonFile", "PythonFile"]
    if "after the middle" in case:  # the halves disagree or fail: the whole file again
        assert parses == ["PythonFile", "PythonFile", "PythonFile"]


def test_halves_split_after_a_line_break(tmp_path, monkeypatch):
    monkeypatch.setattr(fast, "SPLIT_PARSE_BYTES", 1)
    path = tmp_path / "p.jsonl"
    payload = _payload(_records())
    path.write_bytes(payload)
    (start, middle), (again, end) = fast._halves(path)
    assert (start, again, end) == (0, middle, len(payload))
    assert payload[middle - 1 : middle] == b"\n" and middle >= len(payload) // 2


def test_byte_range_reads_exactly_its_bytes(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * 10)
    stream = fast._ByteRange(path, 100, 2000)
    assert stream.read() == (bytes(range(256)) * 10)[100:2000]
    stream.close()


@pytest.fixture
def split_everything(monkeypatch):
    monkeypatch.setattr(fast, "SPLIT_PARSE_BYTES", 1)


def _copy(folder: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(folder, out)
    return out


def test_scores_are_the_same_with_the_split_and_preload(becel_folder, tmp_path, monkeypatch):
    from tests.helpers import write_predictions

    pred = write_predictions(becel_folder, tmp_path / "p.jsonl",
                             ["snli_transitive", "rte_semantic", "sst2_additive"])
    before = score_file(pred, becel_folder, n_boot=50)
    loaded = []
    real = SuiteFolder.preload

    def preload(self, stop, names=None):
        real(self, stop, names)
        loaded.append(self._load.cache_info().currsize)

    monkeypatch.setattr(fast, "SPLIT_PARSE_BYTES", 1)
    monkeypatch.setattr(SuiteFolder, "preload", preload)
    assert score_file(pred, becel_folder, n_boot=50) == before
    assert len(loaded) == 1  # the preload ran (how far depends on the threads' timing)


def test_a_changed_suite_nobody_asked_for_is_not_an_error(becel_folder, tmp_path,
                                                          split_everything, monkeypatch):
    from tests.helpers import write_predictions

    real = SuiteFolder.preload  # every suite (not only the file's), however soon the parse ends
    monkeypatch.setattr(SuiteFolder, "preload",
                        lambda self, stop, names=None: real(self, lambda: False))
    folder = _copy(becel_folder, tmp_path)
    (folder / "wic_semantic" / "test.parquet").write_bytes(b"changed")
    pred = write_predictions(folder, tmp_path / "p.jsonl", ["rte_semantic"])
    results = score_file(pred, folder, n_boot=50)
    assert list(results["suites"]) == ["rte_semantic"]


def test_a_changed_suite_the_file_covers_is_the_same_error(becel_folder, tmp_path,
                                                          monkeypatch):
    from tests.helpers import write_predictions

    folder = _copy(becel_folder, tmp_path)
    pred = write_predictions(folder, tmp_path / "p.jsonl", ["rte_semantic", "wic_semantic"])
    (folder / "wic_semantic" / "test.parquet").write_bytes(b"changed")
    with pytest.raises(DataError) as whole:
        score_file(pred, folder, n_boot=50)
    real = SuiteFolder.preload  # every suite (not only the file's), however soon the parse ends
    monkeypatch.setattr(SuiteFolder, "preload",
                        lambda self, stop, names=None: real(self, lambda: False))
    monkeypatch.setattr(fast, "SPLIT_PARSE_BYTES", 1)
    with pytest.raises(DataError) as split:
        score_file(pred, folder, n_boot=50)
    assert str(split.value) == str(whole.value) and "wic_semantic" in str(whole.value)


def test_preload_stops_when_told(becel_folder):
    folder = SuiteFolder(becel_folder)
    folder.preload(lambda: True)
    assert folder._load.cache_info().currsize == 0
    asked = []
    folder.preload(lambda: asked.append(1) or len(asked) > 3)
    assert folder._load.cache_info().currsize == 3
    folder.preload(lambda: False)
    assert folder._load.cache_info().currsize == len(folder.manifest)


def test_preload_loads_the_names_given_in_their_order(becel_folder):
    folder = SuiteFolder(becel_folder)
    folder.preload(lambda: False, ["snli_transitive", "rte_semantic"])
    assert folder._load.cache_info().currsize == 2
    loaded = []
    real = folder._load
    folder._load = lambda name: loaded.append(name) or real(name)
    folder.preload(lambda: False, ["wic_semantic", "snli_transitive"])
    assert loaded == ["wic_semantic", "snli_transitive"]


def test_sampled_suites_are_those_whose_ids_occur(tmp_path, monkeypatch):
    lines = [json.dumps({"id": f"big/{i}", "label": 0}) for i in range(3000)]
    lines += [json.dumps({"label": 1, "id": f"other/{i}"}) for i in range(3000)]
    lines.insert(1500, '{"id": "escaped\\/1", "label": 0}')  # JSON may escape the slash
    lines.insert(10, json.dumps({"id": "not_a_suite/1", "label": 0}))
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n")
    names = ["other", "escaped", "big", "absent"]
    monkeypatch.setattr(fast, "SAMPLE_BYTES", path.stat().st_size)  # every byte
    assert fast.sampled_suites(path, names) == ["other", "escaped", "big"]
    monkeypatch.setattr(fast, "SAMPLE_BYTES", 300)  # a sample: the one line is missed
    assert fast.sampled_suites(path, names) == ["other", "big"]
    path.write_text("not json at all\n")
    assert fast.sampled_suites(path, names) == []


def _preloaded(monkeypatch) -> list[list[str]]:
    """Record the ``names`` of every preload (which then loads them all, never stopped)."""
    asked: list[list[str]] = []
    real = SuiteFolder.preload

    def preload(self, stop, names=None):
        asked.append(list(names))
        real(self, lambda: False, names)

    monkeypatch.setattr(SuiteFolder, "preload", preload)
    return asked


def test_only_the_suites_of_the_file_are_preloaded(becel_folder, tmp_path, split_everything,
                                                   monkeypatch):
    from tests.helpers import write_predictions

    pred = write_predictions(becel_folder, tmp_path / "p.jsonl",
                             ["snli_transitive", "rte_semantic"])
    asked = _preloaded(monkeypatch)
    before = score_file(pred, becel_folder, n_boot=50)
    assert asked == [["rte_semantic", "snli_transitive"]]  # manifest order, nothing else
    assert score_file(pred, becel_folder, n_boot=50, suites=["snli_transitive"])["suites"] == {
        "snli_transitive": before["suites"]["snli_transitive"]}
    assert asked[1] == ["snli_transitive"]  # --suites: only those


def test_release_free_memory_is_safe_to_call():
    runtime.release_free_memory()
    assert pa.array([1, 2]).to_pylist() == [1, 2]


def test_one_malloc_arena_is_set_by_the_score_command(becel_folder, tmp_path, monkeypatch):
    import platform

    from consistency_bench.cli import main
    from tests.helpers import python_stdout, write_predictions

    code = "from consistency_bench.bench.runtime import one_malloc_arena; print(one_malloc_arena())"
    out = python_stdout(code).strip()
    assert out == str(platform.libc_ver()[0] == "glibc")  # mallopt exists only there
    calls = []
    monkeypatch.setattr(runtime, "one_malloc_arena", lambda: calls.append(1))
    pred = write_predictions(becel_folder, tmp_path / "p.jsonl", ["rte_semantic"])
    assert main(["score", str(pred), "--data", str(becel_folder), "--n-boot", "10"]) == 0
    assert calls == [1]

