import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from consistency_bench.bench.metrics.becel import (
    INVALID,
    Constraint,
    accuracy,
    tau_agreement,
    tau_conditional,
    tau_negational,
)
from consistency_bench.bench.scoring.bootstrap import mean_ci, proportion_ci

T, F = 1, 0


def test_figure2_of_the_paper():
    # BECEL Figure 2: every label T; accuracy 80% on E and both E_N, inconsistency 40%.
    original = np.array([T] * 8 + [F] * 2)
    symmetric = np.array([F, F] + [T] * 8)
    negated = np.array([F, F, F, F, T, T, F, F, F, F])
    assert accuracy(original, np.full(10, T)) == pytest.approx(0.8)
    assert tau_agreement(original, symmetric) == pytest.approx(0.4)
    assert tau_negational(original, negated) == pytest.approx(0.4)


def test_semantic_hand_computed():
    assert tau_agreement(np.array([0, 1, 2, 2]), np.array([0, 2, 2, 1])) == pytest.approx(0.5)


def test_invalid_answers_are_never_consistent():
    a = np.array([INVALID, INVALID, 0])
    b = np.array([INVALID, 1, 0])
    assert tau_agreement(a, b) == pytest.approx(2 / 3)
    assert tau_negational(a, b) == pytest.approx(1.0)


def test_conditional_hand_computed():
    derived_ok = np.array([True, False, True, False])
    antecedent_correct = np.array([[True, True], [True, True], [False, True], [True, False]])
    tau, n = tau_conditional(derived_ok, antecedent_correct)
    assert n == 2 and tau == pytest.approx(0.5)
    tau, n = tau_conditional(derived_ok, np.zeros((4, 2), bool))
    assert n == 0 and np.isnan(tau)


def test_constraints():
    names = ["entailment", "neutral", "contradiction"]
    c = Constraint.parse(
        np.array(["is:contradiction", "not:entailment", "not:contradiction"]), names
    )
    assert c.satisfied(np.array([2, 1, 0])).tolist() == [True, True, True]
    assert c.satisfied(np.array([1, 0, 2])).tolist() == [False, False, False]
    assert c.satisfied(np.array([INVALID, INVALID, INVALID])).tolist() == [False] * 3
    with pytest.raises(ValueError, match="expected 'is:<label>'"):
        Constraint.parse(np.array(["maybe:entailment"]), names)
    with pytest.raises(ValueError, match="expected 'is:<label>'"):
        Constraint.parse(np.array(["is:yes"]), names)


def test_shape_errors():
    with pytest.raises(ValueError, match="differ in length"):
        tau_agreement(np.array([0, 1]), np.array([0]))
    with pytest.raises(ValueError, match="shape"):
        tau_conditional(np.array([True]), np.array([True, True]))


def test_bootstrap_is_seeded_and_covers_the_estimate():
    a = proportion_ci(30, 100, seed=1, n_boot=2000)
    assert a == proportion_ci(30, 100, seed=1, n_boot=2000)
    assert a[0] < 0.3 < a[1]
    assert proportion_ci(0, 0) is None
    m = mean_ci(np.array([0.0, 1.0, 0.5, 0.25]), seed=3, n_boot=500)
    assert m == mean_ci(np.array([0.0, 1.0, 0.5, 0.25]), seed=3, n_boot=500)
    assert m[0] <= 0.4375 <= m[1]


@given(st.lists(st.tuples(st.integers(-1, 2), st.integers(-1, 2)), min_size=1, max_size=50))
def test_agreement_properties(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    tau = tau_agreement(a, b)
    assert 0.0 <= tau <= 1.0
    assert tau == tau_agreement(b, a)
    # With no invalid answers, agreement and disagreement partition the pairs.
    valid = (a != INVALID) & (b != INVALID)
    if valid.all():
        assert tau + tau_negational(a, b) == pytest.approx(1.0)
