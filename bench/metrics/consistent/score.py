"""Consistent accuracy of one suite and its chance correction (:mod:`consistency_bench.bench.metrics.consistent`).

The :class:`Consistent` score (class-balanced, with its exact chance level),
``cc = (ca - chance) / (1 - chance)`` and the per-row correctness every kind builds on.
"""  # noqa: E501

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from consistency_bench.bench.metrics.becel import INVALID

#: Tolerance of ``p_t >= theta`` comparisons (same as consistency_bench.bench.metrics.calm).
EPS = 1e-9


@dataclass(frozen=True)
class Consistent:
    """Consistent accuracy of one suite, balanced over the gold classes of its originals.

    The score is the mean over gold classes of the per-class share of units that are right and
    consistent (as balanced accuracy is): on a suite whose originals are 72% one label, a
    constant predictor would otherwise beat a model with 25% label noise. A unit's class is the
    gold label of its (first) original row.

    Attributes:
        per_unit: 0/1 per unit.
        chance_per_unit: Probability per unit that a uniform random predictor gets it.
        classes: Gold class per unit (the balancing key).
        single_label: Every labelled row of the suite has the same gold label, so a constant
            predictor is right and consistent everywhere; the chance-corrected score is then
            undefined (set by the caller, who sees the whole suite).

    """

    per_unit: np.ndarray
    chance_per_unit: np.ndarray
    classes: np.ndarray
    single_label: bool = False

    @property
    def n_classes(self) -> int:
        """Distinct gold classes among the units."""
        return len(np.unique(self.classes))

    def weights(self) -> np.ndarray:
        """Per-unit weights with mean 1 whose weighted mean is the class-balanced mean."""
        return self._weights

    @cached_property
    def _weights(self) -> np.ndarray:
        """:meth:`weights`, computed once (counted with ``bincount`` for label indices)."""
        counts = _label_counts(self.classes)
        if counts is not None:
            present = counts[counts > 0]
            return len(self.classes) / (len(present) * counts[np.asarray(self.classes) + 1])
        _, inverse, counts = np.unique(self.classes, return_inverse=True, return_counts=True)
        return len(self.classes) / (len(counts) * counts[inverse])

    def weighted_units(self) -> np.ndarray:
        """Per-unit outcomes times their weight: their plain mean is :attr:`value`.

        The paired tests and rank bootstraps resample these.
        """
        return np.asarray(self.per_unit, dtype=float) * self.weights()

    @property
    def value(self) -> float | None:
        """Class-balanced consistent accuracy, ``None`` without units."""
        if not len(self.per_unit):
            return None
        return float(np.mean(self.weighted_units()))

    @property
    def unbalanced(self) -> float | None:
        """Plain share of units right and consistent."""
        return float(np.mean(self.per_unit)) if len(self.per_unit) else None

    @property
    def chance(self) -> float | None:
        """Expected (balanced) consistent accuracy of a uniform random predictor."""
        if not len(self.chance_per_unit):
            return None
        return float(np.mean(np.asarray(self.chance_per_unit, dtype=float) * self.weights()))

    @property
    def chance_corrected(self) -> float | None:
        """``(ca - chance) / (1 - chance)``; ``None`` on a single-label suite.

        With one gold label a constant predictor is right on every row, so accuracy cannot
        tell models apart; the suite keeps its paper metric but is not ranked.
        """
        if self.single_label:
            return None
        return chance_corrected(self.value, self.chance)


def _label_counts(values: np.ndarray) -> np.ndarray | None:
    """Counts of ``values + 1`` by ``bincount`` for label indices (integers >= -1); else None.

    ``counts[v + 1]`` is the count of ``v``; the same integers ``np.unique(...,
    return_counts=True)`` gives, without a sort.
    """
    values = np.asarray(values)
    if values.dtype.kind not in "iu" or not len(values):
        return None
    low, high = int(values.min()), int(values.max())
    if low < -1 or high > 1 << 16:
        return None
    return np.bincount(values.astype(np.int64) + 1)


def chance_corrected(value: float | None, chance: float | None) -> float | None:
    """``(value - chance) / (1 - chance)``: 0 at chance, 1 when perfect, negative below chance.

    ``None`` when either input is ``None`` or chance is 1 (nothing to correct against).
    """
    if value is None or chance is None or chance >= 1.0 - EPS:
        return None
    return float((value - chance) / (1.0 - chance))


def correct(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Per-row 0/1: a valid prediction equal to the gold label (gold -1 is never matched)."""
    pred, gold = np.asarray(pred), np.asarray(gold)
    return (pred == gold) & (pred != INVALID) & (gold >= 0)
