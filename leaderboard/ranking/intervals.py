"""Bootstrap intervals and neighbour tests over the cells' shared resamples (pure).

Every number here is read from the cells' samples
(:mod:`consistency_bench.leaderboard.ranking.resample`): cell
intervals (:func:`_cell_intervals`), a view's resampled scores (:func:`view_scores`) and its
rank intervals (:func:`_rank_intervals`), and the tests between neighbours on one suite
(:func:`_suite_test`) and on a view score (:func:`_aggregate_test`). Without samples the
neighbours are compared from their binomial intervals (``ci-overlap``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from consistency_bench.leaderboard.paired import PairedResult, ci_overlap_z, mcnemar_exact
from consistency_bench.leaderboard.ranking.model import ALPHA, Cell, Outcomes, Row, SuiteInfo
from consistency_bench.leaderboard.ranking.resample import (
    N_BOOT,
    CellSample,
    Samples,
    UnitScorer,
    sample_cells,
    unit_scorer,
    units_key,
)

#: Resamples behind a view's rank intervals (the suites' shared resamples).
N_BOOT_RANKS = N_BOOT
#: Resamples of one cell's ranked-score interval (``Cell.goodness_ci95``).
N_BOOT_CELL = N_BOOT

__all__ = ["N_BOOT_CELL", "N_BOOT_RANKS", "UnitScorer", "outcome_samples", "unit_scorer",
           "view_scores"]


def _paired(a: CellSample | None, b: CellSample | None) -> bool:
    return a is not None and b is not None and a.units == b.units


def _two_sided(d: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a difference: twice the smaller tail share at 0."""
    return min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))


def _suite_test(a: str, b: str, suite: str, cells: Mapping[str, Cell],
                samples: Samples | None) -> PairedResult:
    """Neighbours on one suite: McNemar on 0/1 units, else the paired bootstrap of the score.

    Paired on the suite's shared resamples when both cells have samples on the same unit
    set; otherwise the interval test (``ci-overlap``).
    """
    mine = (samples or {}).get(suite, {})
    sa, sb = mine.get(a), mine.get(b)
    if _paired(sa, sb):
        assert sa is not None and sb is not None, "checked by _paired"
        if sa.binary is not None and sb.binary is not None:
            return mcnemar_exact(sa.binary.astype(float), sb.binary.astype(float))
        p = _two_sided(sa.scores - sb.scores)
        # a mean score: the difference of the unit means (consistent accuracy), as McNemar's
        diff = sa.mean - sb.mean if sa.mean is not None and sb.mean is not None \
            else _gap(cells[a], cells[b])
        return PairedResult("paired-bootstrap", sa.n, diff, p, p < ALPHA)
    return ci_overlap_z(_gap(cells[a], cells[b]), cells[a].sd_goodness, cells[b].sd_goodness)


def _suite_tests(order: Sequence[str], suite: str, cells: Mapping[str, Cell],
                 samples: Samples | None) -> list[PairedResult | None]:
    """:func:`_suite_test` of each ranked entry against the next.

    The bootstrap p-values of the paired ones are computed at once (the same numbers as one
    pair at a time).
    """
    mine = (samples or {}).get(suite, {})
    pairs = list(itertools.pairwise(order))
    batch = [i for i, (a, b) in enumerate(pairs) if _paired(mine.get(a), mine.get(b))
             and (mine[a].binary is None or mine[b].binary is None)]
    p_values = _two_sided_rows(np.stack([mine[pairs[i][0]].scores - mine[pairs[i][1]].scores
                                         for i in batch])) if batch else []
    found = dict(zip(batch, p_values, strict=True))
    out: list[PairedResult | None] = []
    for i, (a, b) in enumerate(pairs):
        if i not in found:
            out.append(_suite_test(a, b, suite, cells, samples))
            continue
        sa, sb = mine[a], mine[b]
        diff = sa.mean - sb.mean if sa.mean is not None and sb.mean is not None \
            else _gap(cells[a], cells[b])
        out.append(PairedResult("paired-bootstrap", sa.n, diff, found[i], found[i] < ALPHA))
    return out


def _two_sided_rows(d: np.ndarray) -> list[float]:
    """:func:`_two_sided` of each row (the same floats: a count over the resamples)."""
    low, high = np.mean(d <= 0, axis=1), np.mean(d >= 0, axis=1)
    return [min(1.0, 2.0 * min(lo, hi)) for lo, hi in zip(low.tolist(), high.tolist(),
                                                          strict=True)]


def _gap(a: Cell, b: Cell) -> float:
    """``a``'s ranked score minus ``b``'s; neighbours on a suite are ranked cells."""
    assert a.goodness is not None and b.goodness is not None, "neighbours are ranked cells"
    return a.goodness - b.goodness


def view_scores(names: Sequence[str], slots: Sequence[str], samples: Samples | None,
                weights: Mapping[str, float]) -> tuple[np.ndarray, int] | None:
    """``(N_BOOT, entries)`` resampled view scores (kind-weighted sums), and the units.

    ``None`` when some entry has no sample on some slot, or the entries were not scored on
    one unit set there (then they are not paired).
    """
    if not samples or not names:
        return None
    total = np.zeros((N_BOOT, len(names)))
    n_units = 0
    for s in slots:
        mine = samples.get(s, {})
        found = [mine.get(e) for e in names]
        if any(c is None for c in found) or len({c.units for c in found if c}) != 1:
            return None
        n_units += found[0].n if found[0] is not None else 0
        total += weights[s] * np.stack([c.scores for c in found if c is not None], axis=1)
    return total, n_units


def _rank_intervals(scores: np.ndarray) -> list[tuple[int, int]]:
    """95% interval of each column's competition rank over the bootstrap rows.

    The rank of ``x`` is 1 + the number of entries scoring more than ``x + 1e-12``: counted
    by a binary search in each sorted row, O(entries log entries) per resample instead of
    comparing every pair.
    """
    ordered = np.sort(scores, axis=1)
    n = scores.shape[1]
    ranks = np.empty(scores.shape, dtype=np.int64)
    for b in range(scores.shape[0]):
        ranks[b] = 1 + n - np.searchsorted(ordered[b], scores[b] + 1e-12, side="right")
    low = np.quantile(ranks, 0.025, axis=0, method="lower")
    high = np.quantile(ranks, 0.975, axis=0, method="higher")
    return [(int(a), int(b)) for a, b in zip(low, high, strict=True)]


def _aggregate_test(a: Row, b: Row, slots: Sequence[str], samples: Samples | None,
                    weights: Mapping[str, float],
                    view: tuple[np.ndarray, int] | None = None) -> PairedResult:
    """Test neighbours on the view score: paired over the shared resamples, else intervals.

    ``view``: the two entries' columns of the view's resampled scores when the view has them
    (the same numbers :func:`view_scores` gives for the pair alone, not computed again).
    """
    boot = view if view is not None else view_scores([a.name, b.name], slots, samples, weights)
    if boot is None:
        return ci_overlap_z((a.mean or 0.0) - (b.mean or 0.0), a.sd_mean, b.sd_mean)
    scores, n_units = boot
    p = _two_sided(scores[:, 0] - scores[:, 1])
    return PairedResult("paired-bootstrap", n_units, (a.mean or 0.0) - (b.mean or 0.0), p,
                        p < ALPHA)


def _aggregate_tests(rows: Sequence[Row], slots: Sequence[str], samples: Samples | None,
                     weights: Mapping[str, float],
                     view: tuple[np.ndarray, int] | None) -> list[PairedResult]:
    """:func:`_aggregate_test` of each ranked row against the next.

    With the view's resampled scores (the rows' columns, in order) every p-value is computed
    at once; otherwise pair by pair.
    """
    if view is None or len(rows) < 2:
        return [_aggregate_test(a, b, slots, samples, weights)
                for a, b in itertools.pairwise(rows)]
    scores, n_units = view
    p_values = _two_sided_rows((scores[:, :-1] - scores[:, 1:]).T)
    return [PairedResult("paired-bootstrap", n_units, (a.mean or 0.0) - (b.mean or 0.0), p,
                         p < ALPHA)
            for (a, b), p in zip(itertools.pairwise(rows), p_values, strict=True)]


def _cell_intervals(cells: dict[str, dict[str, Cell]], samples: Samples) -> None:
    """``goodness_ci95``: the 2.5% and 97.5% percentiles of each cell's sample (in place).

    One quantile call per suite over its cells' samples (row by row, the same numbers as one
    call per cell).
    """
    for s, cs in cells.items():
        mine = samples.get(s, {})
        names = [e for e, c in cs.items() if c.goodness is not None and e in mine]
        if not names:
            continue
        bounds = np.quantile(np.stack([mine[e].scores for e in names]), (0.025, 0.975), axis=1)
        for e, low, high in zip(names, bounds[0].tolist(), bounds[1].tolist(), strict=True):
            c = cs[e]
            assert c.goodness is not None, "names holds ranked cells only"
            # widened to hold the estimate: near S = 1 the resampled |a - c| is biased upward,
            # so the word-salad percentiles can lie just below the observed score
            cs[e] = replace(c, goodness_ci95=(min(low, c.goodness), max(high, c.goodness)))


def outcome_samples(outcomes: Outcomes, cells: Mapping[str, Mapping[str, Cell]],
                    infos: Mapping[str, SuiteInfo]) -> dict[str, dict[str, CellSample]]:
    """Samples of every ranked cell from per-unit outcomes given as mappings (unit id -> value).

    A suite's unit set is the sorted unit ids of an entry; entries with the same set share
    its resamples. ``leaderboard --data`` does not come here: its samples are made when each
    entry is verified (``consistency_bench.leaderboard.cache``), from the scorer's arrays.
    """
    out: dict[str, dict[str, CellSample]] = {}
    for suite in sorted({s for per in outcomes.values() for s in per}):
        groups: dict[tuple[str, ...], list[str]] = {}
        for name in sorted(outcomes):
            cell = cells.get(suite, {}).get(name)
            units = outcomes[name].get(suite)
            if units and cell is not None and cell.goodness is not None and suite in infos:
                groups.setdefault(tuple(sorted(units)), []).append(name)
        for ids, names in groups.items():
            key = units_key(suite, *ids)
            made = sample_cells(suite, key, [
                (np.array([outcomes[n][suite][i] for i in ids], dtype=float),
                 infos[suite].ranked_units, cells[suite][n].chance or 0.0) for n in names])
            out.setdefault(suite, {}).update(zip(names, made, strict=True))
    return out
