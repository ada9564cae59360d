"""Consistent accuracy per kind (bench/metrics/consistent.py): hand cases and chance levels."""

import numpy as np
import pytest

from bench.metrics import consistent as ca
from bench.metrics.becel import INVALID


def test_pairwise_needs_a_right_original_and_agreement():
    orig_gold = np.array([0, 0, 1, 1])
    orig = np.array([0, 0, 0, 1])  # third original wrong
    pert = np.array([0, 1, 0, INVALID])  # second disagrees, fourth invalid
    r = ca.pairwise(orig, orig_gold, pert, np.full(4, -1), 2)
    assert r.per_unit.tolist() == [True, False, False, False]
    assert r.unbalanced == 0.25
    assert r.value == pytest.approx((1 / 2 + 0) / 2)  # class 0: 1 of 2, class 1: 0 of 2


def test_negational_uses_the_negated_label_when_there_is_one():
    orig_gold = np.array([0, 0, 0])
    orig = np.array([0, 0, 0])
    neg = np.array([1, 0, 2])
    neg_gold = np.array([-1, -1, 1])  # labelled third row: prediction 2 is wrong
    r = ca.pairwise(orig, orig_gold, neg, neg_gold, 3, negational=True)
    assert r.per_unit.tolist() == [True, False, False]
    assert r.chance_per_unit.tolist() == pytest.approx([1 / 3 * 2 / 3, 1 / 3 * 2 / 3, 1 / 9])


def test_derived_counts_every_row_not_only_the_conditioning_set():
    antecedents = np.array([[True, True], [True, False], [True, True]])
    ok = np.array([True, True, False])
    allowed = np.array([[True, False, False], [False, True, True], [True, True, False]])
    r = ca.derived(antecedents, ok, allowed, classes=np.array([0, 1, 2]))
    assert r.per_unit.tolist() == [True, False, False]
    assert r.chance_per_unit.tolist() == pytest.approx([1 / 27, 2 / 27, 2 / 27])


def test_calm_pass_rate_threshold_and_binomial_chance():
    orig = np.array([0, 1, 1])
    gold = np.array([0, 1, 0])
    perturbed = np.array([[0, 0, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1]])
    r = ca.calm(orig, gold, perturbed, 2, theta=0.5)
    assert r.per_unit.tolist() == [True, True, False]  # third original wrong
    # 1/2 * P(Binomial(4, 1/2) >= 2) = 1/2 * 11/16
    assert r.chance_per_unit[0] == pytest.approx(11 / 32)
    assert ca.calm(orig, gold, perturbed, 2, theta=1.0).per_unit.tolist() == [False] * 3


def test_salad_moves_or_rejects():
    orig = np.array([0, 0, 1, 1])
    gold = np.array([0, 0, 1, 0])
    salad = np.array([1, 0, 1, 0])
    reject = np.array([False, True, False, False])
    r = ca.salad(orig, gold, salad, orig, 2, salad_rejected=reject)
    assert r.per_unit.tolist() == [True, True, False, False]
    r = ca.salad(orig, gold, salad, orig, 2, orig_rejected=np.array([True, False, False, False]))
    assert r.per_unit.tolist() == [False, False, False, False]
    assert r.chance == pytest.approx(0.25)


def test_chance_corrected_and_single_label():
    assert ca.chance_corrected(0.5, 0.5) == 0.0
    assert ca.chance_corrected(1.0, 0.25) == 1.0
    assert ca.chance_corrected(0.0, 0.25) == pytest.approx(-1 / 3)
    assert ca.chance_corrected(0.5, 1.0) is None
    r = ca.pairwise(np.array([0, 0]), np.array([0, 0]), np.array([0, 0]), np.array([-1, -1]), 2)
    assert r.chance_corrected is not None
    from dataclasses import replace

    assert replace(r, single_label=True).chance_corrected is None


@pytest.mark.parametrize("kind", ["semantic", "negational", "derived", "calm", "salad", "coh"])
def test_chance_matches_seeded_uniform_random_predictors(kind):
    """The analytic chance equals the mean score of many seeded uniform random predictors."""
    rng = np.random.default_rng(7)
    n, labels, trials = 400, 3, 300
    gold = rng.integers(0, labels, n)
    scores = []
    for _ in range(trials):
        draw = lambda *shape: rng.integers(0, labels, shape if shape else n)  # noqa: E731
        if kind in ("semantic", "negational"):
            pert_gold = np.where(np.arange(n) % 2 == 0, (gold + 1) % labels, -1)
            r = ca.pairwise(draw(), gold, draw(), pert_gold, labels,
                            negational=kind == "negational")
        elif kind == "derived":
            allowed = np.ones((n, labels), bool)
            allowed[np.arange(n), gold] = False
            pred_a, pred_d = draw(n, 2), draw()
            r = ca.derived(pred_a == np.stack([gold, gold], 1), allowed[np.arange(n), pred_d],
                           allowed, gold)
        elif kind == "calm":
            r = ca.calm(draw(), gold, draw(n, 5), labels, theta=0.5)
        elif kind == "salad":
            orig = draw()
            r = ca.salad(orig, gold, draw(), orig, labels)
        else:
            rows = 1 + np.arange(n) % 3
            right = rng.random(n) < (1 / labels) ** rows
            r = ca.coherence(right, rows, labels, gold)
        scores.append(r.value)
    assert np.mean(scores) == pytest.approx(r.chance, abs=4 * np.std(scores) / np.sqrt(trials))


def test_original_stats():
    s = ca.original_stats(np.array([0, 0, 0, 1, 5]), np.array([0, 1, 0, 1, -1]))
    assert (s.n, s.correct, s.majority_rate, s.top_prediction_share) == (4, 3, 0.5, 0.75)
