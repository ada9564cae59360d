"""Word-salad suites (Gupta et al., AAAI 2021): destructive transformations of inputs.

``lexical`` (Sort, Reverse, Shuffle, CopySort), ``pbsmt`` (a per-label phrase-based SMT
stand-in for the paper's Moses PBSMT, from NLTK's parts), ``gradient`` (Drop, Repeat,
Replace, CopyOne, computed with the model under test) and ``suites`` (the static configs and
the model-specific specs).
docs/suites/word-salad.md documents each construction and every deviation from the paper.
"""
