"""Word-salad generators: determinism and invariants (Hypothesis), PBSMT, gradient edits."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from consistency_bench.builders.salad.gradient import transform as gradient
from consistency_bench.builders.salad.lexical import transform as lexical
from consistency_bench.builders.salad.pbsmt import decode as pbsmt_decode
from consistency_bench.builders.salad.pbsmt import decoder_constants as pbsmt_constants
from consistency_bench.builders.salad.pbsmt import language_model as pbsmt_lm
from consistency_bench.builders.salad.pbsmt import phrase_table as pbsmt_train

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


def _bigram_free_exists(tokens: list[str]) -> bool:
    """Whether any order of the body (final punctuation last) keeps no original bigram."""
    body, tail = lexical.split_final(tokens)
    seen = lexical.bigrams(tokens)
    return any(not any(p in seen for p in itertools.pairwise([*order, *tail]))
               for order in set(itertools.permutations(body)))


@given(
    st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=3), max_size=7),
    FINAL,
    st.integers(0, 2**32),
)
def test_shuffle_leaves_no_original_bigram(tokens, final, seed):
    tokens = tokens + ([final] if final else [])
    out = lexical.shuffle_tokens(tokens, lexical.rng_for(seed, "k"))
    assert out == lexical.shuffle_tokens(tokens, lexical.rng_for(seed, "k"))  # deterministic
    if out is None:  # issue 32 item 7: no order meets the rule, the row is left out
        assert not _bigram_free_exists(tokens)
        return
    assert Counter(out) == Counter(tokens)
    if bool(final) and len(tokens) >= 2:
        assert out[-1] == final
    assert lexical.surviving_bigrams(tokens, out) == 0


@given(st.lists(st.sampled_from(["it", "no", ",", "a", "gets", "."]), max_size=7))
def test_bigram_free_order_is_found_whenever_one_exists(tokens):
    body, tail = lexical.split_final(tokens)
    out = lexical.bigram_free_order(body, tail, lexical.bigrams(tokens))
    assert (out is not None) == _bigram_free_exists(tokens)
    if out is not None:
        assert Counter(out) == Counter(tokens) and out[len(body):] == tail
        assert lexical.surviving_bigrams(tokens, out) == 0


def test_shuffle_leaves_out_texts_without_a_bigram_free_order():
    """mnli r03025 and r08650 (issue 32 item 7): before, "it it gets ." and ", no no"."""
    for text in ("it gets it.", "no, no"):
        assert lexical.shuffle_tokens(lexical.tokenize(text, True), lexical.rng_for(1, "x")) is None
        assert lexical.shuffle_text(text, lexical.rng_for(1, "x")) is None
    # a repetitive text that has one: the search orders it
    tokens = ["a", "a", "b", "b", "c", "c", "."]
    body, tail = lexical.split_final(tokens)
    found = lexical.bigram_free_order(body, tail, lexical.bigrams(tokens))
    assert found is not None and lexical.surviving_bigrams(tokens, found) == 0


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


TRICKY = st.lists(st.sampled_from([*"aAcnotdyegimlwrsTI'\"`.,:;!?()[]{}<>-$%&@# \t\n\x1c",
                                   "cannot", "'tis", "wanna ", "n't ", "'ll ", "...", "--",
                                   "ſ", "ı", "İ", "K", "1", "٣"]), max_size=14)


@settings(max_examples=500, deadline=None)
@given(TRICKY)
def test_treebank_port_is_nltks_tokenizer(parts):
    """Issue 32 item 12: the tokenizer run with ``re`` gives NLTK's tokens."""
    from nltk.tokenize import TreebankWordTokenizer

    from consistency_bench.builders.salad import treebank

    text = "".join(parts)
    assert treebank.tokenize(text) == TreebankWordTokenizer().tokenize(text)


def test_treebank_port_on_real_texts(corpora):
    """MNLI dev matched, every premise and hypothesis (scripts/treebank_compare.py: all)."""
    import json

    from nltk.tokenize import TreebankWordTokenizer

    from consistency_bench.builders.salad import treebank

    nltk = TreebankWordTokenizer()
    with open(corpora / "mnli/dev_matched.generative-nli.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    texts = dict.fromkeys(t for row in rows for t in (row["premise"], row["hypothesis"]))
    assert len(texts) > 13000
    assert all(treebank.tokenize(t) == nltk.tokenize(t) for t in texts)


# ----------------------------------------------------------------------------- PBSMT

PAIRS = [
    ("a man plays a guitar .".split(), "a man plays music .".split()),
    ("a woman plays a piano .".split(), "a woman plays music .".split()),
    ("two dogs run outdoors .".split(), "dogs are outdoors .".split()),
    ("a dog runs on the grass .".split(), "a dog is outdoors .".split()),
] * 3


def test_pbsmt_translates_with_learnt_phrases_and_passes_unknown_words():
    model = pbsmt_train.train(PAIRS)
    learnt = {w for opts in model.table.values() for e in opts for w in e.trg_phrase}
    assert model.pairs == len(PAIRS) and "music" in learnt
    out = pbsmt_decode.translate(model, "a man plays a zither .".split(), drop_unknown=False)
    assert "zither" in out and "music" in out  # unknown word passed through; phrase learnt
    assert out == pbsmt_decode.translate(pbsmt_train.train(PAIRS), "a man plays a zither .".split(),
                                  drop_unknown=False)
    dropped = pbsmt_decode.translate(model, "a man plays a zither .".split())  # the default
    assert "zither" not in dropped and "music" in dropped
    assert pbsmt_decode.translate(model, []) == [] == pbsmt_decode.translate(model, ["zither"])
    with pytest.raises(ValueError, match="no sentence pair"):
        pbsmt_train.train([([], ["x"])])


def test_pbsmt_decoder_matches_nltk_stack_decoder():
    from nltk.translate import StackDecoder

    model = pbsmt_train.train(PAIRS)
    for sentence in ("two dogs plays a guitar .", "a woman runs outdoors on the grass ."):
        tokens = sentence.split()
        reference = StackDecoder(pbsmt_decode._SentenceTable(model.table, tokens), model.lm)
        reference.stack_size = pbsmt_decode.STACK_SIZE
        expected = reference.translate(tokens)
        assert pbsmt_decode.translate(model, tokens, drop_unknown=False) == expected


def test_trigram_lm_is_a_distribution():
    lm = pbsmt_lm.TrigramLM([s for _, s in PAIRS])
    words = {w for _, s in PAIRS for w in s} | {pbsmt_lm.EOS, "unseen"}
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


# The faster PBSMT parts against NLTK's and the code they replaced (issue 12: byte-identical).

SENTENCE_WORDS = st.sampled_from(
    ["a", "man", "plays", "guitar", "two", "dogs", "run", "outdoors", ".", "on", "the", "grass",
     "woman", "piano", "zither", "unseen", "music"]
)


def _nltk_alignments(corpus):
    from nltk.translate import AlignedSent, IBMModel1

    sentences = [AlignedSent(list(words), list(mots)) for words, mots in corpus]
    IBMModel1(sentences, pbsmt_train.IBM_ITERATIONS)
    return [sorted(s.alignment, key=lambda p: p[0]) for s in sentences]


@given(st.lists(st.tuples(st.lists(SENTENCE_WORDS, min_size=1, max_size=7),
                          st.lists(SENTENCE_WORDS, min_size=1, max_size=7)),
                min_size=1, max_size=12))
def test_ibm1_alignments_are_nltks(corpus):
    assert pbsmt_train.ibm1_alignments(corpus) == _nltk_alignments(corpus)


def test_ibm1_alignments_are_nltks_on_repeated_words():
    corpus = [(["a", "a", "b"], ["x", "y", "x"]), (["b", "a"], ["y", "y"]), (["c"], ["x"])] * 3
    assert pbsmt_train.ibm1_alignments(corpus) == _nltk_alignments(corpus)
    assert pbsmt_train.ibm1_alignments(PAIRS) == _nltk_alignments(PAIRS)


def test_ibm1_is_independent_of_vocabulary_size():
    # 100,000 distinct words a side: a dense translation table would hold 10^10 entries (80 GB);
    # the entries here are the 20,000 x 5 x 6 (sentence, target, source) positions.
    corpus = [([f"t{5 * k + i}" for i in range(5)], [f"s{5 * k + i}" for i in range(5)])
              for k in range(20_000)]
    out = pbsmt_train.ibm1_alignments(corpus)
    assert len(out) == 20_000 and all(len(a) == 5 for a in out)


class _ReferenceLM:
    """The trigram model as first written (recursive, NLTK's decoder interface)."""

    def __init__(self, texts):
        from collections import defaultdict

        self.counts = defaultdict(Counter)
        for tokens in texts:
            padded = [pbsmt_lm.BOS, pbsmt_lm.BOS, *tokens, pbsmt_lm.EOS]
            for i in range(2, len(padded)):
                for k in range(3):
                    self.counts[tuple(padded[i - k : i])][padded[i]] += 1
        self.totals = {h: sum(c.values()) for h, c in self.counts.items()}
        self.vocabulary = len(self.counts[()]) + 1

    def prob(self, word, history):
        if not history:
            return (self.counts[()].get(word, 0) + 1) / (self.totals.get((), 0) + self.vocabulary)
        lower = self.prob(word, history[1:])
        counter = self.counts.get(history)
        if not counter:
            return lower
        total, d = self.totals[history], pbsmt_lm.DISCOUNT
        return max(counter.get(word, 0) - d, 0) / total + d * len(counter) / total * lower

    def log_prob(self, words, context):
        import math

        history, total = tuple(context[-2:]), 0.0
        for word in words:
            total += math.log(self.prob(word, history))
            history = (*history, word)[-2:]
        return total

    def probability_change(self, hypothesis, phrase):
        context, node = [], hypothesis
        while node is not None and node.trg_phrase is not None and len(context) < 2:
            context = list(node.trg_phrase) + context
            node = node.previous
        if len(context) < 2:
            context = [pbsmt_lm.BOS, pbsmt_lm.BOS, *context]
        return self.log_prob(phrase, context)

    def probability(self, phrase):
        return self.log_prob(phrase, ())


@given(st.lists(SENTENCE_WORDS, max_size=4), st.lists(SENTENCE_WORDS, max_size=2))
def test_trigram_lm_is_the_reference(words, context):
    texts = [s for _, s in PAIRS]
    lm, reference = pbsmt_lm.TrigramLM(texts), _ReferenceLM(texts)
    context = [pbsmt_lm.BOS, pbsmt_lm.BOS, *context][-2:]
    assert lm.log_prob(words, context) == reference.log_prob(words, context)
    assert lm.change(tuple(context), tuple(words)) == reference.log_prob(words, context)


@settings(deadline=None)  # the first example compiles
@given(st.lists(SENTENCE_WORDS, max_size=4), st.lists(SENTENCE_WORDS, max_size=2))
def test_compiled_language_model_is_the_python_one_bit_for_bit(words, context):
    """The decoder's compiled ``_prob`` and ``_change`` over ``TrigramLM.arrays()``."""
    import numpy as np

    from consistency_bench.builders.salad.pbsmt import stack_decoder

    lm = pbsmt_lm.TrigramLM([s for _, s in PAIRS])
    ids, arrays = lm.arrays()
    assert "unseen" not in ids and pbsmt_lm.BOS in ids  # one id for every unknown word

    def code(word: str) -> int:
        return ids.get(word, len(ids))

    history = tuple([pbsmt_lm.BOS, pbsmt_lm.BOS, *context][-2:])
    for known in range(3):  # histories of 0, 1 and 2 words, as the future costs use them
        part = history[2 - known:]
        h1, h2 = (code(history[0]), code(history[1]))
        for word in [*words, pbsmt_lm.EOS]:
            assert stack_decoder._prob(code(word), h1, h2, known, arrays) == lm.prob(word, part)
    encoded = np.array([code(w) for w in words] or [0], dtype=np.int64)
    assert (stack_decoder._change(code(history[0]), code(history[1]), encoded, len(words),
                                  arrays) == lm.change(history, tuple(words)))


@settings(deadline=None)  # the first example may compile the decoder
@given(st.lists(SENTENCE_WORDS, min_size=1, max_size=12))
def test_decoder_is_nltks_with_the_reference_lm(tokens):
    from nltk.translate import StackDecoder

    model = pbsmt_train.train(PAIRS)
    reference = StackDecoder(pbsmt_decode._SentenceTable(model.table, tokens),
                             _ReferenceLM([s for _, s in PAIRS]))
    reference.stack_size = pbsmt_decode.STACK_SIZE
    assert pbsmt_decode.translate(model, tokens, drop_unknown=False) == reference.translate(tokens)


def test_each_compiled_function_compiles_once(tmp_path):
    """A decode in a fresh process types each compiled function once (a literal argument,
    e.g. ``_prob(..., 2, lm)``, makes numba compile a second version: ~0.4 s per process)."""
    import json
    import os

    from tests.helpers import python_stdout

    code = (
        "import json\n"
        "from consistency_bench.builders.salad.pbsmt import decode as pbsmt_decode\n"
        "from consistency_bench.builders.salad.pbsmt import stack_decoder as sd\n"
        "from consistency_bench.builders.salad.pbsmt import phrase_table as pbsmt_train\n"
        "from tests.test_salad_generators import PAIRS\n"
        "pbsmt_decode.translate(pbsmt_train.train(PAIRS),\n"
        "                       'a man plays a zither on the grass .'.split())\n"
        "names = ['_count', '_prob', '_change', '_future_costs', '_by_bound', '_later', "
        "'_aim', 'decode']\n"
        "print(json.dumps({n: len(getattr(sd, n).signatures) for n in names}))\n"
    )
    out = python_stdout(code, env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts == dict.fromkeys(counts, 1)


def test_pbsmt_output_that_copies_its_source_is_not_a_salad():
    """A system that translates every word to itself returns the premise: no row (issue 13)."""
    from consistency_bench.builders.readers import Example
    from consistency_bench.builders.salad.pbsmt.suite_rows import pbsmt_outcome, pbsmt_text

    same = [(s.split(), s.split()) for s in ("x y", "y z", "x z", "z w", "w x")] * 3
    models = {0: pbsmt_train.train(same)}  # nothing but copies to choose from, penalty or not
    record = Example(row=0, text="X y z", text_pair="A man plays music .", label=0)
    assert pbsmt_decode.translate(models[0], "x y z".split()) == "x y z".split()
    assert pbsmt_outcome(models, record) == (None, "copy")
    # SST-2 form: the sentence's first half translated to itself is not a salad either
    assert pbsmt_text(models, Example(row=0, text="x y z w", text_pair=None, label=0)) is None
    # a real translation is kept
    learnt = {0: pbsmt_train.train(PAIRS)}
    premise = "A man plays a guitar ."
    real = Example(row=0, text=premise, text_pair="A man plays music .", label=0)
    assert pbsmt_text(learnt, real) not in (None, premise.lower())


# Issue 21: outputs that are the premise reordered, and a decoder that copies.

REORDERED = [("a b c d".split(), "d c b a".split()), ("b c d e".split(), "e d c b".split())] * 3


def test_choose_output_rejects_permutations_copies_and_empty_outputs():
    from consistency_bench.builders.salad.pbsmt.suite_rows import choose_output

    source, target = "dogs chase red balls".split(), "animals play outside".split()
    other = "cats sleep indoors".split()
    assert choose_output([["balls", "red", "chase", "dogs"], other], source, target) == (
        1, "n-best:permutation")
    assert choose_output([target, [], other], source, target) == (2, "n-best:copy")
    assert choose_output([other], source, target) == (0, "best")
    assert choose_output([["red", "dogs", "chase", "balls"], source, target, []],
                         source, target) == (None, "permutation")
    assert choose_output([source], source, target) == (None, "copy")
    assert choose_output([], source, target) == (None, "empty")
    assert choose_output([["dogs", "chase", "cats"]], source, target) == (0, "best")


def test_choose_output_rejects_degenerate_outputs():
    """Issue 32 item 1: the issue's examples, and falling through to a later hypothesis."""
    from consistency_bench.builders.salad.degenerate import degenerate
    from consistency_bench.builders.salad.pbsmt.suite_rows import choose_output

    source = "a young boy playing in the grass .".split()
    target = "a child is outside .".split()
    for output, reason in ((["."], "short"), (["the"], "short"), (["as", "as"], "short"),
                           ([",", "and", "the", "and"], "function words"),
                           (["with", "the", "and"], "function words"), (["--", "."], "short"),
                           (["boy", "playing", "in", "the", "grass"], "source run"),
                           (["child", "is", "outside"], "source run")):
        assert degenerate(output, source, target) == reason, output
        assert choose_output([output], source, target) == (None, reason)
    kept = "boy child grass playing outside".split()
    assert degenerate(kept, source, target) is None
    assert choose_output([["the", "."], kept], source, target) == (1, "n-best:short")
    # SST-2: a run of the whole sentence the output replaces is degenerate too
    assert choose_output([["child", "is", "outside"]], ["x"], ["y"],
                         replaced=target) == (None, "source run")


def test_pbsmt_output_is_never_a_permutation_of_its_source():
    """A system trained to reverse its input returns the source reordered: no such row."""
    from consistency_bench.builders.readers import Example
    from consistency_bench.builders.salad.pbsmt.suite_rows import is_permutation, pbsmt_outcome

    models = {0: pbsmt_train.train(REORDERED)}
    record = Example(row=0, text="a b c d", text_pair="q r", label=0)
    best = pbsmt_decode.translate(models[0], "a b c d".split())
    assert is_permutation(best, "a b c d".split()) and best != "a b c d".split()
    text, reason = pbsmt_outcome(models, record)
    assert reason in ("n-best:permutation", "permutation")
    assert text is None or not is_permutation(text.split(), "a b c d".split())
    assert text is None  # every hypothesis of this system reorders the same four words


def test_decoder_prefers_a_translation_to_a_copy():
    """A phrase seen copied 3 times and translated once: the copy penalty picks the latter."""
    pairs = [("the dog runs".split(), "the dog runs".split())] * 3 + [
        ("the dog runs".split(), "an animal moves".split())]
    assert pbsmt_train.COPY_PENALTY < 0
    plain = pbsmt_train.train(pairs, copy_penalty=0.0)
    assert pbsmt_decode.translate(plain, "the dog runs".split()) == "the dog runs".split()
    tuned = pbsmt_train.train(pairs)
    assert pbsmt_decode.translate(tuned, "the dog runs".split()) == "an animal moves".split()
    assert pbsmt_train.copied(("the", "dog"), ("a", "dog", "dog")) == 2


def test_nbest_starts_with_the_best_and_is_at_most_a_stack():
    model = pbsmt_train.train(PAIRS)
    tokens = "a woman plays a guitar on the grass .".split()
    nbest = pbsmt_decode.translate_nbest(model, tokens)
    assert 1 <= len(nbest) <= pbsmt_decode.NBEST
    assert nbest[0] == pbsmt_decode.translate(model, tokens)
    assert len(set(map(tuple, nbest))) == len(nbest)  # distinct outputs


# Best-first stacks (issue 12): the decoder must return what the arrival-order one returned.

CORPUS = st.lists(st.tuples(st.lists(SENTENCE_WORDS, min_size=1, max_size=8),
                            st.lists(SENTENCE_WORDS, min_size=1, max_size=8)),
                  min_size=1, max_size=10)


@settings(max_examples=300, deadline=None)
@given(CORPUS, st.lists(st.lists(SENTENCE_WORDS, min_size=1, max_size=14), min_size=1,
                        max_size=4), st.integers(1, 5))
def test_best_first_decoder_is_the_arrival_order_decoder(corpus, sentences, stack_size):
    from tests.pbsmt_push_decoder import push_decode

    model = pbsmt_train.train(corpus)
    for tokens in sentences:
        table, sentence = pbsmt_decode._SentenceTable(model.table, tokens), tuple(tokens)
        assert (pbsmt_decode.decode(table, model.lm, sentence, model.longest, stack_size)
                == push_decode(table, model.lm, sentence, model.longest, stack_size))


@settings(max_examples=200, deadline=None)
@given(CORPUS, st.lists(st.lists(SENTENCE_WORDS, min_size=1, max_size=14), min_size=1,
                        max_size=4), st.integers(1, 5), st.integers(1, 40))
def test_longer_last_stack_is_the_arrival_order_decoders(corpus, sentences, stack_size, nbest):
    """Issue 32: the n-best list of a longer last stack, against the reference decoder.

    The NLTK-sized list (``nbest = stack_size``) is a prefix of every longer one: the last
    stack feeds no other, so keeping more there changes nothing before it.
    """
    from tests.pbsmt_push_decoder import push_decode_nbest

    model = pbsmt_train.train(corpus)
    for tokens in sentences:
        table, sentence = pbsmt_decode._SentenceTable(model.table, tokens), tuple(tokens)
        longer = pbsmt_decode.decode_nbest(table, model.lm, sentence, model.longest, stack_size,
                                    nbest)
        reference = push_decode_nbest(table, model.lm, sentence, model.longest, stack_size,
                                      max(stack_size, nbest))
        assert longer == list(map(list, dict.fromkeys(map(tuple, reference))))
        short = pbsmt_decode.decode_nbest(table, model.lm, sentence, model.longest, stack_size,
                                   stack_size)
        assert longer[: len(short)] == short


def test_best_first_decoder_on_many_sentences_of_a_real_size():
    """400 random 5- to 30-word sentences over a 60-word vocabulary, 300 training pairs."""
    from tests.pbsmt_push_decoder import push_decode

    rng = random.Random(12)
    words = [f"w{k}" for k in range(60)]

    def sentence(low: int, high: int) -> list[str]:
        return rng.choices(words, k=rng.randint(low, high))

    model = pbsmt_train.train([(sentence(3, 20), sentence(3, 12)) for _ in range(300)])
    for _ in range(400):
        tokens = sentence(5, 30)
        table, source = pbsmt_decode._SentenceTable(model.table, tokens), tuple(tokens)
        assert (pbsmt_decode.decode(table, model.lm, source, model.longest)
                == push_decode(table, model.lm, source, model.longest))


@given(st.lists(SENTENCE_WORDS, min_size=1, max_size=4), st.tuples(SENTENCE_WORDS,
                                                                   SENTENCE_WORDS))
def test_language_model_upper_bound_holds_after_any_context(words, context):
    lm = pbsmt_lm.TrigramLM([t for _, t in PAIRS] + [s for s, _ in PAIRS[:2]])
    for history in (context, (pbsmt_lm.BOS, pbsmt_lm.BOS), (pbsmt_lm.BOS, context[1])):
        bound = lm.upper(tuple(words)) + pbsmt_constants.LM_CHANGE_BOUND
        assert lm.change(history, tuple(words)) <= bound
