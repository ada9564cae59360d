import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from builders.additive import (
    count_tokens,
    length_threshold,
    maximal_phrases,
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
    st.integers(1, 30),
    st.integers(0, 10),
)
def test_plan_invariants(items, size, seed):
    texts = [" ".join(w) for w, _ in items]
    labels = [lab for _, lab in items]
    threshold = 9.0
    plan = plan_pairs(texts, labels, threshold, size, seed)
    assert plan == plan_pairs(texts, labels, threshold, size, seed)  # deterministic
    assert len(plan.pairs) == min(size, plan.within_length)
    assert plan.within_length <= plan.candidates
    assert len(set(plan.pairs)) == len(plan.pairs)
    for i, j in plan.pairs:
        assert i != j and labels[i] == labels[j]
        assert count_tokens(merge_texts(texts[i], texts[j])) <= threshold
    assert plan.pairs == sorted(plan.pairs)
    every = _brute_force(texts, labels, threshold)
    assert plan.within_length == len(every) and set(plan.pairs) <= every
    if size >= len(every):
        assert set(plan.pairs) == every


def _brute_force(texts, labels, threshold):
    return {
        (i, j)
        for i in range(len(texts))
        for j in range(len(texts))
        if i != j and labels[i] == labels[j]
        and count_tokens(texts[i]) + count_tokens(texts[j]) <= threshold
    }


def test_both_merge_orders_and_seeded_sampling():
    texts = ["a", "a b", "a b c", "x", "x y"]
    plan = plan_pairs(texts, [0, 0, 0, 1, 1], 4, 100, 7)
    assert plan.pairs == [(0, 1), (0, 2), (1, 0), (2, 0), (3, 4), (4, 3)]
    assert plan.candidates == 3 * 2 + 2 * 1 and plan.within_length == 6
    small = plan_pairs(texts, [0, 0, 0, 1, 1], 4, 3, 7)
    assert len(small.pairs) == 3 and set(small.pairs) <= set(plan.pairs)
    assert small == plan_pairs(texts, [0, 0, 0, 1, 1], 4, 3, 7)
    assert small != plan_pairs(texts, [0, 0, 0, 1, 1], 4, 3, 8)  # another seed, other pairs


def test_sampling_is_linear_in_rows_kept():
    # 200,000 rows of one label: 4e10 candidates, never listed (they would not fit in memory).
    rng = np.random.default_rng(0)
    texts = [" ".join("w" * int(k)) for k in rng.integers(1, 30, 200_000)]
    plan = plan_pairs(texts, [0] * len(texts), 27, 1000, 1)
    assert plan.candidates == 200_000 * 199_999 and len(plan.pairs) == 1000
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
