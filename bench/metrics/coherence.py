"""Coherence metrics (Storks and Chai, 2021, sections 3-4) as pure array functions.

Every example contributes one row per consecutive span; its end-task input is the full span.

- accuracy          = (1/N) sum_e 1(end prediction of e correct)
- strict coherence  = (1/N) sum_e 1(end prediction correct and every span prediction correct)
- lenient coherence = (1/N) sum_e 1(end prediction correct) * (share of e's spans correct)

Lenient coherence counts span accuracy only where the end prediction is correct, as the
authors' evaluation code does (so lenient <= accuracy, as in their Table 1).

Multiple choice (ART): a span prediction is *confident* when the margin between the two
highest probabilities is at least ``theta``; a span whose gold answer is "no confident choice"
is right exactly when the prediction is not confident, any other span when the prediction is
confident and picks the gold choice. ``theta`` is swept on a grid and the best value reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from consistency_bench.bench.metrics.becel import INVALID

#: Gold value of a span whose answer is "no confident choice".
NO_CHOICE = -1
#: The authors' threshold grid: 0.05, 0.10, ..., 1.00.
THETA_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(1, 21))


@dataclass(frozen=True)
class Coherence:
    """Coherence of one set of examples.

    Attributes:
        accuracy: End-task accuracy.
        strict: Strict coherence.
        lenient: Lenient coherence.
        strict_per_example: 0/1 per example (for confidence intervals).
        lenient_per_example: Lenient value per example.
        span_accuracy: Mean span accuracy, not conditioned on the end prediction.

    """

    accuracy: float
    strict: float
    lenient: float
    strict_per_example: np.ndarray
    lenient_per_example: np.ndarray
    span_accuracy: float


def coherence(example: np.ndarray, span_correct: np.ndarray, end_correct: np.ndarray) -> Coherence:
    """Accuracy, strict and lenient coherence.

    Args:
        example: ``(R,)`` dense example codes ``0..N-1``, one per span row.
        span_correct: ``(R,)`` bool, whether each span prediction is right.
        end_correct: ``(N,)`` bool, whether each example's end-task prediction is right.

    Raises:
        ValueError: Shapes differ, codes are out of range, or an example has no span rows.

    """
    example = np.asarray(example)
    span_correct = np.asarray(span_correct, dtype=bool)
    end_correct = np.asarray(end_correct, dtype=bool)
    if example.ndim != 1 or example.shape != span_correct.shape:
        raise ValueError(
            f"example and span_correct must be equal-length 1-d arrays; got {example.shape} "
            f"and {span_correct.shape}"
        )
    n = len(end_correct)
    if n == 0:
        raise ValueError("no examples to score")
    if len(example) and (example.min() < 0 or example.max() >= n):
        raise ValueError(
            f"example codes must lie in [0, {n}); got {example.min()}..{example.max()}"
        )
    spans = np.bincount(example, minlength=n)
    if (spans == 0).any():
        raise ValueError(f"example {int(np.argmax(spans == 0))} has no span rows")
    right = np.bincount(example, weights=span_correct, minlength=n)
    share = right / spans
    strict = end_correct & (right == spans)
    lenient = np.where(end_correct, share, 0.0)
    return Coherence(
        accuracy=float(end_correct.mean()),
        strict=float(strict.mean()),
        lenient=float(lenient.mean()),
        strict_per_example=strict,
        lenient_per_example=lenient,
        span_accuracy=float(share.mean()),
    )


def margin(probs: np.ndarray) -> np.ndarray:
    """Difference between the two highest probabilities of each row (``|p1 - p2|`` for two)."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[1] < 2:
        raise ValueError(f"probs must be (rows, labels >= 2); got {probs.shape}")
    top = np.sort(probs, axis=1)
    return top[:, -1] - top[:, -2]


def choice_correct(
    pred: np.ndarray, probs: np.ndarray, gold: np.ndarray, theta: float
) -> np.ndarray:
    """Per-row 0/1 for multiple-choice spans under the confidence threshold ``theta``.

    Args:
        pred: ``(R,)`` predicted choice; ``INVALID`` is never right.
        probs: ``(R, C)`` probabilities of the choices.
        gold: ``(R,)`` gold choice, or ``NO_CHOICE`` where neither choice is implausible.
        theta: Confidence threshold on the probability margin.

    """
    pred, gold = np.asarray(pred), np.asarray(gold)
    if pred.shape != gold.shape or pred.ndim != 1 or len(probs) != len(pred):
        raise ValueError(
            f"pred, gold and probs must have one entry per row; got {pred.shape}, {gold.shape}, "
            f"{np.shape(probs)}"
        )
    confident = margin(probs) >= theta
    valid = pred != INVALID
    return valid & np.where(gold == NO_CHOICE, ~confident, confident & (pred == gold))


@dataclass(frozen=True)
class Sweep:
    """Coherence over a grid of thresholds.

    Attributes:
        grid: The thresholds, in order.
        strict: Strict coherence per threshold.
        lenient: Lenient coherence per threshold.
        best_strict: Index of the first threshold with the highest strict coherence.
        best_lenient: Index of the first threshold with the highest lenient coherence.
        results: The full :class:`Coherence` per threshold.

    """

    grid: tuple[float, ...]
    strict: np.ndarray
    lenient: np.ndarray
    best_strict: int
    best_lenient: int
    results: tuple[Coherence, ...]


def sweep_theta(
    example: np.ndarray,
    pred: np.ndarray,
    probs: np.ndarray,
    gold: np.ndarray,
    end_correct: np.ndarray,
    grid: Sequence[float] = THETA_GRID,
) -> Sweep:
    """Strict and lenient coherence of multiple-choice spans for every threshold in ``grid``."""
    grid = tuple(float(t) for t in grid)
    if not grid:
        raise ValueError("the threshold grid is empty")
    results = tuple(
        coherence(example, choice_correct(pred, probs, gold, t), end_correct) for t in grid
    )
    strict = np.array([r.strict for r in results])
    lenient = np.array([r.lenient for r in results])
    return Sweep(
        grid, strict, lenient, int(np.argmax(strict)), int(np.argmax(lenient)), results
    )
