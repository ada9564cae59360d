"""CALM consistency metrics (Jang et al., 2021, section 3) as pure array functions.

Predictions are int arrays of label indices; ``INVALID`` (-1) marks an answer outside the label
set (free text of a text-to-text model). An invalid answer never agrees with anything.

- C_R = (1/N) sum_t 1(M(o_t) = M(r_t))                      (REVERSE)
- p_t = (1/k) sum_i 1(M(s_i^t) = M(o_t))                    (pass rate over the k signals)
- C_S = (1/N) sum_t 1(p_t >= theta)                         (SIGNAL; the paper uses theta = 1)
- H(p) = -sum_c p_c log2 p_c  (entropy in bits of a predictive distribution; the paper's
  Figures 2-3 average it over inconsistent predictions: 0.88 bits at confidence 0.7 in the
  binary case, 0.47 at 0.9, as the paper states)
"""

from __future__ import annotations

import numpy as np

from consistency_bench.bench.metrics.becel import INVALID, agreement

#: Tolerance of the ``p_t >= theta`` comparison (``p_t`` is a ratio of small integers).
EPS = 1e-9


def reverse_consistency(original: np.ndarray, reverse: np.ndarray) -> np.ndarray:
    """Per-example 0/1: original and REVERSE predictions valid and equal."""
    return agreement(original, reverse)


def c_r(original: np.ndarray, reverse: np.ndarray) -> float:
    """C_R: share of examples whose REVERSE prediction equals the original one."""
    consistent = reverse_consistency(original, reverse)
    if len(consistent) == 0:
        raise ValueError("no examples to score")
    return float(consistent.mean())


def pass_rates(original: np.ndarray, signals: np.ndarray) -> np.ndarray:
    """p_t per example: share of the k SIGNAL predictions equal to the original prediction.

    Args:
        original: ``(N,)`` predictions on the original inputs.
        signals: ``(N, k)`` predictions on the k SIGNAL inputs of each example.

    Raises:
        ValueError: Shapes do not match or k is 0.

    """
    original, signals = np.asarray(original), np.asarray(signals)
    if original.ndim != 1 or signals.ndim != 2 or signals.shape[0] != original.shape[0]:
        raise ValueError(
            f"expected original (N,) and signals (N, k); got {original.shape} and {signals.shape}"
        )
    if signals.shape[1] == 0:
        raise ValueError("signals has no columns (k = 0)")
    passed = (signals == original[:, None]) & (signals != INVALID) & (original[:, None] != INVALID)
    return passed.mean(axis=1)


def signal_consistency(original: np.ndarray, signals: np.ndarray, theta: float = 1.0) -> np.ndarray:
    """Per-example 0/1: ``p_t >= theta``."""
    if not 0.0 <= theta <= 1.0:
        raise ValueError(f"theta must lie in [0, 1]; got {theta!r}")
    return pass_rates(original, signals) >= theta - EPS


def c_s(original: np.ndarray, signals: np.ndarray, theta: float = 1.0) -> float:
    """C_S: share of examples whose pass rate over the signals is at least ``theta``."""
    consistent = signal_consistency(original, signals, theta)
    if len(consistent) == 0:
        raise ValueError("no examples to score")
    return float(consistent.mean())


def entropy_bits(probs: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of ``probs`` (``(N, C)``, rows summing to 1); 0 log 0 = 0.

    Raises:
        ValueError: ``probs`` is not two-dimensional.

    """
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2:
        raise ValueError(f"expected probs (N, C); got shape {probs.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probs > 0, probs * np.log2(probs), 0.0)
    return -terms.sum(axis=1)
