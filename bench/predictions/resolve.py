"""Matching a file's ids against the built suites: split by suite, unknown ids and duplicates.

:func:`resolve_fast` takes the columnar pass's columns and returns ``None`` on any problem;
:func:`resolve_columns` is the authoritative check, which names the line of the first one.
Labels and probabilities are normalised by :mod:`consistency_bench.bench.predictions.labels`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from consistency_bench.bench.errors import PredictionFileError, shorten
from consistency_bench.bench.io.arrays import float64, indices, int64, offsets, valid
from consistency_bench.bench.predictions.labels import LabelColumn, resolve_labels, resolve_probs
from consistency_bench.bench.predictions.types import Columns, SuitePredictions


def _suite_of(ids: pa.Array) -> pa.Array:
    parts = pc.split_pattern(ids, "/", max_splits=1)
    return pc.list_element(parts, 0)


def resolve_columns(path: str, columns: Columns, manifest: dict, suite_ids: dict) -> dict:
    """Split the line-by-line pass's columns by suite; the authoritative check.

    Raises:
        PredictionFileError: No records, a duplicate id, an unknown suite or id, an integer
            label out of range or a ``probs`` row of the wrong length, naming the first
            one's line (in file order within each check).

    """
    ids = columns.ids if isinstance(columns.ids, pa.Array) else pa.array(columns.ids, pa.string())
    n = len(ids)
    if n == 0:
        raise PredictionFileError(path, "the file has no prediction records")
    lines = columns.lines if columns.lines is not None else np.arange(1, n + 1)

    def fail(position: int, message: str, field: str = "id", value: object = None) -> None:
        raise PredictionFileError(
            path,
            message,
            line=int(lines[position]),
            field=field,
            value=ids[position].as_py() if value is None else value,
            has_value=True,
        )

    counts = pc.value_counts(ids)
    dup = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(dup):
        first = dup[0]["values"].as_py()
        where = np.flatnonzero(pc.equal(ids, first).to_numpy(zero_copy_only=False))
        fail(int(where[1]), f"duplicate id (first seen on line {int(lines[where[0]])})")

    encoded = pc.dictionary_encode(_suite_of(ids))
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
    out = {}
    for code, name in enumerate(encoded.dictionary.to_pylist()):
        positions = order[bounds[code] : bounds[code + 1]]
        if name not in manifest:
            fail(
                int(positions[0]),
                f"unknown suite {shorten(name, 40)} (known: {', '.join(sorted(manifest))})",
            )
        entry = manifest[name]
        label_names = entry["label_names"]
        sub_ids = ids.take(pa.array(positions))
        known = pc.is_in(sub_ids, value_set=suite_ids(name)).to_numpy(zero_copy_only=False)
        if not known.all():
            fail(
                int(positions[np.flatnonzero(~known)[0]]),
                f"unknown id: not a row of suite {name!r}",
            )
        pred, first_invalid = resolve_labels(path, columns.labels, positions, label_names, lines)
        probs = resolve_probs(path, columns.probs, positions, len(label_names), lines, ids)
        out[name] = SuitePredictions(sub_ids, pred, probs, lines[positions], first_invalid)
    return out


def _complete_runs(ids: pa.Array, manifest: dict, suite_ids) -> dict[str, int] | None:
    """Start of each suite when the file is whole suites, each in suite order; else ``None``.

    The usual layout (what ``predict`` writes): one comparison of buffers per suite, no split
    of every id, no hashing. A suite met twice is a duplicate: ``None`` too.
    """
    starts: dict[str, int] = {}
    position, n = 0, len(ids)
    while position < n:
        name = ids[position].as_py().split("/", 1)[0]
        if name in starts or name not in manifest:
            return None
        suite = suite_ids(name)
        if position + len(suite) > n or not ids.slice(position, len(suite)).equals(suite):
            return None
        starts[name] = position
        position += len(suite)
    return starts


# One piece (over 60 lines): one columnar pass whose fast paths share the split columns.
def resolve_fast(columns: Columns, manifest: dict, suite_ids) -> dict | None:
    """Split the columnar pass's columns by suite, or ``None`` when the file has any problem.

    Checks what :func:`resolve_columns` checks (duplicate, unknown suite, unknown id, integer
    label out of range, probs length), each id once: a suite whose rows the file lists completely
    and in suite order is matched by one buffer comparison, any other by one ``index_in`` that also
    gives the alignment. Any failure returns ``None``: the line-by-line pass then names the
    line. Makes no pyarrow call that imports pandas (consistency_bench.bench.io.arrays).
    """
    ids, n = columns.ids, len(columns.ids)
    if n == 0:
        return None
    runs = _complete_runs(ids, manifest, suite_ids)
    if runs is not None:  # every suite complete and in suite order: nothing to hash
        names, order = list(runs), None
        bounds = np.asarray([*runs.values(), n])
    else:
        parts = pc.split_pattern(ids, "/", max_splits=1)
        encoded = pc.dictionary_encode(parts.values.take(indices(offsets(parts)[:-1])))
        codes, names = int64(encoded.indices), encoded.dictionary.to_pylist()
        del parts, encoded
        if any(name not in manifest for name in names):
            return None
        if (codes[1:] >= codes[:-1]).all():  # suites in runs, in order of first appearance
            order = None
            bounds = np.searchsorted(codes, np.arange(len(names) + 1))
        else:
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
    labels = LabelColumn(columns.labels)
    probs = columns.probs
    if probs is not None:
        present, starts = valid(probs), offsets(probs)
        lengths, child = np.diff(starts), float64(probs.values)
    out = {}
    for code, name in enumerate(names):
        start, stop = int(bounds[code]), int(bounds[code + 1])
        count = stop - start
        positions = np.arange(start, stop) if order is None else order[start:stop]
        contiguous = int(positions[-1]) - int(positions[0]) == count - 1
        rows = slice(int(positions[0]), int(positions[0]) + count) if contiguous else positions
        suite = suite_ids(name)
        sub_ids = ids.slice(rows.start, count) if contiguous else ids.take(indices(positions))
        matched = None
        if not (count == len(suite) and sub_ids.equals(suite)):
            matched = int64(pc.index_in(sub_ids, value_set=suite))
            if (matched < 0).any() or np.bincount(matched).max() > 1:
                return None  # an unknown id, or a duplicate
        label_names = manifest[name]["label_names"]
        n_labels = len(label_names)
        resolved = labels.suite(rows, label_names)
        if resolved is None:
            return None
        pred, invalid = resolved
        first_invalid = None
        if invalid is not None:
            value = labels.texts[labels.values[rows][invalid]]
            first_invalid = (int(positions[invalid]) + 1, value)
        suite_probs = None
        if probs is not None:
            here = present[rows]
            if (lengths[rows][here] != n_labels).any():
                return None
            if here.all():
                if child is None:
                    return None
                first = starts[rows]
                if contiguous:
                    suite_probs = child[first[0] : first[0] + count * n_labels]
                    suite_probs = suite_probs.reshape(count, n_labels)
                else:
                    suite_probs = child[first[:, None] + np.arange(n_labels)]
        out[name] = SuitePredictions(
            sub_ids, pred, suite_probs, positions + 1, first_invalid, matched
        )
    return out
