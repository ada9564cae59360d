"""Additive test sets: merge two same-label single-text examples (BECEL section 3.2).

All pairs of evaluation examples that share a gold label are candidates; a pair is dropped when
the merged text is longer than the 75% quantile of the training-set token lengths; the kept
pairs are sampled down to a fixed size. Sampling is order independent: every pair gets a
pseudo-random key from (seed, row i, row j) and the ``size`` smallest keys are kept, so the
same inputs always give the same rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TOKEN = re.compile(r"\w+|[^\w\s]")
_MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def count_tokens(text: str) -> int:
    """Number of word and punctuation tokens (regex ``\\w+|[^\\w\\s]``)."""
    return len(TOKEN.findall(text))


def length_threshold(texts: Sequence[str], quantile: float = 0.75) -> float:
    """The ``quantile`` of the token lengths of ``texts`` (numpy's linear interpolation)."""
    if not texts:
        raise ValueError("cannot take a length quantile of no texts")
    return float(np.quantile(np.array([count_tokens(t) for t in texts]), quantile))


def merge_texts(first: str, second: str) -> str:
    """The merged input: both texts, stripped, joined by one space."""
    return f"{first.strip()} {second.strip()}"


def pair_keys(i: np.ndarray, j: np.ndarray, seed: int) -> np.ndarray:
    """Order-independent pseudo-random uint64 keys of row pairs (splitmix64 finaliser)."""
    with np.errstate(over="ignore"):
        z = (i.astype(np.uint64) << np.uint64(32)) | j.astype(np.uint64)
        z = (z + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)) & _MASK64
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


@dataclass(frozen=True)
class AdditivePlan:
    """Which pairs an additive set keeps, and the counts behind it.

    Attributes:
        pairs: ``(i, j)`` row positions, ``i < j``, sorted.
        threshold: Maximum merged token length kept.
        candidates: Same-label pairs before the length filter.
        within_length: Pairs that pass the length filter.

    """

    pairs: list[tuple[int, int]]
    threshold: float
    candidates: int
    within_length: int


def plan_pairs(
    texts: Sequence[str],
    labels: Sequence[int],
    threshold: float,
    size: int,
    seed: int,
) -> AdditivePlan:
    """Choose the additive pairs of an evaluation split.

    Args:
        texts: Evaluation texts in source order.
        labels: Their gold labels.
        threshold: Maximum token length of a merged text.
        size: How many pairs to keep (all if fewer pass the filter).
        seed: Sampling seed.

    Returns:
        The kept pairs (positions into ``texts``) in ascending order, with counts.

    """
    lengths = np.array([count_tokens(t) for t in texts], dtype=np.int64)
    label_array = np.asarray(labels)
    kept_i, kept_j = [], []
    candidates = 0
    for label in np.unique(label_array):
        idx = np.flatnonzero(label_array == label)
        a, b = np.triu_indices(len(idx), 1)
        candidates += len(a)
        ok = lengths[idx[a]] + lengths[idx[b]] <= threshold
        kept_i.append(idx[a][ok])
        kept_j.append(idx[b][ok])
    i = np.concatenate(kept_i) if kept_i else np.zeros(0, np.int64)
    j = np.concatenate(kept_j) if kept_j else np.zeros(0, np.int64)
    within = len(i)
    if within > size:
        keys = pair_keys(i, j, seed)
        chosen = np.argpartition(keys, size - 1)[:size]
        i, j = i[chosen], j[chosen]
    order = np.lexsort((j, i))
    pairs = [(int(x), int(y)) for x, y in zip(i[order], j[order], strict=True)]
    return AdditivePlan(pairs, threshold, candidates, within)
