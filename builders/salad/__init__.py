"""Word-salad suites (Gupta et al., AAAI 2021): destructive transformations of inputs.

``lexical`` (Sort, Reverse, Shuffle, CopySort), ``statistical`` (a label-conditioned n-gram
stand-in for the paper's Moses PBSMT), ``gradient`` (Drop, Repeat, Replace, CopyOne, computed
with the model under test) and ``suites`` (the static configs and the model-specific specs).
docs/suites/word-salad.md documents each construction and every deviation from the paper.
"""
