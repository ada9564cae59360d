"""The types of a read prediction file: per-suite predictions, the file, the parsed columns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from consistency_bench.bench.metrics.becel import INVALID

#: How far a row's ``probs`` may sum from 1 (both passes check it).
PROB_TOLERANCE = 1e-3


@dataclass(frozen=True)
class SuitePredictions:
    """The predictions of one suite, in file order.

    Attributes:
        ids: Row ids.
        pred: Label index per row; ``INVALID`` (-1) for answers outside the label set.
        probs: ``(n, n_labels)`` probabilities when every row has them, else ``None``.
        lines: 1-based line (JSONL/CSV) or row (Parquet) of each record, for messages.
        first_invalid: ``(line, value)`` of the first invalid answer, ``None`` when none.
        rows: Position of each prediction among the suite's rows, when the reader already
            matched the ids against the suite (``None``: not matched, or the predictions list
            every row in suite order); saves :func:`consistency_bench.bench.scoring.engine.align` a
            second
            lookup.

    """

    ids: pa.Array
    pred: np.ndarray
    probs: np.ndarray | None
    lines: np.ndarray
    first_invalid: tuple[int, object] | None = None
    rows: np.ndarray | None = None

    @property
    def n_invalid(self) -> int:
        """Number of invalid answers (labels that are neither a label name nor an index)."""
        return int((self.pred == INVALID).sum())


@dataclass(frozen=True)
class Predictions:
    """A validated prediction file.

    Attributes:
        path: The file.
        sha256: Hash of the file's content (uncompressed for ``.gz``, so a stored
            ``.jsonl.gz`` has the hash of the JSONL it holds).
        rows: Number of records.
        suites: Per suite name, that suite's predictions.

    """

    path: str
    sha256: str
    rows: int
    suites: dict[str, SuitePredictions]

    def invalid_answers(self) -> dict:
        """Invalid answers: total, per suite, and the first one (line and value)."""
        by_suite = {n: s.n_invalid for n, s in sorted(self.suites.items()) if s.n_invalid}
        firsts = [s.first_invalid for s in self.suites.values() if s.first_invalid]
        first = min(firsts, key=lambda item: item[0]) if firsts else None
        return {
            "count": sum(by_suite.values()),
            "by_suite": by_suite,
            "first": {"line": first[0], "value": first[1]} if first else None,
        }


@dataclass
class Columns:
    """A file's ``id``, ``label`` and ``probs`` columns, before they are split by suite.

    Python lists from the line-by-line pass (:mod:`consistency_bench.bench.predictions.records`),
    pyarrow arrays
    from the columnar pass (:mod:`consistency_bench.bench.predictions.fast`).
    """

    ids: list | pa.Array
    labels: list | pa.Array
    probs: list | pa.Array | None
    lines: np.ndarray | None  # None: positions, lines not known exactly (fast pass)
