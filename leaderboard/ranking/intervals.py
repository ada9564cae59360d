"""Bootstrap intervals and neighbour tests over per-unit outcomes (pure, seeded).

Cell intervals (:func:`_cell_intervals`), rank intervals (:func:`_rank_intervals` over
:func:`_bootstrap_scores`), and the tests between neighbours on one suite (:func:`_suite_test`)
and on a view score (:func:`_aggregate_test`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from bench.metrics.consistent import UNIT_STATISTICS
from leaderboard.paired import PairedResult, ci_overlap_z, mcnemar_exact
from leaderboard.ranking.model import ALPHA, Cell, Outcomes, Row, SuiteInfo

N_BOOT_RANKS = 1000
#: Resamples of one cell's ranked-score interval (``Cell.goodness_ci95``).
N_BOOT_CELL = 1000


#: Per suite: entry -> row, and the (entries, shared units) outcome matrix.
UnitTables = Mapping[str, tuple[Mapping[str, int], np.ndarray]]
#: ``(patterns (P, entries), draws (resamples, P)) -> (resamples, entries)`` ranked scores.
UnitScorer = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _suite_test(
    a: str, b: str, suite: str, cells: Mapping[str, Cell], tables: UnitTables | None,
    scorer: UnitScorer | None = None,
) -> PairedResult:
    """Neighbours on one suite: McNemar on binary units, paired bootstrap on the others.

    ``scorer`` recomputes the ranked score from resampled units where it is not a mean of the
    unit values (word salad); the bootstrap then resamples that score.
    """
    found = _patterns([a, b], suite, tables or {})
    if found is not None:
        patterns, counts = found
        if scorer is None and np.isin(patterns, (0.0, 1.0)).all():
            xa = np.repeat(patterns[:, 0], counts)
            xb = np.repeat(patterns[:, 1], counts)
            return mcnemar_exact(xa, xb)
        boot = _bootstrap_scores([a, b], [suite], tables, {suite: scorer or _mean_scorer(0.0)},
                                 0, 2000, f"suite:{suite}:{a}:{b}")
        if boot is not None:
            scores, n_units = boot
            d = scores[:, 0] - scores[:, 1]
            p = min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
            if scorer is None:
                diff = float((patterns[:, 0] - patterns[:, 1]) @ counts / counts.sum())
            else:
                diff = _gap(cells[a], cells[b])
            return PairedResult("paired-bootstrap", n_units, diff, p, p < ALPHA)
    diff = _gap(cells[a], cells[b])
    return ci_overlap_z(diff, cells[a].sd_goodness, cells[b].sd_goodness)


def _gap(a: Cell, b: Cell) -> float:
    """``a``'s ranked score minus ``b``'s; neighbours on a suite are ranked cells."""
    assert a.goodness is not None and b.goodness is not None, "neighbours are ranked cells"
    return a.goodness - b.goodness


def _mean_scorer(chance: float) -> UnitScorer:
    """The chance-corrected mean of the unit values (consistent accuracy)."""
    def score(patterns: np.ndarray, draws: np.ndarray) -> np.ndarray:
        ca = draws @ patterns / draws.sum(axis=1, keepdims=True)
        return (ca - chance) / (1.0 - chance) if chance < 1.0 else ca

    return score


def _statistic_scorer(spec: Mapping) -> UnitScorer:
    """A score recomputed from the counts of each entry's unit codes (word salad)."""
    statistic = UNIT_STATISTICS[spec["statistic"]]
    n_labels, copy = int(spec["n_labels"]), bool(spec["copy"])

    def score(patterns: np.ndarray, draws: np.ndarray) -> np.ndarray:
        out = np.empty((draws.shape[0], patterns.shape[1]))
        for j in range(patterns.shape[1]):
            order = np.argsort(patterns[:, j], kind="stable")
            codes, starts = np.unique(patterns[order, j], return_index=True)
            counts = np.add.reduceat(draws[:, order], starts, axis=1)  # (boot, codes)
            out[:, j] = statistic(codes.astype(np.int64), counts, n_labels, copy)["score"]
        return out

    return score


def unit_scorer(info: SuiteInfo, chance: float) -> UnitScorer:
    """How a suite's ranked score is recomputed from a resample of its units."""
    if info.ranked_units is not None:
        return _statistic_scorer(info.ranked_units)
    return _mean_scorer(chance)


def unit_tables(outcomes: Outcomes | None) -> UnitTables:
    """Outcome matrices per suite over the units every entry with outcomes for it shares."""
    if not outcomes:
        return {}
    suites = sorted({s for per in outcomes.values() for s in per})
    tables = {}
    for suite in suites:
        names = sorted(n for n in outcomes if outcomes[n].get(suite))
        shared = sorted(set.intersection(*(set(outcomes[n][suite]) for n in names)))
        matrix = np.array([[outcomes[n][suite][k] for k in shared] for n in names], dtype=float)
        tables[suite] = ({n: i for i, n in enumerate(names)}, matrix.reshape(len(names), -1))
    return tables


def _patterns(
    names: Sequence[str], suite: str, tables: UnitTables
) -> tuple[np.ndarray, np.ndarray] | None:
    """Distinct outcome vectors over the units all ``names`` share, with their counts."""
    if suite not in tables:
        return None
    index, matrix = tables[suite]
    if not all(n in index for n in names) or matrix.shape[1] == 0:
        return None
    rows = matrix[[index[n] for n in names]]
    key = np.zeros(rows.shape[1], dtype=np.int64)
    for row in rows:  # mixed-radix code of each unit's outcome vector (1-d unique is fast)
        values, codes = np.unique(row, return_inverse=True)
        key = key * len(values) + codes
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return rows[:, first].T, counts


def _bootstrap_scores(
    names: Sequence[str], suites: Sequence[str], outcomes: UnitTables | None,
    scorers: Mapping[str, UnitScorer], seed: int, n_boot: int, key: str,
    weights: Mapping[str, float] | None = None,
) -> tuple[np.ndarray, int] | None:
    """``(n_boot, entries)`` resampled view scores: the weighted sum of the suites' scores.

    The same resample of each suite's shared units serves every entry (paired); each suite's
    ranked score is recomputed from its resample by ``scorers[suite]`` (a chance-corrected
    mean, or the word-salad statistic). ``weights`` (default: equal) are the view's kind
    weights. ``None`` when some entry lacks per-unit outcomes for some suite.
    """
    if outcomes is None or not names:
        return None
    from leaderboard.paired import _seed

    rng = np.random.default_rng(_seed(seed, key))
    total = np.zeros((n_boot, len(names)))
    n_units = 0
    for s in suites:
        found = _patterns(names, s, outcomes)
        if found is None:
            return None
        patterns, counts = found
        units = int(counts.sum())
        n_units += units
        draws = _draw(rng, counts, n_boot)  # (n_boot, patterns)
        w = 1.0 / len(suites) if weights is None else weights[s]
        total += w * scorers[s](patterns, draws)
    return total, n_units


#: Above this many distinct patterns, resampling draws unit indices (O(units) per resample)
#: rather than a multinomial over the patterns (O(patterns) binomial draws per resample).
MANY_PATTERNS = 256


def _draw(rng: np.random.Generator, counts: np.ndarray, n_boot: int) -> np.ndarray:
    """Resampled counts of each pattern: ``(n_boot, patterns)``, rows summing to the units.

    Both ways draw the same distribution (units with replacement, equally likely); word-salad
    codes make thousands of distinct patterns, where drawing indices is the faster one.
    """
    units = int(counts.sum())
    if len(counts) <= MANY_PATTERNS:
        return rng.multinomial(units, counts / units, size=n_boot)
    of_unit = np.repeat(np.arange(len(counts)), counts)
    out = np.empty((n_boot, len(counts)), dtype=np.int64)
    block = max(1, 4_000_000 // units)
    for lo in range(0, n_boot, block):
        rows = min(block, n_boot - lo)
        picked = of_unit[rng.integers(0, units, size=(rows, units))]
        flat = (picked + len(counts) * np.arange(rows)[:, None]).ravel()
        out[lo:lo + rows] = np.bincount(flat, minlength=rows * len(counts)).reshape(rows, -1)
    return out


def _rank_intervals(scores: np.ndarray) -> list[tuple[int, int]]:
    """95% interval of each column's competition rank over the bootstrap rows."""
    ranks = 1 + (scores[:, None, :] > scores[:, :, None] + 1e-12).sum(axis=2)  # (boot, entries)
    low = np.quantile(ranks, 0.025, axis=0, method="lower")
    high = np.quantile(ranks, 0.975, axis=0, method="higher")
    return [(int(a), int(b)) for a, b in zip(low, high, strict=True)]


def _aggregate_test(a: Row, b: Row, suites: Sequence[str], outcomes: UnitTables | None,
                    scorers: Mapping[str, UnitScorer], weights: Mapping[str, float],
                    seed: int = 0) -> PairedResult:
    """Test neighbours on the view score: paired bootstrap over shared units, else intervals."""
    boot = _bootstrap_scores([a.name, b.name], suites, outcomes, scorers, seed, 2000,
                             f"pair:{a.name}:{b.name}:{','.join(suites)}", weights)
    if boot is None:
        return ci_overlap_z((a.mean or 0.0) - (b.mean or 0.0), a.sd_mean, b.sd_mean)
    scores, n_units = boot
    d = scores[:, 0] - scores[:, 1]
    observed = (a.mean or 0.0) - (b.mean or 0.0)
    p = min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return PairedResult("paired-bootstrap", n_units, observed, p, p < ALPHA)



def _cell_intervals(cells: dict[str, dict[str, Cell]], infos: Mapping[str, SuiteInfo],
                    tables: UnitTables) -> None:
    """``goodness_ci95`` from a bootstrap of each cell's own units (in place)."""
    for s, cs in cells.items():
        for e, c in cs.items():
            if c.goodness is None or _patterns([e], s, tables) is None:
                continue
            scorer = unit_scorer(infos[s], c.chance or 0.0)
            boot = _bootstrap_scores([e], [s], tables, {s: scorer}, 0, N_BOOT_CELL,
                                     f"cell:{s}:{e}")
            assert boot is not None, "the cell's units were found just above"
            values = boot[0][:, 0]
            # widened to hold the estimate: near S = 1 the resampled |a - c| is biased upward,
            # so the word-salad percentiles can lie just below the observed score
            cs[e] = replace(c, goodness_ci95=(min(float(np.quantile(values, 0.025)), c.goodness),
                                              max(float(np.quantile(values, 0.975)), c.goodness)))
