"""BECEL inconsistency metrics (Jang et al., 2022, section 3.3) as pure array functions.

Predictions are int arrays of label indices; ``INVALID`` (-1) marks an answer outside the label
set. An invalid answer is never consistent and never correct.

- tau_sem, tau_sym = 1 - (1/|E_N|) * sum 1(M(e_i) = M(e_i^N))
- tau_neg         = 1 - (1/|E_N|) * sum 1(M(e_i) != M(e_i^N))
- tau_trn, tau_add = 1 - (1/|C|) * sum_{c in C} 1(M(c_i) satisfies its constraint), where C are the
  derived rows whose two antecedents the model predicts correctly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INVALID = -1


def _check_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"predictions must be 1-d arrays; got shapes {a.shape} and {b.shape}")
    if a.shape != b.shape:
        raise ValueError(f"prediction arrays differ in length: {len(a)} vs {len(b)}")
    return a, b


def agreement(original: np.ndarray, perturbed: np.ndarray) -> np.ndarray:
    """Per-pair 0/1: both predictions valid and equal."""
    a, b = _check_pair(original, perturbed)
    return (a == b) & (a != INVALID) & (b != INVALID)


def disagreement(original: np.ndarray, negated: np.ndarray) -> np.ndarray:
    """Per-pair 0/1: both predictions valid and different."""
    a, b = _check_pair(original, negated)
    return (a != b) & (a != INVALID) & (b != INVALID)


def tau_agreement(original: np.ndarray, perturbed: np.ndarray) -> float:
    """tau_sem / tau_sym: share of pairs whose predictions differ (or are invalid)."""
    consistent = agreement(original, perturbed)
    if len(consistent) == 0:
        raise ValueError("no pairs to score")
    return float(1.0 - consistent.mean())


def tau_negational(original: np.ndarray, negated: np.ndarray) -> float:
    """tau_neg: share of pairs whose predictions stay the same (or are invalid)."""
    consistent = disagreement(original, negated)
    if len(consistent) == 0:
        raise ValueError("no pairs to score")
    return float(1.0 - consistent.mean())


@dataclass(frozen=True)
class Constraint:
    """What a derived row's prediction must satisfy, as a mask over label indices."""

    allowed: np.ndarray  # bool (n_rows, n_labels)

    @classmethod
    def parse(cls, texts: np.ndarray, label_names: list[str]) -> Constraint:
        """Parse ``is:<label>`` / ``not:<label>`` strings into a mask.

        Raises:
            ValueError: A constraint string is malformed or names an unknown label.

        """
        index = {name: i for i, name in enumerate(label_names)}
        allowed = np.zeros((len(texts), len(label_names)), dtype=bool)
        for row, text in enumerate(texts):
            op, _, name = str(text).partition(":")
            if op not in ("is", "not") or name not in index:
                raise ValueError(
                    f"constraint {text!r} of row {row}: expected 'is:<label>' or 'not:<label>' "
                    f"with a label in {label_names}"
                )
            if op == "is":
                allowed[row, index[name]] = True
            else:
                allowed[row] = True
                allowed[row, index[name]] = False
        return cls(allowed)

    def satisfied(self, pred: np.ndarray) -> np.ndarray:
        """Per-row 0/1: prediction valid and allowed."""
        pred = np.asarray(pred)
        if len(pred) != len(self.allowed):
            raise ValueError(f"{len(pred)} predictions for {len(self.allowed)} constraints")
        valid = pred != INVALID
        out = np.zeros(len(pred), dtype=bool)
        rows = np.flatnonzero(valid)
        out[rows] = self.allowed[rows, pred[rows]]
        return out


def conditional_consistency(
    derived_ok: np.ndarray, antecedent_correct: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Select the conditioning set C and the per-row consistency within it.

    Args:
        derived_ok: Per derived row, whether its prediction satisfies its constraint.
        antecedent_correct: ``(n_derived, 2)`` whether each antecedent is predicted correctly.

    Returns:
        ``(in_c, consistent)``: the mask of rows in C, and ``derived_ok`` restricted to C.

    """
    derived_ok = np.asarray(derived_ok, dtype=bool)
    antecedent_correct = np.asarray(antecedent_correct, dtype=bool)
    if antecedent_correct.shape != (len(derived_ok), 2):
        raise ValueError(
            f"antecedent_correct must have shape ({len(derived_ok)}, 2); "
            f"got {antecedent_correct.shape}"
        )
    in_c = np.asarray(antecedent_correct.all(axis=1))
    return in_c, derived_ok[in_c]


def tau_conditional(derived_ok: np.ndarray, antecedent_correct: np.ndarray) -> tuple[float, int]:
    """tau_trn / tau_add and |C|; tau is NaN when C is empty."""
    _, consistent = conditional_consistency(derived_ok, antecedent_correct)
    if len(consistent) == 0:
        return float("nan"), 0
    return float(1.0 - consistent.mean()), len(consistent)


def accuracy(pred: np.ndarray, gold: np.ndarray) -> float:
    """Share of rows predicted correctly (rows with gold -1 must be filtered out before)."""
    pred, gold = _check_pair(pred, gold)
    if len(pred) == 0:
        raise ValueError("no rows to score")
    return float(((pred == gold) & (pred != INVALID)).mean())
