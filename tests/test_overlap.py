"""Near-duplicate search (consistency_bench.builders.overlap): exact against comparing every pair (issue 32, 9)."""  # noqa: E501

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from consistency_bench.builders.overlap.near_duplicates import TextIndex, least_shared, most_words
from consistency_bench.builders.overlap.words import jaccard, near, word_sets


def test_word_sets_lower_case_and_split_on_anything_but_letters_and_digits():
    assert word_sets(["Don't STOP_now, 2 café-crème!", None, "...", "전제: 한국어 문장1"]) == [
        frozenset({"don", "t", "stop", "now", "2", "café", "crème"}), frozenset(), frozenset(),
        frozenset({"전제", "한국어", "문장1"})]


def test_near_is_jaccard_at_least_four_fifths():
    four = frozenset("abcd")
    assert near(four, frozenset("abcde"))  # 4/5
    assert not near(four, frozenset("abcdef"))  # 4/6
    assert not near(frozenset("abc"), frozenset("abcd"))  # 3/4
    assert not near(frozenset(), frozenset())
    assert jaccard(four, frozenset("abcde")) == pytest.approx(0.8)
    assert [least_shared(n) for n in (1, 4, 5, 6, 10)] == [1, 4, 4, 5, 8]
    assert [most_words(n) for n in (1, 4, 5, 10)] == [1, 5, 6, 12]


def _brute(query: frozenset, atoms: list[frozenset], pairs: list[tuple[int, int]]) -> bool:
    return (any(near(query, a) for a in atoms)
            or any(near(query, atoms[a] | atoms[b]) for a, b in pairs))


@pytest.mark.parametrize("seed", range(6))
def test_index_finds_exactly_what_comparing_every_pair_finds(seed):
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(rng.choice((12, 30, 80)))]
    texts = sorted({" ".join(rng.choices(vocabulary, k=rng.randint(0, 12))) for _ in range(400)})
    pairs = [(rng.randrange(len(texts)), rng.randrange(len(texts))) for _ in range(300)]
    index = TextIndex.build(pa.array(texts), np.array(pairs, dtype=np.int64))
    atoms = word_sets(texts)
    queries = [frozenset(rng.sample(vocabulary, rng.randint(1, min(14, len(vocabulary)))))
               for _ in range(150)]
    queries += [atoms[i] | {"unknown"} for i in range(0, len(atoms), 40)]  # words no text has
    queries += [atoms[a] | atoms[b] for a, b in pairs[:40]]
    found = [index.find(q) is not None for q in queries]
    assert found == [_brute(q, atoms, pairs) for q in queries]
    assert sum(found) >= 40  # the random cases do reach the threshold, both ways
    for query in queries:
        match = index.find(query)
        if match is not None:  # what it reports is a near duplicate
            words = frozenset().union(*word_sets(list(match.texts)))
            assert near(query, words) and match.jaccard == pytest.approx(jaccard(query, words))


def test_exact_is_the_stripped_text():
    index = TextIndex.build(pa.array(["  A cat sat. ", "b"]), np.zeros((0, 2), dtype=np.int64))
    assert index.exact("A cat sat.") and index.exact("A cat sat.\n") and not index.exact("a cat")
    assert index.find(frozenset({"a", "cat", "sat"})) is not None
    assert index.find(frozenset({"a", "dog", "sat"})) is None
