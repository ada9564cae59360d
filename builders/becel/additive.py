"""Additive test sets: merge two same-label single-text examples (BECEL section 3.2).

Every *combination* (unordered pair) of two evaluation examples that share a gold label is a
candidate; it is dropped when the merged text is longer than the 75% quantile of the
training-set token lengths; every combination within that cutoff is kept, merged in one order
chosen per combination from ``(seed, i, j)`` (sha256), so x + y and y + x never both occur and
the same inputs always give the same rows. Counting never lists the candidates: time grows as
n log n plus the combinations kept (docs/suites/becel.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TOKEN = re.compile(r"\w+|[^\w\s]")


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


def maximal_phrases(phrases: Sequence[str]) -> list[int]:
    """Positions of the phrases that sit inside no other phrase (token-level containment).

    GLUE's SST-2 training file holds every parse-tree phrase of the SST training sentences;
    the phrases contained in no other phrase are (almost exactly) the sentences: 6,885 of
    67,349 rows, against the 6,920 training sentences of SST. Texts are compared with their
    whitespace normalised; a repeated maximal phrase keeps every position.
    """
    normal = [" ".join(p.split()) for p in phrases]
    known = set(normal)
    inside: set[str] = set()
    # Longest first: a phrase already known to sit inside a longer one has all its sub-phrases
    # inside that one too (already found when it was scanned), so only the phrases inside no
    # other are scanned: the result is the same as scanning every phrase, in a fraction of
    # the time (the parse-tree phrases of a sentence are mostly inside it).
    for phrase in sorted(known, key=lambda p: (-p.count(" "), p)):
        if " " not in phrase or phrase in inside:
            continue
        starts = [0] + [k + 1 for k, c in enumerate(phrase) if c == " "]
        ends = [k - 1 for k in starts[1:]] + [len(phrase)]
        last = len(starts) - 1
        for a, begin in enumerate(starts):
            for b in range(a, last + 1):
                if a == 0 and b == last:
                    continue  # the phrase itself
                part = phrase[begin : ends[b]]
                if part in known:
                    inside.add(part)
    return [k for k, p in enumerate(normal) if p not in inside]


@dataclass(frozen=True)
class AdditivePlan:
    """Which combinations an additive set keeps, in which merge order, and the counts behind it.

    Attributes:
        pairs: ``(i, j)`` row positions (first text, second text), ``i != j``, sorted; each
            combination ``{i, j}`` occurs once, in its seeded merge order.
        threshold: Maximum merged token length kept.
        candidates: Same-label combinations (unordered) before the length filter.
        within_length: Combinations that pass the length filter.

    """

    pairs: list[tuple[int, int]]
    threshold: float
    candidates: int
    within_length: int


def merge_order(low: int, high: int, seed: int) -> tuple[int, int]:
    """The merge order of the combination ``{low, high}`` (``low < high``), seeded.

    ``(high, low)`` when the first byte of ``sha256(f"{seed}\\x1f{low}-{high}")`` is odd, else
    ``(low, high)``: a fair coin per combination that depends on nothing but the seed and the
    two positions (not on the other rows or on the order of processing).
    """
    digest = hashlib.sha256(f"{seed}\x1f{low}-{high}".encode()).digest()
    return (high, low) if digest[0] & 1 else (low, high)


# One piece (over 60 lines): one vectorised pass from token lengths to seeded pairs.
def plan_pairs(
    texts: Sequence[str],
    labels: Sequence[int],
    threshold: float,
    size: int | None,
    seed: int,
) -> AdditivePlan:
    """Every same-label combination within the length cutoff, each in one seeded merge order.

    A candidate is an *unordered* pair ``{i, j}``, ``i != j``, of same-label rows (BECEL: "all
    possible combinations of two data points that share the same label"). Per label the
    lengths are sorted once; the partners of the row at sorted position ``p`` within the limit
    are the positions ``p + 1 .. q - 1`` of that order, where ``q`` comes from
    ``searchsorted``, so each combination is counted once and the ``t``-th one is found from
    prefix sums without listing the candidates. ``size=None`` keeps every combination within
    the cutoff (the BECEL suites); a ``size`` below that count draws ``size`` combination
    numbers without replacement by ``numpy.random.Generator(PCG64(seed)).choice`` (used only by
    ``generate --additive-size``). Each kept combination is merged in the order
    :func:`merge_order` gives. Time: O(n log n + combinations kept).

    Args:
        texts: Evaluation texts in source order.
        labels: Their gold labels.
        threshold: Maximum token length of a merged text.
        size: How many combinations to keep, or ``None`` for all within the cutoff.
        seed: Seed of the merge orders (and of the draw when ``size`` is given).

    Returns:
        The kept pairs (positions into ``texts``, in merge order) in ascending order, with
        counts.

    Raises:
        ValueError: ``size`` is below 1.

    """
    if size is not None and size < 1:
        raise ValueError(f"additive size {size}: must be at least 1 (or None for all)")
    lengths = np.array([count_tokens(t) for t in texts], dtype=np.int64)
    label_array = np.asarray(labels)
    starts, counts, sorted_members = [], [], []
    offset, candidates = 0, 0
    for label in np.unique(label_array):
        idx = np.flatnonzero(label_array == label)
        order = np.argsort(lengths[idx], kind="stable")
        sorted_len = lengths[idx][order]
        within = np.searchsorted(sorted_len, threshold - sorted_len, side="right")
        position = np.arange(len(idx))
        # Partners of sorted position p: p + 1 .. within[p] - 1 (later, and short enough).
        counts.append(np.maximum(within - position - 1, 0))
        starts.append(offset + position + 1)
        sorted_members.append(idx[order])
        offset += len(idx)
        candidates += len(idx) * (len(idx) - 1) // 2
    if not sorted_members:
        return AdditivePlan([], threshold, 0, 0)
    count, start = np.concatenate(counts), np.concatenate(starts)
    members = np.concatenate(sorted_members)
    ends = np.cumsum(count)
    total = int(ends[-1])
    if size is not None and total > size:
        rng = np.random.Generator(np.random.PCG64(seed))
        picks = np.sort(rng.choice(total, size, replace=False))
    else:
        picks = np.arange(total)
    row = np.searchsorted(ends, picks, side="right")
    off = picks - (ends[row] - count[row])
    a, b = members[row], members[start[row] + off]
    low, high = np.minimum(a, b), np.maximum(a, b)
    pairs = sorted(merge_order(int(x), int(y), seed) for x, y in zip(low, high, strict=True))
    return AdditivePlan(pairs, threshold, candidates, total)
