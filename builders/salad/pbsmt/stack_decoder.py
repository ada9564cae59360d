"""The PBSMT stack decoder and its trigram language model, compiled with numba.

:func:`decode` is the decoder of :mod:`consistency_bench.builders.salad.pbsmt` (NLTK's
``StackDecoder`` with
NLTK's arithmetic) over integer arrays: words are language-model ids, a sentence's phrase
options are rows of arrays (:func:`consistency_bench.builders.salad.pbsmt.decode.decode` builds
them). Every
score is computed by the same float operations in the same order as the Python reference
(``tests/pbsmt_push_decoder.py``) and NLTK, and ``math.log`` compiles to the C library's
``log`` that Python calls, so the output is the same, bit for bit
(``tests/test_salad_generators.py`` compares them). Compiled, decoding ``mnli_salad_pbsmt``
takes 5.65x less CPU than the Python decoder it replaced (docs/benchmarks.md); the first call
in a process compiles it (~5 s), or loads it from numba's on-disk cache (``cache=True``).

The language model's counts are sorted ``int64`` keys with their values
(:meth:`consistency_bench.builders.salad.pbsmt.language_model.TrigramLM.arrays`): ``h * V + w`` for
a bigram,
``(h1 * V + h2)``
for a trigram history and ``(h1 * V + h2) * V + w`` for a trigram, ``V`` the vocabulary size
plus one (the last id stands for every word the model has never seen: all its counts are 0).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from consistency_bench.builders.salad.pbsmt.decoder_constants import (
    APPROXIMATE,
    LM_CHANGE_BOUND,
    LOG_DISTORTION,
)


@njit(cache=True)
def _count(keys, values, key):
    """The value stored under ``key`` in the sorted ``keys``, 0 when absent."""
    at = np.searchsorted(keys, key)
    if at < len(keys) and keys[at] == key:
        return values[at]
    return 0


@njit(cache=True)
def _prob(word, h1, h2, known, lm):
    """``TrigramLM._compute``: ``P(word | history)``; ``known`` history words (0, 1 or 2)."""
    (unigram, denominator, discount, size, bigram_total, bigram_weight, bigram_keys,
     bigram_counts, history_keys, history_totals, history_weights, trigram_keys,
     trigram_counts) = lm
    value = (unigram[word] + 1) / denominator
    if known >= 1:  # the history (h2,)
        total = bigram_total[h2]
        if total > 0:
            seen = _count(bigram_keys, bigram_counts, h2 * size + word)
            value = max(seen - discount, 0.0) / total + bigram_weight[h2] * value
    if known == 2:  # the history (h1, h2)
        pair = h1 * size + h2
        at = np.searchsorted(history_keys, pair)
        if at < len(history_keys) and history_keys[at] == pair:
            seen = _count(trigram_keys, trigram_counts, pair * size + word)
            value = (max(seen - discount, 0.0) / history_totals[at]
                     + history_weights[at] * value)
    return value


@njit(cache=True)
def _change(c1, c2, words, length, lm):
    """``TrigramLM.change``: log probability of ``words[:length]`` after ``(c1, c2)``."""
    value = 0.0
    known = np.int64(2)  # not the literal 2: _prob then compiles once, for int64 (as below)
    for i in range(length):
        word = words[i]
        value += math.log(_prob(word, c1, c2, known, lm))
        c1, c2 = c2, word
    return value


@njit(cache=True)
def _future_costs(source, span_first, span_end, option_logprob, longest, lm):
    """``StackDecoder.compute_future_scores`` (``-inf`` where nothing covers a span).

    As NLTK, a span's own cost is its best option's log probability plus the language model's
    probability of the *source* words of the span, without context.
    """
    n = len(source)
    scores = np.full((n + 1, n + 1), -np.inf)
    for length in range(1, n + 1):
        for start in range(0, n - length + 1):
            end = start + length
            value = -np.inf
            if length <= longest:
                for s in range(span_first[start], span_first[start + 1]):
                    if span_end[s] == end:
                        lp = 0.0  # TrigramLM.probability: the history grows from nothing
                        for i in range(start, end):
                            known = min(i - start, 2)
                            h1 = source[i - 2] if known == 2 else 0
                            h2 = source[i - 1] if known >= 1 else 0
                            lp += math.log(_prob(source[i], h1, h2, known, lm))
                        value = option_logprob[s, 0] + lp
            if length > 1:  # the best split; the first of equal values, as NLTK's ">"
                best = scores[start, start + 1] + scores[start + 1, end]
                for mid in range(start + 2, end):
                    total = scores[start, mid] + scores[mid, end]
                    if total > best:
                        best = total
                if best > value:
                    value = best
            scores[start, end] = value
    return scores


# One piece (over 60 lines): the compiled decoder's hypothesis arrays live in this frame.
@njit(cache=True)
def decode(source, span_first, span_end, option_count, option_logprob, option_upper,
           option_length, option_words, best_bound, longest, stack_size, last_size, bos, lm):
    """The last stack's hypotheses, best first, as rows of their phrases.

    Args:
        source: The sentence as language-model ids.
        span_first: Per start position ``a`` (and one past the end), the first span index
            starting at ``a``; the spans of ``a`` are ordered by their end.
        span_end: Per span, its end.
        option_count: Per span, its number of options.
        option_logprob: Per span and option rank, the option's log probability.
        option_upper: Per span and rank, ``TrigramLM.upper`` of the option's target words.
        option_length: Per span and rank, the number of target words.
        option_words: Per span, rank and position, the target words' ids.
        best_bound: Per span, the highest ``log_prob + upper`` of its options.
        longest: The longest source phrase of the table.
        stack_size: Hypotheses kept per stack.
        last_size: Hypotheses kept in the last stack (the n-best list), at least
            ``stack_size``. The last stack feeds no other, so its ``stack_size`` best are the
            same for any ``last_size``: a longer list only adds hypotheses after them.
        bos: The id of ``<s>``.
        lm: The language model's arrays (``TrigramLM.arrays``).

    Returns:
        The n-best list: an ``(m, 3)`` array of ``(hypothesis rank, span, option rank)``
        rows, the phrases of the last stack's best hypothesis first to last, then those of
        the second best, and so on (at most ``last_size`` hypotheses); empty when the last
        stack is empty.

    The stacks are those of NLTK's decoder: each keeps the ``stack_size`` best expansions
    aimed at it by (score, order of arrival). A stack's expansions are listed in arrival
    order with an upper bound of their score, sorted by bound (stable) and scored best bound
    first, until no bound left reaches the stack's last score.

    """
    n = len(source)
    future = _future_costs(source, span_first, span_end, option_logprob, longest, lm)
    closed = future.copy()  # an empty span costs 0 (NLTK skips it)
    for i in range(n + 1):
        closed[i, i] = 0.0
    size = max(stack_size, last_size)
    capacity = n * stack_size + size  # the empty hypothesis, stacks 1..n-1, the last stack
    most_spans = n // 2 + 2
    h_raw = np.zeros(capacity)
    h_end = np.full(capacity, -1, np.int64)  # -1: the empty hypothesis (NLTK's None)
    h_span = np.zeros(capacity, np.int64)
    h_rank = np.zeros(capacity, np.int64)
    h_prev = np.full(capacity, -1, np.int64)
    h_c1 = np.full(capacity, bos, np.int64)
    h_c2 = np.full(capacity, bos, np.int64)
    h_spans = np.zeros((capacity, most_spans, 2), np.int64)  # untranslated spans, in order
    h_nspans = np.zeros(capacity, np.int64)
    stack_of = np.zeros((n + 1, size), np.int64)  # hypothesis ids per stack
    stack_count = np.zeros(n + 1, np.int64)
    made = 1
    if n > 0:
        h_spans[0, 0, 0], h_spans[0, 0, 1], h_nspans[0] = 0, n, 1
    stack_count[0] = 1
    kept_score, kept_raw = np.zeros(size), np.zeros(size)  # per kept expansion
    kept_key = np.zeros((size, 4), np.int64)  # (stack, index, a, rank): arrival order
    kept_entry = np.zeros((size, 4), np.int64)  # (hypothesis, k, b, span)
    rest = np.zeros((most_spans, 2), np.int64)
    for j in range(1, n + 1):
        limit = last_size if j == n else stack_size
        bounds, entries = _aimed_at(j, n, longest, stack_of, stack_count, h_raw, h_end,
                                    h_spans, h_nspans, span_first, span_end, best_bound,
                                    closed)
        kept = _best_expansions(bounds, entries, limit, future, h_raw, h_end, h_c1, h_c2,
                                h_spans, h_nspans, option_count, option_logprob,
                                option_upper, option_length, option_words, lm, kept_score,
                                kept_raw, kept_key, kept_entry)
        for q in range(kept):  # the kept expansions become stack j's hypotheses
            _new_hypothesis(made, kept_raw[q], kept_key[q], kept_entry[q], rest, h_raw, h_end,
                            h_span, h_rank, h_prev, h_c1, h_c2, h_spans, h_nspans,
                            option_length, option_words)
            stack_of[j, q] = made
            made += 1
        stack_count[j] = kept
    return _nbest(stack_of[n], stack_count[n], h_prev, h_span, h_rank)


@njit(cache=True)
def _aimed_at(j, n, longest, stack_of, stack_count, h_raw, h_end, h_spans, h_nspans,
              span_first, span_end, best_bound, closed):
    """The expansions aimed at stack ``j``, in order of arrival, with their upper bounds.

    Returns:
        ``(bounds, entries)``: per expansion its bound and its
        ``(hypothesis, stack, index, k, a, b, span)`` row, as :func:`_aim` writes them.

    """
    hypotheses = 0
    for done in range(max(0, j - longest), j):
        hypotheses += stack_count[done]
    bounds = np.empty(hypotheses * n)  # at most one phrase of a length per start
    entries = np.empty((hypotheses * n, 7), np.int64)
    at = np.int64(0)  # not the literal 0: _aim then compiles once, for int64
    for done in range(max(0, j - longest), j):
        for index in range(stack_count[done]):
            at = _aim(stack_of[done, index], done, index, j - done, h_raw, h_end,
                      h_spans, h_nspans, span_first, span_end, best_bound, closed,
                      bounds, entries, at)
    return bounds[:at], entries[:at]


@njit(cache=True)
def _best_expansions(bounds, entries, limit, future, h_raw, h_end, h_c1, h_c2, h_spans,
                     h_nspans, option_count, option_logprob, option_upper, option_length,
                     option_words, lm, kept_score, kept_raw, kept_key, kept_entry):
    """Score the expansions best bound first; keep the ``limit`` best in the ``kept_*`` arrays.

    Stops at the first expansion whose bound is below the last kept score once ``limit``
    are kept, and skips an option whose own bound is.

    Returns:
        The number of expansions kept (at most ``limit``).

    """
    order = _by_bound(bounds)
    kept = 0
    for o in order:
        if kept >= limit and bounds[o] < kept_score[kept - 1]:
            break
        h, done, index, k, a, b, s = entries[o]
        cost = _rest_future(future, h_spans, h_nspans, h, k, a, b)
        distortion = 0.0 if h_end[h] < 0 else abs(a - h_end[h]) * LOG_DISTORTION
        for rank in range(option_count[s]):
            raw = h_raw[h]
            raw += option_logprob[s, rank]
            if kept >= limit and (
                raw + option_upper[s, rank] + LM_CHANGE_BOUND + distortion + cost
                < kept_score[kept - 1]
            ):
                continue
            raw += _change(h_c1[h], h_c2[h], option_words[s, rank],
                           option_length[s, rank], lm)
            raw += distortion
            kept = _keep(kept_score, kept_raw, kept_key, kept_entry, kept, limit,
                         raw + cost, raw, done, index, a, rank, h, k, b, s)
    return kept


@njit(cache=True)
def _rest_future(future, h_spans, h_nspans, h, k, a, b):
    """``StackDecoder.future_score``: the future costs of the rest, added in order.

    The rest is hypothesis ``h``'s untranslated spans with ``[a, b)`` taken out of span ``k``.
    """
    first, last = h_spans[h, k, 0], h_spans[h, k, 1]
    cost = 0.0
    for i in range(h_nspans[h]):
        if i == k:
            if first < a:
                cost += future[first, a]
            if b < last:
                cost += future[b, last]
        else:
            cost += future[h_spans[h, i, 0], h_spans[h, i, 1]]
    return cost


@njit(cache=True)
def _keep(kept_score, kept_raw, kept_key, kept_entry, kept, limit, score, raw, done, index,
          a, rank, h, k, b, s):
    """Insert one scored expansion in the kept list (best first); the new number kept.

    Equal scores keep their order of arrival (:func:`_later`); once ``limit`` are kept the
    last one drops, and an expansion that would land past ``limit`` is not kept.
    """
    place = kept
    while place > 0 and (
        kept_score[place - 1] < score
        or (kept_score[place - 1] == score
            and _later(kept_key[place - 1], done, index, a, rank))
    ):
        place -= 1
    if place >= limit:
        return kept
    last_kept = min(kept, limit - 1)
    for q in range(last_kept, place, -1):  # shift down; the last one drops
        kept_score[q], kept_raw[q] = kept_score[q - 1], kept_raw[q - 1]
        for c in range(4):
            kept_key[q, c] = kept_key[q - 1, c]
            kept_entry[q, c] = kept_entry[q - 1, c]
    kept_score[place], kept_raw[place] = score, raw
    kept_key[place, 0], kept_key[place, 1] = done, index
    kept_key[place, 2], kept_key[place, 3] = a, rank
    kept_entry[place, 0], kept_entry[place, 1] = h, k
    kept_entry[place, 2], kept_entry[place, 3] = b, s
    return min(kept + 1, limit)


@njit(cache=True)
def _new_hypothesis(new, raw, key, entry, rest, h_raw, h_end, h_span, h_rank, h_prev, h_c1,
                    h_c2, h_spans, h_nspans, option_length, option_words):
    """Write a kept expansion (its ``key`` and ``entry`` rows) as hypothesis ``new``."""
    h, k, b, s = entry
    a, rank = key[2], key[3]
    _cut_spans(h_spans, h_nspans, h, k, a, b, new, rest)
    h_raw[new], h_end[new], h_span[new], h_rank[new] = raw, b, s, rank
    h_prev[new] = h
    length = option_length[s, rank]
    if length >= 2:
        h_c1[new] = option_words[s, rank, length - 2]
    else:
        h_c1[new] = h_c2[h]
    h_c2[new] = option_words[s, rank, length - 1]


@njit(cache=True)
def _cut_spans(h_spans, h_nspans, h, k, a, b, new, rest):
    """Give hypothesis ``new`` the untranslated spans of ``h`` less ``[a, b)`` of span ``k``."""
    first, last = h_spans[h, k, 0], h_spans[h, k, 1]
    spans = 0
    for i in range(h_nspans[h]):
        if i == k:
            if first < a:
                rest[spans, 0], rest[spans, 1] = first, a
                spans += 1
            if b < last:
                rest[spans, 0], rest[spans, 1] = b, last
                spans += 1
        else:
            rest[spans, 0], rest[spans, 1] = h_spans[h, i, 0], h_spans[h, i, 1]
            spans += 1
    for i in range(spans):
        h_spans[new, i, 0], h_spans[new, i, 1] = rest[i, 0], rest[i, 1]
    h_nspans[new] = spans


@njit(cache=True)
def _nbest(last_stack, count, h_prev, h_span, h_rank):
    """The ``(hypothesis rank, span, option rank)`` rows of the last stack's ``count`` paths."""
    total = 0  # the phrases of every hypothesis of the last stack (the n-best list)
    for q in range(count):
        h = last_stack[q]
        while h_prev[h] >= 0:
            total += 1
            h = h_prev[h]
    out = np.empty((total, 3), np.int64)
    at = total
    for q in range(count - 1, -1, -1):  # filled from the end: each path backwards
        h = last_stack[q]
        while h_prev[h] >= 0:
            at -= 1
            out[at, 0], out[at, 1], out[at, 2] = q, h_span[h], h_rank[h]
            h = h_prev[h]
    return out


@njit(cache=True)
def _by_bound(bounds):
    """Indices of ``bounds`` from the highest, equal bounds in their order.

    A bottom-up merge sort: ``sorted(range(m), key=bounds.__getitem__, reverse=True)``.
    The order of equal bounds does not change the stack (every expansion whose bound reaches
    the stack's last score is scored, and ties of scores go by arrival); a stable sort keeps
    the scoring order that of the Python decoder it replaced. Written out because numba's
    ``np.argsort`` takes seconds to compile.
    """
    m = len(bounds)
    order = np.arange(m)
    spare = np.empty(m, np.int64)
    width = 1
    while width < m:
        for low in range(0, m, 2 * width):
            mid, high = min(low + width, m), min(low + 2 * width, m)
            left, right, out = low, mid, low
            while left < mid and right < high:
                if bounds[order[right]] > bounds[order[left]]:
                    spare[out] = order[right]
                    right += 1
                else:  # the earlier of equal bounds first
                    spare[out] = order[left]
                    left += 1
                out += 1
            while left < mid:
                spare[out] = order[left]
                left += 1
                out += 1
            while right < high:
                spare[out] = order[right]
                right += 1
                out += 1
        order, spare = spare, order
        width *= 2
    return order


@njit(cache=True)
def _later(key, done, index, a, rank):
    """Whether the arrival key ``key`` comes after ``(done, index, a, rank)``."""
    if key[0] != done:
        return key[0] > done
    if key[1] != index:
        return key[1] > index
    if key[2] != a:
        return key[2] > a
    return key[3] > rank


@njit(cache=True)
def _aim(h, done, index, length, h_raw, h_end, h_spans, h_nspans, span_first, span_end,
         best_bound, closed, bounds, entries, at):
    """List the expansions of hypothesis ``h`` by a phrase of ``length`` words from ``at``.

    An entry is ``(h, done, index, k, a, b, span)`` (``(done, index)``: the hypothesis's
    stack and place, ``k``: the untranslated span it splits) with a bound at least the score
    of every option of the phrase: its best ``log_prob + upper``, the future costs of the
    rest added in another order, plus margins that cover the different rounding. Returns the
    next free row.
    """
    spans = h_nspans[h]
    prefix = np.zeros(spans + 1)  # future costs of the spans before span k, added in order
    for i in range(spans):
        prefix[i + 1] = prefix[i] + closed[h_spans[h, i, 0], h_spans[h, i, 1]]
    end = h_end[h]
    for k in range(spans):
        first, last = h_spans[h, k, 0], h_spans[h, k, 1]
        head = h_raw[h] + prefix[k]
        tail = prefix[spans] - prefix[k + 1] + (APPROXIMATE + LM_CHANGE_BOUND)
        for a in range(first, last - length + 1):
            before = head + closed[first, a]
            if end >= 0:
                before += abs(a - end) * LOG_DISTORTION
            for s in range(span_first[a], span_first[a + 1]):
                b = span_end[s]
                if b - a == length:
                    bounds[at] = before + best_bound[s] + closed[b, last] + tail
                    entries[at, 0], entries[at, 1], entries[at, 2] = h, done, index
                    entries[at, 3], entries[at, 4], entries[at, 5] = k, a, b
                    entries[at, 6] = s
                    at += 1
    return at
