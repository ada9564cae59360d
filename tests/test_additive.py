import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from builders.additive import count_tokens, length_threshold, merge_texts, plan_pairs

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
    for i, j in plan.pairs:
        assert i < j and labels[i] == labels[j]
        assert count_tokens(merge_texts(texts[i], texts[j])) <= threshold
    assert plan.pairs == sorted(plan.pairs)


def test_sampling_does_not_depend_on_other_labels():
    # A pair's key depends only on (seed, i, j): the order of the input never matters.
    texts = ["a"] * 6
    full = plan_pairs(texts, [0, 0, 0, 1, 1, 1], 10, 100, 7)
    assert len(full.pairs) == 6
    small = plan_pairs(texts, [0, 0, 0, 1, 1, 1], 10, 2, 7)
    assert set(small.pairs) <= set(full.pairs)
    assert np.all(np.diff([i * 100 + j for i, j in small.pairs]) > 0)
