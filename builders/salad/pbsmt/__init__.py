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
   (:mod:`consistency_bench.builders.salad.pbsmt.stack_decoder`): the output is NLTK's, decoded with
   5.65x
   less
   CPU than the best-first Python decoder it replaced (docs/benchmarks.md).

Training texts are lower-cased Penn-Treebank tokens (``lexical.tokenize(text, lower=True)``),
so outputs are lower-cased like the paper's examples. The decoder is deterministic (no
sampling): the same training pairs give the same outputs. Speed settings (stack size, options,
phrase length) are smaller than Moses's defaults; docs/suites/word-salad.md gives the
measured cost.

The pipeline lives in modules of one job each:
:mod:`~consistency_bench.builders.salad.pbsmt.phrase_table`
(alignment,
phrase extraction, the phrase table), :mod:`~consistency_bench.builders.salad.pbsmt.language_model`
(the
language model),
:mod:`~consistency_bench.builders.salad.pbsmt.decode` (the decoder's front end, translation) and
:mod:`~consistency_bench.builders.salad.pbsmt.decoder_constants` (the constants the compiled decoder
shares).
"""
