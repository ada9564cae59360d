"""Additive test sets: merge two same-label single-text examples (BECEL section 3.2).

All ordered pairs of evaluation examples that share a gold label are candidates (x + y and
y + x); a pair is dropped when the merged text is longer than the 75% quantile of the
training-set token lengths; the kept pairs are sampled down to a fixed size with a seeded
generator, so the same inputs always give the same rows. Sampling never lists the candidates:
time grows as n log n plus the pairs kept (docs/suites/becel.md).
"""

from __future__ import annotations

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
    """Which pairs an additive set keeps, and the counts behind it.

    Attributes:
        pairs: ``(i, j)`` row positions (first text, second text), ``i != j``, sorted.
        threshold: Maximum merged token length kept.
        candidates: Ordered same-label pairs before the length filter.
        within_length: Ordered pairs that pass the length filter.

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
    """Choose the additive pairs of an evaluation split, both merge orders.

    A candidate is an *ordered* pair ``(i, j)``, ``i != j``, of same-label rows: x + y and
    y + x are different inputs. Counting and sampling never list the candidates: per label the
    lengths are sorted once, so the partners of ``i`` within the length limit are a prefix of
    that order (``searchsorted``), and the ``t``-th valid pair is found from prefix sums. When
    more than ``size`` pairs pass, ``size`` pair numbers are drawn without replacement by
    ``numpy.random.Generator(PCG64(seed)).choice`` (O(size) memory and time beyond the sort);
    else every valid pair is kept. Time: O(n log n + kept pairs).

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
    members, counts, rank, self_in, base = [], [], [], [], []
    sorted_members: list[np.ndarray] = []
    offset, candidates = 0, 0
    for label in np.unique(label_array):
        idx = np.flatnonzero(label_array == label)
        order = np.argsort(lengths[idx], kind="stable")
        sorted_len = lengths[idx][order]
        limit = threshold - lengths[idx]
        within = np.searchsorted(sorted_len, limit, side="right")
        own = 2 * lengths[idx] <= threshold  # the row itself lies inside its own prefix
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        members.append(idx)
        counts.append(within - own)
        rank.append(inverse)
        self_in.append(own)
        base.append(np.full(len(idx), offset))
        sorted_members.append(idx[order])
        offset += len(idx)
        candidates += len(idx) * (len(idx) - 1)
    if not members:
        return AdditivePlan([], threshold, 0, 0)
    member, count = np.concatenate(members), np.concatenate(counts)
    rank_all, self_all = np.concatenate(rank), np.concatenate(self_in)
    base_all = np.concatenate(base)
    partners = np.concatenate(sorted_members)
    ends = np.cumsum(count)
    total = int(ends[-1]) if len(ends) else 0
    if total > size:
        rng = np.random.Generator(np.random.PCG64(seed))
        picks = np.sort(rng.choice(total, size, replace=False))
    else:
        picks = np.arange(total)
    row = np.searchsorted(ends, picks, side="right")
    off = picks - (ends[row] - count[row])
    off = off + (self_all[row] & (off >= rank_all[row]))  # skip the row itself
    i, j = member[row], partners[base_all[row] + off]
    order = np.lexsort((j, i))
    pairs = [(int(x), int(y)) for x, y in zip(i[order], j[order], strict=True)]
    return AdditivePlan(pairs, threshold, candidates, total)
