"""Statistics of the predictions on the originals (:mod:`consistency_bench.bench.metrics.consistent`).

What the leaderboard's degenerate-entry flags read: accuracy on the labelled originals, the
majority rate and the share of the most frequent prediction.
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from consistency_bench.bench.metrics.consistent.score import _label_counts, correct

#: Share of one label at or above which a set is "near constant": predictions (the degenerate
#: flag), or gold labels (then the tests on the originals cannot tell: BECEL's negational sets).
NEAR_CONSTANT = 0.95


@dataclass(frozen=True)
class OriginalStats:
    """What the degenerate-entry flags need about the predictions on the originals.

    Attributes:
        n: Labelled original rows.
        correct: Of them, predicted right.
        majority_rate: Share of the most frequent gold label.
        top_prediction_share: Share of the most frequent prediction (invalid answers count as
            one answer).

    """

    n: int
    correct: int
    majority_rate: float | None
    top_prediction_share: float | None

    @property
    def testable(self) -> bool:
        """Whether the degenerate tests apply: labelled originals, not >= 95% one gold class."""
        return bool(self.n) and self.majority_rate is not None and (
            self.majority_rate < NEAR_CONSTANT)

    def as_metrics(self) -> dict[str, object]:
        """The fields written into a results entry's ``metrics``."""
        return {
            "n_original": self.n,
            "n_original_correct": self.correct,
            "majority_rate": self.majority_rate,
            "top_prediction_share": self.top_prediction_share,
        }


def original_stats(pred: np.ndarray, gold: np.ndarray) -> OriginalStats:
    """Counts behind the degenerate-entry test over the labelled original rows."""
    pred, gold = np.asarray(pred), np.asarray(gold)
    keep = gold >= 0
    pred, gold = pred[keep], gold[keep]
    if not len(gold):
        return OriginalStats(0, 0, None, None)
    gold_counts, pred_counts = _label_counts(gold), _label_counts(pred)
    if gold_counts is None:
        _, gold_counts = np.unique(gold, return_counts=True)
    if pred_counts is None:
        _, pred_counts = np.unique(pred, return_counts=True)
    return OriginalStats(
        n=len(gold),
        correct=int(correct(pred, gold).sum()),
        majority_rate=float(gold_counts.max() / len(gold)),
        top_prediction_share=float(pred_counts.max() / len(pred)),
    )


def pooled_original_stats(codes: np.ndarray, gold: np.ndarray, pred: np.ndarray) -> OriginalStats:
    """The statistics of :func:`original_stats` over *distinct* labelled originals.

    A task's suites reuse the same originals (MRPC's four salad suites and ``mrpc_calm`` hold
    the same 408 pairs): pooled row by row, one item would count four or five times in the
    degenerate test. Here each distinct item (``codes``: one integer per text identity) counts
    once, with the gold label of its first labelled occurrence and its most frequent
    prediction over its occurrences (ties: the earliest; the caller orders the rows by suite
    name, then by row).
    """
    codes, gold, pred = (np.asarray(a, dtype=np.int64) for a in (codes, gold, pred))
    keep = np.flatnonzero(gold >= 0)
    if not len(keep):
        return original_stats(pred[keep], gold[keep])
    c, p = codes[keep], pred[keep]
    width = int(max(p.max(), 0)) + 2  # -1 (invalid) .. max label
    pairs, first, count = np.unique(c * width + (p + 1), return_index=True, return_counts=True)
    order = np.lexsort((first, -count, pairs // width))  # per item: most frequent, earliest
    item = pairs[order] // width
    lead = np.ones(len(order), bool)
    lead[1:] = item[1:] != item[:-1]
    chosen = order[lead]
    modal = pairs[chosen] % width - 1
    _, first_of_item = np.unique(c, return_index=True)  # items in increasing code order
    return original_stats(modal, gold[keep][first_of_item])
