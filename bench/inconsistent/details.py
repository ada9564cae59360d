"""An entry's details: every suite row joined with its answer and its group's verdict.

The Open LLM Leaderboard publishes a "details" dataset per model; this is the same for a
consistency benchmark: one row per suite row with the entry's prediction, the gold label, the
probabilities, whether the answer is right, and the verdict of the row's group (unit) from
:mod:`consistency_bench.bench.inconsistent.verdicts`, so ``consistent`` here is exactly what
``inspect`` and the
scorers count. Every table has :data:`DETAILS_SCHEMA`, whatever the suite, so the tables of
all entries and kinds load as one dataset (its splits must share their features).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa

from consistency_bench.bench.inconsistent.verdicts import INCONSISTENT, STATUS, Verdicts
from consistency_bench.bench.metrics.becel import INVALID
from consistency_bench.bench.scorers.contract import Aligned, ScoreOptions, SuiteData

#: The columns of a details table, in order (docs/leaderboard.md, "Details dataset").
DETAILS_SCHEMA = pa.schema([
    ("entry", pa.string()), ("suite", pa.string()), ("task", pa.string()),
    ("kind", pa.string()), ("id", pa.string()), ("group", pa.string()),
    ("variant", pa.string()), ("text", pa.string()), ("text_pair", pa.string()),
    ("label", pa.string()), ("prediction", pa.string()), ("probs", pa.list_(pa.float64())),
    ("correct", pa.bool_()), ("unit", pa.string()), ("status", pa.string()),
    ("consistent", pa.bool_()), ("extra", pa.string()),
])
#: Suite columns kept in ``extra`` (a JSON object per row; empty values left out).
EXTRA_COLUMNS = ("tag", "rule", "constraint", "antecedent_ids", "agreement_with", "transform",
                 "span_start", "span_end", "span_label", "word")


def _names(label_names: list[str], codes: np.ndarray) -> pa.Array:
    """Label names of ``codes``; null where a code is not a label (unlabelled, invalid)."""
    codes = np.asarray(codes, dtype=np.int64)
    index = pa.array(codes, mask=(codes < 0) | (codes >= len(label_names)), type=pa.int64())
    return pa.array(label_names, pa.string()).take(index)


def _probs(aligned: Aligned, n: int) -> pa.Array:
    if aligned.probs is None:
        return pa.nulls(n, pa.list_(pa.float64()))
    width = aligned.probs.shape[1]
    offsets = pa.array(np.arange(0, n * width + 1, width, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(aligned.probs.ravel(), pa.float64()))


def _extra(data: SuiteData) -> pa.Array:
    present = [c for c in EXTRA_COLUMNS if c in data.column_names]
    n = len(data.group)
    if not present:
        return pa.nulls(n, pa.string())
    columns = {c: data.arrow(c).to_pylist() for c in present}
    out = []
    for i in range(n):
        found = {c: v[i] for c, v in columns.items() if v[i] not in (None, "", [])}
        out.append(json.dumps(found, ensure_ascii=False, sort_keys=True) if found else None)
    return pa.array(out, pa.string())


def _units(data: SuiteData, verdicts: Verdicts | None) -> tuple[np.ndarray, pa.Array]:
    """Per row, the unit it belongs to (-1: none), and the unit names.

    A row belongs to a unit when it is one of the unit's rows and in the anchor's group (a
    transitive unit's antecedents are rows of other groups, shared by several units).
    """
    unit = np.full(len(data.group), -1, dtype=np.int64)
    if verdicts is None:
        return unit, pa.array([], pa.string())
    rows = verdicts.rows
    anchor_rows = rows[:, verdicts.anchor]
    same = (rows >= 0) & (data.group[np.maximum(rows, 0)] == data.group[anchor_rows][:, None])
    unit[rows[same]] = np.broadcast_to(np.arange(len(rows))[:, None], rows.shape)[same]
    names = data.arrow("group").combine_chunks().take(pa.array(anchor_rows))
    return unit, names


def details_table(entry: str, data: SuiteData, aligned: Aligned,
                  verdicts: Verdicts | None) -> pa.Table:
    """The details rows of one suite (:data:`DETAILS_SCHEMA`), in the suite's row order."""
    n = len(data.group)
    pred, gold = aligned.pred, data.gold
    unit, unit_names = _units(data, verdicts)
    inside = unit >= 0
    index = pa.array(np.maximum(unit, 0), mask=~inside)
    if verdicts is None:
        status = consistent = pa.nulls(n, pa.string())
        consistent = pa.nulls(n, pa.bool_())
    else:
        codes = verdicts.status[np.maximum(unit, 0)]
        status = pa.array(STATUS, pa.string()).take(pa.array(codes.astype(np.int64),
                                                              mask=~inside))
        judged = inside & verdicts.judged[np.maximum(unit, 0)]
        consistent = pa.array(codes != INCONSISTENT, mask=~judged)
    info = data.info
    columns = {
        "entry": pa.array([entry] * n, pa.string()),
        "suite": pa.array([data.name] * n, pa.string()),
        "task": pa.array([info["task"]] * n, pa.string()),
        "kind": pa.array([info["kind"]] * n, pa.string()),
        "id": data.ids(),
        "group": data.arrow("group").combine_chunks().cast(pa.string()),
        "variant": data.arrow("variant").combine_chunks().cast(pa.string()),
        "text": data.arrow("text").combine_chunks().cast(pa.string()),
        "text_pair": data.arrow("text_pair").combine_chunks().cast(pa.string()),
        "label": _names(data.label_names, gold),
        "prediction": _names(data.label_names, pred),
        "probs": _probs(aligned, n),
        "correct": pa.array((pred == gold) & (pred != INVALID), mask=gold < 0),
        "unit": unit_names.take(index) if verdicts is not None else pa.nulls(n, pa.string()),
        "status": status,
        "consistent": consistent,
        "extra": _extra(data),
    }
    return pa.table(columns, schema=DETAILS_SCHEMA)


def entry_details(entry: str, predictions: str | os.PathLike, data: str | os.PathLike,
                  suites: Iterable[str] | None = None,
                  params: Mapping[str, object] | None = None) -> dict[str, pa.Table]:
    """An entry's details per metric kind (each suite's rows in suite order, suites by name).

    Args:
        entry: The entry's name (the ``entry`` column).
        predictions: Its prediction file.
        data: The built suite folder.
        suites: Only these suites (default: every suite the file covers completely).
        params: Scoring parameters, as ``score --param``.

    Raises:
        PredictionFileError: The file is malformed.
        DataError: A suite file does not match its manifest.

    """
    from consistency_bench.bench.inconsistent.inspect import judge
    from consistency_bench.bench.predictions.read import read_predictions
    from consistency_bench.bench.scoring.engine import SuiteFolder, align

    folder = SuiteFolder(Path(data))
    read = read_predictions(Path(predictions), folder.manifest, folder.ids)
    wanted = set(read.suites) if suites is None else set(suites) & set(read.suites)
    options = ScoreOptions(n_boot=1, params=dict(params or {}))
    by_kind: dict[str, list[pa.Table]] = {}
    for name in sorted(wanted):
        suite = folder.load(name)
        aligned = align(suite, read.suites[name])
        if isinstance(aligned, str):
            continue
        _, verdicts = judge(suite, aligned, options)
        by_kind.setdefault(suite.info["kind"], []).append(
            details_table(entry, suite, aligned, verdicts))
    return {kind: pa.concat_tables(tables) for kind, tables in sorted(by_kind.items())}
