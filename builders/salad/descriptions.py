"""The card description of each word-salad transformation."""

from __future__ import annotations

DESCRIPTIONS = {
    "sort": "Tokens of one text sorted alphabetically (final punctuation kept last).",
    "reverse": "Tokens of one text in reverse order (final punctuation kept last).",
    "shuffle": "Tokens of one text shuffled until no bigram of the original survives.",
    "copysort": "The first text, sorted, replaces the second; compared with the default label.",
    "pbsmt": "One text replaced by the output of a phrase-based SMT system trained on the "
    "pairs of the row's label (premise -> hypothesis; SST-2: first half -> second half), "
    "pairs disjoint from the evaluated rows. Stand-in for the paper's per-label Moses PBSMT, "
    "built from NLTK's IBM Model 1 alignments, phrase extraction and stack decoder with a "
    "per-label trigram language model; copied words are penalised and unknown words dropped, "
    "and no output is a permutation of its source or degenerate (2 or fewer words, only "
    "function words, or a run of the source). Not numerically comparable to the paper's "
    "PBSMT row.",
    "drop": "The 50% least important tokens (embedding x gradient) dropped.",
    "repeat": "The 50% least important tokens replaced by important ones.",
    "replace": "The 50% least important tokens replaced by random vocabulary tokens.",
    "copyone": "The most important token of the first text is the whole second text; "
    "compared with the default label.",
}
SUFFIX = (" Destructive transformation: the row has no correct label. Main metric: agreement "
          "with the original prediction, best near chance (1/N).")
