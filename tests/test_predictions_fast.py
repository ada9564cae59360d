"""The columnar pass of the prediction reader gives exactly what the line-by-line pass gives.

Inline fixtures: two tiny suites, files in suite order, shuffled, partial, with label names,
index strings, free text and probabilities missing on some rows; every malformed layout makes
the columnar pass step aside (``None``) so that the line-by-line pass names the line.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from consistency_bench.bench.predictions.fast import fast_columns
from consistency_bench.bench.predictions.records import line_columns
from consistency_bench.bench.predictions.resolve import resolve_columns, resolve_fast
from tests.helpers import python_stdout

MANIFEST = {
    "pairs": {"label_names": ["entailment", "not_entailment"]},
    "three": {"label_names": ["entailment", "neutral", "contradiction"]},
}
SUITE_IDS = {
    name: [f"{name}/r{i:03d}/{v}" for i in range(6) for v in ("original", "paraphrase")]
    for name in MANIFEST
}


def suite_ids(name: str) -> pa.Array:
    return pa.array(SUITE_IDS[name], pa.string())


def _records(labels="int", probs=True, seed=0) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for name, ids in SUITE_IDS.items():
        k = len(MANIFEST[name]["label_names"])
        for row_id in ids:
            label = rng.randrange(k)
            record = {"id": row_id, "label": label}
            if labels == "str":
                record["label"] = rng.choice([
                    MANIFEST[name]["label_names"][label].upper().replace("_", " "),
                    str(label), f"{label}.0", "no idea", "7"])
            if probs:
                weights = [rng.random() + 0.01 for _ in range(k)]
                record["probs"] = [w / sum(weights) for w in weights]
            out.append(record)
    return out


def _payload(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _both(payload: bytes):
    columns = fast_columns(payload, "jsonl")
    assert columns is not None
    fast = resolve_fast(columns, MANIFEST, suite_ids)
    slow = resolve_columns("p.jsonl", line_columns(Path("p.jsonl"), payload, "jsonl"), MANIFEST,
                           suite_ids)
    return fast, slow


def _same(fast, slow) -> None:
    assert list(fast) == list(slow)
    for name in slow:
        a, b = fast[name], slow[name]
        assert a.ids.equals(b.ids)
        assert a.pred.dtype == b.pred.dtype and a.pred.tolist() == b.pred.tolist()
        assert a.lines.tolist() == b.lines.tolist()
        assert a.first_invalid == b.first_invalid
        assert (a.probs is None) == (b.probs is None)
        if a.probs is not None:
            assert a.probs.shape == b.probs.shape
            assert np.array_equal(a.probs, b.probs)
        if a.rows is not None:  # the alignment the reader found: the rows of those ids
            assert [SUITE_IDS[name][i] for i in a.rows] == a.ids.to_pylist()


LAYOUTS = {
    "suite order": lambda r: r,
    "shuffled": lambda r: random.Random(1).sample(r, len(r)),
    "partial": lambda r: r[:3] + r[5:20],
    "one suite": lambda r: r[12:],
    "interleaved": lambda r: [x for pair in zip(r[:12], r[12:], strict=True) for x in pair],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("labels", ["int", "str"])
@pytest.mark.parametrize("probs", [True, False])
def test_columnar_pass_equals_line_by_line_pass(layout, labels, probs):
    records = LAYOUTS[layout](_records(labels, probs))
    _same(*_both(_payload(records)))


def test_probs_missing_on_some_rows_are_ignored_for_that_suite_only():
    records = _records()
    del records[3]["probs"]
    fast, slow = _both(_payload(records))
    _same(fast, slow)
    assert fast["pairs"].probs is None and fast["three"].probs is not None


BAD = {
    "duplicate": lambda r: [*r, r[4]],
    "unknown suite": lambda r: [*r, {"id": "nope/r000/original", "label": 0}],
    "unknown id": lambda r: [*r, {"id": "pairs/r999/original", "label": 0}],
    "label out of range": lambda r: [*r[:2], {**r[2], "label": 2}, *r[3:]],
    "probs length": lambda r: [*r[:2], {**r[2], "probs": [0.2, 0.3, 0.5]}, *r[3:]],
}


@pytest.mark.parametrize("case", BAD)
def test_columnar_pass_steps_aside_on_every_problem(case):
    columns = fast_columns(_payload(BAD[case](_records())), "jsonl")
    assert columns is not None
    assert resolve_fast(columns, MANIFEST, suite_ids) is None


def test_reading_predictions_does_not_import_pandas(becel_folder, tmp_path):
    """pyarrow imports pandas (0.3 s CPU, 40 MiB) on pa.array, to_numpy, scalar arguments."""
    from tests.helpers import write_predictions

    suites = ["snli_transitive", "rte_semantic", "sst2_additive"]
    pred = write_predictions(becel_folder, tmp_path / "p.jsonl", suites)
    lines = pred.read_text().splitlines()
    random.Random(0).shuffle(lines)  # the index_in route as well as the in-order one
    (tmp_path / "shuffled.jsonl").write_text("\n".join(lines) + "\n")
    script = (
        "import sys\n"
        "from consistency_bench.bench.scoring.engine import score_file\n"
        f"for p in ({str(pred)!r}, {str(tmp_path / 'shuffled.jsonl')!r}):\n"
        f"    score_file(p, {str(becel_folder)!r}, n_boot=10)\n"
        "print('pandas' in sys.modules)\n"
    )
    assert python_stdout(script).strip() == "False"
