"""Training one PBSMT system (:mod:`consistency_bench.builders.salad.pbsmt`): alignment, phrases, table.

IBM Model 1 in both directions, symmetrised with grow-diag-final-and, phrase extraction and
the phrase table's scores (with the copy feature); the language model is
:class:`consistency_bench.builders.salad.pbsmt.language_model.TrigramLM`.
"""  # noqa: E501

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from consistency_bench.builders.salad.pbsmt.language_model import TrigramLM

IBM_ITERATIONS = 5
MAX_PHRASE = 3
TOP_OPTIONS = 3
#: Log-linear weight of the copy feature (target words of a phrase pair found among its
#: source words), added to each phrase pair's log probability: see :func:`train`. The paper
#: found that Moses "with default PBSMT parameters ... mostly duplicated inputs at its
#: outputs" and changed feature weights until it did not; this weight and ``DROP_UNKNOWN``
#: are the stand-in's (docs/suites/word-salad.md has the measured effect of each).
COPY_PENALTY = -5.0


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


def _pharaoh(points) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(points))


# One piece (over 60 lines): NLTK's IBM model 1 EM over one set of arrays.
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

