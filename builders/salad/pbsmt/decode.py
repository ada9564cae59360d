"""Translating with a PBSMT system (:mod:`consistency_bench.builders.salad.pbsmt`): the decoder's front end.

The per-sentence phrase table (unknown words pass through), the source spans, the arrays
handed to the compiled stack decoder (:mod:`consistency_bench.builders.salad.pbsmt.stack_decoder`)
and the
n-best
outputs read back from it.
"""  # noqa: E501

from __future__ import annotations

import math
from collections.abc import Sequence

from consistency_bench.bench.errors import ConfigError
from consistency_bench.builders.cache.compiled import use_cache_folder
from consistency_bench.builders.salad.pbsmt.language_model import BOS, TrigramLM
from consistency_bench.builders.salad.pbsmt.phrase_table import PhraseModel, _Entry

STACK_SIZE = 3
#: Hypotheses kept in the last stack: the n-best list the rows choose from
#: (``pbsmt_rows.choose_output``). Its first ``STACK_SIZE`` are NLTK's last stack whatever its
#: length (the last stack feeds no other); version 3.0.0 keeps more, so that a row whose best
#: outputs are degenerate can fall through to a later one (issue 32).
NBEST = 100
#: Leave out source words that no source phrase of the table contains (Moses's
#: ``-drop-unknown``) instead of passing them through unchanged.
DROP_UNKNOWN = True
#: Log probability of passing an unknown source word through.
PASS_THROUGH_LOGPROB = math.log(1e-3)


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


# One piece (over 60 lines): packs the phrase table into the compiled decoder's arrays.
def decode_nbest(table: _SentenceTable, lm: TrigramLM, sentence: tuple[str, ...],
                 longest: int, stack_size: int = STACK_SIZE,
                 nbest: int = NBEST) -> list[list[str]]:
    """The distinct outputs of the last stack of ``StackDecoder.translate`` (NLTK 3.9), best first.

    The first is NLTK's output; the others are the n-best list: the hypotheses of the last
    stack, which keeps ``max(stack_size, nbest)`` of them, in the stack's order (score, then
    arrival), an output that an earlier hypothesis gave already left out (two segmentations
    of a sentence may give the same words). ``[]`` when the last stack is empty.

    NLTK pushes every expansion into its target stack as it is made; a stack keeps the
    ``stack_size`` best by score, a later arrival after an earlier one of equal score (its
    stable sort). Expansions never change one another's scores, so a stack ends up as the
    ``stack_size`` best of all expansions aimed at it by (score, arrival order), and a stack
    receives expansions only from earlier stacks. The compiled decoder
    (:func:`consistency_bench.builders.salad.pbsmt.stack_decoder.decode`) lists the expansions aimed
    at a
    stack, each
    with an upper bound of its score (the language model's change taken as
    :meth:`TrigramLM.upper`, which it cannot exceed), and scores them when the stack is
    reached, highest bound first, until no bound left reaches the stack's last score: most
    language-model calls are skipped, and the stack is NLTK's. Every score is computed by the
    same float operations in the same order as NLTK's (``tests/test_salad_generators.py``
    compares the output with NLTK's decoder and with the arrival-order Python one).
    ``longest``: the longest source phrase in ``table`` (no longer span is looked up).
    """
    import numpy as np  # local: keeps ``import builders`` light

    use_cache_folder()  # before the compiled module is imported (builders/cache/compiled.py)
    try:
        from consistency_bench.builders.salad.pbsmt import stack_decoder
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
        longest, stack_size, max(stack_size, nbest), ids[BOS], arrays,
    )
    out: list[list[str]] = []
    for q, s, rank in paths.tolist():
        if q == len(out):
            out.append([])
        out[q].extend(found[s][rank].trg_phrase)
    return list(map(list, dict.fromkeys(map(tuple, out))))


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
