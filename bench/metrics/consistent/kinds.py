"""Consistent accuracy per kind (:mod:`consistency_bench.bench.metrics.consistent`): the units and their chance.

BECEL's pairs (semantic, symmetric, negational) and derived rows (transitive, additive), CALM
and coherence; each returns a :class:`~consistency_bench.bench.metrics.consistent.score.Consistent`.
"""  # noqa: E501

from __future__ import annotations

from math import ceil, comb

import numpy as np

from consistency_bench.bench.metrics.becel import INVALID
from consistency_bench.bench.metrics.consistent.score import EPS, Consistent, correct


def pairwise(
    orig_pred: np.ndarray,
    orig_gold: np.ndarray,
    pert_pred: np.ndarray,
    pert_gold: np.ndarray,
    n_labels: int,
    *,
    negational: bool = False,
) -> Consistent:
    """Semantic, symmetric and negational pairs.

    Semantic / symmetric: the original is right and the perturbed prediction agrees with it.
    Negational: the original is right and the negated prediction differs from it, or, where
    the negated row has a gold label, the negated prediction is right.

    Chance (uniform over ``N`` labels): ``1/N * 1/N`` for agreement, ``1/N * (N-1)/N`` for
    disagreement, ``1/N * 1/N`` for a labelled negated row.
    """
    orig_pred, pert_pred = np.asarray(orig_pred), np.asarray(pert_pred)
    pert_gold = np.asarray(pert_gold)
    right = correct(orig_pred, orig_gold)
    valid = (orig_pred != INVALID) & (pert_pred != INVALID)
    p = 1.0 / n_labels
    if negational:
        labelled = pert_gold >= 0
        differs = valid & (orig_pred != pert_pred)
        relation = np.where(labelled, correct(pert_pred, pert_gold), differs)
        chance = p * np.where(labelled, p, 1.0 - p)
    else:
        relation = valid & (orig_pred == pert_pred)
        chance = np.full(len(orig_pred), p * p)
    return Consistent(right & relation, chance, np.asarray(orig_gold))


def derived(
    antecedent_correct: np.ndarray, derived_ok: np.ndarray, allowed: np.ndarray,
    classes: np.ndarray,
) -> Consistent:
    """Transitive and additive: both antecedents right and the derived row's constraint holds.

    Over all derived rows (unconditional, unlike tau_trn / tau_add). ``allowed`` is the
    ``(rows, N)`` constraint mask; chance is ``1/N**2 * allowed.sum(1) / N``; ``classes`` is
    the gold label of each row's first antecedent.
    """
    antecedent_correct = np.asarray(antecedent_correct, dtype=bool)
    allowed = np.asarray(allowed, dtype=bool)
    n_labels = allowed.shape[1]
    per_unit = antecedent_correct.all(axis=1) & np.asarray(derived_ok, dtype=bool)
    chance = (1.0 / n_labels) ** 2 * allowed.sum(axis=1) / n_labels
    return Consistent(per_unit, chance, np.asarray(classes))


def calm(
    orig_pred: np.ndarray, orig_gold: np.ndarray, perturbed: np.ndarray, n_labels: int,
    theta: float = 1.0,
) -> Consistent:
    """CALM: the original is right and its pass rate over the perturbations is at least theta.

    The perturbations are the REVERSE input and the ``k`` SIGNAL inputs (``perturbed`` is
    ``(N, k + 1)``); the pass rate is the share of them predicted as the original.
    Chance: ``1/N * P(Binomial(k + 1, 1/N) >= ceil(theta (k + 1)))``.
    """
    orig_pred, perturbed = np.asarray(orig_pred), np.asarray(perturbed)
    passed = (perturbed == orig_pred[:, None]) & (perturbed != INVALID)
    passed &= (orig_pred != INVALID)[:, None]
    rate = passed.mean(axis=1)
    per_unit = correct(orig_pred, orig_gold) & (rate >= theta - EPS)
    m = perturbed.shape[1]
    p = 1.0 / n_labels
    need = max(0, ceil(theta * m - EPS))
    tail = sum(comb(m, j) * p**j * (1 - p) ** (m - j) for j in range(need, m + 1))
    return Consistent(per_unit, np.full(len(orig_pred), p * tail), np.asarray(orig_gold))


def coherence(strict_per_example: np.ndarray, rows_per_example: np.ndarray,
              n_labels: int, end_gold: np.ndarray,
              choices_right: np.ndarray | None = None) -> Consistent:
    """Coherence: strict coherence (end prediction and every span right) is already accurate.

    Chance: each of an example's ``r`` rows right with probability ``1/N``, so ``N**-r``; for
    multiple choice (ART) a uniform random choice with a one-hot probability (always
    confident), so a span whose gold is "no confident choice" is never right:
    ``choices_right`` gives, per example, how many of its rows can be right (0 when any
    cannot).
    """
    rows = np.asarray(rows_per_example, dtype=float)
    chance = (1.0 / n_labels) ** rows
    if choices_right is not None:
        chance = np.where(np.asarray(choices_right, dtype=bool), chance, 0.0)
    return Consistent(np.asarray(strict_per_example, dtype=bool), chance, np.asarray(end_gold))
