"""Word-salad generators: determinism and invariants (Hypothesis), PBSMT, gradient edits."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from builders.salad import gradient, lexical, pbsmt

WORDS = st.sampled_from(["a", "the", "cat", "Dog", "sat", "on", "mat", ",", "n't", "big", "b"])
TOKENS = st.lists(WORDS, min_size=0, max_size=12)
FINAL = st.sampled_from(["", ".", "?", "!"])


@given(TOKENS, FINAL)
def test_sort_keeps_bag_and_final_punctuation(tokens, final):
    tokens = tokens + ([final] if final else [])
    out = lexical.sort_tokens(tokens)
    assert Counter(out) == Counter(tokens)
    protected = bool(final) and len(tokens) >= 2
    if protected:
        assert out[-1] == final
    body = out[:-1] if protected else out
    assert body == sorted(body, key=lambda t: (t.lower(), t))


@given(TOKENS, FINAL)
def test_reverse_of_reverse_is_identity(tokens, final):
    tokens = tokens + ([final] if final else [])
    assume(not tokens or tokens[0] not in lexical.FINAL_PUNCTUATION)
    once = lexical.reverse_tokens(tokens)
    assert Counter(once) == Counter(tokens)
    assert lexical.reverse_tokens(once) == tokens


def test_reverse_keeps_final_punctuation():
    assert lexical.reverse_tokens(["a", "b", "c", "."]) == ["c", "b", "a", "."]


@given(
    st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=3), max_size=10),
    FINAL,
    st.integers(0, 2**32),
)
def test_shuffle_leaves_no_original_bigram_when_possible(tokens, final, seed):
    tokens = tokens + ([final] if final else [])
    out = lexical.shuffle_tokens(tokens, lexical.rng_for(seed, "k"))
    assert Counter(out) == Counter(tokens)
    assert out == lexical.shuffle_tokens(tokens, lexical.rng_for(seed, "k"))  # deterministic
    protected = bool(final) and len(tokens) >= 2
    if protected:
        assert out[-1] == final
    # With >= 4 distinct body tokens a bigram-free order exists (and 1000 tries find it).
    body = tokens[:-1] if protected else tokens
    if len(body) == len(set(body)) >= 4 and final not in body:
        assert lexical.surviving_bigrams(tokens, out) == 0


def test_shuffle_of_real_sentence_has_no_original_bigram():
    tokens = lexical.tokenize("The Government Executive articles housed on the website are not.")
    out = lexical.shuffle_tokens(tokens, lexical.rng_for(1, "x"))
    assert out[-1] == "." and lexical.surviving_bigrams(tokens, out) == 0


def test_text_level_transforms():
    assert lexical.sort_text("won't do much.") == "do much n't wo ."
    assert lexical.sort_text("a b c") is None  # already sorted: nothing destroyed
    assert lexical.copysort_text("Two dogs run.", "Animals move.") == "dogs run two ."
    assert lexical.copysort_text("Two dogs run.", "Animals move.", lower=False) == "dogs run Two ."
    assert lexical.reverse_text("Big Red Dog.") == "dog red big ."  # the paper's lower case
    assert lexical.reverse_text("Big Red Dog.", lower=False) == "Dog Red Big ."
    assert lexical.sort_text("A b c") is None  # sorted already; only the case would change
    assert lexical.tokenize("Don't") == ["Do", "n't"] and lexical.tokenize("Don't", True) == [
        "do", "n't"]
    assert lexical.rng_for(3, "a").random() == lexical.rng_for(3, "a").random()
    assert lexical.rng_for(3, "a").random() != lexical.rng_for(3, "b").random()


# ----------------------------------------------------------------------------- PBSMT

PAIRS = [
    ("a man plays a guitar .".split(), "a man plays music .".split()),
    ("a woman plays a piano .".split(), "a woman plays music .".split()),
    ("two dogs run outdoors .".split(), "dogs are outdoors .".split()),
    ("a dog runs on the grass .".split(), "a dog is outdoors .".split()),
] * 3


def test_pbsmt_translates_with_learnt_phrases_and_passes_unknown_words():
    model = pbsmt.train(PAIRS)
    learnt = {w for opts in model.table.values() for e in opts for w in e.trg_phrase}
    assert model.pairs == len(PAIRS) and "music" in learnt
    out = pbsmt.translate(model, "a man plays a zither .".split())
    assert "zither" in out and "music" in out  # unknown word passed through; phrase learnt
    assert out == pbsmt.translate(pbsmt.train(PAIRS), "a man plays a zither .".split())
    assert pbsmt.translate(model, []) == []
    with pytest.raises(ValueError, match="no sentence pair"):
        pbsmt.train([([], ["x"])])


def test_pbsmt_decoder_matches_nltk_stack_decoder():
    from nltk.translate import StackDecoder

    model = pbsmt.train(PAIRS)
    for sentence in ("two dogs plays a guitar .", "a woman runs outdoors on the grass ."):
        tokens = sentence.split()
        reference = StackDecoder(pbsmt._SentenceTable(model.table, tokens), model.lm)
        reference.stack_size = pbsmt.STACK_SIZE
        assert pbsmt.translate(model, tokens) == reference.translate(tokens)


def test_trigram_lm_is_a_distribution():
    lm = pbsmt.TrigramLM([s for _, s in PAIRS])
    words = {w for _, s in PAIRS for w in s} | {pbsmt.EOS, "unseen"}
    history = ("a", "man")
    total = sum(lm.prob(w, history) for w in words)
    assert total < 1.0 + 1e-9 and lm.prob("plays", history) > lm.prob("dogs", history)


# ----------------------------------------------------------------------------- gradient

SCORES = st.lists(st.floats(-5, 5, allow_nan=False), max_size=12)


@given(SCORES, st.integers(0, 2**32))
def test_gradient_edits(scores, seed):
    tokens = [f"t{i}" for i in range(len(scores))]
    low = gradient.bottom(scores)
    assert len(low) == len(scores) // 2
    kept = [i for i in range(len(scores)) if i not in low]
    if low:  # a dropped token is never more important than a kept one
        assert max(scores[i] for i in low) <= min(scores[i] for i in kept)
    dropped = gradient.drop(tokens, scores)
    assert dropped == ([tokens[i] for i in kept] if low else None)
    rep = gradient.repeat(tokens, scores, random.Random(seed))
    if rep is not None:
        assert len(rep) == len(tokens) and {rep[i] for i in low} <= {tokens[i] for i in kept}
        assert rep == gradient.repeat(tokens, scores, random.Random(seed))
    new = gradient.replace(tokens, scores, random.Random(seed), ["x", "y"])
    if new is not None:
        assert all(new[i] in ("x", "y") for i in low)
        assert all(new[i] == tokens[i] for i in kept)
    one = gradient.copy_one(tokens, scores)
    assert one == ([tokens[scores.index(max(scores))]] if tokens else None)
