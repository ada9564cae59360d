"""Statistics of the predictions on the originals (:mod:`bench.metrics.consistent`).

What the leaderboard's degenerate-entry flags read: accuracy on the labelled originals, the
majority rate and the share of the most frequent prediction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.metrics.consistent.score import _label_counts, correct


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
