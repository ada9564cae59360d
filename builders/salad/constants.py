"""Word-salad suite settings: versions, seed, case, family, the transformations and costs."""

from __future__ import annotations

from consistency_bench.bench.registries.families import FAMILIES

VERSION = "1.1.0"
#: ``<task>_salad_pbsmt``: 1.2.0 drops outputs that copy the source side (issue 13 audit);
#: 2.0.0 trains on data disjoint from the evaluated rows (MNLI: a fixed held-out half by
#: premise, so only the other half is evaluated), prefers translation over copying and
#: rejects outputs that are a permutation of their source (issue 21); 3.0.0 rejects degenerate
#: outputs (2 or fewer word tokens, only function words, a run of the source: issue 32) and
#: falls through a longer n-best list (every hypothesis of the last stack).
PBSMT_VERSION = "3.0.0"
#: ``<task>_salad_shuffle``: 1.2.0 leaves out a text with no bigram-free order (issue 32),
#: which 1.1.0 kept with the fewest surviving bigrams (2 MNLI rows).
SHUFFLE_VERSION = "1.2.0"
SEED = 20210202
#: Lower-case the transformed texts, as every example in the paper is (issue 13).
LOWER = True
FAMILY = "salad"
KIND = "salad"

#: Paper, citation and licence notes: declared once in bench/registries/families.py.
SALAD = FAMILIES[FAMILY]


LEXICAL = ("sort", "reverse", "shuffle", "copysort")
GRADIENT = ("drop", "repeat", "replace", "copyone")
STATISTICAL = ("pbsmt",)
PAIR_ONLY = frozenset({"copysort", "copyone"})
#: The paper builds no PBSMT set for MRPC (too little training data); neither do we.
NO_STATISTICAL = frozenset({"mrpc"})
#: Rough CPU seconds of building each ``<task>_salad_pbsmt`` (a split suite's parts cost a
#: share each): the pool starts these first. Every other word-salad suite takes about a
#: second or less.
PBSMT_BUILD_COST = {"mnli": 12.0, "snli": 14.0, "qqp": 15.0, "sst2": 5.0}
#: ``<task>_salad_pbsmt`` suites built by a pool as one task per part (``pbsmt_parts``): each
#: part trains its own system, so the parts of one suite run at the same time. SST-2 is not
#: split: it is short, and each part would read and filter its training split again.
SPLIT = frozenset({"mnli", "snli", "qqp"})
