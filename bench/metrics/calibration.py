"""Cross-fitted thresholds: word-salad temperature and θ, ART's margin θ (pure).

The word-salad paper calibrates the classifier with temperature scaling, then deems an input
invalid when its maximum probability is below a threshold θ found by grid search "on a
separate validation set" (word-salad paper l. 313-315). A suite has no separate validation
set, so its groups are split in two fixed halves (:func:`halves`, a hash of the group name):
the temperature is fitted on the labelled originals of one half, θ is searched on that half's
originals and salads, and both are applied to the *other* half; then the halves swap
(cross-fitting). No unit is scored with a temperature or a threshold chosen on itself.
:func:`cross_fit_choice` does the same for a threshold picked from a grid by the score itself
(ART's probability-margin θ, coherence paper Table 1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from consistency_bench.bench.metrics.consistent.salad_score import uncertainty
from consistency_bench.bench.metrics.salad import (
    TOLERANCE,
    confidence,
    fit_temperature,
    rejected,
    select_threshold,
    temperature_scale,
)

#: Salt of the half assignment: the halves of a suite never change with the seed of the
#: bootstrap or with the order of the rows (word salad and ART use the same halves rule).
HALF_SALT = b"consistency-bench cross-fit\x00"


def halves(groups: Sequence[str]) -> np.ndarray:
    """Half 0 or 1 of each group: the low bit of the first byte of ``sha256(salt + group)``."""
    return np.fromiter(
        (hashlib.sha256(HALF_SALT + g.encode("utf-8")).digest()[0] & 1 for g in groups),
        dtype=np.int64, count=len(groups))


@dataclass(frozen=True)
class Fold:
    """How one half was scored: with what was fitted on the other half.

    Attributes:
        half: The half scored (0 or 1).
        units: Its units.
        fitted_on: Labelled originals of the other half the temperature and θ were fitted on.
        temperature: Temperature applied (1.0: none).
        temperature_fitted: Fitted on the other half (else given, or 1.0 for lack of data).
        theta: Threshold applied, or ``None`` (no rejection: no data to search it on).
        theta_searched: Searched on the other half (else given).

    """

    half: int
    units: int
    fitted_on: int
    temperature: float
    temperature_fitted: bool
    theta: float | None
    theta_searched: bool


@dataclass(frozen=True)
class CrossFit:
    """Per unit: the original rejected, the salad rejected, the salad answer's uncertainty."""

    orig_rejected: np.ndarray
    salad_rejected: np.ndarray
    salad_uncertainty: np.ndarray
    folds: tuple[Fold, ...]


def cross_fit(
    orig_probs: np.ndarray,
    orig_pred: np.ndarray,
    gold: np.ndarray,
    salad_probs: np.ndarray,
    salad_pred: np.ndarray,
    half: np.ndarray,
    *,
    temperature: float | None = None,
    theta: float | None = None,
    tolerance: float = TOLERANCE,
) -> CrossFit:
    """Calibrate and threshold each half with what the other half gives.

    Args:
        orig_probs: Probabilities of each unit's original row, ``(n, N)``.
        orig_pred: Prediction on the original (-1 invalid).
        gold: Gold label of the original (-1 unlabelled).
        salad_probs: Probabilities of each unit's salad row, ``(n, N)``.
        salad_pred: Prediction on the salad (-1 invalid).
        half: 0 or 1 per unit (:func:`halves`).
        temperature: A given temperature (no fitting), or ``None`` to fit it on the other half
            (least negative log-likelihood of the gold labels of its originals).
        theta: A given threshold (no search), or ``None`` to search it on the other half (the
            paper's grid search: :func:`consistency_bench.bench.metrics.salad.select_threshold`).
        tolerance: Allowed drop of clean accuracy in the search.

    Returns:
        The per-unit verdicts; a half whose other half has no labelled original gets
        temperature 1 and no threshold (said in its :class:`Fold`).

    """
    n = len(half)
    orig_rej, salad_rej = np.zeros(n, bool), np.zeros(n, bool)
    unsure = np.ones(n)
    folds = []
    n_labels = orig_probs.shape[1]
    for h in (0, 1):
        scored = half == h
        fit = (half != h) & (gold >= 0)
        t, th = _fit_half(orig_probs[fit], orig_pred[fit] == gold[fit], gold[fit],
                          salad_probs[half != h], temperature, theta, tolerance)
        folds.append(Fold(h, int(scored.sum()), int(fit.sum()), t,
                          temperature is None and bool(fit.any()), th,
                          theta is None and bool(fit.any())))
        if not scored.any():
            continue
        orig_s = temperature_scale(orig_probs[scored], t)
        salad_s = temperature_scale(salad_probs[scored], t)
        if th is not None:
            orig_rej[scored] = rejected(orig_s, th)
            salad_rej[scored] = rejected(salad_s, th)
        unsure[scored] = uncertainty(confidence(salad_s, salad_pred[scored]), n_labels)
    return CrossFit(orig_rej, salad_rej, unsure, tuple(folds))


def _fit_half(orig_probs: np.ndarray, right: np.ndarray, gold: np.ndarray,
              salad_probs: np.ndarray, temperature: float | None, theta: float | None,
              tolerance: float) -> tuple[float, float | None]:
    """Temperature and θ from one half's labelled originals (and all its salads).

    The given ones are kept; without labelled originals: T = 1 and no threshold.
    """
    if temperature is not None:
        t = float(temperature)
    else:
        t = fit_temperature(orig_probs, gold) if len(gold) else 1.0
    if theta is not None:
        return t, float(theta)
    if not len(gold):
        return t, None
    found, _, _ = select_threshold(temperature_scale(orig_probs, t), right,
                                   temperature_scale(salad_probs, t), tolerance=tolerance)
    return t, float(found)


def cross_fit_choice(per_example: np.ndarray, half: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Per example, its outcome at the grid point that is best on the *other* half.

    Args:
        per_example: ``(T, n)`` outcome (0/1) of each example at each of ``T`` grid points.
        half: 0 or 1 per example (:func:`halves`).

    Returns:
        The cross-fitted outcome per example, and the grid index chosen for half 0 and half 1
        (the first best; with an empty other half, the best over every example).

    """
    values = np.asarray(per_example, dtype=float)
    out = np.zeros(values.shape[1])
    chosen = []
    for h in (0, 1):
        other = half != h
        pick = int(np.argmax(values[:, other].mean(axis=1) if other.any()
                             else values.mean(axis=1)))
        chosen.append(pick)
        out[half == h] = values[pick, half == h]
    return out, chosen
