"""Every malformed prediction file is rejected with one clear message, exit 2, nothing written."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from consistency_bench.cli import main

GOOD = [
    {"id": "wic_semantic/r00000/original", "label": 1},
    {"id": "wic_semantic/r00000/paraphrase", "label": "true", "probs": [0.25, 0.75]},
]


def _jsonl(records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


CASES = {
    "not_json": ("p.jsonl", _jsonl(["this is not json"]), ":1:", "not valid JSON"),
    "truncated": (
        "p.jsonl",
        _jsonl([GOOD[0]]) + '{"id": "wic_semantic/r00000/par',
        ":2:",
        "truncated",
    ),
    "missing_id": ("p.jsonl", _jsonl([{"label": 1}]), "field 'id'", "required field is missing"),
    "missing_label": ("p.jsonl", _jsonl([{"id": GOOD[0]["id"]}]), "field 'label'", "missing"),
    "duplicate": (
        "p.jsonl",
        _jsonl([GOOD[0], GOOD[0]]),
        ":2: field 'id'",
        "duplicate id (first seen on line 1)",
    ),
    "unknown_id": (
        "p.jsonl",
        _jsonl([{"id": "wic_semantic/r99999/original", "label": 0}]),
        "'wic_semantic/r99999/original'",
        "unknown id",
    ),
    "unknown_suite": (
        "p.jsonl",
        _jsonl([{"id": "wic_semantik/r00000/original", "label": 0}]),
        ":1: field 'id'",
        "unknown suite 'wic_semantik'",
    ),
    "id_not_string": ("p.jsonl", _jsonl([{"id": 7, "label": 0}]), "value 7", "non-empty string"),
    "label_float": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": 1.5}]),
        "value 1.5",
        "integer label index",
    ),
    "label_bool": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": True}]),
        "value True",
        "integer label index",
    ),
    "label_null": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": None}]),
        "value None",
        "integer label index",
    ),
    "label_range": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": 5}]),
        "value 5",
        "out of range 0..1",
    ),
    "probs_length": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": 0, "probs": [0.2, 0.3, 0.5]}]),
        "field 'probs'",
        "expected 2 probabilities",
    ),
    "probs_sum": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": 0, "probs": [0.2, 0.3]}]),
        "field 'probs'",
        "must sum to 1",
    ),
    "probs_nan": (
        "p.jsonl",
        _jsonl(['{"id": "wic_semantic/r00000/original", "label": 0, "probs": [NaN, 1.0]}']),
        "field 'probs'",
        "finite",
    ),
    "probs_negative": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": 0, "probs": [-0.5, 1.5]}]),
        "field 'probs'",
        "finite and >= 0",
    ),
    "probs_type": (
        "p.jsonl",
        _jsonl([{"id": GOOD[0]["id"], "label": 0, "probs": "0.5,0.5"}]),
        "field 'probs'",
        "list of numbers",
    ),
    "empty": ("p.jsonl", "", "p.jsonl", "the file is empty"),
    "blank_lines_only": ("p.jsonl", "\n\n", "p.jsonl", "no prediction records"),
    "bad_encoding": (
        "p.jsonl",
        b'{"id": "wic_semantic/r00000/original", "label": "\xff"}\n',
        ":1:",
        "not valid UTF-8",
    ),
    "not_object": ("p.jsonl", _jsonl(["[1, 2]"]), ":1:", "JSON object"),
    "unknown_extension": ("p.txt", _jsonl(GOOD), "p.txt", "unknown file type"),
    "csv_missing_column": ("p.csv", "id,prediction\nx,1\n", "field 'label'", "required column"),
    "csv_probs": (
        "p.csv",
        'id,label,probs\nwic_semantic/r00000/original,0,"[0.5,"\n',
        ":2: field 'probs'",
        "JSON list",
    ),
    "parquet_garbage": ("p.parquet", b"PAR1 not really", "p.parquet", "not a readable Parquet"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_file_is_rejected(case, becel_folder, tmp_path, capsys):
    name, content, where, message = CASES[case]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    out = tmp_path / "results.json"
    code = main(["score", str(path), "--data", str(becel_folder), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert str(path) in err and where in err and message in err, err
    assert err.count("\n") == 1  # one clear message
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_free_text_label_is_an_invalid_answer(becel_folder, tmp_path):
    from consistency_bench.bench.predictions.read import read_predictions
    from consistency_bench.bench.scoring.engine import SuiteFolder

    path = tmp_path / "p.jsonl"
    path.write_text(_jsonl([{"id": GOOD[0]["id"], "label": "I think they are the same"}, GOOD[1]]))
    folder = SuiteFolder(becel_folder)
    preds = read_predictions(path, folder.manifest, folder.ids)
    assert preds.suites["wic_semantic"].pred.tolist() == [-1, 1]
    assert preds.suites["wic_semantic"].probs is None  # not every row has probs


def test_same_predictions_in_three_formats(becel_folder, tmp_path):
    from consistency_bench.bench.predictions.read import read_predictions
    from consistency_bench.bench.scoring.engine import SuiteFolder

    folder = SuiteFolder(becel_folder)
    records = [{"id": GOOD[0]["id"], "label": 0, "probs": [0.9, 0.1]}, {**GOOD[1]}]
    (tmp_path / "p.jsonl").write_text(_jsonl(records))
    (tmp_path / "p.csv").write_text(
        "id,label,probs\n" + "".join(f'{r["id"]},{r["label"]},"{r["probs"]}"\n' for r in records)
    )
    names = {0: "false", 1: "true", "true": "true"}  # a typed column: label names throughout
    rows = [{**r, "label": names[r["label"]]} for r in records]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "p.parquet")
    got = []
    for name in ("p.jsonl", "p.csv", "p.parquet"):
        suite = read_predictions(tmp_path / name, folder.manifest, folder.ids).suites[
            "wic_semantic"
        ]
        got.append((suite.ids.to_pylist(), suite.pred.tolist(), suite.probs.tolist()))
    assert got[0] == got[1] == got[2]
    assert got[0][1] == [0, 1]
