"""The target-side language model of the PBSMT word salad (:mod:`consistency_bench.builders.salad.pbsmt`).

A trigram model with interpolated absolute discounting, the two methods NLTK's stack decoder
calls, the upper bounds the compiled decoder prunes with and the sorted arrays it reads
(:mod:`consistency_bench.builders.salad.pbsmt.stack_decoder`).
"""  # noqa: E501

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

DISCOUNT = 0.75
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
        self._unigram = self.counts[()]
        self._upper: dict[tuple[str, ...], float] = {}  # phrase -> upper()
        self._highest: dict[str, float] = {}  # word -> highest()
        self._after: dict[str, list[tuple[str, ...]]] | None = None  # word -> its histories
        self._arrays: tuple[dict[str, int], tuple] | None = None  # see arrays()
        self._denominator = self.totals.get((), 0) + self.vocabulary
        #: Per seen history: its counts, total and back-off weight ``D * N1+(h ·) / c(h)``.
        self._histories = {
            h: (c, self.totals[h], discount * len(c) / self.totals[h])
            for h, c in self.counts.items() if h and c
        }

    def prob(self, word: str, history: tuple[str, ...]) -> float:
        """``P(word | history)`` (history of at most two tokens)."""
        key = (word, history)
        value = self._p.get(key)
        if value is None:
            if len(self._p) >= CACHE_LIMIT:
                self._p.clear()
            value = self._p[key] = self._compute(word, history)
        return value

    def _compute(self, word: str, history: tuple[str, ...]) -> float:
        """``P(word | history)`` from the unigram up, one history suffix at a time."""
        value = (self._unigram.get(word, 0) + 1) / self._denominator
        discount = self.discount
        for start in range(len(history) - 1, -1, -1):
            seen = self._histories.get(history[start:])
            if seen is not None:  # an unseen history keeps the lower order's value
                counter, total, weight = seen
                value = max(counter.get(word, 0) - discount, 0) / total + weight * value
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
        """Log-probability change of appending ``phrase`` to an NLTK decoder hypothesis."""
        context: list[str] = []
        node = hypothesis
        while node is not None and node.trg_phrase is not None and len(context) < 2:
            context = list(node.trg_phrase) + context
            node = node.previous
        if len(context) < 2:
            context = [BOS, BOS, *context]
        return self.change(tuple(context[-2:]), tuple(phrase))

    def change(self, context: tuple[str, str], phrase: tuple[str, ...]) -> float:
        """Log probability of ``phrase`` after the two target words ``context``."""
        key = (context, phrase)
        value = self._change.get(key)
        if value is None:
            if len(self._change) >= CACHE_LIMIT:  # bounded memory; values do not change
                self._change.clear()
            probs, compute = self._p, self._compute
            value, history = 0.0, context
            for word in phrase:  # log_prob, inlined
                p = probs.get((word, history))
                if p is None:
                    if len(probs) >= CACHE_LIMIT:
                        probs.clear()
                    p = probs[(word, history)] = compute(word, history)
                value += math.log(p)
                history = (history[-1], word)
            self._change[key] = value
        return value

    def arrays(self) -> tuple[dict[str, int], tuple]:
        """The word ids and the counts as sorted arrays, for the compiled decoder.

        Returns ``(ids, arrays)``: ``ids`` maps every word of the model (``<s>`` included) to
        an id below ``len(ids)``; ``len(ids)`` stands for any other word (all its counts are
        0). ``arrays`` is what :func:`consistency_bench.builders.salad.pbsmt.stack_decoder._prob`
        reads:
        the unigram
        counts, the denominator, the discount, the size ``V = len(ids) + 1``; per
        one-word history its total and back-off weight (total 0: not seen); the bigram keys
        ``h * V + w`` (sorted) and counts; the two-word history keys ``h1 * V + h2``
        (sorted), totals and weights; the trigram keys ``(h1 * V + h2) * V + w`` (sorted) and
        counts. Totals and weights are the very numbers :meth:`_compute` uses.
        """
        if self._arrays is None:
            import numpy as np  # local: keeps ``import builders`` light

            ids: dict[str, int] = {BOS: 0}
            for history, counter in self.counts.items():
                for word in (*history, *counter):
                    ids.setdefault(word, len(ids))
            size = len(ids) + 1
            unigram = np.zeros(size, dtype=np.int64)
            for word, count in self._unigram.items():
                unigram[ids[word]] = count
            totals1 = np.zeros(size, dtype=np.int64)
            weights1 = np.zeros(size)
            keys2, counts2, keys_h, totals_h, weights_h, keys3, counts3 = ([] for _ in range(7))
            for history, (counter, total, weight) in self._histories.items():
                code = 0
                for word in history:
                    code = code * size + ids[word]
                if len(history) == 1:
                    totals1[code], weights1[code] = total, weight
                    keys, counts = keys2, counts2
                else:
                    keys_h.append(code)
                    totals_h.append(total)
                    weights_h.append(weight)
                    keys, counts = keys3, counts3
                for word, count in counter.items():
                    keys.append(code * size + ids[word])
                    counts.append(count)

            def by_key(keys: list[int], *values: list) -> list:
                order = np.argsort(np.array(keys, dtype=np.int64), kind="stable")
                return [np.array(keys, dtype=np.int64)[order],
                        *(np.array(v)[order] for v in values)]

            sorted2 = by_key(keys2, np.array(counts2, dtype=np.int64))
            sorted_h = by_key(keys_h, np.array(totals_h, dtype=np.int64),
                              np.array(weights_h, dtype=np.float64))
            sorted3 = by_key(keys3, np.array(counts3, dtype=np.int64))
            self._arrays = (ids, (unigram, self._denominator, float(self.discount), size,
                                  totals1, weights1, *sorted2, *sorted_h, *sorted3))
        return self._arrays

    def probability(self, phrase: tuple[str, ...]) -> float:
        """Log probability of ``phrase`` without context (the decoder's future cost)."""
        return self.log_prob(phrase, ())

    def upper(self, phrase: tuple[str, ...]) -> float:
        """At least :meth:`change` of ``phrase`` after any context (up to rounding).

        The sum of the logs of each word's highest probability (:meth:`highest`), added in
        the order :meth:`change` adds its logs: each term is at least the one it bounds and
        float addition is monotone. Callers add ``LM_CHANGE_BOUND`` for the rounding of logs.
        """
        value = self._upper.get(phrase)
        if value is None:
            value = 0.0
            for word in phrase:
                value += math.log(self.highest(word))
            self._upper[phrase] = value
        return value

    def highest(self, word: str) -> float:
        """The highest ``P(word | history)`` over every history, as :meth:`prob` computes it.

        A history in which ``word`` was never seen gives ``0 + weight * lower`` with a weight
        below 1 (``D * N1+(h ·) <= D * c(h)``), at most the lower order's value (also in float
        arithmetic), so the maximum is over the unigram and the histories ``word`` follows.
        """
        if self._after is None:
            self._after = defaultdict(list)
            for history, counter in self.counts.items():
                if history:
                    for seen in counter:
                        self._after[seen].append(history)
        value = self._highest.get(word)
        if value is None:
            value = self._compute(word, ())
            for history in self._after.get(word, ()):
                value = max(value, self._compute(word, history))
            self._highest[word] = value
        return value

