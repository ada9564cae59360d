"""Shared resamples of a suite's units, and each cell's ranked score on them (pure, seeded).

Every interval and paired test of the leaderboard reads one thing per cell (entry x suite):
its ranked score recomputed on each of :data:`N_BOOT` resamples of the suite's units
(:class:`CellSample`). The resamples belong to the suite, not to the entries compared: resample
``b`` of a suite draws ``U`` of its ``U`` units with replacement from a generator seeded by
the suite's name and its unit set (:func:`unit_counts`), the same draw for every entry scored
on that unit set. So

- two entries are paired on a suite (the same units drawn in the same resample), which the
  rank intervals and the neighbour tests need;
- a cell's sample depends on nothing but the entry's own unit values, so it is computed once,
  when the entry is verified, and cached (``leaderboard/cache``); adding an entry never
  changes another's numbers.

A resample's score is recomputed from how many drawn units carry each distinct unit value
(class-weighted outcomes, or word-salad codes): those counts are integers, computed exactly in
float32 (every partial sum is an integer below 2**24), so a cell's sample is the same bits
whether it is computed alone or with other entries, in any order (tested).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from consistency_bench.bench.metrics.consistent.salad_score import UNIT_STATISTICS

#: Resamples of every suite's units: rank intervals, cell intervals and paired tests.
N_BOOT = 1000
#: Resamples drawn at once (a fixed constant: the draws are a function of the suite alone).
DRAW_BLOCK = 100
#: Columns of one product with a block of counts (entries x distinct values), for memory.
MAX_COLUMNS = 512
#: Up to this many cells, their counts are made by looking up each draw's value instead of
#: the product (the same integers: a cell's sample does not depend on the way).
GATHER_CELLS = 2
#: A cell with at most this many distinct unit values is counted value by value.
SMALL_WIDTH = 8


@dataclass(frozen=True)
class CellSample:
    """One cell's ranked score on each shared resample of its suite's units.

    Attributes:
        units: Identity of the unit set (two cells are paired only on the same set).
        n: Units.
        scores: ``(N_BOOT,)`` ranked score on each resample.
        mean: Mean of the unit values (the consistent accuracy), ``None`` for a statistic
            that is not a mean (word salad).
        binary: Per-unit outcomes when every unit value is 0 or 1 and the score is their mean
            (McNemar's test applies), else ``None``.

    """

    units: str
    n: int
    scores: np.ndarray
    mean: float | None = None
    binary: np.ndarray | None = None


#: Suite -> entry -> its cell's sample.
Samples = Mapping[str, Mapping[str, CellSample]]
#: ``(distinct unit values (V,), resampled counts of each (B, V)) -> (B,)`` ranked scores.
UnitScorer = Callable[[np.ndarray, np.ndarray], np.ndarray]


def mean_scorer(chance: float) -> UnitScorer:
    """The chance-corrected mean of the unit values (consistent accuracy)."""
    def score(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
        # summed value by value (elementwise: the same bits on any machine or thread count)
        total = counts[:, 0] * values[0]
        for j in range(1, len(values)):
            total = total + counts[:, j] * values[j]
        ca = total / counts.sum(axis=1)
        return (ca - chance) / (1.0 - chance) if chance < 1.0 else ca

    return score


def statistic_scorer(spec: Mapping) -> UnitScorer:
    """A score recomputed from the counts of each unit code (word salad)."""
    statistic = UNIT_STATISTICS[spec["statistic"]]
    n_labels, copy = int(spec["n_labels"]), bool(spec["copy"])

    def score(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
        return statistic(values.astype(np.int64), counts, n_labels, copy)["score"]

    return score


def unit_scorer(ranked_units: Mapping | None, chance: float) -> UnitScorer:
    """How a suite's ranked score is recomputed from a resample of its units."""
    if ranked_units is not None:
        return statistic_scorer(ranked_units)
    return mean_scorer(chance)


def units_key(*parts: bytes | str) -> str:
    """Identity of a unit set: a short digest of what names its units, in order."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def _seed(key: str) -> int:
    return int.from_bytes(hashlib.sha256(f"0:{key}".encode()).digest()[:8], "little")


def unit_draws(suite: str, units: str, n_units: int,
               n_boot: int = N_BOOT) -> Iterator[np.ndarray]:
    """Blocks of ``(rows, n_units)`` unit indices: the units resample ``b`` draws.

    Each resample draws ``n_units`` unit indices uniformly with replacement; the generator is
    seeded by the suite and its unit set only, and drawn in blocks of :data:`DRAW_BLOCK`
    resamples, so the draws are a function of ``(suite, units, n_units, n_boot)``.
    """
    rng = np.random.default_rng(_seed(f"units:{suite}:{units}"))
    for lo in range(0, n_boot, DRAW_BLOCK):
        yield rng.integers(0, n_units, size=(min(DRAW_BLOCK, n_boot - lo), n_units))


def unit_counts(suite: str, units: str, n_units: int,
                n_boot: int = N_BOOT) -> Iterator[np.ndarray]:
    """Blocks of ``(rows, n_units)`` float32 counts: how often resample ``b`` draws each unit.

    The counts of :func:`unit_draws`' blocks.
    """
    for picked in unit_draws(suite, units, n_units, n_boot):
        counts = np.empty(picked.shape, dtype=np.float32)
        for r in range(len(picked)):  # one row at a time: the bins stay in cache
            counts[r] = np.bincount(picked[r], minlength=n_units)
        yield counts


def sample_cells(suite: str, units: str, cells: Sequence[tuple[np.ndarray, Mapping | None,
                                                              float]]) -> list[CellSample]:
    """The samples of cells that share one unit set of ``suite``, from one set of draws.

    Args:
        suite: The suite (seeds the draws).
        units: Its unit set's identity (:func:`units_key`; seeds the draws).
        cells: Per cell: the unit values in the unit set's order, the suite's
            ``metrics.ranked_units`` (``None``: a chance-corrected mean) and its chance level.

    """
    if not cells:
        return []
    n = len(cells[0][0])
    coded = []
    for values, _, _ in cells:
        if len(values) != n:
            raise ValueError(f"{suite}: cells of one unit set have {n} and {len(values)} units")
        coded.append(np.unique(np.asarray(values, dtype=float), return_inverse=True))
    widths = [len(v) for v, _ in coded]
    offsets = np.concatenate([[0], np.cumsum(widths)])
    found = np.empty((N_BOOT, int(offsets[-1])))
    if len(cells) <= GATHER_CELLS:
        _count_by_gather(found, suite, units, n,
                         [inverse.astype(np.uint8 if len(v) <= SMALL_WIDTH else np.intp)
                          for v, inverse in coded],
                         offsets)
    else:
        _count_by_product(found, suite, units, n, coded, widths, offsets)
    out = []
    for i, (values, spec, chance) in enumerate(cells):
        distinct = coded[i][0]
        counts = found[:, offsets[i]:offsets[i + 1]]
        scores = unit_scorer(spec, chance)(distinct, counts)
        is_mean = spec is None
        binary = (np.asarray(values) == 1.0) if is_mean and np.isin(distinct, (0.0, 1.0)).all() \
            else None
        out.append(CellSample(units, n, np.ascontiguousarray(scores, dtype=float),
                              float(np.mean(values)) if is_mean else None, binary))
    return out


def _count_by_gather(found: np.ndarray, suite: str, units: str, n: int,
                     inverses: Sequence[np.ndarray], offsets: np.ndarray) -> None:
    """Fill ``found`` with each cell's count of each distinct value, cell by cell.

    For a few cells (one entry added to a board): each resample's drawn units are looked up
    in the cell's value codes and counted, instead of counting every unit and multiplying
    (which costs the same for one cell as for :data:`MAX_COLUMNS` columns).
    """
    row = 0
    for picked in unit_draws(suite, units, n):
        rows = len(picked)
        shift = np.arange(rows)[:, None]
        for i, inverse in enumerate(inverses):
            width, lo = int(offsets[i + 1] - offsets[i]), int(offsets[i])
            drawn = inverse[picked]
            if width <= SMALL_WIDTH:  # a few values: one pass over the drawn codes per value
                rest = np.full(rows, n, dtype=np.int64)
                for j in range(1, width):
                    count = np.count_nonzero(drawn == j, axis=1)
                    found[row:row + rows, lo + j] = count
                    rest -= count
                found[row:row + rows, lo] = rest
                continue
            codes = drawn + shift * width  # resample r's codes in its own bins
            found[row:row + rows, lo:lo + width] = np.bincount(
                codes.ravel(), minlength=rows * width).reshape(rows, width)
        row += rows


def _count_by_product(found: np.ndarray, suite: str, units: str, n: int, coded: Sequence,
                      widths: Sequence[int], offsets: np.ndarray) -> None:
    """Fill ``found`` from every unit's counts times each cell's indicator of its values."""
    batches = _column_batches(widths)
    onehots = []
    for first, last in batches:  # (n, columns) indicator of each cell's distinct values
        hot = np.zeros((n, int(offsets[last] - offsets[first])), dtype=np.float32)
        for i in range(first, last):
            hot[np.arange(n), offsets[i] - offsets[first] + coded[i][1]] = 1.0
        onehots.append(hot)
    row = 0
    for block in unit_counts(suite, units, n):
        for (first, last), hot in zip(batches, onehots, strict=True):
            # exact: integer partial sums below 2**24, whatever order the product adds them
            found[row:row + len(block), offsets[first]:offsets[last]] = block @ hot
        row += len(block)


def _column_batches(widths: Sequence[int]) -> list[tuple[int, int]]:
    """Consecutive cells whose distinct values fit :data:`MAX_COLUMNS` columns (at least one)."""
    batches, first, used = [], 0, 0
    for i, w in enumerate(widths):
        if used and used + w > MAX_COLUMNS:
            batches.append((first, i))
            first, used = i, 0
        used += w
    batches.append((first, len(widths)))
    return batches
