from collections import Counter
from itertools import combinations
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consistency_bench.builders.becel.additive import (
    count_tokens,
    length_threshold,
    maximal_phrases,
    merge_order,
    merge_texts,
    plan_pairs,
)

words = st.lists(
    st.sampled_from(["good", "bad", "film", ".", "very", "plot"]), min_size=1, max_size=8
)


def test_tokens_and_merge():
    assert count_tokens("it 's a charming journey . ") == 7  # it ' s a charming journey .
    assert merge_texts(" a b ", "c . ") == "a b c ."
    assert count_tokens(merge_texts("a b", "c d")) == 4
    assert length_threshold(["a", "a b", "a b c", "a b c d"]) == 3.25


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.tuples(words, st.integers(0, 2)), min_size=2, max_size=25),
    st.one_of(st.none(), st.integers(1, 30)),
    st.integers(0, 10),
)
def test_plan_invariants(items, size, seed):
    texts = [" ".join(w) for w, _ in items]
    labels = [lab for _, lab in items]
    threshold = 9.0
    plan = plan_pairs(texts, labels, threshold, size, seed)
    assert plan == plan_pairs(texts, labels, threshold, size, seed)  # deterministic
    every = _brute_force(texts, labels, threshold)
    assert plan.within_length == len(every)
    assert plan.candidates == sum(n * (n - 1) // 2 for n in Counter(labels).values())
    assert len(plan.pairs) == (len(every) if size is None else min(size, len(every)))
    assert plan.pairs == sorted(plan.pairs)
    combinations = [frozenset(p) for p in plan.pairs]
    assert len(set(combinations)) == len(combinations)  # no combination in both orders
    for i, j in plan.pairs:
        assert i != j and labels[i] == labels[j]
        assert count_tokens(merge_texts(texts[i], texts[j])) <= threshold
        assert (i, j) == merge_order(min(i, j), max(i, j), seed)
    assert set(combinations) <= every
    if size is None:
        assert set(combinations) == every


def _brute_force(texts, labels, threshold):
    """Every unordered same-label combination whose merged text is within ``threshold``."""
    return {
        frozenset((i, j))
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
        if labels[i] == labels[j]
        and count_tokens(merge_texts(texts[i], texts[j])) <= threshold
    }


def test_every_combination_once_no_sampling():
    # 7 short texts of label 0 and 4 of label 1, all within the cutoff: C(7,2) + C(4,2) = 27
    # combinations, each kept once; a long text of label 0 pairs with nothing.
    texts = ["a", "b c", "d", "e f", "g", "h", "i j", "w", "x", "y z", "z", "l " * 9]
    labels = [0] * 7 + [1] * 4 + [0]
    plan = plan_pairs(texts, labels, 4, None, 7)
    assert len(plan.pairs) == plan.within_length == comb(7, 2) + comb(4, 2) == 27
    assert plan.candidates == comb(8, 2) + comb(4, 2)
    assert {frozenset(p) for p in plan.pairs} == {
        frozenset(p) for group in (range(7), range(7, 11)) for p in combinations(group, 2)
    }
    assert not {(j, i) for i, j in plan.pairs} & set(plan.pairs)  # no reversed duplicates
    firsts = sum(i < j for i, j in plan.pairs)
    assert 0 < firsts < len(plan.pairs)  # both orders occur, one per combination


def test_merge_order_is_seeded_per_combination():
    texts = ["a", "a b", "a b c", "x", "x y"]
    plan = plan_pairs(texts, [0, 0, 0, 1, 1], 4, None, 7)
    assert sorted(tuple(sorted(p)) for p in plan.pairs) == [(0, 1), (0, 2), (3, 4)]
    assert plan.candidates == 3 + 1 and plan.within_length == 3
    # The order of a combination depends on (seed, its two positions) only: not on other rows.
    more = plan_pairs([*texts, "a", "x"], [0, 0, 0, 1, 1, 0, 1], 4, None, 7)
    assert set(plan.pairs) <= set(more.pairs)
    orders = {merge_order(0, 1, s) for s in range(20)}
    assert orders == {(0, 1), (1, 0)}  # the seed changes the order
    assert merge_order(0, 1, 3) == merge_order(0, 1, 3)


def test_size_draws_combinations_seeded():
    texts = ["a", "a b", "a b c", "x", "x y"]
    every = plan_pairs(texts, [0, 0, 0, 1, 1], 4, None, 7)
    small = plan_pairs(texts, [0, 0, 0, 1, 1], 4, 2, 7)
    assert len(small.pairs) == 2 and set(small.pairs) <= set(every.pairs)
    assert small == plan_pairs(texts, [0, 0, 0, 1, 1], 4, 2, 7)
    assert plan_pairs(texts, [0, 0, 0, 1, 1], 4, 100, 7) == every
    with pytest.raises(ValueError, match="additive size 0"):
        plan_pairs(texts, [0, 0, 0, 1, 1], 4, 0, 7)


def test_sampling_is_linear_in_rows_kept():
    # 200,000 rows of one label: 2e10 combinations, never listed (they would not fit in memory).
    rng = np.random.default_rng(0)
    texts = [" ".join("w" * int(k)) for k in rng.integers(1, 30, 200_000)]
    plan = plan_pairs(texts, [0] * len(texts), 27, 1000, 1)
    assert plan.candidates == 200_000 * 199_999 // 2 and len(plan.pairs) == 1000
    assert all(count_tokens(texts[i]) + count_tokens(texts[j]) <= 27 for i, j in plan.pairs)


def test_maximal_phrases_are_the_sentences():
    phrases = ["a good film", "good film", "film", "a", "bad", "bad  plot .", "plot", "good"]
    assert maximal_phrases(phrases) == [0, 5]  # "a good film", "bad plot ." (space normalised)


def _maximal_phrases_reference(phrases):
    """The first implementation: every phrase's every sub-span looked up."""
    normal = [" ".join(p.split()) for p in phrases]
    known = set(normal)
    inside = set()
    for phrase in known:
        tokens = phrase.split(" ")
        for a in range(len(tokens)):
            for b in range(a + 1, len(tokens) + 1):
                part = " ".join(tokens[a:b])
                if part != phrase and part in known:
                    inside.add(part)
    return [k for k, p in enumerate(normal) if p not in inside]


@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=6)
                .map(" ".join), max_size=30))
def test_maximal_phrases_is_the_reference(phrases):
    assert maximal_phrases(phrases) == _maximal_phrases_reference(phrases)
