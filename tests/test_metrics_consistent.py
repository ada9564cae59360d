"""Consistent accuracy per kind (bench/metrics/consistent/): hand cases and chance levels."""

import numpy as np
import pytest

from consistency_bench.bench.metrics.becel import INVALID
from consistency_bench.bench.metrics.consistent.kinds import calm, coherence, derived, pairwise
from consistency_bench.bench.metrics.consistent.originals import original_stats
from consistency_bench.bench.metrics.consistent.salad_score import salad as consistent_salad
from consistency_bench.bench.metrics.consistent.salad_score import salad_decode, salad_from_counts
from consistency_bench.bench.metrics.consistent.score import chance_corrected


def test_pairwise_needs_a_right_original_and_agreement():
    orig_gold = np.array([0, 0, 1, 1])
    orig = np.array([0, 0, 0, 1])  # third original wrong
    pert = np.array([0, 1, 0, INVALID])  # second disagrees, fourth invalid
    r = pairwise(orig, orig_gold, pert, np.full(4, -1), 2)
    assert r.per_unit.tolist() == [True, False, False, False]
    assert r.unbalanced == 0.25
    assert r.value == pytest.approx((1 / 2 + 0) / 2)  # class 0: 1 of 2, class 1: 0 of 2


def test_negational_uses_the_negated_label_when_there_is_one():
    orig_gold = np.array([0, 0, 0])
    orig = np.array([0, 0, 0])
    neg = np.array([1, 0, 2])
    neg_gold = np.array([-1, -1, 1])  # labelled third row: prediction 2 is wrong
    r = pairwise(orig, orig_gold, neg, neg_gold, 3, negational=True)
    assert r.per_unit.tolist() == [True, False, False]
    assert r.chance_per_unit.tolist() == pytest.approx([1 / 3 * 2 / 3, 1 / 3 * 2 / 3, 1 / 9])


def test_derived_counts_every_row_not_only_the_conditioning_set():
    antecedents = np.array([[True, True], [True, False], [True, True]])
    ok = np.array([True, True, False])
    allowed = np.array([[True, False, False], [False, True, True], [True, True, False]])
    r = derived(antecedents, ok, allowed, classes=np.array([0, 1, 2]))
    assert r.per_unit.tolist() == [True, False, False]
    assert r.chance_per_unit.tolist() == pytest.approx([1 / 27, 2 / 27, 2 / 27])


def test_calm_pass_rate_threshold_and_binomial_chance():
    orig = np.array([0, 1, 1])
    gold = np.array([0, 1, 0])
    perturbed = np.array([[0, 0, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1]])
    r = calm(orig, gold, perturbed, 2, theta=0.5)
    assert r.per_unit.tolist() == [True, True, False]  # third original wrong
    # 1/2 * P(Binomial(4, 1/2) >= 2) = 1/2 * 11/16
    assert r.chance_per_unit[0] == pytest.approx(11 / 32)
    assert calm(orig, gold, perturbed, 2, theta=1.0).per_unit.tolist() == [False] * 3


def test_salad_no_signal_by_hand():
    """Gated units: right on the original; over them agreement against its signal-free level."""
    orig = np.array([0, 0, 1, 1, 1, 0])
    gold = np.array([0, 0, 1, 1, 0, 1])  # the last two originals are wrong: not gated
    salad = np.array([1, 0, 1, 0, 0, 0])
    r = consistent_salad(orig, gold, salad, orig, 2)
    st = r.stats()
    # gated: units 0-3; class 0 (units 0, 1, 4) and class 1 (units 2, 3, 5): 2 of 3 right each
    assert st["accuracy"] == pytest.approx(2 / 3)
    # agreement on the gated units: units 1 and 2 agree -> 1/2; marginals: ref (0,0,1,1),
    # salad (1,0,1,0) -> c = 1/2 * 1/2 + 1/2 * 1/2 = 1/2: no signal left, S = 1
    assert (st["agreement"], st["expected"], st["no_signal"]) == (0.5, 0.5, 1.0)
    assert r.chance == pytest.approx(0.5)
    assert r.chance_corrected == pytest.approx((2 / 3 - 1 / 2) / (1 / 2))
    keep = consistent_salad(orig, gold, orig, orig, 2).stats()  # always keeps: a = 1 > c
    flip = consistent_salad(orig, gold, 1 - orig, orig, 2).stats()  # always changes: a = 0 < c
    assert keep["no_signal"] == 0.0 and flip["no_signal"] == 0.0
    # a declined salad (rejected by confidence, or an invalid answer) is the ideal
    declined = consistent_salad(orig, gold, np.array([0, 0, 1, -1, 0, 0]), orig, 2,
                                salad_rejected=np.array([False, True, False, False, False, False]))
    st = declined.stats()
    assert st["declined"] == pytest.approx(0.5)  # units 1 and 3 of the 4 gated
    # kept units 0 (0 -> 0) and 2 (1 -> 1) always agree, c = 1/2: S_kept = 0
    assert st["no_signal"] == pytest.approx(0.5)
    # a rejected original is not right
    rej = consistent_salad(orig, gold, salad, orig, 2,
                           orig_rejected=np.array([1, 1, 1, 1, 0, 0], bool))
    assert rej.stats()["accuracy"] == 0.0 and rej.chance_corrected == pytest.approx(-1.0)


def test_salad_codes_round_trip_and_resampled_counts():
    rng = np.random.default_rng(3)
    n, labels = 500, 3
    gold = rng.integers(-1, labels, n)
    orig, salad = rng.integers(-1, labels, n), rng.integers(-1, labels, n)
    rejected = rng.random(n) < 0.2
    r = consistent_salad(orig, gold, salad, orig, labels, salad_rejected=rejected)
    d = salad_decode(r.codes, labels)
    gated = (orig == gold) & (gold >= 0) & (orig >= 0)
    assert (d["gated"] == gated).all() and (d["cls"] == gold).all()
    assert (d["declined"] == (gated & (rejected | (salad == -1)))).all()
    kept = d["kept"]
    assert (d["ref"][kept] == orig[kept]).all() and (d["sal"][kept] == salad[kept]).all()
    # counts of a resample give the score of the resampled units themselves
    idx = rng.integers(0, n, n)
    values, counts = np.unique(r.codes[idx], return_counts=True)
    again = consistent_salad(orig[idx], gold[idx], salad[idx], orig[idx], labels,
                             salad_rejected=rejected[idx])
    got = salad_from_counts(values, counts[None, :], labels, False)["score"][0]
    assert got == pytest.approx(again.chance_corrected)


def test_chance_corrected_and_single_label():
    assert chance_corrected(0.5, 0.5) == 0.0
    assert chance_corrected(1.0, 0.25) == 1.0
    assert chance_corrected(0.0, 0.25) == pytest.approx(-1 / 3)
    assert chance_corrected(0.5, 1.0) is None
    r = pairwise(np.array([0, 0]), np.array([0, 0]), np.array([0, 0]), np.array([-1, -1]), 2)
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
            r = pairwise(draw(), gold, draw(), pert_gold, labels,
                         negational=kind == "negational")
        elif kind == "derived":
            allowed = np.ones((n, labels), bool)
            allowed[np.arange(n), gold] = False
            pred_a, pred_d = draw(n, 2), draw()
            r = derived(pred_a == np.stack([gold, gold], 1), allowed[np.arange(n), pred_d],
                        allowed, gold)
        elif kind == "calm":
            r = calm(draw(), gold, draw(n, 5), labels, theta=0.5)
        elif kind == "salad":  # the chance of R, the salad score's accuracy factor
            orig = draw()
            r = consistent_salad(orig, gold, draw(), orig, labels)
            scores.append(r.stats()["accuracy"])
            continue
        else:
            rows = 1 + np.arange(n) % 3
            right = rng.random(n) < (1 / labels) ** rows
            r = coherence(right, rows, labels, gold)
        scores.append(r.value)
    assert np.mean(scores) == pytest.approx(r.chance, abs=4 * np.std(scores) / np.sqrt(trials))


def test_original_stats():
    s = original_stats(np.array([0, 0, 0, 1, 5]), np.array([0, 1, 0, 1, -1]))
    assert (s.n, s.correct, s.majority_rate, s.top_prediction_share) == (4, 3, 0.5, 0.75)


def test_repeated_originals_count_once_per_task():
    """Issue 27 item 3: a task's suites that reuse the same originals (MRPC's four salad
    suites and mrpc_calm) must not count them four or five times in the degenerate test."""
    from consistency_bench.bench.scoring.engine import SuiteOriginals, task_stats

    rng = np.random.default_rng(0)
    n = 408
    texts = [f"pair {i}" for i in range(n)]
    gold = rng.integers(0, 2, n)
    pred = np.where(rng.random(n) < 0.72, gold, 1 - gold)
    one = {"mrpc_semantic": SuiteOriginals("mrpc", texts, gold, pred)}
    five = {f"mrpc_salad_{k}": SuiteOriginals("mrpc", texts, gold, pred) for k in range(5)}
    single, pooled = task_stats(one)["mrpc"], task_stats(five)["mrpc"]
    for key in ("n_original", "n_original_correct", "majority_rate", "top_prediction_share"):
        assert pooled[key] == single[key], key  # the same 408 items, counted once
    assert pooled["n_original_rows"] == 5 * n and pooled["n_original"] == n
    # a one-class suite (a negational set) cannot test: left out of the pool, listed
    neg = SuiteOriginals("mrpc", [f"neg {i}" for i in range(50)],
                         np.ones(50, np.int64), np.ones(50, np.int64))
    with_neg = task_stats({**five, "mrpc_negational": neg})["mrpc"]
    assert with_neg["untestable_suites"] == ["mrpc_negational"]
    assert with_neg["n_original"] == n
    # the item's most frequent prediction counts (ties: the first suite's)
    flipped = {**five, "mrpc_salad_9": SuiteOriginals("mrpc", texts, gold, 1 - pred)}
    assert task_stats(flipped)["mrpc"]["n_original_correct"] == single["n_original_correct"]
