"""The ranking at hundreds of entries (issue 33, item 4): fast, and the same numbers.

What was rewritten for speed is checked against the definition it replaces, on random values
with ties and near-ties at the 1e-12 tolerance: Borda wins and competition ranks by sorting
against every pair compared; rank intervals by binary search against the pairwise count; the
vectorised binomial tails against the loop over ``math.lgamma``; one quantile call per suite
against one per cell. And the rank intervals come from resamples shared by the whole board:
an entry added does not move another's interval draws.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from consistency_bench.leaderboard.paired import _binom_two_sided, binom_tail_ge
from consistency_bench.leaderboard.ranking.board import rank
from consistency_bench.leaderboard.ranking.intervals import _rank_intervals
from consistency_bench.leaderboard.ranking.model import Entry
from consistency_bench.leaderboard.ranking.views import _beats, _dense_ranks, _wins


def _values(rng: np.random.Generator, n: int, trial: int) -> np.ndarray:
    base = rng.choice([0.0, 0.5, 1.0, 0.3], size=n) if trial % 3 == 0 else rng.random(n)
    jitter = rng.choice([0, 1e-12, 2e-12, -1e-12, 5e-13, 3e-12, 1.0000001e-12], size=n)
    return base + jitter * (trial % 2)


def test_wins_and_ranks_by_sorting_equal_every_pair_compared():
    rng = np.random.default_rng(0)
    for trial in range(2000):
        v = _values(rng, int(rng.integers(1, 40)), trial)
        want = [sum(_beats(a, b) for j, b in enumerate(v) if j != i) for i, a in enumerate(v)]
        assert _wins(v).tolist() == want, v
        assert _dense_ranks(list(v)) == [1 + sum(1 for w in v if w > x + 1e-12) for x in v]


def test_rank_intervals_by_binary_search_equal_the_pairwise_count():
    rng = np.random.default_rng(1)
    for trial in range(200):
        scores = np.stack([_values(rng, 12, trial) for _ in range(50)])
        ranks = 1 + (scores[:, None, :] > scores[:, :, None] + 1e-12).sum(axis=2)
        want = list(zip(np.quantile(ranks, 0.025, axis=0, method="lower").tolist(),
                        np.quantile(ranks, 0.975, axis=0, method="higher").tolist(),
                        strict=True))
        assert _rank_intervals(scores) == want


def _tail_loop(k: int, n: int, p: float) -> float:
    """The former ``binom_tail_ge``: a Python loop over ``math.lgamma``."""
    if k <= 0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * math.log(p) + (n - i) * math.log1p(-p) for i in range(k, n + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(v - top) for v in logs))


def test_vectorised_binomial_tails_agree_with_the_loop():
    rng = np.random.default_rng(2)
    for n in rng.integers(1, 5000, 300).tolist():
        k, p = int(rng.integers(0, n + 2)), float(rng.random())
        assert binom_tail_ge(k, n, p) == pytest.approx(_tail_loop(k, n, p), rel=1e-13, abs=0)
        half = min(k, n - k) if k <= n else 0
        loop = 2 * sum(math.comb(n, i) for i in range(half + 1)) / 2**n if n < 1000 else None
        if loop is not None:
            assert _binom_two_sided(k if k <= n else n, n) == pytest.approx(min(1.0, loop),
                                                                           rel=1e-12)


def _entries(n: int, units: int = 400):
    """``n`` entries on one suite, entry ``i`` right on units ``u`` with ``u % n >= i``."""
    outcomes, entries = {}, []
    for i in range(n):
        values = {f"g{u}": float(u % n >= i) for u in range(units)}
        outcomes[f"e{i:02d}"] = {"s": values}
        cc = sum(values.values()) / units
        entries.append(Entry(f"e{i:02d}", {"suites": {"s": {
            "family": "becel", "task": "t", "kind": "semantic", "main_metric": "m",
            "main_score": cc, "higher_is_better": True, "consistent_accuracy": cc,
            "consistent_accuracy_chance": 0.0, "consistent_accuracy_cc": cc,
            "metrics": {"consistent_accuracy_n": units}}}}))
    return entries, outcomes


def test_an_entry_added_does_not_move_the_others_resamples():
    from consistency_bench.leaderboard.ranking.intervals import outcome_samples

    entries, outcomes = _entries(12)
    small = rank(entries[:-1], outcomes={e.name: outcomes[e.name] for e in entries[:-1]})
    large = rank(entries, outcomes=outcomes)
    samples = {n: outcome_samples({e.name: outcomes[e.name] for e in es}, board.cells,
                                  board.suites)["s"]
               for n, es, board in (("small", entries[:-1], small), ("large", entries, large))}
    for e in entries[:-1]:  # each cell's resampled scores: the same bits with one more entry
        assert samples["small"][e.name].scores.tobytes() == \
            samples["large"][e.name].scores.tobytes()
        assert small.cells["s"][e.name].goodness_ci95 == large.cells["s"][e.name].goodness_ci95
    rows = {r.name: r for r in large.views["all"].rows}
    assert [rows[f"e{i:02d}"].rank for i in range(12)] == list(range(1, 13))
    assert all(r.rank_low <= r.rank <= r.rank_high for r in rows.values())
