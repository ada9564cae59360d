"""Suite loading for scoring: only the needed columns, no pandas, the same scores whether the
prediction file lists rows in suite order (no hashing) or shuffled."""

from __future__ import annotations

import json
import random

import pyarrow.parquet as pq

from consistency_bench.bench.scorers.contract import CORE_COLUMNS, _codes
from consistency_bench.bench.scoring.engine import CODED_COLUMNS, SuiteFolder, score_file
from tests.helpers import python_stdout, write_predictions


def test_suite_data_matches_the_parquet_file(becel_folder):
    data = SuiteFolder(becel_folder).load("snli_transitive")
    table = pq.read_table(becel_folder / "snli_transitive" / "test.parquet")
    # nothing else decoded yet; group and variant are read dictionary-encoded, as codes only
    assert set(data._arrow) == set(CORE_COLUMNS) - set(CODED_COLUMNS)
    assert data.variant.tolist() == table.column("variant").to_pylist()
    for name in set(data.variant_names):
        assert (data.is_variant(name) == (data.variant == name)).all()
    assert not data.is_variant("no such variant").any()
    gold = [-1 if v is None else v for v in table.column("label").to_pylist()]
    assert data.gold.tolist() == gold
    groups = table.column("group").to_pylist()
    assert len(set(zip(groups, data.group.tolist(), strict=True))) == len(set(groups))
    assert data.column("constraint").tolist() == table.column("constraint").to_pylist()
    assert data.table.equals(table)
    ids = data.ids()  # one array, made once: resolve and align ask for it per suite
    assert ids is data.ids() and ids.to_pylist() == table.column("id").to_pylist()


def test_row_order_of_the_prediction_file_does_not_change_scores(becel_folder, tmp_path):
    suites = ["snli_transitive", "mrpc_symmetric", "sst2_additive"]
    ordered = write_predictions(becel_folder, tmp_path / "ordered.jsonl", suites)
    lines = ordered.read_text().splitlines()
    random.Random(0).shuffle(lines)
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("\n".join(lines) + "\n")
    a = score_file(ordered, becel_folder, n_boot=200)["suites"]
    b = score_file(shuffled, becel_folder, n_boot=200)["suites"]
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert set(a) == set(suites)


def test_loading_suites_does_not_import_pandas(becel_folder):
    """pyarrow imports pandas (0.6-0.7 s) on pa.array, to_numpy, ...; loading avoids them."""
    script = (
        "import sys\n"
        "from consistency_bench.bench.scoring.engine import SuiteFolder\n"
        f"folder = SuiteFolder({str(becel_folder)!r})\n"
        "for name in folder.manifest:\n"
        "    data = folder.load(name)\n"
        "    data.column('source_row'), data.column('text'), data.units([0], [1.0])\n"
        "    data.original_keys(list(range(len(data.gold))))\n"
        "print('pandas' in sys.modules)\n"
    )
    assert python_stdout(script).strip() == "False"


def test_pandas_free_conversions_match_pyarrow():
    import pyarrow as pa

    from consistency_bench.bench.io.arrays import indices, int64, valid

    for values in ([1, None, 3, 4, None, 6, 7, 8, 9], [5, 6], [], [None, None]):
        for type_ in (pa.int8(), pa.int32(), pa.int64()):
            array = pa.array(values, type_)
            for sliced in (array, array.slice(1), array.slice(2, 3)):
                expected = [-1 if v is None else v for v in sliced.to_pylist()]
                assert int64(sliced).tolist() == expected
                assert valid(sliced).tolist() == [v is not None for v in sliced.to_pylist()]
    taken = pa.array(["a", "b", "c"]).take(indices([2, 0]))
    assert taken.to_pylist() == ["c", "a"]


def test_codes_of_a_dictionary_column_equal_those_of_its_strings():
    """Codes in order of first appearance whatever the Parquet dictionary's order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    strings = ["b", "a", "b", None, "c", "a"]
    cases = [
        pa.chunked_array([pa.array(strings)]),
        pa.chunked_array([pa.array(strings).dictionary_encode()]),
        pa.chunked_array([pa.array(strings[:3]).dictionary_encode(),
                          pa.array(strings[3:]).dictionary_encode()]),  # two dictionaries
        pa.chunked_array([pa.DictionaryArray.from_arrays(  # "a" numbered before "b", unused "z"
            pa.array([1, 0, 1, 2, 0], pa.int32()), pa.array(["a", "b", "c", "z"]))]),
        pa.chunked_array([pa.array(["x", "y", "x"]).dictionary_encode()]),
    ]
    for column in cases:
        decoded = pc.cast(column.combine_chunks(), pa.string()) if pa.types.is_dictionary(
            column.type) else column.combine_chunks()
        expected = pc.dictionary_encode(decoded)
        codes, names = _codes(column)
        assert codes.tolist() == [-1 if v is None else v for v in expected.indices.to_pylist()]
        assert names == expected.dictionary.to_pylist()
        _, arrow_names = _codes(column, as_list=False)
        assert arrow_names.to_pylist() == names


def test_suites_scored_on_threads_give_the_results_of_one_after_another(becel_folder,
                                                                          tmp_path,
                                                                          monkeypatch):
    import zlib

    from consistency_bench.bench.io.manifest import read_manifest
    from consistency_bench.bench.scoring import engine as scoring

    def guess(row: dict, names: list[str]) -> int:  # right on some rows, wrong on others
        return zlib.crc32(row["id"].encode()) % len(names)

    suites = list(read_manifest(becel_folder))
    pred = write_predictions(becel_folder, tmp_path / "p.jsonl", suites[:-2], choose=guess)
    results = {}
    for threads in (1, 2, 5):
        monkeypatch.setattr(scoring, "SCORE_THREADS", threads)
        results[threads] = score_file(pred, becel_folder, n_boot=200)
    assert len(results[1]["suites"]) == len(suites) - 2
    assert list(results[1]["skipped"]) == sorted(suites[-2:])
    assert json.dumps(results[2]) == json.dumps(results[1]) == json.dumps(results[5])


def test_original_keys_are_the_texts_joined_as_before(becel_folder):
    """The keys built by pyarrow equal the Python join they replaced (null -> "", unit
    separator), on every suite of the folder and on texts with nulls, "" and separators."""
    import numpy as np
    import pyarrow as pa

    from consistency_bench.bench.scorers.contract import join_texts

    def reference(columns):  # the Python code of the keys before
        return ["\x1f".join("" if v is None else v for v in values)
                for values in zip(*[c.to_pylist() for c in columns], strict=True)]

    folder = SuiteFolder(becel_folder)
    for name in folder.manifest:
        data = folder.load(name)
        rows = np.arange(0, len(data.gold), 3)
        names = data.column_names
        texts = [data.arrow(c).combine_chunks().take(pa.array(rows))
                 for c in ("text", "text_pair") if c in names]
        keys = data.original_keys(rows)
        assert isinstance(keys, pa.Array)
        assert keys.to_pylist() == reference(texts), name
    first = pa.array(["a", None, "", "x\x1fy", None, "é"])
    second = pa.array(["b", "c", None, "z", None, ""])
    for columns in ([first], [first, second], [second, first]):
        assert join_texts(columns, "\x1f").to_pylist() == reference(columns)


def test_key_codes_of_arrow_keys_equal_those_of_python_keys():
    import pyarrow as pa

    from consistency_bench.bench.scoring.engine import _key_codes

    parts = [["a", "b", "a"], [], ["c", "b", "", "a"], ["", "d"]]
    expected = _key_codes(parts).tolist()
    assert expected == [0, 1, 0, 2, 1, 3, 0, 3, 4]
    arrow = [pa.array(p, pa.string()) for p in parts]
    assert _key_codes(arrow).tolist() == expected
    mixed = [arrow[0], parts[1], arrow[2].cast(pa.large_string()), parts[3]]
    assert _key_codes(mixed).tolist() == expected
    assert _key_codes([arrow[0], arrow[2].cast(pa.large_string())]).tolist() == expected[:7]
