"""The pure-Python stack decoder of ``consistency_bench.builders.salad.pbsmt`` as of 97a1dff, a test reference.

It fills every stack as hypotheses arrive (NLTK's order), evaluating the language model for
each expansion that may still enter; the decoder in ``pbsmt`` (compiled,
``consistency_bench.builders.salad.pbsmt.stack_decoder``) fills a stack best-first and must return
exactly
what this
one returns (``tests/test_salad_generators.py``). Its future-cost table, hypothesis and
back-trace were the production decoder's until the decoder was compiled.
"""  # noqa: E501

from __future__ import annotations

import math
from operator import add

from consistency_bench.builders.salad.pbsmt.decode import STACK_SIZE, _phrase_ends, _SentenceTable
from consistency_bench.builders.salad.pbsmt.decoder_constants import (
    APPROXIMATE,
    LM_CHANGE_BOUND,
    LOG_DISTORTION,
)
from consistency_bench.builders.salad.pbsmt.language_model import BOS, TrigramLM


class _Hypothesis:
    """A partial translation: NLTK's ``_Hypothesis`` with its coverage and context stored.

    Attributes:
        raw_score: Score of the phrases chosen so far.
        score: ``raw_score`` plus the future cost of the words left (the stack's sort key).
        end: End of the last source phrase translated (``None`` for the empty hypothesis).
        trg_phrase: Target phrase of the last expansion.
        previous: Hypothesis this one extends.
        untranslated: The source spans ``(start, end)`` not yet translated, in order.
        words: How many source positions are translated (the stack it is in).
        context: The last two target words, ``<s>``-padded (the language model's history).

    """

    __slots__ = (
        "context",
        "end",
        "previous",
        "raw_score",
        "score",
        "trg_phrase",
        "untranslated",
        "words",
    )

    def __init__(self, raw_score, score, end, trg_phrase, previous, untranslated, words,
                 context):
        self.raw_score, self.score, self.end = raw_score, score, end
        self.trg_phrase, self.previous = trg_phrase, previous
        self.untranslated, self.words, self.context = untranslated, words, context


def _future_table(table: _SentenceTable, lm: TrigramLM, sentence: tuple[str, ...],
                  longest: int) -> list[list[float]]:
    """``StackDecoder.compute_future_scores`` as lists (``-inf`` where nothing covers a span)."""
    n = len(sentence)
    scores = [[-math.inf] * (n + 1) for _ in range(n + 1)]
    columns = [[-math.inf] * (n + 1) for _ in range(n + 1)]  # columns[end][mid] = scores[mid][end]
    for length in range(1, n + 1):
        for start in range(0, n - length + 1):
            end = start + length
            value = -math.inf
            if length <= longest:
                phrase = sentence[start:end]
                if phrase in table:
                    value = table.translations_for(phrase)[0].log_prob + lm.probability(phrase)
            if length > 1:  # the best split; max keeps the first of equal values, as NLTK's ">"
                value = max(value, max(map(add, scores[start][start + 1 : end],
                                           columns[end][start + 1 : end])))
            scores[start][end] = columns[end][start] = value
    return scores


def push_decode(table: _SentenceTable, lm: TrigramLM, sentence: tuple[str, ...], longest: int,
            stack_size: int = STACK_SIZE) -> list[str]:
    """The best output of :func:`push_decode_nbest` (NLTK's output), ``[]`` when none."""
    found = push_decode_nbest(table, lm, sentence, longest, stack_size)
    return found[0] if found else []


def _words(node: _Hypothesis) -> list[str]:
    """The target words of a hypothesis, first to last."""
    out: list[tuple[str, ...]] = []
    while node.previous is not None:
        out.append(node.trg_phrase)
        node = node.previous
    return [word for phrase in reversed(out) for word in phrase]


def push_decode_nbest(table: _SentenceTable, lm: TrigramLM, sentence: tuple[str, ...],
                      longest: int, stack_size: int = STACK_SIZE,
                      last_size: int | None = None) -> list[list[str]]:
    """``StackDecoder.translate`` (NLTK 3.9) with the same search and the same arithmetic.

    Every score is computed by the same float operations in the same order as NLTK's, the
    hypotheses are expanded in the same order and a stack keeps them in the same order (a new
    hypothesis goes after those with an equal or higher score, as NLTK's stable sort puts
    it), so the output is NLTK's (``tests/test_salad_generators.py`` compares them). What
    changes is bookkeeping: a hypothesis keeps its untranslated spans (an expansion splits one)
    instead of walking its chain for its translated positions, and carries its language-model
    history instead of walking back for it.
    ``longest``: the longest source phrase in ``table`` (no longer span is looked up).
    Returns the words of every hypothesis of the last stack, best first; the last stack keeps
    ``last_size`` hypotheses (default ``stack_size``, NLTK's), the others ``stack_size``.
    """
    n = len(sentence)
    last_size = stack_size if last_size is None else last_size
    starts = _phrase_ends(table, sentence, longest)
    future = _future_table(table, lm, sentence, longest)
    options = {(a, b): table.translations_for(sentence[a:b])
               for a in range(n) for b in starts[a]}

    def cost_of(spans: tuple[tuple[int, int], ...]) -> float:
        """``StackDecoder.future_score``: the spans' future costs added in order."""
        cost = 0.0
        for first, last in spans:
            cost += future[first][last]
        return cost

    change, changes = lm.change, lm._change
    best = {span: found[0].log_prob for span, found in options.items()}
    stacks: list[list[_Hypothesis]] = [[] for _ in range(n + 1)]
    stacks[0].append(_Hypothesis(0.0, 0.0, None, (), None, ((0, n),), 0, (BOS, BOS)))
    for stack in stacks:
        for hypothesis in stack:
            spans, done = hypothesis.untranslated, hypothesis.words
            raw_before = hypothesis.raw_score
            prefix = [0.0]  # future costs of the spans before span k, added in order
            for first, last in spans:
                prefix.append(prefix[-1] + future[first][last])
            for k, (first, last) in enumerate(spans):
                head, tail = prefix[k], prefix[-1] - prefix[k + 1]
                for a in range(first, last):
                    distortion = (0.0 if hypothesis.end is None
                                  else abs(a - hypothesis.end) * LOG_DISTORTION)
                    before = future[first][a] if first < a else 0.0
                    for b in starts[a]:
                        if b > last:
                            break
                        target = stacks[done + b - a]
                        size = last_size if done + b - a == n else stack_size
                        if len(target) >= size and (
                            raw_before + best[(a, b)] + distortion + head + before
                            + (future[b][last] if b < last else 0.0) + tail + APPROXIMATE
                            <= target[-1].score
                        ):  # not even the best option could get into the full stack
                            continue
                        left = spans[:k] + (((first, a),) if first < a else ())
                        right = (((b, last),) if b < last else ()) + spans[k + 1 :]
                        rest = left + right
                        cost = cost_of(rest)
                        for option in options[(a, b)]:
                            raw = raw_before
                            raw += option.log_prob
                            if len(target) >= size and (
                                raw + LM_CHANGE_BOUND + distortion + cost <= target[-1].score
                            ):  # even the bound would not get in, nor would the options
                                break  # after it (lower log_prob): skip the language model
                            phrase = option.trg_phrase
                            lm_change = changes.get((hypothesis.context, phrase))
                            if lm_change is None:
                                lm_change = change(hypothesis.context, phrase)
                            raw += lm_change
                            raw += distortion
                            score = raw + cost
                            at = len(target)
                            while at and target[at - 1].score < score:
                                at -= 1
                            if at >= size:
                                continue
                            context = (*hypothesis.context, *phrase)[-2:]
                            target.insert(at, _Hypothesis(raw, score, b, phrase, hypothesis,
                                                          rest, done + b - a, context))
                            del target[size:]
    return [_words(node) for node in stacks[n]]


