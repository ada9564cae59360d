"""Turn prediction arrays in BECEL's own layout into a prediction file.

BECEL's evaluation script takes per-suite JSON objects of prediction arrays aligned with the
rows of the released files (``data/examples/*.json`` in the BECEL repository):

=========== ==========================================================================
kind        keys (each a list of label indices)
=========== ==========================================================================
semantic    ``original_preds``, ``paraphrase_preds`` (rows of semantic.tsv)
negational  ``original_preds``, ``negation_preds`` (rows of negational.tsv)
symmetric   ``original_preds``, ``symmetric_preds`` (rows of symmetric.tsv)
transitive  ``transitive_preds`` (rows of transitive.tsv), ``originated_preds`` (the whole
            source split: SNLI test, WiC train)
additive    ``first_preds``, ``second_preds``, ``merged_preds``, ``labels`` (the groups of
            the additive suite, in order)
=========== ==========================================================================
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from consistency_bench.bench.errors import PredictionFileError
from consistency_bench.bench.io.json_input import JsonFileError, load_json_file
from consistency_bench.bench.predictions.files import check_input_file

LAYOUT: dict[str, tuple[tuple[str, str], ...]] = {
    "semantic": (("original_preds", "original"), ("paraphrase_preds", "paraphrase")),
    "negational": (("original_preds", "original"), ("negation_preds", "negated")),
    "symmetric": (("original_preds", "original"), ("symmetric_preds", "swapped")),
    "transitive": (("transitive_preds", "transitive"), ("originated_preds", "source")),
    "additive": (("first_preds", "first"), ("second_preds", "second"), ("merged_preds", "merged")),
}


def convert(arrays: dict, data, path: str) -> list[dict]:
    """Prediction records for the rows of ``data`` (a :class:`consistency_bench.bench.scoring.engine.SuiteData`).

    Args:
        arrays: The parsed BECEL JSON object.
        data: The suite, as loaded from the built folder.
        path: The JSON file's name, for messages.

    Raises:
        PredictionFileError: A key is missing, an array has the wrong length, or a value is
            not a label index of the task.

    """  # noqa: E501
    kind = data.info["kind"]
    if kind not in LAYOUT:
        raise PredictionFileError(path, f"suite {data.name!r} of kind {kind!r} has no BECEL layout")
    if not isinstance(arrays, dict):
        raise PredictionFileError(path, "expected a JSON object of prediction arrays")
    ids = np.asarray(data.ids().to_pylist(), dtype=object)
    n_labels = len(data.label_names)
    records: list[dict] = []
    for key, variant in LAYOUT[kind]:
        if key not in arrays:
            expected = ", ".join(k for k, _ in LAYOUT[kind])
            raise PredictionFileError(
                path, f"missing key (a {kind} suite needs {expected})", field=key
            )
        values = arrays[key]
        rows = ids[data.variant == variant]
        if not isinstance(values, list) or len(values) != len(rows):
            got = len(values) if isinstance(values, list) else type(values).__name__
            raise PredictionFileError(
                path,
                f"has {got} predictions; suite {data.name!r} has {len(rows)} {variant!r} rows "
                "(arrays must be aligned with every row of the released file)",
                field=key,
            )
        for position, (row_id, value) in enumerate(zip(rows, values, strict=True)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n_labels:
                raise PredictionFileError(
                    path,
                    f"element {position} must be a label index 0..{n_labels - 1}",
                    field=key,
                    value=value,
                    has_value=True,
                )
            records.append({"id": str(row_id), "label": value})
    if kind == "additive" and "labels" in arrays:
        gold = data.gold[data.variant == "merged"].tolist()
        if arrays["labels"] != gold:
            raise PredictionFileError(
                path,
                "labels differ from the suite's gold labels: arrays are not aligned with it",
                field="labels",
            )
    return records


def convert_file(json_path: str | Path, suite: str, data_dir: str | Path, out: str | Path) -> int:
    """Convert a BECEL JSON file to a JSONL prediction file; returns the number of records."""
    from consistency_bench.bench.io.write import write_text
    from consistency_bench.bench.scoring.engine import SuiteFolder

    json_path = check_input_file(json_path)
    try:
        arrays = load_json_file(json_path)
    except JsonFileError as exc:  # the key given twice is the field
        raise PredictionFileError(exc.path, exc.reason, field=exc.key) from None
    data = SuiteFolder(data_dir).load(suite)
    records = convert(arrays, data, str(json_path))
    write_text(out, "".join(json.dumps(r) + "\n" for r in records))
    return len(records)
