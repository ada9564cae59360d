"""Statistical word salad: a per-label phrase-based SMT system built from NLTK's parts.

The paper trains one Moses system per label (PBSMT-E, -N, -C, ...): premise in, hypothesis out
(NLI); first question in, second question out (QQP); first half of the sentence in, second
half out (SST-2), with a KenLM language model, and "translates" each validation input with
the system of its gold label. Moses and KenLM cannot be installed here; this module builds the
same pipeline from NLTK (already a dependency):

1. word alignment: IBM Model 1 (``nltk.translate.IBMModel1``, ``IBM_ITERATIONS``) in both
   directions, symmetrised with grow-diag-final-and (``nltk.translate.gdfa``), as Moses
   does with GIZA++;
2. phrase extraction (``nltk.translate.phrase_based.phrase_extraction``, phrases of at most
   ``MAX_PHRASE`` tokens); each phrase pair scored by the direct translation probability
   ``log(c(src, trg) / c(src))``, the ``TOP_OPTIONS`` best kept per source phrase;
3. a trigram language model of the target side (interpolated absolute discounting);
4. decoding with NLTK's stack decoder (``nltk.translate.StackDecoder``: future costs,
   distortion penalty), stack size ``STACK_SIZE``. A source word without any phrase is passed
   through unchanged, as Moses passes unknown words (without this NLTK returns nothing).

Training texts are lower-cased Penn-Treebank tokens (``lexical.tokenize(text, lower=True)``),
so outputs are lower-cased like the paper's examples. The decoder is deterministic (no
sampling): the same training pairs give the same outputs. Speed settings (stack size, options,
phrase length) are smaller than Moses's defaults; docs/suites/word-salad.md gives the
measured cost.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

IBM_ITERATIONS = 5
MAX_PHRASE = 3
TOP_OPTIONS = 3
STACK_SIZE = 3
DISCOUNT = 0.75
#: Log probability of passing an unknown source word through.
PASS_THROUGH_LOGPROB = math.log(1e-3)
BOS, EOS = "<s>", "</s>"
#: Entries per language-model cache before it is emptied (caches only save time).
CACHE_LIMIT = 200_000


class TrigramLM:
    """Trigram language model, interpolated absolute discounting down to add-one unigrams.

    ``P(w | h) = max(c(h, w) - D, 0) / c(h) + D * N1+(h ·) / c(h) * P(w | h')``. Implements
    the two methods NLTK's stack decoder calls (natural-log probabilities).
    """

    def __init__(self, texts: Sequence[Sequence[str]], discount: float = DISCOUNT):
        self.counts: dict[tuple[str, ...], Counter] = defaultdict(Counter)
        for tokens in texts:
            padded = [BOS, BOS, *tokens, EOS]
            for i in range(2, len(padded)):
                for k in range(3):
                    self.counts[tuple(padded[i - k : i])][padded[i]] += 1
        self.totals = {h: sum(c.values()) for h, c in self.counts.items()}
        self.vocabulary = len(self.counts[()]) + 1
        self.discount = discount
        self._p: dict[tuple[str, tuple[str, ...]], float] = {}
        self._change: dict[tuple[tuple[str, ...], tuple[str, ...]], float] = {}

    def prob(self, word: str, history: tuple[str, ...]) -> float:
        """``P(word | history)`` (history of at most two tokens)."""
        key = (word, history)
        cached = self._p.get(key)
        if cached is not None:
            return cached
        if len(self._p) >= CACHE_LIMIT:
            self._p.clear()
        if not history:
            value = (self.counts[()].get(word, 0) + 1) / (self.totals.get((), 0) + self.vocabulary)
        else:
            lower = self.prob(word, history[1:])
            counter = self.counts.get(history)
            if counter:
                total = self.totals[history]
                value = (max(counter.get(word, 0) - self.discount, 0) / total
                         + self.discount * len(counter) / total * lower)
            else:
                value = lower
        self._p[key] = value
        return value

    def log_prob(self, words: Sequence[str], context: Sequence[str]) -> float:
        """Natural-log probability of ``words`` after ``context``."""
        history = tuple(context[-2:])
        total = 0.0
        for word in words:
            total += math.log(self.prob(word, history))
            history = (*history, word)[-2:]
        return total

    def probability_change(self, hypothesis, phrase: tuple[str, ...]) -> float:
        """Log-probability change of appending ``phrase`` to a decoder hypothesis."""
        context: list[str] = []
        node = hypothesis
        while node is not None and node.trg_phrase is not None and len(context) < 2:
            context = list(node.trg_phrase) + context
            node = node.previous
        if len(context) < 2:
            context = [BOS, BOS, *context]
        key = (tuple(context[-2:]), tuple(phrase))
        value = self._change.get(key)
        if value is None:
            if len(self._change) >= CACHE_LIMIT:  # bounded memory; values do not change
                self._change.clear()
            value = self._change[key] = self.log_prob(phrase, context)
        return value

    def probability(self, phrase: tuple[str, ...]) -> float:
        """Log probability of ``phrase`` without context (the decoder's future cost)."""
        return self.log_prob(phrase, ())


@dataclass
class _Entry:
    trg_phrase: tuple[str, ...]
    log_prob: float


@dataclass
class PhraseModel:
    """One label's system: phrase table (source phrase -> best options) and language model."""

    table: dict[tuple[str, ...], list[_Entry]] = field(repr=False)
    lm: TrigramLM = field(repr=False)
    pairs: int = 0


class _SentenceTable:
    """The phrase table seen by the decoder for one sentence: unknown words pass through."""

    def __init__(self, table: dict[tuple[str, ...], list[_Entry]], sentence: Sequence[str]):
        self.table = table
        self.extra = {
            (w,): [_Entry((w,), PASS_THROUGH_LOGPROB)] for w in sentence if (w,) not in table
        }

    def __contains__(self, phrase: tuple[str, ...]) -> bool:
        return phrase in self.table or phrase in self.extra

    def translations_for(self, phrase: tuple[str, ...]) -> list[_Entry]:
        found = self.table.get(phrase)
        return found if found is not None else self.extra[phrase]


def _pharaoh(points) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(points))


def train(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> PhraseModel:
    """Train one system on ``(source tokens, target tokens)`` pairs.

    Raises:
        ValueError: No pair has tokens on both sides.

    """
    from nltk.translate import AlignedSent, IBMModel1  # local: heavy imports
    from nltk.translate.gdfa import grow_diag_final_and
    from nltk.translate.phrase_based import phrase_extraction

    pairs = [(list(s), list(t)) for s, t in pairs if s and t]
    if not pairs:
        raise ValueError("cannot train a phrase-based model on no sentence pair")
    forward = [AlignedSent(t, s) for s, t in pairs]  # words = target, mots = source
    backward = [AlignedSent(s, t) for s, t in pairs]
    IBMModel1(forward, IBM_ITERATIONS)
    IBMModel1(backward, IBM_ITERATIONS)
    counts: Counter = Counter()
    for (src, trg), f, b in zip(pairs, forward, backward, strict=True):
        e2f = _pharaoh((i, j) for j, i in f.alignment if i is not None)
        f2e = _pharaoh((i, j) for i, j in b.alignment if j is not None)
        points = grow_diag_final_and(len(src), len(trg), e2f, f2e)
        for _, _, s, t in phrase_extraction(" ".join(src), " ".join(trg), points, MAX_PHRASE):
            counts[(s, t)] += 1
    per_source: Counter = Counter()
    for (s, _), c in counts.items():
        per_source[s] += c
    options: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for (s, t), c in counts.items():
        options[s].append((math.log(c / per_source[s]), t))
    table = {
        tuple(s.split()): [
            _Entry(tuple(t.split()), lp)
            for lp, t in sorted(opts, key=lambda o: (-o[0], o[1]))[:TOP_OPTIONS]
        ]
        for s, opts in sorted(options.items())
    }
    return PhraseModel(table, TrigramLM([t for _, t in pairs]), len(pairs))


def _decoder_class():
    """NLTK's stack decoder whose hypotheses store the source positions they cover.

    ``StackDecoder.translate`` is repeated here with one change, for speed (2.3x on SNLI
    premises): each hypothesis keeps its covered positions instead of walking its chain on
    every call. Search, scoring (phrase, language model, distortion, future cost) and the
    stacks are NLTK's, so the output is the same as ``StackDecoder.translate``'s.
    """
    from nltk.translate import StackDecoder
    from nltk.translate.stack_decoder import _Hypothesis, _Stack

    class Hypothesis(_Hypothesis):
        def __init__(self, raw_score=0.0, src_phrase_span=(), trg_phrase=(), previous=None,
                     future_score=0.0):
            super().__init__(raw_score, src_phrase_span, trg_phrase, previous, future_score)
            covered = list(previous._covered) if previous is not None else []
            if previous is not None:
                covered.extend(range(*src_phrase_span))
            self._covered = tuple(covered)

        def translated_positions(self):
            return list(self._covered)

        def total_translated_words(self):
            return len(self._covered)

    class Decoder(StackDecoder):
        def translate(self, src_sentence):
            sentence = tuple(src_sentence)
            stacks = [_Stack(self.stack_size, self.beam_threshold)
                      for _ in range(len(sentence) + 1)]
            stacks[0].push(Hypothesis())
            all_phrases = self.find_all_src_phrases(sentence)
            future_table = self.compute_future_scores(sentence)
            for stack in stacks:
                for hypothesis in stack:
                    for span in StackDecoder.valid_phrases(all_phrases, hypothesis):
                        phrase = sentence[span[0] : span[1]]
                        for option in self.phrase_table.translations_for(phrase):
                            new = Hypothesis(
                                raw_score=self.expansion_score(hypothesis, option, span),
                                src_phrase_span=span, trg_phrase=option.trg_phrase,
                                previous=hypothesis,
                            )
                            new.future_score = self.future_score(
                                new, future_table, len(sentence))
                            stacks[new.total_translated_words()].push(new)
            best = stacks[len(sentence)].best()
            return best.translation_so_far() if best is not None else []

    return Decoder


def translate(model: PhraseModel, source: Sequence[str]) -> list[str]:
    """Decode ``source`` (unknown words passed through); ``[]`` for an empty source."""
    if not source:
        return []
    decoder = _decoder()(_SentenceTable(model.table, source), model.lm)
    decoder.stack_size = STACK_SIZE
    return list(decoder.translate(list(source)))


@cache
def _decoder():
    return _decoder_class()
