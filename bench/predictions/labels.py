"""Labels and probabilities of a suite's rows: label names or indices, one row of probs per label.

A string matches a label name ignoring case, spaces, ``_`` and ``-``
(:func:`consistency_bench.bench.modeling.label_map.normalise_label`), or is an index written as
text; anything else is an
invalid answer (``INVALID``), counted, not an error. An out-of-range integer index and a
``probs`` row of the wrong length are errors.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from consistency_bench.bench.errors import PredictionFileError
from consistency_bench.bench.io.arrays import int64
from consistency_bench.bench.metrics.becel import INVALID
from consistency_bench.bench.modeling.label_map import normalise_label


class LabelColumn:
    """The file's label column, converted once: int64 indices, or dictionary codes of text."""

    #: Up to this many distinct label strings are resolved once per suite as a lookup table.
    TABLE = 4096

    def __init__(self, labels: pa.Array):
        self.integer = pa.types.is_integer(labels.type)
        if self.integer:
            self.values = int64(labels)
        else:
            encoded = pc.dictionary_encode(labels)
            self.values = int64(encoded.indices)
            self.texts = encoded.dictionary.to_pylist()

    def suite(self, rows: slice | np.ndarray, label_names: list[str]):
        """``(pred, first invalid position in rows or None)``; ``None`` on an out-of-range index."""
        values = self.values[rows]
        n_labels = len(label_names)
        if self.integer:
            if len(values) and (values.min() < 0 or values.max() >= n_labels):
                return None
            return values, None
        lookup = {normalise_label(name): i for i, name in enumerate(label_names)}

        def resolve(codes) -> np.ndarray:
            found = (_label_text(self.texts[c], lookup, n_labels) for c in codes)
            return np.fromiter((INVALID if f is None else f for f in found), np.int64, len(codes))

        if len(self.texts) <= self.TABLE:
            pred = resolve(range(len(self.texts)))[values]
        else:
            distinct, inverse = np.unique(values, return_inverse=True)
            pred = resolve(distinct.tolist())[inverse]
        bad = np.flatnonzero(pred == INVALID)
        return pred, (int(bad[0]) if len(bad) else None)


def _out_of_range(path, label_names, line: int, value: int) -> PredictionFileError:
    return PredictionFileError(
        path,
        f"label index out of range 0..{len(label_names) - 1} ({label_names})",
        line=line,
        field="label",
        value=value,
        has_value=True,
    )


#: A label index written as text: ASCII digits, optionally ``.0`` (CSV exports), blanks around.
_INDEX_TEXT = re.compile(r"[ \t]*([0-9]{1,18})(?:\.0*)?[ \t]*")


def _index_text(value: str) -> int | None:
    """``"1"``, ``" 1 "``, ``"1.0"`` -> 1; ``None`` for any other text.

    Only ASCII digits: ``float()`` would also read ``"١"`` (Arabic-Indic one), ``"1e0"``,
    ``"1_0"`` or ``"+1"`` as numbers; those are answers, not indices.
    """
    match = _INDEX_TEXT.fullmatch(value)
    return int(match[1]) if match else None


def _label_text(value: str, lookup: dict[str, int], n_labels: int) -> int | None:
    """The label index a label string stands for; ``None`` for an invalid answer.

    A label name (``lookup``: normalised name -> index) first, then an index written as text
    (``"1"``, ``"1.0"``) in range; ``"7"`` on a 2-label task is free text, not an error.
    """
    found = lookup.get(normalise_label(value))
    if found is None:
        found = _index_text(value)
        if found is not None and not 0 <= found < n_labels:
            found = None
    return found


def resolve_labels(path, labels, positions, label_names,
                   lines) -> tuple[np.ndarray, tuple | None]:
    """Label indices (``INVALID`` for invalid answers) and the first invalid answer.

    A string matches a label name ignoring case, spaces, ``_`` and ``-`` (as ``predict``
    matches model labels, :func:`consistency_bench.bench.modeling.label_map.normalise_label`);
    otherwise a string that is
    an integer in range (``"1"``, ``"1.0"``) is an index. Anything else, an out-of-range
    ``"7"`` included, is an invalid answer; an out-of-range *integer* is an error.
    """
    lookup = {normalise_label(name): i for i, name in enumerate(label_names)}
    if isinstance(labels, pa.Array):
        taken = labels.take(pa.array(positions))
        if pa.types.is_integer(taken.type):
            values = taken.to_numpy(zero_copy_only=False).astype(np.int64)
            bad = (values < 0) | (values >= len(label_names))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise _out_of_range(path, label_names, int(lines[positions[i]]), int(values[i]))
            return values, None
        texts = taken.to_pylist()
    else:
        texts = [labels[p] for p in positions]
    out = np.empty(len(texts), dtype=np.int64)
    first = None
    cache: dict[str, int | None] = {}
    for i, value in enumerate(texts):
        if isinstance(value, str):
            if value not in cache:
                cache[value] = _label_text(value, lookup, len(label_names))
            index = cache[value]
            if index is None:
                out[i] = INVALID
                if first is None:
                    first = (int(lines[positions[i]]), value)
                continue
            value = index
        if 0 <= value < len(label_names):
            out[i] = value
        else:
            raise _out_of_range(path, label_names, int(lines[positions[i]]), value)
    return out, first


def resolve_probs(path, probs, positions, n_labels, lines, ids) -> np.ndarray | None:
    """The ``(rows, n_labels)`` probabilities of ``positions``; ``None`` unless every row has them.

    Raises:
        PredictionFileError: A row with other than ``n_labels`` probabilities.

    """
    if probs is None:
        return None
    if isinstance(probs, pa.Array):
        taken = probs.take(pa.array(positions))
        lengths = pc.fill_null(pc.list_value_length(taken), n_labels)
        mismatch = (lengths.to_numpy(zero_copy_only=False) != n_labels).any()
        rows = taken.to_pylist() if mismatch or taken.null_count else None
        if rows is None:
            flat = taken.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
            return flat.reshape(len(positions), n_labels)
    else:
        rows = [probs[p] for p in positions]
    for i, row in enumerate(rows):
        if row is not None and len(row) != n_labels:
            raise PredictionFileError(
                path,
                f"expected {n_labels} probabilities (one per label), got {len(row)}",
                line=int(lines[positions[i]]),
                field="probs",
                value=row,
                has_value=True,
            )
    if any(row is None for row in rows):
        return None
    return np.asarray(rows, dtype=np.float64).reshape(len(positions), n_labels)
