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
   ``log(c(src, trg) / c(src))`` plus ``COPY_PENALTY`` per target word found among the
   phrase's source words (a feature weight that makes the decoder prefer translation over
   copying, as the paper's tuned Moses did), the ``TOP_OPTIONS`` best kept per source phrase;
3. a trigram language model of the target side (interpolated absolute discounting);
4. decoding with NLTK's stack decoder (``nltk.translate.StackDecoder``: future costs,
   distortion penalty), stack size ``STACK_SIZE``. A source word in no phrase of the table is
   left out (``DROP_UNKNOWN``, Moses's ``-drop-unknown``); one that is only in longer phrases
   passes through where none covers it (without this NLTK returns nothing). The last stack's
   hypotheses are the n-best list (:func:`translate_nbest`). The
   search and its arithmetic are NLTK's, compiled with numba
   (:mod:`builders.salad.stack_decoder`): the output is NLTK's, decoded with 5.65x less
   CPU than the best-first Python decoder it replaced (docs/benchmarks.md).

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

from bench.errors import ConfigError
from builders.salad.pbsmt_constants import (  # noqa: F401  (re-exported)
    APPROXIMATE,
    LM_CHANGE_BOUND,
    LOG_DISTORTION,
)

IBM_ITERATIONS = 5
MAX_PHRASE = 3
TOP_OPTIONS = 3
STACK_SIZE = 3
DISCOUNT = 0.75
#: Log-linear weight of the copy feature (target words of a phrase pair found among its
#: source words), added to each phrase pair's log probability: see :func:`train`. The paper
#: found that Moses "with default PBSMT parameters ... mostly duplicated inputs at its
#: outputs" and changed feature weights until it did not; this weight and ``DROP_UNKNOWN``
#: are the stand-in's (docs/suites/word-salad.md has the measured effect of each).
COPY_PENALTY = -5.0
#: Leave out source words that no source phrase of the table contains (Moses's
#: ``-drop-unknown``) instead of passing them through unchanged.
DROP_UNKNOWN = True
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
        0). ``arrays`` is what :func:`builders.salad.stack_decoder._prob` reads: the unigram
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
    longest: int = field(init=False, default=1)
    #: Every word of a source phrase of the table (the words that are not unknown).
    source_words: frozenset[str] = field(init=False, repr=False, default=frozenset())

    def __post_init__(self) -> None:
        self.longest = max(map(len, self.table), default=1)  # no longer span is looked up
        self.source_words = frozenset(w for phrase in self.table for w in phrase)


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


def ibm1_alignments(
    corpus: Sequence[tuple[Sequence[str], Sequence[str]]], iterations: int = IBM_ITERATIONS
) -> list[list[tuple[int, int | None]]]:
    """Best IBM Model 1 alignment of each pair, as ``nltk.translate.IBMModel1`` finds it.

    ``corpus`` holds ``(words, mots)`` pairs, as ``AlignedSent(words, mots)``: ``mots`` is the
    source side, ``words`` the target side. The result is, per pair, ``(j, i)`` for every
    target position ``j``: ``i`` is the aligned source position, ``None`` for NULL.

    The EM steps are NLTK's (uniform start ``1 / |target vocabulary|``, counts normalised per
    target word of a sentence, floor ``IBMModel.MIN_PROB``, ties to the later source word) with
    one array entry per (sentence, target position, source position) instead of nested
    dictionaries: ``np.bincount`` adds the entries of each sum in the same order as NLTK's
    loops, so every probability, and hence every alignment, is bit-for-bit NLTK's
    (``tests/test_salad_generators.py`` compares them). Time is linear in the entries, and
    independent of the vocabulary size.
    """
    import numpy as np  # local: keeps ``import builders`` light

    min_prob = 1.0e-12  # nltk.translate.ibm_model.IBMModel.MIN_PROB
    trg_ids: dict[str, int] = {}
    src_ids: dict[str | None, int] = {None: 0}
    entry_t: list[int] = []  # per entry: target word, source word, (sentence, target word)
    entry_s: list[int] = []
    entry_key: list[int] = []
    keys: dict[tuple[int, int], int] = {}
    for n, (words, mots) in enumerate(corpus):
        src = [0] + [src_ids.setdefault(w, len(src_ids)) for w in mots]
        for word in words:
            t = trg_ids.setdefault(word, len(trg_ids))
            key = keys.setdefault((n, t), len(keys))
            entry_t.extend([t] * len(src))
            entry_s.extend(src)
            entry_key.extend([key] * len(src))
    if not entry_t:
        return [[] for _ in corpus]
    t_arr = np.array(entry_t, dtype=np.int64)
    s_arr = np.array(entry_s, dtype=np.int64)
    key_arr = np.array(entry_key, dtype=np.int64)
    pair_codes, pair_arr = np.unique(t_arr * len(src_ids) + s_arr, return_inverse=True)
    pair_arr = pair_arr.reshape(-1)
    pair_src = pair_codes % len(src_ids)
    prob = np.full(len(pair_codes), 1 / len(trg_ids))
    for _ in range(iterations):
        p = prob[pair_arr]
        total = np.bincount(key_arr, weights=p, minlength=len(keys))
        normalized = p / total[key_arr]
        counts = np.bincount(pair_arr, weights=normalized, minlength=len(pair_codes))
        any_t = np.bincount(s_arr, weights=normalized, minlength=len(src_ids))
        prob = np.maximum(counts / any_t[pair_src], min_prob)
    best_of = prob[pair_arr].tolist()
    out: list[list[tuple[int, int | None]]] = []
    at = 0
    for words, mots in corpus:
        alignment = []
        for j in range(len(words)):
            row = best_of[at : at + len(mots) + 1]
            at += len(mots) + 1
            best, point = max(row[0], min_prob), None
            for i in range(len(mots)):
                if row[i + 1] >= best:  # prefer the later word on a tie, as NLTK does
                    best, point = row[i + 1], i
            alignment.append((j, point))
        out.append(alignment)
    return out


def copied(source: Sequence[str], target: Sequence[str]) -> int:
    """The target words of a phrase pair that occur among its source words (copies)."""
    seen = set(source)
    return sum(word in seen for word in target)


def train(pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
          copy_penalty: float = COPY_PENALTY) -> PhraseModel:
    """Train one system on ``(source tokens, target tokens)`` pairs.

    A phrase pair scores ``log(c(src, trg) / c(src)) + copy_penalty * copied(src, trg)``
    (``copy_penalty`` <= 0: a word carried over from the source costs that much), and the
    ``TOP_OPTIONS`` best by that score are kept per source phrase.

    Raises:
        ValueError: No pair has tokens on both sides.

    """
    from nltk.translate.gdfa import grow_diag_final_and  # local: heavy imports
    from nltk.translate.phrase_based import phrase_extraction

    pairs = [(list(s), list(t)) for s, t in pairs if s and t]
    if not pairs:
        raise ValueError("cannot train a phrase-based model on no sentence pair")
    forward = ibm1_alignments([(t, s) for s, t in pairs])  # words = target, mots = source
    backward = ibm1_alignments(pairs)
    counts: Counter = Counter()
    for (src, trg), f, b in zip(pairs, forward, backward, strict=True):
        e2f = _pharaoh((i, j) for j, i in f if i is not None)
        f2e = _pharaoh((i, j) for i, j in b if j is not None)
        points = grow_diag_final_and(len(src), len(trg), e2f, f2e)
        for _, _, s, t in phrase_extraction(" ".join(src), " ".join(trg), points, MAX_PHRASE):
            counts[(s, t)] += 1
    per_source: Counter = Counter()
    for (s, _), c in counts.items():
        per_source[s] += c
    options: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for (s, t), c in counts.items():
        penalty = copy_penalty * copied(s.split(), t.split()) if copy_penalty else 0.0
        options[s].append((math.log(c / per_source[s]) + penalty, t))
    table = {
        tuple(s.split()): [
            _Entry(tuple(t.split()), lp)
            for lp, t in sorted(opts, key=lambda o: (-o[0], o[1]))[:TOP_OPTIONS]
        ]
        for s, opts in sorted(options.items())
    }
    return PhraseModel(table, TrigramLM([t for _, t in pairs]), len(pairs))


def _phrase_ends(table: _SentenceTable, sentence: tuple[str, ...],
                 longest: int) -> list[list[int]]:
    """``StackDecoder.find_all_src_phrases``: per start, the ends of its phrases in ``table``."""
    n = len(sentence)
    starts: list[list[int]] = [[] for _ in range(n)]
    for start in range(n):
        for end in range(start + 1, min(n, start + longest) + 1):
            if sentence[start:end] in table:
                starts[start].append(end)
    return starts


def decode(table: _SentenceTable, lm: TrigramLM, sentence: tuple[str, ...], longest: int,
           stack_size: int = STACK_SIZE) -> list[str]:
    """``StackDecoder.translate`` (NLTK 3.9): the best of :func:`decode_nbest`, or ``[]``."""
    found = decode_nbest(table, lm, sentence, longest, stack_size)
    return found[0] if found else []


def decode_nbest(table: _SentenceTable, lm: TrigramLM, sentence: tuple[str, ...],
                 longest: int, stack_size: int = STACK_SIZE) -> list[list[str]]:
    """The hypotheses of the last stack of ``StackDecoder.translate`` (NLTK 3.9), best first.

    The first is NLTK's output; the others (at most ``stack_size`` in all) are the n-best
    list, in the stack's order (score, then arrival). ``[]`` when the last stack is empty.

    NLTK pushes every expansion into its target stack as it is made; a stack keeps the
    ``stack_size`` best by score, a later arrival after an earlier one of equal score (its
    stable sort). Expansions never change one another's scores, so a stack ends up as the
    ``stack_size`` best of all expansions aimed at it by (score, arrival order), and a stack
    receives expansions only from earlier stacks. The compiled decoder
    (:func:`builders.salad.stack_decoder.decode`) lists the expansions aimed at a stack, each
    with an upper bound of its score (the language model's change taken as
    :meth:`TrigramLM.upper`, which it cannot exceed), and scores them when the stack is
    reached, highest bound first, until no bound left reaches the stack's last score: most
    language-model calls are skipped, and the stack is NLTK's. Every score is computed by the
    same float operations in the same order as NLTK's (``tests/test_salad_generators.py``
    compares the output with NLTK's decoder and with the arrival-order Python one).
    ``longest``: the longest source phrase in ``table`` (no longer span is looked up).
    """
    import numpy as np  # local: keeps ``import builders`` light

    try:
        from builders.salad import stack_decoder  # local: numba compiles on first use
    except ImportError as exc:
        raise ConfigError(
            "the word-salad PBSMT decoder needs numba (pip install 'consistency-bench[nlp]')"
        ) from exc

    ids, arrays = lm.arrays()
    unknown = len(ids)
    starts = _phrase_ends(table, sentence, longest)
    spans = [(a, b) for a, ends in enumerate(starts) for b in ends]
    found = [table.translations_for(sentence[a:b]) for a, b in spans]
    rows = max(map(len, found), default=1)
    width = max((len(e.trg_phrase) for entries in found for e in entries), default=1)
    count = [len(entries) for entries in found]
    logprob = [[e.log_prob for e in entries] + [0.0] * (rows - len(entries))
               for entries in found]
    upper = [[lm.upper(e.trg_phrase) for e in entries] + [0.0] * (rows - len(entries))
             for entries in found]
    best = [max(lp + up for lp, up in zip(lps[:c], ups[:c], strict=True))
            for lps, ups, c in zip(logprob, upper, count, strict=True)]
    length = [[len(e.trg_phrase) for e in entries] + [0] * (rows - len(entries))
              for entries in found]
    words = [[[ids.get(w, unknown) for w in e.trg_phrase]
              + [0] * (width - len(e.trg_phrase)) for e in entries]
             + [[0] * width] * (rows - len(entries)) for entries in found]
    first = [0]
    for ends in starts:
        first.append(first[-1] + len(ends))
    paths = stack_decoder.decode(
        np.array([ids.get(w, unknown) for w in sentence], dtype=np.int64),
        np.array(first, dtype=np.int64),
        np.array([b for _, b in spans], dtype=np.int64),
        np.array(count, dtype=np.int64),
        np.array(logprob, dtype=np.float64).reshape(len(spans), rows),
        np.array(upper, dtype=np.float64).reshape(len(spans), rows),
        np.array(length, dtype=np.int64).reshape(len(spans), rows),
        np.array(words, dtype=np.int64).reshape(len(spans), rows, width),
        np.array(best, dtype=np.float64),
        longest, stack_size, ids[BOS], arrays,
    )
    out: list[list[str]] = []
    for q, s, rank in paths.tolist():
        if q == len(out):
            out.append([])
        out[q].extend(found[s][rank].trg_phrase)
    return out


def translate(model: PhraseModel, source: Sequence[str],
              drop_unknown: bool = DROP_UNKNOWN) -> list[str]:
    """The best output of :func:`translate_nbest`; ``[]`` when there is none."""
    found = translate_nbest(model, source, drop_unknown)
    return found[0] if found else []


def translate_nbest(model: PhraseModel, source: Sequence[str],
                    drop_unknown: bool = DROP_UNKNOWN) -> list[list[str]]:
    """The decoder's n-best outputs for ``source``, best first.

    ``drop_unknown``: leave out the words of ``source`` that are in no source phrase of the
    table (Moses's ``-drop-unknown``); otherwise they pass through unchanged. A word that is
    in a longer phrase only still passes through where it is not covered by one. ``[]`` for an
    empty source (or one of unknown words only, when they are dropped).
    """
    if drop_unknown:
        source = [w for w in source if w in model.source_words]
    if not source:
        return []
    return decode_nbest(_SentenceTable(model.table, source), model.lm, tuple(source),
                        model.longest)
